"""What a user's number means: the precision model of input data.

A float in a user's file is a value known to its dtype's precision, not the
exact rational it happens to encode: an embedding computed in float32 is
some real vector rounded to 24 bits, and a query computed as
``2*q1 - 3*q6`` in float64 is a dependent vector plus rounding.  Reading
such data as exact rationals turns a dependence that holds up to rounding
into a "certified" independence.  So each array of the input has an
:class:`ArrayPrecision`:

* an integer or boolean dtype (any width, int8..int64, uint8..uint64): exact,
  read as Python integers (:func:`given_values`), never through float64;
* a float array whose entries are *exact dyadics*: every entry an integer
  multiple of 2^-16 that leaves at least 8 bits of its dtype's mantissa
  unused (:func:`exact_dyadic`; integers, k/256 grids, one-hot data).  No
  rounded computation produces that: a rounded result fills its mantissa
  (each entry would have to end in 8 zero bits by chance, probability 2^-8);
* any other float: relative precision ``u`` = 2^-p of its dtype (unit
  roundoff; float16 2^-11, float32 2^-24, float64 2^-53, long double its
  own ``np.finfo(np.longdouble)``: 2^-64 for x86-64's 80-bit format).

What the verifier computes with is a float64 working copy of every array;
where that copy rounds a given value (integers beyond 2^53, long doubles
with more than 53 significant bits, or outside float64's range)
:func:`given_values` keeps the exact rationals the array encodes, and the
certificates about the data read those (``Instance.exact_array``).

An instance carries an :class:`InputPrecision`: the *reading* ("exact":
every float is the exact rational it encodes -- generated instances,
``--exact-input``, arrays handed over in Python -- or "dtype": the model
above, for files) and the arrays' precisions.  A rank-type assumption then
holds *at the data's precision* when it survives every perturbation the
rounding allows, with room for the few roundings of a computation: the
tolerance on the smallest relative singular value of a k x m matrix with
unit rows is numpy's numerical-rank tolerance ``max(k, m) * eps``
(eps = 2u, :meth:`InputPrecision.tolerance`).  It bounds the rounding of the
stored entries (a relative change of u per entry moves a unit row by at most
u, the matrix by at most sqrt(k) u in spectral norm), so a margin above it is
a margin above the data's own rounding; a margin below it means the
assumption holds only by less than that rounding.

>>> import numpy as np
>>> array_precision(np.array([[1.0, 0.5], [3.0, -2.25]])).why
'exact dyadic (every entry k / 2^16 with at least 8 spare mantissa bits)'
>>> p = array_precision(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
>>> p.dtype, p.unit_roundoff == 2.0**-24, p.exact
('float32', True, False)
>>> reading = input_precision({"queries": np.random.default_rng(0).standard_normal((5, 4))})
>>> reading.reading, reading.tolerance((3, 4), "queries") == 4 * 2.0**-52
('dtype', True)
>>> EXACT_GENERATED.tolerance((3, 4), "queries")
0.0
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verifier.errors import InvalidInstance

__all__ = ["ArrayPrecision", "InputPrecision", "EXACT_GENERATED", "array_precision", "exact_dyadic",
           "input_precision", "exact_reading", "READINGS", "given_values", "float64_rounding"]

READINGS = ("exact", "dtype")
GRID_BITS = 16  # exact dyadics lie on the grid 2^-GRID_BITS Z
SPARE_BITS = 8  # ... and leave this many low bits of the mantissa unused
EXACT_INTEGER_LIMIT = 2 ** 53  # integers beyond this may be rounded by float64


@dataclass(frozen=True)
class ArrayPrecision:
    """One array's precision: ``unit_roundoff`` u (0 = exact) and why."""

    dtype: str
    unit_roundoff: float
    why: str

    @property
    def exact(self) -> bool:
        return self.unit_roundoff == 0.0

    @property
    def eps(self) -> float:
        """Machine epsilon 2u (numpy's ``finfo.eps``); 0 when exact."""
        return 2.0 * self.unit_roundoff

    def to_dict(self) -> dict:
        return {"dtype": self.dtype, "unit_roundoff": self.unit_roundoff, "exact": self.exact, "why": self.why}


@dataclass(frozen=True)
class InputPrecision:
    """How an instance's numbers are read.

    ``reading``: "exact" (every float is the rational it encodes) or "dtype"
    (each array at its :class:`ArrayPrecision`).  ``source`` says why this
    reading: "generated", "--exact-input", "arrays" (handed over in Python)
    or "file".
    """

    reading: str
    source: str
    arrays: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.reading not in READINGS:
            raise ValueError(f"reading {self.reading!r} not in {READINGS}")

    def unit_roundoff(self, *names: str) -> float:
        """The largest u of the named arrays under this reading (0 if exact)."""
        if self.reading == "exact":
            return 0.0
        return max((self.arrays[n].unit_roundoff for n in names if n in self.arrays), default=0.0)

    def exact_for(self, *names: str) -> bool:
        return self.unit_roundoff(*names) == 0.0

    def tolerance(self, shape: tuple[int, int], *names: str) -> float:
        """Numerical-rank tolerance ``max(k, m) * eps`` for a k x m matrix
        with unit rows built from the named arrays (0 under the exact
        reading or for exact arrays)."""
        return float(max(shape)) * 2.0 * self.unit_roundoff(*names)

    def describe(self, *names: str) -> str:
        """One phrase for evidence and messages."""
        if self.reading == "exact":
            why = {"generated": "generated instance", "--exact-input": "--exact-input",
                   "arrays": "arrays given in Python", "file": "file"}.get(self.source, self.source)
            return f"exact: floats read as the rationals they encode ({why})"
        names = names or tuple(self.arrays)
        parts = [f"{n} {self.arrays[n].dtype}: " + ("exact" if self.arrays[n].exact else
                                                    f"relative 2^{int(np.log2(self.arrays[n].unit_roundoff))}")
                 for n in names if n in self.arrays]
        return "data precision (" + "; ".join(parts) + ")"

    def to_dict(self) -> dict:
        return {"reading": self.reading, "source": self.source, "description": self.describe(),
                "arrays": {k: v.to_dict() for k, v in self.arrays.items()}}


EXACT_GENERATED = InputPrecision("exact", "generated")


def exact_reading(source: str = "arrays") -> InputPrecision:
    """The exact reading, naming why (``--exact-input``, ``arrays``...)."""
    return InputPrecision("exact", source)


def _mantissa_bits(dtype: np.dtype) -> int:
    """Significand bits p (implicit bit included) of a float dtype, its own
    (``np.finfo``): 11, 24, 53, and 64 for x86-64's long double."""
    return int(np.finfo(dtype).nmant) + 1


def exact_dyadic(a: np.ndarray) -> bool:
    """Every entry an integer multiple of 2^-16 using at most p - 8
    significant bits (p: the dtype's significand bits).  Zeros count as
    exact; an empty array is exact.  Computed in the array's own dtype
    (long double included: no float64 detour)."""
    a = np.asarray(a)
    if a.dtype.kind not in "f" or a.size == 0:
        return a.dtype.kind in "biu" or a.size == 0
    p = _mantissa_bits(a.dtype)
    if not np.all(np.isfinite(a)):
        return False
    if a.dtype.itemsize > 8:  # long double (80-bit or quad): its own bits, in Python integers
        return _exact_dyadic_long(a, p)
    x = a.astype(np.float64)  # float16/32 -> float64 is exact
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.all(np.mod(np.ldexp(x, GRID_BITS), 1) == 0):
            return False
    m, _ = np.frexp(x)  # m in [0.5, 1): m * 2^p is an integer below 2^p <= 2^53
    k = np.ldexp(np.abs(m), p).astype(np.uint64)
    k = k[k != 0]
    if k.size == 0:
        return True
    trailing = np.log2((k & (~k + np.uint64(1))).astype(np.float64)).astype(int)  # lowest set bit
    significant = p - trailing
    return bool(significant.max() <= p - SPARE_BITS)


def _exact_dyadic_long(a: np.ndarray, p: int) -> bool:
    """:func:`exact_dyadic` for long doubles, entry by entry, exactly."""
    significant = 0
    for x in a.reshape(-1):
        num, den = x.as_integer_ratio()
        if den > 2**GRID_BITS:
            return False
        num = abs(num)
        if num:
            significant = max(significant, (num >> ((num & -num).bit_length() - 1)).bit_length())
    return significant <= p - SPARE_BITS


def float64_rounding(a) -> str:
    """Why the float64 copy of ``a`` is not its given values ("" when every
    entry is a float64 exactly: float16/32/64, integers up to 2^53 and long
    doubles with at most 53 significant bits within float64's range)."""
    a = np.asarray(a)
    if a.size == 0 or a.dtype.kind == "b":
        return ""
    if a.dtype.kind in "iu":
        big = a[(a > EXACT_INTEGER_LIMIT) | (a < -EXACT_INTEGER_LIMIT)] if a.dtype.itemsize > 4 else a[:0]
        if any(int(float(x)) != x for x in big.tolist()):
            return f"{a.dtype.name} entries beyond 2^53 that float64 rounds"
        return ""
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            copy = a.astype(np.float64)
        if not np.array_equal(copy.astype(a.dtype), a):
            return f"{a.dtype.name} entries with more bits than float64 holds (or outside its range)"
    return ""


def given_values(a):
    """The exact rationals an integer or float array encodes, as an object
    array of python-flint ``fmpq`` (integers through Python ints, long
    doubles through their own ``as_integer_ratio``: no float64 detour)."""
    from flint import fmpq

    a = np.asarray(a)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    if a.dtype.kind in "biu":
        flat[:] = [fmpq(int(x)) for x in a.reshape(-1).tolist()]
    else:
        flat[:] = [fmpq(*x.as_integer_ratio()) for x in a.reshape(-1)]
    return out


def array_precision(a) -> ArrayPrecision:
    """The precision of one input array from its dtype and its given
    entries (never from a float64 rounding of them).

    Complex, object and string arrays are not numbers the verifier reads:
    they raise :class:`InvalidInstance` (never a silent cast)."""
    a = np.asarray(a)
    kind, name = a.dtype.kind, a.dtype.name
    if kind == "c":
        raise InvalidInstance(f"complex array ({name}): the statements are about real data")
    if kind == "O":
        raise InvalidInstance("object array: expected a numeric (integer or float) array")
    if kind not in "biuf":
        raise InvalidInstance(f"array of dtype {name} is not numeric")
    if kind in "biu":
        return ArrayPrecision(name, 0.0, "integer dtype: read exactly (Python integers, any width)")
    if exact_dyadic(a):
        return ArrayPrecision(name, 0.0, f"exact dyadic (every entry k / 2^{GRID_BITS} with at least "
                                         f"{SPARE_BITS} spare mantissa bits)")
    p = _mantissa_bits(a.dtype)
    return ArrayPrecision(name, 2.0 ** -p, f"{name} values: relative 2^-{p}")


def input_precision(arrays: dict, *, source: str = "file") -> InputPrecision:
    """The dtype reading of named arrays (None entries are skipped)."""
    return InputPrecision("dtype", source, {k: array_precision(v) for k, v in arrays.items() if v is not None})
