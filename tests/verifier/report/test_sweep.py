"""The report's sweep as units of work: the same rows as the sequential loop
(refused draws replaced in plan order), cached per unit, resumable after an
interruption, nothing computed twice.  Ray itself: test_sweep_ray.py."""
from __future__ import annotations

import json

import pytest

from verifier.arith.compare import workprec
from verifier.cli import main
from verifier.errors import InvalidInstance
from verifier.report import rows, sweep
from verifier.report.cache import UnitCache, cached_map, unit_key
from verifier.report.environment import strip_volatile
from verifier.report.executor import LocalExecutor, make_executor
from verifier.report.plans import iter_plans
from verifier.statements import registry

SIDS = ["assumption2", "lemma2", "dana_prop1"]


def plain(runs) -> str:
    return json.dumps(strip_volatile(runs), sort_keys=True)


class Counting:
    """A unit function that records which units ran (in this process)."""

    def __init__(self, fail_at: int | None = None):
        self.ran, self.fail_at = [], fail_at

    def __call__(self, unit):
        if self.fail_at is not None and len(self.ran) == self.fail_at:
            raise KeyboardInterrupt("simulated Ctrl-C")
        self.ran.append(json.dumps(unit, sort_keys=True))
        return sweep.run_unit(unit)


def test_sweep_gives_the_sequential_rows_with_refused_draws(monkeypatch):
    """Every third drawn instance refused: the rounds replace them by the
    next draws exactly as rows.run_statement's loop does."""
    registry.load_all()
    real = sweep.build_instance

    def picky(sid, **opts):
        if opts["seed"] % 3 == 0 and opts["seed"] != 0:
            raise InvalidInstance("refused for the test")
        return real(sid, **opts)

    monkeypatch.setattr(sweep, "build_instance", picky)
    monkeypatch.setattr(rows, "build_instance", picky)
    count = 6
    with workprec(sweep.AMBIENT_PREC):  # the ambient precision every unit runs under (conftest sets 128)
        want = {s: rows.run_statement(s, iter_plans(s, seed=0), count) for s in SIDS}
    got, stats = sweep.run_statements(SIDS, seed=0, count=count)
    assert plain(got) == plain(want)
    skipped = sum(len(r["skipped"]) for r in got.values())
    assert skipped > 0, "the control: some draws must have been refused"
    assert stats == {"cached": 0, "computed": count * len(SIDS) + skipped, "units": count * len(SIDS) + skipped}
    assert all(len(r["instances"]) == count for r in got.values())


def test_cache_resumes_an_interrupted_sweep_and_computes_nothing_twice(tmp_path):
    cache = UnitCache(tmp_path / "cache")
    want, _ = sweep.run_statements(SIDS, seed=1, count=2)
    interrupted = Counting(fail_at=4)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_statements(SIDS, seed=1, count=2, cache=cache, unit_fn=interrupted)
    assert len(cache.keys()) == 4 and not list(cache.root.glob(".*"))  # what finished is kept, whole
    resumed = Counting()
    got, stats = sweep.run_statements(SIDS, seed=1, count=2, cache=cache, unit_fn=resumed)
    assert plain(got) == plain(want)
    assert stats == {"cached": 4, "computed": 2, "units": 6}
    assert not set(resumed.ran) & set(interrupted.ran)  # only the missing units ran
    # half the cache lost: exactly those units run again
    lost = sorted(cache.keys())[::2]
    for k in lost:
        cache.path(k).unlink()
    again = Counting()
    got, stats = sweep.run_statements(SIDS, seed=1, count=2, cache=cache, unit_fn=again)
    assert plain(got) == plain(want) and len(again.ran) == len(lost) == stats["computed"]
    assert {unit_key(json.loads(u)) for u in again.ran} == set(lost)
    none = Counting()
    assert sweep.run_statements(SIDS, seed=1, count=2, cache=cache, unit_fn=none)[1]["computed"] == 0
    assert none.ran == []


def test_cache_key_depends_on_every_input():
    base = sweep.unit_inputs("lemma2", {"H": 1, "seed": 0}, 128)
    keys = {unit_key(u) for u in (base, sweep.unit_inputs("lemma3", {"H": 1, "seed": 0}, 128),
                                            sweep.unit_inputs("lemma2", {"H": 1, "seed": 1}, 128),
                                            sweep.unit_inputs("lemma2", {"H": 2, "seed": 0}, 128),
                                            sweep.unit_inputs("lemma2", {"H": 1, "seed": 0}, 64))}
    assert len(keys) == 5 and unit_key(dict(reversed(base.items()))) in keys


def test_a_corrupt_cache_file_is_recomputed(tmp_path):
    cache = UnitCache(tmp_path)
    out, stats = cached_map(LocalExecutor(), abs, [-1, -2], ["a", "b"], cache)
    assert out == [1, 2] and stats == {"cached": 0, "computed": 2}
    cache.path(unit_key("a")).write_text('{"key": "a", "resu')  # a torn file (os.replace never leaves one)
    out, stats = cached_map(LocalExecutor(), abs, [-1, -2], ["a", "b"], cache)
    assert out == [1, 2] and stats == {"cached": 1, "computed": 1}
    out, stats = cached_map(LocalExecutor(), abs, [-3, -3], ["c", "c"], None)  # equal keys run once
    assert out == [3, 3] and stats == {"cached": 0, "computed": 1}


def test_executor_choices_are_checked(capsys, monkeypatch, tmp_path):
    with pytest.raises(ValueError):
        make_executor("dask")
    assert main(["report", "--quick", "--out", str(tmp_path), "--address", "auto"]) == 2
    assert "--address needs --executor ray" in capsys.readouterr().err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    assert main(["report", "--quick", "--out", str(tmp_path), "--executor", "ray"]) == 2
    assert "pip install" in capsys.readouterr().err


def test_ray_training_placement_asks_for_a_gpu_when_the_cluster_has_one():
    """An experiment asks Ray for one GPU when the cluster has one, else for the CPU threads it
    trains with, never more than the cluster's CPUs (a fake cluster: Ray is not needed)."""
    from types import SimpleNamespace

    from verifier.report.executor import LocalExecutor, RayExecutor

    def on(resources):
        ex = object.__new__(RayExecutor)
        ex._ray = SimpleNamespace(cluster_resources=lambda: resources)
        return ex.training_placement()

    assert on({"CPU": 16.0, "GPU": 1.0}) == ("gpu", {"num_gpus": 1})
    from verifier.experiments.devices import CPU_TRAINING_THREADS

    assert on({"CPU": 16.0, "GPU": 0.5}) == ("cpu", {"num_cpus": CPU_TRAINING_THREADS})
    assert on({"CPU": 2.0}) == ("cpu", {"num_cpus": min(2, CPU_TRAINING_THREADS)})
    assert on({"CPU": 1.0}) == ("cpu", {"num_cpus": 1})
    assert LocalExecutor().training_placement() == ("", {})
    assert LocalExecutor().map(abs, [-1, 2], resources={"num_gpus": 1}) == [1, 2]
