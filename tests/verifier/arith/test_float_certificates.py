"""The rigorous float path (verifier/arith/float_bounds.py, float_certificates.py,
float_exp.py, float_accurate.py): every bound is checked against exact
rationals or Arb, on adversarial inputs where a loosened bound would fail.

The planted-singular suite holds matrices that are EXACTLY singular (dyadic
entries, a column an exact combination of the others) on which the naive
float test ``||I - fl(R A)||_inf < 1`` PASSES: only the error terms keep the
certificate from saying TRUE.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb

from verifier.arith.backend import Backend, get_backend
from verifier.arith.compare import Decision, certainly_less, lower, upper, workprec
from verifier.arith.float_accurate import accurate_matmul
from verifier.arith.float_bounds import U, ball_matmul, gamma, nonneg_matmul_up, rowsum_up
from verifier.arith.float_certificates import (
    FloatBall,
    float_ball_of,
    inverse_residual_bound,
    residual_upper_float,
    sigma_min_lower_float,
)
from verifier.arith.float_exp import exp_bounds
from verifier.errors import InsufficientPrecision

BACKENDS = ["numpy", "torch-cpu"]


def exact_product(A, B):
    return [[sum(Fraction(float(A[i, l])) * Fraction(float(B[l, j])) for l in range(A.shape[1]))
             for j in range(B.shape[1])] for i in range(A.shape[0])]


class SequentialBackend(Backend):
    """numpy, but products summed left to right in Python: the worst order for
    the adversarial vectors below (every addition rounds the same way)."""

    def matmul(self, a, b):
        a, b = np.atleast_2d(a), np.asarray(b)
        vec = b.ndim == 1
        b2 = b[:, None] if vec else b
        out = np.zeros((a.shape[0], b2.shape[1]))
        for i in range(a.shape[0]):
            for j in range(b2.shape[1]):
                s = 0.0
                for l in range(a.shape[1]):
                    s = s + a[i, l] * b2[l, j]
                out[i, j] = s
        return out[:, 0] if vec else out


SEQ = SequentialBackend("numpy")


# -- a priori product bounds -------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 17, 200])
def test_sum_bound_holds_in_the_worst_summation_order(k):
    """x = [1, u, ..., u]: summed left to right every u is lost (ties to even),
    an error of (k-1) u = gamma_{k-1} |x|.|1|.  A bound of u |x||y| (gamma_1)
    instead of gamma_k would fail here."""
    x = np.array([[1.0] + [2.0**-53] * (k - 1)])
    exact = 1 + Fraction(k - 1, 2**53)
    assert float(SEQ.matmul(x, np.ones(k))[0]) == 1.0  # the order really loses everything
    assert Fraction(float(rowsum_up(SEQ, x)[0])) >= exact
    up = nonneg_matmul_up(SEQ, x, np.ones((k, 1)))
    assert Fraction(float(up[0, 0])) >= exact
    mid, rad = ball_matmul(SEQ, x, None, np.ones((k, 1)), None)
    assert abs(Fraction(float(mid[0, 0])) - exact) <= Fraction(float(rad[0, 0]))
    # and the bound is not vacuous: within a few gamma_k of the truth
    assert Fraction(float(rad[0, 0])) <= 4 * gamma(k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ball_product_encloses_exact_product_under_cancellation(backend):
    b = get_backend(backend)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 50))
    Q, _ = np.linalg.qr(A.T)
    w = rng.standard_normal(50)
    w -= Q @ (Q.T @ w)
    B = np.stack([1e9 * w, rng.standard_normal(50), 1e-12 * rng.standard_normal(50)], 1)
    Arad = np.full_like(A, 1e-13)
    ex = exact_product(A, B)
    for arad in (None, Arad):
        mid, rad = ball_matmul(b, b.asarray(A), None if arad is None else b.asarray(arad), b.asarray(B), None)
        mid, rad = b.to_numpy(mid), b.to_numpy(rad)
        for i in range(6):
            for j in range(3):
                extra = 0 if arad is None else sum(Fraction(1e-13) * abs(Fraction(B[l, j])) for l in range(50))
                # the ball must contain every product with A in its ball: the worst one is ex +/- extra
                assert abs(Fraction(mid[i, j]) - ex[i][j]) + extra <= Fraction(rad[i, j])
    # the accurate product is tight where the plain bound is not
    mid, rad = accurate_matmul(b, b.asarray(A), b.asarray(B))
    mid, rad = b.to_numpy(mid), b.to_numpy(rad)
    for i in range(6):
        for j in range(3):
            assert abs(Fraction(mid[i, j]) - ex[i][j]) <= Fraction(rad[i, j])
    assert rad[:, 0].max() < 1e-12  # vs gamma_50 |A||B| ~ 1e-5 for the plain bound


# -- exp ------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_exp_enclosure_contains_arb_exp(backend):
    b = get_backend(backend)
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-745, 709, 400), rng.uniform(-3, 3, 400), rng.standard_normal(50) * 1e-9,
                        [0.0, -0.0, 5e-324, -5e-324, 709.0, -745.0, -745.5, -708.4, -708.39, -1e300,
                         np.log(2), -1022 * np.log(2), -1074 * np.log(2)]])
    lo, hi = exp_bounds(b, b.asarray(x))
    lo, hi = b.to_numpy(lo), b.to_numpy(hi)
    with workprec(200):
        for xi, l, h in zip(x, lo, hi):
            e = arb(float(xi)).exp()
            assert arb(float(l)) <= e and e <= arb(float(h)), xi
            if l > 1e-290:
                assert (h - l) / l < 200 * 2.0**-53  # tight: a width of ~1e-14 relative
    with pytest.raises(InsufficientPrecision):
        exp_bounds(b, b.asarray(np.array([710.0])))
    with pytest.raises(InsufficientPrecision):
        exp_bounds(b, b.asarray(np.array([np.nan])))


# -- nonsingular minors ---------------------------------------------------------------------

def planted_singular(count: int = 6, seed: int = 0):
    """Exactly singular dyadic matrices that the NAIVE float test accepts."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        k = int(rng.integers(2, 5))
        B = np.ldexp(rng.integers(-2**20, 2**20, (k, k - 1)).astype(float), rng.integers(-30, 30, (k, k - 1)))
        c = np.ldexp(rng.integers(-3, 4, k - 1).astype(float), rng.integers(-30, 30, k - 1))
        last = B @ c
        if any(Fraction(last[i]) != sum(Fraction(B[i, j]) * Fraction(c[j]) for j in range(k - 1)) for i in range(k)):
            continue  # the combination must be exact
        A = np.hstack([B, last[:, None]])
        with np.errstate(all="ignore"):
            try:
                R = np.linalg.inv(A)
            except np.linalg.LinAlgError:
                continue
        if np.all(np.isfinite(R)) and np.abs(np.eye(k) - R @ A).sum(1).max() < 1:
            out.append((A, R))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_planted_singular_matrices_are_never_certified(backend):
    cases = planted_singular()
    assert len(cases) == 6  # the naive test said "nonsingular" on every one of them
    for A, R in cases:
        assert certainly_less(inverse_residual_bound(A, backend=backend), 1) is Decision.UNDECIDED
        assert certainly_less(inverse_residual_bound(A, R, backend=backend), 1) is Decision.UNDECIDED


@pytest.mark.parametrize("backend", BACKENDS)
def test_ball_containing_a_singular_matrix_is_never_certified(backend):
    delta = 2.0**-20
    mid = np.array([[1.0, 1.0], [1.0, 1.0 + delta]])
    wide = np.array([[0.0, 0.0], [0.0, delta]])  # contains [[1, 1], [1, 1]]
    nonsingular = lambda A: certainly_less(inverse_residual_bound(A, backend=backend), 1)  # noqa: E731
    assert nonsingular(FloatBall(mid, wide)) is Decision.UNDECIDED
    assert nonsingular(FloatBall(mid, wide / 2**12)) is Decision.TRUE
    assert nonsingular(mid) is Decision.TRUE


@pytest.mark.parametrize("backend", BACKENDS)
def test_well_conditioned_random_minors_are_certified_on_every_backend(backend):
    A = np.random.default_rng(5).standard_normal((120, 120))
    r = upper(inverse_residual_bound(A, backend=backend))
    assert r < 1e-8
    R = np.linalg.inv(A)
    naive = np.abs(np.eye(120) - R @ A).sum(1).max()
    assert naive <= r  # the bound is above what floats see


def test_float_ball_of_arb_encloses_the_arb_ball():
    from flint import arb_mat

    M = arb_mat([[arb(1) / 3, arb(2, 1e-10)], [arb(-7) / 11, arb(0)]])
    fb = float_ball_of(M)
    with workprec(200):
        for i in range(2):
            for j in range(2):
                lo = arb(float(fb.mid[i, j])) - arb(float(fb.rad[i, j]))
                hi = arb(float(fb.mid[i, j])) + arb(float(fb.rad[i, j]))
                assert lo <= M[i, j].lower() and M[i, j].upper() <= hi


# -- smallest singular value ------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_sigma_min_lower_bound_is_below_the_exact_value(backend):
    sig = np.array([3.0, 1.0, 0.5, 2.0**-10])
    A = np.hstack([np.diag(sig), np.zeros((4, 3))])  # exact singular values
    lb = lower(sigma_min_lower_float(A, backend=backend))
    assert 0 < lb <= 2.0**-10 and lb > 0.9 * 2.0**-10
    # a ball: [mid - rad, mid + rad] holds mid - rad e1 e1^T, whose sigma_min is smaller
    rad = np.zeros_like(A)
    rad[3, 3] = 2.0**-12
    lbb = lower(sigma_min_lower_float(FloatBall(A, rad), backend=backend))
    assert lbb <= 2.0**-10 - 2.0**-12
    rng = np.random.default_rng(6)
    G = rng.standard_normal((40, 90))
    s = np.linalg.svd(G, compute_uv=False)[-1]
    lb = lower(sigma_min_lower_float(G, backend=backend))
    assert lb <= s * (1 + 1e-12) and lb > 0.9 * s


def test_sigma_min_of_a_rank_deficient_matrix_is_refused():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    with pytest.raises(InsufficientPrecision):
        sigma_min_lower_float(A)
    with pytest.raises(InsufficientPrecision):  # alpha above the truth (0.25): never "proved"
        sigma_min_lower_float(np.diag([1.0, 0.5]), alpha=0.3, tries=1)
    assert lower(sigma_min_lower_float(np.diag([1.0, 0.5]), alpha=0.3)) <= 0.5  # halved to 0.15: proved


# -- residuals -----------------------------------------------------------------------------------

def test_residual_bound_encloses_the_exact_residual():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((5, 8))
    M = rng.standard_normal((8, 2))
    B = A @ M  # rounded: the exact residual is tiny but not 0
    rad = np.full_like(A, 1e-14)
    up = residual_upper_float(FloatBall(A, rad), M, B)
    ex = exact_product(A, M)
    for i in range(5):
        for j in range(2):
            worst = abs(ex[i][j] - Fraction(B[i, j])) + sum(Fraction(1e-14) * abs(Fraction(M[l, j])) for l in range(8))
            assert worst <= Fraction(float(up[i, j]))
    assert up.max() < 1e-12


def test_unit_roundoff_is_binary64():
    assert U == Fraction(1, 2**53) and float(1 + U) == 1.0 and float(1 + 2 * U) > 1.0
