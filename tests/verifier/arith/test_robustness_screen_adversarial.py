"""scaled_unit_rows (verifier/arith/robustness_screen.py) against exact
rationals (issue 17, item 2): the radius R must cover, entrywise,

    |S (A + D) - Y| <= |S A - Y| + S rad      for every |D| <= rad,

with S = 2^-e s the exact positive row scaling the screen applied (e from
frexp of the row maximum, s = fl(1 / fl(sqrt(fl(b^2)))) for a row of one
nonzero entry b: every step correctly rounded, the same on every IEEE
machine, and np.sum of one nonzero term is exact in every order).  Inputs:

* rows of one entry b in [1/2, 1) (and zeros): Y = fl(b s) rounds by up to
  u |Y| (Y near 1), the division's relative term; a zero entry of Y is exact
  and must keep a nonnegative radius;
* row maxima 2^-20 (e = -19) with input radii 2^-40, and s = 2 (b = 1/2):
  the scaled input radius 2^19 s rad dominates R.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.robustness_screen import rho_screen, scaled_unit_rows

U = Fraction(1, 2**53)


def _single_entry_rows(bs, scale=1.0, width=3):
    A = np.zeros((1, len(bs), width))
    for i, b in enumerate(bs):
        A[0, i, i % width] = b * scale
    return A


def _exact_S(a_row):
    """2^-e s for a row of one nonzero entry (as the screen computes it)."""
    amax = float(np.max(np.abs(a_row)))
    e = int(np.frexp(amax)[1])
    b = float(np.ldexp(amax, -e))
    s = 1.0 / float(np.sqrt(b * b))
    return Fraction(2) ** -e * Fraction(s)


def _check(A, rad=None):
    Y, R, dead = scaled_unit_rows(A, rad)
    assert not dead.any()
    worst = Fraction(0)
    for i in range(A.shape[1]):
        S = _exact_S(A[0, i])
        for j in range(A.shape[2]):
            need = abs(S * Fraction(float(A[0, i, j])) - Fraction(float(Y[0, i, j])))
            if rad is not None:
                need += S * Fraction(float(rad[0, i, j]))
            assert Fraction(float(R[0, i, j])) >= need, (i, j, float(need), float(R[0, i, j]))
            if Y[0, i, j] != 0:
                worst = max(worst, need / abs(Fraction(float(Y[0, i, j]))))
    return worst


def test_the_radius_covers_the_division_rounding_of_each_row():
    """Row entries b = 1/2 + j 2^-20: fl(b s) rounds Y = 1 by up to about
    u/2 |Y| (b s is within 1.5u of 1); some round by more than 0.51 u |Y|, so
    a relative term of u/2 would not do; the zero entries of each row are
    exact and need R >= 0."""
    bs = [0.5 + j * 2.0**-20 for j in range(1, 20000)]
    worst = _check(_single_entry_rows(bs, width=2))
    assert worst > Fraction(51, 100) * U


def test_the_radius_covers_scaled_input_radii():
    """Row maxima 2^-20 (the row scaling multiplies by 2^19 s) and s = 2
    (b = 1/2 after the power-of-two scaling): R >= |S A - Y| + S rad, with
    S rad = 2^20 rad dominating."""
    A = _single_entry_rows([0.5, 0.75, 0.5], scale=2.0**-19)
    rad = np.full(A.shape, 2.0**-40)
    _check(A, rad)
    A = _single_entry_rows([0.5, 0.625], scale=1.0)
    _check(A, np.full(A.shape, 2.0**-30))


def test_a_non_finite_entry_with_a_finite_radius_proves_nothing():
    """An infinite (or NaN) entry kills its row even when the radius is finite."""
    for bad in (np.inf, -np.inf, np.nan):
        A = np.array([[[1.0, 0.0, 0.0], [bad, 1.0, 0.0]]])
        assert scaled_unit_rows(A, np.zeros(A.shape))[2][0]
        est, lo = rho_screen(A, np.zeros(A.shape))
        assert lo[0] == 0.0 and est[0] == 0.0


# -- _cholesky_defect: the diagonal shift's rounding, k = 1 ------------------------------------------------------------
# The cases of test_float_certificates_adversarial.py::test_cholesky_defect_covers_the_rounding_of_the_shift (the same
# bound, per matrix of a stack here): G = [g], c tiny, fl(g - c) rounds by up to u g, L = the float Cholesky factor and
# the exact defect |g - c - L^2| is within 1.3x of the bound, the shift term about half of it.

DEFECT_CASES = [(1.0, -(1 - 2.0**-10) * 2.0**-53), (1.0, -0.75 * 2.0**-53), (1.0, 0.9 * 2.0**-54),
                (1.0464192167346802, 1.0788003047149783e-16), (1.2083788913211577, -1.1030625072422738e-16),
                (1.0473445381142439, -1.1049843434139832e-16)]


def test_cholesky_defect_covers_the_rounding_of_the_shift():
    from verifier.arith.backend import get_backend
    from verifier.arith.robustness_screen import _cholesky_defect

    G = np.array([[[g]] for g, _ in DEFECT_CASES])
    c = np.array([s for _, s in DEFECT_CASES])
    out = _cholesky_defect(get_backend("numpy"), G, c)
    Gs = G.copy()
    Gs[:, 0, 0] -= c
    L = np.linalg.cholesky(Gs)  # the same call on the same input as the screen's (the same factor on every machine)
    for j, (g, s) in enumerate(DEFECT_CASES):
        E = Fraction(g) - Fraction(s) - Fraction(float(L[j, 0, 0])) ** 2
        assert Fraction(float(out[j])) >= abs(E), (g, s, float(out[j]), float(E))
