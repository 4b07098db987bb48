"""The float64 screen of :mod:`.robustness`: for a stack of matrices, an
estimate of each one's robustness and a rigorous lower bound on it.

The robustness of a k x m matrix A with nonzero rows is
``rho(A) = sigma_min(N A) / sigma_max(N A)``, N = diag(1 / ||a_i||) (unit
rows).  It does not change when a row is multiplied by a positive number,
so the screen may rescale rows freely:

1. each row is multiplied by a power of two that brings its largest entry
   into [1/2, 1) (``B``; exact, unless an entry falls into the subnormal
   range, where it moves by at most 2^-1075 and the ball below covers it).
   No sum of squares of tiny (1e-170) or huge (1e300) entries under- or
   overflows any more;
2. each row of B is divided by its float norm (``Y``, rows of length 1
   within a few u); the rounding is a ball ``|Y_exact - Y| <= R``
   (``u/(1-u) |Y| + 2 UL`` plus the scaled input radius, when the matrices
   are roundings of exact rationals).

The **estimate** is the float64 SVD's ``s_k / s_1`` of Y: it orders the
matrices and proves nothing.  The **lower bound** is rigorous for every
matrix X in the ball, whatever order the BLAS sums in (the a priori bounds
of :mod:`.float_bounds`, Higham Lemma 3.1):

* ``G = fl(Y Y^T)`` (lower triangle, symmetrised) with
  ``||X X^T - G||_2 <= eps`` (row sums of ``gamma_m |Y||Y|^T + |Y| R^T +
  R |Y|^T + R R^T + 3 m UL``);
* a float Cholesky factor L of ``fl(G - c I)``, ``c = (63/64) s_k^2``,
  gives ``lambda_min(G) >= c - delta``, where ``delta`` bounds
  ``||fl(G - cI) - L L^T||_2`` by row sums of the computed residual plus
  ``gamma_k |L||L|^T`` (the product's own rounding) plus the shift's
  rounding; ``L L^T`` is positive semidefinite whatever L is, so a wrong
  factor only weakens the bound;
* ``lambda_max(X X^T) <= max_i sum_j |G_ij| + eps`` and
  ``G_ii - eps <= ||x_i||^2 <= G_ii + eps``;
* so, as ``sigma_min(N X)^2 >= lambda_min(X X^T) / max ||x_i||^2`` and
  ``sigma_max(N X)^2 <= lambda_max(X X^T) / min ||x_i||^2``::

      rho^2 >= (c - delta - eps)(min G_ii - eps) / ((max rowsum |G| + eps)(max G_ii + eps)),

  each float operation of which is rounded towards the safe side
  (:func:`~verifier.arith.float_bounds.up_scale`,
  :func:`~verifier.arith.float_bounds.down_scale`).

The Gram route loses the square of the condition: a bound above 0 needs
``sigma_min(Y)^2`` above ``eps + delta``, about ``(k m + k^2) u``; smaller
robustness (the near-tolerance matrices) is left to Arb, which the caller
runs on every matrix whose bound does not clear the tolerance.  The bound is
0 (proves nothing) where the screen cannot say more: a zero row, k > m, a
non-finite entry, a Cholesky breakdown.

>>> import numpy as np
>>> A = np.array([[1.0, 0.0], [1.0, 1.0]]) * 1e-170   # rho = tan(pi/8) = 0.4142...
>>> est, lo = rho_screen(A[None])
>>> bool(abs(est[0] - 0.41421356237309503) < 1e-12), bool(0.39 < lo[0] <= 0.41421356237309503)
(True, True)
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.backend import get_backend
from verifier.arith.float_bounds import (
    SLACK,
    UL,
    U,
    add_up,
    check_ieee,
    down_scale,
    gamma,
    nonneg_matmul_up,
    rowsum_up,
    up_scale,
)

__all__ = ["rho_screen", "scaled_unit_rows", "float_ball_of_rationals"]

_TINY = 2.0 ** -800  # below this a lower bound is replaced by 0 (no intermediate underflow)
_SUB = 2.0 ** -1074  # the smallest subnormal: a rounding in the subnormal range moves by at most half of it
_SHIFT = 63 / 64  # c = (63/64) s_k^2
_FOUR_U = 4 * 2.0**-53


def float_ball_of_rationals(V) -> tuple[np.ndarray, np.ndarray]:
    """(mid, rad) with ``|x - mid| <= rad`` for an object array of exact
    rationals (fmpq, Fraction, int): ``mid`` the correctly rounded float
    (Python's integer true division, error <= u |x| <= u/(1-u) |mid| in the
    normal range, <= 2^-1075 below it) and ``rad = fl(fl(4u |mid|) +
    2^-1074)``: even rounded down twice, 4u (1-u)^2 |mid| >= u/(1-u) |mid|,
    and rounding is monotone, so ``rad >= 2^-1074`` always.  An entry beyond
    the float range gets ``mid = inf`` (its matrices are left to Arb)."""
    V = np.asarray(V, dtype=object)
    mid = np.empty(V.shape, dtype=np.float64)
    flat = mid.reshape(-1)
    for i, x in enumerate(V.reshape(-1)):
        p, q = (int(x.p), int(x.q)) if hasattr(x, "p") else (Fraction(x).numerator, Fraction(x).denominator)
        try:
            flat[i] = p / q
        except OverflowError:
            flat[i] = np.inf
    with np.errstate(invalid="ignore", over="ignore"):  # no absolute slack of 2^-500: entries may be 1e-300
        rad = np.abs(mid) * _FOUR_U + _SUB  # >= u/(1-u) |mid| (normal) and >= 2^-1075 (subnormal), rounded
    return mid, rad


def scaled_unit_rows(stack, rad=None):
    """``(Y, R, dead)``: the rows of each matrix of the (N, k, m) ``stack``
    scaled to float unit length (steps 1-2 above), a radius ``R >= |S A -
    Y|`` entrywise for the exact positive row scaling S (None when no radius
    is needed: never, since the division rounds), and ``dead`` (N,) where
    the screen proves nothing (a zero or non-finite row)."""
    A = np.asarray(stack, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        amax = np.max(np.abs(A), axis=-1)  # (N, k)
    finite = np.all(np.isfinite(A), axis=-1) & np.isfinite(amax)
    if rad is not None:
        rad = np.asarray(rad, dtype=np.float64)
        finite &= np.all(np.isfinite(rad), axis=-1)
    live_row = finite & (amax > 0)
    dead = ~np.all(live_row, axis=-1)
    e = np.frexp(np.where(live_row, amax, 1.0))[1]  # amax = f 2^e, f in [1/2, 1)
    A = np.where(live_row[..., None], A, 0.0)
    A[..., 0] = np.where(live_row, A[..., 0], 1.0)  # a dead row becomes e_1 (its matrix is marked dead)
    B = np.ldexp(A, -e[..., None])
    inexact = np.ldexp(B, e[..., None]) != A  # entries that became subnormal: moved by <= 2^-1075
    RB = np.where(inexact, _SUB, 0.0)
    if rad is not None:
        r = np.where(live_row[..., None], rad, 0.0)
        RB = np.nextafter(np.nextafter(np.ldexp(r, -e[..., None]), np.inf) + RB, np.inf)
    b = get_backend("numpy")
    s = 1.0 / np.sqrt(np.sum(B * B, axis=-1))  # any float positive scaling: exact S is whatever it is
    Y = B * s[..., None]
    R = up_scale(b, np.abs(Y), U / (1 - U), 2 * UL + SLACK)  # the division's rounding, relative to fl
    if RB.any():
        R = add_up(b, R, up_scale(b, RB * s[..., None], 1 / (1 - U), UL / (1 - U) + SLACK))
    return Y, R, dead


def _swap(a):
    return np.swapaxes(a, -1, -2)


def _gram_eps(b, Y, R) -> np.ndarray:
    """Per matrix, a float ``>= ||X X^T - G||_2`` for every X in the ball."""
    N, k, m = Y.shape
    aY = np.abs(Y)
    c_abs = rowsum_up(b, _swap(aY))  # (N, m) >= column sums of |Y|
    c_rad = rowsum_up(b, _swap(R))
    v = add_up(b, up_scale(b, c_abs, gamma(m)), c_rad)
    s = nonneg_matmul_up(b, aY, v[..., None])[..., 0]
    s = add_up(b, s, nonneg_matmul_up(b, R, add_up(b, c_abs, c_rad)[..., None])[..., 0])
    s = up_scale(b, s, Fraction(1), 3 * m * k * UL + SLACK)
    return np.max(s, axis=-1)


def _cholesky_defect(b, G, c, overwrite=False) -> np.ndarray:
    """Per matrix, a float ``>= ||G - c I - L L^T||_2`` for a float Cholesky
    factor L of fl(G - c I); inf where the factorisation breaks down.

    ``overwrite=True``: the stack G is the caller's own temporary and is
    overwritten (no copy of it); the operations, and so the bound, are the
    same either way.  Only arrays made here are reused in place (the residual
    goes into the shifted copy, ``|L|`` into the masked factor)."""
    N, k, _ = G.shape
    Gs = G if overwrite else G.copy()
    i = np.arange(k)
    Gs[:, i, i] -= c[:, None]  # one rounding per diagonal entry
    shift = np.max(up_scale(b, np.abs(Gs[:, i, i]), U / (1 - U), UL + SLACK), axis=-1)
    out = np.full(N, np.inf)
    try:
        L = np.linalg.cholesky(Gs)
        ok = np.ones(N, dtype=bool)
    except np.linalg.LinAlgError:  # some matrix broke down: factor them one by one
        L, ok = np.zeros_like(Gs), np.zeros(N, dtype=bool)
        for j in range(N):
            try:
                L[j], ok[j] = np.linalg.cholesky(Gs[j]), True
            except np.linalg.LinAlgError:
                pass
    ok &= np.all(np.isfinite(L), axis=(-2, -1))
    if not ok.all():  # where every factor is finite, np.where would copy L value for value
        L = np.where(ok[:, None, None], L, 0.0)
    L = np.tril(L)  # a new array: not the factor LAPACK (or a patched cholesky) returned
    H = np.abs(np.subtract(Gs, b.matmul(L, _swap(L)), out=Gs), out=Gs)  # Gs is not read again
    h = up_scale(b, rowsum_up(b, H), 1 / (1 - U))
    aL = np.abs(L, out=L)  # L is not read again
    t = up_scale(b, nonneg_matmul_up(b, aL, rowsum_up(b, _swap(aL))[..., None])[..., 0], gamma(k))
    total = np.max(up_scale(b, add_up(b, h, t), Fraction(1), 3 * k * k * UL + SLACK), axis=-1)
    out[ok] = add_up(b, total, shift)[ok]
    return out


def rho_screen(stack, rad=None) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, lower)`` for each matrix of the (N, k, m) stack (float64
    entries; ``rad``: entrywise radii when the exact matrices are within
    them): the float64 estimate of rho and a rigorous ``lower <= rho`` of
    every matrix in the ball (0 where nothing is proved)."""
    A = np.asarray(stack, dtype=np.float64)
    N, k, m = A.shape
    if N == 0 or k > m:
        return np.zeros(N), np.zeros(N)
    b = get_backend("numpy")
    check_ieee(b)
    Y, R, dead = scaled_unit_rows(A, rad)
    sv = np.linalg.svd(Y, compute_uv=False)
    est = np.where(dead, 0.0, sv[:, -1] / sv[:, 0])
    c = _SHIFT * sv[:, -1] ** 2
    live = ~dead & (c > _TINY)
    lower = np.zeros(N)
    if not live.any():
        return est, lower
    Y, R, c = Y[live], R[live], c[live]
    G0 = np.tril(b.matmul(Y, _swap(Y)))
    G = G0 + _swap(G0)
    i = np.arange(k)
    G[:, i, i] *= 0.5  # the diagonal was doubled: halving is exact
    eps = _gram_eps(b, Y, R)
    delta = _cholesky_defect(b, G, c)
    sub = add_up(b, delta, eps)
    lam = np.where(c > sub, down_scale(b, np.where(c > sub, c - sub, 0.0), 1 / (1 + U)), 0.0)
    diag = G[:, i, i]
    n2max = add_up(b, np.max(diag, axis=-1), eps)
    dmin = np.min(diag, axis=-1)
    n2min = np.where(dmin > eps, down_scale(b, np.where(dmin > eps, dmin - eps, 0.0), 1 / (1 + U)), 0.0)
    smax2 = add_up(b, np.max(rowsum_up(b, np.abs(G)), axis=-1), eps)
    ok = (lam > _TINY) & (n2min > 0) & np.isfinite(smax2) & np.isfinite(n2max)
    q = np.where(ok, lam, 0.0) * n2min / smax2 / n2max  # three roundings, each at most a factor 1 + u up
    q = down_scale(b, q, 1 / (1 + U) ** 3)
    r = down_scale(b, np.sqrt(q), 1 / (1 + U))  # fl(sqrt) <= sqrt (1 + u)
    lower[live] = np.where(ok, r, 0.0)
    return est, lower
