"""The exit code a pipeline gates on: 0 when every verdict is verified or as
declared, 1 on a new refutation, 3 when a declared finding no longer
reproduces, 4 on an error; --strict: 1 on any refutation."""
from __future__ import annotations

import pytest

from verifier import recheck
from verifier.cli import main
from verifier.report import errata as report_errata
from verifier.report import findings as report_findings
from verifier.statements import registry


def _row(sid, *instances, controls=()):
    inst = [{"options": o, "verdict": v, "command": f"mha-verify check {sid}", "reason": "r"} for o, v in instances]
    status = "refuted" if any(v == "refuted" for _, v in instances) else "verified"
    return {"id": sid, "status": status, "instances": inst, "controls": list(controls)}


def _entry(*verdicts_expected, key="dana_thm2.c_below_half"):
    ws = [{"verdict": v, "expect": e, "certified": v in ("refuted", "verified"), "what": "w", "statement": "s",
           "role": "counterexample", "reason": "r",
           "command": "c", "reproduces": v == e, "why_not": "" if v == e else f"gave {v}"}
          for v, e in verdicts_expected]
    return {"key": key, "statement": "dana_thm2", "class": "missing hypothesis", "refutes": True,
            "witnesses": ws, "reproduced": all(w["reproduces"] for w in ws)}


@pytest.fixture(autouse=True)
def _loaded():
    registry.load_all()


def test_a_refutation_inside_a_declared_family_passes_and_strict_fails():
    rows = [_row("dana_thm2", ({"N": 5, "d": 3}, "refuted")), _row("lemma2", ({"H": 1}, "verified"))]
    entries = [_entry(("refuted", "refuted"))]
    assert report_findings.exit_code(rows, [], entries) == 0
    assert report_findings.exit_code(rows, [], entries, strict=True) == 1


def test_a_refutation_outside_every_family_fails():
    rows = [_row("dana_thm2", ({"N": 900, "d": 880}, "refuted"))]  # C < 1/2: not the declared fact
    assert report_findings.exit_code(rows, [], [_entry(("refuted", "refuted"))]) == 1
    assert report_findings.problems(rows, [])["new_refutations"][0]["statement"] == "dana_thm2"
    assert report_findings.exit_code([_row("lemma2", ({"H": 1}, "refuted"))], [], []) == 1


def test_a_property_failing_is_not_a_refutation():
    assert report_findings.exit_code([_row("assumption2", ({"H": 1}, "refuted"))], [], []) == 0


def test_a_declared_finding_that_no_longer_reproduces_fails():
    rows = [_row("dana_thm2", ({"N": 5, "d": 3}, "refuted"))]
    assert report_findings.exit_code(rows, [], [_entry(("verified", "refuted"))]) == 3
    assert report_findings.exit_code(rows, [], [_entry(("inconclusive", "refuted"))]) == 3  # certificate declared
    assert report_findings.exit_code(rows, [], [_entry(("error", "refuted"))]) == 4


def test_an_inconclusive_instance_inside_a_declared_family_fails():
    rows = [_row("dana_thm2", ({"N": 5, "d": 3}, "inconclusive"))]
    entries = [_entry(("refuted", "refuted"))]
    report_findings.family_counts(rows, entries)
    assert entries[0]["report_instances"]["inside family"] == {"inconclusive": 1}
    assert report_findings.exit_code(rows, [], entries) == 3


def test_a_control_not_rejected_and_an_error_still_fail():
    bad = {"description": "d", "verdict": "verified", "rejected": False, "expect": ["refuted"]}
    assert report_findings.exit_code([_row("lemma2", ({"H": 1}, "verified"), controls=[bad])], [], []) == 1
    err = _row("lemma2", ({"H": 1}, "error"))
    err["status"] = "error"
    assert report_findings.exit_code([err], [], []) == 4


def test_the_last_line_names_the_errata():
    line = report_findings.errata_line([_entry(("refuted", "refuted"))])
    assert line.startswith("known errata: 1 findings refute something printed") and \
        "dana_thm2.c_below_half (missing hypothesis)" in line
    assert "NOT REPRODUCED" in report_findings.errata_line([_entry(("verified", "refuted"))])


def test_the_findings_table_is_in_both_renderings():
    entry = dict(_entry(("refuted", "refuted")), title="T", printed={"text": "x", "where": "p. 1", "source": "s",
                                                                     "retrieved": True, "lost": ""},
                 reading="r", strongest="s", survives=True, family="f", depends_on=["N"], repair="", repair_id="",
                 repair_status="none", notes=[], declared="d", paper="dana2025")
    md = report_errata.markdown_section({"findings": [entry]})
    page = report_errata.html_section({"findings": [entry]})
    assert "| # | statement | class | finding | survives the strongest reading | status | repair |" in md
    assert "<th>survives the strongest reading</th>" in page and "<td>T</td>" in page


def test_findings_section_leads_the_markdown():
    md = "# r\n\n## Needs attention\n\nx\n"
    out = report_errata.insert_markdown(md, {"findings": []})
    assert out.index("## Findings") < out.index("## Needs attention")


def test_errata_command_writes_the_document(tmp_path, capsys):
    code = main(["errata", "dana2025", "--out", str(tmp_path)])
    doc = (tmp_path / "ERRATA-dana2025.md").read_text()
    assert code == 0, doc
    for f in ("dana_thm2", "dana_lemma2", "dana_thm1_eps0", "dana_thm2_small_c", "App. A.3", "reproduce:"):
        assert f in doc
    assert "NOT AS DECLARED" not in doc
    from verifier.statements.findings import findings_of

    dana = findings_of("dana2025")
    for k, f in enumerate(dana, 1):  # every finding once, numbered as errata_reference says, with its reading
        assert doc.count(f": {f.title}\n") == 1 and f"## {k}. `{f.statement}`: {f.title}" in doc, f.key
    assert doc.count("- **Strongest reading an author could hold**:") == len(dana)
    assert doc.count("- **The finding survives it**:") == len(dana)
    certs = sorted((tmp_path / "certificates-dana2025").glob("*.json"))
    assert len(certs) == 9 and "verifier/recheck.py" in doc  # Thm. 2 (3), Lemma 2 (2 + S = 1), Thm. 1's floor (3)
    assert recheck.main([str(p) for p in certs]) == 0  # re-checked without the project
    assert main(["errata", "nonesuch", "--out", str(tmp_path)]) == 2


def test_the_findings_table_shows_code_spans_as_code_in_html():
    """A repair cell names its checker in backticks (Markdown): the page shows <code>, never a raw backtick."""
    entry = dict(_entry(("refuted", "refuted")), title="T <b>", printed={"text": "x", "where": "p. 1", "source": "s",
                                                                         "retrieved": True, "lost": ""},
                 reading="r", strongest="s", survives=True, family="f", depends_on=["N"], repair="add C < 1/2",
                 repair_id="dana_thm2_small_c", repair_status="repaired", notes=[], declared="d", paper="dana2025")
    entry["witnesses"] = entry["witnesses"] + [dict(entry["witnesses"][0], role="repair", verdict="verified")]
    page = report_errata.html_section({"findings": [entry]})
    table = page[page.index("<table>"):page.index("</table>")]
    assert "<code>dana_thm2_small_c</code>" in table and "`" not in table
    assert "T &lt;b&gt;" in table  # the rest still escaped
