"""The paper's random-subset test drawn, and screened by the float
certificates, on a second core while the caller goes on.

:func:`draw_subsets` is THE drawing of the sample
(:meth:`verifier.arith.kruskal._Search.sample` draws with it): ``left``
random ``target``-subsets of ``range(m)`` in blocks of about 2e6 random
numbers, the generator's state kept after each block (a dependent subset
rewinds to the end of its block).

:func:`prefetch_sample` starts, in the helper process
(:mod:`verifier.arith.second_process`, once one runs) or else on a daemon
thread, what the first round of that sample will need: the same draw from a fresh ``default_rng(seed)`` and
:meth:`.independence.SubsetIndependence.float_screen` of those subsets (the
rigorous float certificates: a True is a proof that the subset is
independent, a False is "not proved here").  :func:`take_sample` hands it to
the sample when the search asks for exactly that draw on exactly the same
vectors (equal arrays, compared entry by entry, not by a hash): the subsets
left unproved then go through the exact tests in the caller's thread, as
without the prefetch, so the counts, the witness and every verdict are the
same with or without it (tests/verifier/arith/test_subset_sample.py).

Only float work runs on the second thread
(:mod:`verifier.arith.second_thread`); the helper process runs the same
function on a copy of the vectors and sends back its value.  It starts only with a second CPU for
this process (``MHA_VERIFY_THREADS=1`` turns it off), and a prefetch that
fails, or that nobody takes, costs only that core's time.
"""
from __future__ import annotations

import threading

import numpy as np

from verifier.arith import second_process
from verifier.arith.independence import CHUNK_ELEMS, SubsetIndependence, smallest_per_row
from verifier.arith.second_thread import FloatJob, second_core

__all__ = ["draw_subsets", "prefetch_sample", "take_sample", "drain_prefetches"]

#: prefetches kept at once (the oldest is dropped: its thread's result is never read)
KEEP = 4


def draw_subsets(rng: np.random.Generator, m: int, target: int, left: int):
    """``left`` random ``target``-subsets of ``range(m)`` (rows of sorted
    indices), drawn in blocks of about 2e6 random numbers: (idx, ends,
    states), ``ends[j]`` the subsets drawn up to block j and ``states[j]``
    the generator's state after it."""
    per = max(1, min(2_000_000 // max(m, 1), CHUNK_ELEMS // (target * target)))
    blocks, ends, states, drawn = [], [], [], 0
    while drawn < left:
        n = min(left - drawn, per)
        blocks.append(smallest_per_row(rng.random((n, m)), target))
        drawn += n
        ends.append(drawn)
        states.append(rng.bit_generator.state)
    return np.concatenate(blocks), ends, states


def _draw_and_screen(V: np.ndarray, k: int, samples: int, seed: int):
    idx, ends, states = draw_subsets(np.random.default_rng(seed), V.shape[0], k, samples)
    return idx, ends, states, SubsetIndependence(V).float_screen(idx)


class _Prefetch:
    """One draw and its float screen, computed on a second thread."""

    def __init__(self, V: np.ndarray, k: int, samples: int, seed: int):
        self.V, self.key = V, (int(k), int(samples), int(seed))
        proc = second_process.helper()  # another process: no turns at the interpreter lock with the caller
        job = proc.submit(_draw_and_screen, V, *self.key) if proc is not None else None
        self.job = job or FloatJob(_draw_and_screen, V, *self.key, thread=True)

    def result(self):
        try:
            return self.job.result()
        except Exception:  # noqa: BLE001 - only a speed-up: the caller draws and screens itself
            return None


_PREFETCHED: list[_Prefetch] = []
_LOCK = threading.Lock()


def _float_rows(V) -> np.ndarray | None:
    V = np.asarray(V)
    if V.dtype != np.float64 or V.ndim != 2:
        return None
    return V


def prefetch_sample(V, k: int, *, samples: int, seed: int) -> bool:
    """Start the float part of the sample ``kruskal_rank_at_least(V, k,
    samples=samples, seed=seed)`` will draw, on a second thread; True if it
    started (a float64 (m, d) array, 1 <= k <= min(m, d), samples > 0 and a
    second core).  Subsets it does not reach are never screened."""
    V = _float_rows(V)
    if V is None or not (1 <= int(k) <= min(V.shape)) or int(samples) <= 0 or not second_core():
        return False
    job = _Prefetch(np.array(V, copy=True), k, samples, seed)  # its own copy: the caller may write to V
    with _LOCK:
        _PREFETCHED.append(job)
        dropped = _PREFETCHED[:-KEEP]
        del _PREFETCHED[:-KEEP]
    for old in dropped:  # never read, but waited for: no job of a check outlives it
        old.job.wait()
    return True


def drain_prefetches() -> None:
    """Wait for every prefetch nobody took and drop them: no thread of a
    check outlives it (its warnings, its CPU)."""
    with _LOCK:
        jobs = list(_PREFETCHED)
        _PREFETCHED.clear()
    for job in jobs:
        job.job.wait()


def take_sample(V, k: int, *, samples: int, seed: int):
    """The prefetched (idx, ends, states, screened) of exactly this draw on
    exactly these vectors (equal float64 arrays), or None; taken once."""
    V = _float_rows(V)
    if V is None:
        return None
    key = (int(k), int(samples), int(seed))
    with _LOCK:
        job = next((j for j in _PREFETCHED if j.key == key and j.V.shape == V.shape and np.array_equal(j.V, V)),
                   None)
        if job is not None:
            _PREFETCHED.remove(job)
    return None if job is None else job.result()
