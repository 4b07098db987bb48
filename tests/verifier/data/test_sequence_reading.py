"""The conditionals and priors of a token-sequence dataset at the data's
precision (issue 31): every interval against an independent computation
(tests/rounding_truth.py: neighbours and the rounding of the midpoints),
rows accepted exactly when some distribution rounds to them, the balls
enclosing every such distribution, and the hypotheses decided over all of
them."""
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, fmpq
from hypothesis import given, settings
from hypothesis import strategies as st
from rounding_truth import box_distributions, exact, rounding_set

from verifier.arith.compare import Decision, workprec
from verifier.data.precision import EXACT, array_precision
from verifier.data.sequence_reading import (
    GivenNumbers,
    checked_rows,
    conditional_balls,
    entry_bounds,
    point_masses,
    positivity,
    prior_balls,
    probability_bounds,
    uniform_weights,
)
from verifier.errors import InvalidInstance

DTYPES = (np.float16, np.float32, np.float64, np.longdouble)


def _read(a) -> GivenNumbers:
    a = np.asarray(a)
    return GivenNumbers(a, array_precision(a))


def _F(x) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _special(dt) -> list:
    fi = np.finfo(dt)
    return [0, 1, 0.5, 0.75, 1 / 3, fi.tiny, 3 * fi.tiny, fi.smallest_subnormal, 5 * fi.smallest_subnormal, fi.max,
            -fi.max, -1.5, 2.0 ** -3, np.nextafter(dt(1), dt(2)), np.nextafter(dt(1), dt(0))]


@pytest.mark.parametrize("dt", DTYPES)
def test_every_interval_is_the_set_that_rounds_to_the_float(dt):
    """Normals, powers of two, subnormals, zeros, the largest finite value: ends and which end belongs."""
    vals = np.array(_special(dt), dtype=dt)
    lo, hi, lo_in, hi_in = entry_bounds(_read(vals))
    for i, x in enumerate(vals):
        assert (_F(lo[i]), _F(hi[i]), bool(lo_in[i]), bool(hi_in[i])) == rounding_set(x), (dt, x)


@settings(deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 2**62), st.integers(-40, 8), st.booleans())
def test_random_floats_stand_for_their_rounding_sets(dt, bits, shift, negative):
    with np.errstate(over="ignore"):
        m = dt(bits % (1 << 20)) * dt(2.0) ** shift * (-1 if negative else 1)
    if not np.isfinite(m):
        return
    lo, hi, lo_in, hi_in = entry_bounds(_read(np.array([m], dtype=dt)))
    assert (_F(lo[0]), _F(hi[0]), bool(lo_in[0]), bool(hi_in[0])) == rounding_set(np.array([m], dtype=dt)[0])


def test_exact_arrays_are_points():
    g = GivenNumbers(np.array([[1, 0], [2**60 + 1, 3]]), EXACT)
    lo, hi, lo_in, hi_in = entry_bounds(g)
    assert lo.tolist() == hi.tolist() == [[1, 0], [2**60 + 1, 3]] and lo_in.all() and hi_in.all()
    assert lo[1, 0] == fmpq(2**60 + 1)  # never through float64


def _row_has_a_distribution(row) -> bool:
    """Independent truth: some q with q_j in the rounding set of row[j] (cut at 0) and sum q = 1."""
    sets = []
    for x in row:
        lo, hi, lo_in, hi_in = rounding_set(x)
        if lo < 0:
            lo, lo_in = Fraction(0), True
        sets.append((lo, hi, lo_in, hi_in))
    L, U = sum(s[0] for s in sets), sum(s[1] for s in sets)
    return (L < 1 or (L == 1 and all(s[2] for s in sets))) and (U > 1 or (U == 1 and all(s[3] for s in sets)))


def _accepted(row) -> bool:
    try:
        checked_rows(_read(np.array([row])))
        return True
    except InvalidInstance:
        return False


@settings(deadline=None)
@given(st.integers(2, 4), st.lists(st.integers(-6, 6), min_size=4, max_size=4), st.sampled_from([np.float16,
                                                                                                    np.float32]))
def test_rows_near_one_are_accepted_exactly_when_a_distribution_rounds_to_them(N, steps, dt):
    """Rows a few ulps off 1 (float16, float32): accepted iff the independent truth finds a distribution."""
    base = np.full(N, dt(1) / dt(N), dtype=dt)
    base[0] = dt(1) - base[1:].astype(np.float64).sum()
    row = base.copy()
    for j, k in enumerate(steps[:N]):
        for _ in range(abs(k)):
            row[j] = np.nextafter(row[j], dt(2) if k > 0 else dt(0))
    row = np.abs(row)
    assert _accepted(row) == _row_has_a_distribution(row), row


#: float16 rows (bit patterns) whose intervals' lower (upper) ends sum to exactly 1, with every end of the
#: sum included in the row's set (even significands) or not (found by an exact search, tests/rounding_truth.py)
EDGE_ROWS = {("lower", True): [12528, 11832, 11758, 14656], ("lower", False): [12004, 13788, 14072, 11729],
             ("upper", True): [11562, 12778, 11628, 14642], ("upper", False): [12004, 13788, 14072, 11719]}


@pytest.mark.parametrize("side, included", list(EDGE_ROWS))
def test_float16_rows_at_the_edge_of_the_simplex(side, included):
    """The lower (upper) ends summing to 1 exactly: a distribution exists iff every end it uses belongs to
    the set (round half to even); one ulp further out, none does."""
    row = np.array(EDGE_ROWS[side, included], dtype=np.uint16).view(np.float16)
    sets = [rounding_set(x) for x in row]
    k = 0 if side == "lower" else 1
    assert sum(x[k] for x in sets) == 1 and all(x[2 + k] for x in sets) == included
    assert _accepted(row) == included == _row_has_a_distribution(row)
    out = row.copy()
    out[-1] = np.nextafter(out[-1], np.float16(2) if side == "lower" else np.float16(0))
    assert not _accepted(out) and not _row_has_a_distribution(out)


def test_a_float16_row_above_one_plus_u_is_refused():
    """The issue's float16 row: stored sum 1 + u (u = 2^-11), its lower ends sum to 1 + 2^-13 > 1."""
    f = np.float16
    above = np.array([[f(0.5), f(0.5) + f(2.0 ** -11)]], dtype=f)
    assert sum(exact(x) for x in above[0]) == 1 + Fraction(1, 2**11)
    with pytest.raises(InvalidInstance, match="lower ends of its entries' intervals sum to .* > 1"):
        checked_rows(_read(above))


@settings(deadline=None)
@given(st.sampled_from(DTYPES), st.lists(st.integers(0, 2**12), min_size=2, max_size=4), st.integers(-3, 3))
def test_conditional_balls_enclose_every_distribution_of_the_rounding_box(dt, raw, wiggle):
    w = np.array(raw, dtype=np.float64) + 1
    row = (w / w.sum()).astype(dt)
    row[0] = row[0] if wiggle == 0 else abs(row[0] + dt(wiggle) * np.finfo(dt).eps)
    if not _row_has_a_distribution(row):
        return
    with workprec(128):
        B = conditional_balls(checked_rows(_read(np.array([row]))))
        for q in box_distributions(row):
            assert all(B[0, j].contains(arb(fmpq(x.numerator, x.denominator))) for j, x in enumerate(q))


def test_a_float16_zero_is_an_interval_of_probabilities():
    g = checked_rows(_read(np.array([[1, 0, 0]], dtype=np.float16)))
    lo, hi, _, _ = probability_bounds(g)
    assert [_F(x) for x in lo[0]] == [1 - Fraction(1, 2**12), 0, 0]
    assert [_F(x) for x in hi[0]] == [1 + Fraction(1, 2**11), Fraction(1, 2**25), Fraction(1, 2**25)]
    with workprec(128):
        B = conditional_balls(g)
        q = [1 - Fraction(1, 2**26), Fraction(1, 2**26), 0]  # rounds to (1, 0, 0) and is not a point mass
        assert all(B[0, j].contains(arb(fmpq(x.numerator, x.denominator))) for j, x in enumerate(q))
        assert not B[0, 1].is_zero()


def test_long_doubles_below_float64_are_tiny_positive_intervals():
    tiny = np.longdouble("1e-4000")
    g = checked_rows(_read(np.array([[tiny, np.longdouble(1)]])))
    lo, _, _, _ = probability_bounds(g)
    assert lo[0, 0] > 0 and positivity(g)[0] is Decision.TRUE and point_masses(g)[0] is Decision.FALSE
    assert np.asarray(g.values, dtype=np.float64)[0, 0] == 0  # what a float64 copy made of it


@pytest.mark.parametrize("row, dt, want", [
    ([1, 0, 0], np.float16, Decision.UNDECIDED),
    ([0, 1], np.float64, Decision.UNDECIDED),
    ([0.5, 0.5], np.float16, Decision.FALSE),  # neither entry's interval holds 0 or 1
    ([1, 0, 0], None, Decision.TRUE),  # integers: exact
    ([0.5, 0.5], None, Decision.FALSE),
])
def test_point_masses_over_the_rows_sets(row, dt, want):
    a = np.array([row], dtype=dt) if dt else np.array([row])
    g = GivenNumbers(a, array_precision(a)) if dt else GivenNumbers(np.array([[Fraction(x) for x in row]],
                                                                              dtype=object), EXACT)
    assert point_masses(g)[0] is want


def test_positivity_and_uniform_weights():
    assert positivity(_read(np.array([[0.5, 0.5]], dtype=np.float16)))[0] is Decision.TRUE
    assert positivity(_read(np.array([[1.0, 0.0]], dtype=np.float16)))[0] is Decision.UNDECIDED
    assert positivity(GivenNumbers(np.array([[1, 0]]), EXACT))[0] is Decision.FALSE
    assert uniform_weights(_read(np.array([1.0, 1.0], dtype=np.float16)))[0] is Decision.UNDECIDED
    # adjacent floats: their rounding sets touch at a midpoint that only the even one holds: disjoint
    adjacent = np.array([1.0, np.nextafter(np.float16(1), np.float16(2))], dtype=np.float16)
    assert uniform_weights(_read(adjacent))[0] is Decision.FALSE
    big = np.array([2**53 + 1, 2**53])
    assert uniform_weights(GivenNumbers(big, array_precision(big)))[0] is Decision.FALSE  # exact, not float64
    assert uniform_weights(GivenNumbers(np.array([2**53 + 1] * 2), EXACT))[0] is Decision.TRUE


def test_prior_balls_are_exact_for_integers_and_intervals_for_floats():
    with workprec(128):
        b = prior_balls(GivenNumbers(np.array([2**53 + 1, 2**53]), EXACT))
        assert b[0] != b[1] and b[0].is_exact() and (b[0] - b[1]) == 1
        f = prior_balls(_read(np.array([1.0], dtype=np.float16)))
        assert f[0].contains(arb(1) + arb(2) ** -12) and f[0].contains(arb(1) - arb(2) ** -13)


@pytest.mark.parametrize("dt", [np.float16, np.float32])
@pytest.mark.parametrize("N", [2, 3, 4, 8])
@pytest.mark.parametrize("sign", [1, -1])
def test_stored_sums_at_one_plus_minus_u_and_one_ulp_beyond(dt, N, sign):
    """Rows whose stored values sum to exactly 1 + u, 1 - u (u = 2^-p), and one more ulp of the last entry
    outward: accepted exactly when the independent truth finds a distribution in the rows' sets."""
    u = Fraction(1, 2 ** (np.finfo(dt).nmant + 1))
    row = np.full(N, dt(1) / dt(N), dtype=dt)
    row[-1] = dt(1 - float(sum(exact(x) for x in row[:-1])) + sign * float(u))
    if sum(exact(x) for x in row) != 1 + sign * u:
        pytest.skip("1 +- u not reachable by the last entry in this format")
    for _ in range(2):
        assert _accepted(row) == _row_has_a_distribution(row), row
        row[-1] = np.nextafter(row[-1], dt(2) if sign > 0 else dt(0))
    assert not _accepted(row)  # two ulps beyond: nothing rounds to it
