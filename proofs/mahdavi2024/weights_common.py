"""What the three statements about GIVEN weights share (``weights_rank``,
``weights_memorize``, ``weights_classify``): the weights they read, Z
enclosed over every value the data and the weights stand for, and the
certified rank of Z with the examples that carry it.

The weights are the user's (``--weights FILE``, ``--hf-model DIR``:
:class:`~verifier.data.weights.GivenWeights`) or, without them, the
verifier's own: Theorem 1's construction on the instance (Prop. 1's W_K,
W_Q; Step 2's readout fitted to the labels in float64), as exact floats;
where that construction cannot run (e.g. more examples than its capacity),
Gaussian weights drawn from the seed (N(0, 1/d), also exact floats).

>>> from verifier.data.instances import make_instance
>>> w, how = layer_weights(make_instance(H=2, n=3, d=5, seed=0), None, seed=0, readout=True)
>>> how.split(":")[0], w.H, w.exact
('construction', 2, True)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from verifier.arith.compare import Decision, workprec
from verifier.arith.float_certificates import float_ball_of
from verifier.arith.rank import FLOAT_FROM, RankLowerBound, certify_rank_lower_bound_lazy
from verifier.arith.rank_normwise import NormwiseRank
from verifier.data.instances import rng_for
from verifier.data.weights import check_against_data, weights_from_arrays
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model import mha as model
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.mha_float import feature_columns_float_ball

__all__ = ["layer_weights", "no_weights", "feature_midpoint", "feature_enclosure", "certify_feature_rank", "RTOLS"]

#: stricter thresholds (|R_ii| of a pivoted QR of Z's midpoint) whose numerical ranks are tried when
#: rank(Z) >= min(T, cap) cannot be certified
RTOLS = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)


def _constructed(instance, seed: int):
    """Theorem 1's weights on ``instance`` (exact floats), or None when its construction fails."""
    from .proposition1_construction import build_key_query_weights
    from .step2_linear_readout import build_readout, solve_readout_float

    try:
        con = build_key_query_weights(instance, seed=seed)
        M = solve_readout_float(con.Z, np.asarray(instance.labels))
        W_V, W_O, W_D = build_readout(M, instance.H, instance.d, instance.d_v, instance.d_out)
    except (ConstructionFailed, np.linalg.LinAlgError):
        return None
    return {"W_Q": con.W_Q, "W_K": con.W_K, "W_V": W_V, "W_O": W_O, "W_D": W_D}


def _random(instance, seed: int) -> dict:
    rng = rng_for(seed, "given-weights")
    H, d, d_h, d_v, d_out = instance.H, instance.d, instance.d_h, instance.d_v, instance.d_out
    s = 1.0 / np.sqrt(d)
    return {"W_Q": rng.standard_normal((H, d, d_h)) * s, "W_K": rng.standard_normal((H, d, d_h)) * s,
            "W_V": rng.standard_normal((H, d, d_v)) * s, "W_O": rng.standard_normal((H * d_v, d)) * s,
            "W_D": rng.standard_normal((d, d_out)) * s}


def layer_weights(instance, weights, *, seed: int, readout: bool):
    """(GivenWeights, where they come from): ``weights`` checked against the
    data, or the verifier's own (see the module docstring); ConstructionFailed
    when ``readout`` and there are none."""
    if weights is not None:
        check_against_data(weights, instance, readout=readout)
        return weights, weights.source
    arrays = _constructed(instance, seed)
    how = "construction: Theorem 1's weights on this instance (Prop. 1 + Step 2), exact floats"
    if arrays is None and readout:  # no weights to hold against the labels: the caller says hypotheses-unmet
        raise ConstructionFailed("Theorem 1", "no --weights given and Theorem 1's construction does not apply here")
    if arrays is None:
        arrays = _random(instance, seed)
        how = "random: N(0, 1/d) weights drawn from the seed (Theorem 1's construction does not apply), exact floats"
    return weights_from_arrays(arrays, exact_input=True, source=how.split(":")[0]), how


def no_weights(statement_id: str, claimed: str, exc: Exception):
    """hypotheses-unmet: no --weights, and the verifier's own cannot be built."""
    from verifier.statements.evidence import Hypothesis, conclude

    h = Hypothesis("weights to check (--weights, or Theorem 1's construction)", "refuted", str(exc))
    return conclude(statement_id, Decision.UNDECIDED, claimed=claimed, measured={"weights": "none"},
                    hypotheses=[h], reason=str(exc))


def feature_midpoint(instance, w) -> np.ndarray:
    """Z (T x H d) in float64 from the midpoints: it only CHOOSES the minor."""
    return model.feature_matrix(*(x.mid if hasattr(x, "mid") else x for x in w.key_query(instance)))


def feature_enclosure(instance, w, *, rows=None, cols=None, backend=None):
    """A FloatBall enclosing Z[rows, cols] for every value the data and the
    weights stand for (:func:`~verifier.model.mha_float.feature_columns_float_ball`)."""
    E, e, WK, WQ = w.key_query(instance)
    return feature_columns_float_ball(E, e, WK, WQ, rows=rows, cols=cols, backend=backend)


def row_order(Zmid: np.ndarray, G=None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, |R_ii|): the rows of Z's midpoint in the order of a pivoted QR
    of Z^T (the best-conditioned first), from a pivoted Cholesky factor of
    the Gram matrix Z Z^T (LAPACK dpstrf: the same pivots in exact arithmetic,
    T^2 Hd + T^3/3 flops, where geqp3 on the T x Hd matrix costs more than
    its SVD; ``G``: that Gram when the caller has it).  A float CHOICE: only a
    certificate is evidence."""
    from scipy.linalg.lapack import dpstrf

    G = Zmid @ Zmid.T if G is None else np.array(G)
    c, piv, rank, _ = dpstrf(G, lower=1)
    diag = np.abs(np.diag(c)).copy()
    diag[max(0, int(rank)):] = 0.0  # beyond the numerical rank the factor is not formed
    return np.asarray(piv, dtype=np.int64) - 1, diag


def _numerical_sizes(R_diag: np.ndarray, k: int) -> tuple[list[int], int]:
    """(sizes below k, numerical rank): from |R_ii| of :func:`row_order` (|R_ii| against numpy's tolerance and stricter thresholds),
    then halvings.  Floats CHOOSE the sizes tried; only a certificate is evidence."""
    d = np.abs(R_diag)
    if not d.size or d[0] == 0:
        return [], 0
    numerical = int(np.count_nonzero(d > max(k, d.size) * np.finfo(np.float64).eps * d[0]))
    out = [k]
    for m in [numerical] + [int(np.count_nonzero(d > rtol * d[0])) for rtol in RTOLS]:
        if 0 < m < out[-1]:
            out.append(m)
    while out[-1] > 1:
        out.append(out[-1] // 2)
    return out[1:], numerical


def normwise_rank(nw: NormwiseRank, rows):
    """Weyl's certificate on ``rows`` (a module-level name: the benchmark times it)."""
    return nw.certify(rows)


def certify_feature_rank(instance, w, first: int, *, prec: int = 128, backend=None, refine: int = 3):
    """rank(Z) >= k certified for every value the data and weights stand
    for: k = ``first`` first (rows: every example when ``first`` = T), then
    the smaller sizes of :func:`_numerical_sizes` until one is certified, then
    up to ``refine`` bisection steps back towards the smallest size that
    failed.  The certificate: a k x k minor (||I - R A_minor||_inf < 1:
    tight for exact inputs, and a file :mod:`.weights_certificates` exports),
    or Weyl's normwise bound on the rows over all columns
    (:func:`~verifier.arith.rank_normwise.normwise_rank`: for k > 64 on data
    or weights known to a precision, the only one tried: the minor's
    entrywise test is weaker there).  Returns (RankLowerBound, the sizes
    tried, a float estimate of the numerical rank, or None when never
    computed)."""
    E, e, WK, WQ = w.key_query(instance)
    T = instance.T
    boxed = instance.at_precision or not w.exact
    full = {}
    if boxed and first > FLOAT_FROM:  # one enclosure of all of Z; its midpoint chooses the rows
        full["ball"] = feature_columns_float_ball(E, e, WK, WQ, backend=backend)
        full["normwise"] = NormwiseRank(full["ball"], backend=backend)  # one Gram for the choice and the tests
        Zmid = np.asarray(float_ball_of(full["ball"], "numpy").mid)
    else:
        Zmid = feature_midpoint(instance, w)

    def minor_ball(rows, cols):
        return feature_matrix_ball(E, e, WK, WQ, rows=[int(i) for i in rows], cols=[int(j) for j in cols])

    def minor_float(rows, cols):
        return feature_columns_float_ball(E, e, WK, WQ, rows=rows, cols=cols, backend=backend)

    def pivoted():
        if "order" not in full:
            G = full["normwise"].b.to_numpy(full["normwise"].gram()) if "normwise" in full else None
            full["order"], full["diag"] = row_order(Zmid, G)
        return full["order"]

    def attempt(k):
        if k > Zmid.shape[1] or k == 0:
            return None
        rows = np.arange(T) if k >= T else np.sort(pivoted()[:k])
        paths = ("normwise",) if boxed and k > FLOAT_FROM else ("minor", "normwise")
        got = None
        for path in paths:
            try:
                if path == "minor":
                    got = certify_rank_lower_bound_lazy(Zmid[rows], k, minor_ball, minor_float=minor_float,
                                                        prec=prec, max_prec=max(prec, 512), backend=backend)
                    got = replace(got, rows=tuple(int(rows[i]) for i in got.rows))
                else:
                    if "normwise" not in full:
                        full["normwise"] = NormwiseRank(feature_columns_float_ball(E, e, WK, WQ, backend=backend),
                                                        backend=backend)
                    got = normwise_rank(full["normwise"], rows)
            except InsufficientPrecision:
                continue
            if got.decision is Decision.TRUE:
                break
        return got

    tried, best, failed, numerical, sizes = [], None, None, None, [first]
    with workprec(prec):
        while sizes:
            k = sizes.pop(0)
            tried.append(k)
            got = attempt(k)
            if got is not None and got.decision is Decision.TRUE:
                best = got
                if failed is None or refine <= 0:
                    break
                refine -= 1  # bisect towards the smallest size that failed
                sizes = [(k + failed) // 2] if (k + failed) // 2 > k else []
                continue
            failed = k if failed is None or k < failed else failed
            best = best or got
            if best is not None and best.decision is Decision.TRUE:
                refine -= 1
                sizes = [(best.k + failed) // 2] if refine >= 0 and (best.k + failed) // 2 > best.k else []
            elif numerical is None:  # the row order's QR, only when the first size failed
                pivoted()
                sizes, numerical = _numerical_sizes(full["diag"], k)
    if best is None:
        best = RankLowerBound(first, (), (), Decision.UNDECIDED, prec, "no certificate could be formed",
                              float("inf"), 0.0, first)
    return best, tried, numerical
