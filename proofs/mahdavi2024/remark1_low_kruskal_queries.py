"""Remark 1: queries of Kruskal rank k < n.

Statement (reconstructed)
-------------------------
If the queries' Kruskal rank is k < n, Proposition 1 and Theorem 1 hold with
r := min(n, k, d_h): rank(Z) >= min(H(r-1)+1, T).

Construction
------------
Prop. 1's induction with r = min(n, k, d_h): Claim 1 needs r independent
queries (any r <= k are), Lemma 3 needs |J| = r-1 < k.

Checks
------
1. k certified (exact Kruskal rank by exhaustion: lower and upper bounds with
   a dependent witness), Assumption 2 and n < d.
2. rank(Z) >= min(H(r-1)+1, T) certified (Arb minor) for the construction.

Not established
---------------
Only the reconstructed form is checked; the bound with r = min(n, d_h) (no k)
is not claimed for such queries.

References
----------
arXiv:2306.02010v3, Remark 1 (Sec. 4).

>>> from verifier.data.instances import make_instance
>>> check_remark1(make_instance(H=4, n=3, d=6, T=6, degenerate="low-kruskal-queries", seed=0)).verdict
'verified'
"""
from __future__ import annotations

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank
from verifier.arith.kruskal import kruskal_rank
from verifier.data.instances import make_instance
from verifier.statements.evidence import Evidence, Hypothesis, conclude, hypothesis_from_evidence
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d
from .assumption2_context_rank import check_assumption2
from .data_hypotheses import queries_kruskal_at_least
from .proposition1_rank_induction import CAP_BELOW_CLAIM, check_proposition1

#: min(H(r-1)+1, T) above a structural cap that holds for ANY weights (Prop. 1's caps, consulted first)
R_CAP = Refutation("no-choice-works", "rank(Z) <= a structural cap for ANY weights (dimensions, repeated examples, "
                   "Prop. 2, Prop. 5) below min(H(r-1)+1, T)")
#: the same with r pinned by the caller
R_PINNED_CAP = Refutation("no-choice-works", "rank(Z) <= a structural cap for ANY weights below min(H(r-1)+1, T) "
                          "at the caller's r", variant="r_override: r pinned above min(n, k, d_h)")
#: fewer than r independent queries: Prop. 1's construction cannot start (other weights are not ruled out)
NO_R_QUERIES = Refutation("failed-construction", "fewer than r queries are independent (exact rank < r): Claim 1's "
                          "step of Prop. 1's construction cannot start; that rules out this construction, not "
                          "other weights")


# "queries of Kruskal rank k < n" is the remark's setting, not a hypothesis: r = min(n, k, d_h) covers k >= n too
# (Prop. 1); the Kruskal rank found is in measured
@statement("remark1", conclusion_over="box",
           requires=("n < d", "Assumption 2"), exists=True, refutes=(R_CAP, R_PINNED_CAP, NO_R_QUERIES),
           margin="1 - ||I - R A||_inf of the nonsingular-minor certificate", H=4, n=3, d=6, T=6, degenerate="low-kruskal-queries")
def check_remark1(instance, *, prec: int = 128, seed: int = 0, r_override: int | None = None,
                  **options) -> Evidence:
    kr = kruskal_rank(instance.exact_array("queries"), seed=seed)  # the values given, never their rounding
    k = kr.lower  # certified lower bound on the values given: every k queries independent
    known = queries_kruskal_at_least(instance, k, f"every k = {k} of the queries independent (k = their Kruskal "
                                     "rank, certified lower bound)", seed=seed) if k >= 1 else \
        Hypothesis("Kruskal rank k of the queries known", "certified", "k = 0: a zero query")
    hyps = [n_less_than_d(instance),
            hypothesis_from_evidence("Assumption 2", check_assumption2(instance, prec=prec, seed=seed)), known]
    r = max(1, min(instance.n, k, instance.d_h)) if r_override is None else int(r_override)
    hyps.append(Hypothesis(f"r = {r}" + (" = min(n, k, d_h)" if r_override is None else " (variant)"),
                           "certified", f"n = {instance.n}, k = {k}, d_h = {instance.d_h}"))
    ev = check_proposition1(instance, prec=prec, seed=seed, r=r, hypotheses=hyps)
    decision, refutation = (Decision.TRUE if ev.verdict == "verified" else Decision.UNDECIDED), None
    if ev.refutation == CAP_BELOW_CLAIM:  # the caps, for ANY weights
        decision, refutation = Decision.FALSE, R_PINNED_CAP if r_override is not None else R_CAP
    elif "construction failed at" in ev.measured and exact_rank(instance.exact_array("queries")) < r:
        # no r queries are independent: THIS construction cannot start (a failed construction, issue 32)
        decision, refutation = Decision.FALSE, NO_R_QUERIES
    return conclude("remark1", decision, claimed=f"Prop. 1's construction reaches min(H(r-1)+1, T) with r = {r}",
                    measured={**ev.measured, "kruskal_rank": [kr.lower, kr.upper], "r": r}, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED,
                    method=ev.method, prec_bits=ev.prec_bits, margin=ev.margin, reason=ev.reason
                    if refutation in (R_CAP, R_PINNED_CAP) else "", refutation=refutation,
                    certificates=[kr.to_dict(), *ev.certificates], trail=ev.trail)


@negative_control("remark1", "r = n + 1 pinned on a shared context (H = 3, n = 3, T = 9): min(H(r-1)+1, T) = 9 "
                  "exceeds Prop. 2's cap H(n-1)+1 = 7 for ANY weights", expect=("refuted",))
def control_r_above_the_cap(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=3, n=3, d=6, T=9, context="shared", degenerate="low-kruskal-queries", seed=seed)
    return check_remark1(inst, prec=prec, seed=seed, r_override=4)
