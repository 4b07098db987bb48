"""The one evidence shape every checker returns.

A statement is "hypotheses => conclusion", checked on one instance.  The
verdict is derived, never typed in by a checker: :func:`conclude` combines the
hypotheses' status with the conclusion's :class:`~verifier.arith.compare.Decision`
by the rules of STATEMENTS.md (last section):

* some hypothesis refuted, or failing at the data's
  precision                                       -> "hypotheses-unmet"
  (one rule for every statement of every paper: the statement does not
  apply there, whatever its conclusion does on the instance -- a conclusion
  that holds all the same is said in the reason, never counted as verified;
  a fact a checker records that the statement does not need belongs in
  ``measured``, not in ``hypotheses``)
* conclusion certainly true                       -> "verified"
* conclusion false, every hypothesis certified    -> "refuted"
  (a FALSE names its Refutation: a certified counterexample, or a failed
  construction, which concludes "inconclusive":
  :mod:`verifier.statements.refutations`)
* otherwise (false with hypotheses only evidenced,
  or the arithmetic undecided)                    -> "inconclusive"

>>> from verifier.arith.compare import Decision
>>> ev = conclude("lemma2", Decision.TRUE, claimed="independent", measured="det = 1 + c",
...               certified=True, method="exact rationals")
>>> ev.verdict, ev.exit_code
('verified', 0)
>>> from verifier.statements.refutations import Refutation
>>> conclude("x", Decision.FALSE, hypotheses=[Hypothesis("n < d", "refuted", "n=5, d=4")],
...          claimed="", measured="", refutation=Refutation("counterexample", "a witness")).verdict
'hypotheses-unmet'
>>> conclude("x", Decision.FALSE, claimed="", measured="", certified=True,
...          refutation=Refutation("failed-construction", "the draw of W' failed")).verdict
'inconclusive'
>>> conclude("x", Decision.TRUE, hypotheses=[Hypothesis("n < d", "refuted", "n=5, d=4")],
...          claimed="", measured="").verdict
'hypotheses-unmet'
>>> conclude("x", Decision.UNDECIDED, claimed="", measured="", certified=True).certified
False
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from verifier.arith.compare import Decision
from verifier.statements.at_precision import fails_at_precision
from verifier.statements.refutations import FAILED_LEAD, Refutation

VERDICTS = ("verified", "refuted", "hypotheses-unmet", "inconclusive", "error")
EXIT_CODES = {"verified": 0, "refuted": 1, "hypotheses-unmet": 2, "inconclusive": 3, "error": 4}
HYPOTHESIS_STATUS = ("certified", "evidence", "refuted", "assumed", "fails-at-precision")
UNMET = ("refuted", "fails-at-precision")  # statuses that make a hypothesis unmet
CERTIFIABLE = ("verified", "refuted")  # the only verdicts a certificate can back
HOLDS_ANYWAY = "the conclusion holds on this instance all the same (not counted: the statement does not apply)"


def jsonable(x: Any) -> Any:
    """Plain JSON values, deterministic (sorted keys are applied at dump time)."""
    import numpy as np

    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return x
    if isinstance(x, Decision):
        return x.value
    if hasattr(x, "to_dict"):
        return jsonable(x.to_dict())
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    return str(x)  # arb, fmpq, sympy objects: their exact/ball text


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a statement, as it stands on the instance.

    status: "certified" (proved on the instance), "evidence" (tested but not
    proved, e.g. Assumption 1 by random subsets), "refuted" (a witness shows it
    fails), "fails-at-precision" (it holds for the stored floats only by less
    than the data's own rounding: :mod:`verifier.statements.at_precision`), or
    "assumed" (not checked; says why in ``detail``).
    """

    name: str
    status: str
    detail: str = ""

    def __post_init__(self):
        if self.status not in HYPOTHESIS_STATUS:
            raise ValueError(f"hypothesis status {self.status!r} not in {HYPOTHESIS_STATUS}")

    def to_dict(self):
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Step:
    """One step of an audit trail: what the proof did, in the paper's words."""

    title: str
    uses: str = ""  # which claim / lemma / equation the step applies
    data: dict = field(default_factory=dict)

    def to_dict(self):
        return {"title": self.title, "uses": self.uses, "data": jsonable(self.data)}


@dataclass(frozen=True)
class Evidence:
    statement: str
    verdict: str
    certified: bool
    method: str
    prec_bits: int | None
    tolerance: float | None
    claimed: Any
    measured: Any
    margin: float | None
    hypotheses: tuple[Hypothesis, ...]
    certificates: tuple[dict, ...]
    instance: dict
    seconds: float
    reason: str
    trail: tuple[Step, ...] = ()
    negative_control: bool = False
    refutation: Refutation | None = None  # what a FALSE conclusion rests on (None otherwise)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} not in {VERDICTS}")
        if self.certified and self.verdict not in CERTIFIABLE:
            raise ValueError(f"a {self.verdict!r} verdict cannot be certified (only {CERTIFIABLE})")
        unmet = [h.name for h in self.hypotheses if h.status in UNMET]
        if unmet and self.verdict in ("verified", "refuted"):
            raise ValueError(f"a {self.verdict!r} verdict with unmet hypotheses ({', '.join(unmet)}): "
                             "the verdict is hypotheses-unmet")

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_dict(self, *, with_trail: bool = True) -> dict:
        d = {
            "statement": self.statement,
            "verdict": self.verdict,
            "certified": self.certified,
            "method": self.method,
            "prec_bits": self.prec_bits,
            "tolerance": self.tolerance,
            "claimed": jsonable(self.claimed),
            "measured": jsonable(self.measured),
            "margin": jsonable(self.margin),
            "hypotheses": [h.to_dict() for h in self.hypotheses],
            "certificates": jsonable(list(self.certificates)),
            "instance": jsonable(self.instance),
            "seconds": round(float(self.seconds), 6),
            "reason": self.reason,
            "negative_control": self.negative_control,
        }
        if self.refutation is not None:
            d["refutation"] = self.refutation.to_dict()
        if with_trail:
            d["trail"] = [s.to_dict() for s in self.trail]
        return d

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(**kw), sort_keys=True)


def hypotheses_status(hypotheses: Sequence[Hypothesis]) -> str:
    """"refuted" if any is refuted (or fails at the data's precision),
    "certified" if all are, else "evidence"."""
    if any(h.status in UNMET for h in hypotheses):
        return "refuted"
    if all(h.status == "certified" for h in hypotheses):
        return "certified"
    return "evidence"


def verdict_of(conclusion: Decision, hypotheses: Sequence[Hypothesis]) -> str:
    status = hypotheses_status(hypotheses)
    if status == "refuted":
        return "hypotheses-unmet"
    if conclusion is Decision.TRUE:
        return "verified"
    if conclusion is Decision.FALSE and status == "certified":
        return "refuted"
    return "inconclusive"


def conclude(
    statement: str,
    conclusion: Decision,
    *,
    claimed: Any,
    measured: Any,
    hypotheses: Iterable[Hypothesis] = (),
    certified: bool = False,
    method: str = "float64",
    prec_bits: int | None = None,
    tolerance: float | None = None,
    margin: float | None = None,
    certificates: Iterable[dict] = (),
    instance: dict | None = None,
    seconds: float = 0.0,
    reason: str = "",
    trail: Iterable[Step] = (),
    negative_control: bool = False,
    refutation: Refutation | None = None,
) -> Evidence:
    """Build the Evidence; the verdict follows from the combination rules.

    ``certified`` says whether the conclusion's decision rests on exact or ball
    arithmetic.  It is kept only for a decided verdict ("verified" or
    "refuted"): an undecided conclusion, or one overruled by unmet hypotheses,
    was not proved, so its evidence is never "certified" whatever the checker
    passes.  A numerical (float) TRUE is still "verified" but carries
    ``certified=False`` and its ``tolerance``; a vacuous check (nothing to
    check) passes ``certified=False`` and says so in ``reason``.

    A FALSE ``conclusion`` needs its ``refutation``
    (:class:`~verifier.statements.refutations.Refutation`; ValueError
    without one).  A failed construction is no refutation: the conclusion
    becomes UNDECIDED and the reason leads with what failed.  A variant's
    refutation says in the reason that it refutes the variant only.  The
    refutation is kept beside a FALSE conclusion only.
    """
    hyps = tuple(hypotheses)
    if conclusion is Decision.FALSE:
        if not isinstance(refutation, Refutation):
            raise ValueError(f"{statement}: a FALSE conclusion needs its Refutation (what certifies it, or "
                             "kind 'failed-construction'): verifier.statements.refutations")
        if not refutation.certifies:
            conclusion = Decision.UNDECIDED
            reason = f"{FAILED_LEAD}: {refutation.by}" + (f"; {reason}" if reason else "")
        elif refutation.variant:
            note = f"refutes the variant ({refutation.variant}), not the statement"
            reason = f"{reason}; {note}" if reason else f"{refutation.by}; {note}"
    else:
        refutation = None
    verdict = verdict_of(conclusion, hyps)
    certified = bool(certified) and verdict in CERTIFIABLE
    if not reason:
        reason = _default_reason(verdict, conclusion, hyps)
    elif verdict == "hypotheses-unmet" and not reason.startswith("hypotheses not met"):
        # the unmet hypothesis is the reason: it leads, the checker's own note follows
        reason = f"{unmet_reason(hyps)}; {reason}"
    if verdict == "hypotheses-unmet" and conclusion is Decision.TRUE and HOLDS_ANYWAY not in reason:
        reason = f"{reason}; {HOLDS_ANYWAY}"
    return Evidence(
        statement=statement,
        verdict=verdict,
        certified=bool(certified),
        method=method,
        prec_bits=prec_bits,
        tolerance=tolerance,
        claimed=claimed,
        measured=measured,
        margin=margin,
        hypotheses=hyps,
        certificates=tuple(certificates),
        instance=dict(instance or {}),
        seconds=float(seconds),
        reason=reason,
        trail=tuple(trail),
        negative_control=negative_control,
        refutation=refutation,
    )


def _default_reason(verdict: str, conclusion: Decision, hyps: Sequence[Hypothesis]) -> str:
    status = hypotheses_status(hyps) if hyps else "none"
    if verdict == "verified":
        return f"conclusion holds on the instance (hypotheses: {status})"
    if verdict == "hypotheses-unmet":
        return unmet_reason(hyps)
    if verdict == "refuted":
        return "conclusion fails while every hypothesis is certified"
    if conclusion is Decision.UNDECIDED:
        return "the arithmetic could not decide the conclusion: raise --prec"
    return "conclusion fails but the hypotheses are only evidenced, not certified"


def unmet_reason(hyps: Sequence[Hypothesis]) -> str:
    """The reason of a hypotheses-unmet verdict, leading with the hypotheses
    that are not met and their details."""
    parts = []
    for h in hyps:
        if h.status in UNMET:
            how = "fails at the data's precision" if h.status == "fails-at-precision" else "refuted"
            detail = h.detail
            if detail.startswith(how):
                detail = detail[len(how):].lstrip(": ")
            parts.append(f"{h.name} {how}" + (f" ({detail})" if detail else ""))
    return "hypotheses not met on the instance: " + "; ".join(parts)


def error_evidence(statement: str, message: str, *, instance: dict | None = None,
                   seconds: float = 0.0) -> Evidence:
    """A checker raised: the row says "error" with the message."""
    return Evidence(statement=statement, verdict="error", certified=False, method="-",
                    prec_bits=None, tolerance=None, claimed=None, measured=None,
                    margin=None, hypotheses=(), certificates=(), instance=dict(instance or {}),
                    seconds=seconds, reason=message)


def hypothesis_from_evidence(name: str, ev: Evidence) -> Hypothesis:
    """A checked statement used as a hypothesis of another: verified ->
    certified (or evidence when only numerical), refuted -> refuted (or
    fails-at-precision when it fails only at the data's precision), anything
    else -> evidence (with the sub-check's reason)."""
    if ev.verdict == "refuted" and fails_at_precision(ev.measured):
        return Hypothesis(name, "fails-at-precision", ev.reason)
    if ev.verdict == "verified":
        return Hypothesis(name, "certified" if ev.certified else "evidence", ev.reason)
    if ev.verdict in ("refuted", "hypotheses-unmet"):
        return Hypothesis(name, "refuted", ev.reason)
    return Hypothesis(name, "evidence", f"{ev.verdict}: {ev.reason}")


def brief(values, limit: int = 12):
    """A short JSON-able rendering of a long index list / array for trails."""
    import numpy as np

    a = np.asarray(values)
    if a.size <= limit:
        return jsonable(np.round(a, 6) if a.dtype.kind == "f" else a)
    flat = a.ravel()
    head = np.round(flat[:limit], 6) if a.dtype.kind == "f" else flat[:limit]
    return {"first": jsonable(head), "count": int(a.size), "shape": list(a.shape)}
