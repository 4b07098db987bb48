"""Every certified claim of the float path under every summation order
(issue 17, item 1), held against exact rationals or 60-digit mpmath:

* float_certificates: ``inverse_residual_bound`` (and ``_explained``),
  ``inverse_residual_bounds`` (batched), ``sigma_min_lower_float``,
  ``residual_upper_float``, ``abs_ball_upper``, ``float_ball_of``;
* robustness_screen: ``rho_screen``'s lower bound;
* (the rank certificates and the independence prepass: test_rank_float_orders.py).

A certified bound must contain the true value, and a certified TRUE must be
exactly true (an exactly nonsingular minor, an exactly positive definite
``A A^T - s^2 I``), under every order of tests/summation_orders.py
(:func:`summation_order` patches the numpy backend, ``get_backend("numpy")``
inside the modules included, and the float modules' ``np.sum``).  The inputs
are near the edges: exactly singular dyadic matrices the naive float test
accepts, one-ulp dependencies (exactly nonsingular, numerically singular),
near-singular Gram matrices (nearly parallel rows), long rows (m = 4096),
cancellation, entries near 2^400 and near underflow, both signs.
"""
from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, arb_mat
from float_truth import F, exact_inf_residual, exact_product, rho_truth, sigma_min_squared_at_least
from hypothesis import given, settings
from hypothesis import strategies as st
from summation_orders import ALL_ORDERS, ordered_matmul, summation_order

from verifier.arith.backend import get_backend
from verifier.arith.compare import Decision, certainly_less, lower, upper
from verifier.arith.exact import exact_rank
from verifier.arith.float_certificates import (
    FloatBall,
    abs_ball_upper,
    float_ball_of,
    inverse_residual_bound,
    inverse_residual_bound_explained,
    inverse_residual_bounds,
    residual_upper_float,
    sigma_min_lower_float,
)
from verifier.arith.robustness_screen import float_ball_of_rationals, rho_screen
from verifier.errors import InsufficientPrecision

M_LONG = 4096


def corners(mid, rad, count: int = 3, seed: int = 0):
    """Members of the ball: the midpoint and ``count`` sign patterns of mid +/- rad (floats, exact)."""
    out = [mid]
    if rad is None:
        return out
    rng = np.random.default_rng(seed)
    for _ in range(count):
        X = mid + rng.choice([-1.0, 1.0], mid.shape) * rad
        if np.all(np.abs(X - mid) <= rad):  # the float corner is inside the ball (not rounded outward)
            out.append(X)
    return out


# -- square minors --------------------------------------------------------------------------------------------

#: (A, R): exactly singular dyadic matrices (the last column an exact combination of the others) and
#: float inverses R on which the NAIVE test ||I - fl(R A)||_inf < 1 passes when fl sums left to right,
#: right to left or pairwise (found by tests/verifier/arith/test_float_certificates.py's recipe; fixed
#: here so that no LAPACK decides them)
PLANTED = [([[-66138406912.0, -396830441472.0], [-3780485120.0, -22682910720.0]], [[89905.2339693537, -1572864.0000000002], [-14984.205661558952, 262144.0]]), ([[-2.55462646484375, 7.308844942599535e-06], [-5.001335144042969, 1.4308934623841196e-05]], [[-3377699720527872.0, 1725291516732977.8], [-1.1805916207174113e+21, 6.030330924832664e+20]]), ([[308.92431640625, -76927.0, 158171.01071929932], [8.341483771800995e-05, 7100160.0, -162.46705722808838], [1.853109359741211, -0.11659383773803711, 948.7919948561212]], [[27015233681453.52, 292623798541.01654, -4503599627370495.5], [-1207675.0553304038, -13081.303173506227, 201326591.99999997], [-52764128284.088905, -571530856.5254229, 8796093022208.0]]), ([[-939384832.0, -1681.521484375, 123127046978026.0], [0.1868577003479004, 418.171875, 403716.1875], [14590312448.0, 1041542.0, -1912380366645248.0]], [[7538450.780014194, -1178566508.4036586, 485356.74372887355], [-58894.14671886089, 9207550.849294942, -3791.849560381824], [57.513815155137586, -8991.748873929278, 3.702978086310375]])]


@functools.lru_cache(maxsize=1)
def square_cases():
    """(name, matrix, exactly nonsingular?): planted singular, one ulp from
    singular, ill-conditioned, scaled to the range edges, mixed signs."""
    rng = np.random.default_rng(11)
    out = []
    for A, _ in PLANTED:
        A = np.array(A)
        k = len(A)
        out.append((f"singular-{k}", A, exact_rank(A) == k))
        A2 = A.copy()
        A2[0, -1] = np.nextafter(A2[0, -1], np.inf)  # one ulp from the singular one
        out.append((f"one-ulp-{k}", A2, exact_rank(A2) == k))
    H = np.array([[1.0 / (i + j + 1) for j in range(10)] for i in range(10)])  # kappa ~ 1e13
    out.append(("hilbert-10", H, True))
    G = rng.standard_normal((20, 20))
    out.append(("tiny", G * 2.0**-300, True))
    out.append(("huge", G * 2.0**390, True))
    S = G * np.ldexp(1.0, rng.integers(-200, 200, (20, 1)))  # rows of wildly different scales
    out.append(("row-scales", S, True))
    C = np.ones((8, 8)) + np.diag(np.full(8, 2.0**-26)) * rng.choice([-1.0, 1.0], 8)  # cancellation in R A
    out.append(("cancel", C, exact_rank(C) == 8))
    return out


@pytest.mark.parametrize("case", range(13))
def test_inverse_residual_bound_is_above_the_exact_residual_in_every_order(order, case):
    name, A, nonsingular = square_cases()[case]
    R = get_backend("numpy").inv(A)  # None: no float inverse
    if R is not None and np.abs(R).max() <= 2.0**400:
        assert F(upper(inverse_residual_bound(A, R))) >= exact_inf_residual(R, A), name
    decided = certainly_less(inverse_residual_bound(A), 1)
    if decided is Decision.TRUE:
        assert nonsingular, name
    bound2, why = inverse_residual_bound_explained(A)
    assert (why == "") == np.isfinite(upper(bound2))


def test_the_singular_cases_fool_the_naive_test_and_the_regular_ones_are_certified():
    """Not idle: the naive float test accepts every planted singular matrix with
    its R (exactly singular: the certificate must refuse them in every order),
    and the certificate decides the regular cases in every order."""
    for A, R in PLANTED:
        A, R = np.array(A), np.array(R)
        assert exact_rank(A) < len(A)
        for o in ("sequential", "reversed", "pairwise"):
            assert np.abs(np.eye(len(A)) - ordered_matmul(R, A, o)).sum(1).max() < 1
        for o in ALL_ORDERS:
            with summation_order(o):
                assert certainly_less(inverse_residual_bound(A, R), 1) is Decision.UNDECIDED, o
    cases = square_cases()
    for o in ALL_ORDERS:
        with summation_order(o):
            for name in ("tiny", "huge", "row-scales"):
                A = next(A for n, A, ok in cases if n == name)
                assert certainly_less(inverse_residual_bound(A), 1) is Decision.TRUE, (o, name)


@pytest.mark.parametrize("case", range(13))
def test_inverse_residual_bound_of_a_ball_covers_every_member(order, case):
    name, A, _ = square_cases()[case]
    rad = np.abs(A) * 2.0**-40
    R = get_backend("numpy").inv(A)
    if R is None or np.abs(R).max() > 2.0**400:
        return
    bound = F(upper(inverse_residual_bound(FloatBall(A, rad), R)))
    for X in corners(A, rad):
        assert bound >= exact_inf_residual(R, X), name


def test_batched_residual_bounds_are_above_the_exact_residuals_in_every_order(order):
    cases = [A for n, A, ok in square_cases() if A.shape == (12, 12) or A.shape == (6, 6)]
    for k in (6, 12):
        stack = np.stack([A for A in cases if A.shape == (k, k)] + [np.eye(k) + np.triu(np.ones((k, k)), 1)])
        out = inverse_residual_bounds(stack)
        R = get_backend("numpy").inv(stack)  # the same preconditioners (the same call, in-process)
        for i, A in enumerate(stack):
            if out[i] < 1:
                assert exact_rank(A) == k
            if np.isfinite(out[i]) and R is not None:
                assert F(out[i]) >= exact_inf_residual(R[i], A)
        rad = np.abs(stack) * 2.0**-45
        out_ball = inverse_residual_bounds(stack, rad)
        for i, A in enumerate(stack):
            if np.isfinite(out_ball[i]) and R is not None:
                for X in corners(A, rad[i]):
                    assert F(out_ball[i]) >= exact_inf_residual(R[i], X)


# -- smallest singular values ---------------------------------------------------------------------------------

def wide_cases():
    """(name, T x m matrix, exactly full row rank?) with long rows."""
    rng = np.random.default_rng(5)
    T, m = 4, M_LONG
    A = rng.standard_normal((T, m))
    dep = A.copy()
    dep[-1] = A[0] + A[1]  # float sums: a nearly (not exactly) dependent row
    dep[-1, 7] = np.nextafter(dep[-1, 7], np.inf)
    par = np.tile(A[0], (T, 1))
    par[1:, :T - 1] += np.diag(np.full(T - 1, 2.0**-20))  # nearly parallel rows: a near-singular Gram matrix
    cancel = np.hstack([np.ones((T, 2)) * 2.0**52, rng.standard_normal((T, m - 2))])
    cancel[:, 1] *= -1  # 2^52 - 2^52 in every Gram entry
    return [("random", A, True), ("one-ulp", dep, exact_rank(dep) == T), ("parallel", par, exact_rank(par) == T),
            ("cancel", cancel, True), ("tiny", A * 2.0**-500, True), ("huge", A * 2.0**395, True),
            ("subnormal-column", np.hstack([A[:, :-1], np.full((T, 1), 5e-324)]), True),
            ("signs", A * np.where(np.arange(m) % 2, -1.0, 1.0), True)]


def _rows_for(order, A):
    return A[:, :512] if order == "fma" else A  # the rational FMA emulation is slow


@pytest.mark.parametrize("case", range(8))
def test_sigma_min_lower_bound_is_below_the_exact_value_in_every_order(order, case):
    name, A, full = wide_cases()[case]
    A = _rows_for(order, A)
    try:
        s = lower(sigma_min_lower_float(A))
    except InsufficientPrecision:
        assert name not in ("random", "signs", "huge"), (order, name)  # well conditioned: decided
        return
    assert s > 0
    assert sigma_min_squared_at_least(A, F(s) ** 2), (order, name)
    rad = np.abs(A) * 2.0**-45
    try:
        sb = lower(sigma_min_lower_float(FloatBall(A, rad)))
    except InsufficientPrecision:
        return
    for X in corners(A, rad, count=2):
        assert sigma_min_squared_at_least(X, F(sb) ** 2), (order, name)


def test_sigma_min_bound_is_not_vacuous():
    A = wide_cases()[0][1]
    with summation_order("largest-first"):
        s = lower(sigma_min_lower_float(A))
    assert s > 0.9 * float(np.linalg.svd(A, compute_uv=False)[-1])


@pytest.mark.parametrize("case", range(8))
def test_residual_upper_bound_covers_every_member_in_every_order(order, case):
    """|X M - B| <= bound entrywise, B the float product nudged by an ulp (cancellation to ~0)."""
    name, A, _ = wide_cases()[case]
    A = _rows_for(order, A)
    M = np.random.default_rng(case).standard_normal((A.shape[1], 2))
    Bm = np.nextafter(A @ M, np.inf)
    rad = np.abs(A) * 2.0**-50
    up = residual_upper_float(FloatBall(A, rad), M, Bm)
    absup = abs_ball_upper(FloatBall(A, rad))
    for X in corners(A, rad, count=2):
        P = exact_product(X, M)
        for i in range(A.shape[0]):
            for j in range(2):
                assert F(up[i, j]) >= abs(P[i][j] - F(Bm[i, j])), (order, name, i, j)
        assert np.all(absup >= np.abs(X))


def test_float_ball_of_an_arb_matrix_encloses_it(order):
    M = arb_mat([[arb(1) / 3, arb(2, 1e-10), arb(-7) / 11], [arb("1e-300"), arb(2.0**390) / 3, arb(0)]])
    fb = float_ball_of(M)
    for i in range(2):
        for j in range(3):
            lo = arb(float(fb.mid[i, j])) - arb(float(fb.rad[i, j]))
            hi = arb(float(fb.mid[i, j])) + arb(float(fb.rad[i, j]))
            assert lo <= M[i, j].lower() and M[i, j].upper() <= hi


# -- robustness screen ----------------------------------------------------------------------------------------

def rho_cases():
    rng = np.random.default_rng(8)
    A = rng.standard_normal((3, 6))
    dep = A.copy()
    dep[2] = A[0] + A[1]
    dep[2, 0] = np.nextafter(dep[2, 0], np.inf)
    long = rng.standard_normal((3, M_LONG))
    par = np.tile(long[0], (3, 1))
    par[1, 0] += 2.0**-10
    par[2, 1] -= 2.0**-10
    mixed = A * 10.0 ** np.array([[-300], [0], [300]])
    sub = A * 2.0**-1060  # subnormal entries: the scaling moves them into range
    return [A, dep, long, par, mixed, sub, -A, A * 2.0**1000]


def test_rho_screen_lower_bound_is_below_the_true_rho_in_every_order(order):
    stack_cases = rho_cases()
    for A in stack_cases:
        A = A[:, :512] if order == "fma" else A
        est, lo = rho_screen(A[None])
        assert 0 <= lo[0] <= rho_truth(A), order
    est, lo = rho_screen(stack_cases[0][None])
    assert lo[0] > 0.9 * float(rho_truth(stack_cases[0]))  # not vacuous


def test_rho_screen_with_a_ball_of_rationals_is_below_their_rho(order):
    rng = np.random.default_rng(2)
    Q = [[Fraction(int(x), 3**7) for x in row] for row in rng.integers(-50, 50, (3, 8))]
    Q[2] = [a + b + Fraction(1, 3**20) for a, b in zip(Q[0], Q[1])]  # nearly dependent
    mid, rad = float_ball_of_rationals(np.array(Q, dtype=object))
    est, lo = rho_screen(mid[None], rad[None])
    # the exact rationals' rho, from exact floats close enough: compare with the ball's worst member
    import mpmath

    with mpmath.workdps(60):
        rows = [[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in Q]
        M = mpmath.matrix([[x / mpmath.sqrt(sum(y * y for y in r)) for x in r] for r in rows])
        s = sorted(mpmath.svd_r(M, compute_uv=False))
        assert lo[0] <= s[0] / s[-1]


# -- drawn matrices ---------------------------------------------------------------------------------------

@st.composite
def near_singular(draw):
    """(order, k x k matrix): dyadic entries over wide exponents, both signs,
    often one row an (almost) exact combination of two others."""
    k = draw(st.integers(2, 6))
    mant = draw(st.lists(st.integers(-2**20, 2**20), min_size=k * k, max_size=k * k))
    expo = draw(st.lists(st.integers(-60, 60), min_size=k, max_size=k))  # one scale per row
    A = np.ldexp(np.array(mant, dtype=float).reshape(k, k), np.array(expo)[:, None])
    if k >= 3 and draw(st.booleans()):
        A[-1] = A[0] + A[1]  # a float sum: exact or one rounding away from it
        if draw(st.booleans()):
            A[-1, 0] = np.nextafter(A[-1, 0], np.inf)
    return draw(st.sampled_from(ALL_ORDERS)), A


@settings(deadline=None)
@given(near_singular())
def test_drawn_minors_certify_only_nonsingular_matrices_in_every_order(drawn):
    o, A = drawn
    k = len(A)
    with summation_order(o):
        R = get_backend("numpy").inv(A)
        decided = certainly_less(inverse_residual_bound(A), 1)
        bound = upper(inverse_residual_bound(A, R)) if R is not None and np.abs(R).max() <= 2.0**400 else None
        try:
            s = lower(sigma_min_lower_float(A))
        except InsufficientPrecision:
            s = None
    if decided is Decision.TRUE:
        assert exact_rank(A) == k
    if bound is not None:
        assert F(bound) >= exact_inf_residual(R, A)
    if s is not None:
        assert sigma_min_squared_at_least(A, F(s) ** 2)


# -- negative controls: the checks above catch weakened error terms ----------------------------------------

def test_a_residual_bound_without_its_rounding_term_certifies_a_singular_matrix(monkeypatch):
    """gamma_k |R||A| dropped from ||I - R A|| (the naive test plus the diagonal's
    rounding): a planted singular matrix comes out TRUE in some order, which
    the tests above would report."""
    from verifier.arith import float_certificates

    monkeypatch.setattr(float_certificates, "gamma", lambda k: Fraction(0))
    hits = []
    for A, R in PLANTED:
        for o in ("sequential", "reversed", "pairwise"):
            with summation_order(o):
                hits.append(certainly_less(inverse_residual_bound(np.array(A), np.array(R)), 1) is Decision.TRUE)
    assert any(hits)


def test_a_sigma_min_bound_without_the_gram_error_misses_a_singular_member(monkeypatch):
    """A ball that holds a rank-deficient matrix: no positive bound in any
    order; with ||X X^T - fl(mid mid^T)|| taken as 0 (the radius ignored) a
    positive bound comes out, a wrong certificate."""
    from verifier.arith import float_certificates

    A = np.array([[1.0, 0.0, 0.0], [1.0, 2.0**-20, 0.0]])
    rad = np.array([[0.0, 0.0, 0.0], [0.0, 2.0**-20, 0.0]])  # holds [[1, 0, 0], [1, 0, 0]]
    for o in ALL_ORDERS:
        with summation_order(o), pytest.raises(InsufficientPrecision):
            sigma_min_lower_float(FloatBall(A, rad))
    monkeypatch.setattr(float_certificates, "_gram_perturbation_bound", lambda b, mid, rad: Fraction(0))
    with summation_order("sequential"):
        assert lower(sigma_min_lower_float(FloatBall(A, rad))) > 0


def test_a_robustness_bound_without_the_gram_error_misses_a_dependent_member(monkeypatch):
    """rho_screen on a ball that holds a matrix with dependent rows (rho = 0):
    the bound is 0 in every order; with ||X X^T - G|| taken as 0 (the ball's
    radius ignored) it is positive, a wrong certificate."""
    from verifier.arith import robustness_screen

    A = np.array([[1.0, 0.0, 0.0], [1.0, 2.0**-20, 0.0]])
    rad = np.array([[0.0, 0.0, 0.0], [0.0, 2.0**-20, 0.0]])  # holds [[1, 0, 0], [1, 0, 0]]
    for o in ALL_ORDERS:
        with summation_order(o):
            assert rho_screen(A[None], rad[None])[1][0] == 0, o
    monkeypatch.setattr(robustness_screen, "_gram_eps", lambda b, Y, R: np.zeros(Y.shape[0]))
    with summation_order("sequential"):
        assert rho_screen(A[None], rad[None])[1][0] > 0
