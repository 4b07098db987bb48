"""The default report reads the stored campaign and never retrains (issue 35): a stored record is
taken with its provenance and re-derived with today's rules, a campaign experiment with no stored
run is never trained by the report, and a retrained campaign is shown beside the stored one, a
status that differs between the two machines inconclusive over both."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from verifier.experiments import catalogue  # noqa: E402
from verifier.report import experiments as rexp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import run_experiments as script  # noqa: E402


def _record(folder: Path, eid: str, status: str, measured: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rec = {"id": eid, "claim": "c", "criterion": "k", "status": status, "why": "w", "scale": "cpu", "seed": 0,
           "seconds": 1.0, "measured": measured, "kind": "reproduction", "power": {},
           "figures": [{"name": eid, "title": "t", "caption": "c"}], "provenance": "the stored campaign: test"}
    (folder / f"{eid}_cpu.json").write_text(json.dumps(rec))
    (folder / f"{eid}_cpu_{eid}.png").write_bytes(b"\x89PNG fake")


def _fig3(memorized_top: bool) -> dict:
    grid = [32, 64, 96, 128]
    ok = grid if memorized_top else [32, 64]
    runs = [{"T": t, "seed": s, "reached": t in ok, "accuracy": 1.0,
             "stats": {"hist": [0, 0, 2, 60, 2], "maxima_hist": [0] * 40}} for t in grid for s in range(6)]
    return {"per_H": {"4": {"T_grid": grid, "runs": runs}}, "threshold": 0.99, "seeds": list(range(6))}


def test_a_stored_record_is_read_with_its_provenance_and_rederived(tmp_path):
    camp = tmp_path / "campaign"
    _record(camp, "fig3", "not reproduced", _fig3(False))  # the stored status is re-derived, not trusted
    entry, pngs, source = rexp.campaign_entry(tmp_path / "out", "fig3", scale="cpu", seed=0, folder=camp)
    assert entry["provenance"].startswith("not retrained by this report") and source == str(camp)
    assert (tmp_path / "out" / "figures" / "experiment_fig3.png").read_bytes() == b"\x89PNG fake"
    assert catalogue.rederive(entry).status == "reproduced"
    assert rexp.campaign_entry(tmp_path / "out", "fig2a", scale="cpu", seed=0, folder=camp) is None
    assert rexp.campaign_entry(tmp_path / "out", "fig3", scale="cpu", seed=1, folder=camp) is None


def test_the_default_report_never_trains_a_campaign_experiment(tmp_path, monkeypatch):
    monkeypatch.setattr(rexp, "CAMPAIGN", tmp_path / "none")
    monkeypatch.setattr(rexp, "COMMITTED", tmp_path / "none")

    def refuse(*a, **k):
        raise AssertionError("the default report trained an experiment")

    monkeypatch.setattr(rexp, "experiment_unit", refuse)
    sec = rexp.run_experiments(tmp_path / "out", mode="default", seed=0, only=("fig2b", "fig3"))
    rows = sec["experiments"]
    assert {rows[k]["status"] for k in ("fig2b", "fig3")} == {"skipped"}
    assert "does not retrain" in rows["fig2b"]["why"]


def test_a_retrained_campaign_is_shown_beside_the_stored_one(tmp_path, monkeypatch, capsys):
    from verifier.experiments import campaign

    stored, other = tmp_path / "stored", tmp_path / "other"
    _record(stored, "fig3", "x", _fig3(False))
    _record(other, "fig3", "x", _fig3(True))  # another machine: H = 4 memorized the grid's top
    monkeypatch.setattr(campaign, "CAMPAIGN_DIR", stored)
    assert script.main(["--compare", str(other)]) == 0
    table = (other / "COMPARISON.md").read_text()
    assert "| `fig3` | reproduced | inconclusive | inconclusive |" in table and "status reproduced -> inconclusive" in table
    assert json.loads((stored / "fig3_cpu.json").read_text())["status"] == "x"  # nothing replaced
    assert script.main(["--compare", str(tmp_path / "empty")]) == 2


def test_a_real_model_record_names_its_file_and_its_package_versions(tmp_path):
    from verifier.report.experiments import _record_source as _source

    said = _source("computed with transformers 5.24.0", "table3", "cpu")
    assert said == "the stored record reports/experiments/campaign/table3_cpu.json, computed with transformers 5.24.0"
    assert _source("the stored campaign (runs): 4 batches", "fig2a", "cpu") == "the stored campaign (runs): 4 batches"
    assert _source(None, "fig1", "cpu").endswith("campaign/fig1_cpu.json")
