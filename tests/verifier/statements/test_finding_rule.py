"""The rule of docs/FINDINGS.md, over the whole registry: a certified
refutation of anything a paper printed is a Finding; a negative control is a
deliberately wrong variant that tests our checker.  Every registered control
is exactly one of the two, and the report counts them apart."""
from __future__ import annotations

import pytest

from verifier.statements import findings, registry

#: words by which a control's description says it refutes something printed (a proof step, a footnote, a sentence,
#: a number in the text): such a control must be a finding's certificate, never a "negative control"
PRINTED_MARKS = ("proof step", "step (", "footnote", "Exp. ", "the proof's", "Sec. ", "the rate")

#: the twelve defects issue 34 found filed as negative controls, each now a finding (statement, control)
ONCE_CONTROLS = {
    "dana_prop3.rate": "neg_prop3_rate",
    "dana_lemma2.hyperplane_step": "neg_hyperplane",
    "dana_thm1_eps0.skip_head": "neg_skiphead",
    "dana_thm1_eps0.wv_rank": "neg_wv_rank",
    "dana_thm1_eps0.det_G": "D6: step (iv)",
    "dana_thm1_eps.footnote8": "neg_p1vp1",
    "dana_corollary1.maximal": "upper-bound reading",
    "dana_corollary1.no_heads": "neg_cor1_H0",
    "dana_contrib1.d_equals_1": "neg_contrib1_d1",
    "dana_corollary2.above_one": "neg_cor2_cap",
    "dana_thm2.t4": "T4: the proof's",
    "dana_thm2.t5": "T5: the simpler bound",
}


@pytest.fixture(scope="module")
def controls():
    reg = registry.load_all()
    return [(sid, c.description) for sid, st in reg.items() for c in st.controls]


def test_every_control_is_a_finding_certificate_or_a_declared_variant(controls):
    unclassified = [(sid, d[:60], findings.classify_control(sid, d)[1]) for sid, d in controls
                    if findings.classify_control(sid, d)[0] == "unclassified"]
    assert not unclassified, "classify each: cite it from a finding, or declare it a variant with why: " \
        f"{unclassified}"


def test_a_control_that_names_something_printed_is_a_finding(controls):
    for sid, d in controls:
        if any(m in d for m in PRINTED_MARKS):
            assert findings.classify_control(sid, d)[0] == "finding", (sid, d)


def test_every_variant_declaration_names_exactly_one_control(controls):
    for (sid, start), v in findings.VARIANTS.items():
        hits = [d for s, d in controls if s == sid and d.startswith(start)]
        assert len(hits) == 1, (sid, start, hits)
        assert v.why.strip(), (sid, start)


def test_the_defects_filed_as_controls_are_findings_once_each(controls):
    for key, start in ONCE_CONTROLS.items():
        f = findings.FINDINGS[key]
        assert f.refutes and any(w.role == "counterexample" and w.control.startswith(start[:12]) or
                                 w.control and start.startswith(w.control) for w in f.witnesses), key
        hits = [(sid, d) for sid, d in controls if d.startswith(start)]
        assert len(hits) == 1 and findings.classify_control(*hits[0]) == ("finding", key), (key, hits)
    # once per fact: no control is the counterexample of two findings
    cited = [(w.statement, w.control) for f in findings.findings_of() for w in f.witnesses
             if w.role == "counterexample" and w.control]
    assert len(cited) == len(set(cited))


def test_every_refutation_of_something_printed_is_certified():
    for f in findings.findings_of():
        if f.refutes:
            assert all(w.certified for w in f.witnesses if w.role == "counterexample"), f.key


def test_a_lost_formula_refutes_nothing():
    for f in findings.findings_of():
        assert ("[...]" in f.printed.text) == bool(f.printed.lost), f.key  # [...] marks a lost formula, only that
        if f.printed.lost:
            assert not f.refutes and "lost" in f.title, f.key
    probe = findings.FINDINGS["appendixI1.conjecture"]
    assert probe.kind == findings.LOST_FORMULA and probe.survives


def test_the_report_counts_controls_and_finding_certificates_apart():
    from verifier.report.rows import run_controls, summarise

    rows = run_controls("dana_corollary2", seed=0)
    assert [c["role"] for c in rows] == ["finding certificate"]
    row = summarise("dana_corollary2", None, rows)
    assert row["controls_total"] == 0 and row["finding_certificates"] == ["dana_corollary2.above_one"]
