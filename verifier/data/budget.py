"""Memory budgets, checked before anything is allocated.

A size typed on the command line (``--dh 100000000``, ``--H 1000000``) or
declared by a file (an ``.npz`` member's ``.npy`` header, a JSON file's
length) is turned into an estimate of the memory the run will take, and an
estimate above the budget is one line of bad input (exit 2) naming the size
and the budget, before any array exists.  The budget is
:data:`DEFAULT_MAX_MEMORY` or the machine's memory, whichever is smaller,
unless ``--max-memory`` sets it (:func:`memory_budget`).

The estimates are per entry of the arrays the sizes imply, with the bytes
per entry measured on this project's machine (peak resident memory of
``mha-verify check`` at growing sizes: a float entry read from a file and
its float64 copy, ~40 B; Theorem 1's weights, ~56 B per entry of W_K and
W_Q; its Z, ~55 B per entry; Dana et al.'s sequences, ~145 B per entry of
each sequence's S x S attention in balls), rounded up.  They decide only
whether a run may start, never a verdict.

An ``.npz`` is read header first (:func:`check_npz_members`): every member
must be an ``.npy`` (magic string and header, as numpy writes them; no
object arrays), and the arrays' declared sizes are checked against the
budget before a byte is decompressed -- a 1 MB archive whose arrays declare
12 GiB is refused in milliseconds.  A JSON file (:func:`load_json`) is
checked by its length first, and an integer beyond 64 bits in it is bad
input, not an overflow later.

>>> parse_size("1.5G"), parse_size("512M"), parse_size("2GiB"), parse_size("4096")
(1610612736, 536870912, 2147483648, 4096)
>>> with memory_budget(parse_size("1G")):
...     check_sizes("--dh 100000000", {"weights": 10**12})
Traceback (most recent call last):
verifier.errors.InvalidInstance: --dh 100000000: an estimated 931 GiB of memory (weights 931 GiB), above the memory budget of 1 GiB; raise it with --max-memory (e.g. --max-memory 1T)
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import math
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from verifier.errors import InvalidInstance

GiB = 1 << 30
#: the budget when --max-memory is not given (or the machine's memory, if smaller)
DEFAULT_MAX_MEMORY = 16 * GiB
#: bytes per entry of an array read from a file (the array as stored, its float64 copy, its reading)
READ_BYTES = 48
#: bytes of memory per byte of a JSON file (Python's lists of numbers, then arrays)
JSON_BYTES = 40
_BUDGET: contextvars.ContextVar[int | None] = contextvars.ContextVar("mha_verify_memory_budget", default=None)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_budget() -> int:
    """:data:`DEFAULT_MAX_MEMORY`, or this machine's memory if smaller."""
    mem = physical_memory()
    return min(DEFAULT_MAX_MEMORY, mem) if mem else DEFAULT_MAX_MEMORY


def current_budget() -> int:
    """The budget in force: :func:`memory_budget`'s, else :func:`default_budget`."""
    b = _BUDGET.get()
    return default_budget() if b is None else b


@contextlib.contextmanager
def memory_budget(nbytes: int | None):
    """Within the block, the budget is ``nbytes`` (None: the default)."""
    token = _BUDGET.set(nbytes)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def parse_size(text: str) -> int:
    """``"16G"``, ``"512M"``, ``"2GiB"``, ``"1.5T"`` or bytes, as bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), flags=re.I)
    if not m or float(m.group(1)) <= 0:
        raise InvalidInstance(f"--max-memory {text}: expected a size such as 16G, 512M or 2GiB")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def format_size(nbytes: float) -> str:
    for unit, size in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= size:
            v = nbytes / size
            return f"{v:.3g} {unit}iB" if v < 1000 else f"{v:,.0f} {unit}iB"
    return f"{int(nbytes)} B"


def check_sizes(what: str, terms: dict, budget: int | None = None) -> int:
    """The estimate ``sum(terms)`` (name -> bytes) against the budget: one line
    of :class:`InvalidInstance` naming ``what``, the largest term and the
    budget when it does not fit.  Returns the estimate."""
    budget = current_budget() if budget is None else budget
    total = sum(terms.values())
    if total > budget:
        name, big = max(terms.items(), key=lambda kv: kv[1])
        suggest = 1 << max(30, math.ceil(math.log2(total)))
        size = f"{suggest >> 40}T" if suggest >= 1 << 40 else f"{suggest >> 30}G"
        raise InvalidInstance(f"{what}: an estimated {format_size(total)} of memory ({name} {format_size(big)}), "
                              f"above the memory budget of {format_size(budget)}; raise it with --max-memory "
                              f"(e.g. --max-memory {size})")
    return total


# -- what an instance's sizes imply -------------------------------------------------------------------------------
def attention_terms(*, H, n, d, d_h=None, d_v=None, d_out=1, T=None, **_ignored) -> dict:
    """Theorem 1's family (the first paper's instances): the data, the weights
    W_K, W_Q, W_V, W_O, the features Z (T x H d) and the T x T minor."""
    d_h = n if d_h is None else d_h
    d_v = d_out if d_v is None else d_v
    T = H * (min(n, d_h) - 1) + 1 if T is None else T
    return {"contexts and queries (T n d)": READ_BYTES * (T * n * d + T * d + T * d_out),
            "weights (H d (2 d_h + d_v))": 64 * H * d * (2 * d_h + d_v) + 64 * H * d_v * d_out,
            "features Z (T x H d)": 64 * T * H * max(d, d_v), "the T x T minor": 64 * T * T,
            "interpreter and libraries": GiB // 2}


def sequence_terms(*, N, S, d, d_h=None, H=1, T0=None, **_ignored) -> dict:
    """Dana et al.'s instances: each sequence's S x S attention in balls, the
    T0 x N table, the N x N Gram matrices."""
    d_h = d if d_h is None else d_h
    T0 = H * d_h + d if T0 is None else T0
    return {"each sequence's S x S attention (T0 S^2)": 160 * T0 * S * S, "the T0 x N table": 64 * T0 * N,
            "the N x N Gram matrices": 64 * N * N, "interpreter and libraries": GiB // 8}



def token_terms(*, N, S, V, d, **_ignored) -> dict:
    """Kajitsuka and Sato's instances: the N sequences' embeddings (N S d) and the vocabulary's (V d)."""
    return {"the sequences' embeddings (N S d)": 128 * N * S * d, "the vocabulary (V d)": 32 * V * d,
            "interpreter and libraries": GiB // 8}


def instance_terms(sizes: dict) -> dict:
    """The estimate for an instance of the paper whose sizes these are."""
    sizes = {k: v for k, v in sizes.items() if v is not None}
    if "V" in sizes:
        return token_terms(**sizes)
    if "T0" in sizes or "S" in sizes:
        return sequence_terms(**sizes)
    return attention_terms(**sizes)


def sizes_of(instance) -> dict:
    """An instance's sizes (whatever its paper), for :func:`instance_terms`."""
    keys = ("H", "n", "d", "d_h", "d_v", "d_out", "T", "N", "S", "V", "T0")
    out = {}
    for k in keys:
        try:
            v = getattr(instance, k)
        except (AttributeError, TypeError, ValueError, IndexError):
            continue
        if isinstance(v, (int, np.integer)):
            out[k] = int(v)
    return out


def describe(sizes: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sizes.items() if v is not None)


# -- files ----------------------------------------------------------------------------------------------------------
def check_npz_members(path, budget_bytes: int | None = None) -> dict:
    """Every member of the ``.npz`` at ``path`` read as an ``.npy`` header
    only (nothing decompressed beyond it), its declared size summed and
    checked against the budget (``budget_bytes``, default
    :func:`current_budget`).  Returns {name: (shape, dtype)}.  A member that
    is not an ``.npy``, an object array or a size above the budget: one line
    of :class:`InvalidInstance`."""
    from numpy.lib import format as npy

    p = Path(path)
    budget = current_budget() if budget_bytes is None else budget_bytes
    out, total = {}, 0
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                name = info.filename
                if not name.endswith(".npy"):
                    raise InvalidInstance(f"{p.name}: member {name!r} is not an .npy array (an .npz holds only "
                                          "arrays saved by numpy.savez)")
                with zf.open(info) as fh:
                    try:
                        version = npy.read_magic(fh)
                        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
                        shape, _fortran, dtype = read(fh)  # 2.0 and 3.0: the same 4-byte header length
                        if any(s < 0 for s in shape):
                            raise ValueError(f"negative dimension in shape {shape}")
                    except Exception as exc:  # noqa: BLE001 - any malformed header: one line
                        raise InvalidInstance(f"{p.name}: member {name!r} is not a valid .npy array "
                                              f"({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
                                              ) from None
                if dtype.hasobject:
                    raise InvalidInstance(f"{p.name}: array {name[:-4]!r} is an object array; expected integers "
                                          "or floats")
                entries = math.prod(shape)
                total += entries * READ_BYTES + entries * dtype.itemsize
                out[name[:-4]] = (tuple(shape), dtype)
    except InvalidInstance:
        raise
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, EOFError) as exc:
        raise InvalidInstance(f"cannot read {p.name} as .npz: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:160] if str(exc) else ''}") from None
    shapes = ", ".join(f"{k} {'x'.join(map(str, s))} {t.name}" for k, (s, t) in out.items())
    check_sizes(f"{p.name} ({shapes})", {"its arrays, read": total}, budget)
    return out


def _int64(text: str) -> int:
    if len(text.lstrip("-")) > 20 or not -(1 << 63) <= (v := int(text)) < (1 << 64):
        raise InvalidInstance(f"an integer of {len(text.lstrip('-'))} digits, beyond 64 bits")
    return v


def load_json(path, budget_bytes: int | None = None):
    """The JSON at ``path`` after its length is checked against the budget;
    an integer beyond 64 bits, a malformed file: one line of
    :class:`InvalidInstance`."""
    p = Path(path)
    budget = current_budget() if budget_bytes is None else budget_bytes
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InvalidInstance(f"cannot read {p}: {exc.strerror or exc}") from None
    check_sizes(f"{p.name} ({format_size(size)} of JSON)", {"its numbers, read": JSON_BYTES * size}, budget)
    try:
        return json.loads(p.read_text(), parse_int=_int64)
    except InvalidInstance as exc:
        raise InvalidInstance(f"{p.name}: {exc}") from None
    except (ValueError, OSError, RecursionError) as exc:
        raise InvalidInstance(f"cannot read {p.name} as JSON: {type(exc).__name__}: {str(exc)[:160]}") from None
