"""The report's section per later paper: its own map, results table, the
registered tables (a failing table is an error row, never hidden), and the
first paper's sections keep only the first paper's statements."""
import json

from verifier.report import build as report
from verifier.statements import registry
from verifier.statements.registry import TableData


def test_second_paper_section(tmp_path, monkeypatch):
    registry.load_all()
    monkeypatch.setitem(registry.TABLES, "dana_mahdavi_comparison",
                        TableData("dana_mahdavi_comparison", "dana_thm1_eps0", "T", "C",
                                  lambda seed: {"columns": ["a", "b"], "rows": [[1, 2]], "notes": ["n"]}))
    code = report.write_report(out=tmp_path, mode="quick", seed=0,
                               statements=["lemma2", "dana_lemma2", "dana_thm1_eps0", "dana_lemma1"])
    res = json.loads((tmp_path / "results.json").read_text())
    entry = res["papers"]["dana2025"]
    assert entry["tables"]["dana_mahdavi_comparison"]["rows"] == [[1, 2]]
    assert (tmp_path / entry["map"]["file"]).read_bytes()[:4] == b"\x89PNG"
    md = (tmp_path / "REPORT.md").read_text()
    first, second = md.split("## Second paper")[0], md.split("## Second paper")[1]
    assert "`dana_lemma2`" in first.split("## Needs attention")[0]  # the leading Findings cover both papers
    first = first.split("## Needs attention")[1]  # the first paper's own sections
    assert "`dana_lemma2`" not in first and "`dana_lemma2`" in second and "not checkable" in second
    assert "| a | b |" in second
    assert "Second paper" in (tmp_path / "index.html").read_text()
    assert code in (0, 1)


def test_a_failing_table_is_an_error(tmp_path, monkeypatch):
    registry.load_all()

    def broken(seed):
        raise RuntimeError("deliberate")

    monkeypatch.setitem(registry.TABLES, "dana_mahdavi_comparison",
                        TableData("dana_mahdavi_comparison", "dana_thm1_eps0", "T", "C", broken))
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["dana_thm1_eps0"])
    res = json.loads((tmp_path / "results.json").read_text())
    assert "deliberate" in res["papers"]["dana2025"]["tables"]["dana_mahdavi_comparison"]["error"]
    assert code == 4
