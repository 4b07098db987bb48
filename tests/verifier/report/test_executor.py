"""Workers prove their code: a Ray worker whose environment (code fingerprint,
backend, CPU kernels, package versions) is not the driver's is an error naming
both, before any of its results is used or cached; a cluster that fails under
the run is ClusterLost.  A fake Ray here (no Ray needed); the real one in
test_sweep_ray.py."""
from __future__ import annotations

import pytest

from verifier.report import executor as ex_mod
from verifier.report import sweep
from verifier.report.cache import UnitCache, backend_name, cached_map, environment
from verifier.report.environment import strip_volatile
from verifier.report.executor import ClusterLost, RayExecutor, WorkerMismatch


class _Ref:
    def __init__(self, value=None, error=None):
        self.value, self.error = value, error


class FakeRay:
    """Ray's surface that RayExecutor.map uses, each task run at once in this
    process; ``worker_env(env)`` is what a worker reports (default: its own)."""

    class exceptions:
        class RayError(Exception):
            pass

        class RayTaskError(RayError):
            pass

        class LocalRayletDiedError(RayError):
            pass

    def __init__(self, worker_env=lambda env: env, die_after: int | None = None):
        self.worker_env, self.die_after, self.ran, self.cancelled = worker_env, die_after, 0, 0

    def remote(self, f):
        fake = self

        class Task:
            def options(self, **kw):
                return self

            def remote(self, fn, item, roots):
                if fake.die_after is not None and fake.ran >= fake.die_after:
                    return _Ref(error=fake.exceptions.LocalRayletDiedError(
                        "The task's local raylet died. Check raylet.out for more information."))
                fake.ran += 1
                try:
                    reply = f(fn, item, roots)
                except fake.exceptions.RayError as exc:  # raised on the worker: raised by get
                    return _Ref(error=exc)
                if reply["environment"] is not None:
                    reply["environment"] = fake.worker_env(reply["environment"])
                return _Ref(reply)

        return Task()

    def put(self, x):
        return x

    def wait(self, pending, num_returns, timeout):
        return pending[:num_returns], pending[num_returns:]

    def get(self, ref):
        if ref.error is not None:
            raise ref.error
        return ref.value

    def cancel(self, ref, force=False):
        assert force  # a worker interrupted mid-import would stay broken: ended instead
        self.cancelled += 1


def fake_executor(ray) -> RayExecutor:
    ex = object.__new__(RayExecutor)
    ex._ray, ex.max_retries, ex._owned = ray, 3, False
    return ex


def other_code(env):
    return dict(env, code="f" * 64)


UNITS = [sweep.unit_inputs("lemma2", {"H": 1, "n": 3, "d": 5, "d_h": None, "d_v": None, "d_out": 1, "T": None,
                                      "context": "random", "degenerate": None, "seed": s}, 128) for s in (0, 1)]


def test_workers_in_the_driver_s_environment_are_trusted(tmp_path):
    cache = UnitCache(tmp_path)
    out, stats = cached_map(fake_executor(FakeRay()), sweep.run_unit, UNITS, UNITS, cache)
    assert stats == {"cached": 0, "computed": 2} and len(cache.keys()) == 2
    assert strip_volatile(out) == strip_volatile([sweep.run_unit(u) for u in UNITS])


@pytest.mark.parametrize("change, named", [
    (other_code, "code: worker ffffffffffff"),
    (lambda env: dict(env, backend="torch-cpu"), "torch-cpu"),
    (lambda env: dict(env, kernels=dict(env["kernels"], ATEN_CPU_CAPABILITY="avx512")), "avx512"),
    (lambda env: dict(env, versions=dict(env["versions"], numpy="1.0.0")), "1.0.0"),
])
def test_a_worker_running_other_code_is_an_error_naming_both_and_nothing_is_cached(tmp_path, change, named):
    cache, used = UnitCache(tmp_path), []
    with pytest.raises(WorkerMismatch) as err:
        cached_map(fake_executor(FakeRay(worker_env=change)), sweep.run_unit, UNITS, UNITS, cache,
                   on_result=lambda i, r: used.append(i))
    msg = str(err.value)
    assert named in msg and "driver" in msg and "none of its results was used or cached" in msg
    assert used == [] and cache.keys() == set()
    if change is other_code:
        assert environment()["code"][:12] in msg  # the driver's fingerprint, beside the worker's


def test_an_experiment_on_a_gpu_worker_is_not_another_backend():
    """A worker with a GPU resolves "auto" to torch-cuda: another backend for a statement's unit
    (an error), not for an experiment, whose inputs name its device (backend=False)."""
    gpu = FakeRay(worker_env=lambda env: dict(env, backend="torch-cuda"))
    assert cached_map(fake_executor(gpu), abs, [-1], [-1], None, backend=False)[0] == [1]
    with pytest.raises(WorkerMismatch, match="backend: worker \"torch-cuda\""):
        cached_map(fake_executor(gpu), abs, [-1], [-1], None)


def test_the_soundness_sweep_s_workers_prove_the_code_of_its_folders():
    """The worker fingerprints the folders the driver names (benchmarks/ and tests/ too)."""
    roots = ("verifier", "proofs", "benchmarks", "tests")
    seen = []
    ray = FakeRay(worker_env=lambda env: seen.append(env) or env)
    out, _ = cached_map(fake_executor(ray), abs, [-1], [-1], None, roots=roots)
    assert out == [1] and seen == [environment(roots)]


def test_a_raylet_dying_under_the_run_is_cluster_lost_after_the_results_it_gave(tmp_path):
    cache, used = UnitCache(tmp_path), []
    with pytest.raises(ClusterLost, match="raylet died"):
        cached_map(fake_executor(FakeRay(die_after=1)), sweep.run_unit, UNITS, UNITS, cache,
                   on_result=lambda i, r: used.append(i))
    assert used == [0] and len(cache.keys()) == 1  # what finished before is kept, whole


def test_a_unit_that_raises_on_a_worker_raises_as_it_would_here():
    ray = FakeRay()

    def task_error(fn, item, roots):
        err = ray.exceptions.RayTaskError("remote traceback ...")
        err.cause = ZeroDivisionError("division by zero")
        raise err

    ex = fake_executor(ray)
    ray.remote = lambda f: FakeRay.remote(ray, task_error)
    with pytest.raises(ZeroDivisionError):
        ex.map(abs, [1], environment=environment())


def test_ray_s_own_sigterm_handler_is_undone(monkeypatch):
    """ray.init installs a SIGTERM handler that exits 15 with no line: the one before it is put back."""
    import signal
    import sys
    import types

    mine = lambda *a: None  # noqa: E731
    previous = signal.signal(signal.SIGTERM, mine)
    try:
        def init(**kw):
            assert kw["runtime_env"] == {"env_vars": {"MHA_VERIFY_BACKEND": backend_name()}}  # the driver's backend
            signal.signal(signal.SIGTERM, lambda *a: sys.exit(15))

        fake = types.SimpleNamespace(is_initialized=lambda: False, init=init)
        monkeypatch.setitem(sys.modules, "ray", fake)
        RayExecutor()
        assert signal.getsignal(signal.SIGTERM) is mine

        def failing(**kw):
            raise ConnectionError("could not reach 10.0.0.1:6379\nmore detail")

        fake.init = failing
        with pytest.raises(ClusterLost, match="cannot start or join Ray at 10.0.0.1: ConnectionError: could not"):
            RayExecutor("10.0.0.1")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert ex_mod.make_executor("local").name == "local"


def test_on_a_mismatch_the_tasks_still_pending_are_cancelled_by_ending_their_workers():
    ray = FakeRay(worker_env=other_code)
    with pytest.raises(WorkerMismatch):
        fake_executor(ray).map(abs, list(range(70)), environment=environment())
    assert ray.cancelled == 70 - 64  # the first 64 came back together; the rest ended (force)
