"""Examples with identical inputs, found exactly and without T copies.

``first_equal(a)`` maps each example t (the leading axis of ``a``) to the
smallest s with ``a[s] == a[t]`` entry for entry, as VALUES (``-0.0 == 0.0``;
for exact rationals, ``fmpq``/int objects, their exact values):

* a shared array (one matrix broadcast over the examples, stride 0, how
  :mod:`verifier.data.instances` stores shared contexts) is one row: every
  example maps to 0, without reading the T copies it does not have;
* a float or integer array: an exact 64-bit hash per row (the bit patterns,
  signed zeros made equal, times fixed odd multipliers, summed with
  wraparound: integer arithmetic, the same on every machine) of 64 sampled
  columns, ``np.unique`` over the T hashes, then every row of a group compared
  with the group's first row exactly; rows that differ outside the sample are
  hashed whole and compared again (a collision is split, never merged), so
  distinct rows are rarely read whole and equal rows once;
* an object array (exact rationals): rows keyed by the exact values' strings.

>>> import numpy as np
>>> first_equal(np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0], [-0.0, 1.0]])).tolist()
[0, 1, 0, 1]
>>> first_equal(np.broadcast_to(np.eye(2), (4, 2, 2))).tolist()
[0, 0, 0, 0]
>>> first_equal_all(np.array([1.0, 1.0, 1.0]), np.array([5.0, 6.0, 5.0])).tolist()
[0, 1, 0]
"""
from __future__ import annotations

import numpy as np

__all__ = ["first_equal", "first_equal_all", "groups_of"]

_CHUNK_BYTES = 1 << 26  # rows hashed and compared in blocks of about 64 MiB
_NEG_ZERO = np.uint64(1 << 63)
_SAMPLE = 64  # columns hashed first: rows that differ there are never read whole


def _is_broadcast(a: np.ndarray) -> bool:
    return a.ndim >= 1 and a.shape[0] > 1 and a.strides[0] == 0


def _row_hashes(rows: np.ndarray, idx: np.ndarray, cols=None) -> np.ndarray:
    """(len(idx),) uint64: sum_j bits(x_j) w_j mod 2^64 over the rows ``idx``
    (columns ``cols``, default all) with fixed odd w: equal rows give equal
    hashes (-0.0 counts as 0.0); integer arithmetic, the same on every machine."""
    m = rows.shape[1] if cols is None else len(cols)
    w = np.random.default_rng(0x6475).integers(1, 2**62, size=m, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    out = np.empty(len(idx), dtype=np.uint64)
    step = max(1, _CHUNK_BYTES // max(1, m * 8))
    for s in range(0, len(idx), step):
        blk = rows[idx[s:s + step]] if cols is None else rows[idx[s:s + step][:, None], cols]
        if blk.dtype.kind == "f":
            bits = np.asarray(blk, dtype=np.float64).view(np.uint64)
            bits[bits == _NEG_ZERO] = 0  # blk is a copy (fancy indexing)
        else:
            bits = np.asarray(blk).astype(np.int64, copy=False).view(np.uint64)
        with np.errstate(over="ignore"):
            out[s:s + step] = (bits * w).sum(axis=1, dtype=np.uint64)
    return out


def _equal_to(rows: np.ndarray, members: np.ndarray, rep: int) -> np.ndarray:
    """Which rows ``members`` equal row ``rep`` exactly (values), blockwise."""
    m = rows.shape[1]
    step = max(1, _CHUNK_BYTES // max(1, m * 8))
    return np.concatenate([np.all(rows[members[s:s + step]] == rows[rep], axis=1)
                           for s in range(0, len(members), step)])


def _split(rows: np.ndarray, idx: np.ndarray, cols=None) -> list[np.ndarray]:
    """The rows ``idx`` grouped by their hash (ascending indices per group)."""
    _, inverse = np.unique(_row_hashes(rows, idx, cols), return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return [g for g in np.split(idx[order], bounds) if g.size > 1]


def _settle(rows: np.ndarray, group: np.ndarray, first: np.ndarray, *, hashed: bool) -> None:
    """Rows of ``group`` (a candidate group, ascending) mapped to the first row
    they equal, by exact comparison; ``hashed``: the group shares a full-row
    hash, else only a sample of columns (then a remainder is re-hashed whole)."""
    while group.size > 1:
        eq = _equal_to(rows, group[1:], int(group[0]))
        first[group[1:][eq]] = group[0]
        group = group[1:][~eq]
        if not hashed and group.size > 1:  # rows that differ outside the sample: hash them whole
            for g in _split(rows, group):
                _settle(rows, g, first, hashed=True)
            return


def first_equal(a) -> np.ndarray:
    """(T,) int: for each t the smallest s with a[s] == a[t] exactly."""
    a = np.asarray(a) if not isinstance(a, np.ndarray) else a
    T = a.shape[0] if a.ndim else 1
    if T <= 1 or _is_broadcast(a):
        return np.zeros(T, dtype=np.intp)
    rows = a.reshape(T, -1)
    first = np.arange(T, dtype=np.intp)
    if rows.dtype == object:
        seen: dict = {}
        for t, row in enumerate(rows.tolist()):
            first[t] = seen.setdefault(tuple(str(x) for x in row), t)
        return first
    m = rows.shape[1]
    if m == 0:
        return np.zeros(T, dtype=np.intp)
    cols = np.unique(np.linspace(0, m - 1, min(m, _SAMPLE)).astype(np.intp))  # a cheap first split
    for g in _split(rows, np.arange(T), cols):
        _settle(rows, g, first, hashed=len(cols) == m)
    return first


def first_equal_all(*arrays) -> np.ndarray:
    """(T,) int: for each t the smallest s with every array equal at s and t."""
    keys = np.stack([first_equal(a) for a in arrays], axis=1)
    _, index, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return index[inverse.reshape(-1)].astype(np.intp)  # unique's index: the first occurrence


def groups_of(first: np.ndarray) -> dict[int, list[int]]:
    """{first index: all indices} in the order of first appearance."""
    groups: dict[int, list[int]] = {}
    for t, s in enumerate(first.tolist()):
        groups.setdefault(s, []).append(t)
    return groups
