"""The multi-head attention layer of the paper, Eqs. (1)-(8), written once.

Back ends: numpy float64 (this module), ball arithmetic (:mod:`verifier.model.mha_balls`)
and torch (:mod:`verifier.model.mha_torch`).  Shapes: contexts E (T, n, d),
queries e (T, d); per head h: W_Q^h, W_K^h (d, d_h), W_V^h (d, d_v);
W_O (H d_v, d); W_D (d, d_out).

    (1) a_h = E W_K^h (W_Q^h)^T e          (2) s_h = softmax(a_h)
    (3) z_h = E^T s_h                      (4) o_h = (W_V^h)^T z_h
    (5) o = W_O^T [o_1; ...; o_H] (+ e with the skip connection)
    (6) yhat = W_D^T o                     (7) Z[t] = [z_1^(t); ...; z_H^(t)]
    (8) Yhat = Z blockdiag(W_V^h) W_O W_D

Products are ordered so the logits cost T*H*(d*d_h + n*d), never T*n*d*d:
first p = W_Q^T e, then u = W_K p, then a = E u.  Stacks of per-example
products go through torch (:func:`verifier.arith.backend.batched_matmul`:
numpy's stacked matmul is ~30x slower).

>>> import numpy as np
>>> s = softmax(np.array([[1000.0, 0.0, -1000.0]]))   # log-domain: no overflow
>>> s.round(6).tolist()
[[1.0, 0.0, 0.0]]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.arith.backend import batched_matmul
from verifier.arith.balls import BallArray
from verifier.errors import InvalidInstance


@dataclass(frozen=True, eq=False)
class Weights:
    """All parameters of one layer.  W_Q, W_K: (H, d, d_h); W_V: (H, d, d_v);
    W_O: (H*d_v, d); W_D: (d, d_out)."""

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_D: np.ndarray

    def __post_init__(self):
        H, d, d_h = self.W_Q.shape
        if self.W_K.shape != (H, d, d_h):
            raise InvalidInstance(f"W_K has shape {self.W_K.shape}; expected {(H, d, d_h)}")
        if self.W_V.ndim != 3 or self.W_V.shape[:2] != (H, d):
            raise InvalidInstance(f"W_V has shape {self.W_V.shape}; expected (H, d, d_v) = ({H}, {d}, d_v)")
        d_v = self.W_V.shape[2]
        if self.W_O.shape != (H * d_v, d):
            raise InvalidInstance(f"W_O has shape {self.W_O.shape}; expected {(H * d_v, d)}")
        if self.W_D.ndim != 2 or self.W_D.shape[0] != d:
            raise InvalidInstance(f"W_D has shape {self.W_D.shape}; expected (d, d_out) with d = {d}")
        for name in ("W_Q", "W_K", "W_V", "W_O", "W_D"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise InvalidInstance(f"{name} has NaN or infinite entries")

    @property
    def H(self) -> int:
        return int(self.W_Q.shape[0])

    @property
    def d_h(self) -> int:
        return int(self.W_Q.shape[2])

    @property
    def d_v(self) -> int:
        return int(self.W_V.shape[2])

    @property
    def d_out(self) -> int:
        return int(self.W_D.shape[1])

    def attention_matrices(self) -> np.ndarray:
        """W^h = W_K^h (W_Q^h)^T, shape (H, d, d) (float64, rounded)."""
        return np.einsum("hik,hjk->hij", self.W_K, self.W_Q)

    def as_arrays(self) -> dict:
        return {k: getattr(self, k) for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")}


def softmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """Eq. (2) in the log domain: exp(a - max a) / sum exp(a - max a)."""
    m = np.max(a, axis=axis, keepdims=True)
    ex = np.exp(a - m)
    return ex / np.sum(ex, axis=axis, keepdims=True)


def is_shared(contexts) -> bool:
    """True when the contexts are one matrix broadcast over examples (stride 0):
    how :mod:`verifier.data.instances` stores shared contexts, so products become
    single matrix multiplications."""
    return contexts.ndim == 3 and contexts.shape[0] > 1 and contexts.strides[0] == 0


def select(contexts, rows) -> np.ndarray:
    """contexts[rows], keeping a shared context shared (no T x n x d copy)."""
    rows = np.asarray(rows, dtype=int)
    if isinstance(contexts, BallArray):
        return BallArray(select(contexts.mid, rows), None if contexts.rad is None else select(contexts.rad, rows))
    if is_shared(contexts):
        return np.broadcast_to(contexts[0], (len(rows),) + contexts.shape[1:])
    return contexts[rows]


def context_products(contexts, U) -> np.ndarray:
    """E^(t) u for every example: U (T, d) -> (T, n) or U (T, H, d) -> (T, H, n)."""
    if is_shared(contexts):
        return U @ contexts[0].T
    if U.ndim == 2:
        return batched_matmul(contexts, U[:, :, None])[:, :, 0]
    return batched_matmul(U, contexts.transpose(0, 2, 1))


def logits(contexts, queries, W_K, W_Q) -> np.ndarray:
    """Eq. (1) for every example and head: (T, H, n)."""
    p = np.matmul(queries[None], W_Q)  # W_Q^T e   (H, T, d_h)
    u = np.matmul(p, W_K.transpose(0, 2, 1))  # W_K p     (H, T, d)
    return context_products(contexts, u.transpose(1, 0, 2))


def logits_from_attention_matrices(contexts, queries, W) -> np.ndarray:
    """Eq. (1) with W^h given as (H, d, d) matrices: a = E (W^h e)."""
    u = np.matmul(queries[None], W.transpose(0, 2, 1))  # (H, T, d)
    return context_products(contexts, u.transpose(1, 0, 2))


def logits_from_factors(contexts, queries, L, R, rows=None, *, mm=np.matmul) -> np.ndarray:
    """Eq. (1) for ONE head whose attention matrix is given by factors,
    W = L R^T (L, R in R^{d x k}): a = E^(t) L (R^T e^(t)), shape (len(rows), n).
    Costs T d k + (shared) n d k + T k n, never d^2; ``mm`` computes the
    large products (e.g. a backend's, on a GPU)."""
    rows = np.arange(contexts.shape[0]) if rows is None else np.asarray(rows, dtype=int)
    q = mm(np.asarray(queries)[rows], R)  # R^T e   (T', k)
    if is_shared(contexts) or contexts.shape[0] == 1:
        return mm(q, mm(contexts[0], L).T)  # (R^T e)^T (E L)^T
    E = contexts if len(rows) == contexts.shape[0] and np.array_equal(rows, np.arange(len(rows))) else contexts[rows]
    return context_products(E, mm(q, L.T))  # E (L R^T e); no copy of the contexts when every row is asked for


def head_outputs(contexts, S) -> np.ndarray:
    """Eq. (3): z_h^(t) = E^(t)^T s_h^(t), shape (T, H, d)."""
    if is_shared(contexts):
        return S @ contexts[0]
    return batched_matmul(S, contexts)


def feature_matrix_from_scores(contexts, S) -> np.ndarray:
    """Eq. (7): Z in R^{T x Hd} from the softmax scores S (T, H, n)."""
    z = head_outputs(contexts, S)
    return z.reshape(z.shape[0], -1)


def feature_matrix(contexts, queries, W_K=None, W_Q=None, *, W=None) -> np.ndarray:
    """Eq. (7) from (W_K, W_Q) or from attention matrices W (H, d, d)."""
    a = logits_from_attention_matrices(contexts, queries, W) if W is not None \
        else logits(contexts, queries, W_K, W_Q)
    return feature_matrix_from_scores(contexts, softmax(a))


def readout(Z, weights: Weights, queries=None) -> np.ndarray:
    """Eqs. (4)-(6) from Z: o = W_O^T [W_V^h^T z_h]_h (+ e), yhat = W_D^T o."""
    T = Z.shape[0]
    H, d = weights.H, weights.W_Q.shape[1]
    z = Z.reshape(T, H, d)
    o_heads = np.einsum("thd,hdv->thv", z, weights.W_V).reshape(T, -1)  # (4)
    o = o_heads @ weights.W_O  # (5)
    if queries is not None:
        o = o + queries  # skip connection
    return o @ weights.W_D  # (6)


def forward(contexts, queries, weights: Weights, *, skip: bool = False) -> np.ndarray:
    """The whole layer, Eqs. (1)-(6): yhat (T, d_out)."""
    Z = feature_matrix(contexts, queries, weights.W_K, weights.W_Q)
    return readout(Z, weights, queries if skip else None)


def readout_matrix(weights: Weights) -> np.ndarray:
    """Eq. (8): blockdiag(W_V^1..W_V^H) W_O W_D, shape (H d, d_out)."""
    H, d, d_v = weights.W_V.shape
    WO = weights.W_O.reshape(H, d_v, d)
    return np.einsum("hdv,hve,eo->hdo", weights.W_V, WO, weights.W_D).reshape(H * d, -1)


def parameter_count(H: int, d: int, d_h: int, d_v: int, d_out: int) -> int:
    """H(2 d d_h + d d_v) + H d_v d + d d_out."""
    return H * (2 * d * d_h + d * d_v) + H * d_v * d + d * d_out
