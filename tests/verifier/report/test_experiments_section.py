"""verifier/report/experiments.py: every registered experiment shown with its criterion and status."""
import json

import pytest

from verifier.experiments import catalogue
from verifier.experiments.plots import _pyplot, png
from verifier.report import experiments as rexp


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.setattr(catalogue, "MODULES", ())
    monkeypatch.setattr(catalogue, "EXPERIMENTS", {})
    fig, _ = _pyplot().subplots()
    picture = png(fig)

    @catalogue.experiment("demo_ok", claim="one plus one is two", criterion="the sum equals 2")
    def ok(scale, seed):
        return catalogue.Outcome("reproduced", "the sum is 2", measured={"sum": 2, "seconds": 0.1},
                                 figures=(catalogue.Figure("demo", "Demo", "a caption", picture),))

    @catalogue.experiment("demo_missing", claim="c", criterion="k", requires=("no_such_package_xyz",))
    def missing(scale, seed):
        raise AssertionError("never runs")

    @catalogue.experiment("demo_broken", claim="c", criterion="k")
    def broken(scale, seed):
        raise RuntimeError("boom")


def test_section_lists_every_experiment_with_its_status(demo, tmp_path):
    sec = rexp.run_experiments(tmp_path, mode="quick", seed=3)
    rows = sec["experiments"]
    assert list(rows) == ["demo_ok", "demo_missing", "demo_broken"]
    assert rows["demo_ok"]["status"] == "reproduced" and rows["demo_ok"]["criterion"] == "the sum equals 2"
    assert rows["demo_ok"]["scale"] == "quick" and rows["demo_ok"]["seed"] == 3
    assert rows["demo_missing"]["status"] == "skipped" and "pip install" in rows["demo_missing"]["why"]
    assert rows["demo_broken"]["status"] == "error" and "boom" in rows["demo_broken"]["why"]
    assert rexp.has_error(sec)
    assert (tmp_path / "figures" / "experiment_demo.png").read_bytes()[:4] == b"\x89PNG"
    json.dumps(rexp.results_entry(sec))  # plain JSON
    md = rexp.markdown_section(sec)
    assert "## Experiments" in md and "the sum equals 2" in md and "figures/experiment_demo.png" in md
    page = rexp.insert_html("<html><body><p>x</p></body></html>", sec)
    assert page.index("Experiments") < page.index("</body>") and "data:image/png;base64," in page
    assert rexp.run_experiments(tmp_path, mode="quick", seed=0, only=())["experiments"] == {}


def test_registered_experiments_state_claim_and_criterion():
    exps = catalogue.load_all()
    for eid in ("fig2a", "fig2b", "fig2c", "fig3", "fig4", "fig5", "capacity_probe"):
        assert eid in exps and len(exps[eid].claim) > 20 and len(exps[eid].criterion) > 40


def test_experiments_resume_from_the_cache(demo, tmp_path, monkeypatch):
    """With a cache each experiment with a result runs once: a rerun reads it (figures
    included) and gives the same section; errors and skips are computed again; a lost file is
    computed again."""
    from verifier.report.cache import UnitCache

    calls = []
    real = catalogue.run_experiment
    monkeypatch.setattr(catalogue, "run_experiment", lambda eid, **kw: calls.append(eid) or real(eid, **kw))
    cache = UnitCache(tmp_path / "cache")
    first = rexp.run_experiments(tmp_path / "a", mode="quick", seed=3, cache=cache)
    assert first["units"] == {"cached": 0, "computed": 3} and sorted(calls) == sorted(first["experiments"])
    calls.clear()
    again = rexp.run_experiments(tmp_path / "b", mode="quick", seed=3, cache=cache)
    # the skipped and the broken one are not kept: a package installed or a transient failure gone
    assert sorted(calls) == ["demo_broken", "demo_missing"] and again["units"] == {"cached": 1, "computed": 2}
    calls.clear()
    assert list(again["experiments"]) == list(first["experiments"]) and again["pngs"] == first["pngs"]
    assert json.dumps(again["experiments"]["demo_ok"]) == json.dumps(first["experiments"]["demo_ok"])
    assert (tmp_path / "b" / "figures" / "experiment_demo.png").read_bytes() == \
        (tmp_path / "a" / "figures" / "experiment_demo.png").read_bytes()
    key = rexp.experiment_key("demo_ok", scale="quick", seed=3)
    cache.path(key).unlink()
    rexp.run_experiments(tmp_path / "c", mode="quick", seed=3, cache=cache)
    assert "demo_ok" in calls


def test_experiment_key_depends_on_what_the_run_depends_on():
    k = rexp.experiment_key("fig2a", scale="quick", seed=0, placement="cpu")
    assert k == rexp.experiment_key("fig2a", scale="quick", seed=0, placement="cpu")
    others = {rexp.experiment_key("fig2b", scale="quick", seed=0, placement="cpu"),
              rexp.experiment_key("fig2a", scale="cpu", seed=0, placement="cpu"),
              rexp.experiment_key("fig2a", scale="quick", seed=1, placement="cpu"),
              rexp.experiment_key("fig2a", scale="quick", seed=0, placement="gpu")}
    assert k not in others and len(others) == 4


def test_an_edited_or_misplaced_experiment_entry_is_recomputed(demo, tmp_path, monkeypatch):
    """Issue 36: an experiment's status edited in its cache file, or another unit's row under
    its key, is run again (the entry is listed as rejected), never served."""
    from verifier.report.cache import UnitCache, digest

    calls = []
    real = catalogue.run_experiment
    monkeypatch.setattr(catalogue, "run_experiment", lambda eid, **kw: calls.append(eid) or real(eid, **kw))
    cache = UnitCache(tmp_path / "cache")
    first = rexp.run_experiments(tmp_path / "a", mode="quick", seed=3, cache=cache)
    path = cache.path(rexp.experiment_key("demo_ok", scale="quick", seed=3))
    entry = json.loads(path.read_text())
    entry["result"]["status"] = "not reproduced"
    path.write_text(json.dumps(entry))
    for forged in (False, True):
        if forged:  # the digest made to match, the row given another seed: not the unit's
            entry["result"].update(status="reproduced", seed=4)
            entry["digest"] = digest(entry["result"])
            path.write_text(json.dumps(entry))
        calls.clear()
        fresh = UnitCache(cache.root)
        again = rexp.run_experiments(tmp_path / "b", mode="quick", seed=3, cache=fresh)
        assert "demo_ok" in calls and again["experiments"]["demo_ok"]["status"] == "reproduced"
        assert json.dumps(again["experiments"]["demo_ok"]) == json.dumps(first["experiments"]["demo_ok"])
        (rej,) = fresh.rejected
        assert ("seed" if forged else "digest") in rej["reason"]
