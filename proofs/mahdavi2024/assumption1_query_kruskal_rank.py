"""Assumption 1 (Sec. 4): the queries have Kruskal rank at least n.

Statement
---------
The set of all query vectors {e^(t) : t in [T]} in R^d has Kruskal rank
(Definition 1) at least n, the context size: every n of the queries are
linearly independent.  Hypothesis of the setting: n < d.  By Definition 1
the Kruskal rank of T vectors is at most T, so the assumption needs T >= n.

Construction
------------
:func:`verifier.arith.kruskal.kruskal_rank_at_least` with k = n on the rows of the
query matrix (float64 entries read as exact rationals): every n-subset is
tested in exact arithmetic (rank modulo two primes, flint ``fmpq`` for the
undecided) when C(T, n) <= ``exhaustive_limit``; otherwise the paper's test
runs -- ``samples`` random n-subsets (5000 in Sec. 5.1) -- as evidence only.

Checks
------
1. Hypothesis n < d, from the instance's shapes (certified).
2. Certified: all C(T, n) n-subsets independent (exhaustion): verified.
3. Refuted: a dependent subset of at most n queries with an exact null
   combination sum_i c_i e^(i) = 0, re-checked here over Q; or T < n.
4. Otherwise inconclusive: the sampled fraction is reported, and the number
   of subsets an exhaustion would need (raise ``exhaustive_limit``).

Not established
---------------
For large T (e.g. the paper's 2000 ViT images) exhaustion is out of reach:
the random-subset test is evidence, never a proof (STATEMENTS.md, "Kruskal
rank in practice").  Queries dependent only up to float rounding (e.g. a
float product of Gaussian low-rank factors) are, as the exact rationals
given, independent: the float smallest singular value is not consulted.

References
----------
arXiv:2306.02010v3, Sec. 4 (Assumption 1), Sec. 5.1 (the random-subset test).

>>> from verifier.data.instances import make_instance
>>> check_assumption1(make_instance(H=2, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math

from verifier.arith.compare import Decision
from verifier.arith.kruskal import KruskalRank, kruskal_rank_at_least
from verifier.data.instances import make_instance
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.registry import negative_control, statement

from .definition1_kruskal_rank import (
    EXHAUSTIVE_LIMIT,
    METHOD,
    SAMPLES,
    exhaustion_certificate,
    kruskal_steps,
    witness_certificate,
)


def n_less_than_d(instance) -> Hypothesis:
    """The setting's standing hypothesis n < d, read off the shapes."""
    n, d = instance.n, instance.d
    return Hypothesis("n < d", "certified" if n < d else "refuted", f"n = {n}, d = {d}")


def kruskal_at_least_evidence(statement_id: str, V, k: int, res: KruskalRank, *, instance, what: str,
                              exhaustive_limit: int, uses: str, method: str = METHOD,
                              hypotheses=(), extra_certificates=(), extra_steps=()) -> Evidence:
    """Evidence for "the rows of V (named ``what``) have Kruskal rank >= k"
    from the search result ``res``, shared by Assumptions 1 and 3.  V: a
    float64 array, or an object array of exact rationals (fmpq)."""
    m = V.shape[0]
    decision = res.at_least(k)
    certs = list(extra_certificates)
    if decision is Decision.TRUE:
        certs.append(exhaustion_certificate(V, k))
        reason = f"every {k} of the {m} {what} are linearly independent (all C({m},{k}) subsets, exact)"
    elif decision is Decision.FALSE:
        certs.append(witness_certificate(V, res))
        if res.witness is not None:
            reason = (f"the {what} {list(res.witness)} are linearly dependent (exact null combination): "
                      f"Kruskal rank <= {res.upper} < {k}")
        else:
            reason = f"only {m} {what}: Kruskal rank <= min(T, d) = {res.upper} < {k} (Definition 1)"
    else:
        reason = (f"undecided: C({m},{k}) = {math.comb(m, k)} subsets exceed exhaustive_limit="
                  f"{exhaustive_limit}; evidence: {res.sampled_independent}/{res.sampled} random "
                  f"{k}-subsets independent (the paper's test); exhausting them or a dependent "
                  f"{k}-subset would decide it")
    measured = {"kruskal_lower": res.lower, "kruskal_upper": res.upper, "count": m, "k": k,
                "subsets": math.comb(m, k),
                "sampled_independent": f"{res.sampled_independent}/{res.sampled}"}
    return conclude(
        statement_id, decision, claimed={"kruskal_rank": f">= {k}"}, measured=measured,
        hypotheses=hypotheses, certified=decision is not Decision.UNDECIDED, method=method,
        margin=None, certificates=certs, instance=instance.summary(), reason=reason,
        trail=list(extra_steps) + kruskal_steps(res) + [Step(reason, uses=uses)],
    )


@statement("assumption1")
def check_assumption1(instance, *, prec: int = 128, seed: int = 0,
                      exhaustive_limit: int = EXHAUSTIVE_LIMIT, samples: int = SAMPLES,
                      **options) -> Evidence:
    """Kruskal rank of the queries >= n (Definition 1, exact arithmetic)."""
    res = kruskal_rank_at_least(instance.queries, instance.n, exhaustive_limit=exhaustive_limit,
                                samples=samples, seed=seed)
    return kruskal_at_least_evidence(
        "assumption1", instance.queries, instance.n, res, instance=instance, what="queries",
        exhaustive_limit=exhaustive_limit, uses="Assumption 1", hypotheses=[n_less_than_d(instance)])


@negative_control("assumption1", "every query equal (degenerate='repeated-queries')")
def control_assumption1_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_assumption1(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=seed),
                             seed=seed)


@negative_control("assumption1", "queries in a 2-dim subspace, n = 3 (degenerate='low-kruskal-queries')")
def control_assumption1_low_kruskal_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_assumption1(make_instance(H=2, n=3, d=5, degenerate="low-kruskal-queries", seed=seed),
                             seed=seed)
