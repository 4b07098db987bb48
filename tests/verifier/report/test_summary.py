"""What both renderings say in the same words: a refutation inside declared findings is shown "refuted, as
declared"; a verified statement whose proof uses one not verified in the run gets a note on its map."""
from __future__ import annotations

from verifier.report.summary import (
    AS_DECLARED,
    map_notes,
    paper_map_notes,
    rests_on_unverified,
    shown_statuses,
    table_rows,
)


def _row(sid, status, depends=(), verdicts=("verified",)):
    return {"id": sid, "status": status, "depends": list(depends), "reference": sid.upper(), "paper": "p",
            "implemented": True, "kind": "claim of the paper", "instances": [{"verdict": v} for v in verdicts],
            "verdict_counts": {v: verdicts.count(v) for v in set(verdicts)}, "controls_rejected": 0,
            "controls_total": 0}


def _results(rows, refutations):
    return {"statements": {r["id"]: r for r in rows}, "papers_order": ["p"], "findings": [],
            "summary": {"refutations": refutations, "status_counts": {}}}


def test_refuted_as_declared_only_when_every_refuted_instance_is():
    rows = [_row("a", "refuted", verdicts=("refuted", "refuted")), _row("b", "refuted", verdicts=("refuted", "refuted")),
            _row("c", "verified")]
    refs = [{"statement": "a", "declared": "a.k", "command": "1"}, {"statement": "a", "declared": "a.k", "command": "2"},
            {"statement": "b", "declared": "b.k", "command": "3"}, {"statement": "b", "declared": None, "command": "4"}]
    res = _results(rows, refs)
    assert shown_statuses(res) == {"a": AS_DECLARED, "b": "refuted", "c": "verified"}
    shown = {sid: (r["shown"], r["status"], others) for sid, r, others, _ in table_rows(res)}
    assert shown["a"] == (AS_DECLARED, AS_DECLARED, "2 refuted (as declared)")
    assert shown["b"] == ("refuted", "refuted", "2 refuted")  # one outside every family: a bare refutation


def test_rests_on_unverified_follows_the_proof_through_verified_steps():
    depends = {"lemma": [], "thm": ["lemma"], "cor": ["thm", "prop"], "prop": [], "contrib": ["cor"], "side": []}
    status = {"lemma": AS_DECLARED, "thm": "inconclusive", "cor": "verified", "prop": "verified",
              "contrib": "verified (numerical)", "side": "verified"}
    ids = list(depends)
    assert rests_on_unverified(ids, depends, status) == {
        "cor": [("thm", ""), ("lemma", "thm")], "contrib": [("thm", "cor"), ("lemma", "cor")]}
    notes = dict(map_notes(ids, depends, status, {s: s.title() for s in ids}))
    assert notes["cor"] == "Thm (inconclusive) and, through it, Lemma (refuted, as declared)"
    assert notes["contrib"] == "Cor (verified) and, through it, Thm (inconclusive) and Lemma (refuted, as declared)"


def test_no_note_when_every_dependency_is_verified():
    depends = {"a": [], "b": ["a"]}
    assert rests_on_unverified(["a", "b"], depends, {"a": "verified", "b": "verified"}) == {}
    assert rests_on_unverified(["a", "b"], depends, {"a": "error", "b": "verified"}) == {"b": [("a", "")]}


def test_paper_map_notes_read_results():
    rows = [_row("l2", "refuted", verdicts=("refuted",)), _row("t1", "verified", ["l2"])]
    res = _results(rows, [{"statement": "l2", "declared": "l2.k", "command": "x"}])
    (note,) = paper_map_notes(res, "p")
    assert note.startswith("T1 (`t1`) is verified") and "L2 (refuted, as declared)" in note
