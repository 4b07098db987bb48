"""Theorem 2 under C < 1/2 (our repair of Thm. 2, Sec. 5, proof App. A.3).

Statement
---------
(repair, ours) Thm. 2 as printed, with the hypothesis its proof uses and the
paper omits: C = sqrt(32 log(N+1)/d) < 1/2, i.e. d > 128 ln(N+1).  Then
1 - 2C > 0, the step lambda <= log(...)/(1 - 2C) of the proof is valid,
and

    d_KL(pi, L) <= E_t[(1 - pi(g|t)) (1 + 2C + C d_TV(pi~_t, pi_unif)) / (1 - 2C)
                       * log((N - 1)/(e^{-H(pi_t)} - 1))].

Where it says something: for N <= 868, C < 1/2 forces d >= N - 1, where
d_KL(pi, L) = 0 (Prop. 2(a)) and the bound holds trivially; the default
instance (N = 900, d = 880) lies in the non-trivial regime d < N - 1.

Construction
------------
That of ``dana_thm2`` (:func:`.thm2_entropy_bound.check_dana_thm2`): an exact
Gram (orthonormal rows or +-1/sqrt(d) signs), the RHS in balls, d_KL(pi, f)
of E(t) = lambda(t) W_g in balls.

Checks
------
1. The hypothesis C < 1/2 in balls (``c_max``: the threshold, default 1/2);
   C >= c_max: hypotheses-unmet, nothing run.
2. ``dana_thm2``'s check on the instance: its verdict, certificate and trail.
3. The regime (measured): non-trivial (d < N - 1) or trivial (d >= N - 1).

Not established
---------------
A verified instance shows the bound there, not for every pi; the proof's
later steps (T4, T5 of ``dana_thm2``) are not repaired here.

References
----------
arXiv:2411.10115, Thm. 2 p. 7, proof App. A.3 pp. 14-15; DANA2025.md (T1).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_thm2_small_c(make_sequence_instance(N=3, S=2, d=2, H=0, T0=3, conditionals="positive")).verdict
'hypotheses-unmet'
"""
from __future__ import annotations

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, workprec
from verifier.data.sequences import from_sequences
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .thm2_entropy_bound import check_dana_thm2

__all__ = ["check_dana_thm2_small_c", "entropy_constant", "small_c_hypothesis"]

#: the smallest N for which C < 1/2 leaves room for d < N - 1 (d > 128 ln(N+1) and d <= N - 2)
FIRST_NONTRIVIAL_N = 869


def entropy_constant(N: int, d: int) -> arb:
    """C = sqrt(32 log(N+1)/d) (caller's precision)."""
    return (32 * arb(N + 1).log() / d).sqrt()


def small_c_hypothesis(N: int, d: int, *, c_max=arb(1) / 2, prec: int = 128) -> Hypothesis:
    """C < c_max, decided in balls."""
    with workprec(prec):
        C = entropy_constant(N, d)
        below, above = certainly_less(C, c_max), certainly_less(c_max, C)
    detail = f"C = {float(C.mid()):.6g} (N = {N}, d = {d}; C < 1/2 iff d > 128 ln(N+1) = {128 * np.log(N + 1):.1f})"
    status = "certified" if below is Decision.TRUE else "refuted" if above is Decision.TRUE else "evidence"
    return Hypothesis(f"C = sqrt(32 log(N+1)/d) < {float(c_max.mid()):g}", status, detail)


#: under C < 1/2 the RHS certainly below d_KL(pi, L): no element of L meets the repaired bound
SMALL_C_BELOW_DKL = Refutation("no-choice-works", "under C < 1/2 (certified) the RHS is certainly below d_KL(pi, L): "
                               "no f in L meets the bound (dana_thm2's certificate)")
#: the same with the repair's hypothesis weakened by the caller
WEAKENED = Refutation("no-choice-works", "under the caller's weaker C < c_max the RHS is certainly below "
                      "d_KL(pi, L) (dana_thm2's certificate)", variant="c_max: the hypothesis C < 1/2 weakened")


@statement("dana_thm2_small_c", conclusion_over="box", exists=True, refutes=(SMALL_C_BELOW_DKL, WEAKENED), N=900, S=2, d=880, d_h=1, H=1, T0=4, conditionals="positive",
           margin="lower end of the RHS ball (the bound's value)")
def check_dana_thm2_small_c(instance, *, prec: int = 128, seed: int = 0, c_max: float = 0.5,
                            **options) -> Evidence:
    N, d = instance.N, instance.d
    hyp = small_c_hypothesis(N, d, c_max=arb(c_max), prec=prec)
    regime = "non-trivial (d < N - 1)" if d < N - 1 else "trivial (d >= N - 1: d_KL(pi, L) = 0, Prop. 2(a))"
    claimed = "under C < 1/2: d_KL(pi, L) <= E_t[(1-pi_g)(1+2C+C d_TV)/(1-2C) log((N-1)/(e^{-H}-1))]"
    first = Step("hypothesis C < 1/2 (missing from Thm. 2 as printed; the proof divides by 1 - 2C)",
                 "repair of Thm. 2", {"status": hyp.status, "detail": hyp.detail, "regime": regime})
    if hyp.status != "certified":
        return conclude("dana_thm2_small_c", Decision.UNDECIDED, claimed=claimed, hypotheses=[hyp],
                        measured={"regime": regime}, trail=[first],
                        reason="" if hyp.status == "refuted" else "C = 1/2 not decided at this precision "
                        "(raise --prec)")
    ev = check_dana_thm2(instance, prec=prec, seed=seed)
    decision = {"verified": Decision.TRUE, "refuted": Decision.FALSE}.get(ev.verdict, Decision.UNDECIDED)
    measured = dict(ev.measured) if isinstance(ev.measured, dict) else {"dana_thm2": ev.measured}
    measured["regime"] = regime
    return conclude("dana_thm2_small_c", decision, claimed=claimed, measured=measured,
                    hypotheses=(hyp,) + tuple(ev.hypotheses), certified=ev.certified, method=ev.method,
                    prec_bits=ev.prec_bits, margin=ev.margin, certificates=ev.certificates,
                    trail=(first,) + tuple(ev.trail),
                    reason="" if decision is Decision.TRUE else f"dana_thm2's check: {ev.reason}",
                    refutation=SMALL_C_BELOW_DKL if c_max == 0.5 else WEAKENED)


@negative_control("dana_thm2_small_c", "hypothesis weakened to C < 1 (N = 3, d = 90, C = 0.702, pi = (1/2, 1/4, "
                  "1/4)): 1 - 2C < 0, the RHS is negative < 0 = d_KL(pi, L)", expect=("refuted",))
def control_small_c_weakened(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=90, H=0,
                          kind="control")
    return check_dana_thm2_small_c(inst, prec=prec, seed=seed, c_max=1.0)


@negative_control("dana_thm2_small_c", "C >= 1/2 (N = 3, d = 2, the instance of neg_thm2_C): the repaired "
                  "statement does not apply", expect=("hypotheses-unmet",))
def control_small_c_outside(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=2, H=0,
                          kind="control")
    return check_dana_thm2_small_c(inst, prec=prec, seed=seed)
