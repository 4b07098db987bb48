"""Claim 2 (App. B.1): fit r-1 examples in one head, leave the rest intact.

Statement
---------
For a set J of r-1 examples (Assumptions 1-2) and any targets s^(j) in the
open simplex, W = W* + c W' with W* from Claim 1 on J and W' = v w^T from
Lemma 3 gives softmax(E^(j) W e^(j)) = s^(j) exactly on J (W' kills J's
queries, Eq. 20) and, for every other t, a softmax within eps (l1) of the
one-hot vector sbar^(t) = one-hot(argmax E^(t) W' e^(t)), which depends only
on W' and the data (Lemma 4). rank(W) <= (r-1) + 1 = r <= d_h.

Construction
------------
W* = build_claim1_attention(J); (v, w) = build_saturation_vectors(J);
c = max over the saturated examples of Lemma 4's c0(eps).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier import model
from verifier.errors import ConstructionFailed

from .claim1_fit_one_head import build_claim1_attention
from .lemma3_rank_one_saturation import build_saturation_vectors, saturation_profile
from .lemma4_softmax_saturation import logit_spread, saturation_constant


@dataclass(frozen=True)
class Claim2Construction:
    W: np.ndarray  # W* + c v w^T
    W_star: np.ndarray
    v: np.ndarray
    w: np.ndarray
    c: float
    eps: float
    saturated: tuple  # the examples saturated by W'
    istar: np.ndarray  # their argmax token
    gap: np.ndarray  # Lemma 3's gap g per saturated example
    spread: np.ndarray  # Lemma 4's R per saturated example


def build_claim2_attention(contexts, queries, J, targets, saturated, eps: float,
                           rng: np.random.Generator, *, vw=None, max_tries: int = 5) -> Claim2Construction:
    """W = W* + c v w^T; ``vw`` reuses a Lemma 3 pair chosen beforehand."""
    queries = np.asarray(queries, dtype=np.float64)
    J, saturated = list(J), list(saturated)
    n = contexts.shape[1]
    W_star = build_claim1_attention(model.select(contexts, J), queries[J], targets) if J \
        else np.zeros((contexts.shape[2],) * 2)
    for attempt in range(max_tries):
        v, w = vw if (vw is not None and attempt == 0) else build_saturation_vectors(queries, J, rng)
        if not saturated:
            return Claim2Construction(W_star, W_star, v, w, 0.0, eps, (), np.zeros(0, int),
                                      np.zeros(0), np.zeros(0))
        istar, gap, a = saturation_profile(contexts, queries, v, w, saturated)
        if np.all(gap > 1e-9 * max(np.abs(a).max(), 1e-300)):
            break
    else:
        raise ConstructionFailed("Lemma 3", "no W' with a unique maximum for every saturated example "
                                 "(a query lies in span of J's queries, or a context has repeated tokens)")
    base = model.context_products(model.select(contexts, saturated), queries[saturated] @ W_star.T)  # E (W* e)
    R = logit_spread(base, istar)
    c = max(saturation_constant(float(Rt), float(gt), eps, n) for Rt, gt in zip(R, gap))
    return Claim2Construction(W_star + c * np.outer(v, w), W_star, v, w, float(c), float(eps),
                              tuple(saturated), istar, gap, R)
