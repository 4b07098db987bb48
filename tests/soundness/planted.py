"""Planted-false instances (issue 9): objects for which a certificate saying
TRUE would be a lie.  Each ``refused_*`` function returns True when the
verifier refused to certify the false claim (as it must); the tests assert it,
and ``test_always_true.py`` shows each core certificate is what refuses.

Everything here is exact: integer or dyadic data, so the planted property
(singular, rank-capped, dependent) holds over Q, not just in floats.
"""
from __future__ import annotations

import numpy as np
from flint import arb_mat

from verifier.arith.compare import Decision, workprec
from verifier.arith.exact import exact_rank
from verifier.arith.float_certificates import sigma_min_lower_float
from verifier.arith.kruskal import kruskal_rank, kruskal_rank_at_least
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.data.instances import make_instance
from verifier.errors import InsufficientPrecision
from verifier.model.mha_balls import feature_matrix_ball

METHODS = ("arb", "float")


# --- exactly singular matrices ---------------------------------------------------

def singular_matrix(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """An n x n matrix of exact rank < n: integer products, a repeated-sum row,
    a dyadic column combination, or near-all-ones rows."""
    if kind == 0:  # B C with an (n-1)-dim inner dimension
        return rng.integers(-3, 4, (n, n - 1)).astype(float) @ rng.integers(-3, 4, (n - 1, n)).astype(float)
    if kind == 1:  # last row = sum of two others
        A = rng.integers(-5, 6, (n, n)).astype(float)
        A[-1] = A[0] + A[1] if n > 2 else A[0]
        return A
    if kind == 2:  # dyadic entries, last column a dyadic combination of the others
        A = rng.integers(-512, 513, (n, n)) / 256.0
        A[:, -1] = A[:, :-1] @ (rng.integers(-4, 5, n - 1) / 8.0)
        return A
    A = np.ones((n, n)) + np.diag(rng.integers(0, 2, n).astype(float))
    A[-1] = A[0]
    return A


def singular_family(seed: int = 0, count: int = 240, big=(60, 200)):
    """Many small singular matrices (2 <= n <= 7: where a loosened criterion bites)
    and a few large ones."""
    rng = np.random.default_rng(seed)
    out = [singular_matrix(rng, int(rng.integers(2, 8)), i % 4) for i in range(count)]
    out += [singular_matrix(rng, n, i % 3) for i, n in enumerate(big)]
    return out


def refused_singular(A: np.ndarray, *, methods=METHODS) -> bool:
    """No certificate calls the singular A nonsingular (rank n) or gives it a
    positive smallest singular value."""
    n = A.shape[0]
    assert exact_rank(A) < n, "planted matrix must be singular over Q"
    for m in methods:
        if n > 100 and m == "arb":
            continue  # the float path covers the large ones (arb at 200: ~7 s)
        if certify_rank_lower_bound(A, k=n, method=m).decision is Decision.TRUE:
            return False
    if n <= 100:
        for lower_bound in (sigma_min_lower_bound, sigma_min_lower_float):
            try:
                lower_bound(A)
                return False  # a positive lower bound of sigma_min of a singular matrix
            except InsufficientPrecision:
                pass
    return True


def rank_never_overclaimed(A: np.ndarray) -> bool:
    """k=None: the certified rank never exceeds the exact rank."""
    return certify_rank_lower_bound(A).certified_k <= exact_rank(A)


# --- feature matrices above a structural cap -----------------------------------------

def capped_feature_matrices(seed: int = 0):
    """(label, Z ball, cap): shared contexts above H(n-1)+1 and constant token
    sums above H(d-1)+1, for Gaussian, saturated and nearly uniform weights."""
    out = []
    for H, n, d, T, context, cap in ((2, 3, 5, 8, "shared", 5), (3, 4, 6, 14, "shared", 10),
                                     (6, 5, 8, 32, "shared", 25), (2, 3, 4, 10, "sumconst", 7),
                                     (3, 2, 4, 14, "sumconst", 10)):
        inst = make_instance(H=H, n=n, d=d, T=T, context=context, seed=seed)
        rng = np.random.default_rng([seed, H, n, d])
        W_K = rng.standard_normal((H, d, n)) / np.sqrt(d)
        W_Q = rng.standard_normal((H, d, n)) / np.sqrt(d)
        for scale in (1.0, 30.0, 1e-4):
            with workprec(128):
                Z = feature_matrix_ball(inst.contexts, inst.queries, scale * W_K, scale * W_Q)
            out.append((f"{context} H={H} n={n} d={d} T={T} scale={scale}", Z, cap))
    return out


def refused_above_cap(Z: arb_mat, cap: int, *, methods=METHODS) -> bool:
    """rank(Z) >= cap + 1 is never certified (Z is capped for ANY weights)."""
    return all(certify_rank_lower_bound(Z, k=cap + 1, method=m).decision is not Decision.TRUE for m in methods) \
        and certify_rank_lower_bound(Z).certified_k <= cap


# --- exactly dependent query subsets ----------------------------------------------

def dependent_queries(seed: int = 0, m: int = 12, d: int = 5, k: int = 4) -> np.ndarray:
    """m dyadic vectors in R^d where one k-subset is dependent over Q (the last
    vector a dyadic combination of k-1 others): Kruskal rank <= k - 1."""
    rng = np.random.default_rng(seed)
    V = rng.integers(-64, 65, (m, d)) / 32.0
    idx = rng.choice(m - 1, k - 1, replace=False)
    V[-1] = (rng.integers(1, 5, k - 1) / 4.0) @ V[idx]
    return V


def refused_dependent(V: np.ndarray, k: int) -> bool:
    """'every k-subset independent' is never certified; the exact witness is found."""
    res = kruskal_rank_at_least(V, k)
    full = kruskal_rank(V, exhaustive_limit=5000)
    return res.at_least(k) is not Decision.TRUE and full.lower < k
