"""Index-like arrays hold integers: vocabulary sizes, token ids, targets,
labels, scalar ids and integer embeddings (Dana et al.'s and Kajitsuka &
Sato's data).

What counts as an integer follows :mod:`verifier.data.precision`: an
integer dtype (any width) or a JSON integer stands for itself, and so does
an exact rational that is an integer (a JSON decimal such as ``2.0`` is
exactly 2).  A float does NOT: it stands for every real that rounds to it,
an interval that may hold no integer, or several (float16 2050 stands for
[2049, 2051], float32 2^24 + 2 for [2^24 + 1, 2^24 + 3]), so two float
ids may be the same integer or not, and a float token id names no token.
A float array here is bad input unless ``--exact-input`` says the floats
are exact (then an integral float is that integer, exactly, and a
non-integral one is bad input).

>>> import numpy as np
>>> integer_values("ids", np.array([3, 2**60])).tolist()
[3, 1152921504606846976]
>>> integer_values("ids", np.array([2050.0], dtype=np.float16))
Traceback (most recent call last):
...
verifier.errors.InvalidInstance: 'ids' holds float16 values; a float stands for every real that rounds to it (float16 2050 stands for [2049, 2051]: it may be several integers, or none exactly), so it is not read as an integer: save an integer array, or pass --exact-input if these floats are exact integers
>>> integer_values("ids", np.array([2050.0], dtype=np.float16), exact=True).tolist()
[2050]
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.data.precision import array_precision
from verifier.errors import InvalidInstance

__all__ = ["integer_values", "within"]


def _example(a: np.ndarray) -> str:
    """One stored value and the interval it stands for (the largest magnitude: the widest interval)."""
    x = a.reshape(-1)[int(np.argmax(np.abs(a.reshape(-1))))]
    p = array_precision(a)
    away, toward = (int(e[()]) for e in p.half_gap_exponents(np.asarray(x)))
    q = Fraction(*x.as_integer_ratio())
    lo, hi = (q - Fraction(2) ** toward, q + Fraction(2) ** away) if q > 0 else (q - Fraction(2) ** away,
                                                                                 q + Fraction(2) ** toward)
    show = lambda f: str(f.numerator) if f.denominator == 1 else f"{float(f):.9g}"  # noqa: E731
    return f"{a.dtype.name} {show(q)} stands for [{show(lo)}, {show(hi)}]"


def integer_values(name: str, a, *, exact: bool = False) -> np.ndarray:
    """The integers ``a`` holds: int64 when every one fits, else an object
    array of Python ints (compared exactly, never through float64).
    ``exact``: floats stand for the rationals they encode (``--exact-input``,
    or arrays handed over in Python)."""
    try:
        a = np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise InvalidInstance(f"'{name}' is not an integer array: {exc}") from None
    kind = a.dtype.kind
    if kind in "biu":
        if kind == "u" and a.size and int(a.max()) >= 2**63:
            return _objects(a.tolist(), a.shape)
        return a.astype(np.int64)
    if kind == "f":
        if not np.all(np.isfinite(a)):
            raise InvalidInstance(f"'{name}' has NaN or infinite entries; give integers")
        if not exact:
            raise InvalidInstance(
                f"'{name}' holds {a.dtype.name} values; a float stands for every real that rounds to it "
                f"({_example(a)}: it may be several integers, or none exactly), so it is not read as an integer: "
                "save an integer array, or pass --exact-input if these floats are exact integers")
        if not np.all(a == np.floor(a)):
            raise InvalidInstance(f"'{name}' must hold integers; found a non-integer value "
                                  f"{a.reshape(-1)[np.flatnonzero(a.reshape(-1) != np.floor(a.reshape(-1)))[0]]!r}")
        return _objects([x.as_integer_ratio()[0] for x in a.reshape(-1)], a.shape)
    if kind == "O":
        out = []
        for x in a.reshape(-1):
            if isinstance(x, bool) or not isinstance(x, (int, np.integer, Fraction)) and not hasattr(x, "q"):
                raise InvalidInstance(f"'{name}' must hold integers, found {type(x).__name__} {x!r}")
            f = Fraction(int(x.p), int(x.q)) if hasattr(x, "q") else Fraction(x)
            if f.denominator != 1:
                raise InvalidInstance(f"'{name}' must hold integers; found {f}")
            out.append(f.numerator)
        return _objects(out, a.shape)
    raise InvalidInstance(f"'{name}' must hold integers, got dtype {a.dtype}")


def _objects(values: list, shape) -> np.ndarray:
    """int64 when every value fits, else an object array of Python ints."""
    if all(-2**63 <= v < 2**63 for v in values):
        return np.array(values, dtype=np.int64).reshape(shape)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def within(a: np.ndarray, low: int, high: int) -> bool:
    """Every entry in [low, high), compared exactly (Python ints for object arrays)."""
    if a.size == 0:
        return True
    return low <= min(a.reshape(-1).tolist()) and max(a.reshape(-1).tolist()) < high
