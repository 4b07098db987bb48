"""Independence over a box, for the k-subsets of a set of vectors or for a
stack of matrices: the two certificates of :mod:`.box_rank`, run in batches.

* :func:`subsets_over_box`: is EVERY k-subset of the m rows of ``mid +/-
  rad`` independent at EVERY point of the box (a Kruskal rank >= k that
  holds at the data's precision)?  TRUE when every subset is certified:
  at once when m <= d (all m rows certified independent over the box, so
  every subset is), else by exhausting the C(m, k) subsets; FALSE when an
  explicit point of the box makes some examined subset dependent
  (:func:`~verifier.arith.box_rank.singular_point`, exact); UNDECIDED
  otherwise, in particular whenever only a sample of the subsets could be
  examined and none is dependent anywhere in its box.
* :func:`stack_over_box`: the same for each matrix of a stack (every
  context of rank n at every point).

A float only chooses: the right inverses and the witnesses' coefficients
are floats, the bounds and the witness conditions rigorous.

>>> import numpy as np
>>> V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])
>>> r = subsets_over_box(V, np.abs(V) * 2.0**-24, 3, exact=lambda i: V[i], gaps=None)
>>> r.decision.value, r.how
('true', 'exhaustion')
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from verifier.arith.box_rank import METHOD, SingularPoint, box_full_row_rank, singular_point
from verifier.arith.compare import Decision
from verifier.arith.independence import combination_blocks

__all__ = ["BoxIndependence", "subsets_over_box", "stack_over_box", "WITNESS_LIMIT"]

#: at most this many uncertified matrices are searched for a singular point
WITNESS_LIMIT = 16
_CHUNK = 2_000_000  # entries per batch of subsets


@dataclass(frozen=True)
class BoxIndependence:
    """What is certified over the box: ``decision`` TRUE (every examined
    matrix of the ``population`` certified, and the population is all of
    them), FALSE (``witness`` at ``witness_index``), UNDECIDED.
    ``worst_bound``: the largest certified residual bound (< 1; 1 minus it is
    the margin), ``uncertified``: matrices neither certified nor refuted."""

    decision: Decision
    how: str
    screened: int
    population: int | None
    certified: int
    worst_bound: float
    uncertified: int
    witness_index: tuple | None = None
    witness: SingularPoint | None = None

    def to_dict(self) -> dict:
        out = {"kind": "every point of the data's intervals: " + {
            "true": "independent (certified)", "false": "dependent at an explicit point (certified)",
            "undecided": "undecided"}[self.decision.value], "method": METHOD, "how": self.how,
            "examined": self.screened, "of": self.population if self.population is not None else "a sample",
            "certified": self.certified, "uncertified": self.uncertified,
            "largest residual bound ||I - R A X||_inf (< 1 certifies)": self.worst_bound}
        if self.witness is not None:
            out.update({"witness": list(self.witness_index), **self.witness.to_dict()})
        return out


def _subsets(m: int, k: int, exhaustive_limit: int, samples: int, seed: int):
    """(blocks of k-subsets, exhaustive?)."""
    if math.comb(m, k) <= exhaustive_limit:
        return combination_blocks(m, k, max(1, _CHUNK // max(1, k))), True
    rng = np.random.default_rng([int(seed), 0xB0C5])

    def draw():
        left = samples
        per = max(1, min(samples, 2_000_000 // max(m, 1)))
        while left > 0:
            n = min(left, per)
            yield np.sort(rng.random((n, m)).argpartition(k - 1, axis=1)[:, :k], axis=1)
            left -= n
    return draw(), False


def _search_witness(candidates, exact: Callable, gaps: Callable | None, mids: Callable):
    """The first candidate index with a singular point of its box."""
    if gaps is None:
        return None, None
    for idx in candidates[:WITNESS_LIMIT]:
        g = gaps(idx)
        if g is None:
            continue
        w = singular_point(exact(idx), *g, mid=mids(idx))
        if w is not None:
            return idx, w
    return None, None


def subsets_over_box(mid: np.ndarray, rad: np.ndarray | None, k: int, *, exact: Callable,
                     gaps: Callable | None, exhaustive_limit: int = 20000, samples: int = 5000,
                     seed: int = 0, backend=None) -> BoxIndependence:
    """Every k-subset of the rows of ``mid +/- rad`` (m x d) independent at
    every point?  ``exact(idx)``: the stored values of rows ``idx`` (float64
    or fmpq), ``gaps(idx)``: ``(up, down)``, the exact half-gaps of those
    rows (:func:`~verifier.arith.box_rank.gap_sides`; None: no witness
    search)."""
    mid = np.asarray(mid, dtype=np.float64)
    m, d = mid.shape
    if not 1 <= k <= min(m, d):
        raise ValueError(f"k = {k} outside 1..min(m, d) = {min(m, d)}")
    if m <= d:  # all m rows independent over the box: every subset is
        bound = box_full_row_rank(mid, rad, backend=backend)[0]
        if bound < 1:
            return BoxIndependence(Decision.TRUE, "all rows", math.comb(m, k), math.comb(m, k),
                                   math.comb(m, k), float(bound), 0)
    blocks, exhaustive = _subsets(m, k, exhaustive_limit, samples, seed)
    screened = certified = 0
    worst, open_ = 0.0, []
    for idx in blocks:
        bounds = box_full_row_rank(mid[idx], None if rad is None else rad[idx], backend=backend)
        ok = bounds < 1
        screened += len(idx)
        certified += int(ok.sum())
        if ok.any():
            worst = max(worst, float(bounds[ok].max()))
        bad = np.flatnonzero(~ok)
        open_.extend((float(bounds[i]), tuple(int(x) for x in idx[i])) for i in bad[:4 * WITNESS_LIMIT])
    population = math.comb(m, k) if exhaustive else None
    if not open_:
        return BoxIndependence(Decision.TRUE if exhaustive else Decision.UNDECIDED,
                               "exhaustion" if exhaustive else "sample", screened, population, certified, worst, 0)
    cands = [list(i) for _, i in sorted(open_, key=lambda x: -x[0])]  # no bound (inf) first: likeliest singular
    index, w = _search_witness(cands, exact, gaps, lambda i: mid[i])
    unc = screened - certified
    how = "exhaustion" if exhaustive else "sample"
    if w is not None:
        return BoxIndependence(Decision.FALSE, how, screened, population, certified, worst, unc, tuple(index), w)
    return BoxIndependence(Decision.UNDECIDED, how, screened, population, certified, worst, unc)


def stack_over_box(mids: np.ndarray, rads: np.ndarray | None, *, exact: Callable, gaps: Callable | None,
                   labels=None, backend=None) -> BoxIndependence:
    """Every matrix of the (B, k, m) stack of full row rank at every point of
    its box?  ``exact(b)``, ``gaps(b)``: the stored values and half-gaps of
    matrix b; ``labels``: the names reported for the matrices (default
    their index)."""
    mids = np.asarray(mids, dtype=np.float64)
    B = mids.shape[0]
    labels = list(range(B)) if labels is None else list(labels)
    bounds = box_full_row_rank(mids, rads, backend=backend)
    ok = bounds < 1
    worst = float(bounds[ok].max()) if ok.any() else 0.0
    bad = [int(i) for i in np.argsort(-np.where(np.isfinite(bounds), bounds, 1e300)) if not ok[i]]
    if not bad:
        return BoxIndependence(Decision.TRUE, "every matrix", B, B, B, worst, 0)
    index, w = _search_witness([[i] for i in bad], lambda i: exact(i[0]), None if gaps is None else
                               (lambda i: gaps(i[0])), lambda i: mids[i[0]])
    if w is not None:
        return BoxIndependence(Decision.FALSE, "every matrix", B, B, int(ok.sum()), worst, len(bad),
                               (labels[index[0]],), w)
    return BoxIndependence(Decision.UNDECIDED, "every matrix", B, B, int(ok.sum()), worst, len(bad))
