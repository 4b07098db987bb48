"""Declared findings: their shape, their families, and that a declaration
which no longer holds is caught (strict xfail)."""
from __future__ import annotations

import pytest

from verifier.statements import findings, registry
from verifier.statements.findings import Finding, Printed, Witness

PRINTED = Printed("x", "p. 1", "test")


def _finding(**kw):
    base = dict(key="t.k", paper="dana2025", statement="dana_thm2", kind="missing hypothesis", title="t",
                printed=PRINTED, reading="r", family="f",
                witnesses=(Witness("counterexample", "dana_thm2", control="neg_thm2_C"),))
    base.update(kw)
    return Finding(**base)


def test_a_finding_must_have_a_class_a_witness_and_a_counterexample():
    _finding()
    with pytest.raises(ValueError, match="class"):
        _finding(kind="probably wrong")
    with pytest.raises(ValueError, match="no witness"):
        _finding(witnesses=())
    with pytest.raises(ValueError, match="no refuted counterexample"):
        _finding(witnesses=(Witness("repair", "dana_thm2_small_c", expect="verified"),))
    with pytest.raises(ValueError, match="role"):
        Witness("guess", "dana_thm2")
    with pytest.raises(ValueError, match="not several"):
        Witness("counterexample", "dana_thm2", control="neg", experiment="capacity_probe")


def test_every_declared_finding_is_well_formed():
    registry.load_all()
    found = findings.findings_of()
    assert {f.paper for f in found} == {"mahdavi2024", "dana2025"}
    for f in found:
        assert f.printed.where and f.printed.source and f.reading and f.family
        assert f.printed.text == findings.NOT_RETRIEVED or f.printed.text.strip()
        if f.repair_id:
            assert registry.REGISTRY[f.repair_id].implemented
        for w in f.witnesses:
            if w.experiment:
                continue
            st = registry.get(w.statement)
            if w.control:  # names exactly one negative control
                assert sum(c.description.startswith(w.control) for c in st.controls) == 1, (f.key, w.control)
    assert len({f.key for f in found}) == len(found)


@pytest.mark.parametrize("sid, options, key", [
    ("dana_thm2", {"N": 5, "d": 3}, "dana_thm2.c_below_half"),
    ("dana_thm2", {"N": 3, "d": 177}, "dana_thm2.c_below_half"),  # 128 ln 4 = 177.4 >= 177: C >= 1/2
    ("dana_thm2", {"N": 3, "d": 178}, None),
    ("dana_thm2", {"N": 900, "d": 880}, None),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 5, "H": 3}, "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 4, "H": 3}, None),
    ("dana_lemma2", {"N": 2, "S": 3, "d": 5, "H": 1}, "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 2, "S": 3, "d": 4, "H": 1}, None),
    ("dana_lemma2", {"N": 5, "S": 1, "d": 2, "H": 2}, "dana_lemma2.single_token"),
    ("dana_thm1_eps0", {"N": 3, "d": 2, "d_h": 1, "H": 1, "dataset": "shared-last"}, "dana_thm1_eps0.capacity_reading"),
    ("dana_thm1_eps0", {"N": 3, "d": 2, "d_h": 2, "H": 1, "dataset": "shared-last"}, None),
    ("dana_thm1_eps0", {"N": 3, "d": 2, "d_h": 1, "H": 1, "dataset": "random"}, None),
    ("lemma2", {"H": 1, "n": 3, "d": 5}, None),
])
def test_families_place_a_refuted_instance(sid, options, key):
    f = findings.covered_by(sid, options)
    assert (f.key if f else None) == key


def test_the_thm2_family_boundary_is_128_ln_n_plus_1():
    import math

    f = findings.FINDINGS["dana_thm2.c_below_half"]
    for N in (2, 10, 900):
        edge = 128 * math.log(N + 1)
        assert f.in_family({"N": N, "d": math.floor(edge)}) and not f.in_family({"N": N, "d": math.floor(edge) + 1})


def test_reproduces_is_strict():
    w = Witness("counterexample", "dana_thm2")
    assert findings.reproduces(w, "refuted", True) == (True, "")
    assert not findings.reproduces(w, "refuted", False)[0]
    assert not findings.reproduces(w, "inconclusive", False)[0]
    assert not findings.reproduces(w, "verified", True)[0]
    assert not findings.reproduces(w, "error", False)[0]


def test_a_declaration_that_no_longer_holds_is_caught():
    """Negative control of the mechanism: declare the verified default
    instance of Lemma 2 (d = 4 < N+S-1) refuted."""
    w = Witness("counterexample", "dana_lemma2", options=(("N", 5), ("S", 2), ("d", 4), ("H", 2), ("T0", 8),
                                                          ("seed", 0)))
    ev = findings.run_witness(w)
    assert ev.verdict == "verified" and ev.certified
    ok, why = findings.reproduces(w, ev.verdict, ev.certified)
    assert not ok and "declared refuted" in why


def test_an_experiment_witness_is_not_run_here():
    with pytest.raises(ValueError, match="report layer"):
        findings.run_witness(Witness("counterexample", "capacity_probe", experiment="capacity_probe"))
