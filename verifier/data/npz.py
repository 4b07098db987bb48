"""User data from a file: an ``.npz`` archive with arrays ``contexts``
(T, n, d), ``queries`` (T, d) and optional ``labels`` (T, d_out).

Every array passes :func:`verifier.data.instances.validate_arrays`; a file
that cannot be read is one line of :class:`~verifier.errors.InvalidInstance`,
never a traceback and never numpy's advice to load a file unsafely.  What
is refused: a path that is not a file (a directory, nothing), a single
``.npy`` array, anything that is not a zip archive, complex, object or
string arrays.  The floats are read at their dtype's precision
(:mod:`verifier.data.precision`) unless ``exact_input=True``
(``--exact-input``: the floats are the exact rationals they encode).
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from verifier.data.budget import check_npz_members
from verifier.data.instances import Instance, from_arrays
from verifier.errors import InvalidInstance

NPY_MAGIC = b"\x93NUMPY"
ARRAYS = ("contexts", "queries", "labels")


def _read_arrays(p: Path) -> dict:
    if p.is_dir():
        raise InvalidInstance(f"{p} is a directory; expected an .npz file")
    if not p.is_file():
        raise InvalidInstance(f"no such file: {p}")
    try:
        with p.open("rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise InvalidInstance(f"cannot open {p}: {exc.strerror or exc}") from None
    if head.startswith(NPY_MAGIC):
        raise InvalidInstance(f"{p.name} is a single .npy array; save an .npz with arrays contexts, queries "
                              "(np.savez(path, contexts=..., queries=...))")
    if not zipfile.is_zipfile(p):
        raise InvalidInstance(f"{p.name} is not an .npz archive (not a zip file)")
    check_npz_members(p)  # every member an .npy, the declared sizes within the memory budget, nothing read yet
    arrays = {}
    try:
        with np.load(p, allow_pickle=False) as f:
            names = list(f.files)
            for k in names:
                if k not in ARRAYS:
                    continue
                try:
                    arrays[k] = f[k]
                except ValueError as exc:  # object arrays: never suggest allow_pickle
                    if "allow_pickle" in str(exc) or "pickle" in str(exc):
                        raise InvalidInstance(f"{p.name}: array '{k}' is an object array; expected integers "
                                              "or floats") from None
                    raise
    except InvalidInstance:
        raise
    except Exception as exc:  # corrupt members, bad headers: one line, no traceback
        msg = str(exc).split(". If you trust")[0].splitlines()[0] if str(exc) else ""
        raise InvalidInstance(f"cannot read {p.name} as .npz: {type(exc).__name__}: {msg}") from None
    for name in ("contexts", "queries"):
        if name not in arrays:
            raise InvalidInstance(f"{p.name}: missing array '{name}' (has: {', '.join(sorted(names)) or 'none'})")
    return arrays


def load_npz(path, *, exact_input: bool = False, **sizes) -> Instance:
    """Load user data: ``.npz`` with arrays ``contexts`` (T,n,d), ``queries``
    (T,d) and optional ``labels`` (T,d_out).  ``sizes``: H, d_h, d_v, d_out
    (d_out only used when the file has no labels), seed."""
    p = Path(path)
    arrays = _read_arrays(p)
    for name, a in arrays.items():
        if a.dtype.kind in "cOUSV" or a.dtype.kind not in "biuf":
            what = {"c": f"complex ({a.dtype.name}); the statements are about real data",
                    "O": "an object array; expected integers or floats"}.get(a.dtype.kind,
                                                                               f"of dtype {a.dtype.name}, not numbers")
            raise InvalidInstance(f"{p.name}: array '{name}' is {what}")
    return from_arrays(arrays["contexts"], arrays["queries"], arrays.get("labels"),
                       kind="user", source=f"file:{p.name}",
                       reading="exact" if exact_input else "dtype",
                       precision_source="--exact-input" if exact_input else "file", **sizes)
