"""What a FALSE conclusion rests on: every path of a checker that can
conclude FALSE names its :class:`Refutation`, and the kind decides what the
verdict may be (:func:`verifier.statements.evidence.conclude`).

Kinds (:data:`KINDS`):

* ``counterexample``: a certified instance on which a universal statement's
  conclusion fails (a witness over Q, a ball that excludes the claim);
* ``no-choice-works``: an existence statement ("there are weights ...")
  refuted for EVERY choice: a rank or structural cap that holds for all
  weights, an identity every network satisfies, an exact impossibility;
* ``at-data-precision``: a data property that fails at a certified point
  inside the rounding intervals of a user's floats
  (:mod:`verifier.statements.at_precision`);
* ``failed-construction``: a construction of a witness that did not work
  (an unlucky draw, a step of our own construction that broke).  It is
  NEVER a refutation: the verdict is "inconclusive", with the reason.

``variant`` is set when the caller changed the claim (a negative control's
option: a pinned W', c or w, a lowered bound, a proof step checked on its
own): the FALSE refutes that variant, never the paper's statement, and the
reason says so.  A statement registered with ``exists=True`` may refute
its own (unvaried) claim only by ``no-choice-works``; a universal one only
by ``counterexample`` or ``at-data-precision``
(:func:`allowed_for`; ``tests/verifier/statements/test_verdict_paths.py``).

>>> r = Refutation("failed-construction", "Eq. (21) failed for every draw")
>>> r.certifies
False
>>> Refutation("no-choice-works", "rank(Z) <= H(n-1)+1 < T for any weights").certifies
True
"""
from __future__ import annotations

from dataclasses import dataclass

#: kind -> what it means (the inventory docs/VERDICT_PATHS.md prints this table)
KINDS = {
    "counterexample": "a certified instance on which a universal statement's conclusion fails",
    "no-choice-works": "an existence statement refuted for EVERY choice (a cap or identity that holds for all "
                       "weights, an exact impossibility)",
    "at-data-precision": "a data property that fails at a certified point inside the rounding intervals of the "
                         "user's floats (verifier.statements.at_precision)",
    "failed-construction": "a construction of a witness that failed: never a refutation, the verdict is "
                           "inconclusive with the reason",
}
#: the kinds that certify a counterexample to the statement (or to its stated variant)
CERTIFIED = ("counterexample", "no-choice-works", "at-data-precision")
#: what an unvaried existence statement (resp. a universal one) may be refuted by
FOR_EXISTENCE = ("no-choice-works",)
FOR_UNIVERSAL = ("counterexample", "at-data-precision")
#: the reason's lead when a failed construction is all there is
FAILED_LEAD = "a failed construction is not a counterexample"


@dataclass(frozen=True)
class Refutation:
    """What a FALSE conclusion rests on: ``kind`` (:data:`KINDS`), ``by`` (the
    certificate, or what failed, in words) and ``variant`` (the option that
    changed the claim, "" for the statement itself)."""

    kind: str
    by: str
    variant: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"refutation kind {self.kind!r} not in {tuple(KINDS)}")
        if not self.by:
            raise ValueError("a refutation says what certifies it (or what failed)")

    @property
    def certifies(self) -> bool:
        """Does it certify a counterexample (to the statement or its variant)?"""
        return self.kind in CERTIFIED

    def to_dict(self) -> dict:
        return {"kind": self.kind, "by": self.by, "variant": self.variant or None}


def allowed_for(refutation: Refutation, *, exists: bool) -> bool:
    """May ``refutation`` refute an (existence if ``exists``) statement?  A
    failed construction always may appear (it concludes "inconclusive"); a
    variant may rest on any certified kind; the statement itself only on
    :data:`FOR_EXISTENCE` or :data:`FOR_UNIVERSAL`."""
    if not refutation.certifies:
        return True
    if refutation.variant:
        return True
    return refutation.kind in (FOR_EXISTENCE if exists else FOR_UNIVERSAL)
