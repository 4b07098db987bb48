"""Exact values of float expressions, for holding certified float bounds
against the truth (tests of the float path under every summation order).

A float64 matrix is an exact dyadic matrix ``N 2^e`` (integer N, one exponent
for the whole array), so its products are exact integer products
(python-flint ``fmpz_mat``, fast even at k = 4096 and 1500-bit entries).

>>> import numpy as np
>>> P = exact_product(np.array([[1.0, 2.0**-60]]), np.array([[1.0], [1.0]]))
>>> P[0][0] == 1 + Fraction(1, 2**60)
True
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
from flint import fmpz_mat

__all__ = ["scaled_ints", "exact_product", "exact_inf_residual", "is_positive_definite", "exact_gram",
           "sigma_min_squared_at_least", "rho_truth", "F"]


def F(x) -> Fraction:
    """The exact value of a float (or an int, a Fraction)."""
    return Fraction(float(x)) if isinstance(x, (float, np.floating)) else Fraction(x)


def scaled_ints(A) -> tuple[fmpz_mat, int]:
    """(N, e) with ``A = N 2^e`` exactly (2-D float array, finite)."""
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    if not np.all(np.isfinite(A)):
        raise ValueError("non-finite entry")
    mant, ex = np.frexp(A)
    nz = A != 0
    e = int(np.min(np.where(nz, ex - 53, 10**6))) if nz.any() else 0
    ints = [[int(m * 2**53) * 2 ** (int(x) - 53 - e) if z else 0 for m, x, z in zip(mr, xr, zr)]
            for mr, xr, zr in zip(mant.tolist(), ex.tolist(), nz.tolist())]
    return fmpz_mat(ints) if A.size else fmpz_mat(A.shape[0], A.shape[1]), e


def _fractions(N: fmpz_mat, e: int) -> list[list[Fraction]]:
    s = Fraction(2) ** e
    return [[int(N[i, j]) * s for j in range(N.ncols())] for i in range(N.nrows())]


def exact_product(A, B) -> list[list[Fraction]]:
    """``A B`` exactly, as a list of rows of Fractions."""
    NA, ea = scaled_ints(A)
    NB, eb = scaled_ints(np.asarray(B, dtype=np.float64).reshape(np.shape(B)[0], -1))
    return _fractions(NA * NB, ea + eb)


def exact_gram(A) -> list[list[Fraction]]:
    """``A A^T`` exactly."""
    N, e = scaled_ints(A)
    return _fractions(N * N.transpose(), 2 * e)


def exact_inf_residual(R, X) -> Fraction:
    """``||I - R X||_inf`` exactly (R, X float arrays)."""
    P = exact_product(R, X)
    return max(sum(abs((i == j) - p) for j, p in enumerate(row)) for i, row in enumerate(P))


def is_positive_definite(G) -> bool:
    """Exact LDL^T of a symmetric rational matrix: every pivot positive."""
    G = [list(r) for r in G]
    n = len(G)
    for k in range(n):
        p = G[k][k]
        if p <= 0:
            return False
        for i in range(k + 1, n):
            f = G[i][k] / p
            for j in range(k + 1, n):
                G[i][j] -= f * G[k][j]
    return True


def sigma_min_squared_at_least(A, s2: Fraction) -> bool:
    """``sigma_min(A)^2 >= s2`` for a T x m float matrix (T <= m), exactly:
    ``A A^T - s2 I`` positive definite (a tie counts as a failure, which the
    tests never need)."""
    G = exact_gram(A)
    for i in range(len(G)):
        G[i][i] -= s2
    return is_positive_definite(G)


def rho_truth(A, dps: int = 60) -> mpmath.mpf:
    """rho(A) = sigma_min / sigma_max of A with unit rows, from the exact Gram
    matrix (rho^2 = lambda_min / lambda_max of N G N), ``dps`` digits; 0 for a
    zero row."""
    G = exact_gram(A)
    with mpmath.workdps(dps):
        if any(G[i][i] == 0 for i in range(len(G))):
            return mpmath.mpf(0)
        d = [1 / mpmath.sqrt(mpmath.mpf(G[i][i].numerator) / G[i][i].denominator) for i in range(len(G))]
        M = mpmath.matrix([[mpmath.mpf(g.numerator) / g.denominator * d[i] * d[j] for j, g in enumerate(r)]
                           for i, r in enumerate(G)])
        w = sorted(mpmath.eigsy(M, eigvals_only=True))
        return mpmath.sqrt(max(w[0], 0) / w[-1])
