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

1. Each row of A is split as ``A = A_1 + A_2 + A_3 + A_rem`` by Rump's
   ExtractScalar (``fl(fl(a + s) - s)`` with ``s = 2^(E + rho)``, E the row
   maximum's binary exponent): the slices of row i are integer multiples of
   ``2^(E_i + rho - 52 - (s-1)(53 - rho))`` below ``2^(52 - rho)`` of those
   units, so with ``2 rho >= 52 + log2 k`` every partial sum of a product
   ``A_s B_t`` (columns of B split alike) is an integer multiple of one
   unit below ``2^53`` units: ``fl(A_s B_t)`` is EXACT in any summation order.
2. The nine exact products are summed with Sum2 (cascaded TwoSum):
   ``|res - sum p| <= u |res| + gamma_8^2 sum |p|`` (ORO, Prop. 4.5).
3. The remainders (``|A_rem| < 2^(E_i - 3(53 - rho) + ...)``, tiny) enter the
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

import math
from fractions import Fraction

import numpy as np

from verifier.arith.float_bounds import (
    SLACK,
    U,
    add_up,
    ball_matmul,
    check_range,
    gamma,
    nonneg_matmul_up,
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
        hi = (R + sigma) - sigma  # ExtractScalar: exact, hi a multiple of ulp(sigma)
        slices.append(hi)
        R = R - hi  # exact
        sigma = sigma * 2.0 ** (rho - 53)  # next unit: |R| <= ulp(sigma)/2 = sigma 2^-53
    return slices, R


def _two_sum(s, p):
    t = s + p
    z = t - s
    return t, (s - (t - z)) + (p - z)


def accurate_matmul(b, A, B):
    """(mid, rad) with ``|A B - mid| <= rad`` entrywise (A, B exact float
    arrays of backend b; 2-D).  ``rad`` is about ``u |A B| + 2^-60 |A||B|`` at
    worst, instead of ``gamma_k |A||B|``."""
    check_range(b, A, B)
    k = A.shape[-1]
    mu, nu = _amax(b, A, 1), _amax(b, B, 0)
    small = (b.any((mu > 0) & (mu < TINY_SCALE)) or b.any((nu > 0) & (nu < TINY_SCALE)))
    if small or k == 0:
        return ball_matmul(b, A, None, B, None)
    rho = math.ceil((52 + math.log2(max(k, 1))) / 2)  # one bit of margin over 51 + log2 k
    As, A_rem = _split(b, A, 1, rho)
    Bs, B_rem = _split(b, B.T, 1, rho)
    Bs = [x.T for x in Bs]
    B_rem = B_rem.T
    prods = [b.matmul(a, bt) for a in As for bt in Bs]  # each exact
    s, err = prods[0], b.zeros_like(prods[0])
    absum = b.abs(prods[0])
    for p in prods[1:]:
        s, q = _two_sum(s, p)
        err = err + q
        absum = absum + b.abs(p)
    mid = s + err
    n = len(prods)
    # Sum2: |mid - sum p| <= u |mid| + gamma_{n-1}^2 sum |p|; sum|p| <= fl(...) / (1 - gamma_n)
    g2 = gamma(n - 1) ** 2 / (1 - gamma(n))
    # (the exact sum's |s| <= |mid| + the error: hence the 1/(1-u))
    rad = up_scale(b, add_up(b, up_scale(b, b.abs(mid), U), up_scale(b, absum, g2)), 1 / (1 - U))
    # remainders: |A_rem B| + |(A - A_rem) B_rem| <= max_l|A_rem(i,l)| sum_l|B_lj| + 2 sum_l|A_il| max_l|B_rem(l,j)|
    # (extraction never grows an entry: |A - A_rem| <= 2|A|)
    t1 = nonneg_matmul_up(b, _amax(b, A_rem, 1), rowsum_up(b, b.abs(B).T)[None, :])
    t2 = nonneg_matmul_up(b, up_scale(b, rowsum_up(b, b.abs(A)), Fraction(2))[:, None], _amax(b, B_rem, 0))
    rad = add_up(b, rad, add_up(b, t1, t2))
    return mid, up_scale(b, rad, Fraction(1), SLACK)
