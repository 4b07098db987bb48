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
2. The conclusion, decided on the EXACT weights W = W* + c v w_ex^T:
   W* = B P from Claim 1 on J over Q (:func:`~.claim1_fit_one_head.exact_fit_decision`;
   balls of the exact B, P above ``EXACT_LIMIT``), w_ex = the builder's w made
   exactly orthogonal to J's queries (:func:`~.lemma3_rank_one_saturation.exact_orthogonal_part`),
   v the builder's.  Fit on J: E W* e = a exactly and w_ex^T e^(j) = 0
   exactly, so E W e = a = log s on J exactly (the balls of the logits
   must contain a: a consistency check that can refute the algebra).  c0(eps): g and R of every saturated example in balls from
   these weights; c = the smallest power of two >= max(c0 upper, builder's c)
   (``c=...`` pins it: a negative control).  Off J: ||s^(t) - one-hot(i*)||_1
   = 2 sum_{i != i*} s_i enclosed in balls, certainly <= eps decides.
   i* is certified unique (Eq. 21's gap > 0 in balls).  rank W <= |J| + 1
   <= r: inner dimensions (B P has k columns, v w^T one).
3. The float64 weights (W* factored at rank |J| with (v, c w) appended, and
   the builder's W): fit and saturation enclosed in balls and REPORTED, as
   a precision note beside the exact certificate; a float miss is never a
   refutation.

Not established
---------------
Only one J (the first examples) and one eps.

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
from flint import arb, arb_mat, fmpq, fmpq_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, certainly_less_equal, certainly_positive, upper, workprec
from verifier.arith.exact import to_fmpq_vector
from verifier.arith.structure import ball_contains_rational
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed, InsufficientPrecision, InvalidInstance
from verifier.model import mha as model
from verifier.model.factorisation import factor_attention
from verifier.model.mha_balls import logits_ball, scores_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d
from .claim1_fit_one_head import (
    EXACT_LIMIT,
    TOLERANCE,
    build_claim1_attention_exact,
    build_claim1_factors,
    claim1_weights_ball,
    exact_fit_decision,
    interior_targets,
)
from .data_hypotheses import contexts_full_row_rank, queries_independent, queries_kruskal_at_least
from .lemma3_rank_one_saturation import (
    build_saturation_vectors,
    exact_orthogonal_part,
    orthogonal_part_ball,
    saturation_profile,
)
from .lemma4_softmax_saturation import (
    c0_ball,
    largest_saturation_constant,
    logit_spread,
    saturation_constants_ball,
)

GAP_RTOL = 64 * np.finfo(np.float64).eps  # float gap of Eq. (21) below this: try another W'


@dataclass(frozen=True)
class Claim2Construction:
    """W = W* + c v w^T with W* = B P (Claim 1's factors on J), kept factored:
    ``W`` and ``W_star`` are formed only when asked for (d x d)."""

    B: np.ndarray  # d x |J|
    P: np.ndarray  # |J| x d
    v: np.ndarray
    w: np.ndarray
    c: float
    eps: float
    saturated: tuple  # the examples saturated by W'
    istar: np.ndarray  # their argmax token
    gap: np.ndarray  # Lemma 3's gap g per saturated example
    spread: np.ndarray  # Lemma 4's R per saturated example

    @property
    def W_star(self) -> np.ndarray:
        return self.B @ self.P

    @property
    def W(self) -> np.ndarray:
        return self.W_star + self.c * np.outer(self.v, self.w) if self.c else self.W_star


def build_claim2_attention(contexts, queries, J, targets, saturated, eps: float,
                           rng: np.random.Generator, *, vw=None, max_tries: int = 5,
                           W_star: np.ndarray | None = None, profile=None) -> Claim2Construction:
    """W = W* + c v w^T (factored: W* = B P, Claim 1's factors); ``vw`` reuses a
    Lemma 3 pair chosen beforehand, ``W_star`` a Claim 1 matrix built
    elsewhere (e.g. the exact one, rounded; then B = W_star, P = I);
    ``profile``: :func:`saturation_profile` of that pair on ``saturated``,
    already computed by the caller (used with ``vw`` on the first try)."""
    queries = np.asarray(queries, dtype=np.float64)
    J, saturated = list(J), list(saturated)
    n, d = contexts.shape[1], contexts.shape[2]
    if W_star is not None:
        B, P = np.asarray(W_star, dtype=np.float64), np.eye(d)
    elif J:
        B, P = build_claim1_factors(model.select(contexts, J), queries[J], targets)
    else:
        B, P = np.zeros((d, 0)), np.zeros((0, d))
    for attempt in range(max_tries):
        v, w = vw if (vw is not None and attempt == 0) else build_saturation_vectors(queries, J, rng)
        if not saturated:
            return Claim2Construction(B, P, v, w, 0.0, eps, (), np.zeros(0, int), np.zeros(0), np.zeros(0))
        first = vw is not None and attempt == 0 and profile is not None
        istar, gap, a = profile if first else saturation_profile(contexts, queries, v, w, saturated)
        if np.all(gap > GAP_RTOL * np.abs(a).max(axis=1)):  # a few ulps: the float argmax is meaningful
            break
    else:
        raise ConstructionFailed("Lemma 3", "no W' with a unique maximum for every saturated example "
                                 "(a query lies in span of J's queries, or a context has repeated tokens)")
    base = model.logits_from_factors(contexts, queries, B, P.T, rows=saturated)  # E (W* e), W* = B P
    R = logit_spread(base, istar)
    c = largest_saturation_constant(R, gap, eps, n)
    c *= 1.0 + 1e-9  # c0 is computed in float64: a relative margin keeps c >= the true c0
    return Claim2Construction(B, P, v, w, float(c), float(eps), tuple(saturated), istar, gap, R)


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
    """(the differences s_i^(j) - target for j in J, max l1 distance to one-hot
    off J) as arb balls; ``W`` a one-element list of float or ball matrices."""
    S = scores_ball(contexts, queries, W=W) if W is not None else \
        scores_ball(contexts, queries, W_K[None], W_Q[None])
    diffs, sat = [], arb(0)
    for j, t in enumerate(J):
        diffs += [s - arb(float(targets[j, i])) for i, s in enumerate(S[t][0])]
    for t, i_star in zip(saturated, istar):
        s = S[t][0]
        sat = sat.max(2 * sum((s[i] for i in range(len(s)) if i != i_star), arb(0)))  # sum s = 1
    return diffs, sat


def _kruskal_hypothesis(instance, k: int, saturated: bool, limit: int, seed: int) -> Hypothesis:
    if not saturated:
        return queries_independent(instance, range(k), f"queries of J (|J| = {k})")
    return queries_kruskal_at_least(instance, k + 1, f"Kruskal rank of the queries >= |J| + 1 = {k + 1} (Lemma 3; "
                                    "Assumption 1)", exhaustive_limit=limit, seed=seed)


def exact_claim2_weights(E, e, J, targets, cons: Claim2Construction, *, prec: int,
                         orthogonalize: bool = True) -> dict:
    """W* (Claim 1 on J, exact) and w_ex (exact orthogonal part of the builder's w)
    as arb balls, with the exact facts that make the fit on J exact."""
    k = len(J)
    EJ, eJ = model.select(E, J), e[J]
    logits = np.log(targets)
    fit_dec, fit_cert = exact_fit_decision(EJ, eJ, logits, prec=prec) if k else \
        (Decision.TRUE, {"kind": "J empty: nothing to fit"})
    d = E.shape[2]
    with workprec(prec):
        if k and EJ.shape[0] * EJ.shape[1] * d <= EXACT_LIMIT:
            B, P = build_claim1_attention_exact(EJ, eJ, logits)
            W_star = arb_mat(B) * arb_mat(P)
            w_ex = exact_orthogonal_part(cons.w, eJ) if orthogonalize else to_fmpq_vector(cons.w)
            kills = all(sum((wi * xi for wi, xi in zip(w_ex, to_fmpq_vector(x))), fmpq(0)) == 0 for x in eJ)
            w_ball = arb_mat(fmpq_mat(d, 1, w_ex))
            how = "exact rationals (fmpq), enclosed in balls"
        elif k:
            B, P = claim1_weights_ball(EJ, eJ, logits)
            W_star, w_ball, kills = B * P, orthogonal_part_ball(cons.w, eJ), True  # exact by the algebra
            how = "balls of the exact B, P, w_ex (Q^T Q, E E^T, Q_J Q_J^T certainly invertible)"
        else:
            W_star, w_ball, kills = arb_mat(d, d), to_arb_mat(cons.w[:, None]), True
            how = "J empty"
        Wp = to_arb_mat(cons.v[:, None]) * w_ball.transpose()
    fit = Decision.all([fit_dec, Decision.TRUE if kills else Decision.FALSE])
    return {"W_star": W_star, "Wp": Wp, "fit": fit, "how": how,
            "cert": {**fit_cert, "w_ex^T e^(j) = 0 exactly for j in J (Eq. 20)": kills}}


def _saturation_c(E, e, saturated, istar, W_star, Wp, eps: float, n: int) -> tuple[Decision, float]:
    """(Eq. 21 gaps certified > 0, a float >= max_t c0(eps, t)) from ball weights."""
    gaps, c_cert = [], 0.0
    if n == 1 or not saturated:
        return Decision.TRUE, 0.0
    L = logits_ball(E, e, W=[W_star, Wp], rows=saturated)
    for (b, ap), i_star in zip(L, istar):
        R, g = saturation_constants_ball(b, ap, i_star)
        gaps.append(certainly_positive(g))
        if gaps[-1] is Decision.TRUE:
            c_cert = max(c_cert, upper(c0_ball(R, g, eps, n)))
    return Decision.all(gaps), c_cert


#: our W = W* + c v w^T missed (a tied W' gap, Claim 1's exact fit, the balls' consistency, or Lemma 4's c):
#: Claim 2 says SOME c and W' work, so this is a failed construction (a Lemma 4 failure is lemma4's to refute)
CONSTRUCTION_MISSED = Refutation("failed-construction", "W = W* + c v w^T with the drawn W' (up to 5 draws) and "
                                 "Lemma 4's c missed a check (a tied gap, the exact fit, or eps off J)")
#: the caller's c (e.g. 0): the l1 distance off J certainly above eps for THAT c
C_PINNED = Refutation("counterexample", "the l1 distance to one-hot off J certainly exceeds eps at the caller's c "
                      "(exact weights, arb balls)", variant="c=...: the saturation scale pinned")
#: the caller kept the float w: W' e^(j) != 0 exactly, the exact fit on J fails for THAT W'
W_PINNED = Refutation("counterexample", "w^T e^(j) != 0 exactly for the float w: the fit on J fails exactly",
                      variant="orthogonalize=False: W' pinned to the float w")


@statement("claim2",
           requires=("n < d", "Assumption 1", "Assumption 2"), exists=True,
           refutes=(CONSTRUCTION_MISSED, C_PINNED, W_PINNED),
           margin="eps - max l1 distance to one-hot off J",
           measure="max l1 off J (upper)", H=2, n=3, d=5)
def check_claim2(instance, *, prec: int = 128, seed: int = 0, eps: float = 1e-3, tol: float = TOLERANCE,
                 c: float | None = None, exhaustive_limit: int = 20000, orthogonalize: bool = True,
                 **options) -> Evidence:
    """Claim 2 with J = the first r-1 examples; ``c`` pins the saturation scale and
    ``orthogonalize=False`` keeps the float w (negative controls)."""
    if not 0 < eps < 2:
        raise InvalidInstance(f"eps = {eps} must be in (0, 2)")
    E, e = instance.contexts, np.asarray(instance.queries)
    T, n, r = instance.T, instance.n, instance.r
    k = min(r - 1, T)
    J, saturated = list(range(k)), list(range(k, T))
    rng = rng_for(seed, "claim2")
    targets = interior_targets(rng, k, n)
    hyps = [n_less_than_d(instance), contexts_full_row_rank(instance, range(T)),
            _kruskal_hypothesis(instance, k, bool(saturated), exhaustive_limit, seed)]
    trail = [Step(f"J = first {k} examples (r - 1), {len(saturated)} saturated; targets from seed {seed}",
                  uses="Claim 2"), Step("hypotheses", uses="Assumptions 1-2, Lemma 3",
                                        data={h.name: h.status for h in hyps})]
    claimed = {"fit on J": "exact", "off J": f"||s - one-hot||_1 <= {eps}", "rank W <=": r}
    try:
        state = rng.bit_generator.state
        try:
            cons = build_claim2_attention(E, e, J, targets, saturated, eps, rng)
        except ConstructionFailed as exc:  # float64 Claim 1 gave up: W* = the exact one, rounded
            if exc.step != "Claim 1" or not J:
                raise
            rng.bit_generator.state = state
            B, P = build_claim1_attention_exact(model.select(E, J), e[J], np.log(targets))
            W_star = np.array([[float(x) for x in row] for row in (B * P).tolist()])
            cons = build_claim2_attention(E, e, J, targets, saturated, eps, rng, W_star=W_star)
            trail.append(Step(f"float64 Claim 1 stopped ({exc}); W* = the exact W*, rounded", uses="Claim 1"))
        ex = exact_claim2_weights(E, e, J, targets, cons, prec=prec, orthogonalize=orthogonalize)
    except (ConstructionFailed, InsufficientPrecision) as exc:
        step = getattr(exc, "step", "exact weights")
        trail.append(Step(f"construction stopped: {exc}", uses=step))
        return conclude("claim2", Decision.UNDECIDED, claimed=claimed, measured={"|J|": k}, hypotheses=hyps,
                        method="arb balls", prec_bits=prec, instance=instance.summary(), trail=trail,
                        reason=f"construction failed at {step}: {exc}")
    with workprec(prec):
        gap, c_cert = _saturation_c(E, e, saturated, cons.istar, ex["W_star"], ex["Wp"], eps, n)
        top = max(c_cert, cons.c)
        c_used = float(c) if c is not None else 2.0 ** math.ceil(math.log2(top)) if top > 0 else 0.0
        W_exact = ex["W_star"] + arb(c_used) * ex["Wp"]
        _, sat = ball_claim2_errors(E, e, J, targets, saturated, cons.istar, W=[W_exact])
        logits_J = logits_ball(E, e, W=[W_exact], rows=J) if J else []  # E W e = a = log s exactly
        consistent = all(ball_contains_rational(x, a) for per_head, a_t in zip(logits_J, np.log(targets))
                         for x, a in zip(per_head[0], a_t.tolist()))
        dsat = certainly_less_equal(sat, arb(eps)) if saturated else Decision.TRUE
        decision = Decision.all([gap, ex["fit"], Decision.TRUE if consistent else Decision.FALSE, dsat])
        certs = [{"kind": f"exact weights W* + c v w_ex^T ({ex['how']}), c = {c_used}", **ex["cert"],
                  "logits on J contain log s (balls)": consistent,
                  "max l1 distance to one-hot off J (ball)": str(sat), "<= eps": dsat.value,
                  "Eq. (21) gaps certified > 0": gap.value, "prec_bits": prec},
                 {"kind": "rank W <= r: W* = B P (inner dimension |J|) + rank-one v w^T",
                  "inner dimension": k + 1, "r": r, "d_h": instance.d_h}]
        W_K, W_Q = factored_claim2_weights(cons, k, c_used)
        W_builder = cons.W if c is None else cons.W_star + c_used * np.outer(cons.v, cons.w)
        floats = {}
        for name, kw in (("factored W_K W_Q^T", {"W_K": W_K, "W_Q": W_Q}), ("builder's float W", {"W": [W_builder]})):
            fb, fs = ball_claim2_errors(E, e, J, targets, saturated, cons.istar, **kw)
            fit_up = max((upper(abs(x)) for x in fb), default=0.0)
            floats[name] = (fit_up, upper(fs))
            certs.append({"kind": f"float64 weights (reported, not deciding): {name}",
                          "max fit error on J (certified upper)": fit_up,
                          "max l1 off J (certified upper)": upper(fs)})
    measured = {"|J|": k, "saturated": len(saturated), "c": c_used, "c (builder, float c0)": cons.c,
                "c0(eps) <= (certified)": c_cert, "eps": eps, "exact fit on J": ex["fit"] is Decision.TRUE,
                "max l1 off J (upper)": upper(sat),
                "float64 weights: max fit error on J (certified upper)": floats["factored W_K W_Q^T"][0],
                "float64 weights: max l1 off J (certified upper)": floats["factored W_K W_Q^T"][1],
                "max l1 off J, builder's W (upper)": floats["builder's float W"][1], "rank W <=": k + 1}
    notes = []
    (fact_fit, _), (build_fit, build_sat) = floats["factored W_K W_Q^T"], floats["builder's float W"]
    if max(fact_fit, build_fit) >= tol:
        notes.append(f"precision note: the float64 weights miss the targets on J by up to "
                     f"{max(fact_fit, build_fit):.3g} (tol {tol:g}); the exact weights fit exactly")
    if build_sat > eps:
        notes.append(f"the builder's float c = {cons.c} misses eps by rounding (l1 up to {build_sat:.17g}); "
                     f"the certified c = {c_used} does not")
    trail += [Step("W* from Claim 1 on J (exact); w made exactly orthogonal; c = power of two >= max c0(eps)",
                   uses="Claims 1-2, Lemmas 3-4", data={"c": c_used, "eps": eps}),
              Step("softmax of the exact weights in arb balls", uses="Claim 2",
                   data={"decision": decision.value, "max l1 off J": measured["max l1 off J (upper)"]})]
    refutation = C_PINNED if c is not None and dsat is Decision.FALSE else \
        W_PINNED if not orthogonalize and ex["fit"] is Decision.FALSE else CONSTRUCTION_MISSED
    return conclude("claim2", decision, claimed=claimed, measured=measured, hypotheses=hyps, certified=True,
                    method="exact rationals + arb balls (float64 weights reported)", prec_bits=prec,
                    margin=eps - measured["max l1 off J (upper)"], certificates=certs,
                    instance=instance.summary(), trail=trail, reason="; ".join(notes), refutation=refutation)


@negative_control("claim2", "c = 0 (no saturation): the examples off J are not within eps of one-hot",
                  expect=("refuted",))
def control_claim2_no_saturation(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim2(make_instance(H=2, n=3, d=5, seed=0), prec=prec, seed=0, c=0.0)


@negative_control("claim2", "w kept as the float w (orthogonal to J's queries only up to rounding): "
                  "W' e^(j) != 0 exactly, the exact fit on J fails", expect=("refuted",))
def control_claim2_w_not_exactly_orthogonal(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim2(make_instance(H=2, n=3, d=5, seed=0), prec=prec, seed=0, orthogonalize=False)


@negative_control("claim2", "every query equal (Assumption 1 fails): Claim 1 on J has no solution",
                  expect=("hypotheses-unmet",))
def control_claim2_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim2(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=0), prec=prec, seed=0)
