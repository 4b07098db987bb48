"""The values a user gave, as the engine computes with them: validation,
float64 working copies that keep the exact values where they round them,
and the exact half-gaps of each entry (the open interval of reals that round
to it: what an explicit point "at the data's precision" must lie in).

What a number means is :mod:`verifier.data.precision`'s; this module turns
arrays of such numbers into what the instances carry.

>>> import numpy as np
>>> arrays, rounded = validated(np.zeros((2, 1, 3)), np.array([[2**60 + 1, 0, 1], [0, 1, 0]]))
>>> sorted(rounded), float(rounded["queries"][2][0, 0])
(['queries'], 1.0)
"""
from __future__ import annotations

import numpy as np

from verifier.data.precision import float64_rounding, given_values
from verifier.errors import InvalidInstance

__all__ = ["validate_arrays", "validated", "half_gaps_of", "add_up", "OVERFLOW_LIMIT"]

OVERFLOW_LIMIT = 1e100  # |entries| above this make exp/products meaningless in float64


def add_up(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Floats >= x + y for nonnegative float64 arrays (one rounding, moved up)."""
    s = x + y
    return np.nextafter(s, np.inf, where=s > 0, out=s.copy())


def rational_half_gaps(q: np.ndarray, meaning):
    """(mask, away, toward) of :meth:`Instance.half_gaps` from exact values
    (``fmpq``) of a float format: E = floor(log2 |x|) from the integers."""
    flat = q.reshape(-1)
    away = np.empty(flat.shape, dtype=np.int64)
    toward = np.empty(flat.shape, dtype=np.int64)
    for i, x in enumerate(flat):
        num, den = abs(int(x.p)), int(x.q)
        if num == 0:
            E, power = meaning.emin, False
        else:
            E = num.bit_length() - den.bit_length()
            if (num << max(0, -E)) < (den << max(0, E)):  # num / den < 2^E
                E -= 1
            power = num & (num - 1) == 0 and den & (den - 1) == 0
        a = max(E, meaning.emin) - meaning.p
        away[i] = a
        toward[i] = a - 1 if power and E > meaning.emin else a
    return np.ones(q.shape, dtype=bool), away.reshape(q.shape), toward.reshape(q.shape)


def half_gaps_of(meaning, values):
    """``(up, down)`` exact half-gaps (fmpq rows) of a 2-d selection of
    values read by ``meaning`` (an :class:`~verifier.data.precision.ArrayPrecision`):
    float64 values (float16/32/64 data, exactly) or exact rationals (long
    doubles: their own exponents); None when ``meaning`` is exact."""
    from verifier.arith.box_rank import gap_sides

    if meaning.exact:
        return None
    values = np.asarray(values)
    if values.dtype == object:
        mask, away, toward = rational_half_gaps(values, meaning)
    else:
        away, toward = meaning.half_gap_exponents(values)
        mask = np.ones(away.shape, dtype=bool)
    return gap_sides(values, away, toward, mask)


def validate_arrays(contexts, queries, labels=None, *, allow_n_ge_d: bool = True):
    """Shapes (T,n,d), (T,d), (T,d_out); real numbers (no complex, object or
    string arrays: never a silent cast); finite; no overflow.  n >= d is
    allowed (a hypothesis of some statements, checked by them); pass
    ``allow_n_ge_d=False`` to refuse it here.  Returns the float64 working
    copies (:func:`from_arrays` keeps the values they round: ``Instance.given``)."""
    arrays, _ = validated(contexts, queries, labels, allow_n_ge_d=allow_n_ge_d)
    return arrays["contexts"], arrays["queries"], arrays.get("labels")


def exact_entries(name: str, raw: np.ndarray) -> None:
    """An object array must hold exact rationals (ints, Fractions, fmpq): the JSON reader's decimals."""
    from fractions import Fraction

    from flint import fmpq

    for x in raw.reshape(-1):
        if isinstance(x, bool) or not isinstance(x, (int, Fraction, fmpq)):
            raise InvalidInstance(f"array '{name}' is an object array of {type(x).__name__}; expected integers "
                                  "or floats")


def float64_copy(name: str, raw: np.ndarray):
    """(copy, given, given_rad, why): the float64 working copy of ``raw`` and,
    where it rounds the values given, those values as ``fmpq``, a float64
    bound on ``|given - copy|`` and why."""
    if raw.dtype.kind == "O":
        from fractions import Fraction

        q = given_values(raw)
        copy = np.array([int(x.p) / int(x.q) for x in q.reshape(-1)], dtype=np.float64).reshape(raw.shape)
        err = [abs(Fraction(int(x.p), int(x.q)) - Fraction(float(c))) for x, c in zip(q.reshape(-1), copy.reshape(-1))]
        if not any(err):
            return copy, None, None, ""
        rad = np.array([float(e) for e in err], dtype=np.float64).reshape(raw.shape)
        rad = np.nextafter(rad, np.inf, where=rad >= 0, out=rad.copy())  # >= the exact error
        return copy, q, rad, "exact decimals that float64 rounds"
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        copy = np.asarray(raw, dtype=np.float64)
    why = float64_rounding(raw)
    if not why:
        return copy, None, None, ""
    if raw.dtype.kind in "iu":  # |int - fl(int)| is an integer below 2^11: exact in float64
        rad = np.array([abs(int(x) - int(c)) for x, c in zip(raw.reshape(-1).tolist(), copy.reshape(-1))],
                       dtype=np.float64).reshape(raw.shape)
    else:  # long double: the difference is exact in the long double format
        diff = np.abs(raw - copy.astype(raw.dtype))
        rad = diff.astype(np.float64)
        rad = np.nextafter(rad, np.inf, where=rad.astype(raw.dtype) < diff, out=rad.copy())
    return copy, given_values(raw), rad, why


def validated(contexts, queries, labels=None, *, allow_n_ge_d: bool = True):
    """(float64 copies, {name: (why float64 rounds it, given values, radius)})."""
    arrays, rounding = {}, {}
    for name, a, ndim in (("contexts", contexts, 3), ("queries", queries, 2), ("labels", labels, 2)):
        if a is None:
            if name == "labels":
                continue
            raise InvalidInstance(f"missing array '{name}'")
        try:
            raw = np.asarray(a)  # a subclass (a masked array) as its plain data: every entry screened
        except (TypeError, ValueError) as exc:
            raise InvalidInstance(f"array '{name}' is not a rectangular numeric array: {exc}") from None
        if raw.dtype.kind == "c":
            raise InvalidInstance(f"array '{name}' is complex ({raw.dtype.name}); the statements are about real data")
        if raw.dtype.kind in "USa":
            raise InvalidInstance(f"array '{name}' holds strings ({raw.dtype.name}); give numbers")
        if raw.dtype.kind == "O":
            exact_entries(name, raw)
        elif raw.dtype.kind not in "biuf":
            raise InvalidInstance(f"array '{name}' has dtype {raw.dtype.name}, not a number type")
        if raw.ndim != ndim:
            want = {"contexts": "(T, n, d)", "queries": "(T, d)", "labels": "(T, d_out)"}[name]
            raise InvalidInstance(f"array '{name}' has shape {raw.shape}; expected {want}")
        if raw.size == 0:
            raise InvalidInstance(f"array '{name}' is empty (shape {raw.shape})")
        look = raw[:1] if raw.ndim == 3 and raw.shape[0] > 1 and raw.strides[0] == 0 else raw  # one shared context
        if raw.dtype.kind == "f":  # checked on the given values (a long double may exceed float64's range)
            if not np.all(np.isfinite(look)):
                bad = int(np.sum(~np.isfinite(look)))
                raise InvalidInstance(f"array '{name}' has {bad} NaN or infinite entries")
        if raw.dtype.kind == "O":  # exact values (JSON): compared exactly, never through float64 (1e400 overflows it)
            over = max((abs(x) for x in look.reshape(-1)), default=0) > 10**100
        else:
            top = np.max(np.abs(look))
            over = (top if raw.dtype.kind == "f" and top.dtype.itemsize > 8 else float(top)) > OVERFLOW_LIMIT
        if over:
            raise InvalidInstance(f"array '{name}' has entries above {OVERFLOW_LIMIT:g} in magnitude "
                                  "(overflow)")
        if look is not raw:  # a shared context: one copy, broadcast
            copy, given, rad, why = float64_copy(name, look)
            copy = np.broadcast_to(copy, raw.shape)
            if given is not None:
                given, rad = np.broadcast_to(given, raw.shape), np.broadcast_to(rad, raw.shape)
        else:
            copy, given, rad, why = float64_copy(name, raw)
        if given is not None:
            rounding[name] = (why, given, rad)
        arrays[name] = copy
    E, e = arrays["contexts"], arrays["queries"]
    T, n, d = E.shape
    if e.shape != (T, d):
        raise InvalidInstance(f"queries have shape {e.shape}; expected (T, d) = {(T, d)} to match contexts {E.shape}")
    y = arrays.get("labels")
    if y is not None and y.shape[0] != T:
        raise InvalidInstance(f"labels have {y.shape[0]} rows; expected T = {T}")
    if n >= d and not allow_n_ge_d:
        raise InvalidInstance(f"n = {n} must be < d = {d} (the paper assumes n < d throughout)")
    return arrays, rounding
