"""Certificate files for the verdicts about given weights, for
``verifier/recheck.py`` (a standalone re-checker: standard library and mpmath).

Each is one JSON object of the re-checker's format 1: ``format``, ``kind``,
``claim`` (the numbers asserted), ``data`` (exact rationals "p/q", and
intervals ``[lo, hi]`` of them: a value known to its precision is the
interval of every real it stands for, enclosed), ``about`` and ``sha256``
(of the canonical JSON of kind, claim and data):

* ``mha-feature-rank`` (``weights_rank``, accepted by today's re-checker when
  the layer has no query bias): ``claim`` {k, shape [T, Hd]}; ``data``
  {contexts, queries, W_K, W_Q, rows, cols}: rank(Z) >= k for every value
  in the intervals, by the k x k minor (rows, cols) of Eq. (7)'s Z.  With a
  query bias (``b_Q``, a transformers layer) the queries carry a last
  coordinate 1 and W_Q^h a last row b_Q^h (``data.query_bias`` true): a
  re-checker must then sum W_Q^T e over all d+1 coordinates;
* ``mha-readout-residual`` (``weights_memorize``): ``claim`` {relation
  "<=" or ">", tol}; ``data`` {contexts, queries, labels, W_Q, W_K, W_V,
  W_O, W_D, skip}: max_t,j |yhat - y| <= tol (resp. > tol) for every value
  in the intervals (Eqs. 1-6);
* ``mha-argmax-margins`` (``weights_classify``): ``claim`` {correct: [t],
  wrong: [t]}; ``data`` {..., classes}: yhat_c > yhat_j for all j != c on
  every example of ``correct``, yhat_j > yhat_c for some j on every example
  of ``wrong`` (one output: the scores [0, yhat]).

The last two kinds are not in today's re-checker (another issue reworks it);
:func:`export_certificate` writes them in the same shape.

>>> from verifier.data.instances import make_instance
>>> from proofs.mahdavi2024.weights_rank_readout_capacity import check_weights_rank
>>> inst = make_instance(H=2, n=3, d=5, seed=0)
>>> cert = export_certificate(check_weights_rank(inst), inst)
>>> cert["kind"], cert["claim"]
('mha-feature-rank', {'k': 5, 'shape': [5, 10]})
"""
from __future__ import annotations

import hashlib
import json
from fractions import Fraction

import numpy as np

from verifier.errors import InvalidInstance
from verifier.statements.registry import construction

from .weights_common import layer_weights

__all__ = ["export_certificate", "interval_list", "MAX_ENTRIES", "FORMAT"]

FORMAT = "mha-verify-certificate/1"
MAX_ENTRIES = 2_000_000  #: numbers in one certificate file (intervals count twice)
READOUT = ("W_Q", "W_K", "W_V", "W_O", "W_D")


def _q(x: float) -> str:
    f = Fraction(float(x))
    return f"{f.numerator}/{f.denominator}"


def interval_list(mid, rad=None):
    """Nested lists: "p/q" for an exact value, [lo, hi] (exact rationals
    mid -/+ rad) for a value known to its precision."""
    mid = np.asarray(mid, dtype=np.float64)
    if rad is None:
        return np.vectorize(_q, otypes=[object])(mid).tolist() if mid.size else mid.tolist()
    rad = np.broadcast_to(np.asarray(rad, dtype=np.float64), mid.shape)
    out = np.empty(mid.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (m, r) in enumerate(zip(mid.reshape(-1), rad.reshape(-1))):
        m, r = Fraction(float(m)), Fraction(float(r))
        flat[i] = [f"{(m - r).numerator}/{(m - r).denominator}", f"{(m + r).numerator}/{(m + r).denominator}"]
    return out.tolist()


def _digest(cert: dict) -> str:
    body = {k: cert[k] for k in ("kind", "claim", "data")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _data(instance, w, names) -> dict:
    E, e, WK, WQ = w.key_query(instance)
    out = {"contexts": interval_list(*(E.mid, E.rad) if hasattr(E, "mid") else (E, None)),
           "queries": interval_list(*(e.mid, e.rad) if hasattr(e, "mid") else (e, None)),
           "W_K": interval_list(WK.mid, WK.rad), "W_Q": interval_list(WQ.mid, WQ.rad),
           "query_bias": "b_Q" in w.mid}
    for name in names:
        if name not in ("W_Q", "W_K"):
            out[name] = interval_list(w.mid[name], w.rad.get(name))
    return out


def export_certificate(evidence, instance, weights=None, *, seed: int = 0) -> dict:
    """The certificate file (a dict) of a CERTIFIED verdict of weights_rank,
    weights_memorize or weights_classify on ``instance`` with ``weights``
    (None: the verifier's own, rebuilt from ``seed`` as the checker did)."""
    sid = evidence.statement
    if not evidence.certified:
        raise InvalidInstance(f"{sid}: only a certified verdict has a certificate ({evidence.verdict})")
    size = instance.T * instance.n * instance.d * 2
    if size > MAX_ENTRIES:
        raise InvalidInstance(f"{sid}: {size} numbers exceed a certificate file's {MAX_ENTRIES}")
    w, how = layer_weights(instance, weights, seed=seed, readout=sid != "weights_rank")
    first = evidence.certificates[0]
    if sid == "weights_rank" and not first["cols"]:
        raise InvalidInstance("weights_rank: rank(Z) was certified normwise (Weyl, all columns): there is no minor to "
                              "write as mha-feature-rank")
    if sid == "weights_rank":
        k = int(first["certified_k"])
        kind, claim = "mha-feature-rank", {"k": k, "shape": [instance.T, w.H * instance.d]}
        data = {**_data(instance, w, ("W_Q", "W_K")), "rows": list(first["rows"]), "cols": list(first["cols"])}
    elif sid == "weights_memorize":
        kind = "mha-readout-residual"
        claim = {"relation": "<=" if evidence.verdict == "verified" else ">", "tol": first["tol"]}
        ym, yr = instance.ball("labels")
        data = {**_data(instance, w, READOUT), "labels": interval_list(ym, yr), "skip": w.skip}
    elif sid == "weights_classify":
        from .weights_classify_margins import label_classes

        kind = "mha-argmax-margins"
        claim = {"correct": list(first["correct"]), "wrong": list(first["wrong"])}
        data = {**_data(instance, w, READOUT), "classes": label_classes(instance, w.d_out)[0].tolist(),
                "skip": w.skip, "one_output_as_scores_0_yhat": w.d_out == 1}
    else:
        raise InvalidInstance(f"{sid}: no certificate kind (weights_rank, weights_memorize, weights_classify)")
    cert = {"format": FORMAT, "kind": kind, "claim": claim, "data": data,
            "about": f"{sid}: {evidence.claimed} ({how}; {instance.precision.describe('contexts', 'queries')})"}
    cert["sha256"] = _digest(cert)
    return cert


construction("weights_rank.certificate")(export_certificate)
