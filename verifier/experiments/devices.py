"""The device the experiments train on: chosen once per process (``--device``), else CUDA
when torch sees one, else the CPU.

>>> training_device("cpu").type
'cpu'
"""
from __future__ import annotations

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
