"""The set of reals that round to a float, computed independently of
verifier.data.precision: from the float's two neighbours (``np.nextafter``)
and the rounding of the midpoints (round half to even, decided by
converting the exact midpoint back to the format), in exact Fractions.

>>> lo, hi, lo_in, hi_in = rounding_set(np.float16(1.0))
>>> (lo, hi, lo_in, hi_in) == (1 - Fraction(1, 2**12), 1 + Fraction(1, 2**11), True, True)
True
>>> rounding_set(np.float16(0.0))[:2] == (-Fraction(1, 2**25), Fraction(1, 2**25))
True
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = ["exact", "rounds_to", "rounding_set", "inside", "box_distributions"]


def exact(x) -> Fraction:
    """The rational a float of any format (or an int, a Fraction) encodes."""
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    return Fraction(*x.as_integer_ratio())


def _decimal(q: Fraction) -> str:
    """The exact decimal expansion of a dyadic rational."""
    with localcontext() as ctx:
        ctx.prec = 20000
        return format(Decimal(q.numerator) / Decimal(q.denominator), "f")


def rounds_to(q: Fraction, dtype):
    """The float of ``dtype`` nearest the dyadic ``q`` (ties to even): float64 by Python's correctly rounded
    Fraction conversion; float16/32 through float64 when q fits it exactly (midpoints of those formats do),
    else the candidate whose rounding set holds q; long double by the C library's correctly rounded decimal
    parse."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        try:
            return np.float64(float(q))
        except OverflowError:
            return np.float64(np.inf if q > 0 else -np.inf)
    if dtype.itemsize > 8:
        with np.errstate(over="ignore"):
            return np.longdouble(_decimal(q))
    f = float(q)
    with np.errstate(over="ignore"):
        c = dtype.type(f)
    if Fraction(f) == q:  # one rounding from the exact value
        return c
    # float64 rounded first: the result is c or a neighbour (a double rounding errs by at most one ulp)
    t = dtype.type
    with np.errstate(over="ignore"):
        for cand in (c, np.nextafter(c, t(np.inf)), np.nextafter(c, t(-np.inf))):
            if np.isfinite(cand) and inside(q, rounding_set(cand)):
                return cand
    return c


def rounding_set(x) -> tuple[Fraction, Fraction, bool, bool]:
    """(lo, hi, lo_in, hi_in): the reals rounding to ``x`` are the interval between the midpoints to its
    neighbours, each end included iff it rounds to ``x``; the largest finite value's upper end is its
    half-ulp (beyond it: infinity)."""
    x = np.asarray(x)[()]
    t = x.dtype.type
    with np.errstate(over="ignore"):
        down, up = np.nextafter(x, t(-np.inf)), np.nextafter(x, t(np.inf))
    q = exact(x)
    lo = (q + exact(down)) / 2 if np.isfinite(down) else q - (exact(up) - q) / 2
    hi = (q + exact(up)) / 2 if np.isfinite(up) else q + (q - exact(down)) / 2
    return lo, hi, bool(rounds_to(lo, x.dtype) == x), bool(rounds_to(hi, x.dtype) == x)


def inside(q: Fraction, bounds) -> bool:
    lo, hi, lo_in, hi_in = bounds
    return (lo < q or (lo == q and lo_in)) and (q < hi or (q == hi and hi_in))


def box_distributions(row) -> list[list[Fraction]]:
    """Distributions inside the rounding sets of a row of floats (exact, within the closed sets cut at 0):
    the stored point with its deficit 1 - sum spread over the entries' room, then mass moved between two
    entries to 999/1000 of the way to their edges.  Empty when the deficit does not fit strictly."""
    sets = []
    for x in row:
        lo, hi, _, _ = rounding_set(x)
        sets.append((max(lo, Fraction(0)), hi))
    q = [exact(x) for x in row]
    D = 1 - sum(q)
    room = [(s[1] - x) if D > 0 else (x - s[0]) for s, x in zip(sets, q)]
    total = sum(room)
    if D != 0 and (total == 0 or abs(D) >= total):
        return []
    start = [x + D * r / total for x, r in zip(q, room)] if D else q
    out = [start]
    for i in range(len(row)):
        for j in range(len(row)):
            if i != j:
                mv = min(sets[i][1] - start[i], start[j] - sets[j][0]) * Fraction(999, 1000)
                if mv > 0:
                    p = list(start)
                    p[i] += mv
                    p[j] -= mv
                    out.append(p)
    assert all(sum(p) == 1 and all(s[0] <= x <= s[1] for s, x in zip(sets, p)) for p in out)
    return out
