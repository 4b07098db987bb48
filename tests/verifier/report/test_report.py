"""The verification report: deterministic, honest about what it did not run,
runs to completion when a checker raises, and renders in a real browser."""
from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess

import pytest

from verifier.arith.compare import Decision
from verifier.report import build as report
from verifier.report import findings as report_findings
from verifier.statements import registry
from verifier.statements.evidence import Hypothesis, conclude
from verifier.statements.registry import NegativeControl

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def results(out) -> dict:
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """The quick report, twice, into two folders: the second on "another machine"
    (tests/another_machine.py: LAPACK results a few ulps off, products and sums in
    other summation orders)."""
    import contextlib

    from another_machine import on_another_machine

    runs = []
    for i, machine in enumerate((contextlib.nullcontext(), on_another_machine(ulps=4, seed=2))):
        out = tmp_path_factory.mktemp(f"quick{i}")
        with machine:
            code = report.write_report(out=out, mode="quick", seed=0, argv=["mha-verify", "report", "--quick"])
        runs.append((out, code))
    return runs


def test_quick_report_is_deterministic(quick_runs):
    """Same seed, on this machine and on another: results.json, REPORT.md,
    index.html and the figures are the same bytes; only run.json (date,
    duration, machine, versions, timings, the machine's choices) may differ."""
    (a, code_a), (b, code_b) = quick_runs
    errata = [p.relative_to(a).as_posix() for p in sorted(a.glob("ERRATA-*.md")) + sorted(a.glob("certificates-*/*"))]
    assert len([e for e in errata if e.startswith("ERRATA-")]) == 2
    for name in ["results.json", "REPORT.md", "index.html"] + errata + [f"figures/{p.name}" for p in (a / "figures").glob("*.png")]:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert code_a == code_b
    facts = json.loads((a / "run.json").read_text())
    assert {"date_utc", "duration_seconds", "machine", "versions", "git_commit", "phase_seconds",
            "statement_seconds"} <= set(facts)
    text = (a / "results.json").read_text() + (a / "REPORT.md").read_text() + (a / "index.html").read_text()
    for volatile in ('"seconds"', facts["date_utc"], "date_utc", "git_commit", "time (s)"):
        assert volatile not in text, volatile


def test_quick_report_writes_every_part(quick_runs):
    out, code = quick_runs[0]
    res = results(out)
    for name in ("index.html", "REPORT.md", "results.json"):
        assert (out / name).stat().st_size > 0
    assert set(res["statements"]) == set(registry.load_all())
    for name, fig in res["figures"].items():
        assert (out / fig["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert not fig["error"], (name, fig["error"])
    # Prop. 2's cap is reached exactly by the construction (shared contexts, d_h = n)
    heads = res["figures"]["rank_vs_heads"]["data"]
    assert heads["construction_shared"] == heads["cap_prop2"]
    for sid, row in res["statements"].items():
        if registry.REGISTRY[sid].implemented:
            assert row["instances_tried"] >= 1 and row["instances"][0]["command"].startswith(f"mha-verify check {sid} ")
            assert row["audit"] is not None
        else:
            assert row["status"] == ("not checkable" if registry.REGISTRY[sid].not_checkable else "not implemented")
            assert row["certified_passes"] == row["numerical_passes"] == 0
    rows, figs = list(res["statements"].values()), list(res["figures"].values())
    assert code == report_findings.exit_code(rows, figs, res["findings"])  # refutations as declared: not a failure
    assert res["summary"]["gate"]["new_refutations"] == [] or code == 1
    md = (out / "REPORT.md").read_text()
    assert md.index("## Findings") < md.index("## Needs attention")
    for e in res["findings"]:  # every finding, once, in the report and in its paper's errata
        assert md.count(f": {e['title']}\n") == 1, e["key"]
        assert (out / f"ERRATA-{e['paper']}.md").read_text().count(f": {e['title']}\n") == 1, e["key"]
    assert "## Results by statement" in md and "figures/statement_map.png" in md
    assert "real_sizes" not in res and "Property-based runs at real sizes" not in md  # thorough mode only


def _md_tables(md: str) -> list[list[str]]:
    """The header cells of every Markdown table (the line above a |---| line)."""
    lines = md.splitlines()
    return [[c.strip().strip("`") for c in lines[i - 1].strip("|").split("|")]
            for i, line in enumerate(lines) if i and re.match(r"^\|[-:|]+\|$", line.strip())]


def test_index_html_has_every_table_report_md_has(quick_runs):
    import html as html_lib

    out, _ = quick_runs[0]
    page = html_lib.unescape(re.sub(r"<[^>]+>", "|", (out / "index.html").read_text()))
    tables = _md_tables((out / "REPORT.md").read_text())
    assert len(tables) >= 5 and any(t[:3] == ["#", "statement", "class"] for t in tables)  # Findings' summary
    for header in tables:
        assert "|" + "||".join(header) + "|" in page.replace("\\|", "|"), header


def test_the_banner_counts_what_it_names(quick_runs):
    out, code = quick_runs[0]
    res = results(out)
    rows = res["statements"].values()
    banner = (out / "REPORT.md").read_text().split("\n")[2]
    controls = sum(r["controls_total"] for r in rows)
    assert f"{sum(r['controls_rejected'] for r in rows)} of {controls} negative controls rejected" in banner
    assert f"{len(res['statements'])} statements: " in banner
    open_ = sum(i["verdict"] == "inconclusive" for r in rows for i in r["instances"])
    assert ("inconclusive, neither verified nor refuted" in banner) == bool(open_)
    assert "Every verdict verified" not in banner
    assert controls == sum(1 for r in rows for c in r["controls"] if c["role"] == "negative control")


def _headings(md: str) -> list[tuple[int, str, str]]:
    """(level, text, anchor as GitHub makes it) of every heading outside code fences."""
    from verifier.report.markdown import github_slug

    seen, out, fence = {}, [], False
    for line in md.splitlines():
        fence ^= line.startswith("```")
        m = None if fence else re.match(r"^(#{1,6}) +(.*?)\s*$", line)
        if m:
            out.append((len(m.group(1)), m.group(2), github_slug(m.group(2), seen)))
    return out


def test_report_md_opens_with_contents_that_list_every_section(quick_runs):
    """The contents come before the first section; every "## " and "### " heading is linked, each link lands."""
    md = (quick_runs[0][0] / "REPORT.md").read_text()
    heads = _headings(md)
    assert [h[1] for h in heads if h[0] == 2][0] == "Contents"
    toc = md.split("## Contents\n", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"\]\(#([^)\s]+)\)", toc)
    anchors = {a for _, _, a in heads}
    assert links and set(links) <= anchors and len(links) == len(set(links))
    listed = [a for level, text, a in heads if level in (2, 3) and text != "Contents"]
    assert set(listed) == set(links)  # every section and subsection, nothing else
    assert [a for a in links if a in {x for lv, _, x in heads if lv == 2}] == [x for lv, t, x in heads
                                                                              if lv == 2 and t != "Contents"]


def test_index_html_navigation_links_land_on_every_section(quick_runs):
    page = (quick_runs[0][0] / "index.html").read_text()
    nav = re.search(r'<nav class="toc"[^>]*>(.*?)</nav>', page, flags=re.S)
    assert nav and page.index("</h1>") < nav.start() < page.index("<h2")
    ids = re.findall(r"""\bid=["']([^"']+)["']""", page)
    assert len(ids) == len(set(ids))
    hrefs = re.findall(r'href="#([^"]+)"', nav.group(1))
    h2_ids = re.findall(r"""<h2\b[^>]*\bid=["']([^"']+)["']""", page)
    assert hrefs == h2_ids and len(h2_ids) == page.count("<h2")  # every section, in order, each with its id
    assert "findings" in hrefs and "paper-dana2025" in hrefs


def test_status_tables_say_refuted_as_declared_exactly_where_every_refutation_is_declared(quick_runs):
    out, _ = quick_runs[0]
    res, md = results(out), (out / "REPORT.md").read_text()
    declared = {}
    for r in res["summary"]["refutations"]:
        declared[r["statement"]] = declared.get(r["statement"], True) and bool(r["declared"])
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \|[^|]*\| ([^|]*) \|", md, flags=re.M)}
    for sid, row in res["statements"].items():
        status = rows[sid]
        if row["status"] == "refuted" and declared.get(sid):
            assert status.startswith("refuted, as declared"), (sid, status)
        else:
            assert "as declared" not in status, (sid, status)
    assert any(row["status"] == "refuted" and declared.get(sid) for sid, row in res["statements"].items())


def test_a_verified_statement_on_an_unverified_one_gets_a_map_note(quick_runs):
    """Each paper's map: one note per verified statement whose proof uses (directly or through others) a
    statement of the paper not verified in the run."""
    from verifier.report.summary import shown_statuses

    out, _ = quick_runs[0]
    res, md = results(out), (out / "REPORT.md").read_text()
    shown = shown_statuses(res)
    rows = res["statements"]
    expected = set()
    for paper in res["papers_order"]:
        ids = [s for s, r in rows.items() if r["paper"] == paper]
        for s in ids:
            todo, seen = [d for d in rows[s]["depends"] if d in ids], set()
            while todo:
                d = todo.pop()
                if d not in seen:
                    seen.add(d)
                    todo += [e for e in rows[d]["depends"] if e in ids]
            if shown[s].startswith("verified") and any(not shown[d].startswith("verified") for d in seen):
                expected.add(s)
    noted = set(re.findall(r"^\d+\. .*? \(`(\w+)`\) is verified[^;]*; its proof uses", md, flags=re.M))
    assert noted == expected and expected  # the quick run: Thm. 2's repair rests on Thm. 2, refuted as declared


def test_unimplemented_statement_is_never_a_pass(tmp_path, monkeypatch):
    registry.load_all()
    monkeypatch.setattr(registry.REGISTRY["assumption2"], "check", None)
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["assumption2", "lemma2"])
    row = results(tmp_path)["statements"]["assumption2"]
    assert row["status"] == "not implemented"
    assert row["instances_tried"] == row["certified_passes"] == row["numerical_passes"] == 0
    assert results(tmp_path)["statements"]["lemma2"]["instances_tried"] == 1
    assert code in (0, 1, 4)
    assert "not implemented" in (tmp_path / "index.html").read_text()


def test_raising_checker_is_an_error_row_and_the_run_completes(tmp_path, monkeypatch):
    registry.load_all()

    def broken(instance, **kw):
        raise RuntimeError("deliberate failure for the report test")

    monkeypatch.setattr(registry.REGISTRY["assumption2"], "check", broken)
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["assumption2", "lemma2"])
    res = results(tmp_path)
    row = res["statements"]["assumption2"]
    assert row["status"] == "error"
    assert any("deliberate failure" in e for e in row["errors"])
    assert res["statements"]["lemma2"]["instances_tried"] == 1  # the others still ran
    assert code != 0
    assert "deliberate failure" in (tmp_path / "index.html").read_text()


def _false_checker(sid):
    def check(instance, **kw):
        return conclude(sid, Decision.FALSE, claimed="x", measured="y",
                        hypotheses=[Hypothesis("n < d", "certified")], certified=True,
                        refutation=registry.REGISTRY[sid].refutes[0])  # a declared refutation (the runner checks)
    return check


def test_refutation_is_shown_first_with_its_command(tmp_path, monkeypatch):
    registry.load_all()
    monkeypatch.setattr(registry.REGISTRY["lemma2"], "check", _false_checker("lemma2"))
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["lemma2"])
    res = results(tmp_path)
    assert code == 1 and res["statements"]["lemma2"]["status"] == "refuted"
    (ref,) = res["summary"]["refutations"]
    assert ref["statement"] == "lemma2"
    assert ref["command"] == report.reproduce_command("lemma2", ref["options"])
    page = re.sub(r'<nav class="toc".*?</nav>', "", (tmp_path / "index.html").read_text(), flags=re.S)  # the sections
    attention = page.index("Needs attention")
    assert attention < page.index("REFUTED") < page.index("Results by statement")
    assert ref["command"] in page


def test_a_property_failing_on_an_instance_is_not_a_refutation(tmp_path, monkeypatch):
    """Assumption 2 failing on some data says nothing against the paper."""
    registry.load_all()
    monkeypatch.setattr(registry.REGISTRY["assumption2"], "check", _false_checker("assumption2"))
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["assumption2"])
    res = results(tmp_path)
    assert res["summary"]["refutations"] == []
    assert res["statements"]["assumption2"]["status"] == "hypotheses-unmet"
    assert res["statements"]["assumption2"]["verdict_counts"] == {"refuted": 1}
    assert code == 0


def test_negative_control_not_rejected_fails_the_report(tmp_path, monkeypatch):
    registry.load_all()
    st = registry.REGISTRY["lemma2"]

    def lenient(*, prec=128, seed=0):
        return conclude("lemma2", Decision.TRUE, claimed="", measured="", certified=True)

    monkeypatch.setattr(st, "controls", [NegativeControl("accepts everything", lenient, ("refuted",))])
    code = report.write_report(out=tmp_path, mode="quick", seed=0, statements=["lemma2"])
    row = results(tmp_path)["statements"]["lemma2"]
    assert row["status"] == "control failed" and row["controls_rejected"] == 0
    assert code == 1


def test_instance_plans_are_deterministic_and_valid():
    registry.load_all()
    for sid, st in registry.REGISTRY.items():
        if registry.instance_options(sid) is not None:
            continue  # a paper with its own options: tests/verifier/report/test_paper_plans.py
        plans = report.instance_plan(sid, mode="thorough", seed=3)
        assert plans == report.instance_plan(sid, mode="thorough", seed=3)
        assert len(plans) == report.MODES["thorough"]
        assert len({json.dumps(p, sort_keys=True) for p in plans}) == len(plans)
        base = plans[0]
        for p in plans:
            assert p["n"] < p["d"] and p["H"] >= 1 and (p["d_h"] is None or p["d_h"] >= 1)
            assert p["degenerate"] == base["degenerate"]
            if base["context"] != "random":
                assert p["context"] == base["context"]  # e.g. proposition2 stays shared
    assert len(report.instance_plan("lemma2", mode="quick", seed=0)) == 1


def test_progress_bar_on_a_terminal_one_line_per_phase_otherwise(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    s = Tty()
    bar = report.Progress("checks", 2, stream=s)
    bar.step("a")
    bar.close()
    assert "1/2" in s.getvalue()
    monkeypatch.setenv("CI", "true")
    s = Tty()
    report.Progress("checks", 2, stream=s).step("a")
    assert s.getvalue() == "mha-verify report: checks (2 steps)...\n"  # CI: one line per phase, no bar
    s = io.StringIO()  # not a tty: one line per phase
    monkeypatch.delenv("CI")
    bar = report.Progress("checks", 2, stream=s, unit="instances")
    bar.step("a")
    bar.step("b")
    assert s.getvalue() == "mha-verify report: checks (2 instances)...\n"
    s = io.StringIO()
    report.Progress("checks", 2, stream=s, quiet=True).step("a")
    assert s.getvalue() == ""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_index_html_renders_in_headless_chromium(quick_runs, tmp_path):
    from PIL import Image

    out, _ = quick_runs[0]
    page = out / "index.html"
    text = page.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', text)  # nothing fetched from the network
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
           "--dump-dom", page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    n = len(list((out / "figures").glob("*.png")))  # every figure written: statements, papers, experiments
    assert n >= len(results(out)["figures"]) > 0
    assert f'data-figures-decoded="{n}/{n}"' in dom  # set by the page once every <img> decoded
    images = re.findall(r'<img[^>]*src="data:image/png;base64,([^"]+)"', dom)
    assert len(images) == len(re.findall(r"<img\b", dom)) == n
    for b64 in images:
        im = Image.open(io.BytesIO(base64.b64decode(b64)))
        im.load()
        assert im.size[0] > 100 and im.size[1] > 100
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert not console, console


def test_quick_report_runs_every_experiment(quick_runs):
    from verifier.experiments import catalogue

    out, _ = quick_runs[0]
    exps = results(out)["experiments"]
    assert exps["scale"] == "quick" and set(catalogue.load_all()) <= set(exps)
    for eid in catalogue.load_all():
        assert exps[eid]["status"] in catalogue.STATUSES and exps[eid]["criterion"]
        for f in exps[eid]["figures"]:
            assert (out / f["file"]).read_bytes()[:4] == b"\x89PNG"
    assert "## Experiments" in (out / "REPORT.md").read_text()
