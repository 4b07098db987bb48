"""Eqs. (1)-(3) and (7) in rigorous float64 balls: enclosures at matrix-product speed.

The same layer as :mod:`verifier.model.mha` and :mod:`verifier.model.mha_balls`,
computed on an array backend (numpy, torch CPU/CUDA) with the a priori error
bounds of :mod:`verifier.arith.float_bounds` and the rigorous exp of
:mod:`verifier.arith.float_exp`.  Every result is a ball ``mid +/- rad`` of
float arrays that contains the EXACT value of the layer for the given float64
weights and data (the float64 inputs are exact dyadic rationals).

* logits (Eq. 1): ``a = (e W_Q)(E W_K)^T`` for a shared context (one n x d
  matrix: cost T d d_h + n d d_h + T n d_h per head) and ``a = E (W_K (W_Q^T
  e))`` otherwise; ``e W_Q`` by :func:`~verifier.arith.float_accurate.accurate_matmul`
  (it cancels: Prop. 1's saturation column ``c w`` is orthogonal to the fitted
  queries), the others by :func:`~verifier.arith.float_bounds.ball_matmul`.
* softmax (Eq. 2): shifted by the float row maximum of the midpoints (an exact
  shift: softmax is shift-invariant), exp enclosed, sums and quotients
  rounded outward.
* features (Eqs. 3, 7): ``z_h = s_h^T E`` on the requested columns only.

>>> import numpy as np
>>> from verifier.arith.backend import get_backend
>>> b = get_backend("numpy")
>>> mid, rad = softmax_float_ball(b, np.array([[0.0, 0.0]]), np.zeros((1, 2)))
>>> bool(abs(mid[0, 0] - 0.5) <= rad[0, 0] < 1e-14)
True
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.backend import get_backend
from verifier.arith.balls import BallArray
from verifier.arith.float_accurate import accurate_matmul
from verifier.arith.float_bounds import (
    INV_1MU,
    INV_1PU,
    MAG,
    SLACK,
    U_1MU,
    UL,
    FloatRangeError,
    U,
    abs_upper,
    add_up,
    ball_matmul,
    cached_constant,
    check_range,
    constant_cache,
    down_scale,
    gamma,
    nonneg_matmul_up,
    rowsum_up,
    up_scale,
)
from verifier.arith.float_certificates import FloatBall
from verifier.arith.float_exp import exp_bounds
from verifier.model import mha as model

__all__ = ["logits_float_ball", "softmax_float_ball", "feature_columns_float_ball"]


_INV_1PU2 = 1 / (1 + U) ** 2
_INV_1MU2 = 1 / (1 - U) ** 2


_INV_1P_GAMMA = constant_cache()


def _inv_1p_gamma(n: int) -> Fraction:
    """``1 / (1 + gamma_n)`` exactly, cached."""
    return cached_constant(_INV_1P_GAMMA, int(n), lambda: 1 / (1 + gamma(n)))


def _keepmax(b, a):
    if b.is_torch:
        return a.max(dim=-1, keepdim=True).values
    return np.max(a, axis=-1, keepdims=True)


def softmax_float_ball(b, a_mid, a_rad):
    """(mid, rad) enclosing softmax(a) along the last axis for every a in
    ``a_mid +/- a_rad``.

    Written relative to the EXACT logit of a reference entry k (the float
    argmax of the midpoints): ``s_i = e^{y_i} / sum_j e^{y_j}`` with ``y_j =
    a_j - a_k``, so ``y_k = 0`` exactly and a saturated row's largest
    probability ``1 / (1 + sum_{j != k} e^{y_j})`` stays tight however wide
    the (huge) logits' own balls are; ``y_j`` lies in
    ``fl(a_mid_j - a_mid_k) +/- (rad_j + rad_k + u |.|)``.
    """
    n = a_mid.shape[-1]
    ref = b.argmax_onehot(a_mid)
    zero = b.zeros_like(a_mid)
    ak = b.where(ref, a_mid, zero).sum(-1)[..., None]  # exact: one nonzero per row
    x = a_mid - ak  # one rounding: |x - (a_mid - a_mid_k)| <= u |x| / (1 - u)
    xr = up_scale(b, b.abs(x), U_1MU)
    if a_rad is not None:
        rk = b.where(ref, a_rad, zero).sum(-1)[..., None]
        xr = add_up(b, xr, add_up(b, a_rad, rk + zero))
    xr = b.where(ref, zero, xr)
    x = b.where(ref, zero, x)
    if b.max(xr) > 0.5:
        raise FloatRangeError("logit differences enclosed wider than 0.5: the float softmax cannot be useful")
    e_lo, e_hi = exp_bounds(b, x)
    # e^{y} for y in x +/- xr: [e_lo (1 - xr), e_hi (1 + 2 xr)]  (e^t <= 1 + 2t, e^-t >= 1 - t, 0 <= t <= 1)
    lo = down_scale(b, e_lo * (1.0 - xr), _INV_1PU2)
    hi = up_scale(b, e_hi * (1.0 + 2.0 * xr), _INV_1MU2)
    lo = b.where(ref, zero + 1.0, lo)  # e^0 = 1 exactly
    hi = b.where(ref, zero + 1.0, hi)
    lo_others = b.where(ref, zero, lo)
    hi_others = b.where(ref, zero, hi)
    s_lo = 1.0 + down_scale(b, lo_others.sum(-1)[..., None], _inv_1p_gamma(n))  # fl(1 + t) <= (1 + t)(1 + u):
    s_lo = down_scale(b, s_lo, INV_1PU)
    s_hi = up_scale(b, 1.0 + rowsum_up(b, hi_others)[..., None], INV_1MU)
    p_lo = down_scale(b, lo / s_hi, INV_1PU)
    p_hi = up_scale(b, hi / s_lo, INV_1MU)
    p_hi = b.where(p_hi > 1.0, zero + 1.0, p_hi)  # a probability is at most 1
    mid = (p_lo + p_hi) * 0.5  # between p_lo and p_hi (rounding to nearest)
    d1, d2 = p_hi - mid, mid - p_lo  # each one rounding of a nonnegative difference
    rad = up_scale(b, b.maximum(d1, d2), INV_1MU)
    return mid, rad


def _as(b, a):
    return b.asarray(np.ascontiguousarray(a)) if not b.is_torch or isinstance(a, np.ndarray) else b.asarray(a)


def logits_float_ball(b, contexts, queries, W_K, W_Q, head: int, rows=None, *, context_abs=None):
    """(mid, rad) of Eq. (1) for one head: shape (len(rows), n).  For
    per-example contexts, ``context_abs`` = (E, |E|) on the backend, E =
    contexts[rows] range-checked by the caller (shared by every head)."""
    rows = np.arange(contexts.shape[0]) if rows is None else np.asarray(rows, dtype=int)
    e = _as(b, np.asarray(queries)[rows])
    WQ, WK = _as(b, W_Q[head]), _as(b, W_K[head])
    p_mid, p_rad = accurate_matmul(b, e, WQ)  # e W_Q (T', d_h): cancels on fitted examples (c w . e ~ 0)
    if model.is_shared(contexts) or contexts.shape[0] == 1:
        E = _as(b, contexts[0])
        k_mid, k_rad = accurate_matmul(b, E, WK)  # E W_K (n, d_h): cancels too (Claim 1's b = E^+ log s)
        return ball_matmul(b, p_mid, p_rad, k_mid.T, k_rad.T)
    u_mid, u_rad = ball_matmul(b, p_mid, p_rad, WK.T, None)  # (W_K W_Q^T e)^T  (T', d)
    if context_abs is None:
        E = _as(b, contexts[rows])
        check_range(b, E)
        context_abs = (E, b.abs(E))
    return _per_example_products(b, *context_abs, u_mid, u_rad)


#: |E| of per-example contexts is formed this many entries at a time (a few MB, reused), never whole
ABS_CHUNK = 2**20


def _abs_step(E) -> int:
    """Examples per chunk of |E| (:data:`ABS_CHUNK` entries, at least one example)."""
    return max(1, ABS_CHUNK // max(1, E.shape[1] * E.shape[2]))


def _abs_matmul(b, E, E_abs, w):
    """|E| w for a batch (T', n, d) @ (T', d, k), w >= 0: from ``E_abs`` when
    the caller has it, else |E| formed a few examples at a time (each chunk's
    products are the batch's own: the same matrices, one matmul per chunk)."""
    if E_abs is not None:
        return b.matmul(E_abs, w)
    T, step = E.shape[0], _abs_step(E)
    if T <= step:
        return b.matmul(b.abs(E), w)
    return _concat0(b, [b.matmul(b.abs(E[i:i + step]), w[i:i + step]) for i in range(0, T, step)])


def _concat0(b, parts):
    if len(parts) == 1:
        return parts[0]
    if b.is_torch:
        import torch

        return torch.cat(parts, dim=0)
    return np.concatenate(parts, axis=0)


def _per_example_products(b, E, E_abs, u_mid, u_rad):
    """(mid, rad) of E^(t) u^(t) for every example: :func:`ball_matmul` of a
    batch of matrix-vector products (E exact, u in a ball), with E's range
    check done once by the caller instead of once per head (``E_abs``: |E|
    when the caller has it; None: formed in chunks, :func:`_abs_matmul`):
    ``|E u - fl(E u)| + |E| u_rad <= |E| (gamma_d |u_mid| + u_rad) + 3 d UL``."""
    check_range(b, u_mid, u_rad)
    d = E.shape[-1]
    g = gamma(d)
    vec = u_mid.ndim == 2  # one u per example (T', d), or G of them (T', d, G)
    a_mid = b.matmul(E, u_mid[:, :, None] if vec else u_mid)
    w = up_scale(b, b.abs(u_mid), g)
    if u_rad is not None:
        w = add_up(b, w, u_rad)
    R = up_scale(b, _abs_matmul(b, E, E_abs, w[:, :, None] if vec else w), 1 / (1 - g),
                 (3 * d * UL) / (1 - g) + SLACK)
    if vec:
        a_mid, R = a_mid[:, :, 0], R[:, :, 0]
    return a_mid, up_scale(b, R, Fraction(1), 3 * d * UL + SLACK)


#: Per-example contexts: heads evaluated together while their (T', heads, d) blocks stay below this many bytes.
HEAD_GROUP_BYTES = 2**28


def feature_columns_float_ball(contexts, queries, W_K, W_Q, *, rows=None, cols=None, backend=None,
                               accurate: bool = True) -> FloatBall:
    """A :class:`FloatBall` enclosing ``Z[rows, cols]`` (Eq. 7; column j is
    coordinate ``j % d`` of head ``j // d``), in the order given; contexts and
    queries may be :class:`~verifier.arith.balls.BallArray` (data known to a
    precision): the ball then encloses Z for every value they stand for.  Only the
    heads that own a requested column are evaluated.  Per-example contexts are
    read once for all heads (no copy when every example is asked for, in any
    order: the rows are put in the requested order at the end), and the heads
    are evaluated together (:func:`_per_example_heads`): one pass over the
    T x n x d contexts per group of heads, not one per head.  ``accurate``:
    the logits' products accurate (tight under cancellation), else plain (:func:`_product`)."""
    b = get_backend(backend)
    contexts, E_rad = (contexts.mid, contexts.rad) if isinstance(contexts, BallArray) else (contexts, None)
    queries, q_rad = (queries.mid, queries.rad) if isinstance(queries, BallArray) else (queries, None)
    W_K, K_rad = (W_K.mid, W_K.rad) if isinstance(W_K, BallArray) else (W_K, None)  # weights known to a precision
    W_Q, Q_rad = (W_Q.mid, W_Q.rad) if isinstance(W_Q, BallArray) else (W_Q, None)
    T, n, d = contexts.shape
    H = W_K.shape[0]
    rows = np.arange(T) if rows is None else np.asarray(rows, dtype=int)
    cols = np.arange(H * d) if cols is None else np.asarray(cols, dtype=int)
    shared = model.is_shared(contexts) or T == 1
    order = None
    if not shared:
        rows, order = np.unique(rows, return_inverse=True)  # requested rows = rows[order]
        E = _as(b, contexts if len(rows) == T else contexts[rows])
        E_max = _max_abs_over_tokens(b, E)  # (T', d), range-checked; |E| itself is never kept whole
        if E_rad is not None:
            E_rad = _as(b, E_rad if len(rows) == T else E_rad[rows])
            check_range(b, E_rad)
    mid = b.asarray(np.zeros((len(rows), len(cols))))
    rad = b.asarray(np.zeros((len(rows), len(cols))))
    heads = [int(h) for h in np.unique(cols // d)]
    width = (max(len(rows), n) * W_Q.shape[2]) if shared else len(rows) * d  # per head, in the group's arrays
    size = max(1, (HEAD_GROUP_BYTES // 8 if shared else HEAD_GROUP_BYTES) // max(1, width * 8))
    groups = [heads[i:i + size] for i in range(0, len(heads), size)]
    for group in groups:
        if shared:
            blocks = _shared_context_heads(b, contexts[0], queries, W_K, W_Q, group, rows, cols,
                                           E0_rad=None if E_rad is None else E_rad[0], q_rad=q_rad,
                                           K_rad=K_rad, Q_rad=Q_rad, accurate=accurate)
        else:
            blocks = _per_example_heads(b, E, E_max, queries, W_K, W_Q, group, rows, cols, E_rad=E_rad,
                                        q_rad=q_rad, K_rad=K_rad, Q_rad=Q_rad, accurate=accurate)
        for h, (z_mid, z_rad) in blocks.items():
            where = np.flatnonzero(cols // d == h)
            idx = where if not b.is_torch else __import__("torch").as_tensor(where, device=b.device)
            mid[:, idx] = z_mid
            rad[:, idx] = z_rad
    if order is not None and not np.array_equal(order, np.arange(len(rows))):
        idx = order if not b.is_torch else __import__("torch").as_tensor(order, device=b.device)
        mid, rad = mid[idx], rad[idx]
    return FloatBall(mid, rad)


def _input_radius(b, rad, mid_rad, W, X=None, W_rad=None):
    """``mid_rad + rad |W| + (|X| + rad) W_rad`` (floats, rounded up): the
    spread of ``X W`` over inputs within ``rad`` of the stored ones ``X`` and
    weights within ``W_rad`` of ``W`` (``rad``/``W_rad`` None: exact)."""
    if rad is not None:
        extra = nonneg_matmul_up(b, _as(b, rad), b.abs(W))
        mid_rad = extra if mid_rad is None else add_up(b, mid_rad, extra)
    if W_rad is not None:
        extra = nonneg_matmul_up(b, abs_upper(b, _as(b, X), None if rad is None else _as(b, rad)), W_rad)
        mid_rad = extra if mid_rad is None else add_up(b, mid_rad, extra)
    return mid_rad


def _head_slices(b, W, W_rad, group):
    """The heads of ``group`` side by side: (W, W_rad) (d, |group| d_h) on the backend."""
    mid = _as(b, np.concatenate([W[h] for h in group], axis=1))
    return mid, None if W_rad is None else _as(b, np.concatenate([np.asarray(W_rad[h]) for h in group], axis=1))


def _product(b, X, W, accurate: bool):
    """(mid, rad) of the exact ``X W`` (X, W float matrices): the accurate
    product (tight under cancellation), or one float product and its a
    priori bound (:func:`~verifier.arith.float_bounds.ball_matmul`)."""
    return accurate_matmul(b, X, W) if accurate else ball_matmul(b, X, None, W, None)


def _shared_context_heads(b, E0, queries, W_K, W_Q, group, rows, cols, *, E0_rad=None, q_rad=None, K_rad=None,
                          Q_rad=None, accurate: bool = True) -> dict:
    """{head: (mid, rad) of Z[rows, that head's requested columns]} for a shared
    context E0 (n, d): ``e W_Q`` and ``E0 W_K`` of every head of ``group`` in
    one product each (:func:`_product`; accurate: exact slice products, the
    same values as head by head, as in :func:`logits_float_ball`), then per
    head the logits, softmax and ``S E0``."""
    d = E0.shape[-1]
    d_h = W_Q.shape[2]
    e = _as(b, np.asarray(queries)[rows])
    WQ, WQ_rad = _head_slices(b, W_Q, Q_rad, group)
    WK, WK_rad = _head_slices(b, W_K, K_rad, group)
    p_mid, p_rad = _product(b, e, WQ, accurate)
    p_rad = _input_radius(b, None if q_rad is None else np.asarray(q_rad)[rows], p_rad, WQ, e, WQ_rad)
    k_mid, k_rad = _product(b, _as(b, E0), WK, accurate)
    k_rad = _input_radius(b, E0_rad, k_rad, WK, E0, WK_rad)
    out = {}
    for i, h in enumerate(group):
        sl = slice(i * d_h, (i + 1) * d_h)
        a_mid, a_rad = ball_matmul(b, p_mid[:, sl], p_rad[:, sl], k_mid[:, sl].T, k_rad[:, sl].T)
        s_mid, s_rad = softmax_float_ball(b, a_mid, a_rad)
        del a_mid, a_rad
        coords = cols[cols // d == h] % d
        out[h] = ball_matmul(b, s_mid, s_rad, _as(b, E0[:, coords]), None if E0_rad is None else
                             _as(b, np.asarray(E0_rad)[:, coords]))
    return out


def _max_abs_over_tokens(b, E):
    """max_i |E_ic| per example and coordinate (T', d), exact, after checking
    every entry as :func:`_abs_in_range` does; |E| formed a few examples at a
    time (:data:`ABS_CHUNK`)."""
    T, step = E.shape[0], _abs_step(E)
    parts = []
    for i in range(0, T, step):
        A = _abs_in_range(b, E[i:i + step])
        parts.append(A.amax(dim=1) if b.is_torch else np.max(A, axis=1))
    if not parts:
        return b.asarray(np.zeros((0, E.shape[2])))
    return _concat0(b, parts)


def _abs_in_range(b, E):
    """|E|, after checking (from |E| itself: one pass) that every entry is
    finite and at most 2^400 (:func:`check_range`'s contract)."""
    E_abs = b.abs(E)
    empty = (E_abs.numel() if b.is_torch else E_abs.size) == 0
    if not empty and not b.max(E_abs) <= MAG:  # NaN and inf fail the comparison
        raise FloatRangeError("an operand has NaN or infinite entries, or exceeds 2^400 in magnitude")
    return E_abs


def _stack_last(b, arrays):
    if b.is_torch:
        import torch

        return torch.stack(arrays, dim=-1)
    return np.stack(arrays, axis=-1)


def _per_example_heads(b, E, E_max, queries, W_K, W_Q, group, rows, cols, *, E_rad=None, q_rad=None, K_rad=None,
                       Q_rad=None, accurate: bool = True) -> dict:
    """{head: (mid, rad) of Z[rows, that head's requested columns]} for
    per-example contexts E (T', n, d), every head of ``group`` at once:
    ``e W_Q`` for all of them in one product (:func:`_product`; accurate: the
    same values as head by head), then ``E^(t) u_h^(t)`` and ``s_h^(t)^T
    E^(t)`` as products of E with (d, |group|) and (|group|, n) blocks per
    example (a priori bounds per entry, as in :func:`_per_example_products`)."""
    d = E.shape[-1]
    d_h = W_Q.shape[2]
    e = _as(b, np.asarray(queries)[rows])
    WQ, WQ_rad = _head_slices(b, W_Q, Q_rad, group)
    p_mid, p_rad = _product(b, e, WQ, accurate)  # (T', |group| d_h)
    p_rad = _input_radius(b, None if q_rad is None else np.asarray(q_rad)[rows], p_rad, WQ, e, WQ_rad)
    us = [ball_matmul(b, p_mid[:, i * d_h:(i + 1) * d_h], p_rad[:, i * d_h:(i + 1) * d_h], _as(b, W_K[h]).T,
                      None if K_rad is None else _as(b, np.asarray(K_rad[h])).T) for i, h in enumerate(group)]
    del p_mid, p_rad
    U, U_rad = _stack_last(b, [u for u, _ in us]), _stack_last(b, [r for _, r in us])  # (T', d, G)
    del us
    a_mid, a_rad = _per_example_products(b, E, None, U, U_rad)  # (T', n, G): |E| in chunks
    if E_rad is not None:  # inputs within E_rad: + E_rad (|U| + U_rad)
        a_rad = add_up(b, a_rad, nonneg_matmul_up(b, E_rad, abs_upper(b, U, U_rad)))
    del U, U_rad
    if b.is_torch:
        a_mid, a_rad = a_mid.transpose(1, 2).contiguous(), a_rad.transpose(1, 2).contiguous()
    else:
        a_mid, a_rad = np.ascontiguousarray(a_mid.transpose(0, 2, 1)), np.ascontiguousarray(a_rad.transpose(0, 2, 1))
    s_mid, s_rad = softmax_float_ball(b, a_mid, a_rad)  # (T', G, n), along the tokens
    del a_mid, a_rad
    z_mid, z_rad = _head_block_per_example(b, E, E_max, s_mid, s_rad)  # (T', G, d)
    if E_rad is not None:  # + sum_i (|s_i| + s_rad_i) E_rad_ic <= (sum_i (|s_i| + s_rad_i)) max_i E_rad_ic
        wsum = rowsum_up(b, abs_upper(b, s_mid, s_rad))[:, :, None]
        R_max = E_rad.amax(dim=1) if b.is_torch else np.max(E_rad, axis=1)
        z_rad = add_up(b, z_rad, up_scale(b, wsum * R_max[:, None, :], 1 / (1 - Fraction(1, 2**53)), SLACK))
    out = {}
    for i, h in enumerate(group):
        coords = cols[cols // d == h] % d
        idx = coords if not b.is_torch else __import__("torch").as_tensor(coords, device=b.device)
        out[h] = (z_mid[:, i][:, idx], z_rad[:, i][:, idx])
    return out


def _head_block_per_example(b, E, E_max, s_mid, s_rad):
    """z_h^(t) = s_h^(t)^T E^(t) for per-example contexts E (T', n, d; range-checked
    by the caller) and scores (T', G, n) of G heads: (T', G, d), without an |E|
    product: with w = gamma_n |s_mid| + s_rad (n-vectors per example and head),
    sum_i w_i |E_ic| <= (sum_i w_i) max_i |E_ic| (``E_max``: the max over tokens)."""
    check_range(b, s_mid, s_rad)
    n = E.shape[1]
    z = b.matmul(s_mid, E)  # (T', G, d)
    w = add_up(b, up_scale(b, b.abs(s_mid), gamma(n)), s_rad)
    wsum = rowsum_up(b, w)[:, :, None]  # (T', G, 1)
    rad = up_scale(b, wsum * E_max[:, None, :], 1 / (1 - U), 3 * n * UL + SLACK)  # + the product's rounding, underflow
    return z, rad
