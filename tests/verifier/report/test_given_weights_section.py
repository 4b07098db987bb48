"""The report's section on given weights: the verifier's own weights re-read
through --weights give certified verdicts; the rendering keeps the table
intact (no stray '|'); the ViT row is skipped in quick mode, with the reason."""
from __future__ import annotations

from verifier.report import given_weights


def test_quick_section():
    section = given_weights.run_section("quick", seed=0)
    assert not section["error"]
    rows = section["rows"]
    assert [r["name"] for r in rows[:2]] == [name for name, _ in given_weights.CONSTRUCTIONS]
    for r in rows[:2]:
        assert r["theorem1"] == "verified"
        assert [c["statement"] for c in r["checks"]] == list(given_weights.STATEMENTS)
        assert all(c["verdict"] == "verified" and c["certified"] for c in r["checks"]), r
        assert "at the data's precision" in r["reading"]
    assert rows[2]["skipped"].startswith("quick mode")
    md = given_weights.markdown_section(section)
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in table}) == 1  # every row has the header's columns
    from verifier.statements import display

    assert given_weights.markdown_section(display.stable(section)).count("|") == md.count("|")  # as results.json prints
    page = given_weights.insert_html("<html><body></body></html>", section)
    assert page.endswith("</section></body></html>") and "given-weights" in page
