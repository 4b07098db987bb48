"""Float work on a second core (verifier/arith/second_thread.py): a job's
value and error reach the caller with or without the thread; the thread is
used only with a second CPU and without MHA_VERIFY_THREADS=1; BLAS on one
thread for the checks' sizes; and on whole checks that use the second thread
(Assumption 1's sample screened during the construction, the float readout
during the certificate) nothing on that thread calls into flint or mpmath,
whose working precision is process-wide, and the evidence is the same as
on one thread."""
from __future__ import annotations

import contextlib
import json
import threading

import mpmath
import numpy as np
import pytest
from flint import arb

import verifier.arith.second_thread as st
from verifier.arith.independence import FLOAT_FROM_K
from verifier.arith.second_thread import FloatJob, one_blas_thread, second_core
from verifier.data.instances import make_instance
from verifier.statements.runner import run_check


class Boom(Exception):
    pass


def _boom():
    raise Boom("from the job")


@pytest.mark.parametrize("thread", [True, False])
def test_a_job_hands_back_its_value_and_its_error(thread):
    job = FloatJob(lambda x, y: x + y, 2, 3, thread=thread)
    assert job.result() == 5 and job.threaded is thread
    with pytest.raises(Boom, match="from the job"):
        FloatJob(_boom, thread=thread).result()


def test_the_job_runs_on_another_thread_only_when_asked():
    names = []
    FloatJob(lambda: names.append(threading.current_thread().name), thread=True).result()
    FloatJob(lambda: names.append(threading.current_thread().name), thread=False).result()
    assert names[0] != threading.current_thread().name and names[1] == threading.current_thread().name


def test_one_thread_when_the_user_says_so_or_one_cpu(monkeypatch):
    monkeypatch.setenv(st.THREADS_ENV, "1")
    assert not second_core() and not FloatJob(lambda: 1).threaded
    monkeypatch.delenv(st.THREADS_ENV)
    monkeypatch.setattr(st.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not second_core()
    monkeypatch.setattr(st.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert second_core() and FloatJob(lambda: 1).threaded


def _blas_threads():
    from threadpoolctl import threadpool_info

    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_blas_on_one_thread_for_small_problems_only(monkeypatch):
    for v in st.BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    np.ones(2) @ np.ones(2)  # BLAS loaded
    before = _blas_threads()
    with one_blas_thread(1000):
        assert _blas_threads() == {1}
    assert _blas_threads() == before
    with one_blas_thread(st.ONE_BLAS_THREAD_UP_TO + 1):
        assert _blas_threads() == before
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user's choice stands
    with one_blas_thread(1000):
        assert _blas_threads() == before


#: float work on the second thread: the sample's float screen (T = 70 > d = 26, C(70, 24) subsets of at least
#: FLOAT_FROM_K = 24 vectors) and, T > 60, the float readout and forward pass
SHARED = dict(H=3, n=24, d=26, d_h=24, context="shared", seed=3)


def _without_times(x):
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items() if "seconds" not in k and k != "time"}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


def _stable(ev) -> str:
    """The evidence as JSON, every value exact (not rounded), without its run times."""
    return json.dumps(_without_times(ev.to_dict()), sort_keys=True, default=str)


def _exact_library(obj) -> bool:
    mod = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
    name = getattr(obj, "__name__", "") or ""
    return any(lib in f"{mod} {name}" for lib in ("flint", "mpmath"))


@contextlib.contextmanager
def watching_other_threads():
    """Every function called on a thread other than the main one: how many,
    and those that are flint's or mpmath's or name a global bound to them
    (python-flint's methods are compiled: no call event of their own, so a
    function that reaches them is caught by the names it uses)."""
    seen, lock = {"calls": 0, "exact": []}, threading.Lock()

    def watch(frame, event, arg):
        if event != "call" or threading.current_thread() is threading.main_thread():
            return
        code, where = frame.f_code, frame.f_code.co_filename
        uses = [n for n in code.co_names if _exact_library(frame.f_globals.get(n))]
        with lock:
            seen["calls"] += 1
            if "mpmath" in where or "flint" in where or uses:
                seen["exact"].append((where.rsplit("/", 1)[-1], code.co_name, uses))

    threading.setprofile(watch)
    try:
        yield seen
    finally:
        threading.setprofile(None)


def _uses_arb():
    return arb(2).sqrt()


def _uses_mpmath():
    return mpmath.sqrt(2)


def test_the_watch_sees_flint_and_mpmath_on_another_thread():
    for fn in (_uses_arb, _uses_mpmath):
        with watching_other_threads() as seen:
            FloatJob(fn, thread=True).result()
        assert seen["exact"], fn


def two_cpus(monkeypatch):
    """Whatever this machine has: two CPUs for the process, no MHA_VERIFY_THREADS."""
    monkeypatch.delenv(st.THREADS_ENV, raising=False)
    monkeypatch.setattr(st.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_the_second_thread_never_calls_flint_or_mpmath(monkeypatch):
    two_cpus(monkeypatch)
    with watching_other_threads() as seen:
        inst = make_instance(**SHARED)
        assert inst.T > 60 and inst.n >= FLOAT_FROM_K
        ev = run_check("theorem1", inst, prec=128, seed=0)
    assert ev.verdict == "verified"
    assert seen["calls"] > 100  # the jobs ran on their thread: the watch saw them
    assert seen["exact"] == []


def test_the_same_evidence_with_or_without_the_second_thread(monkeypatch):
    inst = make_instance(**SHARED)
    monkeypatch.setenv(st.THREADS_ENV, "1")
    one = run_check("theorem1", inst, prec=128, seed=0)
    two_cpus(monkeypatch)
    two = run_check("theorem1", inst, prec=128, seed=0)
    assert _stable(one) == _stable(two)
    a1 = next(h for h in two.hypotheses if h.name == "Assumption 1")
    assert "random 24-subsets" in a1.detail  # the sample ran (and was prefetched)


def test_the_screen_s_one_by_one_fallback_stays_in_floats(monkeypatch):
    """A subset singular in float (a zero vector: an exact zero pivot) makes
    the batched inverse of the screen's inverse route fail: its one-by-one
    fallback (float_certificates._float_bound) runs on the second thread
    without arb."""
    import verifier.arith.float_certificates as fc
    from verifier.arith.independence import SubsetIndependence

    V = np.random.default_rng(4).standard_normal((40, 30))
    V[0] = 0.0
    idx = np.array([np.arange(24), np.arange(1, 25), np.r_[0, np.arange(10, 33)]])
    one, real = [], fc._float_bound
    monkeypatch.setattr(fc, "_float_bound", lambda *a: one.append(1) or real(*a))
    with watching_other_threads() as seen:
        ok = FloatJob(SubsetIndependence(V).float_screen, idx, thread=True).result()
    assert one and seen["calls"] > 0 and seen["exact"] == []
    assert not ok[0] and not ok[2]  # the zero vector: never proved independent
    assert ok[1]


def test_a_job_runs_under_the_caller_s_numpy_error_state():
    def divide():
        return np.float64(1.0) / np.float64(0.0)

    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            FloatJob(divide, thread=True).result()
    with np.errstate(divide="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert FloatJob(divide, thread=True).result() == np.inf


def test_no_thread_of_a_check_outlives_it(monkeypatch):
    """A prefetch the check never takes (its search decides before the
    sample: a repeated query is a parallel pair) is waited for inside
    run_check: nothing of it runs, or warns, after the check."""
    import verifier.arith.subset_sample as ss

    two_cpus(monkeypatch)
    inst = make_instance(H=3, n=24, d=26, d_h=24, context="shared", degenerate="repeated-queries", seed=3)
    assert ss.prefetch_sample(inst.exact_array("queries"), inst.n, samples=5000, seed=0)  # as memorize would
    run_check("theorem1", inst, prec=128, seed=0)
    assert not ss._PREFETCHED
    assert not [t for t in threading.enumerate() if t.name.startswith("mha-verify") and t.is_alive()]


def test_the_job_s_thread_is_a_named_daemon():
    """A daemon (a signal ending the run is not held up by it) named for what it is (tests find it by name)."""
    job = FloatJob(lambda: threading.current_thread(), thread=True)
    t = job.result()
    assert t.daemon is True and t.name == "mha-verify float work" and t is job._thread


@pytest.mark.parametrize("count, two", [(None, False), (1, False), (2, True), (8, True)])
def test_without_an_affinity_mask_the_cpu_count_decides(monkeypatch, count, two):
    monkeypatch.delenv(st.THREADS_ENV, raising=False)
    monkeypatch.delattr(st.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(st.os, "cpu_count", lambda: count)
    assert second_core() is two
