"""The attention-only transformer (AoT) of Dana, Pydi, Chevaleyre (AISTATS
2025), Eqs. (1)-(2), in numpy float64.

Back ends: numpy float64 (this module), ball arithmetic
(:mod:`verifier.model.aot_balls`, rigorous enclosures) and torch
(:mod:`verifier.model.aot_torch`, CUDA when present).  Tokens are 0-based
integers in [N]; a batch of sequences is an int array ``tokens`` (T, S).

    x(t, s)  = e(t_s) + pos_s                                 (App. A.1)
    (1)  raw^h_s = x(t,S)^T W_QK^h x(t,s),  a^h = softmax_s(raw^h),
         A^h(t)  = sum_s a^h_s x(t,s)                          (no 1/sqrt(d_h), no mask)
    (2)  T(t)    = W_U ( e(t_S) + pos_S + sum_h W_O^h W_V^h A^h(t) )   in R^N

with W_QK^h = (W_Q^h)^T W_K^h (W_Q^h, W_K^h, W_V^h in R^{d_h x d},
W_O^h in R^{d x d_h}, W_U in R^{N x d}); ``e(t_S) + pos_S`` is the skip.
The residual stream r(t) in R^d is what W_U reads: T(t) = W_U r(t).

>>> import numpy as np
>>> w = AoTWeights.zeros(N=3, S=2, d=2, d_h=1, H=1)
>>> logits(np.array([[0, 1]]), w).shape
(1, 3)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.errors import InvalidInstance

__all__ = ["AoTWeights", "embed", "attention_scores", "attention_outputs", "residual_stream", "logits",
           "log_softmax", "kl_divergence", "dkl", "argmax_memorized", "parameter_count"]


@dataclass(frozen=True, eq=False)
class AoTWeights:
    """All parameters of Eq. (2).  e (N, d), pos (S, d); per head W_Q, W_K,
    W_V (H, d_h, d) and W_O (H, d, d_h); W_U (N, d).  H = 0 is allowed (the
    skip alone)."""

    e: np.ndarray
    pos: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_U: np.ndarray

    def __post_init__(self):
        N, d = np.shape(self.e)
        S = np.shape(self.pos)[0]
        H, d_h = np.shape(self.W_Q)[0], np.shape(self.W_Q)[1] if np.ndim(self.W_Q) == 3 else 0
        want = {"pos": (S, d), "W_Q": (H, d_h, d), "W_K": (H, d_h, d), "W_V": (H, d_h, d),
                "W_O": (H, d, d_h), "W_U": (N, d)}
        for name, shape in want.items():
            if np.shape(getattr(self, name)) != shape:
                raise InvalidInstance(f"{name} has shape {np.shape(getattr(self, name))}; expected {shape}")
        for name in ("e", "pos", "W_Q", "W_K", "W_V", "W_O", "W_U"):
            a = getattr(self, name)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" and not np.all(np.isfinite(a)):
                raise InvalidInstance(f"{name} has NaN or infinite entries")

    @classmethod
    def zeros(cls, *, N: int, S: int, d: int, d_h: int, H: int) -> "AoTWeights":
        z = np.zeros
        return cls(z((N, d)), z((S, d)), z((H, d_h, d)), z((H, d_h, d)), z((H, d_h, d)), z((H, d, d_h)), z((N, d)))

    @property
    def sizes(self) -> dict:
        N, d = np.shape(self.e)
        return {"N": N, "S": np.shape(self.pos)[0], "d": d, "H": np.shape(self.W_Q)[0],
                "d_h": np.shape(self.W_Q)[1]}

    def attention_matrices(self) -> np.ndarray:
        """W_QK^h = (W_Q^h)^T W_K^h, shape (H, d, d)."""
        return np.einsum("hki,hkj->hij", self.W_Q, self.W_K)

    def as_arrays(self) -> dict:
        return {k: np.asarray(getattr(self, k), dtype=np.float64)
                for k in ("e", "pos", "W_Q", "W_K", "W_V", "W_O", "W_U")}


def parameter_count(*, N: int, S: int, d: int, d_h: int, H: int) -> int:
    """d(S + 2N + 4 d_h H): e, W_U (N d each), pos (S d), four d_h x d matrices per head (Thm. 1)."""
    return d * (S + 2 * N + 4 * d_h * H)


def _tokens(tokens, N: int | None = None) -> np.ndarray:
    t = np.asarray(tokens)
    if t.ndim != 2 or t.shape[1] < 1:
        raise InvalidInstance(f"token sequences must be a (T, S) integer array, got shape {t.shape}")
    if t.dtype.kind not in "iu":
        raise InvalidInstance(f"tokens must be integers, got dtype {t.dtype}")
    if t.size and (t.min() < 0 or (N is not None and t.max() >= N)):
        raise InvalidInstance(f"tokens must lie in [0, N) with N = {N}")
    return t.astype(np.intp)


def embed(tokens, e, pos) -> np.ndarray:
    """x(t, s) = e(t_s) + pos_s, shape (T, S, d)."""
    t = _tokens(tokens, np.shape(e)[0])
    if t.shape[1] != np.shape(pos)[0]:
        raise InvalidInstance(f"sequences of length {t.shape[1]} for {np.shape(pos)[0]} positions")
    return np.asarray(e)[t] + np.asarray(pos)[None, :, :]


def log_softmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    z = a - m
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def attention_scores(X: np.ndarray, W_QK: np.ndarray) -> np.ndarray:
    """Eq. (1): a^h (T, H, S) = softmax_s(x_S^T W_QK^h x_s)."""
    q = X[:, -1, :]  # (T, d): the query is the last token
    raw = np.einsum("ti,hij,tsj->ths", q, W_QK, X)
    return np.exp(log_softmax(raw, axis=-1))


def attention_outputs(X: np.ndarray, W_QK: np.ndarray) -> np.ndarray:
    """A^h(t) = sum_s a^h_s x(t, s), shape (T, H, d)."""
    return np.einsum("ths,tsd->thd", attention_scores(X, W_QK), X)


def residual_stream(tokens, w: AoTWeights) -> np.ndarray:
    """r(t) = e(t_S) + pos_S + sum_h W_O^h W_V^h A^h(t), shape (T, d)."""
    X = embed(tokens, w.e, w.pos)
    r = X[:, -1, :].copy()
    if np.shape(w.W_Q)[0]:
        A = attention_outputs(X, w.attention_matrices())
        r += np.einsum("hdk,hke,the->td", w.W_O, w.W_V, A)
    return r


def logits(tokens, w: AoTWeights) -> np.ndarray:
    """Eq. (2): T(t) = W_U r(t), shape (T, N)."""
    return residual_stream(tokens, w) @ np.asarray(w.W_U).T


def kl_divergence(p: np.ndarray, logit: np.ndarray) -> np.ndarray:
    """KL(p_t || softmax(logit_t)) per row (0 log 0 = 0)."""
    p = np.asarray(p, dtype=np.float64)
    lq = log_softmax(np.asarray(logit, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - lq), 0.0)
    return terms.sum(axis=-1)


def dkl(prior: np.ndarray, conditionals: np.ndarray, logit: np.ndarray) -> float:
    """d_KL(pi, T) = E_{t ~ pi} KL(pi_t || softmax T(t)) (float64)."""
    w = np.asarray(prior, dtype=np.float64)
    return float(np.dot(w / w.sum(), kl_divergence(conditionals, logit)))


def argmax_memorized(logit: np.ndarray, targets) -> np.ndarray:
    """Per row: the target's logit is the STRICT maximum (a tie fails)."""
    L = np.asarray(logit)
    g = np.asarray(targets, dtype=np.intp)
    own = L[np.arange(L.shape[0]), g]
    other = L.copy()
    other[np.arange(L.shape[0]), g] = -np.inf
    return own > other.max(axis=1)
