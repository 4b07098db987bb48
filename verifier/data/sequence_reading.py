"""What the numbers of a token-sequence dataset mean (Dana et al.'s data,
:mod:`.sequences`): the conditionals pi_t and the prior weights, each entry
read by :mod:`verifier.data.precision` and nothing else.

* An exact entry (an integer, a JSON decimal, a float under
  ``--exact-input``, an array handed over in Python) stands for itself.
* A float entry stands for the reals that round to it in its format: the
  interval ``[x - below, x + above]`` of its half-gaps, each end included
  when the float's significand is even (round half to even), absolute at
  zeros and subnormals (a float16 zero stands for [0, 2^-25] as a
  probability; a long double 1e-4000 for an interval of tiny POSITIVE
  reals, never a zero).

Row t of the conditionals stands for every distribution q with each q_j in
its entry's interval (cut at 0) and sum_j q_j = 1.  Such a q exists iff the
lower ends sum to at most 1 and the upper ends to at least 1 (exact
rationals; equality only where every end it uses is included): a row
outside is bad input (:func:`checked_rows`), so no statement is ever made
"for every distribution the data stand for" about an empty set.
:func:`conditional_balls` encloses q_j over all of them (the box cut by
sum q = 1: q_j >= 1 - sum_{k != j} hi_k, q_j <= 1 - sum_{k != j} lo_k), so a
ball computation that decides a claim decides it for every one.  Prior
weights likewise: w_t in its interval, pi = w / sum w.

Hypotheses of structure -- every pi_t a point mass (Assumption 1), every
pi_t > 0 (Assumption 2), a uniform prior -- are decided over the same
sets (:func:`point_masses`, :func:`positivity`, :func:`uniform_weights`):
TRUE when they hold at every point, FALSE when they fail at every point,
UNDECIDED otherwise (floats equal or 0/1 as stored stand for points where
the hypothesis fails).

>>> import numpy as np
>>> from verifier.data.precision import array_precision
>>> row = np.array([[1.0, 0.0, 0.0]], dtype=np.float16)
>>> point_masses(GivenNumbers(row, array_precision(row)))[0].value
'undecided'
>>> lo, hi, _, _ = probability_bounds(GivenNumbers(row, array_precision(row)))
>>> [str(x) for x in lo[0]], [str(x) for x in hi[0]]
(['4095/4096', '0', '0'], ['2049/2048', '1/33554432', '1/33554432'])
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from flint import arb, fmpq

from verifier.arith.compare import Decision
from verifier.data.precision import EXACT, ArrayPrecision, given_values
from verifier.errors import InvalidInstance

__all__ = ["GivenNumbers", "entry_bounds", "probability_bounds", "checked_rows", "conditional_balls",
           "prior_balls", "normalized_rows", "point_masses", "positivity", "uniform_weights", "reading_text", "NORMALIZE_SLACK"]

#: arrays handed over in Python (not files): a row within NORMALIZE_SLACK * N * eps of 1 is normalized exactly
NORMALIZE_SLACK = 8


@dataclass(frozen=True, eq=False)
class GivenNumbers:
    """One array of a dataset as given: ``values`` in their own type (a
    float dtype, an integer dtype, or an object array of Python ints and
    Fractions/fmpq), and their meaning ``precision``."""

    values: np.ndarray
    precision: ArrayPrecision = EXACT

    @property
    def exact(self) -> bool:
        return self.precision.exact

    @cached_property
    def rationals(self) -> np.ndarray:
        """The exact rationals stored (fmpq object array; no float64 detour)."""
        return given_values(self.values)

    @cached_property
    def bounds(self) -> tuple:
        """(lo, hi, lo_in, hi_in): :func:`entry_bounds`."""
        return entry_bounds(self)

    def subset(self, rows) -> "GivenNumbers":
        return GivenNumbers(self.values[rows], self.precision)

    def float64(self) -> np.ndarray:
        """A float64 guide copy (choices only: an argmax, a start; never a decision)."""
        with np.errstate(all="ignore"):
            if self.values.dtype == object:
                return np.array([_to_float(x) for x in self.values.reshape(-1)]).reshape(self.values.shape)
            return self.values.astype(np.float64)


def _to_float(x) -> float:
    """The float64 nearest an exact number (+-inf beyond float64's range)."""
    f = Fraction(int(x.p), int(x.q)) if isinstance(x, fmpq) else Fraction(x)
    try:
        return float(f)
    except OverflowError:
        return float("inf") if f > 0 else float("-inf")


def _pow2(e: int) -> fmpq:
    return fmpq(2) ** int(e) if e >= 0 else fmpq(1, 2 ** (-int(e)))


def entry_bounds(given: GivenNumbers) -> tuple:
    """Per entry, the exact set it stands for as ``[lo, hi]`` (fmpq object
    arrays) with ``lo_in``/``hi_in`` (bool arrays) telling whether each end
    belongs to it: a point for an exact entry; for a float the half-gaps of
    :meth:`~verifier.data.precision.ArrayPrecision.half_gap_exponents`, each
    end included iff the significand is even (a tie rounds to it)."""
    v = given.rationals
    shape = v.shape
    if given.exact:
        both = np.ones(shape, dtype=bool)
        return v, v, both, both.copy()
    x = given.values
    away, toward = given.precision.half_gap_exponents(x)
    even = np.fmod(np.ldexp(x, -(away + 1)), 2) == 0  # x = M 2^(away+1), M an integer of the format
    lo = np.empty(shape, dtype=object)
    hi = np.empty(shape, dtype=object)
    for idx, q in np.ndenumerate(v):
        a, t = _pow2(away[idx]), _pow2(toward[idx])
        if q > 0:
            lo[idx], hi[idx] = q - t, q + a
        elif q < 0:
            lo[idx], hi[idx] = q - a, q + t
        else:
            lo[idx], hi[idx] = -a, a
    return lo, hi, even.copy(), even.copy()


def probability_bounds(given: GivenNumbers) -> tuple:
    """:func:`entry_bounds` cut at 0 (probabilities and weights are >= 0: a
    float zero stands for [0, its half-gap]; the cut end 0 belongs)."""
    lo, hi, lo_in, hi_in = given.bounds
    lo, lo_in = lo.copy(), lo_in.copy()
    for idx, q in np.ndenumerate(lo):
        if q < 0:
            lo[idx], lo_in[idx] = fmpq(0), True
    return lo, hi, lo_in, hi_in


def _row_bounds(given: GivenNumbers, t: int) -> tuple:
    """:func:`probability_bounds` of row t alone (lists), and its sums (L, U) with whether every end they
    use belongs to the set: one row at a time, never the whole table of exact ends at once."""
    lo, hi, lo_in, hi_in = (x[0].tolist() for x in probability_bounds(GivenNumbers(given.values[t:t + 1],
                                                                                   given.precision)))
    return lo, hi, sum(lo, fmpq(0)), sum(hi, fmpq(0)), all(lo_in), all(hi_in)


def _reaches_one(L, U, L_in, U_in) -> bool:
    """Does some point of the row's box sum to exactly 1?"""
    return (L < 1 or (L == 1 and L_in)) and (U > 1 or (U == 1 and U_in))


def _show(q: fmpq) -> str:
    return arb(q).str(17, radius=False)


def checked_rows(given: GivenNumbers, *, normalize: bool = False) -> GivenNumbers:
    """Refuse a row no distribution of its entries' sets sums to 1 for (exact rationals).  ``normalize``
    (arrays handed over in Python, exact): a row within NORMALIZE_SLACK N eps of 1 becomes p / sum p,
    exactly; the returned numbers are then an object array of fmpq."""
    T0, N = given.values.shape
    if given.exact:
        slack = fmpq(NORMALIZE_SLACK * N, 2**52) if normalize else fmpq(0)
        out = None
        for t in range(T0):
            row = given_values(given.values[t]).tolist()
            total = sum(row, fmpq(0))
            if total == 1:
                continue
            if abs(total - 1) > slack:
                more = ("; read at the data's precision (without --exact-input) a float row stands for every "
                        "distribution that rounds to it") if given.values.dtype.kind == "f" else ""
                gap = total - 1
                off = f"1 + {arb(gap).str(3, radius=False)}" if gap > 0 else f"1 - {arb(-gap).str(3, radius=False)}"
                shown = f" = {total}" if len(str(total)) <= 60 else ""
                raise InvalidInstance(f"conditional row {t} sums to {off}{shown} (exactly), not 1: "
                                      f"give probabilities that sum to 1{more}")
            out = given.rationals.copy() if out is None else out
            out[t] = [x / total for x in row]
        return given if out is None else GivenNumbers(out, EXACT)
    p, emin = given.precision.p, given.precision.emin
    for t in range(T0):
        _, _, L, U, L_in, U_in = _row_bounds(given, t)
        if not _reaches_one(L, U, L_in, U_in):
            side = (f"the lower ends of its entries' intervals sum to {_show(L)} > 1"
                    if not (L < 1 or (L == 1 and L_in)) else
                    f"the upper ends of its entries' intervals sum to {_show(U)} < 1")
            raise InvalidInstance(
                f"conditional row {t}: no distribution rounds to it in {given.precision.dtype} ({side}; each value "
                f"stands for the reals within half an ulp, 2^-{p} relative, absolute 2^{emin - p} at zero): give "
                "probabilities that sum to 1")
    return given


def normalized_rows(given: GivenNumbers) -> GivenNumbers:
    """The stored rows read as exact rationals, each divided by its sum (p / sum p, exactly): what the
    values would say if they were exact (a hint, never a reading of the user's data)."""
    v = given.rationals.copy()
    for t in range(v.shape[0]):
        total = sum(v[t].tolist(), fmpq(0))
        if total != 1 and total != 0:
            v[t] = [x / total for x in v[t].tolist()]
    return GivenNumbers(v, EXACT)


def conditional_balls(given: GivenNumbers) -> np.ndarray:
    """(T0, N) object array of arb balls at the working precision: the exact
    entries of an exact reading; else an enclosure of q_j over every
    distribution q a row stands for (the box cut by sum q = 1)."""
    T0, N = given.values.shape
    out = np.empty((T0, N), dtype=object)
    for t in range(T0):
        if given.exact:
            out[t] = [arb(q) for q in given_values(given.values[t]).tolist()]
            continue
        lo, hi, L, U, _, _ = _row_bounds(given, t)
        for j in range(N):
            a = max(lo[j], 1 - (U - hi[j]))
            b = min(hi[j], 1 - (L - lo[j]))
            out[t, j] = arb(a).union(arb(b))
    return out


def prior_balls(given: GivenNumbers) -> list:
    """The prior weights as balls: exact, or each weight's interval."""
    if given.exact:
        return [arb(q) for q in given.rationals.tolist()]
    lo, hi, _, _ = probability_bounds(given)
    return [arb(a).union(arb(b)) for a, b in zip(lo.tolist(), hi.tolist())]


def point_masses(given: GivenNumbers) -> tuple[Decision, str]:
    """Assumption 1 (every pi_t a point mass) over the sets the rows stand for.  The sets of one float
    format partition the reals, and 0 and 1 are floats: an entry's set holds 0 (1) exactly when the
    stored value is 0 (1).  So some point of a float row is a point mass iff the stored row is one."""
    v = given.values
    stored = bool(np.all(((v == 0) | (v == 1)) & (np.sum(v == 1, axis=1) == 1)[:, None]))
    if given.exact:
        if stored:
            return Decision.TRUE, "every row is 0/1 with one 1 (exact values)"
        t = int(np.flatnonzero(~np.all(((v == 0) | (v == 1)) & (np.sum(v == 1, axis=1) == 1)[:, None], axis=1))[0])
        return Decision.FALSE, f"row {t} is not 0/1 with one 1 (exact values)"
    if not stored:
        t = int(np.flatnonzero(~np.all(((v == 0) | (v == 1)) & (np.sum(v == 1, axis=1) == 1)[:, None], axis=1))[0])
        return Decision.FALSE, (f"row {t}: no point mass rounds to it in {given.precision.dtype} (an entry's "
                                "interval excludes both 0 and 1): not a point mass at any point")
    return Decision.UNDECIDED, (f"every row contains a point mass, and distributions that are not one (each "
                                f"{given.precision.dtype} 0 or 1 stands for an interval)")


def positivity(given: GivenNumbers) -> tuple[Decision, str]:
    """Assumption 2 (every pi_t > 0) over the sets the rows stand for: a positive float's set is positive
    (its lower end is at least half the smallest subnormal, excluded), a float zero's holds 0."""
    zeros = np.argwhere(given.values == 0)
    if zeros.size == 0:
        return Decision.TRUE, "every entry is positive" + ("" if given.exact else
                                                           " (every point of its interval: the stored value is > 0)")
    t, j = (int(x) for x in zeros[0])
    if given.exact:
        return Decision.FALSE, f"pi_t[{j}] = 0 for sequence {t} (exact values)"
    return Decision.UNDECIDED, (f"{len(zeros)} stored zeros (sequence {t}, token {j}): a {given.precision.dtype} zero "
                                "stands for [0, its half-gap], zero and positive values")


def uniform_weights(given: GivenNumbers) -> tuple[Decision, str]:
    """"A uniform prior": every weight equal, over the sets the weights stand for."""
    v = given.rationals.tolist()
    if given.exact:
        if all(x == v[0] for x in v):
            return Decision.TRUE, "prior weights equal (exact values)"
        t = next(i for i, x in enumerate(v) if x != v[0])
        return Decision.FALSE, f"weights {v[0]} and {v[t]} differ (sequences 0 and {t}, exact values)"
    lo, hi, lo_in, hi_in = probability_bounds(given)
    a = max(range(len(v)), key=lambda i: (lo[i], not lo_in[i]))  # the highest lower end (excluded ends higher)
    b = min(range(len(v)), key=lambda i: (hi[i], hi_in[i]))  # the lowest upper end
    meet = lo[a] < hi[b] or (lo[a] == hi[b] and lo_in[a] and hi_in[b])
    if not meet:
        return Decision.FALSE, (f"no common value: the intervals of weights {a} and {b} are disjoint "
                                f"({given.precision.dtype}), at every point of the data's intervals")
    return Decision.UNDECIDED, (f"the weights' {given.precision.dtype} intervals share values (the stored weights "
                                "may be equal) and also hold unequal weights")


def reading_text(conditionals: GivenNumbers, prior: GivenNumbers, normalized: bool = False) -> str:
    """How the numbers were read, for the instance summary."""
    parts = []
    for name, g in (("conditionals", conditionals), ("prior", prior)):
        if g.exact:
            parts.append(f"{name}: exact values")
        else:
            parts.append(f"{name}: {g.precision.dtype}, each value stands for the reals that round to it (half an "
                         f"ulp each side, absolute 2^{g.precision.emin - g.precision.p} at zero)")
    text = "exact: floats read as the rationals they encode" if conditionals.exact and prior.exact else \
        "at the data's precision (a row: every distribution in its entries' intervals): " + "; ".join(parts)
    if normalized:
        text += "; rows within 8 N eps of 1 normalized exactly (p / sum p, arrays given in Python)"
    return text
