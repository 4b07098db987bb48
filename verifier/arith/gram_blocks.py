"""Many symmetric blocks proved positive definite at once: the Gram blocks of
subsets of ONE set of vectors (principal submatrices of one Gram matrix) and
the Gram matrices of a stack (one per context), in cache-sized batches.

One block.  A float symmetric k x k matrix ``A`` (its lower triangle is read)
stands for a real symmetric ``X`` with ``||X - A||_2 <= eps``; ``c > 0`` is a
float shift (any value: it only chooses).  With ``L`` any float lower
triangular matrix (the float Cholesky factor of ``fl(A - cI)``; a wrong or
perturbed factor only weakens the bound)::

    delta >= ||fl(A - cI) - L L^T||_2 + max_i |fl(A_ii - c) - (A_ii - c)|
    c > delta + eps   ==>   lambda_min(X) >= c - delta - eps > 0,

so the rows whose Gram matrix X is are linearly independent.  ``delta`` is
a posteriori (:func:`factor_defect`): the residual ``fl(A - cI) - fl(L L^T)``
is formed on the lower triangle only (the exact residual is symmetric), its
row sums taken over both triangles, plus the product's own rounding
``gamma_k |L||L|^T`` (row sums by one matrix-vector product) and the
underflow terms: the a priori bounds of :mod:`.float_bounds`, valid for ANY
summation order.  The lower triangle of ``L L^T`` costs about a quarter of
the full product (:func:`lower_product`: no block above the diagonal).
Below k = 64 the whole product is one block anyway: there both callers,
whose balls hold entrywise in both triangles, let the defect read both and
bound each entry of the residual as it is (``full=True``: no mask, no
mirror, one row sum).

Where the blocks come from:

* :func:`subsets_certified`: ``G`` a float Gram matrix of rows V with
  ``|V V^T - G|_ij <= e_i`` for every j (:func:`.independence.gram_ball`:
  ONE product), the subsets' blocks ``G_SS`` gathered from it
  (``eps = k max_{i in S} e_i``);
* :func:`stack_certified`: a stack of k x m matrices, their Gram matrices by
  one batched product, ``eps`` the row sums of ``gamma_m |M||M|^T`` plus
  underflow (one batched matrix-vector product).

A False is "not proved here", never "dependent": the callers decide those
in exact arithmetic (:mod:`.independence`) or by another certificate.

>>> import numpy as np
>>> V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
>>> from verifier.arith.independence import gram_ball
>>> subsets_certified(*gram_ball(V), np.array([[0, 1], [0, 1], [0, 3]])).tolist()
[True, True, True]
>>> subsets_certified(*gram_ball(V), np.array([[0, 1, 2], [1, 2, 3]])).tolist()
[False, True]
>>> stack_certified(np.stack([V[:3], V[[0, 1, 3]]])).tolist()
[False, True]
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.backend import Backend, get_backend
from verifier.arith.float_bounds import (
    INV_1MU,
    MAG,
    SLACK,
    U_1MU,
    UL,
    add_up,
    cached_constant,
    check_ieee,
    colsum_up,
    constant_cache,
    gamma,
    inv_1m_gamma,
    nonneg_matmul_up,
    product_slack,
    rowsum_up,
    up_scale,
)

__all__ = ["BLOCK_ENTRIES", "lower_product", "factor_defect", "row_scaled", "positive_definite",
           "subsets_certified", "stack_certified"]

#: entries of the (B, k, k) work arrays per batch: 8 MiB of float64; fewer entries make more batches and more
#: Python per batch (0.43 vs 0.38 s for 300 subsets of 197 at 2^18), more make the passes run from memory
BLOCK_ENTRIES = 1 << 20
#: small subsets go in batches of about this many entries (but at least MIN_BATCH subsets, and at most
#: BLOCK_ENTRIES entries): their work arrays stay in cache (5000 subsets of 32: 63 vs 75 ms at 2^20; on a second
#: core beside the construction, Fig. 2's whole check: 0.18-0.19 s at 2^18 vs 0.19-0.22 s at 2^16 and 2^17)
CACHE_ENTRIES = 1 << 18
MIN_BATCH = 32


def _batch(k: int) -> int:
    """Subsets of size k per batch of :func:`subsets_certified`."""
    kk = max(1, k * k)
    return max(1, min(BLOCK_ENTRIES // kk, max(MIN_BATCH, CACHE_ENTRIES // kk)))


def _swap(a):
    return np.swapaxes(a, -1, -2)


def _mm(b, x, y):
    """A stacked product: numpy's own for the plain numpy backend (BLAS per
    matrix: faster than the backend's torch route for square stacks here,
    0.27 vs 0.46 ms for 197 x 197), the backend's otherwise (a spy, a
    summation order, torch)."""
    return np.matmul(x, y) if type(b) is Backend and b.name == "numpy" else b.matmul(x, y)


def _blocks(k: int) -> int:
    """Block rows of :func:`lower_product`: one below 64 (the full product is
    cheapest), up to 6 (0.16 vs 0.27 ms at k = 197)."""
    return max(1, min(6, k // 32))


def lower_product(b, L):
    """A (B, k, k) array whose lower triangle (diagonal included) is a float
    ``L L^T`` for lower triangular L: entry (i, j), i >= j, one dot product
    of at most k terms ``L_ip L_jp`` (the others exact zeros), summed in
    whatever order the product sums.  Block row I, block column J <= I:
    ``L[I, :J+] L[J, :J+]^T`` (only the columns where L[J] is not zero), so
    no block above the diagonal is formed: about k^3/4 multiply-adds with 6
    block rows, against k^3 for the whole product.  Above the diagonal:
    zeros, or what a diagonal block's product left there (never read)."""
    k = L.shape[-1]
    q = _blocks(k)
    w = -(-k // q)
    P = np.zeros_like(L)
    for r0 in range(0, k, w):
        r1 = min(k, r0 + w)
        for c0 in range(0, r1, w):
            c1 = min(k, c0 + w)
            P[..., r0:r1, c0:c1] = _mm(b, L[..., r0:r1, :c1], _swap(L[..., c0:c1, :c1]))
    return P


def _factor(A):
    """Float Cholesky factors of the stack A (lower triangles read), and
    which exist (finite): the whole stack at once, one by one after a
    breakdown.  The factors are our own array, zero above the diagonal."""
    N, k, _ = A.shape
    try:
        L, ok = np.linalg.cholesky(A), np.ones(N, dtype=bool)
    except np.linalg.LinAlgError:  # some matrix broke down: the others one by one
        L, ok = np.zeros_like(A), np.zeros(N, dtype=bool)
        for j in range(N):
            try:
                L[j], ok[j] = np.linalg.cholesky(A[j]), True
            except np.linalg.LinAlgError:
                pass
    if type(L) is not np.ndarray or L.dtype != np.float64 or not L.flags.writeable or np.shares_memory(L, A):
        L = np.array(L, dtype=np.float64)  # not written into: the one LAPACK (or a patched cholesky) returned
    ok &= np.all(np.isfinite(L), axis=(-2, -1))
    L[~ok] = 0.0
    L *= _lower_mask(k)  # only the lower triangle is the factor (finite entries: 0 * x = 0)
    return L, ok


def _lower_mask(k: int) -> np.ndarray:
    return np.tri(k, dtype=np.float64)


def factor_defect(b, A, c, *, full: bool = False) -> np.ndarray:
    """Per matrix of the (N, k, k) stack A (lower triangles read, A
    overwritten: the caller's own temporary), a float ``>= ||fl(A - cI) -
    L L^T||_2 + max_i |fl(A_ii - c_n) - (A_ii - c_n)|`` for the float
    Cholesky factor L of ``fl(A - cI)``; ``inf`` where it breaks down, an
    entry is not finite or ``|L|`` exceeds ``MAG / k`` (the range of the
    a priori bounds, :func:`.float_bounds.check_range`).  ``c``: (N,) shifts.

    With ``P = fl(L L^T)`` on the lower triangle (:func:`lower_product`) and
    ``H = |fl(fl(A - cI) - P)|`` there: ``|fl(A - cI) - L L^T|_ij <= H_ij /
    (1-u) + gamma_k (|L||L|^T)_ij + 3 k UL`` for i >= j, and the exact
    residual is symmetric, so its row i sums to at most ``(sum_j H_ij +
    sum_j H_ji) / (1-u) + gamma_k (|L| |L|^T 1)_i + 3 k^2 UL``.

    ``full=True`` (the callers' balls hold entrywise for BOTH triangles of
    A, :func:`subsets_certified` and :func:`stack_certified`): where one
    block row is the whole product (k < 64), both triangles of A are read
    and the bound is ``>=`` the row sums of ``|fl(A - cI) - L L^T|`` over the
    whole matrix A (each entry bounded by its own ``H_ij / (1-u) + gamma_k
    (|L||L|^T)_ij + 3 k UL``): no mirror, no mask, one row sum instead of
    two (fewer passes over the stack, the same product)."""
    N, k, _ = A.shape
    i = np.arange(k)
    A[:, i, i] -= c[:, None]  # one rounding per diagonal entry
    shift = np.max(up_scale(b, np.abs(A[:, i, i]), U_1MU, UL + SLACK), axis=-1)
    L, ok = _factor(A)
    aL = np.abs(L)
    ok &= np.max(aL, axis=(-2, -1)) <= MAG / k
    if full and _blocks(k) == 1:  # every entry of the residual, both triangles: its row sums directly
        H = np.abs(np.subtract(A, _mm(b, L, _swap(L)), out=A), out=A)
        h = up_scale(b, rowsum_up(b, H), INV_1MU)
    else:
        H = np.abs(np.subtract(A, lower_product(b, L), out=A), out=A)  # A is not read again
        H *= _lower_mask(k)  # the strict upper triangle mirrors the lower one: counted by the column sums
        h = up_scale(b, add_up(b, rowsum_up(b, H), colsum_up(b, H)), INV_1MU)
    g = gamma(k)
    col = colsum_up(b, aL)  # >= |L|^T 1, each at most k MAG / k
    LL1 = up_scale(b, _mm(b, aL, col[..., None])[..., 0], inv_1m_gamma(k), _ll1_slack(k))  # >= |L||L|^T 1
    t = up_scale(b, LL1, g)
    total = np.max(up_scale(b, add_up(b, h, t), 1, product_slack(k * k)), axis=-1)
    out = np.full(N, np.inf)
    out[ok] = add_up(b, total, shift)[ok]
    return out


_LL1_SLACK = constant_cache()


def _ll1_slack(k: int) -> Fraction:
    """``3 k UL / (1 - gamma_k) + SLACK`` (the product ``|L| (|L|^T 1)``), cached."""
    return cached_constant(_LL1_SLACK, int(k), lambda: 3 * k * UL / (1 - gamma(k)) + SLACK)


def row_scaled(M) -> np.ndarray:
    """M with each row (last axis) multiplied by the power of two that brings
    its largest entry into [1/2, 1): the same independences (a nonzero
    factor per row), Gram matrices of unit scale whatever the rows' sizes
    (2^300 or 2^-300).  A row the scaling would not keep exact (an entry
    falling into the subnormal range), a zero or non-finite row: as given."""
    M = np.asarray(M, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        amax = np.max(np.abs(M), axis=-1, keepdims=True)
    ok = np.isfinite(amax) & (amax > 0)
    e = np.frexp(np.where(ok, amax, 1.0))[1]
    S = np.ldexp(M, -e)
    with np.errstate(invalid="ignore", over="ignore"):
        ok &= np.all(np.ldexp(S, e) == M, axis=-1, keepdims=True)  # exact: no entry rounded
    return np.where(ok, S, M)


def positive_definite(b, A, eps, c, *, full: bool = False) -> np.ndarray:
    """True where ``lambda_min(X) > 0`` is proved for every symmetric X with
    ``||X - A_n||_2 <= eps_n`` (A: (N, k, k), lower triangles read and
    overwritten; eps, c: (N,) floats): ``c > delta + eps``.  ``full``: the
    bound eps holds for A's both triangles as given, which may then be read
    (:func:`factor_defect`)."""
    with np.errstate(all="ignore"):  # an infinite entry proves nothing, quietly
        delta = factor_defect(b, A, c, full=full)
        sub = add_up(b, delta, eps)
        return np.isfinite(sub) & np.isfinite(c) & (c > sub)


def _shift(eps, big, k: int):
    """The shift tried: above the expected defect (twice eps plus 4 gamma_k k
    times the largest diagonal entry), below lambda_min when well posed."""
    return 2 * eps + 4 * float(gamma(k)) * k * big


def subsets_certified(G, e, idx, backend=None) -> np.ndarray:
    """For the ball ``G +/- e`` of V V^T (:func:`.independence.gram_ball`)
    and subsets ``idx`` (B, k): True where the rows V_S are proved
    independent (``eps = k max_{i in S} e_i >= ||V_S V_S^T - G_SS||_2``, a
    row sum of k entries each at most e_i; entrywise in both triangles, so
    :func:`positive_definite` may read both)."""
    b = get_backend("numpy" if backend is None else backend)
    idx = np.asarray(idx, dtype=np.intp)
    B, k = idx.shape
    if B == 0 or k == 0:
        return np.ones(B, dtype=bool)
    m = G.shape[0]
    flat, diag = G.reshape(-1), np.diagonal(G)
    out = np.zeros(B, dtype=bool)
    step = _batch(k)
    for s in range(0, B, step):
        part = idx[s:s + step]
        A = np.take(flat, part[:, :, None] * m + part[:, None, :])  # G_SS, gathered for this batch only
        with np.errstate(all="ignore"):
            eps = up_scale(b, e[part].max(axis=1), k)
            out[s:s + step] = positive_definite(b, A, eps, _shift(eps, np.abs(diag[part]).max(axis=1), k),
                                                full=True)  # the ball is entrywise: both triangles
    return out


def stack_certified(M, which=None, backend=None) -> np.ndarray:
    """For a stack M (N, k, m) of float matrices, k <= m, or the matrices
    ``M[which]`` (read a batch at a time: no copy of the whole selection):
    True where the k rows of M_n are proved independent, from the rows
    scaled by powers of two (:func:`row_scaled`) and ``fl(M_n M_n^T)`` with
    ``eps_n`` the largest row sum of ``gamma_m |M_n||M_n|^T`` plus ``3 m k
    UL`` (the product's a priori error, entrywise in both triangles:
    :func:`positive_definite` reads both, or the lower one mirrored).  False where k > m or an entry of
    M_n is not finite or beyond the a priori bounds' range (2^400, after the
    scaling)."""
    b = get_backend("numpy" if backend is None else backend)
    check_ieee(b)
    which = np.arange(M.shape[0]) if which is None else np.asarray(which, dtype=np.intp)
    B, (k, m) = len(which), M.shape[1:]
    out = np.zeros(B, dtype=bool)
    if B == 0 or k > m:
        return out
    step = max(1, BLOCK_ENTRIES // (k * k))  # the (step, k, k) work arrays; a batch of M is m / k times larger
    for s in range(0, B, step):
        part = row_scaled(M[which[s:s + step]])  # rank is unchanged by row scalings
        with np.errstate(invalid="ignore"):
            fine = np.all(np.isfinite(part), axis=(-2, -1)) & (np.max(np.abs(part), axis=(-2, -1)) <= MAG)
        part[~fine] = 0.0  # not proved (a zero matrix never is); the bounds below need finite entries in range
        aM = np.abs(part)
        with np.errstate(all="ignore"):
            w = up_scale(b, nonneg_matmul_up(b, aM, rowsum_up(b, _swap(aM))[..., None])[..., 0], gamma(m),
                         3 * m * k * UL + SLACK)  # row sums of gamma_m |M||M|^T + 3 m UL per entry
            eps = np.max(w, axis=-1)
            A = np.array(_mm(b, part, _swap(part)), dtype=np.float64)
            big = np.max(np.abs(np.diagonal(A, axis1=-2, axis2=-1)), axis=-1)
            out[s:s + step] = positive_definite(b, A, eps, _shift(eps, big, k), full=True) & fine
    return out
