"""The a priori bounds of verifier/arith/float_bounds.py, the rigorous exp
(float_exp.py) and the accurate product (float_accurate.py) under every
summation order of tests/summation_orders.py (issue 17, item 1), held against
exact rationals (python-flint integers) and Arb.

Each test runs the functions unchanged inside :func:`summation_order`: the
numpy backend's products and float_bounds' ``np.sum`` add their terms in
that order (left to right, right to left, a tree, blocks of 4 and 64, a
random permutation per dot product, largest or smallest term first, and a
fused multiply-add).  The inputs sit where a bound that leans on one order
would fail: long dot products (k = 4096) that absorb every small term,
cancellation to zero, entries at the range limits (2^400, 2^-1022,
subnormals, products that underflow), and both signs.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb
from float_truth import F, exact_product
from hypothesis import given, settings
from hypothesis import strategies as st
from summation_orders import ALL_ORDERS, summation_order

from verifier.arith import float_bounds
from verifier.arith.backend import get_backend
from verifier.arith.compare import workprec
from verifier.arith.float_accurate import accurate_matmul
from verifier.arith.float_bounds import (
    SLACK,
    U,
    abs_upper,
    add_up,
    ball_matmul,
    down_scale,
    fl_down,
    fl_up,
    nonneg_matmul_up,
    rowsum_up,
    up_scale,
)
from verifier.arith.float_exp import X_MAX, exp_bounds
from verifier.errors import InsufficientPrecision

u = 2.0**-53
K = 4096


def for_order(order: str, A, B):
    """The ``fma`` order is emulated in Python rationals: a shorter product (k = 1024, 2 rows)."""
    if order != "fma":
        return A, B
    return A[:2, :1024], B[:1024]


def nonnegative_cases():
    """(name, P, Q): nonnegative operands where some order loses everything."""
    rng = np.random.default_rng(17)
    absorb = np.array([[1.0] + [u] * (K - 1), [u] * (K - 1) + [1.0], [0.5] + [u / 2 * 3] * (K - 1)])
    tiny = np.full((2, K), 2.0**-540)  # every product 2^-1080 underflows: only 3 k UL covers it
    tiny[1, ::2] = 5e-324
    huge = np.full((2, K), 2.0**400)  # the largest operands accepted: products 2^800
    mixed = np.ldexp(rng.random((3, K)), rng.integers(-1074, 400, (3, K)))
    ones = np.ones((K, 2))
    return [("absorb", absorb, ones), ("tiny", tiny, np.full((K, 2), 2.0**-540)),
            ("subnormal-times-one", tiny, ones), ("huge", huge, np.full((K, 2), 2.0**400)),
            ("mixed", mixed, np.ldexp(rng.random((K, 2)), rng.integers(-600, 400, (K, 2))))]


@pytest.mark.parametrize("case", range(5))
def test_nonnegative_sums_and_products_are_bounded_above_in_every_order(order, case):
    name, P, Q = nonnegative_cases()[case]
    P, Q = for_order(order, P, Q)
    b = get_backend("numpy")
    exact = exact_product(P, Q)
    up = nonneg_matmul_up(b, P, Q)
    upv = nonneg_matmul_up(b, P, Q[:, 0])
    rows = rowsum_up(b, P)
    for i in range(P.shape[0]):
        assert F(rows[i]) >= sum(F(x) for x in P[i]), (name, i)
        assert F(upv[i]) >= exact[i][0], (name, i)
        for j in range(Q.shape[1]):
            assert F(up[i, j]) >= exact[i][j], (name, i, j)


def test_the_orders_really_differ_on_the_absorbing_sums():
    """The adversary is not idle: on [1, u, ..., u] left to right and largest
    first lose every u, smallest first keeps them (the exact sum is 1 + 4095 u)."""
    x = np.array([[1.0] + [u] * (K - 1)])
    sums = {}
    for o in ("sequential", "largest-first", "smallest-first", "pairwise"):
        with summation_order(o):
            sums[o] = float(get_backend("numpy").matmul(x, np.ones(K))[0])
    assert sums["sequential"] == sums["largest-first"] == 1.0
    assert sums["smallest-first"] == 1 + 4096 * u  # 1 + 4095 u, a tie, rounded to even
    assert sums["pairwise"] > 1.0


def signed_cases():
    """(name, A, B): signed operands, products that cancel to (almost) 0."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, K))
    Q, _ = np.linalg.qr(A.T)
    w = rng.standard_normal(K)
    w -= Q @ (Q.T @ w)
    cancel_B = np.stack([1e9 * w, rng.standard_normal(K), np.ldexp(rng.standard_normal(K), -1000)], 1)
    alt = np.tile([2.0**52, -(2.0**52), 1.0, -1.0], (3, K // 4))  # partial sums of 2^52 and 1: rounding in ties
    alt[1] = -alt[1]
    alt[2, 2::4] = 0.5
    big = np.ldexp(rng.standard_normal((3, K)), 400 - 3) * (rng.random((3, K)) < 0.5)
    sub = np.ldexp(rng.standard_normal((2, K)), -1070)  # subnormal operands: every product underflows
    return [("cancel", A, cancel_B), ("alternating", alt, np.ones((K, 2))),
            ("near-overflow", big, np.ldexp(rng.standard_normal((K, 2)), 390)),
            ("subnormal", sub, rng.standard_normal((K, 2))),
            ("subnormal-pairs", sub, np.ldexp(rng.standard_normal((K, 2)), -3))]


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("radii", [False, True])
def test_ball_products_enclose_every_member_in_every_order(order, case, radii):
    """|X Y - C_mid| <= C_rad for X in A +/- A_rad, Y in B +/- B_rad: the worst
    member's distance is |AB - C_mid| + |A| B_rad + A_rad (|B| + B_rad)."""
    name, A, B = signed_cases()[case]
    A, B = for_order(order, A, B)
    b = get_backend("numpy")
    Ar = np.abs(A) * 2.0**-30 if radii else None
    Br = np.abs(B) * 2.0**-40 + 2.0**-1074 if radii else None
    C, R = ball_matmul(b, A, Ar, B, Br)
    exact = exact_product(A, B)
    extra = None
    if radii:
        e1, e2, e3 = exact_product(np.abs(A), Br), exact_product(Ar, np.abs(B)), exact_product(Ar, Br)
        extra = [[x + y + z for x, y, z in zip(*rs)] for rs in zip(e1, e2, e3)]
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            worst = abs(F(C[i, j]) - exact[i][j]) + (extra[i][j] if radii else 0)
            assert worst <= F(R[i, j]), (name, i, j)


@pytest.mark.parametrize("case", range(5))
def test_accurate_products_enclose_the_exact_product_in_every_order(order, case):
    name, A, B = signed_cases()[case]
    A, B = for_order(order, A, B)
    b = get_backend("numpy")
    mid, rad = accurate_matmul(b, A, B)
    exact = exact_product(A, B)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            assert abs(F(mid[i, j]) - exact[i][j]) <= F(rad[i, j]), (name, i, j)


def test_a_bound_with_gamma_one_in_place_of_gamma_k_is_caught(monkeypatch):
    """Negative control: the a priori term gamma_k |A||B| weakened to u |A||B|
    (what a tree of depth 1 would need) fails on the absorbing sums summed left
    to right: the float sum loses (k - 1) u."""
    monkeypatch.setattr(float_bounds, "gamma", lambda k: U / (1 - U))
    with summation_order("sequential"), pytest.raises(AssertionError):
        x = np.array([[1.0] + [u] * (K - 1)])
        C, R = ball_matmul(get_backend("numpy"), x, None, np.ones((K, 1)), None)
        assert abs(F(C[0, 0]) - (1 + (K - 1) * Fraction(1, 2**53))) <= F(R[0, 0])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_short_products_pay_for_the_rounding_of_each_product(order, k):
    """One-ulp operands: (1 + 2u)^2 = 1 + 4u + 4u^2 rounds to 1 + 4u, so even a
    product of length 1 has an error (4u^2): gamma_(k-1) in place of gamma_k
    would give 0 there."""
    x = np.full((2, k), 1 + 2 * u)
    x[1] = -x[1]
    y = np.full((k, 2), 1 + 2 * u)
    y[:, 1] = [1 - u] * k
    b = get_backend("numpy")
    C, R = ball_matmul(b, x, None, y, None)
    mid, rad = accurate_matmul(b, x, y)
    up = nonneg_matmul_up(b, np.abs(x), y)
    exact = exact_product(x, y)
    for i in range(2):
        for j in range(2):
            assert abs(F(C[i, j]) - exact[i][j]) <= F(R[i, j])
            assert abs(F(mid[i, j]) - exact[i][j]) <= F(rad[i, j])
            assert F(up[i, j]) >= abs(exact[i][j])
    assert any(F(C[i, j]) != exact[i][j] for i in range(2) for j in range(2))  # the floats do round here


# -- the scalar steps (no sums: one test, not one per order) ------------------------------------------

floats_nonneg = st.floats(min_value=0.0, max_value=2.0**400, allow_subnormal=True)
ratios = st.fractions(min_value=0, max_value=2**60, max_denominator=2**70)


@settings(deadline=None)
@given(st.lists(floats_nonneg, min_size=1, max_size=6), st.lists(floats_nonneg, min_size=1, max_size=6),
       ratios, ratios)
def test_rounded_scalings_are_on_the_safe_side(xs, ys, f, a):
    b = get_backend("numpy")
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    a = a * SLACK  # absolute terms are tiny in the callers
    for xi, v in zip(x, up_scale(b, x, f, a)):
        assert F(v) >= F(xi) * f + a
    for xi, v in zip(x, down_scale(b, x, f)):
        assert 0 <= F(v) <= F(xi) * f
    for xi, yi, v in zip(x, y, add_up(b, x, y)):
        assert F(v) >= F(xi) + F(yi)
    for xi, yi, v in zip(x, y, abs_upper(b, -x, y)):
        assert F(v) >= F(xi) + F(yi)  # |X| <= |mid| + rad for X in -x +/- y
    q = f * Fraction(3, 7) + a
    assert F(fl_down(q)) <= q <= F(fl_up(q))
    assert fl_up(q) == fl_down(q) or np.nextafter(fl_down(q), np.inf) == fl_up(q)


# -- exp ---------------------------------------------------------------------------------------------------

LN2 = float(np.log(2))


def exp_edges() -> np.ndarray:
    """Range-reduction and range edges: k ln 2 +/- a few ulps (r near 0),
    (k + 1/2) ln 2 (r near +/-0.35), the underflow thresholds and the overflow
    limit, tiny and subnormal arguments of both signs."""
    ks = np.array([-1075, -1074, -1023, -1022, -1000, -999, -2, -1, 0, 1, 2, 511, 1022])
    core = np.concatenate([ks * LN2, (ks + 0.5) * LN2, (ks - 0.5) * LN2])
    around = np.concatenate([np.nextafter(core, np.inf), np.nextafter(core, -np.inf), core])
    special = [0.0, -0.0, 5e-324, -5e-324, 2.0**-1022, -(2.0**-1022), 1e-300, -1e-300, X_MAX,
               np.nextafter(X_MAX, 0), -745.0, np.nextafter(-745.0, np.inf), -745.1332191019411,
               -708.3964185322641, -708.39641853226408, -1e300, -744.44007192138122]
    x = np.concatenate([around, special])
    return x[x <= X_MAX]


def _assert_exp_encloses(x, lo, hi):
    with workprec(300):
        for xi, l, h in zip(x, lo, hi):
            e = arb(float(xi)).exp()
            assert arb(float(l)) <= e and e <= arb(float(h)), xi
            assert 0 <= l <= h


def test_exp_encloses_arb_at_the_range_edges(order):
    b = get_backend("numpy")
    x = exp_edges()
    lo, hi = exp_bounds(b, x)
    _assert_exp_encloses(x, lo, hi)
    with pytest.raises(InsufficientPrecision):
        exp_bounds(b, np.array([np.nextafter(X_MAX, np.inf)]))


@settings(deadline=None)
@given(st.lists(st.floats(min_value=-800.0, max_value=X_MAX, allow_subnormal=True), min_size=1, max_size=20))
def test_exp_encloses_arb_on_drawn_arguments(xs):
    x = np.array(xs)
    lo, hi = exp_bounds(get_backend("numpy"), x)
    _assert_exp_encloses(x, lo, hi)


# -- drawn operands ---------------------------------------------------------------------------------------

entries = st.one_of(st.floats(min_value=-(2.0**400), max_value=2.0**400, allow_subnormal=True),
                    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.0**-1022, -(2.0**-1022), 2.0**400, -(2.0**400),
                                     1.0, -1.0, u, -u, 1 + 2 * u, 2.0**-537]))


@st.composite
def operands(draw):
    """(order, A, B): 2 x k and k x 2 float matrices anywhere in the accepted range."""
    k = draw(st.integers(1, 40))
    A = np.array(draw(st.lists(entries, min_size=2 * k, max_size=2 * k))).reshape(2, k)
    B = np.array(draw(st.lists(entries, min_size=2 * k, max_size=2 * k))).reshape(k, 2)
    if draw(st.booleans()):  # a column of B built to cancel against row 0 of A
        B[:, 1] = A[0, ::-1] if k > 1 else B[:, 1]
        B[: k // 2, 1] *= -1
    return draw(st.sampled_from(ALL_ORDERS)), A, B


@settings(deadline=None)
@given(operands())
def test_drawn_products_are_enclosed_in_every_order(drawn):
    o, A, B = drawn
    b = get_backend("numpy")
    exact = exact_product(A, B)
    with summation_order(o):
        C, R = ball_matmul(b, A, None, B, None)
        mid, rad = accurate_matmul(b, A, B)
        up = nonneg_matmul_up(b, np.abs(A), np.abs(B))
    absexact = exact_product(np.abs(A), np.abs(B))
    for i in range(2):
        for j in range(2):
            assert abs(F(C[i, j]) - exact[i][j]) <= F(R[i, j])
            assert abs(F(mid[i, j]) - exact[i][j]) <= F(rad[i, j])
            assert F(up[i, j]) >= absexact[i][j]
