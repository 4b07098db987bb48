"""The device the experiments train on: chosen once per process (``--device``), else CUDA
when torch sees one, else the CPU.

>>> training_device("cpu").type
'cpu'
"""
from __future__ import annotations

from contextlib import contextmanager

import torch

from verifier.errors import InvalidInstance
from verifier.model.mha_torch import default_device

_DEVICE: list = [None]  # the process-wide training device set by set_device (None: CUDA when present)


def set_device(name: str | None) -> None:
    """The device every job trains on when none is given: "cuda", "cpu", or None/"auto" (CUDA
    when torch sees one, else the CPU).  "cuda" without a visible GPU is refused."""
    if name in (None, "auto"):
        _DEVICE[0] = None
        return
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidInstance("--device cuda: torch sees no CUDA device here (use --device cpu or auto)")
    _DEVICE[0] = dev


def training_device(device=None) -> torch.device:
    """An explicit ``device``, else the one :func:`set_device` chose, else CUDA when present."""
    if device is not None:
        return torch.device(device)
    return _DEVICE[0] if _DEVICE[0] is not None else default_device()


#: torch's intra-op threads while a job trains on the CPU: a parallel reduction sums in chunks
#: that depend on the thread count, so the count is part of the computation, the same on every
#: machine (the CPU kernels are pinned in verifier/__init__.py); benchmarks may ask for others.
#: One thread: no split of a reduction at all (nothing depends on scheduling or on MKL's choice of
#: threads), and a job's small products gain little from a second thread on a shared 2-core
#: machine, where two jobs run side by side instead (the campaign's two processes)
CPU_TRAINING_THREADS = 1


@contextmanager
def training_threads(device, threads: int | None = None):
    """Within the block, a CPU device trains with ``threads`` (default
    :data:`CPU_TRAINING_THREADS`) intra-op threads; the count before is restored after.

    >>> before = torch.get_num_threads()
    >>> with training_threads(torch.device("cpu"), 1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    if torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads or CPU_TRAINING_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)
