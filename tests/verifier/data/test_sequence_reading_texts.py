"""verifier/data/sequence_reading.py, the parts its mutation run left untested: the balls' tightness
(not only enclosure), the refusals' exact lines, the first failing row each decision names, the
exact normalisation of rows given in Python, and the float64 guide copy.  Every value here is exact
(integers, dyadic floats, rationals): the same on every machine."""
import warnings
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, fmpq
from rounding_truth import rounding_set

from verifier.arith.compare import Decision, workprec
from verifier.data.precision import EXACT, array_precision
from verifier.data.sequence_reading import (
    NORMALIZE_SLACK,
    GivenNumbers,
    checked_rows,
    conditional_balls,
    entry_bounds,
    normalized_rows,
    point_masses,
    positivity,
    prior_balls,
    probability_bounds,
    reading_text,
    uniform_weights,
)
from verifier.errors import InvalidInstance

F16 = np.float16


def _read(a) -> GivenNumbers:
    a = np.asarray(a)
    return GivenNumbers(a, array_precision(a))


def _exact(rows) -> GivenNumbers:
    return GivenNumbers(np.array([[fmpq(Fraction(x).numerator, Fraction(x).denominator) for x in r] for r in rows],
                                 dtype=object), EXACT)


def _q(x) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _refusal(given, **kw) -> str:
    with pytest.raises(InvalidInstance) as e:
        checked_rows(given, **kw)
    return str(e.value)


# --- the balls: the exact range of q_j over the box cut by sum q = 1, no wider ---------------------------------

@pytest.mark.parametrize("row", [[0.25, 0.75], [0.5, 0.5], [0.125, 0.375, 0.5], [1.0, 0.0, 0.0]])
def test_conditional_balls_are_the_exact_range_of_each_entry(row):
    """Independent truth: the rounding sets (tests/rounding_truth.py) cut at 0; q_j ranges over
    [max(lo_j, 1 - sum_{k != j} hi_k), min(hi_j, 1 - sum_{k != j} lo_k)].  The ball holds both ends and
    nothing more beyond them than the rounding of the ball's radius (a 30-bit mag: 2^-20 of the radius here) and
    2^-100 (a wider ball is still an enclosure, but a weaker reading)."""
    r = np.array([row], dtype=F16)
    sets = [rounding_set(x) for x in r[0]]
    lo = [max(s[0], Fraction(0)) for s in sets]
    hi = [s[1] for s in sets]
    with workprec(128):
        B = conditional_balls(checked_rows(_read(r)))
        for j in range(len(row)):
            a = max(lo[j], 1 - (sum(hi) - hi[j]))
            b = min(hi[j], 1 - (sum(lo) - lo[j]))
            ball = B[0, j]
            for end in (a, b):
                assert ball.contains(arb(fmpq(end.numerator, end.denominator)))
            slack = arb(fmpq(1, 2**100)) + ball.rad() / 2**20
            assert ball.lower() >= arb(fmpq(a.numerator, a.denominator)) - slack
            assert ball.upper() <= arb(fmpq(b.numerator, b.denominator)) + slack


def test_the_sum_constraint_binds_in_these_rows():
    """The rows above test the cut by sum q = 1, not only the box: here it narrows an entry on each side."""
    s = [rounding_set(x) for x in np.array([0.25, 0.75], dtype=F16)]
    assert 1 - s[0][1] > s[1][0]  # q_1 >= 1 - hi_0 is above q_1's own lower end
    s = [rounding_set(x) for x in np.array([0.5, 0.5], dtype=F16)]
    assert 1 - s[1][0] < s[0][1]  # q_0 <= 1 - lo_1 is below q_0's own upper end


def test_prior_balls_are_each_weights_interval():
    w = np.array([0.5, 0.0], dtype=F16)
    balls = prior_balls(_read(w))
    for ball, x in zip(balls, w):
        lo, hi, _, _ = rounding_set(x)
        lo = max(lo, Fraction(0))
        assert ball.contains(arb(fmpq(lo.numerator, lo.denominator))) and ball.contains(
            arb(fmpq(hi.numerator, hi.denominator)))
        assert ball.lower() >= arb(fmpq(lo.numerator, lo.denominator)) - ball.rad() / 2**20  # no wider
    assert [b.mid() for b in prior_balls(GivenNumbers(np.array([3, 1]), EXACT))] == [arb(3), arb(1)]


def test_probability_bounds_cut_at_zero_and_the_cut_end_belongs():
    lo, hi, lo_in, hi_in = probability_bounds(_read(np.array([[1.0, 0.0]], dtype=F16)))
    assert (_q(lo[0, 1]), _q(hi[0, 1]), bool(lo_in[0, 1]), bool(hi_in[0, 1])) == (0, Fraction(1, 2**25), True, True)
    lo, hi, lo_in, hi_in = entry_bounds(GivenNumbers(np.array([[1, 0]]), EXACT))
    assert lo_in.dtype == bool and hi_in.dtype == bool and lo_in.all() and hi_in.all()


# --- refusals: one line that says what is wrong ----------------------------------------------------------------

def test_exact_rows_off_one_are_refused_with_their_sum():
    assert _refusal(GivenNumbers(np.array([[1, 1]]), EXACT)) == (
        "conditional row 0 sums to 1 + 1.00 = 2 (exactly), not 1: give probabilities that sum to 1")
    assert _refusal(GivenNumbers(np.array([[0.5, 0.25]]), EXACT)) == (
        "conditional row 0 sums to 1 - 0.250 = 3/4 (exactly), not 1: give probabilities that sum to 1; read at the "
        "data's precision (without --exact-input) a float row stands for every distribution that rounds to it")
    # the row that fails is named, after a row that sums to 1
    assert _refusal(GivenNumbers(np.array([[1, 0], [3, 0]]), EXACT)).startswith("conditional row 1 sums to 1 + 2.00 ")


def test_a_long_sum_is_not_printed():
    """The exact sum is printed when its text has at most 60 characters."""
    for digits_q, shown in ((29, True), (30, False)):
        total = fmpq(10**29 + 7, 3 * 10**(digits_q - 1) + 1)
        assert len(str(total)) == (60 if shown else 61)
        msg = _refusal(GivenNumbers(np.array([[total]], dtype=object), EXACT))
        assert (f" = {total} (exactly)" in msg) == shown
        gap = total - 1
        off = f"1 + {arb(gap).str(3, radius=False)}" if gap > 0 else f"1 - {arb(-gap).str(3, radius=False)}"
        assert msg == (f"conditional row 0 sums to {off}{f' = {total}' if shown else ''} (exactly), not 1: give "
                       "probabilities that sum to 1")


def test_a_sum_off_one_by_a_third_is_printed_without_a_radius():
    """1/3 is not a float: the printed gap is its midpoint to 3 digits, never a ball."""
    third = Fraction(1, 3)
    assert _refusal(_exact([[third, third]])) == (
        "conditional row 0 sums to 1 - 0.333 = 2/3 (exactly), not 1: give probabilities that sum to 1")
    assert _refusal(_exact([[third, 1]])) == (
        "conditional row 0 sums to 1 + 0.333 = 4/3 (exactly), not 1: give probabilities that sum to 1")


def test_rows_given_in_python_are_normalized_within_the_slack_only():
    """normalize: a row within NORMALIZE_SLACK N 2^-52 of 1 becomes p / sum p exactly; one more is refused;
    without normalize, any row off 1 is refused."""
    N = 2
    edge = Fraction(NORMALIZE_SLACK * N, 2**52)
    rows = [[Fraction(1, 2) + edge, Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4) - edge / 2]]
    out = checked_rows(_exact(rows), normalize=True)
    assert out.exact
    for t, r in enumerate(rows):
        assert [_q(x) for x in out.values[t]] == [x / sum(r) for x in r]
    assert "sums to 1 + " in _refusal(_exact([[Fraction(1, 2) + edge + Fraction(1, 2**80), Fraction(1, 2)]]),
                                      normalize=True)
    assert "sums to 1 + " in _refusal(_exact(rows[:1]))
    same = _exact([[Fraction(1, 3), Fraction(2, 3)]])
    assert checked_rows(same, normalize=True) is same


def test_float_rows_refused_on_the_side_that_misses_one():
    """The refusal names the lower ends when they exceed 1 (or reach it with an excluded end), else the upper."""
    over = np.array([[0.5, 0.5 + 2.0**-10]], dtype=F16)  # both significands even: every lower end included
    assert all(rounding_set(x)[2] for x in over[0])
    assert _refusal(_read(over)) == (
        "conditional row 0: no distribution rounds to it in float16 (the lower ends of its entries' intervals sum "
        "to 1.0006103515625000 > 1; each value stands for the reals within half an ulp, 2^-11 relative, absolute "
        "2^-25 at zero): give probabilities that sum to 1")
    edge = np.array([[12004, 13788, 14072, 11729]], dtype=np.uint16).view(F16)  # lower ends sum to 1, one excluded
    assert "the lower ends of its entries' intervals sum to 1.0000000000000000 > 1" in _refusal(_read(edge))
    under = np.array([[0.25, 0.25]], dtype=F16)
    assert _refusal(_read(under)) == (
        "conditional row 0: no distribution rounds to it in float16 (the upper ends of its entries' intervals sum "
        "to 0.50024414062500000 < 1; each value stands for the reals within half an ulp, 2^-11 relative, absolute "
        "2^-25 at zero): give probabilities that sum to 1")


# --- normalisation as a hint --------------------------------------------------------------------------------------

def test_normalized_rows_divide_by_the_sum_and_leave_one_and_zero_alone():
    g = normalized_rows(_exact([[1, 1], [Fraction(1, 3), Fraction(2, 3)], [0, 0], [Fraction(1, 8), Fraction(1, 8)]]))
    assert g.exact
    assert [[_q(x) for x in r] for r in g.values] == [[Fraction(1, 2)] * 2, [Fraction(1, 3), Fraction(2, 3)],
                                                      [0, 0], [Fraction(1, 2)] * 2]


# --- the decisions name the first row that fails ---------------------------------------------------------------

@pytest.mark.parametrize("rows, t", [([[1, 0], [0, 1], [1, 1]], 2), ([[1, 0], [0, 0]], 1), ([[0, 0], [1, 0]], 0),
                                     ([[1, 0, 0], [0, 0, 1], [1, 1, 0]], 2), ([[0, 1, 0], [0, 0, 0]], 1),
                                     ([[0, 1], [Fraction(1, 2), Fraction(1, 2)]], 1), ([[2, 0], [1, 0]], 0)])
def test_point_masses_name_the_first_row_that_is_not_one(rows, t):
    assert point_masses(_exact(rows)) == (Decision.FALSE, f"row {t} is not 0/1 with one 1 (exact values)")
    got = point_masses(_read(np.array([[float(x) for x in r] for r in rows], dtype=F16)))
    assert got == (Decision.FALSE, f"row {t}: no point mass rounds to it in float16 (an entry's interval "
                   "excludes both 0 and 1): not a point mass at any point")


def test_point_masses_texts():
    assert point_masses(_exact([[1, 0], [0, 1]])) == (Decision.TRUE, "every row is 0/1 with one 1 (exact values)")
    assert point_masses(_read(np.array([[1, 0], [0, 1]], dtype=F16))) == (
        Decision.UNDECIDED, "every row contains a point mass, and distributions that are not one (each float16 0 or 1 "
        "stands for an interval)")
    assert point_masses(_read(np.array([[1, 0], [0.5, 0.5], [0.25, 0.75]], dtype=F16)))[1].startswith("row 1:")


def test_positivity_texts():
    assert positivity(GivenNumbers(np.array([[1, 2]]), EXACT)) == (Decision.TRUE, "every entry is positive")
    assert positivity(_read(np.array([[1, 2]], dtype=np.float32))) == (
        Decision.TRUE, "every entry is positive (every point of its interval: the stored value is > 0)")
    assert positivity(_read(np.array([[1, 2], [3, 0]], dtype=np.float32))) == (
        Decision.UNDECIDED, "1 stored zeros (sequence 1, token 1): a float32 zero stands for [0, its half-gap], zero "
        "and positive values")
    assert positivity(GivenNumbers(np.array([[1, 2], [0, 3]]), EXACT)) == (
        Decision.FALSE, "pi_t[0] = 0 for sequence 1 (exact values)")


def test_uniform_weights_name_the_disjoint_pair():
    assert uniform_weights(GivenNumbers(np.array([2, 2]), EXACT)) == (Decision.TRUE,
                                                                       "prior weights equal (exact values)")
    assert uniform_weights(GivenNumbers(np.array([2, 2, 3]), EXACT)) == (
        Decision.FALSE, "weights 2 and 3 differ (sequences 0 and 2, exact values)")
    # the highest lower end (1.5, first) and the lowest upper end (1.0, second): neither is the last index
    for w, a, b in (([1.5, 1.0, 1.0], 0, 1), ([1.0, 1.5, 1.5], 1, 0)):
        assert uniform_weights(_read(np.array(w, dtype=F16))) == (
            Decision.FALSE, f"no common value: the intervals of weights {a} and {b} are disjoint (float16), at every "
            "point of the data's intervals")
    assert uniform_weights(_read(np.array([1.0, 1.0], dtype=F16))) == (
        Decision.UNDECIDED, "the weights' float16 intervals share values (the stored weights may be equal) and also "
        "hold unequal weights")


def test_reading_text():
    exact = GivenNumbers(np.array([1]), EXACT)
    half = _read(np.array([[1.0]], dtype=F16))
    assert reading_text(_exact([[1]]), exact) == "exact: floats read as the rationals they encode"
    assert reading_text(half, exact) == (
        "at the data's precision (a row: every distribution in its entries' intervals): conditionals: float16, each "
        "value stands for the reals that round to it (half an ulp each side, absolute 2^-25 at zero); prior: exact "
        "values")
    assert reading_text(exact, half, normalized=True) == (
        "at the data's precision (a row: every distribution in its entries' intervals): conditionals: exact values; "
        "prior: float16, each value stands for the reals that round to it (half an ulp each side, absolute 2^-25 at "
        "zero); rows within 8 N eps of 1 normalized exactly (p / sum p, arrays given in Python)")


# --- the float64 guide copy and subsets ---------------------------------------------------------------------------

def test_the_float64_guide_copy():
    g = GivenNumbers(np.array([[fmpq(1, 3), fmpq(10**400, 3), fmpq(-10**400, 7), fmpq(5, 1)]], dtype=object), EXACT)
    assert g.float64().tolist() == [[1 / 3, float("inf"), float("-inf"), 5.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow to inf is expected here, not a warning
        assert _read(np.array([[np.longdouble("1e4000")]])).float64().tolist() == [[float("inf")]]
    assert _read(np.array([[0.5]], dtype=F16)).float64().dtype == np.float64


def test_a_subset_keeps_the_reading():
    g = _read(np.array([[0.5, 0.5], [0.25, 0.75]], dtype=F16))
    s = g.subset([1])
    assert s.precision == g.precision and not s.exact and s.values.tolist() == [[0.25, 0.75]]
