"""The helper process (verifier/arith/second_process.py): a job there gives
what the function gives here (values, errors as None, warnings re-emitted,
the caller's numpy error state); a helper that is not ready, busy, dead,
stalled or garbled gives None and the caller computes the job itself; it
starts at a process's second offer, never with MHA_VERIFY_PROCESS=0 or
MHA_VERIFY_THREADS=1, and ends with its parent.  Through it, a prefetched
sample and a whole check give exactly what they give without it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from test_second_thread import _stable  # this folder's own module: the evidence as exact JSON

import verifier.arith.second_process as sp
import verifier.arith.subset_sample as ss
from verifier.arith.kruskal import kruskal_rank_at_least
from verifier.data.instances import make_instance
from verifier.statements.runner import run_check

WAIT_S = 60.0  # a helper imports numpy and the screen: seconds on a loaded machine, never minutes


def _ready(p: sp.SecondProcess) -> sp.SecondProcess:
    end = time.monotonic() + WAIT_S
    while not p.ready():
        assert p.alive and time.monotonic() < end, "the helper never said it was ready"
        time.sleep(0.01)
    return p


@pytest.fixture
def helper(monkeypatch):
    monkeypatch.setenv(sp.PROCESS_ENV, "1")
    p = _ready(sp.SecondProcess())
    yield p
    p.close()


@pytest.fixture
def module_helper(monkeypatch):
    """The module's own helper, started and ready (restored afterwards)."""
    monkeypatch.setenv(sp.PROCESS_ENV, "1")
    monkeypatch.delenv("MHA_VERIFY_THREADS", raising=False)
    saved = sp._HELPER[0]
    sp._HELPER[0] = None
    p = sp.start()
    assert p is not None
    _ready(p)
    ss._PREFETCHED.clear()
    yield p
    ss._PREFETCHED.clear()
    sp.stop()
    sp._HELPER[0] = saved


def _vectors(m=60, d=26, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d))


def _planted(m=60, d=26, seed=1):
    rng = np.random.default_rng(seed)
    V = rng.integers(-9, 10, (m, d)).astype(np.float64)
    V[:40] = rng.integers(-3, 4, (40, 10)) @ rng.integers(-3, 4, (10, d))
    return V


@pytest.mark.parametrize("V", [_vectors(), _planted()], ids=["independent", "planted-dependence"])
def test_a_job_there_gives_what_the_function_gives_here(helper, V):
    job = helper.submit(ss._draw_and_screen, V, 24, 300, 7)
    assert job is not None
    there, here = job.result(), ss._draw_and_screen(V, 24, 300, 7)
    assert np.array_equal(there[0], here[0]) and there[1] == here[1] and there[2] == here[2]
    assert np.array_equal(there[3], here[3])
    assert job.result() is there  # read once


def test_warnings_come_back_and_the_callers_error_state_goes_there(helper):
    job = helper.submit(np.divide, 1.0, 0.0)  # the default error state: a warning
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        assert job.result() == np.inf
    with np.errstate(divide="raise"):
        job = helper.submit(np.divide, 1.0, 0.0)
    assert job.result() is None  # FloatingPointError there: None, the caller computes it itself
    with np.errstate(divide="ignore"):
        job = helper.submit(np.divide, 1.0, 0.0)
    assert job.result() == np.inf


def test_a_job_that_raises_there_gives_none_and_the_helper_goes_on(helper):
    assert helper.submit(np.linalg.inv, np.zeros((2, 2))).result() is None  # LinAlgError there
    assert helper.alive
    assert helper.submit(np.add, 2.0, 3.0).result() == 5.0


def test_jobs_wait_in_order_up_to_a_bound_and_a_job_that_cannot_be_sent_is_not(helper):
    jobs = [helper.submit(time.sleep, 0.3) for _ in range(sp.MAX_PENDING)]
    assert all(j is not None for j in jobs)
    assert helper.submit(np.add, 2.0, 2.0) is None  # MAX_PENDING unanswered: the caller uses a thread
    assert [j.result() for j in jobs] == [None] * sp.MAX_PENDING  # time.sleep's value
    assert helper.submit(lambda: 1) is None  # a lambda does not pickle: not sent, the helper untouched
    first, second = helper.submit(np.add, 3.0, 3.0), helper.submit(np.multiply, 3.0, 3.0)
    second.wait()
    assert (first.result(), second.result()) == (6.0, 9.0)  # each its own answer, whatever order they are read


def test_arrays_go_and_come_back_as_raw_buffers(helper):
    A = np.random.default_rng(0).standard_normal((300, 200))
    F = np.asfortranarray(A)
    got = helper.submit(np.add, A, F[:, ::-1]).result()  # C, Fortran and strided arrays
    assert np.array_equal(got, A + F[:, ::-1])


def test_a_helper_of_another_process_is_not_used(helper):
    owner, helper.owner = helper.owner, -1  # as a fork of the process that started it sees it
    try:
        assert not helper.alive and helper.submit(np.add, 1.0, 1.0) is None
        helper.close()  # not ours to end
        assert helper.proc.poll() is None
    finally:
        helper.owner = owner


_READY_THEN = ("import sys, json, time, pickle, importlib; sys.path[:0] = json.loads(sys.argv[1]); "
               "from verifier.arith.second_process import _send, _receive, _READY; "
               "files = {m: importlib.import_module(m).__file__ for m in ['verifier', *json.loads(sys.argv[2])]}; "
               "_send(1, pickle.dumps((_READY, files))); ")


@pytest.mark.parametrize("child, stage", [
    ("import sys; sys.exit(0)", "ready"),  # gone before it is ready
    ("import os, time; os.write(1, bytes(16)); time.sleep(30)", "ready"),  # an empty word, not 'ready'
    (_READY_THEN.replace("files = {", "files = {'other': 1, "), "ready"),  # other code than this process's
    (_READY_THEN + "_receive(0); sys.exit(3)", "answer"),  # dies on the job
    (_READY_THEN + "_receive(0); time.sleep(30)", "answer"),  # stalls past the timeout
    (_READY_THEN + "_receive(0); _send(1, b'not a pickle'); time.sleep(30)", "answer"),  # garbled
    (_READY_THEN + "_receive(0); import os; os.write(1, bytes([9])); sys.exit(0)", "answer"),  # a cut header
])
def test_a_broken_helper_gives_none_and_is_ended(monkeypatch, child, stage):
    monkeypatch.setattr(sp, "_CHILD", child)
    monkeypatch.setattr(sp, "ANSWER_TIMEOUT_S", 1.0)
    p = sp.SecondProcess()
    try:
        if stage == "ready":
            end = time.monotonic() + WAIT_S
            while p.alive and time.monotonic() < end:  # the answers' reader ends it
                time.sleep(0.01)
            assert not p.alive and not p.ready() and p.submit(np.add, 1.0, 1.0) is None
        else:
            job = _ready(p).submit(np.add, 1.0, 1.0)
            assert job is not None and job.result() is None
            assert not p.alive and p.submit(np.add, 1.0, 1.0) is None
    finally:
        p.close()
    p.proc.wait(timeout=WAIT_S)  # ended (killed), not left running


def test_the_helper_starts_at_the_second_offer_and_never_when_turned_off(monkeypatch):
    saved, asked = sp._HELPER[0], sp._ASKED[0]
    sp._HELPER[0], sp._ASKED[0] = None, 0
    try:
        monkeypatch.setenv(sp.PROCESS_ENV, "0")
        assert [sp.helper() for _ in range(3)] == [None] * 3 and sp.start() is None
        monkeypatch.setenv(sp.PROCESS_ENV, "1")
        monkeypatch.setenv("MHA_VERIFY_THREADS", "1")
        assert [sp.helper() for _ in range(3)] == [None] * 3 and sp.start() is None
        monkeypatch.delenv("MHA_VERIFY_THREADS")
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
        sp._ASKED[0] = 0
        assert sp.helper() is None  # the first offer: a process that runs one check never starts one
        second = sp.helper()
        assert isinstance(second, sp.SecondProcess) and sp.helper() is second and sp.start() is second
    finally:
        sp.stop()
        sp._HELPER[0], sp._ASKED[0] = saved, asked
    assert second.proc.wait(timeout=WAIT_S) is not None  # stop() ended it


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_helper_ends_when_its_parent_is_killed():
    code = ("import sys, json; sys.path[:0] = json.loads(sys.argv[1]); import time; "
            "import verifier.arith.second_process as sp; p = sp.start(); print(p.proc.pid, flush=True); "
            "time.sleep(120)")
    env = dict(os.environ, **{sp.PROCESS_ENV: "1"})
    env.pop("MHA_VERIFY_THREADS", None)
    parent = subprocess.Popen([sys.executable, "-c", code, json.dumps(sys.path)], stdout=subprocess.PIPE,
                              env=env, text=True)
    try:
        pid = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    end = time.monotonic() + WAIT_S
    while not _gone(pid):
        assert time.monotonic() < end, "the helper outlived its parent"
        time.sleep(0.05)


def test_a_prefetch_through_the_helper_is_the_search_s_own(module_helper, monkeypatch):
    monkeypatch.setattr(ss, "second_core", lambda: True)
    for V in (_vectors(), _planted()):
        plain = kruskal_rank_at_least(V, 24, samples=400, seed=7)
        assert ss.prefetch_sample(V, 24, samples=400, seed=7)
        assert isinstance(ss._PREFETCHED[-1].job, sp.Job)  # in the helper, not on a thread
        pre = kruskal_rank_at_least(V, 24, samples=400, seed=7)
        assert not ss._PREFETCHED
        assert {k: v for k, v in vars(pre).items() if k != "seconds"} == \
            {k: v for k, v in vars(plain).items() if k != "seconds"}
    W = _vectors()
    assert ss.prefetch_sample(W, 24, samples=100, seed=1)
    W[0, 0] += 1.0  # changed after the job was sent: the job's copy is of the old one, never taken
    assert ss.take_sample(W, 24, samples=100, seed=1) is None
    ss.drain_prefetches()
    assert module_helper.submit(np.add, 1.0, 1.0).result() == 2.0  # drained: the helper is free again


def test_the_same_evidence_with_or_without_the_helper(module_helper, monkeypatch, request):
    if request.config.getoption("--another-machine", default=False):
        pytest.skip("--another-machine perturbs this process only: the helper computes unperturbed")
    inst = make_instance(H=3, n=24, d=26, d_h=24, context="shared", seed=3)  # T = 70 > 60: the sample prefetched
    monkeypatch.setenv("MHA_VERIFY_THREADS", "1")
    one = run_check("theorem1", inst, prec=128, seed=0)
    monkeypatch.delenv("MHA_VERIFY_THREADS")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    sent = []
    submit = sp.SecondProcess.submit
    monkeypatch.setattr(sp.SecondProcess, "submit", lambda self, *a: sent.append(submit(self, *a)) or sent[-1])
    two = run_check("theorem1", inst, prec=128, seed=0)
    assert sent and sent[0] is not None  # the sample went to the helper
    assert _stable(one) == _stable(two)



@pytest.mark.parametrize("user", [None, "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"])
def test_the_helper_runs_blas_as_a_check_does_here(monkeypatch, user):
    """One thread, as a check here, unless the user set a BLAS thread variable: then theirs, as here (a
    helper on one thread beside a process on two gave another float readout)."""
    from verifier.arith.second_thread import BLAS_THREAD_VARIABLES

    for var in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    if user is not None:
        monkeypatch.setenv(user, "2")
    env = sp._child_env()
    assert env[sp.PROCESS_ENV] == "0"
    if user is None:
        assert all(env[v] == "1" for v in BLAS_THREAD_VARIABLES)
    else:
        assert env[user] == "2" and all(v not in env for v in BLAS_THREAD_VARIABLES if v != user)


def test_an_answer_goes_to_its_own_job_even_after_a_send_was_interrupted(helper):
    """Answers name their job: a job interrupted before it was sent (a signal between registering and
    sending it) leaves no hole that would hand each later job the next one's answer."""
    class Interrupting:
        def put(self, item):
            raise KeyboardInterrupt

    outbox, helper._outbox = helper._outbox, Interrupting()
    with pytest.raises(KeyboardInterrupt):
        helper.submit(str, "lost")
    helper._outbox = outbox
    a, b = helper.submit(str, "A"), helper.submit(str, "B")
    assert (b.result(), a.result()) == ("B", "A")
    assert not helper._waiting


def test_a_fork_never_waits_for_its_parent_s_answers(helper):
    job = helper.submit(time.sleep, 0.5)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports by its exit code
        t0 = time.monotonic()
        ok = job.result() is None and time.monotonic() - t0 < 0.2 and sp.running() is None
        os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert job.result() is None and helper.alive  # time.sleep's value, here


def test_one_helper_however_many_threads_start_it(monkeypatch):
    import threading

    monkeypatch.setenv(sp.PROCESS_ENV, "1")
    monkeypatch.delenv("MHA_VERIFY_THREADS", raising=False)
    saved = sp._HELPER[0]
    sp._HELPER[0] = None
    got, gate = [], threading.Barrier(4)

    def go():
        gate.wait()
        got.append(sp.start())

    threads = [threading.Thread(target=go) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({id(p) for p in got}) == 1 and got[0] is not None
    finally:
        sp.stop()
        sp._HELPER[0] = saved


def test_a_helper_that_never_became_ready_is_not_started_again(monkeypatch):
    monkeypatch.setenv(sp.PROCESS_ENV, "1")
    monkeypatch.delenv("MHA_VERIFY_THREADS", raising=False)
    monkeypatch.setattr(sp, "PRELOAD", ["verifier.no_such_module"])  # it dies importing it
    saved = sp._HELPER[0]
    sp._HELPER[0] = None
    try:
        first = sp.start()
        end = time.monotonic() + WAIT_S
        while first.alive and time.monotonic() < end:
            time.sleep(0.01)
        assert not first.alive and not first.ready()
        assert sp.start() is None and sp.helper() is None  # it would fail again: the thread does the work
    finally:
        sp.stop()
        sp._HELPER[0] = saved


def test_a_helper_importing_another_copy_of_the_code_is_never_used(monkeypatch, tmp_path):
    """A helper must run this process's code: one whose ``verifier`` comes from elsewhere (a chdir, a
    copy on disk) is ended before it is ever ready."""
    import shutil

    import verifier

    shutil.copytree(os.path.dirname(verifier.__file__), tmp_path / "verifier",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sp, "_search_path", lambda: [str(tmp_path)] + sys.path)
    p = sp.SecondProcess()
    try:
        end = time.monotonic() + WAIT_S
        while p.alive and time.monotonic() < end:
            time.sleep(0.01)
        assert not p.alive and not p.ready() and p.submit(np.add, 1.0, 1.0) is None
    finally:
        p.close()


def test_a_warning_comes_back_from_where_it_was_raised(helper):
    with pytest.warns(RuntimeWarning) as caught:
        helper.submit(np.divide, 1.0, 0.0).result()
    assert caught[0].filename.endswith("second_process.py")  # the helper's line that raised it, not ours


def test_the_same_code_reached_by_another_path_is_this_process_s(monkeypatch):
    """``root/benchmarks/../verifier`` is ``root/verifier``: a helper importing it is used."""
    import verifier

    root = os.path.dirname(os.path.dirname(os.path.abspath(verifier.__file__)))
    detour = os.path.join(root, "verifier", "..", "tests", "..")
    monkeypatch.setattr(sp, "_module_files", lambda preload: {
        name: os.path.join(detour, os.path.relpath(f, root)) for name, f in sp._real(
            {n: getattr(sys.modules.get(n), "__file__", None) for n in ["verifier", *preload]}).items()})
    p = _ready(sp.SecondProcess())
    try:
        assert p.submit(np.add, 1.0, 2.0).result() == 3.0
    finally:
        p.close()
