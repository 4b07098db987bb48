"""Certificate files for the verdicts about given weights, in the format of
docs/CERTIFICATES.md ("mha-verify-certificate/2"; helpers mirroring
:mod:`verifier.report.certificate_format`), re-checked by the standalone
``verifier/recheck.py``.  A value known to its precision (a user's float
stands for every real that rounds to it) is written as the interval
``[lo, hi]`` of those reals (exact rationals mid -/+ rad), an exact one as
itself; the re-checker proves the claim for EVERY point of that box:

* ``mha-feature-rank`` (``weights_rank``): rank(Z) >= k by the k x k minor
  (rows, cols) of Eq. (7)'s Z; a query bias is the data member ``b_Q``
  (shape (H, d_h)): the logits are E W_K^h ((W_Q^h)^T e + b_Q^h);
* ``mha-readout-residual`` (``weights_memorize``): max_t,j |yhat - y| <= tol
  (verified) or > tol (refuted), Eqs. 1-8;
* ``mha-argmax-margins`` (``weights_classify``): the examples certified
  correct (argmax yhat = class, uniquely) and those certified wrong.

>>> from verifier.data.instances import make_instance
>>> from proofs.mahdavi2024.weights_rank_readout_capacity import check_weights_rank
>>> inst = make_instance(H=2, n=3, d=5, seed=0)
>>> cert = export_certificate(check_weights_rank(inst), inst)
>>> cert["kind"], cert["claim"], cert["format"]
('mha-feature-rank', {'rank_at_least': 5}, 'mha-verify-certificate/2')
"""
from __future__ import annotations

import base64
import hashlib
import json
from fractions import Fraction

import numpy as np

from verifier.errors import InvalidInstance
from verifier.model import mha as model
from verifier.statements.registry import construction

from .weights_common import layer_weights

__all__ = ["export_certificate", "interval_list", "MAX_ENTRIES", "FORMAT"]

#: the format of verifier/recheck.py; the writer's helpers mirror verifier/report/certificate_format.py's (proofs
#: may not import verifier.report: tests/test_architecture.py; tests keep the two equal)
FORMAT = "mha-verify-certificate/2"
TEXT_ENTRIES = 4096  # exact arrays beyond this many entries are written in base64
MAX_ENTRIES = 1_000_000  #: array entries of one file (an interval is three JSON values of the re-checker's 2^22)
READOUT = ("W_V", "W_O", "W_D")


def encode(a):
    a = np.asarray(a, dtype=np.float64)
    if a.size > TEXT_ENTRIES:
        return {"float64": base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")}
    return _text(a)


def _text(a):
    return [_text(x) for x in a] if a.ndim else str(Fraction(float(a)))


def certificate(kind: str, claim: dict, data: dict, *, about: str) -> dict:
    cert = {"format": FORMAT, "kind": kind, "claim": claim, "data": data, "about": about}
    body = json.dumps(cert, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return {**cert, "sha256": hashlib.sha256(body).hexdigest()}


def interval_list(mid, rad=None):
    """An array for the re-checker: exact entries where ``rad`` is None or 0 (base64 when large and exact),
    else nested lists with [lo, hi] = [mid - rad, mid + rad] as exact rationals."""
    mid = np.asarray(mid, dtype=np.float64)
    if rad is None or not np.any(rad):
        return encode(mid)
    rad = np.broadcast_to(np.asarray(rad, dtype=np.float64), mid.shape)

    def entry(m, r):
        m, r = Fraction(float(m)), Fraction(float(r))
        return str(m) if r == 0 else [str(m - r), str(m + r)]

    def nest(m, r):
        return [nest(a, b) for a, b in zip(m, r)] if m.ndim else entry(m, r)

    return nest(mid, rad)


def _data(instance, w, readout: bool) -> dict:
    E, Er = instance.ball("contexts")
    shared = bool(model.is_shared(np.asarray(E)) or E.shape[0] == 1)
    if shared:
        E, Er = E[:1], None if Er is None else np.asarray(Er)[:1]
    WK = w.ball("W_K")
    out = {"T": int(instance.T), "n": int(instance.n), "d": int(instance.d), "H": int(WK.mid.shape[0]),
           "d_h": int(WK.mid.shape[2]), "shared": shared, "contexts": interval_list(E, Er),
           "queries": interval_list(*instance.ball("queries"))}
    for name in ("W_K", "W_Q") + (READOUT if readout else ()) + (("b_Q",) if "b_Q" in w.mid else ()):
        b = w.ball(name)
        out[name] = interval_list(b.mid, b.rad)
    if readout:
        out.update(d_v=int(w.mid["W_V"].shape[2]), d_out=int(w.mid["W_D"].shape[1]), skip=bool(w.skip))
    return out


def export_certificate(evidence, instance, weights=None, *, seed: int = 0) -> dict:
    """The certificate file (a dict) of a CERTIFIED verdict of weights_rank,
    weights_memorize or weights_classify on ``instance`` with ``weights``
    (None: the verifier's own, rebuilt from ``seed`` as the checker did)."""
    sid = evidence.statement
    if sid not in ("weights_rank", "weights_memorize", "weights_classify"):
        raise InvalidInstance(f"{sid}: no certificate kind (weights_rank, weights_memorize, weights_classify)")
    if not evidence.certified or evidence.verdict not in ("verified", "refuted"):
        raise InvalidInstance(f"{sid}: only a certified verdict has a certificate ({evidence.verdict})")
    w, how = layer_weights(instance, weights, seed=seed, readout=sid != "weights_rank")
    size = (1 if model.is_shared(np.asarray(instance.contexts)) else instance.T) * instance.n * instance.d \
        + sum(int(np.size(v)) for v in w.mid.values()) + instance.T * instance.d
    if size > MAX_ENTRIES:
        raise InvalidInstance(f"{sid}: {size} entries exceed a certificate file's {MAX_ENTRIES}")
    first = evidence.certificates[0]
    about = f"{sid}: {evidence.claimed} ({how}; {instance.precision.describe('contexts', 'queries')})"
    if sid == "weights_rank":
        if evidence.verdict != "verified" or not first.get("cols"):
            raise InvalidInstance(f"weights_rank: the {evidence.verdict} verdict has no minor to write as "
                                  "mha-feature-rank (a normwise or structural argument)")
        data = {**_data(instance, w, False), "rows": [int(i) for i in first["rows"]],
                "cols": [int(j) for j in first["cols"]]}
        return certificate("mha-feature-rank", {"rank_at_least": len(first["rows"])}, data, about=about)
    data = _data(instance, w, True)
    if sid == "weights_memorize":
        data["labels"] = interval_list(*instance.ball("labels"))
        claim = {"relation": "<=" if evidence.verdict == "verified" else ">", "tol": str(Fraction(first["tol"]))}
        return certificate("mha-readout-residual", claim, data, about=about)
    from .weights_classify_margins import label_classes

    data["classes"] = [int(c) for c in label_classes(instance, w.d_out)[0]]
    claim = {"correct": [int(t) for t in first["correct"]], "wrong": [int(t) for t in first["wrong"]]}
    return certificate("mha-argmax-margins", claim, data, about=about)


construction("weights_rank.certificate")(export_certificate)
