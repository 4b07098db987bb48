"""The real-size profile (verifier/report/real_sizes.py) on the same code path
at small sizes: the profile's draws within the real bounds and the budget,
the shape of one unit's result, a negative control (a drawn instance with a
hypothesis broken on purpose is hypotheses-unmet, never verified), the
section in thorough mode only, resumable from its cache, and the same
results on Ray as in-process (where Ray is installed)."""
from __future__ import annotations

import io
import json

import pytest

from verifier.data.size_profiles import REAL_MAX, SizeDraw
from verifier.report import build as report
from verifier.report import real_sizes as rs
from verifier.report.cache import UnitCache
from verifier.report.environment import strip_volatile

SMALL = [SizeDraw(H=2, n=3, d=5, d_h=3, context="shared", seed=4),
         SizeDraw(H=3, n=2, d=4, d_h=2, context="random", seed=5)]


def test_the_profile_draws_stay_within_the_real_bounds_and_the_budget():
    draws = rs.profile_draws(seed=0)
    assert draws == rs.profile_draws(seed=0) and len(draws) == rs.COUNT
    for s in draws:
        assert 1 <= s.H <= REAL_MAX["H"] and 2 <= s.n <= REAL_MAX["n"] and s.n < s.d <= REAL_MAX["d"]
        assert s.T == s.H * (s.r - 1) + 1 >= s.n
        assert rs.estimated_seconds(s) <= rs.CAP_SECONDS
    assert draws[0].H == REAL_MAX["H"] and (draws[1].n, draws[1].d) == (REAL_MAX["n"], REAL_MAX["d"])


def test_the_cost_model_grows_with_every_size():
    base = SizeDraw(H=4, n=8, d=16, d_h=8, context="shared", seed=0)
    for bigger in (SizeDraw(8, 8, 16, 8, "shared", 0), SizeDraw(4, 12, 16, 8, "shared", 0),
                   SizeDraw(4, 8, 32, 8, "shared", 0), SizeDraw(4, 8, 16, 8, "random", 0)):
        assert rs.estimated_seconds(bigger) > rs.estimated_seconds(base)


@pytest.mark.parametrize("sid", rs.STATEMENTS)
def test_a_unit_gives_its_verdict_and_hypotheses(sid):
    r = rs.run_unit(rs.unit_inputs(sid, SMALL[0]))
    assert set(r) == {"statement", "T", "verdict", "certified", "hypotheses", "seconds"}
    assert r["statement"] == sid and r["T"] == SMALL[0].T == 5
    assert r["verdict"] == "verified" and r["certified"] is True
    assert r["hypotheses"] and all(v in ("certified", "evidence") for v in r["hypotheses"].values())
    assert json.loads(json.dumps(r)) == r


@pytest.mark.parametrize("sid, draw, degenerate, broken", [
    ("theorem1", SMALL[0], "repeated-queries", "Assumption 1"),
    ("proposition1", SMALL[0], "repeated-queries", "Assumption 1"),
    ("theorem1", SMALL[0], "rank-deficient-context", "Assumption 2"),
    ("proposition2", SMALL[1], None, "shared context"),  # a random context: Prop. 2's hypothesis fails
])
def test_a_broken_hypothesis_is_unmet_never_verified(sid, draw, degenerate, broken):
    r = rs.run_unit(rs.unit_inputs(sid, draw, degenerate=degenerate))
    assert r["verdict"] == "hypotheses-unmet" and r["reason"]
    assert any(name.startswith(broken) and status == "refuted" for name, status in r["hypotheses"].items())


@pytest.fixture(scope="module")
def small_profile(tmp_path_factory):
    cache = UnitCache(tmp_path_factory.mktemp("real-sizes-cache"))
    return rs.run_profile("thorough", seed=0, draws=SMALL, cache=cache), cache


def test_the_section_counts_the_draws_and_their_verdicts(small_profile):
    section, _ = small_profile
    assert section["count"] == 2 and section["units"] == {"cached": 0, "computed": 6}
    assert section["verdicts"] == {"hypotheses-unmet": 1, "verified": 5} and not section["error"]
    md = rs.markdown_section(strip_volatile(section))
    assert "## Property-based runs at real sizes" in md and "measured s" not in md
    assert "| 0 | 2 | 3 | 5 | 3 | 5 | shared | 4 |  |" in md and "hyp. unmet" in md
    assert "measured s" in rs.markdown_section(section)  # with the times: a column for them
    page = rs.insert_html("<html><body></body></html>", strip_volatile(section))
    assert "<section id='real-sizes'>" in page and page.endswith("</body></html>")


def test_a_rerun_reads_every_unit_from_the_cache(small_profile):
    section, cache = small_profile
    again = rs.run_profile("thorough", seed=0, draws=SMALL, cache=cache)
    assert again["units"] == {"cached": 6, "computed": 0}
    strip = lambda s: json.dumps(strip_volatile({k: v for k, v in s.items() if k != "units"}), sort_keys=True)  # noqa: E731
    assert strip(again) == strip(section)


def test_outside_thorough_mode_nothing_runs_and_nothing_renders():
    for mode in ("quick", "default"):
        section = rs.run_profile(mode, seed=0, draws=SMALL)
        assert section["count"] == 0 and rs.markdown_section(section) == ""
        assert rs.insert_html("<body></body>", section) == "<body></body>"


def test_thorough_report_has_the_section_and_its_times_in_run_json(tmp_path, monkeypatch):
    monkeypatch.setitem(report.MODES, "thorough", 1)  # one instance per statement: the section is under test
    monkeypatch.setattr(rs, "profile_draws", lambda *, seed, **kw: SMALL[:1])
    code = report.write_report(out=tmp_path, mode="thorough", seed=0, statements=["proposition1"], quiet=True,
                               summary_stream=io.StringIO())
    assert code == 0
    results = json.loads((tmp_path / "results.json").read_text())
    entry = results["real_sizes"]
    assert entry["count"] == 1 and entry["statements"] == ["proposition1"] and "units" not in entry
    assert '"seconds"' not in json.dumps(entry)
    assert "## Property-based runs at real sizes" in (tmp_path / "REPORT.md").read_text()
    assert "id='real-sizes'" in (tmp_path / "index.html").read_text()
    facts = json.loads((tmp_path / "run.json").read_text())
    assert set(facts["real_size_seconds"]["draw 0"]) == {"proposition1"}
    assert facts["real_size_units"] == {"cached": 0, "computed": 1}
