"""The error terms of verifier/arith/float_certificates.py held against exact
rationals on adversarial inputs (issue 17, item 2), in every summation order
of tests/summation_orders.py:

* the diagonal shift ``fl(G_ii - alpha)`` rounding by almost u (the
  ``shift_err`` term of the Cholesky defect), with T = 1 so no other term
  hides it;
* near-singular Gram matrices from long rows (m = 4096) with cancellation,
  and negative entries (the Gram perturbation bound and sigma_min);
* residual row bounds of ``I - R X`` against the exact matrix, with R a
  perturbed inverse (the rounding of ``fl(1 - P_ii)``);
* the float constants that the written justifications of the surviving
  mutants rely on (tests/soundness/MUTANTS.md, "float-grid surplus"): if
  one of them changes, the justification must be redone.

(The summation-order tests of the public certificates are in
test_float_certificates.py and test_float_certificates_orders.py.)
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from summation_orders import ordered_backends

from verifier.arith import float_certificates as fc
from verifier.arith.backend import get_backend
from verifier.arith.float_bounds import SLACK, UL, U, _up_constants, fl_up

NP = get_backend("numpy")
u = 2.0**-53


def backends():
    return [NP, *ordered_backends()]


def _ids(b):
    return getattr(b, "order", b.name)


def F(x) -> Fraction:
    return Fraction(float(x))


def exact_gram(X: np.ndarray):
    rows = [[F(v) for v in r] for r in X]
    return [[sum((a * c for a, c in zip(r, s)), Fraction(0)) for s in rows] for r in rows]


def row_norm2_max(E) -> Fraction:
    """max_i ||E_i.||_2^2 (a lower bound of ||E||_2^2)."""
    return max(sum(x * x for x in row) for row in E)


# -- the Cholesky defect: the diagonal shift ------------------------------------------------------------------------


@pytest.mark.parametrize("g,shift", [(1.0, -(1 - 2.0**-10) * u), (1.0, -0.75 * u), (1.0, 0.9 * u / 2),
                                     # found by a search over 20000 draws: the bound is within 1.3x of the
                                     # exact defect, shift_err about half of it
                                     (1.0464192167346802, 1.0788003047149783e-16),
                                     (1.2083788913211577, -1.1030625072422738e-16),
                                     (1.0473445381142439, -1.1049843434139832e-16)])
def test_cholesky_defect_covers_the_rounding_of_the_shift(g, shift):
    """T = 1, G = [g], alpha = shift: fl(g - alpha) rounds by up to u g, L =
    fl(sqrt(.)) and fl(L L) rounds too: the exact defect |g - alpha - L^2| is
    within 1.3x of the bound on the searched cases, and shift_err is about
    half of the bound (dropping or halving it fails)."""
    G = np.array([[g]])
    L, bound = fc._cholesky_defect(NP, G, shift)
    E = F(g) - F(shift) - F(L[0, 0]) ** 2
    assert bound >= abs(E), (shift, float(bound), float(E))


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_cholesky_defect_on_a_near_singular_gram(b):
    rng = np.random.default_rng(0)
    X = rng.integers(-2**20, 2**20, (3, 64)).astype(float)
    X[2] = X[0] + X[1] + 2.0**-10 * np.sign(rng.standard_normal(64))  # nearly dependent rows
    G0 = np.tril(b.matmul(X, X.T))
    G = G0 + G0.T
    NP.scale_diagonal(G, 0.5)
    lam = float(np.linalg.eigvalsh(G)[0])
    for alpha in (lam * 15 / 16, lam / 2):
        L, bound = fc._cholesky_defect(b, G, alpha)
        if L is None:
            continue
        Lq = [[F(v) for v in r] for r in L]
        E = [[F(G[i, j]) - (F(alpha) if i == j else 0) - sum((Lq[i][l] * Lq[j][l] for l in range(3)), Fraction(0))
              for j in range(3)] for i in range(3)]
        assert bound * bound >= row_norm2_max(E)


class _PerturbedCholesky(type(NP)):
    """numpy, but the Cholesky factor is off by a relative 2^-20: the defect
    bound is a posteriori and must hold for ANY L (here |G - alpha I - L L^T|
    is dominated by the realized residual h, not by rounding)."""

    def cholesky_lower(self, a):
        L = np.linalg.cholesky(a)
        return L * (1 + 2.0**-20)


@pytest.mark.parametrize("T", [1, 3])
def test_cholesky_defect_holds_for_a_bad_factor(T):
    b = _PerturbedCholesky("numpy")
    rng = np.random.default_rng(T)
    X = rng.integers(-9, 10, (T, T + 2)).astype(float)
    G = X @ X.T  # small integers: exact
    alpha = float(np.linalg.eigvalsh(G)[0]) / 2
    L, bound = fc._cholesky_defect(b, G, alpha)
    Lq = [[F(v) for v in r] for r in L]
    E = [[F(G[i, j]) - (F(alpha) if i == j else 0) - sum((Lq[i][l] * Lq[j][l] for l in range(T)), Fraction(0))
          for j in range(T)] for i in range(T)]
    assert bound * bound >= row_norm2_max(E)
    assert bound > 2.0**-21 * float(np.abs(G).max())  # the realized residual is what the bound is made of


# -- the Gram perturbation bound and sigma_min: long rows, cancellation --------------------------------------------


def _long_rows(m: int, seed: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2**26, 2**26, m).astype(float) + rng.random(m)
    c = rng.integers(-2**26, 2**26, m).astype(float) + rng.random(m)
    return np.stack([a, c, a + c * (1 + 2.0**-40)]) * scale


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_gram_perturbation_bound_on_long_rows(b):
    """m = 4096, rows nearly dependent, negative entries: ||X X^T - G||_2 <= bound
    with G from fl(mid mid^T) summed in the backend's order."""
    X = _long_rows(4096, 1)
    G0 = np.tril(b.matmul(X, X.T))
    G = G0 + G0.T
    NP.scale_diagonal(G, 0.5)
    bound = fc._gram_perturbation_bound(b, X, None)
    exact = exact_gram(X)
    E = [[exact[i][j] - F(G[i, j]) for j in range(3)] for i in range(3)]
    assert bound * bound >= row_norm2_max(E)
    assert bound < 4096 * 4 * u * float(np.abs(X).sum(1).max() ** 2)  # not needlessly loose


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_gram_perturbation_bound_with_radii_and_tiny_rows(b):
    """A ball (radii) and rows near 2^-300, whose products are near 2^-600:
    every term of the bound, relative and absolute."""
    rng = np.random.default_rng(2)
    X = rng.integers(-2**20, 2**20, (2, 32)).astype(float) * 2.0**-320
    R = np.abs(rng.integers(0, 2**10, (2, 32)).astype(float)) * 2.0**-350
    bound = fc._gram_perturbation_bound(b, X, R)
    G0 = np.tril(b.matmul(X, X.T))
    G = G0 + G0.T
    NP.scale_diagonal(G, 0.5)
    # the worst X + dX, dX = +/- R, for each entry: |(X+dX)(X+dX)^T - G| <= |X X^T - G| + |X| R^T + R |X|^T + R R^T
    ex = exact_gram(X)
    aX, aR = [[abs(F(v)) for v in r] for r in X], [[F(v) for v in r] for r in R]
    for i in range(2):
        row = sum(abs(ex[i][j] - F(G[i, j])) for j in range(2))
        row += sum(sum(aX[i][l] * aR[j][l] + aR[i][l] * aX[j][l] + aR[i][l] * aR[j][l] for l in range(32))
                   for j in range(2))
        assert bound >= row / 2  # ||.||_2 <= the row sum; the test's own row sum of the ball is an upper bound
    assert bound >= SLACK


def _lambda_min_at_least(G, s2: Fraction) -> bool:
    """s2 <= lambda_min(G) for a symmetric 2 x 2 or 3 x 3 exact matrix: G - s2 I
    is positive semidefinite (every leading principal minor >= 0 is not enough
    for semidefinite; we ask for positive definite leading minors or zero)."""
    n = len(G)
    M = [[G[i][j] - (s2 if i == j else 0) for j in range(n)] for i in range(n)]
    # LDL^T in exact rationals: positive semidefinite iff every pivot >= 0 (pivots 0 only with a zero row)
    for k in range(n):
        p = M[k][k]
        if p < 0:
            return False
        if p == 0:
            if any(M[k][j] != 0 for j in range(k + 1, n)):
                return False
            continue
        for i in range(k + 1, n):
            f = M[i][k] / p
            for j in range(k + 1, n):
                M[i][j] -= f * M[k][j]
    return True


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_sigma_min_on_near_singular_long_rows(b):
    """sigma_min(X)^2 >= s^2 for the certified s, X of 3 x 4096 with a
    near-dependent row (the Gram's smallest eigenvalue ~ 2^-80 of its largest),
    exactly (LDL^T of X X^T - s^2 I in rationals)."""
    X = _long_rows(4096, 3)
    try:
        s = fc.sigma_min_lower_float(X, backend=b)
    except Exception as exc:  # too ill-conditioned for the float route: allowed, never a wrong bound
        assert "InsufficientPrecision" in type(exc).__name__
        X = X[:2]
        s = fc.sigma_min_lower_float(X, backend=b)
    s = F(s.value.mid())
    assert _lambda_min_at_least(exact_gram(X), s * s)


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_sigma_min_with_an_explicit_alpha_at_the_edge(b):
    """alpha just below and just above lambda_min: below, a certified s with
    s^2 <= lambda_min exactly; above, never a bound above lambda_min."""
    X = np.array([[3.0, 1.0, -2.0, 0.5], [1.0, 3.0, 2.0, -0.5]])  # X X^T exact in floats
    G = exact_gram(X)
    # lambda_min of [[a, c], [c, a]] is a - |c|
    lam = G[0][0] - abs(G[0][1])
    for alpha in (float(lam) * (1 - 2.0**-40), float(lam) * (1 - 2.0**-52), float(lam), float(lam) * (1 + 2.0**-50)):
        try:
            s = fc.sigma_min_lower_float(X, alpha=alpha, tries=1, backend=b)
        except Exception:
            continue
        assert F(s.value.mid()) ** 2 <= lam


# -- residual row bounds of I - R X ------------------------------------------------------------------------------------


@pytest.mark.parametrize("b", backends(), ids=_ids)
@pytest.mark.parametrize("k", [1, 3, 16])
def test_residual_row_bounds_against_the_exact_residual(b, k):
    """R = an inverse perturbed so that every diagonal P_ii = fl(R X)_ii is
    near 1 + u (fl(1 - P_ii) rounds), negative entries, near-singular X."""
    rng = np.random.default_rng(k)
    X = rng.integers(-2**20, 2**20, (k, k)).astype(float)
    if k > 1:
        X[-1] = X[0] + 2.0**-30 * np.arange(1, k + 1)
    Rinv = np.linalg.inv(X)
    for R in (Rinv, Rinv * (1 + 3 * u), Rinv * (1 - 0.75 * u)):
        rows = fc._residual_row_bounds(b, X, None, R)
        Xq, Rq = [[F(v) for v in r] for r in X], [[F(v) for v in r] for r in R]
        for i in range(k):
            row = sum(abs((1 if i == j else 0) - sum((Rq[i][l] * Xq[l][j] for l in range(k)), Fraction(0)))
                      for j in range(k))
            assert F(rows[i]) >= row, (i, float(row), float(rows[i]))


def test_residual_row_bound_covers_the_diagonal_rounding_exactly():
    """k = 1, X = [x], R = [r] with r x = P exact and 1 - P not a float: the
    bound must cover |1 - P| > |fl(1 - P)|."""
    for x, r in ((1.0, -(2.0**-54) * 3), (3.0, (1 + 2.0**-52) / 3), (2.0**-300, -(2.0**240) * 3)):
        rows = fc._residual_row_bounds(NP, np.array([[x]]), None, np.array([[r]]))
        assert F(rows[0]) >= abs(1 - F(r) * F(x))


# -- the float constants behind the written justifications --------------------------------------------------------


def test_float_grid_surplus_constants():
    """up_scale rounds its factor up to the float grid: the factors are one grid
    step (2u near 1) above what the derivation needs.  MUTANTS.md's justifications
    of the (1 +/- u) survivors use exactly these values."""
    one = 1.0
    assert _up_constants(Fraction(1), SLACK)[0] == one + 4 * u  # needs 1/(1-u)^2 = 1 + 2u + 3u^2 + ...
    assert _up_constants(1 / (1 - U), SLACK)[0] == one + 4 * u  # add_up: needs 1/(1-u)^3 = 1 + 3u + ...
    assert _up_constants(1 - U, SLACK)[0] == one + 2 * u  # the mutants' 1 - u: 1/(1-u) = 1 + u + ...
    assert _up_constants(1 / (1 + U), SLACK)[0] == one + 2 * u  # the mutants' 1/(1+u)
    assert _up_constants(Fraction(1), SLACK)[1] == fl_up(SLACK / (1 - U) + UL) > 2.0**-500
    # the shift_err factor u/(1-u) and its mutants u(1-u), u/(1+u): one grid step (2u^2) above u
    assert _up_constants(U / (1 - U), UL)[0] == u * (1 + 4 * u)
    assert _up_constants(U * (1 - U), UL)[0] == u * (1 + 2 * u)
    assert _up_constants(U / (1 + U), UL)[0] == u * (1 + 2 * u)
