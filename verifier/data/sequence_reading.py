"""What the numbers of a token-sequence dataset mean: conditionals and prior
weights read at their precision (Dana et al.'s data, :mod:`.sequences`).

A float in a user's file is known to its dtype's relative precision u
(:mod:`verifier.data.precision`'s model: float64 2^-53, float32 2^-24;
integers and exact dyadics exact).  So row t of the conditionals, floats
p_1..p_N, stands for every distribution q with

    q_j in [p_j / (1 + u), p_j / (1 - u)]   (zeros exactly 0),   sum_j q_j = 1,

and such a q exists iff 1 - u <= sum_j p_j <= 1 + u (exact rationals); a row
outside is refused (bad input).  :func:`conditional_balls` encloses q_j over
all of them (the box cut by sum q = 1: q_j >= 1 - sum_{k != j} p_k / (1 - u)
and q_j <= 1 - sum_{k != j} p_k / (1 + u)), so a ball computation that decides
a claim decides it for every distribution the data stand for: a refutation
is never an artefact of the floats' rounding.  Arrays handed over in Python
and generated instances are exact rationals (u = 0); a row within 8 N eps of
1 but not exactly 1 is normalized exactly (p / sum p) and the instance's
reading says so.  Prior weights are rescaled by a power of two (exact, pi
unchanged) so that no sum overflows, and read within relative u as balls.

>>> import numpy as np
>>> from fractions import Fraction
>>> b = conditional_balls(np.array([[0.1, 0.2, 0.7]]), Fraction(1, 2**53))
>>> all(x.contains(float(v)) for x, v in zip(b[0], [0.1, 0.2, 0.7])), b[0][0].rad() < 1e-16
(True, True)
>>> reading_text(np.array([[1 / 3, 2 / 3]]), Fraction(0))[:60]
'exact: floats read as the rationals they encode; rows not su'
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, fmpq

from verifier.data.precision import array_precision
from verifier.errors import InvalidInstance

__all__ = ["unit_roundoff", "check_rows_in_simplex", "rescaled_prior", "conditional_balls", "prior_balls",
           "reading_text"]


def _fmpq(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def unit_roundoff(a) -> Fraction:
    """The relative precision of a file's numbers: 0 for integers and exact dyadics, else the dtype's u."""
    a = np.asarray(a)
    if a.dtype.kind != "f" or a.size == 0 or not np.all(np.isfinite(a)):
        return Fraction(0)  # integers are exact; non-finite or non-numeric arrays are refused later
    with np.errstate(all="ignore"):
        return Fraction(array_precision(a).unit_roundoff)


def check_rows_in_simplex(cond: np.ndarray, u: Fraction) -> None:
    """Refuse a row no distribution within relative u of its entries sums to 1 for (exact rationals); with
    u = 0 (exact reading) a row within 8 N eps of 1 is accepted and normalized exactly later."""
    N = cond.shape[1]
    slack = u if u else Fraction(8 * N) * Fraction(float(np.finfo(np.float64).eps))
    for t, row in enumerate(cond.tolist()):
        total = sum(map(Fraction, row), Fraction(0))
        if abs(total - 1) > slack * (total if u else 1):
            how = f"relative {float(u):.3g} per entry (the data's precision)" if u else f"{float(slack):.1g}"
            raise InvalidInstance(f"conditional row {t} sums to {float(total)!r} (1 - sum = {float(1 - total):.3g}), "
                                  f"not 1 within {how}: give probabilities that sum to 1")


def rescaled_prior(w: np.ndarray) -> np.ndarray:
    """The prior weights times a power of two (exact) so that the largest is in [1, 2): pi = w / sum w is
    unchanged and sums cannot overflow; weights too far apart for that are refused."""
    k = int(np.frexp(w.max())[1]) - 1
    scaled = np.ldexp(w, -k)
    if not np.all(np.ldexp(scaled, k) == w) or np.any(scaled == 0):
        raise InvalidInstance(f"prior weights span {w.max():.3g} / {w.min():.3g}: too far apart to rescale exactly "
                              "in float64")
    return scaled


def conditional_balls(conditionals: np.ndarray, u: Fraction) -> np.ndarray:
    """(T0, N) object array of arb balls at the working precision: exact entries (p / sum p) when u = 0;
    else an enclosure of q_j over every distribution q the row stands for (zeros stay exactly 0)."""
    u = Fraction(u)
    out = np.empty(np.shape(conditionals), dtype=object)
    for t, row in enumerate(np.asarray(conditionals).tolist()):
        p = [Fraction(x) for x in row]
        total = sum(p, Fraction(0))
        for j, pj in enumerate(p):
            if pj == 0 or not u:
                out[t, j] = arb(_fmpq(pj / total))
                continue
            lo = max(pj / (1 + u), 1 - (total - pj) / (1 - u))
            hi = min(pj / (1 - u), 1 - (total - pj) / (1 + u))
            out[t, j] = arb(_fmpq(lo)).union(arb(_fmpq(hi)))
    return out


def prior_balls(weights: np.ndarray, u: Fraction) -> list:
    """The prior weights as balls: exact when u = 0, else within relative 2u (covers 1/(1 -+ u))."""
    grow = arb(1, 2 * float(u)) if u else arb(1)
    return [arb(_fmpq(Fraction(w))) * grow for w in np.asarray(weights).tolist()]


def reading_text(conditionals: np.ndarray, u: Fraction) -> str:
    """How the numbers were read, for the instance summary."""
    if u:
        k = Fraction(u).denominator.bit_length() - 1
        return (f"at the data's precision: each float stands for every value within relative 2^-{k} of it "
                "(a row: every such distribution summing to 1)")
    sums = [sum(map(Fraction, row), Fraction(0)) for row in np.asarray(conditionals).tolist()]
    off = max(abs(x - 1) for x in sums)
    return "exact: floats read as the rationals they encode" + (
        f"; rows not summing to 1 normalized exactly (p / sum p; max |sum - 1| = {float(off):.3g})" if off else "")
