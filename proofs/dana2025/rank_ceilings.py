"""Rank ceilings that hold for EVERY choice of embeddings, positions and
attention weights: what Lemma 2 and the exact route of Thm. 1 can reach at
most on a given set of sequences.

Structure (reconstructed; each step proved below or by counting):

* every token vector is the image of a FORMAL vector under one linear map:
  x(t, s) = e(t_s) + pos_s = phi(f(t, s)) with f(t, s) = u_{t_s} + p_s in
  R^{N+S} (unit vectors u_q, p_s) and phi(u_q) = e(q), phi(p_s) = pos_s; so a
  set of token vectors spans at most the rank of its formal vectors (exact
  integers), and at most d;
* a head's output is a convex combination of its sequence's tokens:
  A^h(t) = x(t, S) + sum_{s<S} a_s (x(t, s) - x(t, S))   (sum_s a_s = 1;
  :func:`prove_convex_shift`), so A^h(t) - x(t, S) lies in the span of the
  DIFFERENCES, of formal rank D <= N + S - 2, and with S = 1 every head
  outputs x(t, 1) (:func:`prove_single_token_softmax`);
* two heads differ by an element of that span (:func:`prove_head_difference`);
* hence, for the stacked outputs A(t) = [A^1(t); ...; A^H(t)] (Lemma 2):
  rank <= min(u, d) + H min(d, D) (u = number of distinct last tokens) and
  rank <= min(d, R) + (H - 1) min(d, D) (R = formal rank of the tokens: the
  analogue of Mahdavi et al.'s H(n-1)+1), and
  for the route's matrix M (columns [x(t,S); V^1 A^1(t); ...]) after the row
  operations block_h -= V^h block_0:  rank M <= min(u, d) + H min(d_h, d, D).

DANA2025.md states the looser ceilings H min(d, N+S-1) (Lemma 2) and
min(u, d) + H min(d_h, d, N+S-1) (the route); both are reported.

>>> import numpy as np
>>> difference_rank(np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 2], [3, 3]]), N=4)
2
"""
from __future__ import annotations

import functools
import time

import numpy as np

from verifier.arith.exact import exact_rank
from verifier.arith.structure import SymbolicIdentity

__all__ = ["formal_token_vectors", "difference_rank", "token_rank", "lemma2_caps", "route_ceilings",
           "prove_convex_shift", "prove_head_difference", "prove_single_token_softmax"]


def formal_token_vectors(sequences, N: int) -> np.ndarray:
    """f(t, s) = u_{t_s} + p_s in Z^{N+S}, shape (T0, S, N+S)."""
    seqs = np.asarray(sequences)
    T0, S = seqs.shape
    F = np.zeros((T0, S, N + S), dtype=np.int64)
    for s in range(S):
        F[np.arange(T0), s, seqs[:, s]] = 1
        F[:, s, N + s] = 1
    return F


def difference_rank(sequences, N: int) -> int:
    """D: exact rank of {f(t, s) - f(t, S) : t, s < S} (0 when S = 1)."""
    F = formal_token_vectors(sequences, N)
    if F.shape[1] == 1:
        return 0
    diffs = (F[:, :-1, :] - F[:, -1:, :]).reshape(-1, F.shape[2])
    return exact_rank(diffs.astype(np.float64))


def token_rank(sequences, N: int) -> int:
    """Exact rank of every formal token vector {f(t, s)}."""
    F = formal_token_vectors(sequences, N)
    return exact_rank(F.reshape(-1, F.shape[2]).astype(np.float64))


def lemma2_caps(sequences, *, N: int, d: int, H: int) -> dict:
    """Upper bounds of rank{A(t)} valid for every e, pos, W_QK (Lemma 2's matrix):
    min(u, d) + H min(d, D) (skip decomposition) and min(d, R) + (H - 1) min(d, D)
    (head differences A^h - A^1 lie in the span of the differences: :func:`prove_head_difference`),
    R the formal rank of the tokens; DANA2025.md's H min(d, N + S - 1) (min(d, N) for S = 1)."""
    seqs = np.asarray(sequences)
    S = seqs.shape[1]
    u = int(np.unique(seqs[:, -1]).size)
    D = difference_rank(seqs, N)
    R = token_rank(seqs, N)
    doc = min(d, N) if S == 1 else H * min(d, N + S - 1)
    skip = min(u, d) + H * min(d, D)
    heads = min(d, R) + max(H - 1, 0) * min(d, D)
    cap = min(H * d, seqs.shape[0], skip, heads, doc)
    return {"u": u, "D": D, "R": R, "doc_cap": doc, "skip_cap": skip, "head_difference_cap": heads, "cap": cap,
            "formula": "min(Hd, T0, min(u,d) + H min(d,D), min(d,R) + (H-1) min(d,D), H min(d, N+S-1)); "
                       "D, R: formal ranks of the differences x(t,s) - x(t,S) and of the tokens"}


def route_ceilings(sequences, *, N: int, d: int, d_h: int, H: int) -> dict:
    """Upper bounds of rank M for every x', K^h, V^h (the exact route's matrix)."""
    seqs = np.asarray(sequences)
    S = seqs.shape[1]
    u = int(np.unique(seqs[:, -1]).size)
    D = difference_rank(seqs, N)
    doc = min(u, d) + H * min(d_h, d, N + S - 1)
    sharp = min(u, d) + H * min(d_h, d, D)
    return {"u": u, "D": D, "doc_ceiling": doc, "ceiling": min(sharp, doc, d + H * d_h),
            "formula": "min(u, d) + H min(d_h, d, D) (row operations block_h -= V^h block_0)"}


@functools.lru_cache(maxsize=None)
def prove_convex_shift(S_max: int = 4) -> SymbolicIdentity:
    """sympy: sum_s a_s x_s = x_S + sum_{s<S} a_s (x_s - x_S) when sum_s a_s = 1
    (a_S eliminated), for S = 1..S_max, symbolic scalars (the identity is
    coordinate-wise)."""
    import sympy as sp

    t0 = time.perf_counter()
    residuals = []
    for S in range(1, S_max + 1):
        a = sp.symbols(f"a0:{S}")
        x = sp.symbols(f"x0:{S}")
        a_last = 1 - sum(a[:-1])
        lhs = sum(a[s] * x[s] for s in range(S - 1)) + a_last * x[S - 1]
        rhs = x[S - 1] + sum(a[s] * (x[s] - x[S - 1]) for s in range(S - 1))
        residuals.append(sp.expand(lhs - rhs))
    return SymbolicIdentity("sum_s a_s x_s = x_S + sum_{s<S} a_s (x_s - x_S) given sum_s a_s = 1",
                            {"S": list(range(1, S_max + 1))}, tuple(str(r) for r in residuals),
                            all(r == 0 for r in residuals), len(residuals), time.perf_counter() - t0)


@functools.lru_cache(maxsize=None)
def prove_head_difference(S_max: int = 4) -> SymbolicIdentity:
    """sympy: sum_s (a_s - b_s) x_s = sum_{s<S} (a_s - b_s)(x_s - x_S) when sum a = sum b = 1:
    two heads' outputs differ by an element of the span of the differences."""
    import sympy as sp

    t0 = time.perf_counter()
    residuals = []
    for S in range(1, S_max + 1):
        a, b, x = sp.symbols(f"a0:{S}"), sp.symbols(f"b0:{S}"), sp.symbols(f"x0:{S}")
        A = list(a[:-1]) + [1 - sum(a[:-1])]
        B = list(b[:-1]) + [1 - sum(b[:-1])]
        lhs = sum((A[s] - B[s]) * x[s] for s in range(S))
        rhs = sum((A[s] - B[s]) * (x[s] - x[S - 1]) for s in range(S - 1))
        residuals.append(sp.expand(lhs - rhs))
    return SymbolicIdentity("A^h(t) - A^1(t) = sum_{s<S} (a^h_s - a^1_s)(x(t,s) - x(t,S))",
                            {"S": list(range(1, S_max + 1))}, tuple(str(r) for r in residuals),
                            all(r == 0 for r in residuals), len(residuals), time.perf_counter() - t0)


@functools.lru_cache(maxsize=None)
def prove_single_token_softmax() -> SymbolicIdentity:
    """sympy: with S = 1, softmax over one score is exp(r)/exp(r) = 1, so every
    head outputs x(t, 1) whatever W_QK^h."""
    import sympy as sp

    t0 = time.perf_counter()
    r = sp.Symbol("r", real=True)
    res = sp.simplify(sp.exp(r) / sp.exp(r) - 1)
    return SymbolicIdentity("S = 1: softmax of one score = 1, A^h(t) = x(t,1) for every head", {"S": 1},
                            (str(res),), res == 0, 1, time.perf_counter() - t0)
