"""Corollary 2: the expected accuracy of the best AoT on an association table.

Statement
---------
Under Assumption 1 with a uniform prior on T0 sequences, some AoT with
(d, d_h, H) has

    E_t[Acc] >= phi(H d_h + d),   phi(X) = 1/N + (1 - 1/N) X / T0,

Acc = 0/1 argmax accuracy (train.py).  No proof is given; the 1/N term comes
"by pure chance" (p. 5), an average over targets.

Construction
------------
Memorize K = min(T0, H d_h + d) sequences with the exact route
(:mod:`.associations`, fitted on those K only), run Eq. (2) in balls on all
T0 sequences with the float64 weights, count the certified-correct ones.

Checks
------
1. Hypotheses: Assumption 1, uniform prior, over every point the data stand
   for (proofs/dana2025/data_hypotheses.py): float rows 0/1 or equal float
   weights as stored hold them for some points only, so a verdict that rests
   on them is inconclusive (--exact-input if the values are exact), unless
   the bound holds for every prior the weights stand for (the correct
   sequences at their weights' lower ends, the others at their upper ends).
2. (C1) phi(X) > 1 exactly (rationals) when X > T0: no accuracy reaches it,
   so the literal statement is refuted (Exp. 6's text: 1.018).  EXP_6.py plots
   min(phi, 1), the intended form (reconstructed).
3. Otherwise: certified correct count / T0 >= phi(X) -> verified; below it ->
   inconclusive (C2: the per-instance claim K + (T0 - K)/N correct is
   unproved, and a construction that falls short decides nothing).

Not established
---------------
Existential; accuracies from one construction are evidence.

References
----------
arXiv:2411.10115, Cor. 2 p. 5, Exp. 6 p. 18 (EXP_6.py); DANA2025.md (C1, C2, neg_cor2_cap).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_corollary2(make_sequence_instance(N=6, S=2, d=2, d_h=1, H=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifier.arith.compare import Decision
from verifier.data.sequence_reading import probability_bounds
from verifier.data.sequences import make_sequence_instance
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .associations import memorize_table
from .data_hypotheses import METHOD, assumption1, undecided, undecided_reason, uniform_prior

__all__ = ["check_dana_corollary2", "accuracy_bound", "weighted_accuracy_floor"]


def accuracy_bound(N: int, T0: int, X: int) -> Fraction:
    """phi(X) = 1/N + (1 - 1/N) X / T0, exactly."""
    return Fraction(1, N) + (1 - Fraction(1, N)) * Fraction(X, T0)


#: phi > 1: no accuracy reaches it, whatever the AoT
PHI_ABOVE_ONE = Refutation("no-choice-works", "phi = 1/N + (1-1/N)(H d_h + d)/T0 > 1 >= the accuracy of EVERY AoT "
                           "(exact rationals)")


@statement("dana_corollary2", exists=True, refutes=(PHI_ABOVE_ONE,), requires=("Assumption 1 (point masses)", "uniform prior"), N=6, S=2, d=2, d_h=1, H=2)
def check_dana_corollary2(instance, *, prec: int = 128, seed: int = 0, **options) -> Evidence:
    inst = instance
    X = inst.H * inst.d_h + inst.d
    phi = accuracy_bound(inst.N, inst.T0, X)
    hyps = [assumption1(inst), uniform_prior(inst)]
    claimed = f"some AoT has E[Acc] >= 1/N + (1-1/N)(H d_h + d)/T0 = {phi} = {float(phi):.4g}"
    trail = [Step("phi(X) in exact rationals", "Cor. 2", {"N": inst.N, "T0": inst.T0, "X = H d_h + d": X,
                                                          "phi": str(phi), "Exp. 6 text (N=10, X=102, T0=100)":
                                                          str(accuracy_bound(10, 100, 102))})]
    if undecided(hyps[0]):
        return conclude("dana_corollary2", Decision.UNDECIDED, claimed=claimed, measured={}, hypotheses=hyps,
                        trail=trail, reason=undecided_reason(hyps, "the accuracy of the targets"), method=METHOD)
    if not inst.is_table:
        return conclude("dana_corollary2", Decision.UNDECIDED, claimed=claimed, measured={}, hypotheses=hyps,
                        trail=trail, reason="Assumption 1 fails")
    if phi > 1 and undecided(hyps[1]):
        return conclude("dana_corollary2", Decision.UNDECIDED, claimed=claimed, measured={"phi": str(phi)},
                        hypotheses=hyps, trail=trail,
                        reason=f"(C1) phi = {phi} > 1 >= any accuracy; " + undecided_reason(hyps, "the refutation"))
    if phi > 1:
        return conclude("dana_corollary2", Decision.FALSE, claimed=claimed,
                        measured={"phi": str(phi), "largest possible accuracy": 1}, hypotheses=hyps, certified=True,
                        method="exact rationals", margin=float(phi - 1), trail=trail,
                        reason=f"(C1) H d_h + d = {X} > T0 = {inst.T0}: phi = {phi} > 1 >= any accuracy",
                        refutation=PHI_ABOVE_ONE)
    K = min(inst.T0, X)
    best = None
    for a in range(3):
        rows = np.random.default_rng([seed, a]).permutation(inst.T0)[:K]
        res = memorize_table(inst, seed=seed + a, prec=prec, rows=np.sort(rows), optimize=K == inst.T0)
        if res["weights"] is None:
            continue
        correct = sum(m > 0 for m in res["margins"])
        if best is None or correct > best[0]:
            best = (correct, res)
        if Fraction(correct, inst.T0) >= phi:
            break
    correct = best[0] if best else 0
    acc = Fraction(correct, inst.T0)
    decision = Decision.TRUE if acc >= phi else Decision.UNDECIDED
    low = None
    if decision is Decision.TRUE and undecided(hyps[1]):  # equal float weights: not every prior they stand for
        low = weighted_accuracy_floor(inst, [m > 0 for m in best[1]["margins"]])
        decision = Decision.TRUE if low >= phi else Decision.UNDECIDED
    trail.append(Step(f"Exact route on K = {K} sequences, Eq. (2) in balls on all T0", "Cor. 2 construction",
                      {"certified correct": correct, "accuracy": str(acc), "K + (T0-K)/N (C2)":
                       str(K + Fraction(inst.T0 - K, inst.N)),
                       "correct sequences": [t for t, m in enumerate(best[1]["margins"]) if m > 0] if best else []}))
    return conclude("dana_corollary2", decision, claimed=claimed,
                    measured={"certified correct": correct, "T0": inst.T0, "accuracy": float(acc), "phi": float(phi)},
                    hypotheses=hyps, certified=decision is Decision.TRUE, method="arb balls (margins) + exact count",
                    prec_bits=prec, margin=float(acc - phi), trail=trail,
                    reason=(f"E[Acc] >= {low} >= phi for EVERY prior the weights stand for (uniform or not: the "
                            "conclusion holds without the hypothesis)" if low is not None and decision is Decision.TRUE
                            else "" if decision is Decision.TRUE else
                            undecided_reason(hyps, f"E[Acc] >= phi (the uniform prior's accuracy {acc}; over the "
                                                   f"weights' intervals at least {low})") if low is not None else
                            f"our construction reaches {acc} < phi = {phi}: the existential claim is neither shown "
                            "nor refuted (C2)"))


def weighted_accuracy_floor(inst, correct) -> Fraction:
    """min over every prior the weights stand for of sum_{correct} w / sum w (exact rationals): the correct
    sequences at their lower ends, the others at their upper ends."""
    lo, hi, _, _ = probability_bounds(inst.prior_numbers)
    q = lambda x: Fraction(int(x.p), int(x.q))  # noqa: E731
    good = sum((q(lo[t]) for t, ok in enumerate(correct) if ok), Fraction(0))
    bad = sum((q(hi[t]) for t, ok in enumerate(correct) if not ok), Fraction(0))
    return good / (good + bad) if good + bad else Fraction(0)


@negative_control("dana_corollary2", "neg_cor2_cap: H d_h + d > T0 (N=3, d=2, d_h=1, H=2, T0=3): phi = 11/9 > 1 "
                  "(Exp. 6's text: 1.018)", expect=("refuted",))
def neg_cor2_cap(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_corollary2(make_sequence_instance(N=3, S=2, d=2, d_h=1, H=2, T0=3, seed=seed), prec=prec,
                                 seed=seed)
