"""The hypotheses Dana et al.'s statements make about the data, as they
stand on an instance read at its precision (:mod:`verifier.data.sequence_reading`).

"Every pi_t is a point mass" (Assumption 1), "every pi_t > 0" (Assumption 2)
and "a uniform prior" are decided over every point the data stand for:

* certified: they hold at every point (exact data, or Assumption 2 on
  positive floats);
* refuted: they fail at every point (an entry whose whole interval excludes
  0 and 1; float weights whose intervals are disjoint);
* "evidence" with :data:`~verifier.statements.at_precision.UNDECIDED`: they
  hold for the stored values only, or for some of the points: the statement
  can conclude only what holds without them, so a verdict that rests on one
  is inconclusive, naming the remedy (``--exact-input`` if the stored
  values are exact).

>>> from verifier.data.sequences import from_sequences
>>> import numpy as np
>>> inst = from_sequences([[0, 0]], N=2, conditionals=np.array([[1.0, 0.0]], dtype=np.float16), exact=False)
>>> h = assumption1(inst)
>>> h.status, undecided(h)
('evidence', True)
"""
from __future__ import annotations

from verifier.arith.compare import Decision
from verifier.statements.at_precision import REMEDY, UNDECIDED
from verifier.statements.evidence import Hypothesis

__all__ = ["assumption1", "assumption2", "uniform_prior", "undecided", "undecided_reason", "ASSUMPTION1",
           "ASSUMPTION2", "UNIFORM", "METHOD"]

#: the method of a verdict decided by the data's intervals alone (exact rationals)
METHOD = "exact rationals (the data's intervals)"

ASSUMPTION1 = "Assumption 1 (point masses)"
ASSUMPTION2 = "Assumption 2 (positive conditionals)"
UNIFORM = "uniform prior"


def _hypothesis(name: str, found: tuple[Decision, str]) -> Hypothesis:
    decision, detail = found
    if decision is Decision.TRUE:
        return Hypothesis(name, "certified", detail)
    if decision is Decision.FALSE:
        return Hypothesis(name, "refuted", detail)
    return Hypothesis(name, "evidence", f"{UNDECIDED}: {detail}")


def assumption1(inst) -> Hypothesis:
    return _hypothesis(ASSUMPTION1, inst.assumption1())


def assumption2(inst) -> Hypothesis:
    return _hypothesis(ASSUMPTION2, inst.assumption2())


def uniform_prior(inst) -> Hypothesis:
    return _hypothesis(UNIFORM, inst.uniform())


def undecided(h: Hypothesis) -> bool:
    """Is ``h`` undecided at the data's precision (holds for some points the data stand for only)?"""
    return h.status == "evidence" and h.detail.startswith(UNDECIDED)


def undecided_reason(hyps, what: str) -> str:
    """The reason of an inconclusive verdict whose conclusion rests on undecided hypotheses."""
    said = "; ".join(f"{h.name} {h.detail}" for h in hyps if undecided(h))
    return f"{said}; {what} rests on it, so it is not certified for the data; {REMEDY}"
