"""The paper's own route to Thm. 1 (p. 4 Sec. 4.1, p. 13 App. A.2), step by
step, with a certificate for each doubtful step (DANA2025.md D4-D6):

(i)   the skip becomes a "head 0" with W_QK^0 = lambda I, which tends to
      x(t,S) only if x_S^T x_S > x_S^T x_s for every s != S (D5,
      :func:`head0_limit`; V2 lacks the AISTATS condition "pos_S dominates");
(iii) "after multiplying by W_V with full rank, the rank stays T0" (D4,
      :func:`value_rank_counterexample`): false when T0 > d and d_h < d;
(iv)  det G != 0 is not guaranteed (D6, :func:`singular_G`): at
      T0 = H d_h + d the solution Z = E M^{-1} is unique, so rank E < d forces
      det G = 0.

Each function returns a dict with a three-valued ``decision`` about the STEP
(TRUE: holds on the instance, FALSE: certified counterexample), never about
the theorem.
"""
from __future__ import annotations

import functools

import numpy as np
from flint import arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, workprec
from verifier.arith.exact import exact_matvec_is_zero, exact_nullspace, exact_rank, to_fmpq_mat
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.structure import SymbolicIdentity
from verifier.data.instances import rng_for
from verifier.model.aot_balls import attention_outputs_ball, embed_ball

from .exact_route import RouteParameters

__all__ = ["head0_limit", "value_rank_counterexample", "singular_G", "prove_head0_limit"]


@functools.lru_cache(maxsize=None)
def prove_head0_limit() -> SymbolicIdentity:
    """sympy: with x_S = (1,0), x_1 = (2,0) and W_QK^0 = lambda I the softmax
    weight of x_S is e^lambda / (e^lambda + e^{2 lambda}) -> 0 (lambda -> oo):
    head 0 tends to x_1, not to x_S (neg_skiphead)."""
    import time

    import sympy as sp

    t0 = time.perf_counter()
    lam = sp.Symbol("lambda", positive=True)
    xS, x1 = sp.Matrix([1, 0]), sp.Matrix([2, 0])
    sS, s1 = (xS.T * xS)[0] * lam, (xS.T * x1)[0] * lam
    aS = sp.exp(sS) / (sp.exp(sS) + sp.exp(s1))
    limit_aS = sp.limit(aS, lam, sp.oo)
    head = aS * xS + (1 - aS) * x1
    limit_head = head.applyfunc(lambda z: sp.limit(z, lam, sp.oo))
    res = (str(limit_aS), str(list(limit_head - x1)))
    return SymbolicIdentity("x_S=(1,0), x_1=(2,0), W=lambda I: weight of x_S -> 0, head 0 -> x_1 != x_S",
                            {"d": 2, "S": 2}, res, limit_aS == 0 and limit_head == x1, 2,
                            time.perf_counter() - t0, "sympy limit")


def head0_limit(sequences, e: np.ndarray, pos: np.ndarray) -> dict:
    """Step (i) on the instance's (rational) token vectors: the gap
    g(t) = ||x_S||^2 - max_{s != S} x_S^T x_s, exactly; head 0 -> x(t,S)
    needs g(t) > 0 for every t, and then ||A^0_lambda - x_S|| <= sum_{s != S}
    e^{-lambda g} ||x_s - x_S|| (reconstructed)."""
    from fractions import Fraction

    gaps = []
    for seq in np.asarray(sequences).tolist():
        X = [[Fraction(float(e[q, j])) + Fraction(float(pos[s, j])) for j in range(e.shape[1])]
             for s, q in enumerate(seq)]
        xs = X[-1]
        dots = [sum(a * b for a, b in zip(xs, x)) for x in X]
        gaps.append(dots[-1] - max(dots[:-1]) if len(dots) > 1 else None)
    bad = [i for i, g in enumerate(gaps) if g is not None and g <= 0]
    finite = [g for g in gaps if g is not None]
    return {"decision": Decision.FALSE if bad else Decision.TRUE,
            "sequences with g(t) <= 0 (head 0 does not tend to x(t,S))": len(bad),
            "first such": [np.asarray(sequences)[i].tolist() for i in bad[:3]],
            "smallest gap g (exact)": str(min(finite)) if finite else None,
            "why": "x_S^T x_S <= x_S^T x_s for some s != S: the scores of W_QK^0 = lambda I put the weight on "
                   "x_s, so head 0 does not tend to x(t,S) (AISTATS adds 'pos_S dominates'; V2 does not)"}


def value_rank_counterexample(sequences, rp: RouteParameters, *, d_h: int, seed: int = 0, prec: int = 128) -> dict:
    """Step (iii): rank A' = T0 certified for A' = [x_S; A^1; ...; A^H] (d + Hd rows),
    yet full-rank W_V^h with M c = 0.  c: an exact null vector of the skip
    block X_S (T0 > d); v_h = A^h c; W_V^h = R_h (I - v_h v_h^T / v_h^T v_h),
    so W_V^h v_h = 0 identically and M c = [X_S c; W_V^h v_h] = 0."""
    seqs = np.asarray(sequences)
    T0 = seqs.shape[0]
    H, _, d = rp.P.shape
    if T0 <= d or d_h >= d:
        return {"decision": Decision.TRUE, "why": "T0 <= d or d_h = d: W_V^h can be chosen injective on the "
                "outputs (d_h = d: invertible), no counterexample of this form"}
    XS = np.array([rp.e[s[-1]] + rp.pos[-1] for s in seqs.tolist()]).T  # d x T0, exact dyadics
    c = exact_nullspace(XS)[0]
    if not exact_matvec_is_zero(to_fmpq_mat(XS), c):  # pragma: no cover - engine guard
        raise RuntimeError("exact null vector failed its re-check")
    cb = arb_mat([[x] for x in c])
    with workprec(prec):
        e, pos = to_arb_mat(rp.e), to_arb_mat(rp.pos)
        K = [to_arb_mat(rp.P[h]).transpose() * to_arb_mat(rp.Q[h]) for h in range(H)]
        heads = [[] for _ in range(H)]
        rows_skip = []
        for seq in seqs.tolist():
            X = embed_ball(seq, e, pos)
            rows_skip.append([X[X.nrows() - 1, j] for j in range(d)])
            for h, A in enumerate(attention_outputs_ball(X, K)):
                heads[h].append(A.entries())
        Aprime = arb_mat([[rows_skip[t][j] for t in range(T0)] for j in range(d)]
                         + [[heads[h][t][j] for t in range(T0)] for h in range(H) for j in range(d)])
        rank_A = certify_rank_lower_bound(Aprime, k=T0, prec=prec)
        rng = rng_for(seed, "dana.value_rank")
        WV_ranks = []
        for h in range(H):
            Ah = arb_mat([[heads[h][t][j] for t in range(T0)] for j in range(d)])
            v = Ah * cb
            vv = (v.transpose() * v)[0, 0]
            Pv = arb_mat(d, d)
            for i in range(d):
                Pv[i, i] = 1
            Pv = Pv - (v * v.transpose()) * (1 / vv)
            R = to_arb_mat(rng.integers(-8, 9, (d_h, d)) / 8)
            WV_ranks.append(certify_rank_lower_bound(R * Pv, k=d_h, prec=prec).decision)
    ok = rank_A.decision is Decision.TRUE and all(x is Decision.TRUE for x in WV_ranks)
    return {"decision": Decision.FALSE if ok else Decision.UNDECIDED,
            "rank A' (certified)": rank_A.certified_k, "T0": T0,
            "c (exact, X_S c = 0)": [str(x) for x in c],
            "W_V^h full rank d_h (certified)": [x.value for x in WV_ranks],
            "why": "W_V^h v_h = R_h (v_h - v_h (v_h^T v_h)/(v_h^T v_h)) = 0 identically, X_S c = 0 exactly: "
                   "M c = 0 with c != 0, so rank M < T0 = rank A'"}


def singular_G(E: np.ndarray, *, d: int, T0: int, rows: int) -> dict:
    """Step (iv): at T0 = d + H d_h (M square, invertible), Z = E M^{-1} is the only
    solution, so rank G <= rank Z = rank E; rank E < d forces det G = 0 (exact)."""
    rk = exact_rank(E)
    if T0 != rows or rk >= d:
        return {"decision": Decision.TRUE, "why": "the solution has free parameters or rank E = d"}
    return {"decision": Decision.FALSE, "rank E (exact)": rk, "d": d,
            "why": "M square and invertible: Z = E M^{-1}, rank G <= rank E < d, det G = 0"}
