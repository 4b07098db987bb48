"""benchmarks/run_experiments.py: one record and its figures per experiment, resumable from a
cache (each experiment computed once), bad arguments one line and exit 2."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from verifier.experiments import catalogue

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_experiments_script", ROOT / "benchmarks" / "run_experiments.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


def test_records_and_a_cache_that_computes_nothing_twice(tmp_path, monkeypatch, capsys):
    calls = []
    real = catalogue.run_experiment
    monkeypatch.setattr(catalogue, "run_experiment", lambda eid, **kw: calls.append(eid) or real(eid, **kw))
    argv = ["--scale", "quick", "--only", "capacity_probe", "--out", str(tmp_path / "out"),
            "--cache", str(tmp_path / "cache")]
    assert script.main(argv) == 0 and calls == ["capacity_probe"]
    rec = json.loads((tmp_path / "out" / "capacity_probe_quick.json").read_text())
    assert rec["id"] == "capacity_probe" and rec["scale"] == "quick" and rec["seed"] == 0
    for f in rec["figures"]:
        assert (tmp_path / "out" / f"capacity_probe_quick_{f['name']}.png").read_bytes()[:4] == b"\x89PNG"
    first = (tmp_path / "out" / "capacity_probe_quick.json").read_bytes()
    assert script.main(argv) == 0 and calls == ["capacity_probe"]  # read from the cache, not run again
    assert (tmp_path / "out" / "capacity_probe_quick.json").read_bytes() == first


def test_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys):
    assert script.main(["--scale", "quick", "--only", "no_such", "--out", str(tmp_path)]) == 2
    assert "no experiment no_such" in capsys.readouterr().out
    assert script.main(["--scale", "quick", "--executor", "ray", "--device", "cpu", "--out", str(tmp_path)]) == 2
    assert "Ray's choice" in capsys.readouterr().out
