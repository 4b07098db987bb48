"""Findings: what a paper's authors would sign, one per fact, beside the per-instance evidence.

A :class:`Finding` is one fact about one printed statement: the statement
as printed (quoted with its page and section, or ``NOT_RETRIEVED`` where our
sources lost the text), the reading under which it was checked, its class
(:data:`FINDING_CLASSES`), the smallest counterexample family (a parameter
range, and ``covers(options)``: whether an instance of the report lies in
it), the certificates that show it (:class:`Witness`: a checker on one
representative instance, a negative control, or an experiment's probe, each
with the verdict it must give), and the repair (a statement with its own
checker id, verified on instances where it is not trivially true).

A paper declares its known findings in its package (``proofs/<paper>/
findings.py``) with :func:`declare`, like pytest's strict xfail: "expected
refuted as printed, with the reason".  The report then exits 0 when every
verdict is verified or as declared, and non-zero when a refutation falls
outside every declared family, when a declared certificate no longer comes
out as declared (a changed verdict, or an inconclusive one), or on an error
(:func:`reproduces`, :func:`covered_by`).

Running a witness needs only the registry and the runner (this layer);
an experiment's probe is run by the report layer, which may import the
experiments.

>>> w = Witness("counterexample", "lemma2", options=(("H", 1), ("n", 3), ("d", 5)))
>>> w.opts(), w.expect
({'H': 1, 'n': 3, 'd': 5}, 'refuted')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: The classes of a finding.  The first four say what is wrong with a
#: printed statement; the last three what a check added to a true one.
FINDING_CLASSES = ("missing hypothesis", "boundary case", "wrong constant", "false as intended",
                   "sharpened", "conjecture refuted", "confirmed")
#: A finding whose printed statement is refuted (its counterexample must be refuted, certified).
REFUTING_CLASSES = FINDING_CLASSES[:4] + ("conjecture refuted",)
WITNESS_ROLES = ("counterexample", "repair", "tightness", "confirmation")
NOT_RETRIEVED = "not retrieved"


@dataclass(frozen=True)
class Printed:
    """The statement as printed: ``text`` (a quotation; ``[...]`` marks a
    formula our copy of the paper lost; ``NOT_RETRIEVED`` when we have no
    wording), ``where`` (page and section) and ``source`` (where the text
    was taken from, e.g. a transcription of the PDF)."""

    text: str
    where: str
    source: str

    @property
    def retrieved(self) -> bool:
        return self.text != NOT_RETRIEVED


@dataclass(frozen=True)
class Witness:
    """One certificate of a finding and how to obtain it: ``statement``'s
    checker on the instance ``options`` (pairs; the paper's instance options)
    with the checker keywords ``kwargs``, or the negative control of
    ``statement`` whose description starts with ``control``, or the report
    layer's ``experiment`` probe (its settings in ``options``).  ``expect``
    is the verdict it must give, ``certified`` whether that verdict must be
    certified."""

    role: str
    statement: str
    options: tuple = ()
    kwargs: tuple = ()
    control: str = ""
    experiment: str = ""
    expect: str = "refuted"
    certified: bool = True
    what: str = ""

    def __post_init__(self):
        if self.role not in WITNESS_ROLES:
            raise ValueError(f"witness role {self.role!r} not in {WITNESS_ROLES}")
        if bool(self.control) + bool(self.experiment) + bool(self.kwargs) > 1:
            raise ValueError("a witness is an instance (with kwargs), a control or an experiment, not several")

    def opts(self) -> dict:
        return dict(self.options)

    def keywords(self) -> dict:
        return dict(self.kwargs)


@dataclass(frozen=True)
class Finding:
    """One fact about one printed statement (see the module docstring)."""

    key: str
    paper: str
    statement: str
    kind: str
    title: str
    printed: Printed
    reading: str
    family: str
    witnesses: tuple[Witness, ...]
    repair: str = ""
    repair_id: str = ""
    reason: str = ""
    covers: Callable[[dict], bool] | None = None  # instance options -> inside the family
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in FINDING_CLASSES:
            raise ValueError(f"finding {self.key!r}: class {self.kind!r} not in {FINDING_CLASSES}")
        if not self.witnesses:
            raise ValueError(f"finding {self.key!r}: no witness (a finding without a certificate is a guess)")
        if self.kind in REFUTING_CLASSES and not any(w.role == "counterexample" and w.expect == "refuted"
                                                     for w in self.witnesses):
            raise ValueError(f"finding {self.key!r} ({self.kind}) declares no refuted counterexample")

    @property
    def refutes(self) -> bool:
        """The printed statement is expected refuted (strict xfail)."""
        return self.kind in REFUTING_CLASSES

    @property
    def declared(self) -> str:
        """The declaration, in one line."""
        return (f"expected refuted as printed ({self.kind}): {self.reason}" if self.refutes
                else f"{self.kind}: {self.reason}")

    def in_family(self, options: dict) -> bool:
        try:
            return bool(self.covers(options)) if self.covers else False
        except (KeyError, TypeError, ValueError):
            return False


FINDINGS: dict[str, Finding] = {}


def declare(finding: Finding) -> Finding:
    """Register a paper's known finding (idempotent per key)."""
    FINDINGS.setdefault(finding.key, finding)
    return FINDINGS[finding.key]


def findings_of(paper: str | None = None) -> list[Finding]:
    """The declared findings (of ``paper``), in declaration order; loads the papers."""
    from verifier.statements import registry

    registry.load_all()
    return [f for f in FINDINGS.values() if paper is None or f.paper == paper]


def covered_by(statement: str, options: dict) -> Finding | None:
    """The declared finding whose counterexample family holds the refuted
    instance ``options`` of ``statement`` (None: a new refutation)."""
    for f in findings_of():
        if f.statement == statement and f.refutes and f.in_family(options):
            return f
    return None


def reproduces(witness: Witness, verdict: str, certified: bool) -> tuple[bool, str]:
    """Whether an outcome is what ``witness`` declares, and why not."""
    if verdict == "error":
        return False, "the checker raised an error"
    if verdict != witness.expect:
        return False, f"gave {verdict}, declared {witness.expect}"
    if witness.certified and not certified:
        return False, f"gave {verdict} without a certificate (declared certified)"
    return True, ""


def run_witness(witness: Witness, *, prec: int = 128, seed: int = 0):
    """The Evidence of a checker or control witness (an experiment witness
    is run by the report layer: ``ValueError`` here)."""
    from verifier.statements import registry
    from verifier.statements.runner import build_instance, run_check, run_control

    if witness.experiment:
        raise ValueError(f"witness of {witness.statement!r} is the experiment {witness.experiment!r}: "
                         "run it from the report layer")
    st = registry.get(witness.statement)
    if witness.control:
        hits = [c for c in st.controls if c.description.startswith(witness.control)]
        if len(hits) != 1:
            raise KeyError(f"{witness.statement!r}: {len(hits)} negative controls start with {witness.control!r}")
        ev, _ = run_control(witness.statement, hits[0], prec=prec, seed=seed)
        return ev
    opts = witness.opts()
    inst = build_instance(witness.statement, **opts)
    return run_check(witness.statement, inst, prec=prec, seed=int(opts.get("seed", seed)), **witness.keywords())


def control_function(witness: Witness) -> str:
    """``module.function`` of a control witness (for its reproduce command)."""
    from verifier.statements import registry

    st = registry.get(witness.statement)
    c = next(c for c in st.controls if c.description.startswith(witness.control))
    return f"{c.run.__module__}.{c.run.__qualname__}"
