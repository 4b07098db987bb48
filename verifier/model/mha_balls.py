"""Eqs. (1)-(8) in ball arithmetic (python-flint ``arb``): rigorous enclosures.

Every float64 input converts to a ball of radius 0 (floats are exact dyadic
rationals), so the balls returned here contain the exact value of the layer
for the given float64 weights and data.  Precision is the caller's: wrap calls
in :func:`verifier.arith.compare.workprec`.

>>> import numpy as np
>>> from verifier.arith.compare import workprec
>>> with workprec(128):
...     s = softmax_ball([arb(0), arb(0)])
>>> s[0].contains(0.5), s[0].rad() < 1e-30
(True, True)
"""
from __future__ import annotations

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import BallArray, to_arb_mat
from verifier.arith.structure import stack_scores
from verifier.model import mha as model
from verifier.model.mha import Weights


def _mat(A) -> arb_mat:
    """float64 array (a vector as a column) -> exact arb_mat; an arb_mat (e.g. a
    ball weight) passes through."""
    if isinstance(A, arb_mat):
        return A
    if isinstance(A, BallArray):
        return A.to_arb_mat()
    A = np.asarray(A, dtype=np.float64)
    return to_arb_mat(A[:, None] if A.ndim == 1 else A)


def softmax_ball(a) -> list:
    """Eq. (2) on a list of arb logits, shifted by the float max of the
    midpoints (an exact shift: softmax is shift-invariant)."""
    a = [x if isinstance(x, arb) else arb(x) for x in a]
    m = arb(max(float(x.mid()) for x in a))
    ex = [(x - m).exp() for x in a]
    total = sum(ex[1:], ex[0])
    return [x / total for x in ex]


def _row(M: arb_mat, i: int) -> list:
    return [M[i, j] for j in range(M.ncols())]


def logits_ball(contexts, queries, W_K=None, W_Q=None, *, W=None, rows=None):
    """Eq. (1) in balls as nested lists ``L[t][h] -> list of n arb`` for the
    examples in ``rows`` (default all), evaluated as u = W_K (W_Q^T e) (or
    u = W e), a = E u.  ``W`` is a sequence of d x d attention matrices, float64
    arrays or arb_mats (ball weights, e.g. W* + c W' formed exactly)."""
    queries = queries if isinstance(queries, BallArray) else np.asarray(queries, dtype=np.float64)
    rows = list(range(contexts.shape[0])) if rows is None else list(rows)
    H = len(W) if W is not None else W_K.shape[0]
    Q = _mat(queries[rows])  # (T', d)
    U = []
    for h in range(H):
        if W is not None:
            U.append(Q * _mat(W[h]).transpose())  # rows u_t^T = (W e_t)^T
        else:
            P = Q * _mat(W_Q[h])  # (T', d_h)
            U.append(P * _mat(W_K[h]).transpose())  # (T', d)
    if model.is_shared(contexts) or len(rows) == 1:
        Et = _mat(contexts[rows[0]]).transpose()  # (d, n)
        A = [U[h] * Et for h in range(H)]  # (T', n)
        return [[_row(A[h], i) for h in range(H)] for i in range(len(rows))]
    out = []
    for i, t in enumerate(rows):
        E = _mat(contexts[t])
        out.append([(E * _col(U[h], i)).entries() for h in range(H)])
    return out


def scores_ball(contexts, queries, W_K=None, W_Q=None, *, W=None, rows=None):
    """Eq. (2) on :func:`logits_ball`: ``S[t][h] -> list of n arb``."""
    L = logits_ball(contexts, queries, W_K, W_Q, W=W, rows=rows)
    return [[softmax_ball(a) for a in per_head] for per_head in L]


def scores_matrix_ball(contexts, queries, W_K=None, W_Q=None, *, W=None) -> arb_mat:
    """``S = [S_1 ... S_H]`` (T x Hn) enclosing the softmax scores of the
    model (:func:`scores_ball`): row t, block h is
    ``s_h^(t)``."""
    return stack_scores(scores_ball(contexts, queries, W_K, W_Q, W=W))


def _col(U: arb_mat, i: int) -> arb_mat:
    """Row i of U as a column vector (d x 1)."""
    return arb_mat([[U[i, j]] for j in range(U.ncols())])


def feature_matrix_ball(contexts, queries, W_K=None, W_Q=None, *, W=None, rows=None, cols=None) -> arb_mat:
    """Eq. (7): an arb_mat enclosing Z, restricted to ``rows`` and to the
    columns ``cols`` of R^{Hd} (column j is coordinate j % d of head j // d)."""
    rows = list(range(contexts.shape[0])) if rows is None else list(rows)
    S = scores_ball(contexts, queries, W_K, W_Q, W=W, rows=rows)
    return feature_matrix_from_scores_ball(model.select(contexts, rows), S, cols=cols)


def feature_matrix_from_scores_ball(contexts, S, *, cols=None) -> arb_mat:
    """Eq. (3)/(7) from ball scores ``S[t][h]``: row t = [E^(t)^T s_h^(t)]_h."""
    T, n, d = contexts.shape
    H = len(S[0])
    cols = list(range(H * d)) if cols is None else [int(j) for j in cols]
    by_head: dict[int, list[int]] = {}
    for j in cols:
        by_head.setdefault(j // d, []).append(j % d)
    shared = model.is_shared(contexts) or T == 1
    parts = {}  # head -> arb_mat (T x len(coords))
    for h, coords in by_head.items():
        if shared:
            parts[h] = arb_mat([S[t][h] for t in range(T)]) * _mat(contexts[0][:, coords])
        else:
            rows_h = []
            for t in range(T):
                Et = _mat(contexts[t][:, coords]).transpose()
                rows_h.append((Et * arb_mat([[x] for x in S[t][h]])).entries())
            parts[h] = arb_mat(rows_h)
    pos = {h: 0 for h in by_head}
    order = []
    for j in cols:
        h = j // d
        order.append((h, pos[h]))
        pos[h] += 1
    return arb_mat([[parts[h][t, i] for (h, i) in order] for t in range(T)])


def readout_matrix_ball(weights: Weights) -> arb_mat:
    """Eq. (8): blockdiag(W_V^h) W_O W_D as an arb_mat (H d x d_out)."""
    H, d, d_v = weights.W_V.shape
    WOD = _mat(weights.W_O) * _mat(weights.W_D)  # (H d_v, d_out)
    blocks = []
    for h in range(H):
        part = arb_mat([[WOD[h * d_v + i, j] for j in range(WOD.ncols())] for i in range(d_v)])
        blocks.append(_mat(weights.W_V[h]) * part)  # (d, d_out)
    return arb_mat([[B[i, j] for j in range(B.ncols())] for B in blocks for i in range(d)])


def forward_ball(contexts, queries, weights: Weights, *, skip: bool = False, Z: arb_mat | None = None) -> arb_mat:
    """Eqs. (1)-(6) in balls: an arb_mat (T x d_out) enclosing yhat."""
    if Z is None:
        Z = feature_matrix_ball(contexts, queries, weights.W_K, weights.W_Q)
    Y = Z * readout_matrix_ball(weights)
    if skip:
        Y = Y + _mat(queries) * _mat(weights.W_D)
    return Y
