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

A worker proves what computed its result: given the driver's ``environment``
(:func:`.cache.environment`: the code's fingerprint, the backend, the CPU
kernels, the packages' versions), each Ray task returns its own with the
result, and a worker whose environment differs is :class:`WorkerMismatch`,
naming both, before its result is used or cached.  A cluster that fails
under the run (a raylet dead, a node lost) is :class:`ClusterLost`; both
are one line and exit 4 on the command line.

>>> LocalExecutor().map(abs, [-2, 1, -3])
[2, 1, 3]
"""
from __future__ import annotations

import signal
import threading
from typing import Callable, Iterable

EXECUTORS = ("local", "ray")


class ExecutorUnavailable(RuntimeError):
    """The executor asked for cannot run here (e.g. Ray not installed)."""


class ClusterError(RuntimeError):
    """The cluster could not be trusted or used: no result of the failed call
    was used.  It says nothing about the statements."""


class WorkerMismatch(ClusterError):
    """A worker ran in another environment (code, backend, kernels, package
    versions) than the driver's."""


class ClusterLost(ClusterError):
    """The cluster failed under the run (its raylet died, a node was lost, it
    could not be joined)."""


class LocalExecutor:
    """Every unit in this process, one after another, in order."""

    name = "local"

    def map(self, fn: Callable, items: Iterable, on_result: Callable | None = None,
            resources: dict | None = None, environment: dict | None = None) -> list:
        """``resources``: what each unit asks of a cluster; ``environment``: what
        its worker must run in (both moot in this process)."""
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
    as it is.  The workers are given the driver's array backend
    (``MHA_VERIFY_BACKEND``, "auto" resolved on the driver)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, max_retries: int = 3):
        try:
            import ray
        except ImportError as exc:
            raise ExecutorUnavailable('--executor ray needs Ray: pip install "mha-verify[cluster]" '
                                      f"(or pip install ray) ({exc})") from None
        self._ray, self.max_retries, self._owned = ray, max_retries, False
        if not ray.is_initialized():
            from verifier.report.cache import backend_name

            kwargs = {"address": address} if address else {"num_cpus": num_cpus}
            handler = signal.getsignal(signal.SIGTERM)
            try:  # the workers compute on the driver's backend ("auto" resolved here: a GPU node is no exception)
                ray.init(include_dashboard=False, log_to_driver=False,
                         runtime_env={"env_vars": {"MHA_VERIFY_BACKEND": backend_name()}}, **kwargs)
            except Exception as exc:  # noqa: BLE001 - an address that answers nothing, a cluster that will not start
                raise ClusterLost(f"cannot start or join Ray{' at ' + address if address else ''}: "
                                  f"{_first_line(exc)}") from None
            finally:
                if handler is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(signal.SIGTERM, handler)  # ray.init's own exits with code 15, no line
            self._owned = True

    def map(self, fn: Callable, items: Iterable, on_result: Callable | None = None,
            resources: dict | None = None, environment: dict | None = None) -> list:
        """``resources``: Ray's options for each task (``num_gpus``, ``num_cpus``);
        ``environment``: the driver's (:func:`.cache.environment`), which every
        worker must return with its result (:class:`WorkerMismatch` if not)."""
        ray = self._ray
        task = ray.remote(_apply).options(max_retries=self.max_retries, retry_exceptions=False,
                                          **(resources or {}))
        roots = None if environment is None else environment["code_roots"]
        fn_ref = ray.put(fn)  # any callable (a partial too), shipped once
        refs = [task.remote(fn_ref, item, roots) for item in items]
        index = {ref: i for i, ref in enumerate(refs)}
        out, pending = [None] * len(refs), list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=min(len(pending), 64), timeout=1.0)
                for ref in done:
                    i = index[ref]
                    out[i] = self._checked(ray.get(ref), environment)
                    if on_result:
                        on_result(i, out[i])
        except ray.exceptions.RayTaskError as exc:  # the unit itself raised: as it would in this process
            self._cancel(pending)
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None
        except ray.exceptions.RayError as exc:  # nothing left to cancel on a cluster that failed
            raise ClusterLost(f"the Ray cluster failed under the run: {_first_line(exc)}") from None
        except BaseException:
            self._cancel(pending)
            raise
        return out

    @staticmethod
    def _checked(reply: dict, environment: dict | None):
        """The result of one task, once its worker's environment is the driver's."""
        theirs = None if environment is None else {k: reply["environment"].get(k) for k in environment}
        if environment is not None and theirs != environment:
            from verifier.report.cache import differences

            raise WorkerMismatch(f"a Ray worker{' on ' + reply['node'] if reply.get('node') else ''} runs in "
                                 f"another environment than this driver ({differences(environment, theirs)}); "
                                 "none of its results was used or cached: run the same code, backend, CPU kernels "
                                 "and packages on every node")
        return reply["result"]

    def _cancel(self, refs) -> None:
        """Cancel what is still running on a cluster this run joined (one it
        started is shut down whole by :meth:`close`)."""
        if self._owned:
            return
        for ref in refs:  # force: the worker is ended, not interrupted (an import cut short would stay broken)
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - best effort: the cluster may be gone
                pass

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


def _apply(fn: Callable, item, roots=None) -> dict:
    """A Ray task: ``fn(item)``, with the environment it ran in (of the code
    under ``roots``; None: not asked) and its node."""
    from verifier.report.cache import environment

    result = fn(item)
    try:
        import ray

        node = ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 - the node's name is a courtesy
        node = ""
    return {"result": result, "environment": None if roots is None else environment(roots), "node": node}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def make_executor(name: str = "local", *, address: str | None = None, num_cpus: int | None = None):
    """The executor called ``name`` (:data:`EXECUTORS`)."""
    if name == "local":
        if address:
            raise ValueError("--address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(address, num_cpus=num_cpus)
    raise ValueError(f"executor {name!r} not in {list(EXECUTORS)}")
