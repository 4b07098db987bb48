"""What a user's number means: one definition for every array of every paper.

A number in a user's file is read by its TYPE, never by its value
(IEEE Std 1788-2015 keeps a stored float apart from a decimal string; GNU
Octave's interval package writes "known to its last digit" as ``m?``: half
an ulp each side):

* a value of a float dtype (float16, float32, float64, long double) stands
  for the set of reals that round to it in that format (round to nearest):
  for a normal number the values within half the gap to each neighbour
  (half an ulp; at a power of two the gap below is half the gap above); for
  a subnormal or a zero the absolute half-gap of the format's smallest
  subnormal step (a float16 zero stands for every real of magnitude below
  2^-25); for the largest finite value its own half-ulp;
* an integer or a boolean (any width: int8..int64, uint8..uint64, Python
  integers) stands for itself;
* a JSON number stands for the exact decimal it writes (parsed as a
  rational, never through float64: :mod:`verifier.data.files`);
* under ``--exact-input`` every value stands for the exact rational it
  encodes (a long double through its own ``as_integer_ratio``).

Nothing else: no value is read exactly because it looks exact (an integral
float, a dyadic grid); a user who means their floats exactly says
``--exact-input``.

:class:`ArrayPrecision` holds one array's rule: ``kind`` "float" (the set
above, with the format's significand bits ``p`` and smallest normal exponent
``emin``), or "exact" (integers, decimals, ``--exact-input``, generated
data).  For a float value ``x`` the set is ``[x - below, x + above]`` (ties
excluded or included by the round-half-even rule) with

    above = 2^(max(E, emin) - p),  below = above / 2 if |x| = 2^E, E > emin, else above

(``E = floor(log2 |x|)``, the gaps named toward and away from zero for a
negative ``x``).  :meth:`ArrayPrecision.radius` is the outer radius (a ball
``x +/- above`` that contains the set, what a certificate "holds at the data's
precision" propagates); :meth:`ArrayPrecision.half_gap_exponents` gives the
exact gaps (what a witness point "fails at the data's precision" must lie
strictly inside).

An instance carries an :class:`InputPrecision`: the reading ("exact" --
generated instances, ``--exact-input``, arrays handed over in Python -- or
"dtype", a user's file) and each array's :class:`ArrayPrecision`.

>>> import numpy as np
>>> p = array_precision(np.array([1.0, 0.75, 0.0], dtype=np.float16))
>>> p.kind, p.p, p.emin
('float', 11, -14)
>>> [float(r) for r in p.radius(np.array([1.0, 0.75, 0.0]))] == [2.0**-11, 2.0**-12, 2.0**-25]
True
>>> array_precision(np.array([[1.0, 0.5]])).kind   # an integral float is a float: no exact-looking rule
'float'
>>> array_precision(np.array([2**53 + 1])).kind
'exact'
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verifier.errors import InvalidInstance

__all__ = ["ArrayPrecision", "InputPrecision", "EXACT_GENERATED", "EXACT", "array_precision", "input_precision",
           "exact_reading", "READINGS", "given_values", "float64_rounding", "float_format"]

READINGS = ("exact", "dtype")
EXACT_INTEGER_LIMIT = 2 ** 53  # integers beyond this may be rounded by float64
_F64_SUB_EXP = -1074  # the smallest float64 subnormal 2^-1074: radii are rounded up to it


def float_format(dtype) -> tuple[int, int]:
    """(p, emin) of a float dtype: significand bits (implicit bit included)
    and the exponent of its smallest normal, from ``np.finfo`` (float16 (11,
    -14), float32 (24, -126), float64 (53, -1022), x86-64 long double (64,
    -16382))."""
    fi = np.finfo(dtype)
    return int(fi.nmant) + 1, int(fi.minexp)


@dataclass(frozen=True)
class ArrayPrecision:
    """One array's meaning: ``kind`` "float" (each value stands for the reals
    that round to it in a format of ``p`` significand bits and smallest
    normal exponent ``emin``) or "exact" (each value stands for itself)."""

    dtype: str
    kind: str
    why: str
    p: int = 0
    emin: int = 0

    def __post_init__(self):
        if self.kind not in ("float", "exact"):
            raise ValueError(f"kind {self.kind!r} must be 'float' or 'exact'")

    @property
    def exact(self) -> bool:
        return self.kind == "exact"

    @property
    def unit_roundoff(self) -> float:
        """2^-p (half an ulp relative to a normal value's binade); 0 when exact."""
        return 0.0 if self.exact else 2.0 ** -self.p

    def _exponents(self, x) -> np.ndarray:
        """max(E, emin) - p for each value (E = floor(log2|x|); zeros and
        subnormals: emin), in the values' own dtype (long double included)."""
        _, k = np.frexp(np.asarray(x))  # x = m 2^k, |m| in [1/2, 1): E = k - 1 (k = 0 for a zero)
        E = np.where(np.asarray(x) == 0, self.emin, k.astype(np.int64) - 1)
        return np.maximum(E, self.emin) - self.p

    def radius(self, x) -> np.ndarray:
        """A float64 array ``>=`` the half-gap away from zero of each value
        ``x`` (float64 values of this array: float16/32/64 data are float64
        exactly): ``x +/- radius`` contains every real that rounds to ``x``.
        Zero for an exact array.  Float64 radii below 2^-1074 are rounded up
        to it."""
        x = np.asarray(x, dtype=np.float64)
        if self.exact:
            return np.zeros(x.shape)
        return np.ldexp(1.0, np.maximum(self._exponents(x), _F64_SUB_EXP))

    def half_gap_exponents(self, x) -> tuple[np.ndarray, np.ndarray]:
        """(away, toward): integer exponents a, b with the exact set of reals
        rounding to ``x`` containing the OPEN interval of half-gaps 2^a away
        from zero and 2^b toward zero (``x`` in its own dtype; a zero gets
        2^a on both sides).  Only for float kinds."""
        if self.exact:
            raise ValueError("an exact array has no half-gaps")
        x = np.asarray(x)
        a = self._exponents(x)
        m, k = np.frexp(x)
        power_of_two = (np.abs(m) == 0.5) & (k.astype(np.int64) - 1 > self.emin) & (x != 0)
        return a, np.where(power_of_two, a - 1, a)

    def describe(self) -> str:
        if self.exact:
            return f"{self.dtype}: exact"
        return (f"{self.dtype}: each value stands for the reals that round to it (half an ulp each side, "
                f"2^-{self.p} relative; absolute 2^{self.emin - self.p} at zero and subnormals)")

    def to_dict(self) -> dict:
        out = {"dtype": self.dtype, "kind": self.kind, "exact": self.exact, "why": self.why}
        if not self.exact:
            out.update({"significand_bits": self.p, "smallest_normal_exponent": self.emin})
        return out


EXACT = ArrayPrecision("exact", "exact", "read as the exact values given")


@dataclass(frozen=True)
class InputPrecision:
    """How an instance's numbers are read.

    ``reading``: "exact" (every value is the rational it encodes) or "dtype"
    (each array by its :class:`ArrayPrecision`).  ``source`` says why:
    "generated", "--exact-input", "arrays" (handed over in Python) or "file".
    """

    reading: str
    source: str
    arrays: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.reading not in READINGS:
            raise ValueError(f"reading {self.reading!r} not in {READINGS}")

    def of(self, name: str) -> ArrayPrecision:
        """The rule of array ``name`` under this reading (exact when not listed)."""
        if self.reading == "exact":
            return EXACT
        return self.arrays.get(name, EXACT)

    def exact_for(self, *names: str) -> bool:
        """Is every named array read as points (no interval)?"""
        return all(self.of(n).exact for n in names)

    def radius(self, name: str, x) -> np.ndarray:
        """Outer radii (float64) of the values ``x`` of array ``name``."""
        return self.of(name).radius(x)

    def describe(self, *names: str) -> str:
        """One phrase for evidence and messages."""
        if self.reading == "exact":
            why = {"generated": "generated instance", "--exact-input": "--exact-input",
                   "arrays": "arrays given in Python", "file": "file"}.get(self.source, self.source)
            return f"exact: values read as the rationals they encode ({why})"
        names = names or tuple(self.arrays)
        parts = [f"{n} {self.arrays[n].dtype}: " + ("exact" if self.arrays[n].exact else
                                                    f"half an ulp each side (2^-{self.arrays[n].p} relative)")
                 for n in names if n in self.arrays]
        return "at the data's precision (" + "; ".join(parts) + ")"

    def to_dict(self) -> dict:
        return {"reading": self.reading, "source": self.source, "description": self.describe(),
                "arrays": {k: v.to_dict() for k, v in self.arrays.items()}}


EXACT_GENERATED = InputPrecision("exact", "generated")


def exact_reading(source: str = "arrays") -> InputPrecision:
    """The exact reading, naming why (``--exact-input``, ``arrays``...)."""
    return InputPrecision("exact", source)


def float64_rounding(a) -> str:
    """Why the float64 copy of ``a`` is not its given values ("" when every
    entry is a float64 exactly: float16/32/64, integers up to 2^53 and long
    doubles with at most 53 significant bits within float64's range)."""
    a = np.asarray(a)
    if a.size == 0 or a.dtype.kind == "b":
        return ""
    if a.dtype.kind == "O":
        return "exact values (integers beyond 2^53 or decimals) that float64 rounds"
    if a.dtype.kind in "iu":
        # a.ravel()[:0], not a[:0]: a 0-d array (a scalar weight) has no axis to slice
        big = a[(a > EXACT_INTEGER_LIMIT) | (a < -EXACT_INTEGER_LIMIT)] if a.dtype.itemsize > 4 else a.ravel()[:0]
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
    """The exact rationals an array encodes, as an object array of
    python-flint ``fmpq`` (integers through Python ints, long doubles through
    their own ``as_integer_ratio``, ``Fraction`` and ``fmpq`` as they are: no
    float64 detour)."""
    from flint import fmpq

    from verifier.arith.exact import to_fmpq

    a = np.asarray(a)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    if a.dtype.kind in "biu":
        flat[:] = [fmpq(int(x)) for x in a.reshape(-1).tolist()]
    elif a.dtype.kind == "O":  # fmpq, ints, Fractions, numpy scalars (float32, long double) as they are
        flat[:] = [to_fmpq(x) for x in a.reshape(-1)]
    else:
        flat[:] = [fmpq(*x.as_integer_ratio()) for x in a.reshape(-1)]
    return out


def array_precision(a, *, exact: bool = False) -> ArrayPrecision:
    """The rule of one input array from its TYPE alone (never its values):
    integers, booleans and object arrays of exact rationals (JSON decimals)
    are exact; a float dtype stands for its rounding intervals unless
    ``exact`` (``--exact-input``).  Complex and string arrays raise
    :class:`InvalidInstance` (never a silent cast)."""
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    kind, name = a.dtype.kind, a.dtype.name
    if kind == "c":
        raise InvalidInstance(f"complex array ({name}): the statements are about real data")
    if kind == "O":
        return ArrayPrecision("rational", "exact", "exact values given (integers or decimals)")
    if kind not in "biuf":
        raise InvalidInstance(f"array of dtype {name} is not numeric")
    if kind in "biu":
        return ArrayPrecision(name, "exact", "integer dtype: each value stands for itself (any width)")
    if exact:
        return ArrayPrecision(name, "exact", "--exact-input: each float stands for the rational it encodes")
    p, emin = float_format(a.dtype)
    return ArrayPrecision(name, "float", f"{name}: each value stands for the reals that round to it", p, emin)


def input_precision(arrays: dict, *, source: str = "file", exact: bool = False) -> InputPrecision:
    """The dtype reading of named arrays (None entries are skipped)."""
    return InputPrecision("dtype", source, {k: array_precision(v, exact=exact) for k, v in arrays.items()
                                             if v is not None})
