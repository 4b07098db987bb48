"""``mha-verify list``: the statements in the project's own words, and the
docs page generated from them (kept up to date by this test)."""
import json
from pathlib import Path

from verifier.cli import listing, main
from verifier.statements import registry

DOCS = Path(__file__).resolve().parents[3] / "docs" / "STATEMENTS.md"


def test_docs_page_is_generated_from_the_checkers():
    assert DOCS.read_text() == listing.markdown(), (
        "docs/STATEMENTS.md is out of date: regenerate it with "
        "`mha-verify list --long --markdown > docs/STATEMENTS.md`")


def test_long_listing_states_every_statement_without_sphinx_roles_or_doctests(capsys):
    assert main(["list", "--long"]) == 0
    out = capsys.readouterr().out
    for sid, st in registry.load_all().items():
        assert f"{sid} ({st.reference})" in out
    assert ":func:" not in out and ":mod:" not in out and ">>>" not in out
    assert "needs: n < d; d_v >= d_out" in out and "Not established:" in out


def test_list_json_is_one_object(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["statements"]
    th = next(r for r in rows if r["id"] == "theorem1")
    assert th["writes_weights"] and "n < d" in th["requires"]
