"""Float work on a second core while the caller goes on: Assumption 1's
random subsets screened during the construction
(:mod:`verifier.arith.subset_sample`), the float readout and forward pass
and the float inverse of the construction's minor during the rank
certificate (Theorem 1).  Where a helper process runs
(:mod:`verifier.arith.second_process`), the screen and the readout go there
instead (no turns at the interpreter lock).

Only float work goes there: numpy and scipy, never flint's or mpmath's
working precision, which are process-wide (``ctx.prec``, ``mp.prec``: a
second thread setting them would change the caller's balls).
tests/verifier/arith/test_second_thread.py watches every call made on the
second thread of whole checks and fails on one into flint or mpmath.

Within a check, BLAS runs on one thread up to a size (:func:`one_blas_thread`):
multithreaded OpenBLAS made the whole ``check theorem1`` 2-3.4x slower on 2
cores, at every size measured (Fig. 2's T = 621 to T = 2353), against the
SVD's 1.1-1.3x gain from it.

A job starts on its own thread only with a second CPU for this process
(:func:`second_core`; ``MHA_VERIFY_THREADS=1`` turns it off): otherwise it
runs at once, in the caller's thread.  Either way :meth:`FloatJob.result`
returns what the function returned or raises what it raised, so a caller
gets the same values, and the same errors, with or without the thread.
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

__all__ = ["THREADS_ENV", "FloatJob", "second_core", "one_blas_thread", "ONE_BLAS_THREAD_UP_TO"]

#: set to 1 to keep every computation on one thread
THREADS_ENV = "MHA_VERIFY_THREADS"
#: checks whose problem has at most this many entries (of Z: T H d) keep BLAS on one thread (measured on 2
#: cores, BLAS on 1 vs 2 threads: Fig. 2, T = 621: 0.20 vs 0.69 s; ViT-base shared, T = 757: 1.36 vs 2.64 s;
#: d_h = n = 197, T = 2353, 2.2e7 entries: 13.3 vs 27.7 s); larger ones (the 7B-class layer's 5.3e8) keep
#: the libraries' own setting
ONE_BLAS_THREAD_UP_TO = 2**26
#: the variables a user sets to choose BLAS threads: when one is set, it is left to decide
BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def one_blas_thread(entries: int):
    """BLAS on one thread within the block for a problem of at most
    :data:`ONE_BLAS_THREAD_UP_TO` entries (threadpoolctl); as it was for a
    larger one, when the user set a thread variable, or without threadpoolctl."""
    if int(entries) > ONE_BLAS_THREAD_UP_TO or any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; only a speed-up
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def second_core() -> bool:
    """Whether float work may go to a second thread: at least two CPUs for
    this process, and ``MHA_VERIFY_THREADS`` is not 1."""
    if os.environ.get(THREADS_ENV, "").strip() == "1":
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


class FloatJob:
    """``fn(*args)`` on a daemon thread when :func:`second_core` (else at
    once), under the caller's numpy error state (numpy keeps it per thread);
    :meth:`result` joins it and returns its value or raises its error,
    :meth:`wait` joins it and drops both."""

    def __init__(self, fn, *args, thread: bool | None = None):
        self._value, self._error = None, None
        self._errstate = np.geterr()
        self._thread = None
        if second_core() if thread is None else thread:
            self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True,
                                            name="mha-verify float work")
            self._thread.start()
        else:
            self._run(fn, args)

    @property
    def threaded(self) -> bool:
        return self._thread is not None

    def _run(self, fn, args) -> None:
        try:
            with np.errstate(**self._errstate):
                self._value = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        """Join the thread (a job nobody reads: it ends inside the caller's check, warnings and all)."""
        if self._thread is not None:
            self._thread.join()

    def result(self):
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
