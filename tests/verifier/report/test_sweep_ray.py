"""The report's sweep on a real local Ray cluster (2 CPUs): the same rows and
the same results.json as in-process, every result present exactly once
after a worker is killed mid-sweep, and a resumed run that computes only
what its cache lacks.  Skipped where Ray is not installed (the ``cluster``
extra)."""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'mha-verify[cluster]')")


@pytest.fixture(autouse=True)
def _not_on_another_machine(request):
    """--another-machine perturbs this process only: Ray's workers compute unperturbed."""
    if request.config.getoption("--another-machine", default=False):
        pytest.skip("--another-machine cannot reach Ray's worker processes")

from verifier.report import build as report  # noqa: E402
from verifier.report import sweep  # noqa: E402
from verifier.report.cache import UnitCache, unit_key  # noqa: E402
from verifier.report.environment import strip_volatile  # noqa: E402
from verifier.report.executor import RayExecutor  # noqa: E402

SIDS = ["assumption2", "lemma2", "dana_prop1"]
COUNT = 2
CRASHING = "lemma2"


def plain(runs) -> str:
    return json.dumps(strip_volatile(runs), sort_keys=True)


@pytest.fixture(scope="module")
def cluster():
    """One local Ray for the module; its workers import this checkout."""
    root = str(Path(__file__).resolve().parents[3])
    path = os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # crash_once travels by value
    yield RayExecutor(max_retries=3)
    ray.shutdown()


@pytest.fixture(scope="module")
def local_runs():
    return sweep.run_statements(SIDS, seed=3, count=COUNT)[0]


def crash_once(marker_dir: str, unit: dict) -> dict:
    """The unit function with a fault: the worker running a unit of
    ``CRASHING`` dies (os._exit) the first time it meets that unit, marked
    by a file."""
    marker = Path(marker_dir) / unit_key(unit)
    with open(Path(marker_dir) / "attempts", "a") as f:
        f.write(unit_key(unit) + "\n")
    if unit["statement"] == CRASHING and not marker.exists():
        marker.write_text("crashed once")
        os._exit(1)
    return sweep.run_unit(unit)


def test_ray_sweep_equals_local(cluster, local_runs):
    got, stats = sweep.run_statements(SIDS, seed=3, count=COUNT, executor=cluster)
    assert plain(got) == plain(local_runs)
    assert stats["computed"] == stats["units"] == COUNT * len(SIDS)


def test_killed_workers_leave_every_result_exactly_once(cluster, local_runs, tmp_path):
    cache = UnitCache(tmp_path / "cache")
    marks = tmp_path / "marks"
    marks.mkdir()
    got, stats = sweep.run_statements(SIDS, seed=3, count=COUNT, executor=cluster, cache=cache,
                                      unit_fn=functools.partial(crash_once, str(marks)))
    assert plain(got) == plain(local_runs)
    keys = (marks / "attempts").read_text().split()
    crashed = {p.name for p in marks.iterdir() if p.name != "attempts"}
    assert len(crashed) == COUNT and all(keys.count(k) >= 2 for k in crashed)  # each died once, then ran again
    assert len(set(keys)) == len(cache.keys()) == COUNT * len(SIDS)
    assert sorted(cache.keys()) == sorted(set(keys))  # one result each, no stray temporary file
    assert not list(cache.root.glob(".*"))
    assert all(len(r["instances"]) == COUNT for r in got.values())
    assert stats["computed"] == COUNT * len(SIDS)


def test_ray_run_resumes_from_its_cache(cluster, local_runs, tmp_path):
    cache = UnitCache(tmp_path)
    sweep.run_statements(SIDS, seed=3, count=COUNT, executor=cluster, cache=cache)
    lost = sorted(cache.keys())[1::2]
    for k in lost:
        cache.path(k).unlink()
    got, stats = sweep.run_statements(SIDS, seed=3, count=COUNT, executor=cluster, cache=cache)
    assert plain(got) == plain(local_runs)
    assert stats == {"cached": COUNT * len(SIDS) - len(lost), "computed": len(lost), "units": COUNT * len(SIDS)}


def test_report_on_ray_is_byte_identical(cluster, tmp_path):
    files = {}
    for name, ex in (("local", "local"), ("ray", cluster)):
        report.write_report(out=tmp_path / name, mode="quick", seed=0, statements=["lemma2", "dana_prop1"],
                            quiet=True, executor=ex)
        files[name] = {f: (tmp_path / name / f).read_bytes() for f in ("results.json", "REPORT.md", "index.html")}
        facts = json.loads((tmp_path / name / "run.json").read_text())
        assert facts["executor"] == name and facts["units"]["computed"] == 2
    assert files["ray"] == files["local"]


def test_real_size_profile_on_ray_equals_local(cluster):
    """The real-size profile's units (verifier/report/real_sizes.py) on Ray: the same section."""
    from verifier.data.size_profiles import SizeDraw
    from verifier.report import real_sizes

    draws = [SizeDraw(H=2, n=3, d=5, d_h=3, context="shared", seed=4),
             SizeDraw(H=3, n=2, d=4, d_h=2, context="random", seed=5)]
    local = real_sizes.run_profile("thorough", seed=0, draws=draws)
    on_ray = real_sizes.run_profile("thorough", seed=0, draws=draws, executor=cluster)
    assert on_ray.pop("units") == local.pop("units") == {"cached": 0, "computed": 6}
    assert plain(on_ray) == plain(local)


def test_experiments_on_ray_equal_local(cluster, tmp_path):
    """Each experiment one Ray task (the CPU threads it trains with asked of a cluster without a
    GPU): the same entries and the same figure bytes as in this process."""
    from verifier.experiments.devices import CPU_TRAINING_THREADS
    from verifier.report import experiments as rexp

    assert cluster.training_placement() == ("cpu", {"num_cpus": min(2, CPU_TRAINING_THREADS)})
    only = ("fig2b", "fig3")
    local = rexp.run_experiments(tmp_path / "local", mode="quick", seed=0, only=only)
    on_ray = rexp.run_experiments(tmp_path / "ray", mode="quick", seed=0, only=only, executor=cluster)
    assert on_ray["units"] == local["units"] == {"cached": 0, "computed": 2}
    assert plain(on_ray["experiments"]) == plain(local["experiments"]) and on_ray["pngs"] == local["pngs"]
    assert list(on_ray["experiments"]) == list(local["experiments"])  # the catalogue's order, not completion's
    assert sorted(on_ray["experiments"]) == sorted(only)


def test_a_worker_in_another_environment_is_refused_and_nothing_is_cached(cluster, tmp_path):
    """Issue 36: a worker whose CPU kernels differ from the driver's (here set for its tasks
    alone) is an error naming both, before any of its results is used or cached."""
    import itertools

    from verifier.report.cache import cached_map
    from verifier.report.executor import WorkerMismatch
    from verifier.report.plans import iter_plans

    units = [sweep.unit_inputs("lemma2", o, 128) for o in itertools.islice(iter_plans("lemma2", seed=0), 2)]
    cache, used = UnitCache(tmp_path), []
    env = {"PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[3]), os.environ.get("PYTHONPATH", "")]),
           "ATEN_CPU_CAPABILITY": "default"}
    with pytest.raises(WorkerMismatch) as err:
        cached_map(cluster, sweep.run_unit, units, units, cache, on_result=lambda i, r: used.append(i),
                   resources={"runtime_env": {"env_vars": env}})
    assert "ATEN_CPU_CAPABILITY" in str(err.value) and '"default"' in str(err.value)
    assert used == [] and cache.keys() == set()


ROOT = Path(__file__).resolve().parents[3]
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "2",
               "RAY_health_check_initial_delay_ms": "0"}
KILL_RAYLET = """
import functools, os, signal, sys, time
from pathlib import Path
from verifier.report import build, sweep
from verifier.cli import main

def kill_raylet(unit):
    if b"raylet" in Path(f"/proc/{os.getppid()}/cmdline").read_bytes():
        os.kill(os.getppid(), signal.SIGKILL)  # this worker's raylet
    time.sleep(120)

build.run_statements = functools.partial(sweep.run_statements, unit_fn=kill_raylet)
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")
def test_a_raylet_dying_under_the_report_is_exit_4_with_one_line(tmp_path):
    """Ray's core ends its driver with exit code 1 when the raylet dies: the report runs its
    driver as a child, and the command ends with 4, one line, one JSON object; Ray's own
    messages go to stderr."""
    import subprocess

    p = subprocess.run([sys.executable, "-c", KILL_RAYLET, "report", "--quick", "--out", str(tmp_path / "out"),
                        "--executor", "ray", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, **FAST_HEALTH, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 4, (p.returncode, p.stderr[-3000:])
    obj = json.loads(p.stdout)
    # which side sees the raylet die first is a race: Ray's core ending the driver (the supervisor's line), or
    # the driver's own call raising LocalRayletDiedError first (ClusterLost): exit 4 and one line either way
    supervisor = obj["message"].startswith("the Ray driver process ended") and "cluster was lost" in obj["message"]
    driver = obj["message"].startswith("the Ray cluster failed under the run: ")
    assert obj["verdict"] == "error" and obj["exit_code"] == 4 and (supervisor or driver), obj["message"]
    assert p.stderr.rstrip().splitlines()[-1].startswith(f"mha-verify: error: {obj['message'][:40]}"), p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "(raylet)" not in p.stdout


def test_sigterm_under_ray_is_143_with_one_line(tmp_path):
    import signal
    import subprocess
    import time

    cache = tmp_path / "cache"
    p = subprocess.Popen([sys.executable, "-m", "verifier.cli", "report", "--quick", "--out", str(tmp_path / "out"),
                          "--executor", "ray", "--cache", str(cache), "--json"], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 300
    while not list(cache.glob("*.json")) and p.poll() is None and time.monotonic() < deadline:  # Ray is computing
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 143, (p.returncode, err[-3000:])
    obj = json.loads(out)
    assert obj["verdict"] == "interrupted" and obj["exit_code"] == 143
    assert "mha-verify: interrupted by SIGTERM" in err.splitlines() and "Traceback" not in err
