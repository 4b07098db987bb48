"""Definition 2 (Sec. 3): general position.

Statement
---------
A set of m vectors in R^d is in general position if it has the maximal
possible Kruskal rank (Definition 1), kr(V) = min(m, d): every subset of
min(m, d) vectors is linearly independent.  The instance's queries, drawn
Gaussian, are claimed to be in general position (almost surely).

Construction
------------
:func:`verifier.arith.kruskal.general_position`: the min(m, d)-subsets are
exhausted in exact arithmetic while C(m, min(m, d)) <= ``exhaustive_limit``;
otherwise the paper's random-subset test runs as evidence and may turn up a
dependent subset (a witness).

Checks
------
1. Every min(m, d)-subset independent (exact exhaustion): verified.
2. A dependent subset of size <= min(m, d) with an exact null combination,
   re-checked here over Q: refuted (not in general position).
3. Neither (too many subsets, no witness): inconclusive, with the sampled
   evidence and the subset count that exhaustion would need.

Not established
---------------
General position of large sets (the paper's Sec. 5.1 data): only sampled
evidence unless a witness is found.  Under the exact reading (generated
instances, ``--exact-input``, arrays given in Python) rounding-level
near-dependence is not dependence; for a user's file general position is
certified at every point of the data's intervals, or refuted at an explicit
dependent point ("fails at the data's precision").  Assumption 1
(kr >= n) is weaker than general position when n < d; see ``assumption1``.

References
----------
arXiv:2306.02010v3, Sec. 3, Definition 2; Sec. 5.1 (General position fails
on ViT features while Assumptions 1-2 hold).

>>> import numpy as np
>>> check_definition2(None, vectors=np.eye(3)[[0, 1, 2, 0]]).verdict
'refuted'
"""
from __future__ import annotations

import math

from verifier.arith.compare import Decision
from verifier.arith.kruskal import general_position
from verifier.data.instances import make_instance
from verifier.data.precision import exact_reading
from verifier.statements.at_precision import at_data_precision
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import AT_PRECISION, DEPENDENT_SUBSET, kruskal_refutation
from .definition1_kruskal_rank import (
    EXHAUSTIVE_LIMIT,
    METHOD,
    SAMPLES,
    build_vector_set,
    exhaustion_certificate,
    kruskal_steps,
    planted_triple,
    set_summary,
    vector_box,
    witness_certificate,
)


@statement("definition2", reads_given=True, conclusion_over="box", refutes=(DEPENDENT_SUBSET, AT_PRECISION))
def check_definition2(instance, *, prec: int = 128, seed: int = 0, vectors="queries",
                      exhaustive_limit: int = EXHAUSTIVE_LIMIT, samples: int = SAMPLES,
                      **options) -> Evidence:
    """Are the vectors (default: the queries) in general position?"""
    V = build_vector_set(instance, vectors)
    m, d = V.shape
    cap = min(m, d)
    res = general_position(V, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
    exact = res.at_least(cap)
    arrays = {"queries": ("queries",), "tokens": ("contexts",)}.get(vectors, ()) if isinstance(vectors, str) else ()
    precision = instance.precision if instance is not None and arrays else exact_reading("arrays")
    box = vector_box(instance, vectors, V, cap, res, exhaustive_limit=exhaustive_limit, samples=samples,
                     seed=seed) if cap > 0 else None
    outcome = at_data_precision(exact, box, precision, *(arrays or ("vectors",)), what="general position")
    decision = outcome.decision
    certs = []
    if exact is Decision.TRUE:
        certs.append(exhaustion_certificate(V, cap))
        reason = f"in general position: every {cap}-subset of the {m} vectors in R^{d} is independent"
    elif exact is Decision.FALSE:
        certs.append(witness_certificate(V, res))
        reason = (f"not in general position: the dependent {len(res.witness)}-subset {list(res.witness)} "
                  f"gives kr <= {res.upper} < min(m, d) = {cap}")
    else:
        reason = (f"undecided: C({m},{cap}) = {math.comb(m, cap)} subsets exceed exhaustive_limit="
                  f"{exhaustive_limit}; {res.sampled_independent}/{res.sampled} random {cap}-subsets "
                  "independent (evidence); exhaustion or a witness would decide it")
    if box is not None:
        certs.append(box.to_dict())
    reason = outcome.reason or reason
    measured = {"kruskal_lower": res.lower, "kruskal_upper": res.upper, "min(m,d)": cap,
                "sampled_independent": f"{res.sampled_independent}/{res.sampled}", **outcome.measured}
    return conclude(
        "definition2", decision, claimed={"kruskal_rank": f"= min(m, d) = {cap}"}, measured=measured,
        certified=decision is not Decision.UNDECIDED, method=METHOD, margin=None,
        certificates=certs, instance=set_summary(instance, V, vectors), reason=reason,
        trail=kruskal_steps(res) + [Step(reason, uses="Definition 2")], refutation=kruskal_refutation(exact),
    )


@negative_control("definition2", "v3 = v1 + 2 v2 planted among 6 random vectors in R^5")
def control_definition2_planted_dependency(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_definition2(None, vectors=planted_triple(seed), seed=seed)


@negative_control("definition2", "repeated queries (degenerate='repeated-queries')")
def control_definition2_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=seed)
    return check_definition2(inst, seed=seed)
