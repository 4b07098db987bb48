"""Findings: what a paper's authors would sign, one per fact, beside the per-instance evidence.

The rule (docs/FINDINGS.md): a **certified refutation of anything a paper
printed** -- a statement, a proof step, a constant, a number in its text --
is a :class:`Finding`; a **negative control** is a deliberately wrong
variant (:class:`Variant`) that tests our checker.  Every registered negative
control is exactly one of the two: cited by a finding as its counterexample
(a finding certificate), or declared a variant with the reason it is not
something the paper printed (:func:`variant`).  A test over the registry
enforces it (tests/verifier/statements/test_finding_rule.py).

A finding holds: the statement as printed (quoted with its public version,
section, equation and page, or ``NOT_RETRIEVED``; ``Printed.lost`` names a
formula our copy lost, which then appears in the title and the class), the
reading under which it was checked, the **strongest reading an author could
hold** and whether the finding survives it, its class
(:data:`FINDING_CLASSES`), the counterexample family with every size its
certificate depends on (``depends_on``; ``covers(options, instance)``:
whether an instance lies in it), the certificates (:class:`Witness`, each
with the verdict it must give) and the repair with its status
(:data:`REPAIR_STATUSES`: a verified repair has its own checker, an instance
where it can fail, and a negative control of its own).

A paper declares its findings and variants in its package
(``proofs/<paper>/findings*.py``) with :func:`declare` and :func:`variant`,
like pytest's strict xfail.  The report exits 0 when every verdict is
verified or as declared, and non-zero when a refutation falls outside every
declared family, when a declared certificate no longer comes out as
declared, or on an error (:func:`reproduces`, :func:`covered_by`).

>>> w = Witness("counterexample", "lemma2", options=(("H", 1), ("n", 3), ("d", 5)))
>>> w.opts(), w.expect
({'H': 1, 'n': 3, 'd': 5}, 'refuted')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: The classes of a finding and what each means.  The first seven say what
#: is wrong with something printed (a refutation); the last three what a
#: check added where nothing printed is refuted.
FINDING_CLASSES = {
    "missing hypothesis": "false without a hypothesis the paper does not state",
    "boundary case": "false at an edge value of a parameter the statement allows (S = 1, H = 0, d = 1)",
    "wrong constant": "a constant, a rate or a number printed is wrong; the statement it serves may hold",
    "false as worded": "the printed words, read plainly, are refuted; the strongest reading is argued beside",
    "false as intended": "false under the reading the paper itself uses (its proof, its corollaries)",
    "proof step false": "a step of a proof, as printed, is refuted; the statement it serves is not thereby refuted",
    "conjecture refuted": "a conjecture whose printed formula we have is refuted",
    "sharpened": "what is printed holds, and a certificate shows a sharper statement",
    "confirmed": "what is printed holds under its strongest reading, certified where checkable",
    "our reading of a lost formula": "the printed formula is lost ([...]): what we certify bears on our readings "
                                     "of it, and nothing printed is refuted",
}
REFUTING_CLASSES = ("missing hypothesis", "boundary case", "wrong constant", "false as worded", "false as intended",
                    "proof step false", "conjecture refuted")
LOST_FORMULA = "our reading of a lost formula"
#: counterexample: refutes what is printed; repair / repair control: the repair verified, and a wrong variant of it
#: refuted; tightness: a sharpened statement cannot be sharpened further; confirmation: what holds; reading: a
#: certificate about one reading that is not the strongest
WITNESS_ROLES = ("counterexample", "repair", "repair control", "tightness", "confirmation", "reading")
#: what is known of a repair: proved (a proof, cited), verified (its own checker on instances where it can fail,
#: with a negative control of its own), conjectured (tested, not proved: what was tested is said), none
REPAIR_STATUSES = ("proved", "verified", "conjectured", "none")
NOT_RETRIEVED = "not retrieved"


@dataclass(frozen=True)
class Printed:
    """The statement as printed: ``text`` (a quotation; ``[...]`` marks a
    formula our copy of the paper lost; ``NOT_RETRIEVED`` when we have no
    wording), ``where`` (public version, section, equation, page) and
    ``source`` (where the quoted text was taken from).  ``lost``: the formula
    the finding is about, when our copy lost it, and our reading of it."""

    text: str
    where: str
    source: str
    lost: str = ""

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
    """One fact about one printed statement (see the module docstring).
    ``claim``: the checker's variant claim the finding is about ("" the
    statement itself, e.g. "T4" for a proof step checked by ``claim="T4"``):
    only findings about the statement itself place refuted report instances."""

    key: str
    paper: str
    statement: str
    kind: str
    title: str
    printed: Printed
    reading: str
    strongest: str
    survives: bool
    family: str
    witnesses: tuple[Witness, ...]
    depends_on: tuple[str, ...] = ()
    repair: str = ""
    repair_id: str = ""
    repair_status: str = "none"
    reason: str = ""
    covers: Callable[[dict, object], bool] | None = None  # (instance options, instance or None) -> in the family
    claim: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in FINDING_CLASSES:
            raise ValueError(f"finding {self.key!r}: class {self.kind!r} not in {tuple(FINDING_CLASSES)}")
        if not self.witnesses:
            raise ValueError(f"finding {self.key!r}: no witness (a finding without a certificate is a guess)")
        if self.kind in REFUTING_CLASSES and not any(w.role == "counterexample" and w.expect == "refuted"
                                                     for w in self.witnesses):
            raise ValueError(f"finding {self.key!r} ({self.kind}) declares no refuted counterexample")
        if self.printed.lost and self.kind in REFUTING_CLASSES:
            raise ValueError(f"finding {self.key!r}: the formula is lost ({self.printed.lost}); refuting our reading "
                             f"of it is not refuting the paper: class {LOST_FORMULA!r}, 'sharpened' or 'confirmed'")
        if self.kind == LOST_FORMULA and not self.printed.lost:
            raise ValueError(f"finding {self.key!r}: class {LOST_FORMULA!r} needs Printed.lost")
        if self.printed.lost and "lost" not in self.title:
            raise ValueError(f"finding {self.key!r}: the formula is lost: the title must say so")
        if not self.strongest:
            raise ValueError(f"finding {self.key!r}: no strongest reading argued")
        if self.repair_status not in REPAIR_STATUSES:
            raise ValueError(f"finding {self.key!r}: repair status {self.repair_status!r} not in {REPAIR_STATUSES}")
        if self.repair_status == "verified":
            roles = {(w.role, w.expect) for w in self.witnesses}
            if not self.repair_id or not {("repair", "verified"), ("repair control", "refuted")} <= roles:
                raise ValueError(f"finding {self.key!r}: a verified repair needs its checker (repair_id), a verified "
                                 "repair witness where it can fail and a refuted repair control")

    @property
    def refutes(self) -> bool:
        """Something printed is expected refuted (strict xfail)."""
        return self.kind in REFUTING_CLASSES

    @property
    def class_label(self) -> str:
        """The class, qualified when the printed formula is lost."""
        return self.kind + (f" ({LOST_FORMULA})" if self.printed.lost and self.kind != LOST_FORMULA else "")

    @property
    def declared(self) -> str:
        """The declaration, in one line."""
        return (f"expected refuted as printed ({self.class_label}): {self.reason}" if self.refutes
                else f"{self.class_label}: {self.reason}")

    def in_family(self, options: dict, instance=None) -> bool:
        """Whether the instance (its options; the instance itself when at hand) lies in the family."""
        if self.covers is None:
            return False
        try:
            return bool(self.covers(dict(options), instance))
        except Exception:  # noqa: BLE001 - an instance the family cannot even build lies outside it
            return False


@dataclass(frozen=True)
class Variant:
    """A negative control that is a deliberately wrong variant (not something
    printed): ``control`` the start of its description, ``why`` what makes it
    ours (a bound lowered by one, a broken hypothesis, data failing a property)."""

    statement: str
    control: str
    why: str


FINDINGS: dict[str, Finding] = {}
VARIANTS: dict[tuple[str, str], Variant] = {}


def declare(finding: Finding) -> Finding:
    """Register a paper's known finding (idempotent per key)."""
    FINDINGS.setdefault(finding.key, finding)
    return FINDINGS[finding.key]


def variant(statement: str, control: str, why: str) -> Variant:
    """Declare the negative control of ``statement`` whose description starts
    with ``control`` a deliberately wrong variant (idempotent)."""
    return VARIANTS.setdefault((statement, control), Variant(statement, control, why))


def findings_of(paper: str | None = None) -> list[Finding]:
    """The declared findings (of ``paper``), in the paper's statement order
    (declaration order within a statement); loads the papers."""
    from verifier.statements import registry

    registry.load_all()
    order = {sid: i for i, sid in enumerate(registry.REGISTRY)}
    found = [f for f in FINDINGS.values() if paper is None or f.paper == paper]
    return sorted(found, key=lambda f: (list(registry.PAPERS).index(f.paper) if f.paper in registry.PAPERS else 99,
                                        order.get(f.statement, len(order))))


def errata_reference(finding: Finding) -> str:
    """Where the finding is written up: the paper's errata document and its number there."""
    number = [f.key for f in findings_of(finding.paper)].index(finding.key) + 1
    return f"ERRATA-{finding.paper}.md, finding {number}"


def classify_control(statement: str, description: str) -> tuple[str, str]:
    """("finding", key) for a control a finding cites as its counterexample,
    ("variant", why) for a declared variant, ("unclassified", "") otherwise."""
    cites = [f.key for f in findings_of() for w in f.witnesses if w.role == "counterexample"
             and w.statement == statement and w.control and description.startswith(w.control)]
    var = [v.why for (sid, c), v in VARIANTS.items() if sid == statement and description.startswith(c)]
    if cites and not var:
        return "finding", cites[0]
    if var and not cites:
        return "variant", var[0]
    return "unclassified", ("cited by a finding AND declared a variant" if cites and var else "")


def covered_by(statement: str, options: dict, instance=None) -> Finding | None:
    """The declared finding whose counterexample family holds the refuted
    instance ``options`` of ``statement`` (None: a new refutation)."""
    for f in findings_of():
        if f.statement == statement and not f.claim and f.refutes and f.in_family(options, instance):
            return f
    return None


def instance_of(statement: str, options: dict, instance=None):
    """The instance a family is decided on: the one at hand, else built from its options."""
    if instance is not None:
        return instance
    from verifier.statements.runner import build_instance

    return build_instance(statement, **options)


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
