"""Sizes before work: the memory a check on given weights needs, from the
weights' shapes and the data's sizes alone, against a stated budget
(the command line's ``--max-memory``, :mod:`verifier.data.budget`; or
``$MHA_VERIFY_MAX_MEMORY_GIB``), before any array is read
(:func:`npz_shapes` reads an .npz's member headers only).

>>> check_memory({"W_Q": (2, 5, 3), "W_K": (2, 5, 3)}, T=5, n=3)   # a few kB: within
>>> round(estimated_bytes({"W_Q": (12, 768, 64), "W_K": (12, 768, 64)}, T=757, n=197) / 2**30, 1)  # ViT-base
2.9
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from verifier.errors import InvalidInstance

__all__ = ["BUDGET_ENV", "memory_budget", "estimated_bytes", "check_memory", "npz_shapes"]

BUDGET_ENV = "MHA_VERIFY_MAX_MEMORY_GIB"


def memory_budget() -> int:
    """Bytes a check on given weights may use: ``$MHA_VERIFY_MAX_MEMORY_GIB``
    when set, else the budget in force (``--max-memory``, or the default of
    :func:`verifier.data.budget.default_budget`)."""
    from verifier.data.budget import current_budget

    raw = os.environ.get(BUDGET_ENV, "")
    if not raw:
        return current_budget()
    try:
        return int(float(raw) * 2**30)
    except ValueError:
        raise InvalidInstance(f"${BUDGET_ENV} = {raw!r} is not a number of GiB") from None


def estimated_bytes(shapes: dict, *, T: int = 0, n: int = 0) -> int:
    """Memory of a check: every weight as float64 midpoint and radius (16
    bytes an entry); for T examples the feature matrix Z (T x H d) four
    times (midpoint, radius, the float copy that chooses the minor, its QR),
    the per-head logits and scores (T x n, a few of each) and the contexts
    (T x n x d: float64 midpoints and radii, and the tokens as read)."""
    entries = sum(int(np.prod(s, dtype=np.int64)) for s in shapes.values())
    H, d = (shapes["W_Q"][0], shapes["W_Q"][1]) if "W_Q" in shapes and len(shapes["W_Q"]) == 3 else (0, 0)
    T, n = int(T), int(n)
    return 16 * entries + 32 * T * int(H) * int(d) + 64 * T * n * int(H) + 24 * T * n * int(d)


def check_memory(shapes: dict, *, T: int = 0, n: int = 0, what: str = "weights") -> None:
    need, budget = estimated_bytes(shapes, T=T, n=n), memory_budget()
    if need > budget:
        raise InvalidInstance(f"{what}: the check needs about {need / 2**30:.1f} GiB (shapes "
                              + ", ".join(f"{k} {tuple(v)}" for k, v in shapes.items())
                              + (f", T = {T}" if T else "") + f"), above the budget of {budget / 2**30:.1f} GiB "
                              "(--max-memory to raise it)")


def npz_shapes(p: Path) -> dict:
    """Array shapes from an .npz's member headers (no data read)."""
    import zipfile

    shapes = {}
    try:
        with zipfile.ZipFile(p) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with z.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape, _, _ = read(fh)
                shapes[info.filename[:-4]] = tuple(int(x) for x in shape)
    except Exception:  # noqa: BLE001 - the reader itself refuses a bad file in one line
        return {}
    return shapes
