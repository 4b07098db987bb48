"""Matrix products accurate to the result, not to |A||B|: an error-free split
into slices (Ozaki, Ogita, Oishi, Rump, "Error-free transformations of matrix
multiplication by using fast routines of matrix multiplication and its
applications", Numer. Algorithms 59, 2012) and an accurate sum of the
slice products (Ogita, Rump, Oishi, "Accurate sum and dot product", SIAM J.
Sci. Comput. 26, 2005, Sum2).

The plain a priori bound of :func:`~verifier.arith.float_bounds.ball_matmul`
is ``gamma_k |A||B|``: useless when the product cancels (Prop. 1's key/query
weights hold ``c w`` with c ~ 1e7 and ``w . e^(j) ~ 1e-16`` on the fitted
examples, so ``e W_Q`` is tiny where ``|e||W_Q|`` is 1e5).  Here:

1. Each row of A is split as ``A = A_1 + A_2 + A_3 + A_rem`` by ExtractScalar
   (Rump, Ogita, Oishi, "Accurate floating-point summation part I: faithful
   rounding", SIAM J. Sci. Comput. 31, 2008, Lemma 3.3): for ``sigma = 2^m``
   and a float ``p`` with ``|p| <= 2^-M sigma``, ``q = fl(fl(sigma + p) -
   sigma)`` and ``p' = fl(p - q)`` satisfy ``p = q + p'`` EXACTLY, ``|p'| <= u
   sigma``, ``|q| <= 2^-M sigma`` and ``q`` in ``u sigma Z`` (u = 2^-53), for
   EITHER sign of p.  The unit is ``u sigma``, not ``ulp(sigma) = 2 u
   sigma``: a negative p puts ``fl(sigma + p)`` below sigma, where the
   spacing is half as wide.  Row i starts at ``sigma_1 = 2^(E_i + rho)``,
   ``|A_il| < 2^E_i`` (E_i from frexp of the row maximum), so ``M = rho``; then
   ``sigma_(s+1) = 2^(rho - 53) sigma_s`` keeps ``M = rho`` (``|p'| <= u sigma_s
   = 2^-rho sigma_(s+1)``).  So slice s of row i holds integer multiples of
   ``u sigma_s = 2^(E_i + rho - 53 - (s-1)(53 - rho))`` of at most ``2^(53 -
   rho)`` such units.  A term ``A_s(i,l) B_t(l,j)`` (columns of B split alike)
   is an integer multiple of the product of the two units, of at most
   ``2^(106 - 2 rho)`` of them, and every partial sum of k terms, in ANY order
   (any tree, blocked, with or without FMA), is such a multiple of magnitude
   at most ``k 2^(106 - 2 rho) <= 2^53``: a float, since rho is the least
   integer with ``2^(2 rho - 53) >= k`` (:func:`_rho`) and the units stay
   above ``2^-760`` (row maxima ``>= 2^-300``).  Hence ``fl(A_s B_t)`` is
   EXACT.  (Until issue 22 rho had one bit less, from the unit ``2^(E_i + rho
   - 52)`` that holds for nonnegative entries only: partial sums reached
   ``2^54`` units and rounded.)
2. The nine exact products are summed with Sum2 (cascaded TwoSum):
   ``|res - sum p| <= u |res| + gamma_8^2 sum |p|`` (ORO, Prop. 4.5).
3. The remainders (``|A_rem| <= u sigma_3 = 2^(E_i - 3(53 - rho))``, tiny) enter the
   radius through ``|A_rem||B| + |A - A_rem||B_rem|`` bounded by row maxima
   and column sums.

Operands must be in the range of :func:`~verifier.arith.float_bounds.check_range`
with nonzero row/column maxima above ``2^-300`` (else the plain bound is used).

>>> import numpy as np
>>> from verifier.arith.backend import get_backend
>>> b = get_backend("numpy")
>>> A = np.array([[1e8, 1.0, -1e8]]); B = np.array([[1.0], [1e-8], [-1.0]])
>>> mid, rad = accurate_matmul(b, A, B)           # exact value: 2e8 + 1e-8
>>> bool(abs(mid[0, 0] - 2e8) < 1e-7), bool(rad[0, 0] < 1e-6)
(True, True)
>>> A = np.array([[1e8, 1.0, -1e8]]); B = np.array([[1.0], [0.5], [1.0]])
>>> mid, rad = accurate_matmul(b, A, B)           # cancels to 0.5 exactly
>>> float(mid[0, 0]), bool(rad[0, 0] < 1e-10), bool(ball_matmul(b, A, None, B, None)[1][0, 0] > 1e-8)
(0.5, True, True)
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.float_bounds import (
    INV_1MU,
    SLACK,
    UL,
    U,
    add_up,
    ball_matmul,
    cached_constant,
    check_ieee,
    check_range,
    constant_cache,
    gamma,
    rowsum_up,
    up_scale,
)

__all__ = ["accurate_matmul"]

SLICES = 3
TINY_SCALE = 2.0**-300


def _amax(b, a, axis: int):
    if b.is_torch:
        return a.abs().amax(dim=axis, keepdim=True)
    return np.max(np.abs(a), axis=axis, keepdims=True)


def _pow2_of_exponent(b, m, extra: int):
    """2^(E + extra) where m = f 2^E, f in [0.5, 1) (frexp), elementwise; 0 where m == 0."""
    if b.is_torch:
        import torch

        _, e = torch.frexp(m)
        return torch.where(m > 0, torch.ldexp(torch.ones_like(m), (e + extra).to(m.dtype)), torch.zeros_like(m))
    _, e = np.frexp(m)
    return np.where(m > 0, np.ldexp(1.0, e + extra), 0.0)


def _split(b, A, axis: int, rho: int):
    """[A_1, A_2, A_3], A_rem with A = sum exactly (rows: axis=1, columns: axis=0)."""
    sigma = _pow2_of_exponent(b, _amax(b, A, axis), rho)
    slices, R = [], A
    for _ in range(SLICES):
        hi = (R + sigma) - sigma  # ExtractScalar: exact, hi in u sigma Z (not ulp(sigma) Z: R < 0)
        slices.append(hi)
        R = R - hi  # exact
        sigma = sigma * 2.0 ** (rho - 53)  # |R| <= u sigma_s = 2^-rho sigma_(s+1)
    return slices, R


def _rho(k: int) -> int:
    """The least integer rho with ``2^(2 rho - 53) >= k``: slice products of
    length k sum exactly in any order (module docstring, step 1)."""
    return (54 + (max(k, 1) - 1).bit_length()) // 2


def _two_sum(s, p):
    t = s + p
    z = t - s
    return t, (s - (t - z)) + (p - z)


_OUTER_SLACK = UL / (1 - U) + SLACK


def _outer_up(b, x, y):
    """Floats ``>= x_i y_j`` for a nonnegative float column x and row y: ``fl(x_i
    y_j) >= x_i y_j (1 - u) - UL``.  No 2^400 range check (a row sum of
    ``|A|`` may exceed it): the factors are below 2^442 and 2^383 here, the
    products finite."""
    return up_scale(b, x * y, INV_1MU, _OUTER_SLACK)


_SUM2 = constant_cache()


def _sum2_factor(n: int) -> Fraction:
    """``gamma_{n-1}^2 / (1 - gamma_n)``: Sum2's error factor for n terms, cached."""
    return cached_constant(_SUM2, int(n), lambda: gamma(n - 1) ** 2 / (1 - gamma(n)))


#: rows of A per block: the nine slice products and their Sum2 cascade stay in cache (this many entries of
#: the result per block), instead of some forty passes over whole T x n arrays
BLOCK_ENTRIES = 1 << 16


def accurate_matmul(b, A, B):
    """(mid, rad) with ``|A B - mid| <= rad`` entrywise (A, B exact float
    arrays of backend b; 2-D).  ``rad`` is about ``u |A B| + 2^(2 - 3(53 -
    rho)) (max_l |A_il| sum_l |B_lj| + sum_l |A_il| max_l |B_lj|)`` at worst
    (2^(2 - 3(53 - rho)) <= 2^-58 for k <= 4096), instead of ``gamma_k |A||B|``.
    Rounding to nearest is checked (:func:`~verifier.arith.float_bounds.check_ieee`):
    ExtractScalar is error-free only under it.  Computed a block of rows of A
    at a time (:data:`BLOCK_ENTRIES`): every step is row by row (A's split, the
    exact slice products, the cascade), so the result is the same as in one
    piece."""
    check_ieee(b)
    check_range(b, A, B)
    k = A.shape[-1]
    mu, nu = _amax(b, A, 1), _amax(b, B, 0)
    small = (b.any((mu > 0) & (mu < TINY_SCALE)) or b.any((nu > 0) & (nu < TINY_SCALE)))
    if small or k == 0:
        return ball_matmul(b, A, None, B, None)
    rho = _rho(k)
    Bs, B_rem = _split(b, B.T, 1, rho)
    Bs = [x.T for x in Bs]
    B_col = rowsum_up(b, b.abs(B).T)[None, :]  # sum_l |B_lj|
    B_rem_max = _amax(b, B_rem.T, 0)  # max_l |B_rem(l, j)|
    rows, cols = A.shape[0], B.shape[-1]
    step = max(1, BLOCK_ENTRIES // max(1, cols))
    if rows <= step:
        return _accurate_rows(b, A, rho, Bs, B_col, B_rem_max)
    parts = [_accurate_rows(b, A[r:r + step], rho, Bs, B_col, B_rem_max) for r in range(0, rows, step)]
    return _concat_rows(b, [p[0] for p in parts]), _concat_rows(b, [p[1] for p in parts])


def _concat_rows(b, parts):
    if b.is_torch:
        import torch

        return torch.cat(parts, dim=0)
    return np.concatenate(parts, axis=0)


def _accurate_rows(b, A, rho, Bs, B_col, B_rem_max):
    """:func:`accurate_matmul` for a block of rows of A, B already split."""
    As, A_rem = _split(b, A, 1, rho)
    prods = (b.matmul(a, bt) for a in As for bt in Bs)  # each exact
    s = next(prods)
    err, absum, n = b.zeros_like(s), b.abs(s), 1
    for p in prods:
        s, q = _two_sum(s, p)
        err = err + q
        absum = absum + b.abs(p)
        n += 1
    mid = s + err
    # Sum2: |mid - sum p| <= u |mid| + gamma_{n-1}^2 sum |p|; sum|p| <= fl(...) / (1 - gamma_n)
    g2 = _sum2_factor(n)
    # (the exact sum's |s| <= |mid| + the error: hence the 1/(1-u))
    rad = up_scale(b, add_up(b, up_scale(b, b.abs(mid), U), up_scale(b, absum, g2)), INV_1MU)
    # remainders: |A_rem B| + |(A - A_rem) B_rem| <= max_l|A_rem(i,l)| sum_l|B_lj| + 2 sum_l|A_il| max_l|B_rem(l,j)|
    # (extraction never grows an entry, either sign: fl(sigma + p) is at least as near to sigma + p as sigma
    # is, so |p - q| <= |p|; hence |A_rem| <= |A| and |A - A_rem| <= 2|A|)
    t1 = _outer_up(b, _amax(b, A_rem, 1), B_col)
    t2 = _outer_up(b, up_scale(b, rowsum_up(b, b.abs(A)), 2)[:, None], B_rem_max)
    rad = add_up(b, rad, add_up(b, t1, t2))
    return mid, up_scale(b, rad, 1, SLACK)
