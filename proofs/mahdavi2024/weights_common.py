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

import math
import time
from fractions import Fraction

import numpy as np
from flint import arb

from verifier.arith.backend import get_backend
from verifier.arith.compare import Decision, UpperBound, certainly_less, lower, workprec
from verifier.arith.float_bounds import U, rowsum_up, up_scale
from verifier.arith.float_certificates import FloatBall, float_ball_of, sigma_min_lower_float
from verifier.arith.rank import FLOAT_FROM, RankLowerBound, certify_rank_lower_bound_lazy
from verifier.data.instances import rng_for
from verifier.data.weights import check_against_data, weights_from_arrays
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model import mha as model
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.mha_float import feature_columns_float_ball

__all__ = ["layer_weights", "no_weights", "feature_midpoint", "feature_enclosure", "certify_feature_rank", "RTOLS"]

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


def _candidates(Zmid: np.ndarray, first: int) -> tuple[list[int], int]:
    """(sizes, numerical rank): the numerical rank (numpy's tolerance) and
    those of stricter SVD thresholds, below ``first``, then halvings (floats
    CHOOSE the sizes tried; only a certificate is evidence)."""
    s = np.linalg.svd(Zmid, compute_uv=False) if Zmid.size else np.zeros(0)
    if not s.size or s[0] == 0:
        return [], 0
    numerical = int(np.count_nonzero(s > max(Zmid.shape) * np.finfo(np.float64).eps * s[0]))
    out = [first]
    for k in [numerical] + [int(np.count_nonzero(s > rtol * s[0])) for rtol in RTOLS]:
        if 0 < k < out[-1]:
            out.append(k)
    while out[-1] > 1:
        out.append(out[-1] // 2)
    return out[1:], numerical


def frobenius_up(b, rad) -> float:
    """A float >= ||rad||_F (rad >= 0): squares and sums rounded up."""
    if rad is None:
        return 0.0
    sq = up_scale(b, rad * rad, 1 / (1 - U))  # fl(r r) >= r^2 (1 - u) - UL; SLACK covers UL
    total = float(b.to_numpy(rowsum_up(b, rowsum_up(b, sq)[None, :]))[0])
    r = math.nextafter(math.sqrt(total), math.inf)
    while Fraction(r) ** 2 < Fraction(total):
        r = math.nextafter(r, math.inf)
    return r


def normwise_rank(Zball, rows, *, backend=None) -> RankLowerBound:
    """rank Z[rows] = |rows| for every Z in the ball, by Weyl:
    sigma_min(Z[rows]) >= sigma_min(mid) - ||Z - mid||_2 >= s - ||rad||_F > 0,
    s a certified lower bound of the exact float midpoint's sigma_min (float
    Gram-Cholesky with a priori bounds, any summation order).  All Hd columns:
    no minor is chosen."""
    t0 = time.perf_counter()
    b = get_backend(backend)
    fb = float_ball_of(Zball, b)
    idx = np.asarray(rows, dtype=np.int64)
    sel = idx if not b.is_torch else __import__("torch").as_tensor(idx, device=b.device)
    mid, rad = fb.mid[sel], None if fb.rad is None else fb.rad[sel]
    r = frobenius_up(b, rad)
    try:
        s = sigma_min_lower_float(FloatBall(mid, None), backend=b)
        decision = certainly_less(UpperBound(arb(r)), s)
        ratio = r / lower(s)
    except InsufficientPrecision as exc:
        decision, ratio, why = Decision.UNDECIDED, float("inf"), f": {exc}"
    else:
        why = ""
    k = len(idx)
    how = (f"normwise (Weyl): sigma_min(mid Z[S]) >= s (float Gram-Cholesky, any summation order) > ||rad||_F "
           f">= ||Z[S] - mid||_2 over all {mid.shape[1]} columns [{b.name}]{why}")
    return RankLowerBound(k, tuple(int(i) for i in idx), (), decision, 53, how, ratio, time.perf_counter() - t0, k)


def certify_feature_rank(instance, w, first: int, *, prec: int = 128, backend=None):
    """rank(Z) >= k certified for every value the data and weights stand
    for: k = ``first`` first (rows: every example when ``first`` = T), then
    the smaller sizes of :func:`_candidates` until one is certified.  Two
    certificates per size: a k x k minor (||I - R A_minor||_inf < 1, tight
    for exact inputs, and a file :mod:`.weights_certificates` exports) and
    Weyl's normwise bound on the rows (all columns: it wins for large k on
    data and weights known to a precision, where it goes first).  Returns (RankLowerBound, the sizes tried, the numerical rank of
    the midpoint or None when never computed)."""
    Zmid = feature_midpoint(instance, w)
    E, e, WK, WQ = w.key_query(instance)
    T = Zmid.shape[0]
    boxed = instance.at_precision or not w.exact
    full = {}

    def minor_ball(rows, cols):
        return feature_matrix_ball(E, e, WK, WQ, rows=[int(i) for i in rows], cols=[int(j) for j in cols])

    def minor_float(rows, cols):
        return feature_columns_float_ball(E, e, WK, WQ, rows=rows, cols=cols, backend=backend)

    def rows_of(k):
        if k >= T:
            return np.arange(T)
        if "order" not in full:  # the best-conditioned rows first (a float choice)
            full["order"] = _pivot_rows(Zmid)
        return np.sort(full["order"][:k])

    def normwise(k):
        if k > Zmid.shape[1]:
            return None
        if "ball" not in full:
            full["ball"] = feature_columns_float_ball(E, e, WK, WQ, backend=backend)
        return normwise_rank(full["ball"], rows_of(k), backend=backend)

    def minor(k):
        return certify_rank_lower_bound_lazy(Zmid, k, minor_ball, minor_float=minor_float, prec=prec,
                                             max_prec=max(prec, 512), backend=backend)

    tried, cert, numerical, sizes = [], None, None, [first]
    with workprec(prec):
        while sizes:
            k = sizes.pop(0)
            tried.append(k)
            for path in (normwise, minor) if boxed and k > FLOAT_FROM else (minor, normwise):
                try:
                    got = path(k)
                except InsufficientPrecision:
                    got = None
                if got is not None and (cert is None or got.decision is Decision.TRUE or cert.k == 0):
                    cert = got
                if cert is not None and cert.decision is Decision.TRUE:
                    break
            if (cert is not None and cert.decision is Decision.TRUE) or k == 0:
                break
            if numerical is None:  # one SVD, only when the first size failed
                sizes, numerical = _candidates(Zmid, k)
    if cert is None:
        cert = RankLowerBound(first, (), (), Decision.UNDECIDED, prec, "no certificate could be formed", float("inf"),
                              0.0, first)
    return cert, tried, numerical


def _pivot_rows(Zmid: np.ndarray) -> np.ndarray:
    import scipy.linalg

    _, piv = scipy.linalg.qr(Zmid.T, mode="r", pivoting=True)
    return np.asarray(piv, dtype=np.int64)
