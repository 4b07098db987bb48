"""rho_screen's last steps (verifier/arith/robustness_screen.py) made TIGHT by
patching a float step the certificate does not trust (issue 17, item 2).

The honest screen sits about 0.8% below rho (its shift c = (63/64) s_k^2), so
no input shows a wrong final step.  Each test below replaces one step whose
result the derivation never trusts, keeping the bound rigorous, so that the
bound lands close to rho; then it asserts the one-sided property

    lower <= rho(A)          (rho in mpmath at 80 digits, every summation order)

* the Cholesky factor (``np.linalg.cholesky`` as the module sees it) is any
  float matrix L: the defect bound is a posteriori (``L L^T`` is positive
  semidefinite whatever L is).  With L = 0 and the shift c = (3/2) s_k^2
  (``_SHIFT`` patched: c is a free parameter) the defect is ||G - cI||, its
  residual term h carries the whole bound, and lam = c - delta - eps is within
  about eps of lambda_min(G) for near-orthogonal rows;
* the row scaling (``scaled_unit_rows`` as the module sees it) is any positive
  scaling: rho does not change when a row is multiplied by a positive number,
  and every later step is derived for any Y and R (min G_ii and max G_ii, not 1).
  Doubling or halving Y and R (exact: powers of two) moves the squared row
  norms n2min, n2max to about 4 or 1/4, which a formula that uses them wrongly
  turns into a bound of about 4 rho.

* eps (``_gram_eps`` as the module sees it) is only used as a bound of
  ||X X^T - G||_2: the formula must hold for every X within it.  G = I and
  X X^T = (1 - E) I + 2E w w^T, at distance E exactly, test the row-norm
  factor (min G_ii - eps) / (max G_ii + eps) at full size.

The final rounding factors (1 +/- u of lam, n2min, q and r) are not tested
here: a change of one u there is paid by the surplus of the add_up steps of
smax2 and n2max (fact G of MUTANTS.md; the grid constants are asserted by
:func:`test_final_step_grid_constants`, the derivations are in
tests/soundness/mutants_equivalent.json); q's factor 1 + 2u instead of 1 - 4u
(6u) also needs sub's and rowsum_up's surpluses
(:func:`test_q_factor_one_plus_2u_is_paid_by_four_surpluses`).
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import verifier.arith.robustness_screen as rs
from verifier.arith.float_bounds import SLACK, U, _up_constants, fl_down

u = 2.0**-53


def _exact_rho(A) -> mpmath.mpf:
    """sigma_min / sigma_max of A with unit rows, at 80 digits (A: k x m floats, k <= m)."""
    with mpmath.workdps(80):
        rows = [[mpmath.mpf(float(x)) for x in row] for row in np.asarray(A)]
        rows = [[x / mpmath.sqrt(mpmath.fsum(y * y for y in row)) for x in row] for row in rows]
        s = mpmath.svd_r(mpmath.matrix(rows), compute_uv=False)
        s = sorted(s[i] for i in range(len(s)))
        return s[0] / s[-1]


def _lower_bounds(matrices):
    """rho_screen's lower bound of each matrix (one stack per shape), asserted <= rho."""
    out = []
    for A in matrices:
        with np.errstate(all="ignore"):
            lo = float(rs.rho_screen(A[None])[1][0])
        rho = _exact_rho(A)
        assert mpmath.mpf(lo) <= rho, (lo, float(rho))
        out.append((lo, float(rho)))
    return out


# near-orthogonal rows (rho from 0.88 to 1): the bound with L = 0 and c = 1.5 s_k^2 is within a few eps of rho
NEAR_ORTHOGONAL = [np.array(A) for A in [
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    [[1.0, 0.0, 0.0], [0.125, 1.0, 0.0]],
    [[0.75, 0.0, 0.25], [0.0, -1.0, 0.0625]],
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0]],
]]


def _zero_factor(monkeypatch):
    """The Cholesky factor as the module sees it: 0 (a valid, if bad, float factor)."""
    monkeypatch.setattr(np.linalg, "cholesky", lambda a: np.zeros_like(np.asarray(a, dtype=np.float64)))


def test_the_residual_carries_the_defect_bound(order, monkeypatch):
    """L = 0, c = (3/2) s_k^2 > lambda_min(G): the Cholesky defect is ||G - cI||,
    which the residual term h (row sums of |G - cI|) must cover in full; for 2 x 2
    Grams with equal diagonals the row sum is that norm, so lam is lambda_min(G) -
    eps and the bound is within a few eps of rho.  Half of h (or any term of the
    defect lost) gives lam above lambda_min and a bound above rho."""
    monkeypatch.setattr(rs, "_SHIFT", 1.5)
    _zero_factor(monkeypatch)
    bounds = _lower_bounds(NEAR_ORTHOGONAL)  # lower <= rho; about 0.99 rho for the 2 x 2 (the row sum is the norm)
    assert all(lo > 0 for lo, _ in bounds)  # the bound proves something


def _rescaled(factor):
    orig = rs.scaled_unit_rows

    def scaled_rows(stack, rad=None):
        Y, R, dead = orig(stack, rad)
        return Y * factor, R * factor, dead  # a power of two: exact (no entry is near the float range's ends)

    return scaled_rows


WELL_CONDITIONED = [np.array(A) for A in [
    [[1.0, 0.5, -0.25], [0.125, 1.0, 0.75]],
    [[3.0, 0.0, 1.0], [1.0, 2.0, 0.0]],
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    [[0.5, 0.25, 0.0, 1.0], [-1.0, 0.5, 0.5, 0.0], [0.0, 0.125, 1.0, 0.25]],
]]


@pytest.mark.parametrize("factor", [2.0, 0.5, 4.0, 0.25])
def test_rows_of_another_length(order, monkeypatch, factor):
    """The rows scaled to length 2^j (exact) instead of 1: the same balls up to a
    positive row scaling, the same rho.  n2min and n2max are about 4^j: a bound
    that multiplies by n2max (or divides by n2min) where the formula divides (or
    multiplies) is off by 16^j, above rho for j = 1 (n2max) or j = -1 (n2min)."""
    monkeypatch.setattr(rs, "scaled_unit_rows", _rescaled(factor))
    bounds = _lower_bounds(WELL_CONDITIONED)  # lower <= rho (about 0.99 rho)
    assert all(lo > 0 for lo, _ in bounds)  # the bound proves something


def test_final_step_grid_constants():
    """The float-grid facts the derivations of the final steps' (1 +/- u)
    survivors use (mutants_equivalent.json, robustness_screen rho_screen 114,
    116, 163, 165, 227, 229): down_scale's factor fl_down(F/(1+u)) is 1 - 2u for
    the code's F = 1/(1+u) and exactly 1 for the mutants' F = 1 + u and 1/(1-u);
    smax2 and n2max are add_up results, factor 1 + 4u (so >= (x + y)(1 - u)^2 (1 + 4u));
    and that surplus squared pays one factor (1 + u) (lam or n2min rounded
    once more) and (1 + u)^2 (r = fl(sqrt q) unscaled)."""
    assert fl_down(Fraction(1) / (1 + U) ** 2) == 1 - 2 * u  # the code's lam, n2min, r
    assert fl_down(Fraction(1) / (1 + U) ** 4) == 1 - 4 * u  # the code's q
    assert fl_down((1 + U) / (1 + U)) == 1.0  # mutants 114, 163, 227: F = 1 * (1 + u)
    assert fl_down(1 / ((1 - U) * (1 + U))) == 1.0  # mutants 116, 165, 229: F = 1 / (1 - u)
    assert _up_constants(1 / (1 - U), SLACK)[0] == 1 + 4 * u  # add_up (smax2, n2max)
    surplus = ((1 - U) ** 2 * (1 + 4 * U)) ** 2  # G: add_up(x, y) >= (x + y)(1 - u)^2 (1 + 4u), normal range
    assert surplus >= 1 + U  # lam (or n2min) <= (c - sub)(1 + u) once the factor is 1
    assert surplus >= (1 + U) ** 2  # r = fl(sqrt q) <= sqrt(q)(1 + u)


def test_q_factor_one_plus_2u_is_paid_by_four_surpluses():
    """The derivation of rho_screen mutants 213 and 216 (q's factor
    fl_down((1+u)^3/(1+u)) or fl_down((1-u)^-3/(1+u)) = 1 + 2u instead of
    1 - 4u; tests/soundness/mutants_equivalent.json), in exact rationals from
    the module's own float constants.  With w = 1 + u/(1+u) (one rounding to
    nearest up), kappa = w^2 (1 - 2u) (lam, n2min: a subtraction and
    down_scale), a = f_add/(1+u)^2 (add_up, f_add = 1 + 4u: sub, smax2,
    n2max), b = 1/(1-u)^2 <= f_k/(1+u)^k (rowsum_up of k terms, any order),
    t = eps/(RS + eps) in [0, 1]: r^2 <= rho^2 Phi(t) with

        Phi(t) = w^8 (1 + 2u)(1 - 2u)^2 kappa^2 / a^2 * (1 - (a - 1) t) / (1 + (b - 1)(1 - t)),

    a ratio of linear functions of t, so Phi <= 1 on [0, 1] when it holds at
    both ends (to first order the surpluses 2u t of sub, 2u (1 - t) of
    rowsum_up, 2u + 2u of smax2's and n2max's add_up pay the mutants' 6u)."""
    from verifier.arith.float_bounds import gamma

    w = (1 + 2 * U) / (1 + U)
    assert fl_down((1 + U) ** 3 / (1 + U)) == 1 + 2 * u  # mutant 213's q factor
    assert fl_down(1 / (1 - U) ** 3 / (1 + U)) == 1 + 2 * u  # mutant 216's
    f_d = Fraction(fl_down(Fraction(1) / (1 + U) ** 2))  # lam, n2min, r: 1 - 2u
    kappa = w * w * f_d
    a = Fraction(_up_constants(1 / (1 - U), SLACK)[0]) / (1 + U) ** 2
    b = 1 / (1 - U) ** 2
    for k in list(range(1, 65)) + [197, 1000, 4096]:  # rowsum_up's surplus (any k <= 2^40: (1+u)^k <= 1 + ku/(1-2ku))
        assert Fraction(_up_constants(1 / (1 - gamma(k)), SLACK)[0]) / (1 + U) ** k >= b
    pre = w**8 * (1 + 2 * U) * f_d**2 * kappa**2 / a**2
    for t in (Fraction(0), Fraction(1)):
        phi = pre * (1 - (a - 1) * t) / (1 + (b - 1) * (1 - t))
        assert phi <= 1 - 10 * U**2  # 1 - 15u^2 at t = 0, 1 - 11u^2 at t = 1


# -- n2min = min G_ii - eps: a Gram farther from G than the float rounding -------------------------------------------
# The final formula holds for every X with ||X X^T - G||_2 <= eps (eps as the module sees it: _gram_eps's value is only
# used as such a bound).  G = I (rows e_1, e_2, e_3, exact in every order) and M = (1 - E) I + 2E w w^T for a rational
# unit vector w: ||M - G||_2 = ||E (I - 2 w w^T)||_2 = E exactly, so eps = E is a valid bound for X = M^(1/2), and the
# bound must stay below rho(M).  Diagonal scaling makes M's rho worse than its condition says (van der Sluis: by up to
# a factor k), which the factor (min G_ii - eps) / (max G_ii + eps) pays for: with min G_ii + eps instead, the bound
# is (1 - E - delta)/(1 + E), for w = (1, 2, 2)/3 7% (E = 1/2) and 16% (E = 3/4) above rho(M)^2 in
# exact arithmetic, above it still after the 63/64 of the shift c (the third case checks the code only).

GRAM_CASES = [((1, 2, 2, 3), Fraction(1, 2)), ((1, 2, 2, 3), Fraction(3, 4)), ((6, 6, 7, 11), Fraction(3, 4))]


def _exact_rho_of_gram(M) -> mpmath.mpf:
    """rho of any X with X X^T = M (rational entries): sqrt(lambda_min(P) / lambda_max(P)), P = M with unit diagonal."""
    with mpmath.workdps(80):
        k = len(M)
        q = [[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in M]
        P = mpmath.matrix(k, k)
        for i in range(k):
            for j in range(k):
                P[i, j] = q[i][j] / mpmath.sqrt(q[i][i] * q[j][j])
        w = sorted(mpmath.eigsy(P, eigvals_only=True))
        return mpmath.sqrt(w[0] / w[-1])


@pytest.mark.parametrize("case", GRAM_CASES)
def test_the_row_norm_factor_pays_for_diagonal_scaling(order, monkeypatch, case):
    (a, b_, c_, n), E = case
    w = [Fraction(a, n), Fraction(b_, n), Fraction(c_, n)]
    M = [[(1 - E) * (i == j) + 2 * E * w[i] * w[j] for j in range(3)] for i in range(3)]
    monkeypatch.setattr(rs, "_gram_eps", lambda b, Y, R: np.full(Y.shape[0], float(E)))  # E: a float, exactly
    lo = float(rs.rho_screen(np.eye(3)[None])[1][0])
    rho = _exact_rho_of_gram(M)
    assert mpmath.mpf(lo) <= rho, (lo, float(rho))
    assert lo > 0  # the bound proves something (about (1 - E)/(1 + E) of rho)
