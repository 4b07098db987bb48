"""Eqs. (4)-(6) on an enclosure of Z, with weights known to a precision:
enclosures of yhat and of the argmax margins yhat_j - yhat_c.

Two back ends, as for Z (:mod:`verifier.model.mha_float`, :mod:`verifier.model.mha_balls`):

* :func:`output_float_ball`: float64 balls on an array backend (numpy, torch
  CPU/CUDA), every product through :func:`~verifier.arith.float_bounds.ball_matmul`
  (a priori bounds valid for any summation order, radii on both operands);
* :func:`output_arb`: python-flint ``arb_mat`` (small T; the precision is the
  caller's ``workprec``).

The layer, in the order of the paper's equations (heads h, Z = [z_1 ... z_H]):

    (4) o_h = (W_V^h)^T z_h     (5) o = W_O^T [o_1; ...; o_H] (+ e)     (6) yhat = W_D^T o

A weight is a :class:`~verifier.arith.balls.BallArray` (``rad`` None: exact
floats); every returned ball contains the layer's value for EVERY weight,
context and query inside the given balls.

>>> import numpy as np
>>> from verifier.arith.balls import BallArray
>>> from verifier.arith.float_certificates import FloatBall
>>> W = {"W_V": BallArray(np.ones((1, 2, 1))), "W_O": BallArray(np.ones((1, 2))), "W_D": BallArray(np.eye(2))}
>>> mid, rad = output_float_ball(FloatBall(np.array([[1.0, 2.0]]), None), W)
>>> mid.tolist(), bool(rad.max() < 1e-14)
([[3.0, 3.0]], True)
"""
from __future__ import annotations

import numpy as np
from flint import arb_mat

from verifier.arith.backend import get_backend
from verifier.arith.balls import BallArray
from verifier.arith.float_bounds import SLACK, U, add_up, ball_matmul, up_scale

__all__ = ["output_float_ball", "margins_float_ball", "output_arb", "ball_sum"]


def _parts(b, x):
    """(mid, rad) on the backend of a BallArray / FloatBall / array (rad None: exact)."""
    mid, rad = (x.mid, x.rad) if hasattr(x, "mid") else (x, None)

    def as_b(a):
        return b.asarray(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else b.asarray(a)

    return as_b(mid), None if rad is None else as_b(rad)


def ball_sum(b, A, A_rad, B, B_rad, sign: float = 1.0):
    """(mid, rad) enclosing A + sign B for every A, B in the balls:
    ``|fl(x) - x| <= u |fl(x)|`` (rounding to nearest) plus the radii."""
    mid = A + B if sign > 0 else A - B
    rad = up_scale(b, b.abs(mid), U, SLACK)
    for r in (A_rad, B_rad):
        if r is not None:
            rad = add_up(b, rad, r)
    return mid, rad


def _heads_output(b, Z, W_V):
    """(4) for every head: (T, H d_v) ball from Z (T, H d) and W_V (H, d, d_v)."""
    Zm, Zr = _parts(b, Z)
    Vm, Vr = _parts(b, W_V)
    H, d, _ = Vm.shape
    parts = [ball_matmul(b, Zm[:, h * d:(h + 1) * d], None if Zr is None else Zr[:, h * d:(h + 1) * d], Vm[h],
                         None if Vr is None else Vr[h]) for h in range(H)]
    if b.is_torch:
        import torch

        return torch.cat([m for m, _ in parts], dim=1), torch.cat([r for _, r in parts], dim=1)
    return np.concatenate([m for m, _ in parts], axis=1), np.concatenate([r for _, r in parts], axis=1)


def token_output_float_ball(Z, weights: dict, queries=None, *, backend=None):
    """(mid, rad) of o (Eq. 5, T x d): ``weights`` W_V, W_O as BallArray;
    ``queries`` (array or BallArray) adds the skip connection."""
    b = get_backend(backend)
    Om, Or = _heads_output(b, Z, weights["W_V"])
    Wm, Wr = _parts(b, weights["W_O"])
    Om, Or = ball_matmul(b, Om, Or, Wm, Wr)
    if queries is not None:
        em, er = _parts(b, queries)
        Om, Or = ball_sum(b, Om, Or, em, er)
    return Om, Or


def output_float_ball(Z, weights: dict, queries=None, *, backend=None):
    """(mid, rad) of yhat (Eq. 6, T x d_out) for every point of the balls."""
    b = get_backend(backend)
    Om, Or = token_output_float_ball(Z, weights, queries, backend=b)
    Dm, Dr = _parts(b, weights["W_D"])
    return ball_matmul(b, Om, Or, Dm, Dr)


def margins_float_ball(Z, weights: dict, classes, queries=None, *, backend=None):
    """(mid, rad) of ``yhat_j - yhat_c`` (T x d_out; c = ``classes[t]``),
    computed as ``o (W_D[:, j] - W_D[:, c])`` (one product per class: tighter
    than the difference of two enclosures of yhat).  The column j = c is
    exactly 0 (mid 0, rad 0): ``yhat_c - yhat_c``."""
    b = get_backend(backend)
    Om, Or = token_output_float_ball(Z, weights, queries, backend=b)
    Dm, Dr = _parts(b, weights["W_D"])
    classes = np.asarray(classes, dtype=np.int64)
    T, C = classes.shape[0], Dm.shape[1]
    mid, rad = np.zeros((T, C)), np.zeros((T, C))
    to_np = b.to_numpy
    for c in np.unique(classes).tolist():
        rows = np.flatnonzero(classes == c)
        idx = rows if not b.is_torch else __import__("torch").as_tensor(rows, device=b.device)
        Gm, Gr = ball_sum(b, Dm, Dr, Dm[:, c:c + 1] + 0 * Dm, None if Dr is None else Dr[:, c:c + 1] + 0 * Dr, -1.0)
        m, r = ball_matmul(b, Om[idx], None if Or is None else Or[idx], Gm, Gr)
        m, r = to_np(m), to_np(r)
        m[:, c], r[:, c] = 0.0, 0.0
        mid[rows], rad[rows] = m, r
    return mid, rad


def _arb(x) -> arb_mat:
    from verifier.arith.balls import to_arb_mat

    if isinstance(x, arb_mat):
        return x
    if isinstance(x, BallArray):
        return x.to_arb_mat()
    return to_arb_mat(np.asarray(x, dtype=np.float64))


def output_arb(Z: arb_mat, weights: dict, queries=None) -> arb_mat:
    """Eqs. (4)-(6) in arb on an ``arb_mat`` Z (T x H d): an ``arb_mat``
    (T x d_out) enclosing yhat (the caller's working precision)."""
    V = weights["W_V"]
    H, d, d_v = V.shape
    T = Z.nrows()
    heads = []
    for h in range(H):
        Zh = arb_mat([[Z[t, h * d + i] for i in range(d)] for t in range(T)])
        heads.append(Zh * _arb(V[h]))
    O_heads = arb_mat([[heads[h][t, j] for h in range(H) for j in range(d_v)] for t in range(T)])
    O = O_heads * _arb(weights["W_O"])
    if queries is not None:
        O = O + _arb(queries)
    return O * _arb(weights["W_D"])
