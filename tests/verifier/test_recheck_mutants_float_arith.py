"""The float path's arithmetic (docs/CERTIFICATES.md Sec. 6) on the inputs where its bounds are tight or its
guards decide: directed roundings against exact Fractions after worst-case roundings (every addition rounding the
same way, an underflowed product, a tie), products whose slice products would round with one bit more per slice,
remainders that attain their bound, cancellation across the nine slice products (where Sum2's a priori term is the
whole radius), rows below 2^-946 (whose slicing scale overflows), operands beyond 2^400, interval minors at the
edge of ||I - X A|| < 1 and interval Cholesky of a barely definite interval matrix.

Where no input attains a bound (Sum2's gamma_8^2 term), the radius is checked against the spec's own formula in
exact rationals: that derivation is the only thing that makes the radius an enclosure.  Survivors of recheck's
mutation run that no test can tell apart are listed, with their reasons, in equivalents_float_arith.json.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from summation_orders import ordered_matmul
from test_recheck_float import exact_matmul

from verifier import recheck as rc

U = Fraction(1, 2**53)


@pytest.fixture(autouse=True)
def _numpy_loaded():
    rc._numpy()


@pytest.fixture(params=["sequential", "pairwise"])
def order(request, monkeypatch):
    monkeypatch.setattr(rc, "_matmul", lambda a, b: ordered_matmul(a, b, request.param))
    return request.param




def assert_encloses(mid, rad, exact):
    for i, row in enumerate(exact):
        for j, v in enumerate(row):
            m, r = float(mid[i, j]), float(rad[i, j])
            assert math.isfinite(m) and math.isfinite(r), (i, j, m, r)
            assert abs(Fraction(m) - v) <= Fraction(r), (i, j, m, float(v), r)


# -- up_ops / down_ops / add_up: directed bounds of an expression after worst-case roundings ---------------------

def _sum_rounding_up(m: int):
    """1 + m t, t = u (1 + 2^-40), added left to right in binary64: every addition lands above the midpoint
    between two floats and rounds UP by almost u.  (float value, exact value, m roundings)."""
    t = 2.0**-53 * (1 + 2.0**-40)
    s = 1.0
    for _ in range(m):
        s = s + t
    return s, 1 + m * Fraction(t)


def _sum_rounding_down(m: int):
    """1 + m t, t = 0.99 u: every addition is absorbed (the float value stays 1)."""
    t = 0.99 * 2.0**-53
    s = 1.0
    for _ in range(m):
        s = s + t
    return s, 1 + m * Fraction(t)


@pytest.mark.parametrize("m", [1, 2, 3, 8, 63])
def test_up_ops_bounds_a_sum_whose_roundings_all_went_down(m):
    s, exact = _sum_rounding_down(m)
    assert s == 1.0 and exact > 1 + (m - 1) * U  # the float lost almost m u
    assert Fraction(float(rc.up_ops(np.array([s]), m)[0])) >= exact


@pytest.mark.parametrize("m", [1, 2, 5, 8, 64])
def test_down_ops_bounds_a_sum_whose_roundings_all_went_up(m):
    s, exact = _sum_rounding_up(m)
    assert Fraction(s) == 1 + 2 * m * U  # each addition gained almost u
    y = float(rc.down_ops(np.array([s]), m)[0])
    assert 0 < Fraction(y) <= exact
    assert Fraction(y) >= exact * (1 - 40 * U)  # tight: a few units of u below the exact value


def test_down_ops_of_an_underflowed_product_is_zero():
    """2^-600 * 2^-475 (1 + 2^-52) = 2^-1075 (1 + 2^-52) rounds to 2^-1074 (twice its value): below 2^-1000 a
    lower bound carries no relative guarantee and must be 0."""
    a, b = 2.0**-600, 2.0**-475 * (1 + 2.0**-52)
    x = a * b
    assert x == 2.0**-1074 and Fraction(x) > Fraction(a) * Fraction(b)
    y = rc.down_ops(np.array([x, 2.0**-1001, 2.0**-999]), 1)
    assert float(y[0]) == 0.0 and float(y[1]) == 0.0
    assert 0 < Fraction(float(y[2])) <= Fraction(2.0**-999) / (1 + U)


def test_add_up_bounds_the_exact_sum():
    xs = np.array([1.0, 1.0 - 2.0**-53, 2.0**-1074, 3.0, 2.0**400, 0.0])
    ys = np.array([2.0**-53 * 1.5, 2.0**-53, 2.0**-1074, 2.0**-52 * 3, 2.0**347, 0.0])
    for x, y, z in zip(xs, ys, rc.add_up(xs, ys)):
        assert Fraction(float(z)) >= Fraction(float(x)) + Fraction(float(y)) + rc.SLACK


# -- mul_up and ball_mul: the inner dimension's gamma, every operand's range, both radii -------------------------

def _absorbing_row(k: int):
    """[1, 0.99u, ..., 0.99u] (1 x k) and ones (k x 1): summed left to right the product is 1, exactly
    1 + 0.99 (k - 1) u."""
    P = np.array([[1.0] + [0.99 * 2.0**-53] * (k - 1)])
    return P, np.ones((k, 1)), 1 + (k - 1) * Fraction(0.99 * 2.0**-53)


def test_mul_up_uses_the_inner_dimension(monkeypatch):
    monkeypatch.setattr(rc, "_matmul", lambda a, b: ordered_matmul(a, b, "sequential"))
    P, Q, exact = _absorbing_row(64)
    assert float(rc._matmul(P, Q)[0, 0]) == 1.0
    assert Fraction(float(rc.mul_up(P, Q)[0, 0])) >= exact
    C, R = rc.ball_mul(P, None, Q, None)  # the ball product's gamma too (one row, 64 terms)
    assert_encloses(C, R, [[exact]])


@pytest.mark.parametrize("bad", [2.0**401, np.inf, np.nan])
def test_mul_up_checks_both_operands(bad):
    for P, Q in ((np.full((1, 2), bad), np.ones((2, 1))), (np.ones((1, 2)), np.full((2, 1), bad))):
        with pytest.raises(rc.Rejected, match="2\\^400"):
            rc.mul_up(P, Q)


@pytest.mark.parametrize("radii", [False, True])
def test_ball_products_check_the_second_midpoint_without_radii(radii):
    """With no radius of A, |B|'s midpoint reaches mul_up only as gamma_k |B| (far below 2^400): ball_mul's own
    check must refuse it."""
    Br = np.zeros((3, 2)) if radii else None
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.ball_mul(np.ones((2, 3)), None, np.ones((3, 2)) + 2.0**401, Br)


def test_ball_products_enclose_the_product_of_two_radii(order):
    """X in 0 +/- 1, Y in 0 +/- 1: X Y ranges over [-1, 1], all of it from Ar Br."""
    Am, Ar, Bm, Br = np.zeros((1, 1)), np.ones((1, 1)), np.zeros((1, 1)), np.ones((1, 1))
    C, R = rc.ball_mul(Am, Ar, Bm, Br)
    for s in (-1, 1):
        for t in (-1, 1):
            assert_encloses(C, R, exact_matmul(Am + s * Ar, Bm + t * Br))
    assert 1 <= Fraction(float(R[0, 0])) <= 1 + 16 * U


# -- accurate_mul: slices, remainders, Sum2, fallback ------------------------------------------------------------

def _spec_floor(A, B, mid):
    """The radius spec 6.3 derives, in exact rationals, from its own slicing of A and B (not recheck's):
    (u |mid| + gamma_8^2 sum |p|) / (1 - u) + max|R_A| colsum|B| + rowsum|A| max|R_B|."""
    k = A.shape[1]
    b = (53 - (k - 1).bit_length()) // 2

    def slices(rows):
        out = []
        for row in rows:
            top = max(abs(Fraction(x)) for x in row)
            e = math.frexp(float(top))[1] if top else 0
            R, parts = [Fraction(x) for x in row], []
            for s in (1, 2, 3):
                unit = Fraction(2) ** (e - s * b)
                q = [math.trunc(r / unit) * unit for r in R]
                parts.append(q)
                R = [r - x for r, x in zip(R, q)]
            out.append((parts, R))
        return out

    SA, SB = slices(A.tolist()), slices(B.T.tolist())
    g8 = rc.gamma(8)
    floor = []
    for i, (pa, ra) in enumerate(SA):
        line = []
        for j, (pb, rb) in enumerate(SB):
            absum = sum(abs(sum(x * y for x, y in zip(a, c))) for a in pa for c in pb)
            rem = (max(abs(x) for x in ra) * sum(abs(Fraction(x)) for x in B[:, j])
                   + sum(abs(Fraction(x)) for x in A[i]) * max(abs(x) for x in rb))
            line.append((U * abs(Fraction(float(mid[i, j]))) + g8 * g8 * absum) / (1 - U) + rem)
        floor.append(line)
    return floor


def _check_accurate(A, B, floor=True):
    mid, rad = rc.accurate_mul(A, B)
    assert_encloses(mid, rad, exact_matmul(A, B))
    for i, line in enumerate(_spec_floor(A, B, mid) if floor else []):
        for j, f in enumerate(line):
            assert Fraction(float(rad[i, j])) >= f, (i, j)
    return mid, rad


def test_accurate_products_cancelling_across_slices(order):
    """0.3 + 0.3 - 0.6 = 0 with b = 25: the top slices sum to -2^-25 and the second ones to +2^-25, so Sum2's
    gamma_8^2 sum|p| (every p counted) is the whole radius; then a full-mantissa row with the same structure."""
    A = np.array([[0.3, 0.3, 0.6], [0.1, 0.7, 0.8], [1.0 / 3, 1.0 / 3, 2.0 / 3]])
    B = np.array([[1.0, 2.0], [1.0, -1.0], [-1.0, 0.5]])
    assert exact_matmul(A[::2], np.array([[1.0], [1.0], [-1.0]])) == [[0], [0]]
    mid, rad = _check_accurate(A, B)
    assert float(mid[0, 0]) == 0.0 and 0 < Fraction(float(rad[0, 0])) < Fraction(1, 2**120)
    rng = np.random.default_rng(11)
    a = rng.integers(2**52, 2**53, (4, 5)).astype(np.float64) * 2.0**-55
    A2 = np.hstack([a, -a[:, :2].sum(axis=1, keepdims=True), -a[:, 2:].sum(axis=1, keepdims=True)])
    _check_accurate(A2, np.ones((7, 1)))
    _check_accurate(A2, rng.integers(2**52, 2**53, (7, 3)).astype(np.float64) * 2.0**-52)
    # m 2^i * n 2^k - n 2^j * m 2^l = 0 (i + k = j + l): full mantissas whose slices cancel in pairs, with many
    # bits, across the nine products (the compensation of Sum2 carries all of it)
    m, n = 5737253309241809, 2430047777090422
    A3 = np.array([[m * 2.0**-94, n * 2.0**-110], [n * 2.0**-60, m * 2.0**-70]])
    B3 = np.array([[n * 2.0**-108], [-m * 2.0**-92]])
    assert exact_matmul(A3[:1], B3) == [[0]]
    _check_accurate(A3, B3)


def test_accurate_products_whose_slice_products_would_round(monkeypatch):
    """k = 3, so b = 25.  With b = 26, the top slice product sums S = sum alpha_l beta_l > 2^53 units, S = 1 mod 4:
    the product rounds down by a unit, the second slice (+ (1 - 2^-25) units) rounds the result down by another,
    an error of 2 units against a radius of u |mid| = 1.125 units: b must satisfy k 2^(2b) <= 2^53."""
    al, be = [2**25 + 1, 2**26 - 1, 2**26 - 1], [2**25 - 1, 2**26 - 1, 2**26 - 1]
    S = sum(x * y for x, y in zip(al, be))
    assert 2**53 < S < 2**54 and S % 4 == 1
    A = np.array([[al[0] * 2.0**-26 + 2 * 2.0**-52, al[1] * 2.0**-26, al[2] * 2.0**-26]])
    B = np.array([[x * 2.0**-26] for x in be])
    assert Fraction(float(A[0, 0])) == Fraction(al[0], 2**26) + Fraction(2, 2**52)
    for name in ("sequential", "reversed", "pairwise", "fma"):
        monkeypatch.setattr(rc, "_matmul", lambda a, b, name=name: ordered_matmul(a, b, name))
        _check_accurate(A, B)


def test_accurate_products_remainders_attain_their_bound(order):
    """Row [1, a] with a = (2^53 - 1) 2^-82: with b = 26 the grid of the third slice is 2^-77 and a's last five bits
    (2^-77 - 2^-82) are A's remainder; times B = [0, 1] the error of the nine products is exactly
    max|R_A| colsum|B|.  The same with the roles of A and B exchanged."""
    a = (2**53 - 1) * 2.0**-82
    A, B = np.array([[1.0, a]]), np.array([[0.0], [1.0]])
    mid, rad = _check_accurate(A, B)
    assert Fraction(a) - Fraction(float(mid[0, 0])) == Fraction(2**5 - 1, 2**82)
    mid, rad = _check_accurate(B.T, A.T)
    assert Fraction(a) - Fraction(float(mid[0, 0])) == Fraction(2**5 - 1, 2**82)
    assert Fraction(float(rad[0, 0])) <= Fraction(2**5 - 1, 2**82) + 2 * U * Fraction(a)  # + u |mid|: tight


@pytest.mark.parametrize("where", ["A", "B", "both"])
def test_accurate_products_of_rows_below_2_to_the_minus_946_use_the_ball_product(where, order):
    """A row of A (or column of B) whose largest entry is 2^-1000 or subnormal: 2^(3b - e) overflows, the ball
    product is used (spec 6.3), and its enclosure is finite; either operand alone selects it."""
    tiny = np.array([[1.5 * 2.0**-1000, 3 * 2.0**-1074], [1.0, 2.0], [2.0**-1074, 0.0]])
    normal = np.array([[1.0, 0.5, -2.0], [3.0, -1.0, 0.25]])
    A, B = {"A": (tiny, normal), "B": (normal.T.copy(), tiny.T.copy()), "both": (tiny, tiny.T.copy())}[where]
    mid, rad = _check_accurate(A, B, floor=False)
    ball = rc.ball_mul(A, None, B, None)
    np.testing.assert_array_equal(mid, ball[0])
    np.testing.assert_array_equal(rad, ball[1])


def test_accurate_products_keep_zero_rows_and_rows_at_2_to_the_minus_400_accurate():
    """Only a NONZERO largest entry below 2^-400 selects the ball product: a zero row, or a row whose largest entry
    is 2^-400 exactly, keeps the accurate product (a cancelling row stays within a few ulps of its value)."""
    A = np.array([[0.0, 0.0, 0.0], [1e8, 1.0, -1e8], [2.0**-400, 2.0**-401, -2.0**-400]])
    B = np.array([[1.0, 3.0], [0.5, 0.0], [1.0, 3.0]])
    mid, rad = _check_accurate(A, B)
    exact = exact_matmul(A, B)
    for i, j in ((1, 0), (1, 1), (2, 0), (2, 1)):
        assert Fraction(float(rad[i, j])) <= 4 * U * abs(exact[i][j]) + Fraction(1, 2**490), (i, j)


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("bad", [2.0**401, np.inf, np.nan])
def test_accurate_products_check_both_operands(which, bad):
    ops = [np.ones((2, 3)), np.ones((3, 2))]
    ops[which][1, 1] = bad
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.accurate_mul(*ops)


# -- nonsingularity, interval Cholesky, exact sums ---------------------------------------------------------------

def test_nonsingularity_checks_each_radius_entry():
    """A radius row [2^401, -2^401] sums to 0: the entries themselves must be range-checked."""
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.nonsingular_float(np.eye(2), np.array([[2.0**401, -2.0**401], [0.0, 0.0]]))


@pytest.mark.parametrize("lo, hi", [(0, 4), (-1, 5), (Fraction(1, 2), Fraction(7, 2))])
def test_interval_nonsingularity_needs_a_norm_below_one(lo, hi):
    """[lo, hi] with midpoint 2: X = 1/2 and ||1 - X A|| = (hi - lo) / 4 exactly: [0, 4] (norm 1) and [-1, 5]
    (3/2) contain 0 and are refused; [1/2, 7/2] (3/4) is proved."""
    with rc.precision(128):
        minor = [[mpmath.iv.mpf([float(lo), float(hi)])]]
        if (hi - lo) / 4 < 1:
            assert rc.nonsingular_intervals(minor) == f"||I - X A||_inf <= {float((hi - lo) / 4):.3g} < 1"
        else:
            with pytest.raises(rc.Rejected, match="not below 1"):
                rc.nonsingular_intervals(minor)


def test_interval_cholesky_keeps_its_pivots_tight():
    """G = [[[1, 4], 1], [1, 2]]: det = 2 a - 1 >= 1 for every a in [1, 4], so every member is positive definite.
    Cholesky proves it with L00 = sqrt([1, 4]) = [1, 2] (s1 = 2 - [1/4, 1] > 0); a pivot re-derived as
    G00 / sqrt(G00) = [1/2, 4] would not.  Then 3 x 3, the same with a wide first pivot."""
    iv = mpmath.iv
    with rc.precision(128):
        assert rc.positive_definite([[iv.mpf([1, 4]), iv.mpf(1)], [iv.mpf(1), iv.mpf(2)]])
        G = [[iv.mpf([1, 4]), iv.mpf(1), iv.mpf(0)], [iv.mpf(1), iv.mpf(2), iv.mpf(0)],
             [iv.mpf(0), iv.mpf(0), iv.mpf(1)]]
        assert rc.positive_definite(G)
        assert not rc.positive_definite([[iv.mpf([1, 4]), iv.mpf(1)], [iv.mpf(1), iv.mpf([0, 1])]])


def test_exact_sums_name_what_they_sum_when_over_budget(monkeypatch):
    monkeypatch.setattr(rc, "_spent", [0])
    monkeypatch.setattr(rc, "EXACT_WORK", 10)
    with pytest.raises(rc.IllFormed, match="^the weights: exact arithmetic of about"):
        rc.exact_sum([Fraction(1, 3), Fraction(2, 7)], "the weights")
