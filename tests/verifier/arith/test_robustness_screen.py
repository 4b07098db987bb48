"""The robustness screen's rigorous float bound and what it lets through,
against 60-digit mpmath on the exact floats (never a BLAS-specific value):

* ``rho_screen``'s lower bound is below the true rho for tiny, huge, mixed
  and one-ulp-dependent matrices (hypothesis-driven);
* a TRUE robustness covers every screened matrix: each one's 60-digit rho
  is above the tolerance; a FALSE names a matrix at or below it;
* a tiny well-conditioned matrix beside a bad one never hides the bad one
  (the screen's old sqrt(sum x^2) underflowed at 1e-170 and made the tiny
  one "the worst").
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.compare import Decision
from verifier.arith.robustness import stack_robustness, subset_robustness
from verifier.arith.robustness_screen import float_ball_of_rationals, rho_screen

U = 2.0**-53


def rho_mp(A) -> mpmath.mpf:
    """rho = sigma_min / sigma_max of the unit-row matrix, 60 digits, from
    the exact entries (floats or rationals)."""
    with mpmath.workdps(60):
        rows = [[mpmath.mpf(x) if not isinstance(x, Fraction) else mpmath.mpf(x.numerator) / x.denominator
                 for x in r] for r in A]
        if any(all(x == 0 for x in r) for r in rows):
            return mpmath.mpf(0)
        M = mpmath.matrix([[x / mpmath.sqrt(sum(y * y for y in r)) for x in r] for r in rows])
        s = mpmath.svd_r(M, compute_uv=False)
        s = sorted(s[i] for i in range(min(M.rows, M.cols)))
        return s[0] / s[-1]


def one_ulp_dependent(rng, k=3, m=5):
    """k rows, the last the float sum of the others nudged by one ulp:
    exactly independent, relative sigma_min ~ 1e-17."""
    X = rng.standard_normal((k, m))
    X[-1] = X[:-1].sum(axis=0)
    X[-1, 0] = np.nextafter(X[-1, 0], np.inf)
    return X


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 2**32 - 1),
       st.sampled_from(["plain", "tiny", "huge", "mixed", "ulp"]))
def test_the_float_lower_bound_is_below_the_true_rho(k, extra, seed, kind):
    rng = np.random.default_rng(seed)
    m = k + extra
    A = rng.standard_normal((k, m)) * rng.choice([-1.0, 1.0], size=(k, 1))
    if kind == "tiny":
        A *= 1e-170
    elif kind == "huge":
        A *= 1e300
    elif kind == "mixed":  # rows of wildly different scales, entries spanning 2^-1074 .. 2^1020
        A *= 10.0 ** rng.integers(-300, 300, size=(k, 1))
        A[0, 0] *= 1e-300
    elif kind == "ulp" and k >= 2:
        A = one_ulp_dependent(rng, k, m)
    est, lo = rho_screen(A[None])
    true = rho_mp(A)
    assert 0 <= lo[0] <= true
    if kind in ("plain", "tiny", "huge"):  # well conditioned: the estimate is accurate, no underflow to 0
        assert abs(est[0] - float(true)) <= 1e-9 * max(float(true), 1e-3) + 1e-12


def test_scaling_keeps_tiny_and_huge_rows():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 5))
    est0 = rho_screen(A[None])[0][0]
    for s in (1e-170, 1e-300, 1e300):  # exact power-of-two-free scalings of normal floats: rho moves by ~u
        est, lo = rho_screen((A * s)[None])
        assert 0.5 * est0 < lo[0] <= rho_mp(A * s) and abs(est[0] - est0) < 1e-12
    B = A * 2.0**-1060  # subnormal: the entries themselves were rounded, rho with them
    est, lo = rho_screen(B[None])
    assert 0 < lo[0] <= rho_mp(B) and abs(est[0] - float(rho_mp(B))) < 1e-9


def test_degenerate_inputs_prove_nothing():
    A = np.zeros((2, 3))
    A[0, 0] = 1.0  # a zero row
    est, lo = rho_screen(np.stack([A, np.ones((2, 3))]))
    assert list(lo) == [0.0, 0.0] and est[0] == 0.0
    assert rho_screen(np.ones((1, 3, 2)))[1][0] == 0.0  # k > m: rho = 0


def test_ball_of_rationals_encloses_them():
    from flint import fmpq

    vals = [fmpq(1, 3), fmpq(-2**1100 - 1, 3 * 2**1100), fmpq(1, 3 * 2**1080), fmpq(0), fmpq(7, 2)]
    mid, rad = float_ball_of_rationals(np.array([vals], dtype=object))
    for x, mi, r in zip(vals, mid[0], rad[0]):
        assert abs(Fraction(int(x.p), int(x.q)) - Fraction(mi)) <= Fraction(r)
    big = float_ball_of_rationals(np.array([[fmpq(2**1100)]], dtype=object))[0]
    assert np.isinf(big[0, 0])


def test_a_tiny_context_beside_a_bad_one_is_not_the_worst():
    rng = np.random.default_rng(0)
    bad = one_ulp_dependent(rng)
    tiny = rng.standard_normal((3, 5)) * 1e-170
    C = np.concatenate([tiny[None], bad[None], rng.standard_normal((3, 3, 5))])
    tol = 5 * 2 * U  # max(k, m) eps for 3 x 5
    assert rho_mp(bad) < tol  # the bad context fails at the data's precision
    rob = stack_robustness(C, tolerance=tol, what="context")
    assert rob.decision is Decision.FALSE and rob.index == (1,) and rob.upper <= tol
    assert stack_robustness(np.delete(C, 1, axis=0), tolerance=tol).decision is Decision.TRUE


def test_a_tiny_query_beside_dependent_ones_is_not_the_worst():
    rng = np.random.default_rng(1)
    Q = rng.standard_normal((6, 5))
    Q[0] *= 1e-170
    Q[[1, 2, 3]] = one_ulp_dependent(rng)
    tol = 5 * 2 * U
    rob = subset_robustness(Q, 3, tolerance=tol, what="queries")
    assert rob.decision is Decision.FALSE and set(rob.index) == {1, 2, 3}
    assert rho_mp(Q[list(rob.index)]) <= tol
    assert rob.screened == rob.population == 20


def test_candidates_past_the_certify_limit_leave_the_verdict_open():
    """Two contexts with rho ~ 1e-10: below the float bound's reach, above a
    1e-12 tolerance.  Certifying one in Arb is not enough for TRUE."""
    rng = np.random.default_rng(2)
    mats = []
    for _ in range(2):
        x1, x2, w = rng.standard_normal((3, 5))
        mats.append(np.stack([x1, x2, x1 + x2 + 1e-10 * w]))
    stack = np.stack(mats + [rng.standard_normal((3, 5))])
    assert all(1e-12 < rho_mp(A) < 1e-8 for A in mats)
    one = stack_robustness(stack, tolerance=1e-12, certify_limit=1)
    assert one.decision is Decision.UNDECIDED and one.uncertified == 1 and one.lower == 0.0
    full = stack_robustness(stack, tolerance=1e-12)
    assert full.decision is Decision.TRUE and full.certified == 2 and full.ruled_out == 1
    assert full.lower <= min(float(rho_mp(A)) for A in stack)


@pytest.mark.parametrize("seed", range(6))
def test_pairs_straddling_the_tolerance_within_a_few_u(seed):
    """x3 = x1 + x2 + t w for t near the tolerance: the floats' 60-digit rho
    lands within a few u of it on either side; a tiny well-conditioned
    context sits beside them.  TRUE only when every one is above, FALSE
    only naming one at or below."""
    rng = np.random.default_rng(100 + seed)
    tol = 5 * 2 * U
    x1, x2, w = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(5)
    base = np.stack([x1, x2, x1 + x2])
    r1 = float(rho_mp(np.stack([x1, x2, x1 + x2 + tol * w])))  # rho per unit t, about
    mats = []
    for f in np.linspace(0.9, 1.1, 21):
        A = base.copy()
        A[2] = x1 + x2 + (tol * f * tol / r1) * w
        mats.append(A)
    rhos = [rho_mp(A) for A in mats]
    below = [A for A, r in zip(mats, rhos) if r <= tol]
    above = [A for A, r in zip(mats, rhos) if r > tol]
    tiny = rng.standard_normal((3, 5)) * 1e-170
    assert all(abs(r - tol) < 10 * tol for r in rhos)
    for pair in ([[below[-1], above[0]]] if below and above else []) + [[a] for a in above[:2]]:
        stack = np.stack([tiny] + list(pair))
        rob = stack_robustness(stack, tolerance=tol)
        if rob.decision is Decision.TRUE:
            assert all(rho_mp(A) > tol for A in stack)
        elif rob.decision is Decision.FALSE:
            assert rho_mp(stack[rob.index[0]]) <= tol
        if any(rho_mp(A) <= tol for A in stack):
            assert rob.decision is not Decision.TRUE  # a bad one is never passed


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 10**30, 2**1000, 2**1060]))
def test_the_bound_with_a_ball_is_below_the_rationals_rho(seed, den):
    """Rationals (fmpq) screened through their float ball: the bound is about
    the rationals, not their roundings (rows dependent up to ~1/den)."""
    from flint import fmpq

    rng = np.random.default_rng(seed)
    ints = rng.integers(-10**6, 10**6, size=(3, 4))
    rows = [[fmpq(int(x), den) for x in r] for r in ints]
    rows[2] = [a + b + (fmpq(1, 3 * den * 10**6) if j == 0 else 0) for j, (a, b) in enumerate(zip(rows[0], rows[1]))]
    V = np.array(rows, dtype=object)
    mid, rad = float_ball_of_rationals(V)
    _, lo = rho_screen(mid[None], rad[None])
    exact = [[Fraction(int(x.p), int(x.q)) for x in r] for r in rows]
    assert 0 <= lo[0] <= rho_mp(exact)


def test_a_true_robustness_over_a_sample_does_not_cover_the_population():
    V = np.random.default_rng(4).standard_normal((40, 8))
    rob = subset_robustness(V, 6, tolerance=8 * 2 * U, exhaustive_limit=10, samples=50)
    assert rob.decision is Decision.TRUE and not rob.covers_population
    full = subset_robustness(V[:9], 6, tolerance=8 * 2 * U)
    assert full.covers_population
