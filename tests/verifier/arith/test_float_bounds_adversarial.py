"""Adversarial inputs for the a priori bounds of verifier/arith/float_bounds.py
(issue 17, item 2): each bound is held against the exact rational value, in
every summation order of tests/summation_orders.py, at the edges of float64
where the error terms matter: subnormal and underflow-range operands (the
``UL = 2^-1022`` terms), operands near the 2^400 range limit, long dot products
(k >= 4096, the ``gamma_k`` terms), cancellation and negative entries.

Each test names the term it guards; tests/soundness/MUTANTS.md maps inputs to
the mutants they kill.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from summation_orders import ORDERS, OrderedBackend, ordered_backends

from verifier.arith import float_bounds as fb
from verifier.arith.backend import get_backend

NP = get_backend("numpy")
TINY = 2.0**-1074  # the smallest subnormal
U = Fraction(1, 2**53)


def backends():
    return [NP, *ordered_backends()]


def exact_dot_matrix(P: np.ndarray, Q: np.ndarray):
    """P Q exactly (float operands): a 2-D list of Fractions."""
    P = np.atleast_2d(P)
    Q = Q[:, None] if Q.ndim == 1 else Q
    FP = [[Fraction(float(x)) for x in row] for row in P]
    FQ = [[Fraction(float(x)) for x in row] for row in Q.T]
    return [[sum((a * c for a, c in zip(r, col)), Fraction(0)) for col in FQ] for r in FP]


# -- up_scale / down_scale / add_up: one rounded operation at the edges --------------------------------------------


@pytest.mark.parametrize("F", [Fraction(1, 3), Fraction(1, 2), Fraction(3, 4), Fraction(1), Fraction(5, 3)])
def test_up_scale_holds_on_subnormals_with_zero_absolute_term(F):
    """``fl(fl(x f) + a) >= F x + A`` with A = 0: the ``+ UL`` inside ``a``
    is all that covers ``fl(x f)`` rounding down in the subnormal range
    (F x = 2^-1074 / 3 rounds to 0)."""
    x = np.array([TINY, 3 * TINY, 5 * TINY, 2.0**-1030, 2.0**-1022 - TINY, 1.0])
    y = fb.up_scale(NP, x, F, Fraction(0))
    for xi, yi in zip(x, y):
        assert Fraction(float(yi)) >= F * Fraction(float(xi)), (F, xi, yi)


@pytest.mark.parametrize("F", [Fraction(1), 1 / (1 - U), Fraction(7, 5)])
def test_up_scale_is_above_F_x_plus_A_relatively(F):
    """Odd significands (every product rounds): the factor f must be at least
    ``F/(1-u)^2``, the absolute term at least ``A``; exact rationals decide."""
    rng = np.random.default_rng(0)
    x = np.ldexp(rng.integers(2**52, 2**53, 200).astype(float) + 1.0, -52)  # in [1, 2], odd significands
    x = np.concatenate([x, x * 2.0**300, x * 2.0**-900])
    for A in (Fraction(0), fb.SLACK, Fraction(3, 2**1060)):
        y = fb.up_scale(NP, x, F, A)
        assert all(Fraction(float(yi)) >= F * Fraction(float(xi)) + A for xi, yi in zip(x, y)), (F, A)


def test_up_scale_is_tight():
    """Not needlessly loose either: within 4 ulps of F x + A in the normal range
    (a factor 2 or an added 1 fails)."""
    x = np.array([1.0, 3.0, 2.0**-500, 2.0**100])
    y = fb.up_scale(NP, x, Fraction(1), Fraction(0))
    assert np.all(y <= x * (1 + 2.0**-50) + 2.0**-1020)
    y = fb.up_scale(NP, x, Fraction(3), fb.SLACK)
    assert np.all(y <= 3 * x * (1 + 2.0**-50) + 2.0**-499)


def test_down_scale_holds_on_odd_significands_and_zeroes_the_underflow_range():
    rng = np.random.default_rng(1)
    x = np.ldexp(rng.integers(2**52, 2**53, 300).astype(float) + 1.0, -52)
    x = np.concatenate([x, x * 2.0**-990, x * 2.0**300, np.array([2.0**-1000, 2.0**-1001, TINY, 0.0])])
    for F in (Fraction(1), Fraction(1, 3), 1 - 4 * U, Fraction(9, 7)):
        y = fb.down_scale(NP, x, F)
        assert all(Fraction(float(yi)) <= F * Fraction(float(xi)) for xi, yi in zip(x, y)), F
        assert np.all(y >= 0)
        big = x > 2.0**-900
        assert np.all(y[big] >= x[big] * float(F) * (1 - 2.0**-50)), F  # not needlessly low


def test_down_scale_threshold_is_2_to_the_minus_1000():
    """Products below 2^-1000 become 0 (``fl(x f) <= x f (1+u)`` needs the
    normal range); products above it are kept (f is just below 1, so
    ``fl(2^-1000 f)`` is below 2^-1000 and becomes 0 too)."""
    x = np.array([2.0**-999, 2.0**-1000, 2.0**-1001, 1.5 * 2.0**-1000])
    y = fb.down_scale(NP, x, Fraction(1))
    assert y[1] == 0.0 and y[2] == 0.0
    assert y[0] > 0 and y[3] > 0


def test_add_up_holds_for_sums_that_round_down():
    """``x + y`` rounds to nearest: ties round down to even (1 + u -> 1)."""
    x = np.array([1.0, 1.0, 2.0**-1074, 2.0**-1022, 2.0**399])
    y = np.array([2.0**-53, 2.0**-54 * 3, 2.0**-1074, 2.0**-1074, 2.0**345 + 2.0**344])
    s = fb.add_up(NP, x, y)
    for a, c, t in zip(x, y, s):
        assert Fraction(float(t)) >= Fraction(float(a)) + Fraction(float(c)), (a, c, t)
    assert s[0] > 1.0  # the tie 1 + u rounded down to 1: the bound is above


def test_abs_upper_covers_the_radius_and_signs():
    mid = np.array([-3.0, 2.0**-1074, -(2.0**-1074), 0.0, -1.0])
    rad = np.array([2.0**-53, 2.0**-1074, 0.0, 2.0**-1060, 2.0**-52 * 3])
    a = fb.abs_upper(NP, mid, rad)
    for m, r, t in zip(mid, rad, a):
        assert Fraction(float(t)) >= abs(Fraction(float(m))) + Fraction(float(r))
    assert np.array_equal(fb.abs_upper(NP, mid), np.abs(mid))


# -- fl_up, fl_down, gamma, check_range ----------------------------------------------------------------------------


@pytest.mark.parametrize("q", [Fraction(1, 3), Fraction(-1, 3), Fraction(2**1100, 3**600), Fraction(1, 2**1080),
                               Fraction(-1, 2**1080), Fraction(5), 1 + U, 1 - U / 2])
def test_fl_up_and_fl_down_are_the_neighbouring_floats(q):
    up, dn = fb.fl_up(q), fb.fl_down(q)
    assert Fraction(up) >= q >= Fraction(dn)
    assert Fraction(math.nextafter(up, -math.inf)) < q or Fraction(up) == q
    assert Fraction(math.nextafter(dn, math.inf)) > q or Fraction(dn) == q


def test_gamma_is_exact_and_its_range_is_enforced():
    assert fb.gamma(0) == 0
    assert fb.gamma(1) == U / (1 - U)
    assert fb.gamma(4096) == 4096 * U / (1 - 4096 * U)
    assert fb.gamma(fb.MAX_K) == fb.MAX_K * U / (1 - fb.MAX_K * U)
    for bad in (-1, fb.MAX_K + 1):
        with pytest.raises(fb.FloatRangeError):
            fb.gamma(bad)


def test_check_range_accepts_2_to_400_and_refuses_above_and_non_finite():
    fb.check_range(NP, np.array([2.0**400, -(2.0**400), TINY]), None, np.zeros((0, 3)))
    for bad in (np.array([math.nextafter(2.0**400, math.inf)]), np.array([-(2.0**401)]), np.array([np.nan]),
                np.array([-np.inf, 1.0])):
        with pytest.raises(fb.FloatRangeError):
            fb.check_range(NP, np.array([1.0]), bad)


def test_check_ieee_accepts_numpy_and_refuses_a_flushing_backend():
    fb.check_ieee(NP)

    class Flush(type(NP)):
        def matmul(self, a, b):
            out = np.asarray(a) @ np.asarray(b)
            return np.where(np.abs(out) < 2.0**-1022, 0.0, out)

    with pytest.raises(fb.FloatRangeError):
        fb.check_ieee(Flush("flush-to-zero"))
    fb._IEEE_CHECKED.discard("flush-to-zero")


# -- rowsum_up, nonneg_matmul_up, ball_matmul: any summation order ----------------------------------------------------


def _long_nonneg(k: int, seed: int) -> np.ndarray:
    """One large entry and k - 1 entries just below half an ulp of the running
    sum: sequential summation loses every one of them (the gamma_k term)."""
    rng = np.random.default_rng(seed)
    v = (1 - rng.random(k) * 2.0**-8) * 2.0**-53
    v[0] = 1.0
    return v


@pytest.mark.parametrize("k", [4096, 5000])
def test_rowsum_up_holds_for_long_rows_in_every_order(k):
    M = np.stack([_long_nonneg(k, 0), _long_nonneg(k, 1)[::-1]])
    exact = [sum(map(Fraction, row.tolist()), Fraction(0)) for row in M]
    s = fb.rowsum_up(NP, M)
    assert all(Fraction(float(si)) >= e for si, e in zip(s, exact))
    for order in ORDERS:  # the sum itself in every order: the bound covers each
        b = OrderedBackend("numpy", order)
        fs = b.matmul(M, np.ones(k))
        up = fb.up_scale(NP, fs, 1 / (1 - fb.gamma(k)))
        assert all(Fraction(float(ui)) >= e for ui, e in zip(up, exact)), order


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_nonneg_matmul_up_holds_for_long_dot_products(b):
    k = 4096
    P = np.stack([_long_nonneg(k, 2), _long_nonneg(k, 3)])
    Q = np.stack([np.ones(k), _long_nonneg(k, 4)[::-1] * 2.0**40], axis=1)
    up = fb.nonneg_matmul_up(b, P, Q)
    exact = exact_dot_matrix(P, Q)
    for i in range(2):
        for j in range(2):
            assert Fraction(float(up[i, j])) >= exact[i][j], (i, j)


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_nonneg_matmul_up_holds_when_every_product_underflows(b):
    """Products of 2^-540 and 2^-540 entries are below the smallest
    subnormal: the float product is 0, the exact one is k 2^-1080 > 0; only
    the absolute term (3 k UL, and SLACK) covers it."""
    k = 64
    P = np.full((1, k), 2.0**-540)
    Q = np.full((k, 1), 3 * 2.0**-540)
    up = fb.nonneg_matmul_up(b, P, Q)
    assert Fraction(float(up[0, 0])) >= k * Fraction(3, 2**1080)


def _cancelling(k: int, seed: int):
    """x, y of length k with x . y exactly 1 + tiny and |x|.|y| ~ k 2^30: the
    gamma_k |x||y| term is what the error is of the order of."""
    rng = np.random.default_rng(seed)
    h = k // 2
    a = rng.integers(1, 2**20, h).astype(float) * 2.0**-5
    c = rng.integers(1, 2**20, h).astype(float) * 2.0**5 + rng.random(h)
    x = np.concatenate([a, -a])
    y = np.concatenate([c, c * (1 + 2.0**-30)])
    return x, y


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_ball_matmul_encloses_cancelling_long_dot_products(b):
    k = 4096
    x1, y1 = _cancelling(k, 5)
    x2, y2 = _cancelling(k, 6)
    A = np.stack([x1, -x2])
    B = np.stack([y1, y2[::-1]], axis=1)
    C, R = fb.ball_matmul(b, A, None, B, None)
    exact = exact_dot_matrix(A, B)
    for i in range(2):
        for j in range(2):
            assert abs(Fraction(float(C[i, j])) - exact[i][j]) <= Fraction(float(R[i, j])), (i, j)


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_ball_matmul_with_radii_encloses_every_corner(b):
    """Balls on both sides, negative entries: the product of the corner
    matrices (mid +/- rad, every sign choice of a row/column) is inside."""
    rng = np.random.default_rng(7)
    Am, Bm = rng.standard_normal((3, 5)), rng.standard_normal((5, 2))
    Ar, Br = np.abs(rng.standard_normal((3, 5))) * 1e-3, np.abs(rng.standard_normal((5, 2))) * 1e-3
    C, R = fb.ball_matmul(b, Am, Ar, Bm, Br)
    for sa in (-1, 1):
        for sb in (-1, 1):
            # the extreme corner for entry (i, j): X_il = Am + s rad with s = sign(B_lj) (and vice versa)
            for i in range(3):
                for j in range(2):
                    X = [Fraction(float(Am[i, l])) + sa * np.sign(Bm[l, j]) * Fraction(float(Ar[i, l]))
                         for l in range(5)]
                    Y = [Fraction(float(Bm[l, j])) + sb * np.sign(Am[i, l]) * Fraction(float(Br[l, j]))
                         for l in range(5)]
                    v = sum((p * q for p, q in zip(X, Y)), Fraction(0))
                    assert abs(Fraction(float(C[i, j])) - v) <= Fraction(float(R[i, j]))


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_ball_matmul_in_the_underflow_range(b):
    """Operands ~2^-540 (their products underflow to 0 or subnormals): the
    enclosure holds through the absolute terms alone."""
    k = 16
    rng = np.random.default_rng(8)
    A = rng.integers(-7, 8, (2, k)).astype(float) * 2.0**-540 + 2.0**-560
    B = rng.integers(-7, 8, (k, 2)).astype(float) * 2.0**-537
    Ar = np.full(A.shape, 2.0**-600)
    for rad in (None, Ar):
        C, R = fb.ball_matmul(b, A, rad, B, None)
        exact = exact_dot_matrix(A, B)
        extra = 0 if rad is None else Fraction(2.0**-600) * sum(abs(Fraction(float(v))) for v in B[:, 0])
        for i in range(2):
            for j in range(2):
                err = abs(Fraction(float(C[i, j])) - exact[i][j])
                assert err + (extra if j == 0 else 0) <= Fraction(float(R[i, j])), (i, j)


def test_ball_matmul_near_the_range_limit():
    """Operands 2^400 (the largest accepted): no overflow, the enclosure holds."""
    A = np.array([[2.0**400, -(2.0**400) * (1 - 2.0**-52), 3.0]])
    B = np.array([[2.0**-390], [2.0**-390], [2.0**300]])
    for b in backends():
        C, R = fb.ball_matmul(b, A, None, B, None)
        e = exact_dot_matrix(A, B)[0][0]
        assert np.isfinite(R[0, 0]) and abs(Fraction(float(C[0, 0])) - e) <= Fraction(float(R[0, 0]))


def test_down_scale_keeps_a_product_of_exactly_2_to_the_minus_1000():
    """The threshold is strict: fl(x f) == 2^-1000 is kept (only products
    BELOW 2^-1000 are replaced by 0)."""
    f = fb.fl_down(1 / (1 + U))
    x = 2.0**-1000
    for _ in range(8):  # the float whose product with f rounds to 2^-1000
        if x * f == 2.0**-1000:
            break
        x = math.nextafter(x, math.inf)
    assert x * f == 2.0**-1000
    assert fb.down_scale(NP, np.array([x]), Fraction(1))[0] == 2.0**-1000


@pytest.mark.parametrize("which", range(4))
@pytest.mark.parametrize("bad", [np.inf, np.nan, 2.0**401])
def test_ball_matmul_checks_the_range_of_every_operand(which, bad):
    ops = [np.ones((2, 3)), np.full((2, 3), 0.5), np.ones((3, 2)), np.full((3, 2), 0.5)]
    ops[which] = ops[which].copy()
    ops[which][1, 1] = bad
    with pytest.raises(fb.FloatRangeError):
        fb.ball_matmul(NP, *ops)


@pytest.mark.parametrize("which", range(2))
def test_nonneg_matmul_up_checks_the_range_of_both_operands(which):
    ops = [np.ones((2, 3)), np.ones((3, 2))]
    ops[which][0, 0] = 2.0**401
    with pytest.raises(fb.FloatRangeError):
        fb.nonneg_matmul_up(NP, *ops)


@pytest.mark.parametrize("b", backends(), ids=lambda b: getattr(b, "order", b.name))
def test_stacked_long_dot_products_use_the_inner_dimension(b):
    """Stacks (B, 1, k) @ (B, k, 1) with k = 4096: the inner dimension is the
    LAST axis of the left operand (gamma_k, not gamma of the middle axis 1);
    a long sum whose every small term is lost rounds by ~(k-1) u."""
    k = 4096
    P = np.stack([_long_nonneg(k, 9)[None, :], _long_nonneg(k, 10)[None, :]])  # (2, 1, k)
    Q = np.ones((2, k, 1))
    up = fb.nonneg_matmul_up(b, P, Q)
    C, R = fb.ball_matmul(b, P, None, Q, None)
    for i in range(2):
        e = sum(map(Fraction, P[i, 0].tolist()), Fraction(0))
        assert Fraction(float(up[i, 0, 0])) >= e
        assert abs(Fraction(float(C[i, 0, 0])) - e) <= Fraction(float(R[i, 0, 0]))


@pytest.mark.parametrize("bad", [np.inf, 2.0**401])
def test_check_range_checks_the_operands_after_a_missing_radius(bad):
    """A None operand (an exact matrix: no radius) is skipped, not the end of
    the list: ball_matmul(A, None, B, B_rad) checks B and B_rad."""
    with pytest.raises(fb.FloatRangeError):
        fb.check_range(NP, np.ones(2), None, np.array([1.0, bad]))
    with pytest.raises(fb.FloatRangeError):
        fb.ball_matmul(NP, np.ones((1, 2)), None, np.ones((2, 1)), np.array([[0.5], [bad]]))
    # an exact A (no radius): B_mid reaches no later range check (gamma_k |B_mid| is below 2^400): its own must refuse it
    for B_rad in (None, np.full((2, 1), 0.5)):
        with pytest.raises(fb.FloatRangeError):
            fb.ball_matmul(NP, np.ones((1, 2)), None, np.array([[1.0], [bad]]), B_rad)


def test_rowsum_up_of_stacks_sums_the_last_axis_in_every_order(order):
    """Stacks (2, 1, k), k = 4096, of one 1.0 and k - 1 terms below half its
    ulp: the sum runs over the LAST axis (gamma_k, not gamma of axis 1), and
    in the orders that lose every small term the gamma_k surplus is needed."""
    k = 4096
    M = np.stack([_long_nonneg(k, 11)[None, :], _long_nonneg(k, 12)[None, :]])
    bs = [NP]
    try:
        bs.append(get_backend("torch-cpu"))
    except Exception:  # pragma: no cover - torch is a dependency
        pass
    for b in bs:
        s = b.to_numpy(fb.rowsum_up(b, b.asarray(M)))
        assert s.shape == (2, 1), b.name
        for i in range(2):
            assert Fraction(float(s[i, 0])) >= sum(map(Fraction, M[i, 0].tolist()), Fraction(0)), (b.name, i)


def test_check_range_refuses_each_bad_entry_wherever_it_is():
    """check_range in two reductions (issue 38): a NaN, an infinity of either
    sign or a magnitude above 2^400 anywhere is refused, with its reason;
    +-2^400 itself and empty arrays pass."""
    b = get_backend("numpy")
    for bad, why in ((np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (-np.inf, "NaN or infinite"),
                     (2.0**401, "exceeds 2\\^400"), (-(2.0**401), "exceeds 2\\^400")):
        for where in (0, 5, 11):
            a = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
            a.flat[where] = bad
            with pytest.raises(fb.FloatRangeError, match=why):
                fb.check_range(b, np.ones(2), a)
    fb.check_range(b, np.array([2.0**400, -(2.0**400)]), np.zeros((0, 3)), None)
    with pytest.raises(fb.FloatRangeError, match="NaN or infinite"):
        fb.check_range(b, np.array([np.nan, 2.0**500]))


def test_cached_constants_are_the_exact_ones_and_cleared_together():
    """The exact constants behind up_scale, down_scale and gamma are cached
    (issue 38) by the exact value given, whatever its type, and recomputed
    after clear_constant_caches."""
    b = get_backend("numpy")
    x = np.array([1.0, 3.0])
    for F in (Fraction(3, 7), 3, 2.5, Fraction(5, 2)):
        got = fb.up_scale(b, x, F, fb.SLACK)
        want = x * fb.fl_up(Fraction(F) / (1 - fb.U) ** 2) + fb.fl_up(fb.SLACK / (1 - fb.U) + fb.UL)
        assert np.array_equal(got, want)
        assert np.array_equal(fb.down_scale(b, x, F), x * fb.fl_down(Fraction(F) / (1 + fb.U)))
    assert fb.gamma(64) == 64 * fb.U / (1 - 64 * fb.U) and fb.inv_1m_gamma(64) == 1 / (1 - fb.gamma(64))
    assert fb.product_slack(5) == 15 * fb.UL + fb.SLACK
    fb.clear_constant_caches()
    assert not any(fb._CACHES)
    assert fb.gamma(3) == 3 * fb.U / (1 - 3 * fb.U) and fb._GAMMA == {3: fb.gamma(3)}
