"""Float work in a second PROCESS: Assumption 1's random subsets drawn and
screened (:mod:`verifier.arith.subset_sample`) beside the construction, the
float readout and forward pass beside the rank certificate (Theorem 1),
without taking turns at this interpreter's lock.

Why a process.  On a second thread the screen (about 80 ms of numpy at
Fig. 2's T = 621: 5000 random 32-subsets) and the construction (20 heads of
small linear algebra) take turns at the interpreter lock between numpy
calls: the screen ran 2x slower than alone and the construction 15-20%
slower; the readout thread slowed the certificate the same way.

The helper is a new interpreter (``python -c``, this process's ``sys.path``:
no fork, so no lock another thread held and no copied memory; and no
re-import of the caller's main script, which the "spawn" start method of
multiprocessing would run again).  :func:`start` starts it, or the second job
a process offers (:func:`helper`: a report, a sweep, a library caller running
checks; not the command line's single ``check``, where it could not be ready
in time and would only compete for the second core).  It imports numpy, the
screen and :data:`PRELOAD`, runs the screen once on a small instance and says
it is ready; a job goes there only after that (:meth:`SecondProcess.submit`;
else None and the caller uses a thread), so a helper still starting never
delays a check.  Jobs are written by one thread and answers read by another,
in order (neither side ever waits on a full pipe), arrays as raw buffers
(pickle protocol 5, no copy).  It runs BLAS as a check does here, prints nothing on
this process's streams, ignores SIGINT (this process decides what a Ctrl-C
ends) and ends at the end of file of its stdin: when this process exits,
crashes or is killed.  Only the process that started it talks to it.

Soundness does not rest on it: a job runs a module-level function on what it
is sent, and what comes back is that function's value (with the warnings it
raised, re-emitted here, under the caller's numpy error state): the value the
same function returns here.  A job that raises, a helper that dies, stalls
past :data:`ANSWER_TIMEOUT_S` or sends something unreadable gives None, and
the caller computes the job itself.  ``MHA_VERIFY_PROCESS=0`` (or
``MHA_VERIFY_THREADS=1``) starts no helper.
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import warnings

__all__ = ["PROCESS_ENV", "START_AT", "ANSWER_TIMEOUT_S", "MAX_PENDING", "PRELOAD", "SecondProcess", "Job",
           "start", "helper", "running", "stop"]

#: set to 0 to start no helper process (float work then goes to a second thread)
PROCESS_ENV = "MHA_VERIFY_PROCESS"
#: the helper starts when a job is offered for the START_AT-th time in a process (it is ready about 0.3 s
#: later; the command line's ``check`` offers one: a helper would only compete with it for the second core,
#: measured 0.45-0.54 vs 0.44-0.47 s at Fig. 2)
START_AT = 2
#: a job's answer not there within this many seconds ends the helper (the caller computes the job itself)
ANSWER_TIMEOUT_S = 300.0
#: jobs sent and not yet answered, at most
MAX_PENDING = 4
#: modules the helper imports before it says it is ready (a checker adds those of the jobs it sends)
PRELOAD: list[str] = []
_HEADER = struct.Struct("<QQ")  # bytes of the pickle, number of raw buffers after it
_LENGTH = struct.Struct("<Q")
_READY = b"ready"
_CHILD = ("import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
          "from verifier.arith.second_process import _serve; _serve(json.loads(sys.argv[2]))")


def _read_exact(fd: int, n: int) -> bytearray:
    out = bytearray(n)
    view, got = memoryview(out), 0
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            raise EOFError("the helper's pipe closed")
        got += k
    return out


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def _dumps(obj) -> tuple[bytes, list]:
    buffers: list = []
    return pickle.dumps(obj, protocol=5, buffer_callback=buffers.append), [b.raw() for b in buffers]


def _send(fd: int, payload: bytes, buffers=()) -> None:
    """One frame: the pickle, then each raw buffer (its length first)."""
    _write_all(fd, _HEADER.pack(len(payload), len(buffers)) + payload)
    for raw in buffers:
        _write_all(fd, _LENGTH.pack(raw.nbytes))
        _write_all(fd, raw)


def _receive(fd: int) -> tuple[bytearray, list]:
    size, count = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    payload = _read_exact(fd, size)
    return payload, [_read_exact(fd, _LENGTH.unpack(_read_exact(fd, _LENGTH.size))[0]) for _ in range(count)]


def _serve(preload) -> None:  # pragma: no cover - runs in the helper (tests drive it there)
    """The helper's loop: ready, then one job at a time, in the order sent, until the end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, answers = 0, os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # nothing printed (by Python or a library) may enter the answers' pipe
    os.close(null)
    import importlib

    import numpy as np

    from verifier.arith.independence import FLOAT_FROM_K, SubsetIndependence

    files = {name: importlib.import_module(name).__file__ for name in ["verifier", *preload]}
    k = FLOAT_FROM_K  # the screen once: its modules imported and LAPACK's first calls made before any job
    V = np.random.default_rng(0).standard_normal((k + 4, k + 8))
    SubsetIndependence(V).float_screen(np.stack([np.arange(k), np.arange(4, k + 4)]))
    _send(answers, pickle.dumps((_READY, files)))
    while True:
        try:
            payload, buffers = _receive(requests)
        except EOFError:
            return
        number = -1
        try:
            number, fn, args, errstate = pickle.loads(payload, buffers=buffers)
            with warnings.catch_warnings(record=True) as caught, np.errstate(**errstate):
                warnings.simplefilter("always")  # the caller's filters decide, where they are re-emitted
                value = fn(*args)
            answer = _dumps((number, True, value, [(str(w.message), w.category, w.filename, w.lineno)
                                                   for w in caught]))
        except BaseException as exc:  # noqa: BLE001 - reported (and the job computed by the caller)
            answer = _dumps((number, False, f"{type(exc).__name__}: {exc}", []))
        _send(answers, *answer)


def _module_files(preload) -> dict:
    """Where this process's ``verifier`` and the preloaded modules come from (the helper must say the same)."""
    return {name: getattr(sys.modules.get(name), "__file__", None) for name in ["verifier", *preload]}


def _real(files: dict) -> dict:
    """The same files, their paths resolved (``a/b/../verifier`` is ``a/verifier``; links followed)."""
    return {name: None if f is None else os.path.realpath(f) for name, f in files.items()}


def _search_path() -> list:
    """This process's ``sys.path``, absolute (``''`` is the directory current now, which a chdir may have
    moved), after the folder this ``verifier`` was imported from."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # verifier/arith/..
    return [root] + [os.path.abspath(p) if p else os.getcwd() for p in sys.path]


def _child_env() -> dict:
    """This process's environment; BLAS on one thread, as within a check here, unless the user set a BLAS
    thread variable (then it decides, here and there alike: the same float results either way)."""
    from verifier.arith.second_thread import BLAS_THREAD_VARIABLES

    env = dict(os.environ)
    if not any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        env.update(dict.fromkeys(BLAS_THREAD_VARIABLES, "1"))
    env[PROCESS_ENV] = "0"  # it starts no helper of its own
    return env


class SecondProcess:
    """A helper interpreter answering jobs in order (see the module docstring)."""

    def __init__(self):
        self.preload = list(PRELOAD)
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(_search_path()), json.dumps(self.preload)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=_child_env())
        self.owner = os.getpid()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._closed = False
        self._waiting: dict = {}  # job number -> Job, until its answer (which names its number) arrives
        self._numbers = itertools.count()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        for target, name in ((self._read, "answers"), (self._write, "jobs")):
            threading.Thread(target=target, daemon=True, name=f"mha-verify helper {name}").start()

    @property
    def alive(self) -> bool:
        return not self._closed and os.getpid() == self.owner

    def ready(self) -> bool:
        """Whether the helper has said it is ready, and is still there."""
        return self._ready.is_set() and self.alive

    def _read(self) -> None:
        fd = self.proc.stdout.fileno()
        try:
            word, files = pickle.loads(_receive(fd)[0])
            if word != _READY or _real(files) != _real(_module_files(self.preload)):  # not its word, or other code
                raise EOFError("not the helper's word, or not this process's code")
            self._ready.set()
            while True:
                payload, buffers = _receive(fd)
                answer = pickle.loads(payload, buffers=buffers)
                with self._lock:
                    job = self._waiting.pop(answer[0])  # KeyError: an answer to no job sent
                job._arrive(answer[1:])
        except Exception:  # noqa: BLE001 - gone, garbled or out of turn: no more jobs here
            self.close()
        finally:
            if threading.current_thread() is not threading.main_thread():
                self._reap()

    def _write(self) -> None:
        fd = self.proc.stdin.fileno()
        try:
            while (item := self._outbox.get()) is not None:
                _send(fd, *item)
        except Exception:  # noqa: BLE001
            self.close()
        finally:
            self.proc.stdin.close()  # the helper reads its end of file and exits

    def submit(self, fn, *args):
        """A :class:`Job` for ``fn(*args)`` (fn a module-level function, the
        arguments picklable), or None: the helper is not ready, has
        :data:`MAX_PENDING` jobs unanswered, or is gone."""
        import numpy as np

        number = next(self._numbers)
        try:  # with the caller's numpy error state, as a thread's job
            item = _dumps((number, fn, args, np.geterr()))
        except (pickle.PicklingError, AttributeError, TypeError):  # a job that cannot be sent: not the helper's
            return None
        with self._lock:
            if not self.ready() or len(self._waiting) >= MAX_PENDING:
                return None
            job = Job(self)
            self._waiting[number] = job  # answers are matched by number, never by order
            try:
                self._outbox.put(item)
            except BaseException:  # an interrupt here: the job was never sent, its number never answered
                del self._waiting[number]
                raise
        return job

    def close(self) -> None:
        """End the helper: unanswered jobs give None, its stdin is closed, it is killed if still there."""
        with self._lock:
            if self._closed or os.getpid() != self.owner:
                return
            self._closed = True
            waiting, self._waiting = list(self._waiting.values()), {}
        self._outbox.put(None)
        for job in waiting:
            job._arrive(None)
        if self.proc.poll() is None:
            self.proc.kill()
        self._reap()

    def _reap(self) -> None:
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill not yet delivered
            pass
        try:
            self.proc.stdout.close()
        except OSError:  # pragma: no cover - the reader still on it
            pass


class Job:
    """One job in the helper: :meth:`result` its value (None if it raised
    there, or the helper failed), :meth:`wait` the same, dropped."""

    def __init__(self, proc: SecondProcess):
        self._proc, self._event, self._frame = proc, threading.Event(), None
        self._done, self._value = False, None

    def _arrive(self, frame) -> None:
        self._frame = frame
        self._event.set()

    def result(self):
        if self._done:
            return self._value
        self._done = True
        if os.getpid() != self._proc.owner:  # a fork of the process that sent it: the answer goes there
            return None
        if not self._event.wait(ANSWER_TIMEOUT_S):
            self._proc.close()  # stalled: nothing more goes there
            return None
        if self._frame is None:
            return None
        (ok, value, caught), self._frame = self._frame, None
        if not ok:
            return None
        for message, category, filename, lineno in caught:  # as a thread's: here, under its filters, same place
            warnings.warn_explicit(message, category, filename, lineno)
        self._value = value
        return value

    def wait(self) -> None:
        self.result()


_HELPER: list = [None]
_ASKED = [0]
_START = threading.Lock()


def _wanted() -> bool:
    from verifier.arith.second_thread import second_core

    return os.environ.get(PROCESS_ENV, "").strip() != "0" and second_core()


def running() -> SecondProcess | None:
    """The helper if one is running in this process and may be used (never starts one)."""
    proc = _HELPER[0]
    return proc if proc is not None and proc.alive and _wanted() else None


def start() -> SecondProcess | None:
    """The helper: started now if none runs (and float work may use a second core); None otherwise, and
    for good in a process whose helper ended before it was ever ready (it would fail again)."""
    with _START:
        if running() is not None:
            return _HELPER[0]
        old = _HELPER[0]
        if not _wanted() or (old is not None and os.getpid() == old.owner and not old._ready.is_set()
                             and not old.alive):
            return None
        try:
            _HELPER[0] = SecondProcess()
        except OSError:  # no new process here (limits, no executable): the thread does the work
            _HELPER[0] = None
        return _HELPER[0]


def helper() -> SecondProcess | None:
    """The running helper, or None; asked for the :data:`START_AT`-th time in
    this process, it starts one (for the jobs after this one): a process that
    runs one check (the command line's ``check``) never pays for one."""
    if not _wanted():
        return None
    if running() is not None:
        return _HELPER[0]
    _ASKED[0] += 1
    return start() if _ASKED[0] >= START_AT else None


def stop() -> None:
    """End the helper, if one runs."""
    proc, _HELPER[0] = _HELPER[0], None
    if proc is not None:
        proc.close()


atexit.register(stop)  # a helper with work left is killed at this process's exit, not waited for
