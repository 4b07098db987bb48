"""The data hypotheses of the appendix's claims and lemmas, read as the
assumptions are: on the values given, and at the data's precision.

Claim 1, Claim 2, Lemmas 3-4 and Remark 1 need a few of the queries to be
independent, the queries' Kruskal rank to exceed |J|, or the contexts to have
full row rank.  Each helper returns one :class:`~verifier.statements.evidence.Hypothesis`:

* "refuted": the values stored fail it (an exact null combination);
* "fails-at-precision": a user's floats satisfy it as stored, but an explicit
  point of the data's intervals does not (exact rationals,
  :func:`verifier.arith.box_rank.singular_point`): the statement's verdict is
  then hypotheses-unmet, as Theorem 1's is through Assumption 1;
* "certified": it holds for the values stored (exact reading) or at every
  point of the data's intervals (:mod:`verifier.arith.box_subsets`);
* "evidence": undecided (sampled subsets, or neither certificate decides).

Never the float64 working copy: the values given (``Instance.exact_array``)
decide, so int64 beyond 2^53 and long doubles are read as they are.

>>> from verifier.data.instances import make_instance
>>> queries_independent(make_instance(H=2, n=3, d=5, seed=0), [0, 1, 2], "queries e^(1..3)").status
'certified'
"""
from __future__ import annotations

import numpy as np

from verifier.arith.box_subsets import stack_over_box
from verifier.arith.compare import Decision
from verifier.arith.exact import exact_nullspace, exact_rank
from verifier.arith.kruskal import kruskal_rank_at_least
from verifier.statements.at_precision import at_data_precision
from verifier.statements.evidence import Hypothesis

from .definition1_kruskal_rank import EXHAUSTIVE_LIMIT, SAMPLES

__all__ = ["queries_independent", "contexts_full_row_rank", "queries_kruskal_at_least"]


def _status(decision: Decision, at_stored: bool) -> str:
    if decision is Decision.TRUE:
        return "certified"
    if decision is Decision.FALSE:
        return "refuted" if at_stored else "fails-at-precision"
    return "evidence"


def _rows_box(instance, name: str, groups: list) -> tuple[Decision, str]:
    """Every matrix ``name[g]`` (g a row selection) of full row rank at every
    point of its intervals?  (decision, detail)."""
    if instance.precision.exact_for(name):
        return Decision.TRUE, "exact reading"
    mids, rads = zip(*(instance.ball(name, g) for g in groups))
    rads = None if rads[0] is None else np.stack(rads)
    exact = instance.exact_array(name)
    box = stack_over_box(np.stack(mids), rads, exact=lambda b: exact[groups[b]],
                         gaps=lambda b: instance.half_gaps(name, groups[b]))
    if box.decision is Decision.FALSE:
        w = box.witness_index[0]
        return Decision.FALSE, (f"dependent at an explicit point of the data's intervals (selection {w}; exact "
                                f"rationals, {box.witness.used:.3g} of the half-gaps used)")
    if box.decision is Decision.TRUE:
        return Decision.TRUE, "independent at every point of the data's intervals (certified)"
    return Decision.UNDECIDED, f"undecided at the data's precision ({box.uncertified} of {box.screened} not certified)"


def queries_independent(instance, rows, what: str) -> Hypothesis:
    """The queries ``rows`` linearly independent (Assumption 1 on them)."""
    rows = [int(t) for t in rows]
    name = f"{what} linearly independent (Assumption 1)"
    Q = instance.exact_array("queries")[rows]
    if exact_rank(Q) < len(rows):
        c = exact_nullspace(Q.T)[0]
        return Hypothesis(name, "refuted", f"exact null combination sum_t c_t e^(t) = 0 with c = {[str(x) for x in c]}")
    dec, detail = _rows_box(instance, "queries", [rows]) if rows else (Decision.TRUE, "no query")
    return Hypothesis(name, _status(dec, False), f"exact rank {len(rows)} over Q of the values given; {detail}")


def contexts_full_row_rank(instance, rows) -> Hypothesis:
    """rank E^(t) = n for every t in ``rows`` (Assumption 2 on them)."""
    rows = [int(t) for t in rows]
    n, name = instance.n, "contexts of rank n (Assumption 2)"
    E = instance.exact_array("contexts")
    if n > instance.d:
        return Hypothesis(name, "refuted", f"n = {n} tokens in R^{instance.d}: rank <= d < n")
    bad = [t for t in rows if exact_rank(E[t]) < n]
    if bad:
        c = exact_nullspace(np.asarray(E[bad[0]]).T)[0]
        return Hypothesis(name, "refuted", f"rank-deficient contexts {bad[:5]}; E^({bad[0]})^T c = 0 with c = "
                                           f"{[str(x) for x in c]}")
    firsts = [rows[0]] if instance.shared_context and rows else rows
    dec, detail = _rows_box(instance, "contexts", firsts) if firsts else (Decision.TRUE, "no context")
    return Hypothesis(name, _status(dec, False), f"exact rank n = {n} for {len(rows)} contexts; {detail}")


def queries_kruskal_at_least(instance, k: int, what: str, *, exhaustive_limit: int = EXHAUSTIVE_LIMIT,
                             samples: int = SAMPLES, seed: int = 0) -> Hypothesis:
    """The queries' Kruskal rank >= k (every k of them independent), on the
    values given and at the data's precision (Assumption 1's machinery)."""
    from .assumption1_query_kruskal_rank import query_box

    V = instance.exact_array("queries")
    res = kruskal_rank_at_least(V, k, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
    exact = res.at_least(k)
    box = query_box(instance, k, res, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed) \
        if 1 <= k <= min(V.shape) else None
    out = at_data_precision(exact, box, instance.precision, "queries", what=f"Kruskal rank >= {k}")
    detail = (f"kr in [{res.lower}, {res.upper}] for the values given"
              + (f", witness {list(res.witness)}" if res.witness else "")
              + (f", {res.sampled_independent}/{res.sampled} random subsets independent" if res.sampled else "")
              + (f"; {out.reason}" if out.reason else ""))
    return Hypothesis(what, _status(out.decision, exact is Decision.FALSE), detail)
