"""One reader for every data file of every paper: ``.npz`` and ``.json``.

:func:`read_data_file` returns each array as given (:class:`GivenArray`:
the stored values in their own type, and their meaning,
:class:`~verifier.data.precision.ArrayPrecision`), so that what a number
means is decided once, by :mod:`verifier.data.precision`, for contexts,
queries, labels, token sequences, conditionals, targets, priors, token ids
and embeddings alike.  The papers' instance builders
(:mod:`verifier.data.instances`, :mod:`verifier.data.sequences`,
:mod:`verifier.data.token_sequences`) take these arrays; none reads a file
itself.

* ``.npz`` (``np.load`` with ``allow_pickle=False``): every member must be
  an ``.npy`` array; string, object and complex arrays are refused.
* ``.json``: one object of (nested lists of) numbers.  A number is parsed
  as the exact rational it writes (``0.1`` is 1/10, never the float64 next
  to it; integers of any width stay integers); strings, booleans, ``null``,
  ``NaN``/``Infinity``, duplicate keys, ragged lists, numbers of more than
  :data:`MAX_NUMBER_CHARS` characters or a decimal exponent beyond
  :data:`MAX_EXPONENT` are refused.
* An array whose name no statement reads is refused, naming the expected
  ones: a misspelled optional array (``lables``) is never replaced by
  generated data.

Every refusal is one line of :class:`~verifier.errors.InvalidInstance`
(bad input, exit 2), never a traceback.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "d.json")
>>> _ = open(path, "w").write(json.dumps({"prior": [0.1, 3], "N": 4}))
>>> f = read_data_file(path, required=("N",), optional=("prior",))
>>> f["prior"].values.tolist(), f["prior"].precision.kind, f["N"].values.tolist()
([Fraction(1, 10), 3], 'exact', 4)
>>> read_data_file(path, required=("N",), optional=("priors",))
Traceback (most recent call last):
...
verifier.errors.InvalidInstance: d.json: array 'prior' is not one this statement reads (expected: N, priors)
"""
from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.data.budget import check_npz_members
from verifier.data.precision import ArrayPrecision, array_precision
from verifier.errors import InvalidInstance

__all__ = ["GivenArray", "DataFile", "read_data_file", "MAX_NUMBER_CHARS", "MAX_EXPONENT"]

NPY_MAGIC = b"\x93NUMPY"
MAX_NUMBER_CHARS = 1000  #: characters of one JSON number
MAX_EXPONENT = 1000  #: |decimal exponent| of one JSON number
MAX_JSON_BYTES = 256 * 2**20  #: a JSON file larger than this is refused (use .npz)
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z")


@dataclass(frozen=True)
class GivenArray:
    """One array as the user gave it: ``values`` in its own type (an .npz
    array's dtype; from JSON int64, or an object array of Python ints and
    ``Fraction`` when a value does not fit int64 or is a decimal), and its
    meaning ``precision``."""

    name: str
    values: np.ndarray
    precision: ArrayPrecision
    origin: str

    @property
    def reading(self) -> str:
        kind = {"json": "JSON numbers (exact decimals and integers)"}.get(self.origin, self.values.dtype.name)
        return f"{self.name}: {kind}; " + self.precision.describe()


@dataclass(frozen=True)
class DataFile:
    """The arrays of one file, by name, and how they were read."""

    path: Path
    arrays: dict
    exact_input: bool

    def __getitem__(self, name: str) -> GivenArray:
        return self.arrays[name]

    def get(self, name: str, default=None):
        return self.arrays.get(name, default)

    def values(self, name: str, default=None):
        """The stored values of ``name`` (``default`` when absent)."""
        return self.arrays[name].values if name in self.arrays else default

    @property
    def reading(self) -> dict:
        """{array name: how its numbers were read} (``instance.reading``)."""
        return {k: v.reading for k, v in self.arrays.items()}


def _fail(p: Path, msg: str):
    raise InvalidInstance(f"{p.name}: {msg}")


def _check_names(p: Path, names, required, optional) -> None:
    expected = tuple(required) + tuple(optional)
    for name in names:
        if name not in expected:
            _fail(p, f"array '{name}' is not one this statement reads (expected: {', '.join(expected)})")
    for name in required:
        if name not in names:
            _fail(p, f"missing array '{name}' (has: {', '.join(sorted(names)) or 'none'}; expected: "
                     f"{', '.join(expected)})")


def _numeric(p: Path, name: str, a: np.ndarray) -> None:
    kind = a.dtype.kind
    if kind == "c":
        _fail(p, f"array '{name}' is complex ({a.dtype.name}); the statements are about real data")
    if kind in "USa":
        _fail(p, f"array '{name}' holds strings ({a.dtype.name}); give numbers")
    if kind == "O":
        _fail(p, f"array '{name}' is an object array; expected integers or floats")
    if kind not in "biuf":
        _fail(p, f"array '{name}' has dtype {a.dtype.name}, not a number type")


def _read_npz(p: Path, required, optional) -> dict:
    with p.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(NPY_MAGIC):
        _fail(p, "a single .npy array; save an .npz with named arrays (np.savez(path, name=array, ...))")
    if not zipfile.is_zipfile(p):
        _fail(p, "not an .npz archive (not a zip file) and not .json")
    check_npz_members(p)  # every member an .npy, the declared sizes within the memory budget, nothing read yet
    out = {}
    try:
        with np.load(p, allow_pickle=False) as f:
            names = list(f.files)
            members = [m for m in zipfile.ZipFile(p).namelist()]
            bad = [m for m in members if not m.endswith(".npy")]
            if bad:
                _fail(p, f"member '{bad[0]}' is not an .npy array")
            twice = sorted({m for m in members if members.count(m) > 1})
            if twice:
                _fail(p, f"member '{twice[0]}' appears twice (which one is meant?)")
            _check_names(p, names, required, optional)
            for k in names:
                try:
                    out[k] = f[k]
                except ValueError as exc:
                    if "pickle" in str(exc):
                        _fail(p, f"array '{k}' is an object array; expected integers or floats")
                    raise
    except InvalidInstance:
        raise
    except Exception as exc:  # corrupt members, bad headers: one line, no traceback
        msg = str(exc).split(". If you trust")[0].splitlines()[0] if str(exc) else ""
        _fail(p, f"cannot read as .npz: {type(exc).__name__}: {msg}")
    for k, a in out.items():
        _numeric(p, k, a)
    return out


def _json_number(text: str):
    if len(text) > MAX_NUMBER_CHARS:
        raise InvalidInstance(f"a JSON number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    m = _NUMBER.match(text)
    if m is None:  # pragma: no cover - json only hands over valid number tokens
        raise InvalidInstance(f"not a JSON number: {text[:40]!r}")
    if m.group(3) and abs(int(m.group(3)[1:])) > MAX_EXPONENT:
        raise InvalidInstance(f"a JSON number with exponent {m.group(3)[1:]} (at most {MAX_EXPONENT} in magnitude)")
    return Fraction(text)


def _json_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise InvalidInstance(f"a JSON integer of {len(text)} digits (at most {MAX_NUMBER_CHARS})")
    return int(text)


def _json_constant(name: str):
    raise InvalidInstance(f"JSON {name} is not a number the statements read")


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise InvalidInstance(f"key '{dup}' appears twice")
    return dict(pairs)


def _json_array(p: Path, name: str, v) -> np.ndarray:
    """Nested lists of numbers -> int64 (every value an integer within int64)
    or an object array of ints and Fractions (exact)."""
    def scalars(x, depth=0):
        if isinstance(x, list):
            if depth > 32:
                _fail(p, f"array '{name}' is nested deeper than 32 levels")
            for y in x:
                yield from scalars(y, depth + 1)
        elif isinstance(x, bool) or x is None or isinstance(x, (str, dict)):
            what = {bool: "a boolean", str: "a string", dict: "an object"}.get(type(x), "null")
            _fail(p, f"array '{name}' holds {what} where a number is expected")
        else:
            yield x

    flat = list(scalars(v))
    try:
        shaped = np.array(v, dtype=object)
    except ValueError:
        _fail(p, f"array '{name}' is ragged (rows of different lengths)")
    if shaped.size != len(flat) or (shaped.ndim > 0 and any(isinstance(x, list) for x in shaped.reshape(-1))):
        _fail(p, f"array '{name}' is ragged (rows of different lengths)")
    if all(isinstance(x, int) for x in flat) and all(-2**63 <= x < 2**63 for x in flat):
        return np.array(v, dtype=np.int64).reshape(shaped.shape)
    out = np.empty(shaped.shape, dtype=object)
    out.reshape(-1)[:] = flat
    return out


def _read_json(p: Path, required, optional) -> dict:
    size = p.stat().st_size
    if size > MAX_JSON_BYTES:
        _fail(p, f"a JSON file of {size} bytes (at most {MAX_JSON_BYTES}): save large data as .npz")
    try:
        raw = json.loads(p.read_bytes().decode("utf-8"), parse_float=_json_number, parse_int=_json_int,
                         parse_constant=_json_constant, object_pairs_hook=_unique_keys)
    except InvalidInstance as exc:
        _fail(p, str(exc))
    except RecursionError:
        _fail(p, "JSON nested too deeply")
    except (UnicodeDecodeError, ValueError) as exc:
        _fail(p, f"not valid JSON: {str(exc).splitlines()[0][:120]}")
    if not isinstance(raw, dict):
        _fail(p, "expected a JSON object of named arrays")
    _check_names(p, list(raw), required, optional)
    return {k: _json_array(p, k, v) for k, v in raw.items()}


def read_data_file(path, *, required: tuple[str, ...], optional: tuple[str, ...] = (),
                   exact_input: bool = False) -> DataFile:
    """Read the arrays of ``path`` (.npz or .json): each of ``required``
    must be there, every name must be in ``required + optional``.
    ``exact_input``: floats stand for the rationals they encode
    (``--exact-input``) instead of their rounding intervals."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInstance(f"{p} is a directory; expected an .npz or .json file")
    if not p.is_file():
        raise InvalidInstance(f"no such file: {p}")
    try:
        arrays = _read_json(p, required, optional) if p.suffix.lower() == ".json" else \
            _read_npz(p, required, optional)
    except OSError as exc:
        raise InvalidInstance(f"cannot open {p}: {exc.strerror or exc}") from None
    origin = "json" if p.suffix.lower() == ".json" else "npz"
    given = {k: GivenArray(k, a, array_precision(a, exact=exact_input), origin) for k, a in arrays.items()}
    return DataFile(p, given, exact_input)
