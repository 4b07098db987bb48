"""Structural caps on rank(Z) that hold for EVERY choice of weights.

They are the other side of the rank certificates: a nonsingular minor proves
``rank(Z) >= k`` (:mod:`verifier.arith.rank`), a cap proves ``rank(Z) <= k``
for any key/query weights, from the data alone:

* dimensions: Z is T x Hd;
* repeated examples: identical (E^(t), e^(t)) give identical rows of Z
  (Eqs. 1-3 are functions of the example), so rank(Z) <= #distinct examples;
* one shared context (Prop. 2): Z = S (I_H kron E), each S_h row-stochastic,
  so the H-1 null vectors of :func:`~verifier.arith.structure.stochastic_block_null_vectors`
  give rank(Z) <= H(n-1)+1;
* every token summing to one c (Prop. 5): each z_h sums to c, rank(Z) <=
  H(d-1)+1 (H(d-1) when c = 0).

Each cap rests on exact comparisons of the float64 data (rationals) and on
"softmax sums to 1" proved for every n (sympy,
:func:`~verifier.arith.structure.prove_softmax_sums_to_one`); the null
vectors' independence is checked exactly at the instance's H, n, d.  A
certified lower bound above a cap is a contradiction between certificates
(:class:`~verifier.errors.CertificateConflict`), never a verdict.

>>> import numpy as np
>>> E = np.broadcast_to(np.arange(6.0).reshape(2, 3), (9, 2, 3))
>>> structural_rank_cap(E, np.arange(27.0).reshape(9, 3), H=3).cap   # H(n-1)+1 = 4
4
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flint import fmpq

from verifier.arith.exact import to_fmpq_mat
from verifier.arith.structure import (
    block_sum_null_vectors,
    null_vectors_independent,
    prove_softmax_sums_to_one,
    stochastic_block_null_vectors,
)
from verifier.errors import CertificateConflict

__all__ = ["RankCap", "structural_rank_cap", "check_against_cap"]

DIMENSIONS = "Z is T x Hd"


@dataclass(frozen=True)
class RankCap:
    """rank(Z) <= ``cap`` for every weights; ``why`` names the structure."""

    cap: int
    why: str
    caps: dict = field(default_factory=dict)  # every structure found -> its cap

    def to_dict(self) -> dict:
        return {"kind": "structural cap rank(Z) <= cap for ANY weights", "cap": self.cap, "why": self.why,
                "caps": dict(self.caps)}


def _distinct_examples(E: np.ndarray, e: np.ndarray) -> int:
    """Number of distinct examples (E^(t), e^(t)); float equality is rational
    equality (-0.0 is read as 0.0).  A shared (stride-0) context is looked at
    once; otherwise examples are grouped by their query's bytes (two examples
    with different queries differ: their contexts are never read), and only
    within a group of equal queries by a sha256 of the context's bytes and
    compared exactly (never T x n x d copies or row sorts)."""
    import hashlib

    T = E.shape[0]
    e = np.asarray(e, dtype=np.float64).reshape(T, -1) + 0.0
    if T == 1 or E.strides[0] == 0:  # one context for all: examples differ by their queries only
        return int(np.unique(e, axis=0).shape[0])
    by_query: dict[bytes, list[int]] = {}
    for t in range(T):
        by_query.setdefault(e[t].tobytes(), []).append(t)
    distinct = 0
    for ts in by_query.values():
        if len(ts) == 1:  # the only example with this query
            distinct += 1
            continue
        groups: dict[bytes, list[int]] = {}
        for t in ts:  # one query: the examples differ by their contexts only
            x = np.ascontiguousarray(E[t], dtype=np.float64) + 0.0
            same = groups.setdefault(hashlib.sha256(x.tobytes()).digest(), [])
            if not any(np.array_equal(x, E[u]) for u in same):  # -0.0 == 0.0 here
                distinct += 1
                same.append(t)
    return distinct


def _token_sum_constant(E: np.ndarray):
    """(True, c) when every token sums exactly to one c (float screen, then fmpq)."""
    T, n, d = E.shape
    if T > 1 and E.strides[0] == 0:  # a shared context: its n tokens are all the tokens
        E, T = E[:1], 1
    tokens = np.asarray(E, dtype=np.float64).reshape(T * n, d)
    s = tokens.sum(axis=1)
    if not np.allclose(s, s[0], rtol=1e-9, atol=0.0):
        return False, None
    Q = to_fmpq_mat(tokens)
    sums = [sum((Q[i, j] for j in range(d)), fmpq(0)) for i in range(T * n)]
    return all(x == sums[0] for x in sums), sums[0]


def structural_rank_cap(contexts, queries, H: int) -> RankCap:
    """The smallest structural cap the data allow (see the module docstring)."""
    E = np.asarray(contexts, dtype=np.float64)
    e = np.asarray(queries, dtype=np.float64)
    T, n, d = E.shape
    caps = {DIMENSIONS: min(T, H * d)}
    distinct = _distinct_examples(E, e)
    if distinct < T:
        caps[f"{T - distinct} repeated examples (identical context and query)"] = distinct
    softmax_sums = None
    if T > 1 and (E.strides[0] == 0 or np.array_equal(E, np.broadcast_to(E[:1], E.shape))):  # stride 0: shared
        softmax_sums = prove_softmax_sums_to_one()
        if softmax_sums.holds and null_vectors_independent(stochastic_block_null_vectors(H, n)):
            caps["shared context (Prop. 2: H-1 null vectors of S)"] = H * (n - 1) + 1
    constant, c = _token_sum_constant(E)
    if constant:
        softmax_sums = softmax_sums or prove_softmax_sums_to_one()
        V = block_sum_null_vectors(H, d, zero_sum=c == 0)
        if softmax_sums.holds and null_vectors_independent(V):
            caps[f"every token sums to c = {c} (Prop. 5: {len(V)} null vectors of Z)"] = H * d - len(V)
    why = min(caps, key=lambda k: (caps[k], k == DIMENSIONS))  # a tie: name the structure
    return RankCap(caps[why], why, caps)


def check_against_cap(certified_k: int, cap: RankCap, what: str = "rank(Z)") -> None:
    """Raise CertificateConflict when a certified lower bound exceeds a cap."""
    if certified_k > cap.cap:
        raise CertificateConflict(f"{what} >= {certified_k} certified by a minor, but <= {cap.cap} for any "
                                  f"weights ({cap.why}): one certificate is wrong")
