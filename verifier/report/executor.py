"""Where the units of a sweep run: in this process (the default) or as Ray
tasks (``mha-verify report --executor ray [--address ADDR]``).

Both executors have one interface, :meth:`map`: ``fn`` applied to each item,
the results returned in the order of the items whatever the order in which
they complete, ``on_result(index, result)`` called as each one completes
(the cache writes there, so an interrupted sweep keeps what finished).  The
results are the same either way, so a report is the same byte for byte
local or on Ray.

Ray is optional (the ``cluster`` extra): it is imported only when asked for,
and its absence is one clear line (:class:`ExecutorUnavailable`).  A Ray
task whose worker dies is retried (``max_retries``) by Ray itself; its
result is collected once, by the driver.

>>> LocalExecutor().map(abs, [-2, 1, -3])
[2, 1, 3]
"""
from __future__ import annotations

from typing import Callable, Iterable

EXECUTORS = ("local", "ray")


class ExecutorUnavailable(RuntimeError):
    """The executor asked for cannot run here (e.g. Ray not installed)."""


class LocalExecutor:
    """Every unit in this process, one after another, in order."""

    name = "local"

    def map(self, fn: Callable, items: Iterable, on_result: Callable | None = None,
            resources: dict | None = None) -> list:
        """``resources``: what each unit asks of a cluster (ignored in this process)."""
        out = []
        for i, item in enumerate(items):
            r = fn(item)
            if on_result:
                on_result(i, r)
            out.append(r)
        return out

    def training_placement(self) -> tuple[str, dict]:
        """Where a unit that trains runs: ("", {}) here, on this process's device."""
        return "", {}

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RayExecutor(LocalExecutor):
    """Every unit a Ray task: on the cluster at ``address`` (e.g.
    ``ray://host:10001`` or ``auto``), else on a local Ray started here
    (``num_cpus``: its size, default all cores) and shut down by
    :meth:`close`.  A cluster already initialised in this process is used
    as it is."""

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, max_retries: int = 3):
        try:
            import ray
        except ImportError as exc:
            raise ExecutorUnavailable('--executor ray needs Ray: pip install "mha-verify[cluster]" '
                                      f"(or pip install ray) ({exc})") from None
        self._ray, self.max_retries, self._owned = ray, max_retries, False
        if not ray.is_initialized():
            kwargs = {"address": address} if address else {"num_cpus": num_cpus}
            ray.init(include_dashboard=False, log_to_driver=False, **kwargs)
            self._owned = True

    def map(self, fn: Callable, items: Iterable, on_result: Callable | None = None,
            resources: dict | None = None) -> list:
        """``resources``: Ray's options for each task (``num_gpus``, ``num_cpus``)."""
        ray = self._ray
        task = ray.remote(_apply).options(max_retries=self.max_retries, retry_exceptions=False,
                                          **(resources or {}))
        fn_ref = ray.put(fn)  # any callable (a partial too), shipped once
        refs = [task.remote(fn_ref, item) for item in items]
        index = {ref: i for i, ref in enumerate(refs)}
        out, pending = [None] * len(refs), list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=min(len(pending), 64), timeout=1.0)
            for ref in done:
                i = index[ref]
                out[i] = ray.get(ref)
                if on_result:
                    on_result(i, out[i])
        return out

    def training_placement(self) -> tuple[str, dict]:
        """A unit that trains asks for one GPU when the cluster has one ("gpu"; Ray then shows
        it that GPU and torch trains on CUDA), else for the CPU threads it trains with
        ("cpu"; :data:`~verifier.experiments.devices.CPU_TRAINING_THREADS`, at most the
        cluster's CPUs): a worker never oversubscribes its node's cores."""
        from verifier.experiments.devices import CPU_TRAINING_THREADS

        have = self._ray.cluster_resources()
        if have.get("GPU", 0) >= 1:
            return "gpu", {"num_gpus": 1}
        return "cpu", {"num_cpus": max(1, min(CPU_TRAINING_THREADS, int(have.get("CPU", 1))))}

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()
            self._owned = False


def _apply(fn: Callable, item):
    """A Ray task: ``fn(item)``."""
    return fn(item)


def make_executor(name: str = "local", *, address: str | None = None, num_cpus: int | None = None):
    """The executor called ``name`` (:data:`EXECUTORS`)."""
    if name == "local":
        if address:
            raise ValueError("--address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(address, num_cpus=num_cpus)
    raise ValueError(f"executor {name!r} not in {list(EXECUTORS)}")
