"""The inventory of verdict paths (docs/VERDICT_PATHS.md, issue 32): it is generated from the code and up to
date; every place a checker may conclude FALSE names a refutation its statement declares; every FALSE
that becomes "refuted" rests on a certified counterexample to the statement itself (for an existence
statement, a proof that no choice works) or to a stated variant; a failed construction never refutes.
Each rule is also run on a planted violation, so the test can fail."""
from pathlib import Path

import pytest

from verifier.arith.compare import Decision
from verifier.statements import registry
from verifier.statements.evidence import conclude
from verifier.statements.refutations import CERTIFIED, FOR_EXISTENCE, FOR_UNIVERSAL, KINDS, Refutation, allowed_for
from verifier.statements.runner import build_instance, run_check, run_control, undeclared_refutation
from verifier.statements.verdict_paths import conclude_sites, markdown, module_sites, statement_sites

DOCS = Path(__file__).resolve().parents[3] / "docs" / "VERDICT_PATHS.md"


def implemented():
    return [st for st in registry.load_all().values() if st.implemented]


def test_docs_page_is_generated_from_the_code():
    assert DOCS.read_text() == markdown(), (
        "docs/VERDICT_PATHS.md is out of date: regenerate it with "
        "`python -m verifier.statements.verdict_paths > docs/VERDICT_PATHS.md`")


def test_every_site_that_may_conclude_false_names_a_declared_refutation():
    import importlib

    by_site = {}
    for st in implemented():
        for s in statement_sites(st):
            by_site.setdefault((s.module, s.line), (s, []))[1].append(st)
    assert by_site
    for (module, line), (site, sts) in by_site.items():
        if not site.may_be_false:
            continue
        assert site.refutations, f"{module}:{line} may conclude FALSE without naming its refutation"
        mod = importlib.import_module(module)
        declared = {r for st in sts for r in st.refutes}
        for name in site.refutations:
            assert getattr(mod, name) in declared, f"{module}:{line}: {name} is declared by no statement using it"


def test_every_declared_refutation_is_reached_and_allowed():
    """A declared refutation is named at some site of its statement, and is a certified counterexample
    to the statement (no-choice-works for an existence statement) or to a stated variant -- or a failed
    construction, which concludes inconclusive."""
    import importlib

    for st in implemented():
        named = set()
        for s in statement_sites(st):
            mod = importlib.import_module(s.module)
            named |= {getattr(mod, n) for n in s.refutations}
        for r in st.refutes:
            assert r in named, f"{st.id}: {r.kind} '{r.by[:50]}' is declared but no site concludes with it"
            assert r.kind in KINDS and allowed_for(r, exists=st.exists), (st.id, r)
            if r.certifies and not r.variant:
                assert r.kind in (FOR_EXISTENCE if st.exists else FOR_UNIVERSAL), (st.id, r)


def test_planted_violations_are_caught():
    # a FALSE-capable conclude that names no refutation: the static scan sees it
    src = "def check(x):\n    d = Decision.FALSE if x else Decision.TRUE\n    return conclude('s', d, claimed=x)\n"
    (site,) = conclude_sites(src)
    assert site.may_be_false and not site.refutations
    # ... and the runtime refuses it
    with pytest.raises(ValueError, match="needs its Refutation"):
        conclude("s", Decision.FALSE, claimed=0, measured=0)
    # a counterexample (not a proof that no choice works) against an existence statement
    assert not allowed_for(Refutation("counterexample", "one draw of W' failed"), exists=True)
    assert allowed_for(Refutation("counterexample", "THIS W' fails", variant="W' pinned"), exists=True)
    # a failed construction never becomes "refuted"
    ev = conclude("s", Decision.FALSE, claimed=0, measured=0, certified=True,
                  refutation=Refutation("failed-construction", "one draw failed"))
    assert ev.verdict == "inconclusive" and "failed-construction" not in CERTIFIED
    # an undeclared refutation reaching the runner is an error, never a verdict
    st = registry.load_all()["lemma3"]
    stray = conclude("lemma3", Decision.FALSE, claimed=0, measured=0, certified=True,
                     refutation=Refutation("no-choice-works", "not one of lemma3's"))
    with pytest.raises(RuntimeError, match="undeclared refutation"):
        undeclared_refutation(st, stray)


def test_module_sites_resolve_through_assignments_and_helpers():
    sites = {s.function: s for s in module_sites("proofs.mahdavi2024.assumption1_query_kruskal_rank")}
    assert sites["kruskal_at_least_evidence"].refutations == ("AT_PRECISION", "DEPENDENT_SUBSET")


def test_every_negative_control_is_rejected_on_a_certified_refutation():
    """Every control of the registry: rejected as expected; a 'refuted' one rests on a declared,
    certified refutation (the runner checks it is declared)."""
    for st in implemented():
        for c in st.controls:
            ev, ok = run_control(st.id, c)
            assert ok, (st.id, c.description, ev.verdict, ev.reason)
            if ev.verdict == "refuted":
                assert ev.refutation is not None and ev.refutation.certifies and ev.refutation in st.refutes


def test_default_instances_never_rest_on_a_variant():
    """At the default options no claim is varied: a refutation there is never a variant's."""
    for st in implemented():
        ev = run_check(st.id, build_instance(st.id))
        assert ev.verdict != "error", (st.id, ev.reason)
        if ev.refutation is not None:
            assert not ev.refutation.variant, (st.id, ev.refutation)
