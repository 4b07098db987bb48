"""Lemma 3 (App. D): the rank-one saturation matrix.

Statement
---------
Let every E^(t) have full row rank and J be a set of indices with |J| < the
Kruskal rank of the queries. There is a rank-one W' = v w^T with
    W' e^(t) = 0                                  for t in J,        (20)
    the n entries of E^(t) W' e^(t) pairwise distinct, for t not in J. (21)

Construction
------------
w = the projection of a Gaussian vector onto span{e^(j): j in J}^perp (so
w^T e^(j) = 0 and, a.s., w^T e^(t) != 0 off J since e^(t) is outside that
span by the Kruskal rank); v Gaussian, so E^(t) v has distinct entries a.s.
"""
from __future__ import annotations

import numpy as np

from verifier import model
from verifier.errors import ConstructionFailed


def build_saturation_vectors(queries, J, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(v, w) with W' = v w^T and w orthogonal to the queries indexed by J."""
    queries = np.asarray(queries, dtype=np.float64)
    d = queries.shape[1]
    J = list(J)
    g = rng.standard_normal(d)
    v = rng.standard_normal(d)
    if J:
        QJ = queries[J].T  # d x |J|
        U, s, _ = np.linalg.svd(QJ, full_matrices=False)
        if len(J) > d or s[-1] <= 1e-12 * max(s[0], 1.0):
            raise ConstructionFailed("Lemma 3", "the queries in J are dependent: |J| >= their Kruskal rank")
        g = g - U @ (U.T @ g)
        g = g - U @ (U.T @ g)  # second pass: re-orthogonalize
    return v, g / np.linalg.norm(g)


def saturation_profile(contexts, queries, v, w, rows):
    """For each t in rows: the logits a'^(t) = E^(t) W' e^(t) = (w.e^(t)) E^(t) v,
    the argmax i*(t) and the gap g(t) = a'_(1) - a'_(2) between the largest
    two entries (Eq. 21 asks g > 0). Returns (argmax, gap, logits)."""
    rows = list(rows)
    Ev = model.context_products(model.select(contexts, rows), np.broadcast_to(v, (len(rows), len(v))))
    a = (np.asarray(queries)[rows] @ w)[:, None] * Ev  # (k, n)
    order = np.sort(a, axis=1)
    gap = order[:, -1] - order[:, -2] if a.shape[1] > 1 else np.full(a.shape[0], np.inf)
    return np.argmax(a, axis=1), gap, a
