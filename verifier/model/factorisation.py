"""Key/query weights from an attention matrix: ``W = W_K W_Q^T`` (Eq. 1).

Any d x d matrix of rank <= d_h factors as such a product with
``W_K, W_Q in R^{d x d_h}`` (thin SVD), so constructions build ``W^h`` and
factor it at the end.  A matrix of numerical rank above d_h is refused with
:class:`~verifier.errors.ConstructionFailed`: no key/query pair represents it.

>>> import numpy as np
>>> W = np.outer([1.0, 2.0, 0.0], [0.0, 1.0, 1.0])
>>> W_K, W_Q, rank = factor_attention(W, 1)
>>> rank, np.allclose(W_K @ W_Q.T, W)
(1, True)
"""
from __future__ import annotations

import numpy as np

from verifier.errors import ConstructionFailed


def factor_attention(W: np.ndarray, d_h: int, head: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """W = W_K W_Q^T with W_K, W_Q in R^{d x d_h} by a thin SVD; refuses rank W > d_h.

    For d >> d_h the SVD is taken on the range of W G (G a fixed Gaussian
    d x (d_h + 8) sketch), which holds the whole range when rank W <= d_h + 8
    and still exposes a singular value d_h + 1 when rank W > d_h."""
    d = W.shape[0]
    if d > d_h + 16:
        G = np.random.default_rng(12345).standard_normal((d, d_h + 8))
        Qr, _ = np.linalg.qr(W @ G)
        U, S, Vt = np.linalg.svd(Qr.T @ W, full_matrices=False)
        U = Qr @ U
    else:
        U, S, Vt = np.linalg.svd(W)
    tol = 1e-10 * max(S[0], 1e-300)
    rank = int(np.sum(S > tol))
    if rank > d_h:
        raise ConstructionFailed("factorisation", f"rank W^{head + 1} = {rank} exceeds d_h = {d_h}: "
                                 "W_K (W_Q)^T cannot represent it")
    k = min(d_h, d, len(S))
    root = np.sqrt(S[:k])
    W_K = np.zeros((d, d_h))
    W_Q = np.zeros((d, d_h))
    W_K[:, :k] = U[:, :k] * root
    W_Q[:, :k] = Vt[:k].T * root
    return W_K, W_Q, rank


def factor_product(L: np.ndarray, R: np.ndarray, d_h: int, head: int = 0) -> tuple[np.ndarray, np.ndarray, int, float]:
    """(W_K, W_Q, rank bound, relative error) with W_K W_Q^T = L R^T, W_K, W_Q in R^{d x d_h}.

    With k = L.shape[1] <= d_h the factors themselves, padded with zero
    columns, are the weights: W_K W_Q^T = L R^T EXACTLY and rank <= k is
    structural (error 0).  With k > d_h the product is compressed by a thin
    SVD of the small core (QR of L and of R, O(d k^2)) when its numerical
    rank allows; otherwise ConstructionFailed("factorisation").
    """
    d, k = L.shape
    W_K = np.zeros((d, d_h))
    W_Q = np.zeros((d, d_h))
    if k <= d_h:
        W_K[:, :k], W_Q[:, :k] = L, R
        return W_K, W_Q, k, 0.0
    QL, RL = np.linalg.qr(L)
    QR_, RR = np.linalg.qr(R)
    U, S, Vt = np.linalg.svd(RL @ RR.T)
    rank = int(np.sum(S > 1e-10 * max(S[0], 1e-300)))
    if rank > d_h:
        raise ConstructionFailed("factorisation", f"rank W^{head + 1} = {rank} exceeds d_h = {d_h}: "
                                 "W_K (W_Q)^T cannot represent it")
    root = np.sqrt(S[:d_h])
    W_K[:] = (QL @ U[:, :d_h]) * root
    W_Q[:] = (QR_ @ Vt[:d_h].T) * root
    W = L @ R.T
    err = float(np.abs(W_K @ W_Q.T - W).max() / max(np.abs(W).max(), 1e-300))
    return W_K, W_Q, rank, err

