"""Theorem 2 (Sec. 5, App. A.3): an entropy bound on d_KL(pi, L).

Statement
---------
There is W in R^{N x d} with ||W W^T - I||_inf <= C = sqrt(32 log(N+1)/d)
(read on the N x N Gram of W's rows) such that, with E(t) = lambda(t) W_{g(t)}
and lambda(t) solving -H(pi_t) = log sum_j e^{lambda (W_j - W_g)^T W_g},

    d_KL(pi, L) <= E_t[(1 - pi(g|t)) (1 + 2C + C d_TV(pi~_t, pi_unif)) / (1 - 2C)
                       * log((N - 1)/(e^{-H(pi_t)} - 1))],

H(pi) = sum pi log pi <= 0 (the limits on p. 7 need this sign), g(t) the mode,
pi~_t = pi_t off g renormalised, pi_unif uniform on the other N - 1 tokens.

Construction
------------
(T2) W exact: orthonormal rows if d >= N, else +-1/sqrt(d) signs (the Gram is
an exact rational); lambda(t) by bisection (any lambda gives an upper bound
d_KL(pi, L) <= d_KL(pi, f)).

Checks
------
1. ||W W^T - I||_inf <= C (exact Gram, C in balls).
2. The right-hand side in balls, over every distribution the data stand
   for (a file's floats at their precision: verifier.data.sequence_reading;
   b >= 0 and the RHS has the sign of 1 - 2C for every distribution, and
   the balls are cut there; a row whose mode is not the same for every
   distribution gets the union over its possible modes).  A term's limit 0
   (a point mass, a uniform row) is used for exact rows only: a float row
   0/1 or equal as stored stands for rows that are neither (float16
   (1, 0, 0) for (1 - 2^-26, 2^-26, 0)), whose terms are computed in balls;
   where that leaves the sign open the verdict is inconclusive, naming
   --exact-input.  (T1) Without C < 1/2 (d > 128 ln(N+1)),
   1 - 2C < 0 and the RHS is negative for every non-uniform,
   non-deterministic pi: certainly negative < 0 <= d_KL(pi, L): refuted
   (the message states C against 1/2).
   Otherwise d_KL(pi, L) <= RHS via d_KL(pi, L) = 0 (Prop. 2(a) / Prop. 3)
   or d_KL(pi, f) for the construction, in balls.
3. (T3) lambda(t) exists iff W_j^T W_g < ||W_g||^2 (exact); (T4) f(t)_j =
   lambda W_j^T W_g exceeds C (the proof drops lambda); (T5) the "simpler
   bound" step E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H) is tested in balls
   (b convex increasing: Jensen points the other way).

Not established
---------------
A verified instance shows the bound there; refuting the final simpler bound
is impractical (T5 tests the step only).

References
----------
arXiv:2411.10115, Thm. 2 p. 7, proof pp. 14-15; DANA2025.md (T1-T5, neg_thm2_C).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_thm2(make_sequence_instance(N=3, S=2, d=180, H=0, T0=3, conditionals="positive", seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, certainly_less_equal, lower, upper, workprec
from verifier.data.sequences import from_sequences
from verifier.statements.at_precision import REMEDY, UNDECIDED
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .capacity_bounds import linear_class_upper
from .thm2_terms import (
    _b,
    _data_precision_is_the_cause,
    _entropy,
    _limit_zero,
    _rest,
    _shown,
    _solve_lambda,
    construction_dkl,
    entropy_bound,
    gram_construction,
    mode_candidates,
)

__all__ = ["check_dana_thm2", "gram_construction", "entropy_bound", "mode_candidates"]


#: the RHS certainly below d_KL(pi, L) (>= 0, or its exact value): no element of L meets the bound
BELOW_DKL = Refutation("no-choice-works", "the RHS of Thm. 2 is certainly below d_KL(pi, L) (d_KL >= 0, or its exact "
                       "attained value): no f in L meets the bound (arb balls over every distribution the data stand for)")
#: the proof's step (T4) on its own: lambda(t) W_j^T W_g > C certified
T4_STEP = Refutation("counterexample", "a certified lambda(t) > lambda_lo with lambda_lo W_j^T W_g > C (exact Gram, arb "
                     "bracket)", variant="claim='T4': the proof's step f(t)_j <= C on its own")
#: the simpler bound's Jensen step, certainly reversed
JENSEN_STEP = Refutation("counterexample", "E[(1-pi_g) b(H)] certainly above E[1-pi_g] b(E H) (b is convex)",
                         variant="claim='jensen': the simpler bound's step (T5) on its own")


def check_dana_thm2(instance, *, prec: int = 128, seed: int = 0, claim: str = "bound", **options) -> Evidence:
    inst = instance
    N, d = inst.N, inst.d
    if claim == "T4":
        res = t4_step(inst, seed=seed, prec=prec)
        return conclude("dana_thm2", res["decision"], claimed="(T4) f(t)_j = lambda(t) W_j^T W_g <= C for j != g",
                        measured={k: v for k, v in res.items() if k != "decision"},
                        certified=res["decision"] is not Decision.UNDECIDED, method="exact Gram + arb bracket of lambda",
                        prec_bits=prec, reason="the proof drops the factor lambda: lambda(t) > lambda_lo (certified) "
                        "and lambda_lo W_j^T W_g > C" if res["decision"] is Decision.FALSE else "", refutation=T4_STEP)
    if claim == "jensen":
        with workprec(prec):
            res = jensen_step(inst)
        dec = {"true": Decision.TRUE, "false": Decision.FALSE}.get(res.get("step holds"), Decision.UNDECIDED)
        return conclude("dana_thm2", dec, claimed="(T5) E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H) (the simpler bound's step)",
                        measured=res, certified=dec is not Decision.UNDECIDED, method="arb balls", prec_bits=prec,
                        reason="b is convex: Jensen gives the opposite inequality" if dec is Decision.FALSE else "",
                        refutation=JENSEN_STEP)
    S, den, how = gram_construction(N, d, seed)
    G = S @ S.T
    off = float(np.abs(G - np.diag(np.diag(G))).max())
    with workprec(prec):
        C = (32 * arb(N + 1).log() / d).sqrt()
        gram_ok = certainly_less_equal(arb(off) / den, C)
        rhs, rows, negative = entropy_bound(inst, C)
    trail = [Step(f"W: {how}; exact Gram", "(T2)", {"max |W W^T - I|": off / den, "C": float(C.mid()),
                                                   "C < 1/2": {Decision.TRUE: True, Decision.FALSE: False}.get(
                                                       certainly_less(C, arb(1) / 2), "undecided")}),
             Step("RHS of Thm. 2 in balls", "Thm. 2", {"RHS": str(rhs), "per sequence (pi_g, entropy, term)": rows[:8]})]
    T3 = all(G[j, k] < G[k, k] for j in range(N) for k in range(N) if j != k)
    trail.append(Step("(T3) lambda(t) exists iff W_j.W_g < ||W_g||^2 for every j != g (exact)", "T3", {"holds": T3}))
    claimed = "d_KL(pi, L) <= E_t[(1-pi_g)(1+2C+C d_TV)/(1-2C) log((N-1)/(e^{-H}-1))], C = sqrt(32 log(N+1)/d)"
    measured = {"C": float(C.mid()), "RHS": float(rhs.mid()) if rhs.is_finite() else str(rhs), "Gram error <= C": gram_ok.value}
    if gram_ok is not Decision.TRUE:
        return conclude("dana_thm2", Decision.UNDECIDED, claimed=claimed, measured=measured, trail=trail,
                        reason="no sign matrix with ||W W^T - I||_inf <= C found (decides nothing)")
    if negative or certainly_less(rhs, arb(0)) is Decision.TRUE:
        with workprec(prec):
            big_C = certainly_less_equal(arb(1) / 2, C)
        why = (f"(T1) C = {float(C.mid()):.3g} >= 1/2 (the hypothesis C < 1/2, i.e. d > 128 ln(N+1), is missing)"
               if big_C is Decision.TRUE else f"C = {float(C.mid()):.3g} < 1/2")
        return conclude("dana_thm2", Decision.FALSE, claimed=claimed, measured=measured, certified=True,
                        method="arb balls", prec_bits=prec, margin=upper(rhs), trail=trail, refutation=BELOW_DKL,
                        reason=f"{why}: the RHS is {_shown(rhs)} < 0 <= d_KL(pi, L) for every distribution "
                        "the data stand for")
    up = linear_class_upper(inst)
    why_undecided = "the construction's d_KL is above the RHS: d_KL(pi, L) may still be below it (inconclusive)"
    if up is not None and up["attained"] or (up is not None and all(r[2] == 0.0 for r in rows)):
        decision = certainly_less_equal(arb(up["value"]), rhs)
        with workprec(prec):
            if decision is Decision.UNDECIDED and up["value"] == 0 and certainly_less(2 * C, arb(1)) is Decision.TRUE:
                decision = Decision.TRUE  # 1 - 2C > 0: every term >= 0 for every distribution, whatever its ball
        measured["d_KL(pi, L) <="] = up["value"]
        trail.append(Step("d_KL(pi, L) = 0 (Prop. 2(a) / Prop. 3)", "dana_prop2/3", {"why": up["why"]}))
        why_undecided = (f"the RHS ball {rhs.str(5, radius=True)} meets d_KL(pi, L) = {up['value']}: its sign is not "
                         "decided " + (f"for every distribution the data stand for ({UNDECIDED}: the stored values "
                                       "read as exact rationals would decide it; --exact-input if they are exact, "
                                       "--prec cannot)" if _data_precision_is_the_cause(inst, C, prec)
                                       else "at this working precision: raise --prec"))
    else:
        with workprec(prec):
            val, lams = construction_dkl(inst, S, den)
            decision = certainly_less_equal(val, rhs)
        measured["d_KL(pi, f) <="] = upper(val)
        modes = inst.targets
        T4 = max(lam * float(np.max(np.delete(S @ S[int(modes[t])], int(modes[t])))) / den
                 for t, lam in enumerate(lams))
        trail.append(Step("f: E(t) = lambda(t) W_g, d_KL(pi, f) in balls", "Thm. 2 construction",
                          {"lambda": lams[:8], "d_KL(pi,f)": str(val), "(T4) max f(t)_j, j != g": T4}))
        if decision is Decision.FALSE:
            decision = Decision.UNDECIDED  # an upper bound of d_KL(pi, L) above the RHS refutes nothing
        if decision is Decision.UNDECIDED and inst.at_precision and (not rhs.is_finite() or not val.is_finite()):
            why_undecided = (f"{UNDECIDED}: the rows stand for distributions whose terms the balls cannot bound "
                             "together (a float 0 or 1 as stored stands for small positive values and values below "
                             f"1: entropies near 0, where the bound's log has no finite ball); {REMEDY}")
    trail.append(Step("(T5) simpler bound: E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H)?", "T5", jensen_step(inst)))
    return conclude("dana_thm2", decision, claimed=claimed, measured=measured, certified=decision is not Decision.UNDECIDED,
                    refutation=BELOW_DKL,
                    method="exact Gram + arb balls", prec_bits=prec,
                    margin=max(lower(rhs), 0.0) if decision is Decision.TRUE else lower(rhs) if rhs.is_finite() else None,
                    trail=trail, reason="" if decision is Decision.TRUE else why_undecided)


# registered after the def (not as a decorator): mutmut 3 mutates plain functions only
statement("dana_thm2", conclusion_over="box", exists=True, refutes=(BELOW_DKL, T4_STEP, JENSEN_STEP), N=5, S=2, d=3, H=1, conditionals="positive")(check_dana_thm2)


def t4_step(inst, *, seed: int = 0, prec: int = 128) -> dict:
    """(T4): a certified lower bound lambda_lo < lambda(t) (F(lambda_lo) > entropy in balls, F decreasing)
    and the exact Gram give f(t)_j >= lambda_lo W_j^T W_g, compared with C."""
    S, den, _ = gram_construction(inst.N, inst.d, seed)
    G = S @ S.T
    with workprec(prec):
        C = (32 * arb(inst.N + 1).log() / inst.d).sqrt()
        # the step is the proof's for a W meeting ||W W^T - I||_inf <= C (diagonal included): refute it only there
        dev = int(np.abs(G - den * np.eye(inst.N)).max())
        if certainly_less_equal(arb(dev) / den, C) is not Decision.TRUE:
            return {"decision": Decision.UNDECIDED, "why": "W does not meet ||W W^T - I||_inf <= C (exact Gram)"}
        worst = None
        P = inst.conditional_balls()
        for t in range(inst.T0):
            p = inst.conditionals[t]
            g = int(inst.targets[t])
            if len(mode_candidates(inst, list(P[t]), g)) > 1:
                continue  # the step is about g(t): a row whose mode is not certain is skipped
            ent_f = float(-np.sum(p[p > 0] * np.log(p[p > 0])))
            if not 0 < ent_f < math.log(inst.N) - 1e-12 or any(G[j, g] >= G[g, g] for j in range(inst.N) if j != g):
                continue
            lam = _solve_lambda(G[:, g], den, g, ent_f) * (1 - 1e-9)
            ent = _entropy(list(P[t]), g)
            F = sum(((arb(lam) * arb(float(G[j, g] - G[g, g])) / den).exp() for j in range(inst.N)), arb(0)).log()
            if certainly_less(ent, F) is not Decision.TRUE:  # lambda_lo must satisfy F(lambda_lo) > entropy
                continue
            j = max((j for j in range(inst.N) if j != g), key=lambda j: G[j, g])
            f_lo = arb(lam) * arb(float(G[j, g])) / den
            if worst is None or float(f_lo.mid()) > worst[0]:
                worst = (float(f_lo.mid()), t, j, lam, certainly_less(C, f_lo))
    if worst is None:
        return {"decision": Decision.UNDECIDED, "why": "no sequence with a certified lambda bracket"}
    f, t, j, lam, dec = worst
    return {"decision": Decision.FALSE if dec is Decision.TRUE else Decision.UNDECIDED, "sequence": t, "j": j,
            "lambda(t) >": lam, "f(t)_j >=": f, "C": float(C.mid())}


def jensen_step(inst) -> dict:
    """Both sides of the T5 step in balls (sequences with a finite b only)."""
    N = inst.N
    ws, rests, ents = [], [], []
    P, W = inst.conditional_balls(), inst.prior_balls()
    modes = inst.targets
    for t in range(inst.T0):
        if _limit_zero(inst, t):
            continue
        pb = list(P[t])
        if len(mode_candidates(inst, pb, int(modes[t]))) > 1:
            return {"applies": False, "why": f"sequence {t}: the mode is not the same for every distribution the "
                                             "row stands for"}
        ws.append(W[t])
        rests.append(_rest(pb, int(modes[t])))
        ents.append(_entropy(pb, int(modes[t])))
    if len(ws) < 2:
        return {"applies": False}
    total = sum(ws[1:], ws[0])
    lhs = sum((w * r * _b(e, N) for w, r, e in zip(ws, rests, ents)), arb(0)) / total
    mean_rest = sum((w * r for w, r in zip(ws, rests)), arb(0)) / total
    mean_ent = sum((w * e for w, e in zip(ws, ents)), arb(0)) / total
    rhs = mean_rest * _b(mean_ent, N)
    dec = certainly_less_equal(lhs, rhs)
    return {"applies": True, "E[(1-pi_g) b(H)]": float(lhs.mid()), "E[1-pi_g] b(E H)": float(rhs.mid()),
            "step holds": dec.value}


@negative_control("dana_thm2", "T5: the simpler bound's step with pi_g = 1/2 for both sequences and different "
                  "entropies, (1/2,1/4,1/4) and (1/2,3/8,1/8): Jensen points the other way", expect=("refuted",))
def control_jensen_step(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0], [0, 1]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25],
                                                                                   [0.5, 0.375, 0.125]]),
                          d=2, H=1, kind="control")
    return check_dana_thm2(inst, prec=prec, seed=seed, claim="jensen")


@negative_control("dana_thm2", "T4: the proof's 'f(t)_j <= C' with N = 5, d = 4 (+-1/2 signs), "
                  "pi_t mode 1 - 2^-10 on token 2: lambda(t) W_j^T W_g > C", expect=("refuted",))
def control_t4(*, prec: int = 128, seed: int = 0) -> Evidence:
    p = np.array([[2.0 ** -12, 1 - 2.0 ** -10, 2.0 ** -12, 2.0 ** -12, 2.0 ** -12]])
    inst = from_sequences(np.array([[0, 0]]), N=5, conditionals=p, d=4, H=1, kind="control")
    return check_dana_thm2(inst, prec=prec, seed=0, claim="T4")  # seed 0: the sign matrix with W_2.W_3 = 1/2


@negative_control("dana_thm2", "neg_thm2_C: N = 3, d = 2, pi = (1/2, 1/4, 1/4): C = 4.71 > 1/2 and the RHS is "
                  "-0.0555 < 0 = d_KL(pi, L)", expect=("refuted",))
def neg_thm2_C(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=2, H=1,
                          kind="control")
    return check_dana_thm2(inst, prec=prec, seed=seed)
