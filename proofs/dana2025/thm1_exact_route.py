"""Theorem 1 with eps = 0 (Sec. 4, App. A.1-A.2): T0 <= H d_h + d sequences are memorized exactly.

Statement
---------
(reconstructed checkable core, DANA2025.md) For T0 <= H d_h + d sequences and
ANY W in R^{N x d}, E(t) in R^d, some AoT of Eq. (2) with (d, d_h, H) has
T(t) = W E(t) on all T0 sequences.  It implies Thm. 1 (4) with eps = 0 read as
a capacity statement: for every gamma > 0 some AoT has
d_KL(pi, T) <= d_KL(pi, L) + gamma (take f = W E near the infimum).

Construction
------------
The exact route (:mod:`.exact_route`): rational x', K^h, V^h; M in
R^{(d + H d_h) x T0}; [G, W_O] M = E; embeddings absorb G.  (W, E) are drawn
at random (dyadic): the claim is for every (W, E).

Checks
------
1. Hypotheses: T0 <= H d_h + d; d_h <= d (A.1 "d >= d_h").
2. Refutation of the capacity reading, certified: an upper bound of
   d_KL(pi, L) below a floor kappa0 that holds for EVERY AoT of these sizes
   (:mod:`.capacity_bounds`; neg_thm1_shared, neg_thm1_H0).
3. The route: the ceiling min(u, d) + H min(d_h, d, D) < T0 makes it
   impossible for every parameter choice (D1: "route impossible", which does
   not refute the theorem); else rank M = T0 by a nonsingular minor and
   det G != 0 by a ball: exact parameters with T = W E exist in the balls.
4. The saved float64 weights (--save-weights) are re-run in balls: the
   certified max |T(t) - W E(t)| of the weights a reader gets.
5. The paper's own route on the instance (trail): (i) the head-0 gap (D5),
   (iii) full-rank W_V keeps rank T0 (D4), (iv) det G (D6); variant claims
   ``step="skip_head" | "wv_rank" | "det_G"`` turn one step into the checked claim.

Not established
---------------
Verified = on this instance and this (W, E); since rank M = T0 makes the
solve linear in E, every E with det G != 0 (an open condition) is covered.
A failed certification or an impossible route is "inconclusive".

References
----------
arXiv:2411.10115, Thm. 1 p. 3, Sec. 4.1 p. 4, App. A.1-A.2 pp. 12-13; DANA2025.md D1, D2, D4-D7.

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=3, H=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np

from verifier.arith.compare import Decision, upper, workprec
from verifier.data.instances import rng_for
from verifier.data.sequences import from_sequences, make_sequence_instance
from verifier.model.aot_balls import BallAoT, logits_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .capacity_bounds import capacity_impossibility
from .exact_route import RouteParameters, build_route, exact_route_trail_data
from .route_steps import head0_limit, prove_head0_limit, singular_G, value_rank_counterexample

__all__ = ["check_dana_thm1_eps0", "size_hypotheses", "random_targets", "float_weights_residual"]


def size_hypotheses(inst, *, T: int | None = None) -> list[Hypothesis]:
    T = inst.T0 if T is None else T
    cap = inst.H * inst.d_h + inst.d
    return [Hypothesis("T0 <= H d_h + d", "certified" if T <= cap else "refuted", f"T0 = {T}, H d_h + d = {cap}"),
            Hypothesis("d_h <= d (App. A.1)", "certified" if inst.d_h <= inst.d else "refuted",
                       f"d_h = {inst.d_h}, d = {inst.d}")]


def random_targets(inst, seed: int):
    """(W, E): dyadic W (N x d) and E (d x T0)."""
    rng = rng_for(seed, "dana_thm1_eps0.targets")
    return rng.integers(-8, 9, (inst.N, inst.d)) / 8, rng.integers(-8, 9, (inst.d, inst.T0)) / 8


@construction("dana_thm1_eps0.float_weights_residual")
def float_weights_residual(sequences, weights, target_logits, *, prec: int = 128) -> float:
    """Certified upper bound of max |T(t) - target| for float64 weights (exact dyadics)."""
    with workprec(prec):
        L = logits_ball(sequences, BallAoT.from_weights(weights))
        return max(upper(abs(L[t, j] - float(target_logits[t, j])))
                   for t in range(L.nrows()) for j in range(L.ncols()))


def write_weights(path, inst, route, W, E, residual) -> None:
    np.savez(path, sequences=inst.sequences, N=inst.N, W=W, E=E, certified_max_abs_T_minus_WE=residual,
             **route.weights.as_arrays())


def _step_claim(step: str, inst, route, E, *, seed: int, prec: int):
    if step == "skip_head":
        proof = prove_head0_limit()
        res = head0_limit(inst.sequences, route.params.e, route.params.pos)
        return ("step (i): head 0 with W_QK^0 = lambda I tends to x(t,S)", res["decision"], res, [proof.to_dict()])
    if step == "wv_rank":
        res = value_rank_counterexample(inst.sequences, route.params, d_h=inst.d_h, seed=seed, prec=prec)
        return ("step (iii): full-rank W_V keeps rank T0", res["decision"], res, [])
    res = singular_G(E, d=inst.d, T0=inst.T0, rows=inst.d + inst.H * inst.d_h)
    return ("step (iv): det G != 0", res["decision"], res, [])


#: every AoT of these sizes stays kappa0 above d_KL(pi, L): the capacity reading fails for small gamma
CAPACITY = Refutation("no-choice-works", "d_KL(pi, T) >= kappa0 for EVERY AoT with (d, d_h, H) (Pinsker + "
                      "Eckart-Young in balls, or identical logits), certainly above an upper bound of d_KL(pi, L)")
#: a step of the paper's route on its own, refuted on the instance
ROUTE_STEP = Refutation("counterexample", "a certified counterexample to the route's step (head 0's limit, full-rank "
                        "W_V keeping rank T0, or det G != 0)", variant="step=...: one step of the paper's route")


def check_dana_thm1_eps0(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                         step: str | None = None, targets=None, route_params: RouteParameters | None = None,
                         **options) -> Evidence:
    inst = instance
    hyps = size_hypotheses(inst)
    W, E = targets if targets is not None else random_targets(inst, seed)
    claimed = "some AoT has T(t) = W E(t) on every sequence (=> d_KL(pi,T) <= d_KL(pi,L) + gamma for all gamma)"
    cap = capacity_impossibility(inst, prec=prec)
    trail = [Step("Sizes", "Thm. 1", {**inst.summary(), "H d_h + d": inst.claimed_capacity}),
             Step("Capacity reading: upper bound of d_KL(pi,L) vs a floor over every AoT", "D2",
                  {"d_KL(pi,L) upper": cap["d_KL(pi,L) upper"], "AoT floor": {k: v for k, v in cap["AoT floor"].items()
                                                                              if k != "certificate"}})]
    if step is None and cap["decision"] is Decision.FALSE:
        kappa = cap["AoT floor"]["kappa0"]
        return conclude("dana_thm1_eps0", Decision.FALSE, claimed=claimed,
                        measured={"d_KL(pi,T) >= (every AoT)": kappa, "d_KL(pi,L) <=": cap["d_KL(pi,L) upper"]["value"],
                                  "k = rank of the heads' sum <=": cap["AoT floor"]["k"]},
                        hypotheses=hyps, certified=True, method="arb balls (Pinsker + Eckart-Young) / exact",
                        prec_bits=prec, margin=cap["margin"], certificates=[cap["AoT floor"], cap["d_KL(pi,L) upper"]],
                        trail=trail, reason=f"every AoT with (d, d_h, H) = ({inst.d}, {inst.d_h}, {inst.H}) has "
                        f"d_KL >= {kappa:.3g} > d_KL(pi, L) = {cap['d_KL(pi,L) upper']['value']}: the capacity "
                        f"reading fails for gamma < {kappa:.3g} ({cap['AoT floor']['method']})", refutation=CAPACITY)
    route = build_route(inst, W, E, seed=seed, prec=prec, params=route_params)
    data = exact_route_trail_data(route)
    trail.append(Step("Exact route: M = [x'_S; V^h A'^h], rank M = T0 by a nonsingular minor", "D1, Lemma 2", data))
    if step is not None:
        what, decision, res, certs = _step_claim(step, inst, route, E, seed=seed, prec=prec)
        trail.append(Step(what, "the paper's route", {k: v for k, v in res.items() if k != "decision"}))
        return conclude("dana_thm1_eps0", decision, claimed=what, measured={k: v for k, v in res.items() if k != "decision"},
                        certified=decision is not Decision.UNDECIDED, method="exact rationals / arb balls / sympy",
                        prec_bits=prec, certificates=certs + [res], trail=trail,
                        reason=res.get("why", "") if decision is Decision.FALSE else "", refutation=ROUTE_STEP)
    h0 = head0_limit(inst.sequences, route.params.e, route.params.pos)
    trail.append(Step("Paper step (i): head 0 = lambda I tends to x(t,S) iff g(t) > 0", "D5",
                      {k: v for k, v in h0.items() if k != "decision"}))
    measured = {"certified rank M": route.rank.certified_k, "T0": inst.T0, "ceiling": route.ceilings["ceiling"],
                "DANA2025.md ceiling": route.ceilings["doc_ceiling"], "det G": str(route.det_G)}
    certs = [{"kind": "rank M >= T0: nonsingular minor", **route.rank.to_dict()}]
    if route.ceilings["ceiling"] < inst.T0:
        return conclude("dana_thm1_eps0", Decision.UNDECIDED, claimed=claimed, measured=measured, hypotheses=hyps,
                        certified=False, method="exact formal rank", certificates=certs, trail=trail,
                        reason=f"route impossible: rank M <= {route.ceilings['ceiling']} < T0 = {inst.T0} for every "
                        "x', K, V (D1); this does not refute the theorem")
    route_ok = Decision.TRUE if route.rank_certified and route.det_decision is Decision.TRUE else Decision.UNDECIDED
    margin = None
    if route_ok is Decision.TRUE:
        with workprec(prec):
            L = logits_ball(inst.sequences, route.ball_model)
        target = (W @ E).T
        radius = max(upper(abs(L[t, j] - float(target[t, j]))) for t in range(inst.T0) for j in range(inst.N))
        residual = float_weights_residual(inst.sequences, route.weights, target, prec=prec)
        measured.update({"max |T - W E| (ball parameters)": radius, "max |T - W E| (saved float64 weights)": residual})
        certs.append({"kind": "det G ball excludes 0", "det G": str(route.det_G)})
        trail.append(Step("Assemble e = G e', pos = G pos', W_Q = P G^-1, W_K = Q G^-1, W_V = V G^-1, W_U = W; "
                          "forward pass of Eq. (2) in balls", "App. A.2 (exact route)",
                          {"radius of T - W E": radius, "float64 weights residual": residual}))
        if save_weights:
            write_weights(save_weights, inst, route, W, E, residual)
            trail.append(Step("Weights saved", "--save-weights", {"path": str(save_weights)}))
    return conclude("dana_thm1_eps0", route_ok, claimed=claimed, measured=measured, hypotheses=hyps,
                    certified=route_ok is Decision.TRUE, method="arb balls (minor + det G)", prec_bits=prec,
                    margin=margin, certificates=certs, trail=trail,
                    reason="" if route_ok is Decision.TRUE else "; ".join(route.notes))


# registered after the def (not as a decorator): mutmut 3 mutates plain functions only
statement("dana_thm1_eps0", writes_weights=True, exists=True, refutes=(CAPACITY, ROUTE_STEP), requires=("T0 <= H d_h + d", "d_h <= d (App. A.1)"),
          N=5, S=2, d=3, H=2)(check_dana_thm1_eps0)


def _instance(seqs, N, d, d_h, H, conditionals):
    return from_sequences(np.array(seqs), N=N, conditionals=np.array(conditionals, dtype=float), d=d, d_h=d_h, H=H,
                          kind="control")


@negative_control("dana_thm1_eps0", "neg_thm1_shared: N=3, S=2, d=2, d_h=1, H=1, support {(1,3),(2,3),(3,3)}, "
                  "conditionals (1/2,1/4,1/4) etc.: collinear logits, d_KL >= kappa0 > 0 = d_KL(pi,L)",
                  expect=("refuted",))
def neg_thm1_shared(*, prec: int = 128, seed: int = 0) -> Evidence:
    P = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    return check_dana_thm1_eps0(_instance([[0, 2], [1, 2], [2, 2]], 3, 2, 1, 1, P), prec=prec, seed=seed)


@negative_control("dana_thm1_eps0", "neg_thm1_H0: N=2, d=2, H=0, support {(1,2),(2,2)}, conditionals (1/3,2/3), "
                  "(2/3,1/3): identical logits, d_KL >= (5/3) ln 2 - ln 3 > 0", expect=("refuted",))
def neg_thm1_H0(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_thm1_eps0(_instance([[0, 1], [1, 1]], 2, 2, 1, 0, [[1 / 3, 2 / 3], [2 / 3, 1 / 3]]),
                                prec=prec, seed=seed)


@negative_control("dana_thm1_eps0", "neg_wv_rank: step (iii) with T0 > d, d_h < d (N=5, S=2, d=3, d_h=2, H=2): "
                  "full-rank W_V^h with M c = 0 although rank A' = T0", expect=("refuted",))
def neg_wv_rank(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=3, d_h=2, H=2, seed=seed), prec=prec, seed=seed,
                                step="wv_rank")


@negative_control("dana_thm1_eps0", "neg_skiphead: step (i) (V2) with x_S = (1,0), x_1 = (2,0): head 0 tends to "
                  "x_1, not x_S", expect=("refuted",))
def neg_skiphead(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[1, 0]]), N=2, targets=[0], d=2, d_h=2, H=1, kind="control")
    rp = RouteParameters(np.array([[1.0, 0.0], [2.0, 0.0]]), np.zeros((2, 2)), np.ones((1, 2, 2)) / 4,
                         np.ones((1, 2, 2)) / 8, np.eye(2)[None])
    return check_dana_thm1_eps0(inst, prec=prec, seed=seed, step="skip_head", route_params=rp)


@negative_control("dana_thm1_eps0", "D6: step (iv) at T0 = H d_h + d with rank E < d: Z = E M^-1 is unique, "
                  "det G = 0", expect=("refuted",))
def neg_det_G(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_sequence_instance(N=5, S=2, d=3, H=2, seed=seed)
    rng = rng_for(seed, "neg_det_G")
    W = rng.integers(-8, 9, (inst.N, inst.d)) / 8
    E = np.outer(rng.integers(1, 9, inst.d), rng.integers(-8, 9, inst.T0)) / 64  # rank 1 < d
    return check_dana_thm1_eps0(inst, prec=prec, seed=seed, step="det_G", targets=(W, E))
