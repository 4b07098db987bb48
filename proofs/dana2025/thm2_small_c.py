"""Theorem 2 under C < 1/2 (our repair of Thm. 2, Sec. 5, proof App. A.3).

Statement
---------
(repair, ours) Thm. 2 as printed, with the hypothesis its proof uses and the
paper omits: C = sqrt(32 log(N+1)/d) < 1/2, i.e. d > 128 ln(N+1).  Then
1 - 2C > 0, the step lambda <= log(...)/(1 - 2C) of the proof is valid,
and the proof's construction f (W with ||W W^T - I||_inf <= C,
E(t) = lambda(t) W_g) satisfies

    d_KL(pi, L) <= d_KL(pi, f) <= E_t[(1 - pi(g|t)) (1 + 2C + C d_TV(pi~_t, pi_unif)) / (1 - 2C)
                                       * log((N - 1)/(e^{-H(pi_t)} - 1))].

Where it says something: for N <= 868, C < 1/2 forces d >= N - 1, where
d_KL(pi, L) = 0 (Prop. 2(a)) and the bound holds trivially.  The default
instance (N = 900, d = 880, peaked rows: mass 1 - 2^-10 on the mode) has
RHS ~ 4.2 below the zero encoder's d_KL(pi, 0) ~ 6.8 (<= log N): there the
check can fail (a construction without its scaling lambda fails it: the
negative control), which it cannot where RHS >= d_KL(pi, 0) >= d_KL(pi, L).

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
3. What the instance can show (measured, certified in balls): whether
   RHS < d_KL(pi, 0) (the zero encoder fails the bound, so the construction's
   lambda does the work); whether d >= N - 1 (trivial regime); whether
   T0 <= d (then d_KL(pi, L) = 0 exactly, the centered log-targets spanning
   at most d dimensions, and only the construction-level bound
   d_KL(pi, f) <= RHS is tested).  Where d >= N - 1 the check is "vacuous".
4. Variant ``construction="zero"`` (the negative control): E(t) = 0, whose
   d_KL(pi, 0) must be certified above the RHS.

Not established
---------------
A verified instance shows the bound there, not for every pi; the proof's
later steps (T4, T5 of ``dana_thm2``) are not repaired here.  The L-level
bound is non-trivial only where the log-targets span more than d dimensions
(T0 >= d + 2): such instances (T0 ~ 900 rows of 900 entries) take minutes.

References
----------
Dana et al., AISTATS 2025 (arXiv:2411.10115), Thm. 2 p. 7, proof App. A.3 pp. 14-15; DANA2025.md (T1).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_thm2_small_c(make_sequence_instance(N=3, S=2, d=2, H=0, T0=3, conditionals="positive")).verdict
'hypotheses-unmet'
"""
from __future__ import annotations

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, lower, upper, workprec
from verifier.data.sequences import from_sequences, make_sequence_instance
from verifier.model.aot_balls import kl_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .thm2_entropy_bound import check_dana_thm2, entropy_bound

__all__ = ["check_dana_thm2_small_c", "entropy_constant", "small_c_hypothesis", "zero_encoder_dkl"]

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
#: the repair's construction with its scaling lambda removed (E(t) = 0): the zero encoder misses the bound
ZERO_ENCODER = Refutation("counterexample", "d_KL(pi, 0) certainly above the RHS (arb balls over every distribution "
                          "the data stand for)", variant="construction='zero': E(t) = 0, the construction without lambda")


def zero_encoder_dkl(inst) -> arb:
    """d_KL(pi, 0) = E_t KL(pi_t || uniform) in balls (the zero encoder, an element of L): a trivial upper
    bound of d_KL(pi, L) (<= log N), over every distribution the data stand for (caller's precision)."""
    ws, P = inst.prior_balls(), inst.conditional_balls()
    total = sum(ws[1:], ws[0])
    zeros = [arb(0)] * inst.N
    return sum((w * kl_ball(list(P[t]), zeros) for t, w in enumerate(ws)), arb(0)) / total


def _what_it_shows(inst, prec: int) -> dict:
    """Whether the RHS lies below the zero encoder's d_KL (certified), and the trivial cases."""
    with workprec(prec):
        rhs = entropy_bound(inst, entropy_constant(inst.N, inst.d))[0]
        zero = zero_encoder_dkl(inst)
        below = certainly_less(rhs, zero)
    return {"RHS": rhs, "d_KL(pi, 0)": zero, "RHS < d_KL(pi, 0)": below.value,
            "T0 <= d (d_KL(pi, L) = 0)": bool(inst.T0 <= inst.d)}


@statement("dana_thm2_small_c", conclusion_over="box", exists=True, refutes=(SMALL_C_BELOW_DKL, WEAKENED, ZERO_ENCODER), N=900, S=2, d=880, d_h=1, H=1, T0=4, conditionals="peaked",
           margin="lower end of the RHS ball (the bound's value)")
def check_dana_thm2_small_c(instance, *, prec: int = 128, seed: int = 0, c_max: float = 0.5,
                            construction: str = "paper", **options) -> Evidence:
    N, d = instance.N, instance.d
    hyp = small_c_hypothesis(N, d, c_max=arb(c_max), prec=prec)
    regime = "non-trivial (d < N - 1)" if d < N - 1 else "trivial (d >= N - 1: d_KL(pi, L) = 0, Prop. 2(a))"
    claimed = ("under C < 1/2: d_KL(pi, L) <= d_KL(pi, f) <= E_t[(1-pi_g)(1+2C+C d_TV)/(1-2C) log((N-1)/(e^{-H}-1))], "
               "f the proof's construction")
    first = Step("hypothesis C < 1/2 (missing from Thm. 2 as printed; the proof divides by 1 - 2C)",
                 "repair of Thm. 2", {"status": hyp.status, "detail": hyp.detail, "regime": regime})
    if hyp.status != "certified":
        return conclude("dana_thm2_small_c", Decision.UNDECIDED, claimed=claimed, hypotheses=[hyp],
                        measured={"regime": regime}, trail=[first],
                        reason="" if hyp.status == "refuted" else "C = 1/2 not decided at this precision "
                        "(raise --prec)")
    shows = _what_it_shows(instance, prec)
    scope = {"RHS < d_KL(pi, 0)": shows["RHS < d_KL(pi, 0)"], "d_KL(pi, 0) >=": lower(shows["d_KL(pi, 0)"]),
             "T0 <= d (d_KL(pi, L) = 0)": shows["T0 <= d (d_KL(pi, L) = 0)"]}
    second = Step("What this instance can show: the bound against the zero encoder (an element of L)", "repair scope",
                  {**scope, "RHS <=": upper(shows["RHS"])})
    if construction == "zero":  # the negative control: the construction without its scaling lambda
        with workprec(prec):
            decision = Decision.FALSE if certainly_less(shows["RHS"], shows["d_KL(pi, 0)"]) is Decision.TRUE \
                else Decision.UNDECIDED
        return conclude("dana_thm2_small_c", decision, claimed="the construction with E(t) = 0 (no lambda) meets the "
                        "bound: d_KL(pi, 0) <= RHS", measured=scope, hypotheses=[hyp],
                        certified=decision is Decision.FALSE, method="arb balls", prec_bits=prec, trail=[first, second],
                        refutation=ZERO_ENCODER,
                        reason="d_KL(pi, 0) > RHS, certified in balls" if decision is Decision.FALSE else
                        "the RHS is not below d_KL(pi, 0) on this instance: the zero encoder is not refuted")
    ev = check_dana_thm2(instance, prec=prec, seed=seed)
    decision = {"verified": Decision.TRUE, "refuted": Decision.FALSE}.get(ev.verdict, Decision.UNDECIDED)
    measured = dict(ev.measured) if isinstance(ev.measured, dict) else {"dana_thm2": ev.measured}
    measured.update(regime=regime, **scope)
    vacuous = d >= N - 1 and decision is Decision.TRUE  # d_KL(pi, L) = 0 <= RHS: nothing of the bound is tested
    method = "vacuous: d >= N - 1, d_KL(pi, L) = 0 (Prop. 2(a)) <= RHS" if vacuous else ev.method
    return conclude("dana_thm2_small_c", decision, claimed=claimed, measured=measured,
                    hypotheses=(hyp,) + tuple(ev.hypotheses), certified=ev.certified, method=method,
                    prec_bits=ev.prec_bits, margin=ev.margin, certificates=ev.certificates,
                    trail=(first, second) + tuple(ev.trail),
                    reason="" if decision is Decision.TRUE else f"dana_thm2's check: {ev.reason}",
                    refutation=SMALL_C_BELOW_DKL if c_max == 0.5 else WEAKENED)


@negative_control("dana_thm2_small_c", "hypothesis weakened to C < 1 (N = 3, d = 90, C = 0.702, pi = (1/2, 1/4, "
                  "1/4)): 1 - 2C < 0, the RHS is negative < 0 = d_KL(pi, L)", expect=("refuted",))
def control_small_c_weakened(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=90, H=0,
                          kind="control")
    return check_dana_thm2_small_c(inst, prec=prec, seed=seed, c_max=1.0)


@negative_control("dana_thm2_small_c", "the construction without lambda (E(t) = 0) on the default peaked instance "
                  "(N = 900, d = 880): d_KL(pi, 0) > RHS", expect=("refuted",))
def control_small_c_zero_encoder(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_sequence_instance(N=900, S=2, d=880, d_h=1, H=1, T0=4, conditionals="peaked", seed=seed)
    return check_dana_thm2_small_c(inst, prec=prec, seed=seed, construction="zero")


@negative_control("dana_thm2_small_c", "C >= 1/2 (N = 3, d = 2, the instance of neg_thm2_C): the repaired "
                  "statement does not apply", expect=("hypotheses-unmet",))
def control_small_c_outside(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=2, H=0,
                          kind="control")
    return check_dana_thm2_small_c(inst, prec=prec, seed=seed)
