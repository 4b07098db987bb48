"""Claim 1 (App. B.1): one head fits r examples' softmax targets exactly.

Statement
---------
Let r examples satisfy Assumptions 1-2 (contexts E^(t) of rank n, queries
linearly independent). For ANY targets s^(t) in the open simplex there is
W in R^{d x d} of rank <= r <= d_h with softmax(E^(t) W e^(t)) = s^(t).

Construction
------------
Logits a^(t) = log s^(t) (softmax is shift-invariant, any such logits do);
b^(t) = E^(t)+ a^(t), a right inverse since E^(t) has full row rank, so
E^(t) b^(t) = a^(t); then W e^(t) = b^(t) for the r independent queries:
W = B Q^+ with Q = [e^(1) ... e^(r)], B = [b^(1) ... b^(r)].
"""
from __future__ import annotations

import numpy as np

from verifier import model
from verifier.errors import ConstructionFailed


def interior_targets(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    """k random points of the open simplex in R^n (softmax of Gaussians)."""
    g = rng.standard_normal((k, n))
    g = np.exp(g - g.max(axis=1, keepdims=True))
    return g / g.sum(axis=1, keepdims=True)


def right_inverse(E: np.ndarray, t: int = 0) -> np.ndarray:
    """E^+ (d x n) with E E^+ = I_n; refuses a rank-deficient context."""
    U, sv, Vt = np.linalg.svd(E, full_matrices=False)
    if sv[-1] <= 1e-12 * max(sv[0], 1.0):
        raise ConstructionFailed("Claim 1", f"context of example {t} is rank deficient (Assumption 2 fails)")
    return (Vt.T / sv) @ U.T


def build_claim1_attention(contexts, queries, targets) -> np.ndarray:
    """W (d x d, rank <= k) with softmax(E^(t) W e^(t)) = s^(t) for the k given
    examples (contexts (k, n, d), queries (k, d), targets (k, n)).

    Raises ConstructionFailed("Claim 1", ...) when the queries are dependent
    (Assumption 1 fails) or a context is rank deficient (Assumption 2 fails).
    """
    queries = np.asarray(queries, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    k, n, d = contexts.shape
    if k == 0:
        return np.zeros((d, d))
    if np.any(targets <= 0):
        raise ConstructionFailed("Claim 1", "targets must lie in the open simplex (all entries > 0)")
    a = np.log(targets)  # logits with softmax(a) = s
    B = np.empty((d, k))
    if model.is_shared(contexts) or k == 1:
        B[:] = right_inverse(contexts[0], 0) @ a.T  # b = E^+ a, so E b = a
    else:
        for t in range(k):
            B[:, t] = right_inverse(contexts[t], t) @ a[t]
    Q = queries.T  # d x k
    sq = np.linalg.svd(Q, compute_uv=False)
    if k > d or sq[-1] <= 1e-12 * max(sq[0], 1.0):
        raise ConstructionFailed("Claim 1", f"the {k} queries are linearly dependent (Assumption 1 fails): "
                                 "W e^(t) = b^(t) has no solution")
    # W = B Q^+ = B (Q^T Q)^{-1} Q^T, computed by a least-squares solve.
    return B @ np.linalg.pinv(Q)
