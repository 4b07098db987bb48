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

import numpy as np

from verifier.arith.compare import Decision, workprec
from verifier.arith.rank import certify_rank_lower_bound_lazy
from verifier.data.instances import rng_for
from verifier.data.weights import check_against_data, weights_from_arrays
from verifier.errors import ConstructionFailed
from verifier.model import mha as model
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.mha_float import feature_columns_float_ball

__all__ = ["layer_weights", "feature_midpoint", "feature_enclosure", "certify_feature_rank", "RTOLS"]

#: stricter SVD thresholds whose numerical ranks are tried when rank(Z) >= min(T, cap) cannot be certified
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
    data, or the verifier's own (see the module docstring)."""
    if weights is not None:
        check_against_data(weights, instance, readout=readout)
        return weights, weights.source
    arrays = _constructed(instance, seed)
    how = "construction: Theorem 1's weights on this instance (Prop. 1 + Step 2), exact floats"
    if arrays is None:
        arrays = _random(instance, seed)
        how = "random: N(0, 1/d) weights drawn from the seed (Theorem 1's construction does not apply), exact floats"
    return weights_from_arrays(arrays, exact_input=True, source=how.split(":")[0]), how


def feature_midpoint(instance, w) -> np.ndarray:
    """Z (T x H d) in float64 from the midpoints: it only CHOOSES the minor."""
    return model.feature_matrix(*(x.mid if hasattr(x, "mid") else x for x in w.key_query(instance)))


def feature_enclosure(instance, w, *, rows=None, cols=None, backend=None):
    """A FloatBall enclosing Z[rows, cols] for every value the data and the
    weights stand for (:func:`~verifier.model.mha_float.feature_columns_float_ball`)."""
    E, e, WK, WQ = w.key_query(instance)
    return feature_columns_float_ball(E, e, WK, WQ, rows=rows, cols=cols, backend=backend)


def _candidates(Zmid: np.ndarray, first: int) -> tuple[list[int], int]:
    """(sizes, numerical rank): the numerical rank (numpy's tolerance) and
    those of stricter SVD thresholds, below ``first`` (floats CHOOSE the
    sizes tried; only a certified minor is evidence)."""
    s = np.linalg.svd(Zmid, compute_uv=False) if Zmid.size else np.zeros(0)
    if not s.size or s[0] == 0:
        return [], 0
    numerical = int(np.count_nonzero(s > max(Zmid.shape) * np.finfo(np.float64).eps * s[0]))
    out = [first]
    for k in [numerical] + [int(np.count_nonzero(s > rtol * s[0])) for rtol in RTOLS]:
        if 0 < k < out[-1]:
            out.append(k)
    return out[1:], numerical


def certify_feature_rank(instance, w, first: int, *, prec: int = 128, backend=None):
    """rank(Z) >= k certified for every value the data and weights stand
    for: k = ``first`` (rows all examples when ``first`` = T), else the
    largest of the smaller numerical ranks that a minor certifies.  Returns
    (RankLowerBound, the sizes tried, the numerical rank of the midpoint or
    None when never computed)."""
    Zmid = feature_midpoint(instance, w)
    E, e, WK, WQ = w.key_query(instance)

    def minor_ball(rows, cols):
        return feature_matrix_ball(E, e, WK, WQ, rows=[int(i) for i in rows], cols=[int(j) for j in cols])

    def minor_float(rows, cols):
        return feature_columns_float_ball(E, e, WK, WQ, rows=rows, cols=cols, backend=backend)

    tried, cert, numerical = [], None, None
    sizes = [first]
    with workprec(prec):
        while sizes:
            k = sizes.pop(0)
            tried.append(k)
            cert = certify_rank_lower_bound_lazy(Zmid, k, minor_ball, minor_float=minor_float, prec=prec,
                                                 max_prec=max(prec, 512), backend=backend)
            if cert.decision is Decision.TRUE or k == 0:
                break
            if numerical is None:  # one SVD, only when the first size failed
                sizes, numerical = _candidates(Zmid, k)
    return cert, tried, numerical
