"""User data from a file: an ``.npz`` archive with arrays ``contexts``
(T, n, d), ``queries`` (T, d) and optional ``labels`` (T, d_out).

Every array passes :func:`verifier.data.instances.validate_arrays`; a file
that cannot be read is one line of :class:`~verifier.errors.InvalidInstance`,
never a traceback.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from verifier.data.instances import Instance, from_arrays
from verifier.errors import InvalidInstance


def load_npz(path, **sizes) -> Instance:
    """Load user data: ``.npz`` with arrays ``contexts`` (T,n,d), ``queries``
    (T,d) and optional ``labels`` (T,d_out)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInstance(f"no such file: {p}")
    try:
        with np.load(p, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except Exception as exc:  # zip/format errors: one line, no traceback
        raise InvalidInstance(f"cannot read {p} as .npz: {type(exc).__name__}: {exc}") from None
    for name in ("contexts", "queries"):
        if name not in arrays:
            raise InvalidInstance(f"{p.name}: missing array '{name}' (has: {', '.join(sorted(arrays)) or 'none'})")
    return from_arrays(arrays["contexts"], arrays["queries"], arrays.get("labels"),
                       kind="user", source=f"file:{p.name}", **sizes)
