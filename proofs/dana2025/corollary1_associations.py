"""Corollary 1: with d = 2 an AoT memorizes H d_h + 2 associations.

Statement
---------
Under Assumption 1 (pi_t a point mass at g(t)), some AoT with d = 2, H heads
and head dimension d_h memorizes at least T0 = H d_h + 2 associations
(g(t) is the strict argmax of T(t)), with 2(S + 2N + 4(T0 - 2)) parameters.
d_h <= d forces d_h in {1, 2} (Exp. 6's text says d_h = 5; its code says 2).
The paper derives it from Thm. 1 on pi_delta = (pi + delta)/(1 + N delta) and
Prop. 3.

Construction
------------
The exact route with W_U's rows distinct rational unit vectors and
E(t) = u_{g(t)} + xi_t (:mod:`.associations`); if the route is impossible
(D1), L-BFGS on the cross-entropy, then certification.

Checks
------
1. Hypotheses: Assumption 1, d = 2, T0 <= H d_h + 2, d_h <= d.  Assumption 1
   on float rows 0/1 as stored holds for some points of their intervals only:
   inconclusive, naming --exact-input (integer targets are exact).
2. Exact impossibility (H = 0 and a shared last token with two targets:
   identical logits; d = 1 and three distinct targets: ordering) -> refuted.
3. The float64 weights (what --save-weights writes) run through Eq. (2) in
   balls: every margin certainly positive -> verified; the parameter count.

Not established
---------------
Nothing found is "inconclusive", never "refuted": the statement is
existential.  No upper bound ("T0 + 1 must fail") is claimed or checked: our
numerics suggest it is false, so it is not a control.

References
----------
arXiv:2411.10115, Cor. 1 p. 4, Exp. 6 p. 18; DANA2025.md (D1, D6, neg_cor1_H0).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_corollary1(make_sequence_instance(N=6, S=2, d=2, d_h=1, H=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np

from verifier.arith.compare import Decision
from verifier.data.sequences import from_sequences
from verifier.model.aot import AoTWeights, parameter_count
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .associations import certified_margins, impossible_table, memorize_table
from .data_hypotheses import METHOD, assumption1, undecided, undecided_reason
from .exact_route import exact_route_trail_data

__all__ = ["check_dana_corollary1", "check_associations"]


#: an exact reason no AoT of these sizes memorizes the table (d = 1 ordering, H = 0 identical logits)
NO_AOT = Refutation("no-choice-works", "an exact impossibility for EVERY AoT of these sizes: with d = 1 one of three "
                    "distinct targets is never a strict argmax (ordering), or with H = 0 two sequences with the same "
                    "last token get identical logits")
#: the upper-bound reading refuted by certified weights memorizing more than H d_h + d associations
UPPER_READING = Refutation("counterexample", "float64 weights whose every margin is certified positive (arb "
                           "balls) memorize T0 > H d_h + d associations",
                           variant="claim='upper': 'at most H d_h + d associations' (Sec. 3, Sec. 7)")


def _hyp(name, ok, detail):
    return Hypothesis(name, "certified" if ok else "refuted", detail)


@construction("dana_corollary1.check_associations")
def check_associations(sid: str, inst, *, d_required: int | None, prec: int = 128, seed: int = 0,
                       save_weights: str | None = None) -> Evidence:
    X = inst.H * inst.d_h + inst.d
    hyps = [assumption1(inst),
            _hyp("T0 <= H d_h + d", inst.T0 <= X, f"T0 = {inst.T0}, H d_h + d = {X}"),
            _hyp("d_h <= d (App. A.1)", inst.d_h <= inst.d, f"d_h = {inst.d_h}, d = {inst.d}")]
    if d_required is not None:
        hyps.insert(1, _hyp(f"d = {d_required}", inst.d == d_required, f"d = {inst.d}"))
    claimed = f"some AoT with (d, d_h, H) = ({inst.d}, {inst.d_h}, {inst.H}) puts every target at the strict argmax"
    count = parameter_count(N=inst.N, S=inst.S, d=inst.d, d_h=inst.d_h, H=inst.H)
    trail = [Step("Sizes and parameter count d(S + 2N + 4 d_h H)", "Thm. 1 / Cor. 1",
                  {**inst.summary(), "parameters": count})]
    if undecided(hyps[0]):  # float rows 0/1 as stored: the targets are a table at some points only
        return conclude(sid, Decision.UNDECIDED, claimed=claimed, measured={}, hypotheses=hyps, trail=trail,
                        reason=undecided_reason(hyps, "memorizing the targets as associations"), method=METHOD)
    if not inst.is_table:
        return conclude(sid, Decision.UNDECIDED, claimed=claimed, measured={}, hypotheses=hyps, trail=trail,
                        reason="Assumption 1 fails: not an association table")
    imp = impossible_table(inst)
    if imp is not None:
        trail.append(Step("Exact impossibility", "ordering / identical logits", imp))
        return conclude(sid, Decision.FALSE, claimed=claimed, measured={"impossible": imp["why"]}, hypotheses=hyps,
                        certified=True, method="exact", certificates=[imp["certificate"]], trail=trail,
                        reason=imp["why"], refutation=NO_AOT)
    applies = all(h.status == "certified" for h in hyps)  # outside them: the route only, no optimization
    res = memorize_table(inst, seed=seed, prec=prec, optimize=applies)
    if res["route"] is not None:
        trail.append(Step("Exact route with W_U rows on the unit circle, E(t) = u_g + xi_t", "App. A.2, D1, D6",
                          exact_route_trail_data(res["route"])))
    measured = {"method": res["method"], "memorized (certified)": None, "parameters": count, "notes": res["notes"]}
    if res["weights"] is not None:
        measured["memorized (certified)"] = int(sum(m > 0 for m in res["margins"]))
        measured["smallest margin (lower bound)"] = res["min margin"]
        trail.append(Step("Eq. (2) in balls with the float64 weights: margins T_g - max_{j != g} T_j", "Cor. 1",
                          {"smallest margin >=": res["min margin"], "T0": inst.T0}))
        if save_weights:
            np.savez(save_weights, sequences=inst.sequences, targets=inst.targets, N=inst.N,
                     certified_min_margin=res["min margin"], **res["weights"].as_arrays())
            trail.append(Step("Weights saved", "--save-weights", {"path": str(save_weights)}))
    decision = Decision.TRUE if res["decision"] is Decision.TRUE else Decision.UNDECIDED  # a miss refutes nothing
    return conclude(sid, decision, claimed=claimed, measured=measured, hypotheses=hyps,
                    certified=decision is Decision.TRUE, method=f"arb balls ({res['method']})", prec_bits=prec,
                    margin=res.get("min margin"), trail=trail,
                    reason="" if decision is Decision.TRUE else "no memorizing AoT found (route impossible or "
                    "uncertified, optimization failed): this decides nothing. " + "; ".join(res["notes"]))


#: float64 weights (hex, exact) found by L-BFGS (seed 3) for all 9 bigrams over N = 3 with targets
#: UPPER_READING_TARGETS, d = 2, d_h = 1, H = 1: the upper-bound reading's counterexample, re-certified in balls.
UPPER_READING_TARGETS = [0, 1, 2, 0, 1, 1, 2, 2, 0]
UPPER_READING_WEIGHTS = {
    "e": ((3, 2), ['0x1.c57c06fd0e32cp+3', '0x1.ac299185f6cd3p+2', '-0x1.df94bf3022095p+2', '0x1.646d81c97720cp+1',
                   '0x1.934d095c1a214p+2', '-0x1.4e592a2ed0f90p+3']),
    "pos": ((2, 2), ['0x1.1261efba1f833p+3', '0x1.63e2aa99abf4fp-1', '0x1.2f3955be4d2c6p+1', '0x1.103c890f34cbfp+1']),
    "W_Q": ((1, 1, 2), ['0x1.c5fd680213da2p+1', '0x1.d9e9117df8e74p+1']),
    "W_K": ((1, 1, 2), ['-0x1.ea32d0d1d6f79p+1', '-0x1.073d911954893p+3']),
    "W_V": ((1, 1, 2), ['0x1.489a440cde66dp+3', '-0x1.d97761db41afap+1']),
    "W_O": ((1, 2, 1), ['0x1.5271a764753acp+1', '0x1.4c6ebb3c92874p+2']),
    "W_U": ((3, 2), ['0x1.543587c68dcf7p+2', '0x1.e04a7e9070deep+1', '-0x1.31b83a5ed079ap+0', '-0x1.a40702cd8cf29p+3',
                     '-0x1.c73f88d4a0ca9p+1', '0x1.0c734e5423621p+3']),
}


def upper_reading_weights() -> AoTWeights:
    return AoTWeights(**{k: np.array([float.fromhex(x) for x in v]).reshape(shape)
                         for k, (shape, v) in UPPER_READING_WEIGHTS.items()})


def check_upper_reading(inst, weights: AoTWeights, *, prec: int = 128) -> Evidence:
    """Sec. 3 ("an upper bound") / Sec. 7 ("maximal"): no AoT with (d, d_h, H) memorizes more than
    H d_h + d associations.  Refuted by float64 weights whose margins are certified in balls."""
    X = inst.H * inst.d_h + inst.d
    dec, low, lows = certified_margins(inst.sequences, inst.targets, weights, prec=prec)
    refuted = dec is Decision.TRUE and inst.T0 > X
    return conclude("dana_corollary1", Decision.FALSE if refuted else Decision.UNDECIDED,
                    claimed=f"upper-bound reading: at most H d_h + d = {X} associations",
                    measured={"memorized (certified)": int(sum(m > 0 for m in lows)), "T0": inst.T0,
                              "smallest margin >=": low}, certified=refuted, method="arb balls (given float64 weights)",
                    prec_bits=prec, margin=low,
                    reason=f"certified weights memorize all {inst.T0} > {X} associations" if refuted else "",
                    refutation=UPPER_READING)


@statement("dana_corollary1", writes_weights=True, exists=True, refutes=(NO_AOT, UPPER_READING),
           requires=("Assumption 1 (point masses)", "d = 2", "T0 <= H d_h + d", "d_h <= d (App. A.1)"),
           N=6, S=2, d=2, d_h=1, H=2)
def check_dana_corollary1(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                          claim: str = "corollary", weights: AoTWeights | None = None, **options) -> Evidence:
    if claim == "upper":
        return check_upper_reading(instance, weights, prec=prec)
    return check_associations("dana_corollary1", instance, d_required=2, prec=prec, seed=seed,
                              save_weights=save_weights)


@negative_control("dana_corollary1", "upper-bound reading (Sec. 3 'an upper bound', Sec. 7 'maximal'): certified "
                  "weights with d = 2, d_h = 1, H = 1 memorize all 9 bigrams over N = 3 (9 > H d_h + d = 3)",
                  expect=("refuted",))
def control_upper_reading(*, prec: int = 128, seed: int = 0) -> Evidence:
    import itertools

    seqs = np.array(list(itertools.product(range(3), repeat=2)))
    inst = from_sequences(seqs, N=3, targets=UPPER_READING_TARGETS, d=2, d_h=1, H=1, kind="control")
    return check_dana_corollary1(inst, prec=prec, seed=seed, claim="upper", weights=upper_reading_weights())


@negative_control("dana_corollary1", "neg_cor1_H0 (boundary H = 0): two sequences with the same last token and "
                  "targets 1, 2 get identical logits", expect=("refuted",))
def neg_cor1_H0(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 1], [1, 1]]), N=3, targets=[0, 1], d=2, d_h=1, H=0, kind="control")
    return check_dana_corollary1(inst, prec=prec, seed=seed)
