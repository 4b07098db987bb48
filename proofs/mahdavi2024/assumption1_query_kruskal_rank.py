"""Assumption 1 (Sec. 4): the queries have Kruskal rank at least n.

Statement
---------
The set of all query vectors {e^(t) : t in [T]} in R^d has Kruskal rank
(Definition 1) at least n, the context size: every n of the queries are
linearly independent.  The assumption is a property of the data and needs
no hypothesis (with n > d it simply fails: n vectors in R^d, d < n, are
dependent).  By Definition 1 the Kruskal rank of T vectors is at most T, so
the assumption needs T >= n.

Construction
------------
:func:`verifier.arith.kruskal.kruskal_rank_at_least` with k = n on the rows of the
query matrix (the values given, as exact rationals: float64 entries are
dyadics, int64 beyond 2^53 and long doubles are read exactly, never through
float64; ``Instance.exact_array``): every n-subset is
tested in exact arithmetic (rank modulo two primes, flint ``fmpq`` for the
undecided) when C(T, n) <= ``exhaustive_limit``; otherwise, when T <= d,
ONE rank certificate of the T x d query matrix (a nonsingular T x T minor,
:mod:`verifier.arith.rank`: float64 verification or arb balls) proves all T
queries independent and so every n-subset (the ViT setting, T = 757 <=
d = 768: certified, nothing sampled); otherwise the paper's test
runs -- ``samples`` random n-subsets (5000 in Sec. 5.1; by default that many
within a work budget, :func:`.definition1_kruskal_rank.sample_size`: 5000 up
to n = 271, 11 at a 7B-class layer's n = 2048) -- as evidence only.

At the data's precision (a user's floats, each standing for the reals that
round to it: :mod:`verifier.data.precision`):
:func:`verifier.arith.box_subsets.subsets_over_box` certifies every
n-subset independent at EVERY point of the data's intervals (all T queries
at once when T <= d, else each subset while they can be exhausted), or finds
an explicit point of the intervals where an examined subset is dependent
(exact rationals).

Checks
------
1. Certified: all C(T, n) n-subsets independent (exhaustion, or all T
   queries independent when T <= d): verified.
2. Refuted: a dependent subset of at most n queries with an exact null
   combination sum_i c_i e^(i) = 0, re-checked here over Q; or T < n.
3. User data read at its dtype's precision: verified only when every point
   of the intervals is certified; refuted, "fails at the data's precision",
   at an explicit dependent point (:mod:`verifier.statements.at_precision`);
   otherwise inconclusive.
4. Otherwise inconclusive: the sampled fraction is reported, and the number
   of subsets an exhaustion would need (raise ``exhaustive_limit``).

Not established
---------------
For T > d and large T (e.g. the paper's 2000 ViT images) exhaustion is out of reach:
the random-subset test is evidence, never a proof (STATEMENTS.md, "Kruskal
rank in practice").  Under the exact reading (generated instances,
``--exact-input``) queries dependent only up to float rounding are, as the
exact rationals given, independent.

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
from verifier.arith.subset_sample import prefetch_sample
from verifier.data.instances import make_instance
from verifier.statements.at_precision import at_data_precision
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.hypotheses import n_less_than_d  # noqa: F401 - re-exported for the other modules
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .definition1_kruskal_rank import (
    EXHAUSTIVE_LIMIT,
    METHOD,
    SAMPLES,
    exhaustion_certificate,
    kruskal_box,
    kruskal_steps,
    sample_size,
    whole_set_certificate,
    witness_certificate,
)

#: Kruskal rank below k, exactly: a dependent subset of at most k vectors, its null combination re-checked over Q
DEPENDENT_SUBSET = Refutation("counterexample", "a dependent subset of at most k vectors with an exact null "
                              "combination, re-checked over Q (or fewer than k vectors: Kruskal rank <= m)")
#: independent as exact rationals, dependent within the data's rounding (a user's floats at their dtype)
AT_PRECISION = Refutation("at-data-precision", "the worst subset's certified relative sigma_min at or below the "
                          "data's precision (verifier.statements.at_precision)")


def kruskal_refutation(exact: Decision) -> Refutation:
    """The refutation of "Kruskal rank >= k" when the reading's decision is FALSE."""
    return DEPENDENT_SUBSET if exact is Decision.FALSE else AT_PRECISION


def query_box(instance, k: int, res: KruskalRank, *, exhaustive_limit: int, samples: int, seed: int):
    """:func:`kruskal_box` on the instance's queries."""
    mid, rad = instance.ball("queries")
    V = instance.exact_array("queries")
    return kruskal_box(instance, mid, rad, k, res, arrays=("queries",), exact=lambda idx: V[idx],
                       gaps=lambda idx: instance.half_gaps("queries", idx), exhaustive_limit=exhaustive_limit,
                       samples=samples, seed=seed)


def kruskal_at_least_evidence(statement_id: str, V, k: int, res: KruskalRank, *, instance, what: str,
                              exhaustive_limit: int, uses: str, method: str = METHOD,
                              hypotheses=(), extra_certificates=(), extra_steps=(), box=None,
                              arrays: tuple[str, ...] = ("queries",), sample_note: str = "") -> Evidence:
    """Evidence for "the rows of V (named ``what``) have Kruskal rank >= k"
    from the search result ``res`` on the stored values and the certificates
    over the data's intervals ``box`` (:func:`kruskal_box`), read at the
    instance's precision; shared by Assumptions 1 and 3.  V: a float64
    array, or an object array of exact rationals (fmpq).  ``sample_note``:
    said of the random subsets' number (e.g. the work budget's cut of the
    paper's 5000)."""
    m = V.shape[0]
    exact = res.at_least(k)
    outcome = at_data_precision(exact, box, instance.precision, *arrays, what=f"Kruskal rank of the {what} >= {k}",
                                item=f"the {what}")
    decision = outcome.decision
    certs = list(extra_certificates)
    if exact is Decision.TRUE and res.rank_certificate is not None:
        certs.append(whole_set_certificate(V, k, res.rank_certificate))
        reason = (f"all {m} {what} are linearly independent (one rank certificate of the {m} x {V.shape[1]} "
                  f"matrix: a nonsingular {m} x {m} minor), so every {k} of them are: all C({m},{k}) subsets "
                  f"certified, none sampled")
    elif exact is Decision.TRUE:
        certs.append(exhaustion_certificate(V, k))
        reason = f"every {k} of the {m} {what} are linearly independent (all C({m},{k}) subsets, exact)"
    elif exact is Decision.FALSE:
        certs.append(witness_certificate(V, res))
        if res.witness is not None:
            reason = (f"the {what} {list(res.witness)} are linearly dependent (exact null combination): "
                      f"Kruskal rank <= {res.upper} < {k}")
        else:
            reason = f"only {m} {what} in R^{V.shape[1]}: Kruskal rank <= min(T, d) = {res.upper} < {k} (Definition 1)"
    else:
        reason = (f"undecided: C({m},{k}) = {math.comb(m, k)} subsets exceed exhaustive_limit="
                  f"{exhaustive_limit}; evidence: {res.sampled_independent}/{res.sampled} random "
                  f"{k}-subsets independent (the paper's test{sample_note}); exhausting them or a "
                  f"dependent {k}-subset would decide it")
    if box is not None:
        certs.append(box.to_dict())
    reason = outcome.reason or reason
    measured = {"kruskal_lower": res.lower, "kruskal_upper": res.upper, "count": m, "k": k,
                "subsets": math.comb(m, k),
                "sampled_independent": f"{res.sampled_independent}/{res.sampled}", **outcome.measured}
    return conclude(
        statement_id, decision, claimed={"kruskal_rank": f">= {k}"}, measured=measured,
        hypotheses=hypotheses, certified=decision is not Decision.UNDECIDED,
        method=method if res.rank_certificate is None else f"rank of all {m} {what} certified ("
                                                            f"{res.rank_certificate['certified_by']})",
        margin=None, certificates=certs, instance=instance.summary(), reason=reason,
        trail=list(extra_steps) + kruskal_steps(res) + [Step(reason, uses=uses)],
        refutation=kruskal_refutation(exact),
    )


def _samples(instance, samples: int | None) -> tuple[int, str]:
    """The random n-subsets drawn (default :func:`.definition1_kruskal_rank.sample_size`) and what is said of
    their number."""
    if samples is not None:
        return int(samples), ""
    samples = sample_size(instance.n)
    return samples, (f", {samples} of its {SAMPLES} subsets: the work budget sample_size({instance.n})"
                     if samples < SAMPLES else "")


def prefetch_assumption1(instance, *, seed: int = 0, exhaustive_limit: int = EXHAUSTIVE_LIMIT,
                         samples: int | None = None) -> bool:
    """Start, on a second core, the float screen of the random n-subsets
    :func:`check_assumption1` will draw with these arguments, where it will
    draw them (more n-subsets than ``exhaustive_limit``, more queries than
    d: no single rank certificate decides them); the check takes it if its
    search reaches the sample (:func:`verifier.arith.subset_sample.prefetch_sample`:
    the same counts and verdicts either way).  True if it started."""
    V, n = instance.exact_array("queries"), instance.n
    if V.dtype == object or not (math.comb(V.shape[0], n) > exhaustive_limit and V.shape[0] > V.shape[1]):
        return False
    return prefetch_sample(V, n, samples=_samples(instance, samples)[0], seed=seed)


@statement("assumption1", reads_given=True, conclusion_over="box", refutes=(DEPENDENT_SUBSET, AT_PRECISION))
def check_assumption1(instance, *, prec: int = 128, seed: int = 0,
                      exhaustive_limit: int = EXHAUSTIVE_LIMIT, samples: int | None = None,
                      **options) -> Evidence:
    """Kruskal rank of the queries >= n (Definition 1, exact arithmetic), and
    over the data's intervals under the dtype reading.
    ``samples``: random n-subsets when they cannot be exhausted (default
    :func:`.definition1_kruskal_rank.sample_size`)."""
    samples, note = _samples(instance, samples)
    V = instance.exact_array("queries")  # the values given: exact rationals where float64 rounds them
    res = kruskal_rank_at_least(V, instance.n, exhaustive_limit=exhaustive_limit,
                                samples=samples, seed=seed)
    box = query_box(instance, instance.n, res, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
    return kruskal_at_least_evidence(
        "assumption1", V, instance.n, res, instance=instance, what="queries",
        exhaustive_limit=exhaustive_limit, uses="Assumption 1", box=box, sample_note=note)


@negative_control("assumption1", "every query equal (degenerate='repeated-queries')")
def control_assumption1_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_assumption1(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=seed),
                             seed=seed)


@negative_control("assumption1", "queries in a 2-dim subspace, n = 3 (degenerate='low-kruskal-queries')")
def control_assumption1_low_kruskal_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_assumption1(make_instance(H=2, n=3, d=5, degenerate="low-kruskal-queries", seed=seed),
                             seed=seed)
