"""Certified rank upper bounds: ``rank(A) <= k`` from ``n - k`` vectors that
are independent and satisfy ``A v = 0`` EXACTLY over Q (flint ``fmpq``).

Only for exact input (float64 arrays are exact dyadic rationals): every ball of
positive radius holds full-rank matrices, so a ball matrix is refused.

>>> import numpy as np
>>> A = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
>>> certify_rank_upper_bound_exact(A).k_upper
2
>>> certify_rank_upper_bound(A, [[1, 1, -1]]).decision.value
'true'
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from flint import arb_mat, fmpq

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero, exact_nullspace, exact_rank, to_fmpq_mat, to_fmpq_vector
from verifier.errors import InvalidInstance

__all__ = ["RankUpperBound", "certify_rank_upper_bound", "certify_rank_upper_bound_exact"]


@dataclass(frozen=True)
class RankUpperBound:
    """rank(A) <= k_upper, certified iff ``decision is Decision.TRUE`` by the
    exact null vectors.  FALSE means the offered certificate was rejected
    (``reason`` says why), not that the rank is larger."""

    k_upper: int
    null_vectors: tuple[tuple[fmpq, ...], ...]
    decision: Decision
    method: str
    reason: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "k_upper": self.k_upper,
            "null_vectors": [[str(x) for x in v] for v in self.null_vectors],
            "decision": self.decision.value,
            "method": self.method,
            "reason": self.reason,
            "seconds": self.seconds,
        }


def _exact_input(A):
    if isinstance(A, arb_mat):
        raise InvalidInstance("rank upper bounds need an exact matrix: every ball of positive "
                              "radius holds full-rank matrices")
    return to_fmpq_mat(A)


def certify_rank_upper_bound(A, null_vectors: Sequence[Sequence]) -> RankUpperBound:
    """Check exactly that ``null_vectors`` are independent and ``A v = 0``;
    then rank(A) <= min(m, n - #vectors).  Entries may be floats, ints,
    Fractions, fmpq, sympy Rationals or strings like "-3/4"."""
    t0 = time.perf_counter()
    Q = _exact_input(A)
    m, n = Q.nrows(), Q.ncols()
    vecs = [tuple(to_fmpq_vector(v)) for v in null_vectors]
    method = "exact over Q: A v = 0 and the vectors independent (flint fmpq)"
    for v in vecs:
        if len(v) != n:
            raise InvalidInstance(f"null vector of length {len(v)} for a matrix with {n} columns")

    def reject(reason: str) -> RankUpperBound:
        return RankUpperBound(min(m, n), tuple(vecs), Decision.FALSE, method, reason, time.perf_counter() - t0)

    for i, v in enumerate(vecs):
        if not exact_matvec_is_zero(Q, v):
            return reject(f"vector {i} is not in the null space: A v != 0")
    if vecs and exact_rank([list(v) for v in vecs]) != len(vecs):
        return reject("the vectors are linearly dependent")
    return RankUpperBound(min(m, n - len(vecs)), tuple(vecs), Decision.TRUE, method, "",
                          time.perf_counter() - t0)


def certify_rank_upper_bound_exact(A) -> RankUpperBound:
    """Compute an exact null-space basis and certify rank(A) <= n - nullity
    (= the exact rank).  For small or moderate matrices only."""
    Q = _exact_input(A)
    basis = exact_nullspace(Q)
    res = certify_rank_upper_bound(Q, basis)
    return RankUpperBound(res.k_upper, res.null_vectors, res.decision,
                          "exact null space over Q (flint fmpz_mat.nullspace), re-checked", res.reason,
                          res.seconds)
