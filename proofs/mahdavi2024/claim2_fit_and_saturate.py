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

Checks
------
J = the first min(r-1, T) examples, targets drawn from ``seed``, every other
example saturated; ``eps`` default 1e-3.

1. Hypotheses: n < d; rank E^(t) = n for every t (exact); Kruskal rank of
   the queries >= |J| + 1 (Lemma 3's hypothesis, implied by Assumption 1
   since |J| + 1 <= r <= n; exact by exhaustion when affordable, else
   evidence).  ConstructionFailed is caught and its step named.
2. c0(eps) certified: per saturated example, g and R in arb balls from the
   factored weights below, c_cert = a float >= max_t c0(eps, t); the
   checked c is the smallest power of two >= max(c_cert, builder's c), so
   c w is exact in float64 and c >= c0 is certain (``c=...`` overrides it).
3. The weights as the model stores them: W* factored at rank |J|
   (W_K^* W_Q^*T) and W' appended as one more column,
   W_K = [W_K^*, v], W_Q = [W_Q^*, c w] in R^{d x r}: rank W <= r is
   structural.  In arb balls (:func:`verifier.model.mha_balls.scores_ball`):
   max_{j in J, i} |s_i^(j) - target| certainly < ``tol`` (1e-10, as in
   Claim 1: W' e^(j) is 0 only up to float rounding, c |v| 1e-16 in the
   logits), and for t not in J ||s^(t) - one-hot(i*)||_1 = 2 sum_{i != i*} s_i
   certainly <= eps.  These decide.
4. The builder's float W = W* + c v w^T (its own c): the fit on J decides;
   its saturation is reported.  (Its c is c0(eps) in float64 with no
   margin, so at eps <~ 1e-14 it can miss eps by rounding: the reason says
   so -- a construction-precision matter, not the paper's.)
5. i* = argmax E^(t) W' e^(t) is certified unique (Eq. 21's gap > 0 in
   balls), so sbar^(t) is well defined and depends only on W' and the data.

Not established
---------------
"Exactly" on J is checked to ``tol`` on float weights (Claim 1's checker
has the exact identity).  Only one J (the first examples) and one eps.

References
----------
arXiv:2306.02010v3, App. B.1 (proof of Claim 2), App. D (Lemmas 3-4).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_claim2(make_instance(H=2, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, certainly_less_equal, certainly_positive, upper, workprec
from verifier.arith.kruskal import kruskal_rank_at_least
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed, InvalidInstance
from verifier.model import mha as model
from verifier.model.factorisation import factor_attention
from verifier.model.mha_balls import scores_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d
from .claim1_fit_one_head import (
    TOLERANCE,
    build_claim1_attention,
    contexts_full_row_rank,
    interior_targets,
    queries_independent,
)
from .lemma3_rank_one_saturation import build_saturation_vectors, saturation_profile
from .lemma4_softmax_saturation import (
    c0_ball,
    logit_spread,
    saturation_constant,
    saturation_constants_ball,
    saturation_logits,
)


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
    c *= 1.0 + 1e-9  # c0 is computed in float64: a relative margin keeps c >= the true c0
    return Claim2Construction(W_star + c * np.outer(v, w), W_star, v, w, float(c), float(eps),
                              tuple(saturated), istar, gap, R)


def base_factors(cons: Claim2Construction, k: int) -> tuple[np.ndarray, np.ndarray]:
    """W* factored at rank k (W_K^*, W_Q^* in R^{d x k}; zero columns when k = 0)."""
    if not k:
        d = cons.W_star.shape[0]
        return np.zeros((d, 0)), np.zeros((d, 0))
    W_K0, W_Q0, _ = factor_attention(cons.W_star, k)
    return W_K0, W_Q0


def factored_claim2_weights(cons: Claim2Construction, k: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """(W_K, W_Q) in R^{d x (k+1)}: W* factored at rank k, plus the column pair (v, c w)
    (exactly W_K^* W_Q^*T + c v w^T when c is a power of two)."""
    W_K0, W_Q0 = base_factors(cons, k)
    return np.hstack([W_K0, cons.v[:, None]]), np.hstack([W_Q0, (c * cons.w)[:, None]])


def ball_claim2_errors(contexts, queries, J, targets, saturated, istar, *, W=None, W_K=None, W_Q=None):
    """(max fit error on J, max l1 distance to one-hot off J) as arb balls."""
    S = scores_ball(contexts, queries, W=W[None]) if W is not None else \
        scores_ball(contexts, queries, W_K[None], W_Q[None])
    fit, sat = arb(0), arb(0)
    for j, t in enumerate(J):
        for i, s in enumerate(S[t][0]):
            fit = fit.max(abs(s - arb(float(targets[j, i]))))
    for t, i_star in zip(saturated, istar):
        s = S[t][0]
        sat = sat.max(2 * sum((s[i] for i in range(len(s)) if i != i_star), arb(0)))  # sum s = 1
    return fit, sat


def _kruskal_hypothesis(queries, k: int, saturated: bool, limit: int, seed: int) -> Hypothesis:
    if not saturated:
        return queries_independent(queries[:k], f"queries of J (|J| = {k})")
    kr = kruskal_rank_at_least(queries, k + 1, exhaustive_limit=limit, seed=seed)
    status = {Decision.TRUE: "certified", Decision.FALSE: "refuted", Decision.UNDECIDED: "evidence"}[kr.at_least(k + 1)]
    return Hypothesis(f"Kruskal rank of the queries >= |J| + 1 = {k + 1} (Lemma 3; Assumption 1)", status,
                      f"kr in [{kr.lower}, {kr.upper}]" + (f", witness {list(kr.witness)}" if kr.witness else ""))


@statement("claim2", H=2, n=3, d=5)
def check_claim2(instance, *, prec: int = 128, seed: int = 0, eps: float = 1e-3, tol: float = TOLERANCE,
                 c: float | None = None, exhaustive_limit: int = 20000, **options) -> Evidence:
    """Claim 2 with J = the first r-1 examples; ``c`` overrides the construction's c."""
    if not 0 < eps < 2:
        raise InvalidInstance(f"eps = {eps} must be in (0, 2)")
    E, e = instance.contexts, np.asarray(instance.queries)
    T, n, r = instance.T, instance.n, instance.r
    k = min(r - 1, T)
    J, saturated = list(range(k)), list(range(k, T))
    rng = rng_for(seed, "claim2")
    targets = interior_targets(rng, k, n)
    hyps = [n_less_than_d(instance), contexts_full_row_rank(E, range(T)),
            _kruskal_hypothesis(e, k, bool(saturated), exhaustive_limit, seed)]
    trail = [Step(f"J = first {k} examples (r - 1), {len(saturated)} saturated; targets from seed {seed}",
                  uses="Claim 2"), Step("hypotheses", uses="Assumptions 1-2, Lemma 3",
                                        data={h.name: h.status for h in hyps})]
    claimed = {"fit on J": f"|s - target| < {tol}", "off J": f"||s - one-hot||_1 <= {eps}", "rank W <=": r}
    try:
        cons = build_claim2_attention(E, e, J, targets, saturated, eps, rng)
    except ConstructionFailed as exc:
        trail.append(Step(f"construction stopped: {exc}", uses=exc.step))
        return conclude("claim2", Decision.UNDECIDED, claimed=claimed, measured={"|J|": k}, hypotheses=hyps,
                        certified=True, method="arb balls", prec_bits=prec, tolerance=tol,
                        instance=instance.summary(), trail=trail, reason=f"construction failed at {exc.step}: {exc}")
    W_K0, W_Q0 = base_factors(cons, k)
    decisions, certs, worst = [], [], {"fit": [], "sat": []}
    with workprec(prec):  # Eq. (21) gaps and a certified c0(eps) from the factored weights
        gaps, c_cert = [], 0.0
        for t, i_star in zip(saturated, cons.istar):
            b, ap = saturation_logits(E[t], e[t], W_K0, cons.v, cons.w, W_Q=W_Q0)
            if n == 1:
                continue
            R, g = saturation_constants_ball(b, ap, i_star)
            gaps.append(certainly_positive(g))
            if gaps[-1] is Decision.TRUE:
                c_cert = max(c_cert, upper(c0_ball(R, g, eps, n)))
        gap = Decision.all(gaps) if gaps else Decision.TRUE
        decisions.append(gap)
        top = max(c_cert, cons.c)
        c_used = float(c) if c is not None else 2.0 ** math.ceil(math.log2(top)) if top > 0 else 0.0
        W_K, W_Q = factored_claim2_weights(cons, k, c_used)
        W_builder = cons.W if c is None else cons.W_star + c_used * np.outer(cons.v, cons.w)
        for name, kw in ((f"factored W_K W_Q^T (d x {W_K.shape[1]} factors), c = {c_used}", {"W_K": W_K, "W_Q": W_Q}),
                         (f"builder's float W, c = {cons.c if c is None else c_used}", {"W": W_builder})):
            fit, sat = ball_claim2_errors(E, e, J, targets, saturated, cons.istar, **kw)
            dfit = certainly_less(fit, tol) if J else Decision.TRUE
            dsat = certainly_less_equal(sat, arb(eps)) if saturated else Decision.TRUE
            decisions += [dfit] if "builder" in name and c is None else [dfit, dsat]  # see the reason below
            worst["fit"].append(upper(fit))
            worst["sat"].append(upper(sat))
            certs.append({"kind": f"arb balls: {name}", "max fit error on J": str(fit), "fit < tol": dfit.value,
                          "max l1 distance to one-hot off J": str(sat), "<= eps": dsat.value, "prec_bits": prec})
    certs.append({"kind": "rank W <= r: W = W_K W_Q^T with inner dimension", "inner dimension": int(W_K.shape[1]),
                  "r": r, "d_h": instance.d_h, "Eq. (21) gaps certified > 0": gap.value})
    decision = Decision.all(decisions)
    measured = {"|J|": k, "saturated": len(saturated), "c": c_used, "c (builder, float c0)": cons.c,
                "c0(eps) <= (certified)": c_cert, "eps": eps, "max fit error (upper)": max(worst["fit"]),
                "max l1 off J (upper)": worst["sat"][0], "max l1 off J, builder's W (upper)": worst["sat"][1],
                "rank W <=": int(W_K.shape[1])}
    reason = ""
    if decision is Decision.TRUE and certs[1]["<= eps"] != "true":
        reason = (f"verified with c = {c_used} (a power of two >= the certified c0 = {c_cert}); the builder's "
                  f"float c = {cons.c} misses eps by rounding (l1 {worst['sat'][1]:.17g} vs eps {eps:g})")
    trail += [Step("W* from Claim 1 on J; W' = v w^T from Lemma 3; c = max c0(eps) from Lemma 4",
                   uses="Claims 1-2, Lemmas 3-4", data={"c": c_used, "eps": eps}),
              Step("softmax of W_K W_Q^T and of the builder's W in arb balls", uses="Claim 2",
                   data={"decision": decision.value, "max l1 off J": measured["max l1 off J (upper)"]})]
    return conclude("claim2", decision, claimed=claimed, measured=measured, hypotheses=hyps, certified=True,
                    method="arb balls", prec_bits=prec, tolerance=tol,
                    margin=eps - measured["max l1 off J (upper)"], certificates=certs,
                    instance=instance.summary(), trail=trail, reason=reason)


@negative_control("claim2", "c = 0 (no saturation): the examples off J are not within eps of one-hot",
                  expect=("refuted",))
def control_claim2_no_saturation(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim2(make_instance(H=2, n=3, d=5, seed=0), prec=prec, seed=0, c=0.0)


@negative_control("claim2", "every query equal (Assumption 1 fails): Claim 1 on J has no solution",
                  expect=("hypotheses-unmet",))
def control_claim2_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim2(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=0), prec=prec, seed=0)
