"""Certificate files for the certified verdicts of a check (``mha-verify check
ID ... --certificate FILE``) and of the report's named instances at the
paper's scale, re-checkable by ``python verifier/recheck.py FILE``
(docs/CERTIFICATES.md):

* theorem1, appendixC, step2 (verified): ``mha-memorization``: the instance,
  the key/query weights of Prop. 1's construction and the float64 readout
  exactly as :func:`memorization_weights` builds them (as ``--save-weights``
  writes them), the rows and columns of the nonsingular T x T minor, and an
  enclosure of max |yhat - y| for those weights;
* proposition1: verified, ``mha-feature-rank`` (the minor); refuted by a
  structural cap, the cap's certificate;
* proposition2 and proposition5 (verified): ``mha-shared-context-cap`` and
  ``mha-token-sum-cap``: the exact null vectors of the structural argument.

A verdict that is not certified, or certified by another argument, gets no
file: :class:`CertificateRefused` says why in one line.  The construction is
re-run here (deterministic for the instance and seed) and the minor's rows
and columns are the check's own.
"""
from __future__ import annotations

import numpy as np

from verifier.errors import InvalidInstance
from verifier.model import mha as model
from verifier.report.certificate_format import (
    CertificateRefused,
    cap_certificate,
    certificate,
    encode,
    exact,
    feature_rank_certificate,
    mha_data,
    round_down,
    round_up,
)
from verifier.statements import registry

#: statements whose certified verdicts have a certificate kind
CERTIFIABLE = ("theorem1", "appendixC", "step2", "proposition1", "proposition2", "proposition5", "weights_rank",
               "weights_memorize", "weights_classify")
#: statements about GIVEN weights (--weights, --hf-model): their certificates hold for every value the data and
#: weights stand for (intervals, proofs/mahdavi2024/weights_certificates.py)
GIVEN_WEIGHTS = ("weights_rank", "weights_memorize", "weights_classify")
SKIP = {"theorem1": False, "appendixC": True, "step2": False}

def memorization_weights(instance, seed: int, *, skip: bool):
    """(W_K, W_Q, W_V, W_O, W_D): Prop. 1's key/query weights and Step 2's float64 readout, as
    Theorem 1's checker builds them (App. C: labels shifted by the queries' first d_out coordinates)."""
    con = registry.get_construction("proposition1.key_query_weights")(instance, seed=seed)
    Y = np.asarray(instance.labels, dtype=np.float64)
    target = Y - (np.asarray(instance.queries)[:, :instance.d_out] if skip else 0.0)
    M = registry.get_construction("step2.solve_readout_float")(con.Z, target)
    W_V, W_O, W_D = registry.get_construction("step2.readout")(M, instance.H, instance.d, instance.d_v, instance.d_out)
    return con.W_K, con.W_Q, W_V, W_O, W_D


#: up to this T the residual is enclosed in Arb balls (as the check's own saved-weights certificate), beyond in
#: rigorous float64 balls
ARB_T = 60


def residual_enclosure(instance, weights, *, skip: bool, prec: int = 128) -> tuple[float, float]:
    """(lower, upper) of max |yhat - y| for the float64 weights (Eqs. 1-6 enclosed)."""
    if instance.T <= ARB_T:
        return _residual_arb(instance, weights, skip=skip, prec=prec)
    from verifier.arith.backend import get_backend
    from verifier.arith.float_bounds import U, add_up, ball_matmul, up_scale
    from verifier.model.mha_float import feature_columns_float_ball

    W_K, W_Q, W_V, W_O, W_D = weights
    b = get_backend("numpy")
    Z = feature_columns_float_ball(instance.contexts, instance.queries, W_K, W_Q, backend=b)
    H, d, dv = W_V.shape
    om, orad = ball_matmul(b, W_O, None, W_D, None)
    parts = [ball_matmul(b, W_V[h], None, om[h * dv:(h + 1) * dv], orad[h * dv:(h + 1) * dv]) for h in range(H)]
    Bm, Br = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    ym, yr = ball_matmul(b, np.asarray(Z.mid), np.asarray(Z.rad), Bm, Br)
    if skip:
        sm, sr = ball_matmul(b, np.asarray(instance.queries), None, W_D, None)
        ym, yr = ym + sm, add_up(b, add_up(b, yr, sr), up_scale(b, np.abs(ym + sm), U))
    r = ym - np.asarray(instance.labels, dtype=np.float64)
    rad = add_up(b, yr, up_scale(b, np.abs(r), U))
    return float(np.max(np.abs(r) - rad)), float(np.max(add_up(b, np.abs(r), rad)))


def _residual_arb(instance, weights, *, skip: bool, prec: int) -> tuple[float, float]:
    from flint import arb

    from verifier.arith.compare import lower, upper, workprec
    from verifier.model.mha import Weights
    from verifier.model.mha_balls import forward_ball

    W_K, W_Q, W_V, W_O, W_D = weights
    Y = np.asarray(instance.labels, dtype=np.float64)
    with workprec(prec):
        Yhat = forward_ball(instance.contexts, instance.queries, Weights(W_Q, W_K, W_V, W_O, W_D), skip=skip)
        r = [abs(Yhat[i, j] - arb(float(Y[i, j]))) for i in range(Y.shape[0]) for j in range(Y.shape[1])]
        return max(lower(x) for x in r), max(upper(x) for x in r)


def _rank_cert(ev, prefix: str) -> dict:
    return next((c for c in ev.certificates if str(c.get("kind", "")).startswith(prefix)), {})


def memorization_certificate(sid: str, instance, ev, *, seed: int) -> dict:
    skip = SKIP[sid]
    rc = _rank_cert(ev, "rank(Z) = T")
    if rc.get("decision") != "true" or len(rc.get("rows", ())) != instance.T:
        raise CertificateRefused(f"{sid}: no certified T x T minor in the evidence")
    weights = memorization_weights(instance, seed, skip=skip)
    lo, hi = residual_enclosure(instance, weights, skip=skip)
    W_K, W_Q, W_V, W_O, W_D = weights
    data = mha_data(instance, W_K, W_Q, rc["rows"], rc["cols"])
    data.update({"d_v": int(instance.d_v), "d_out": int(instance.d_out), "labels": encode(instance.labels),
                 "W_V": encode(W_V), "W_O": encode(W_O), "W_D": encode(W_D), "skip": skip})
    claim = {"rank_at_least": int(instance.T), "max_abs_residual": [round_down(max(lo, 0.0) / 4), round_up(hi * 4)]}
    return certificate("mha-memorization", claim, data, about=(
        f"mha-verify check {sid}: rank(Z) = T = {instance.T} (Prop. 1's key/query weights, a nonsingular minor) "
        "makes every labelling memorizable (Step 2); the float64 readout given has the enclosed residual"
        + (" with the skip connection (App. C)" if skip else "")))


def for_check(sid: str, instance, ev, *, seed: int, weights=None) -> dict:
    """The certificate of ``ev`` (a check of ``sid`` on ``instance``; ``weights``: the given weights of a
    GIVEN_WEIGHTS statement, None for the verifier's own), or CertificateRefused."""
    if sid not in CERTIFIABLE:
        raise CertificateRefused(f"{sid} has no certificate kind (certifiable: {', '.join(CERTIFIABLE)})")
    if not ev.certified or ev.verdict not in ("verified", "refuted"):
        raise CertificateRefused(f"the verdict is {ev.verdict}, {'certified' if ev.certified else 'not certified'}"
                                 ": no certificate written")
    if sid in GIVEN_WEIGHTS:
        try:
            return registry.get_construction("weights_rank.certificate")(ev, instance, weights, seed=seed)
        except InvalidInstance as exc:
            raise CertificateRefused(str(exc)) from None
    if not instance.precision.exact_for("contexts", "queries", "labels"):
        raise CertificateRefused("the data are read at their dtype's precision (the verdict covers every value "
                                 "they round); a certificate holds for exact values: rerun with --exact-input")
    if sid in SKIP and ev.verdict == "verified":
        return memorization_certificate(sid, instance, ev, seed=seed)
    if sid == "proposition1" and ev.verdict == "verified":
        rc = _rank_cert(ev, "rank >= k")
        con = registry.get_construction("proposition1.key_query_weights")(instance, seed=seed)
        return feature_rank_certificate(instance, con.W_K, con.W_Q, rc["rows"], rc["cols"], about=(
            f"mha-verify check proposition1: rank(Z) >= {len(rc['rows'])} for Prop. 1's key/query weights"))
    if sid == "proposition1":
        cap = next((c for c in ev.certificates if str(c.get("kind", "")).startswith("structural cap")), None)
        if cap is not None:
            return cap_certificate(instance, cap["why"], about=(
                f"mha-verify check proposition1 (refuted): rank(Z) <= {cap['cap']} for ANY weights ({cap['why']})"))
    if sid == "proposition2" and ev.verdict == "verified":
        return cap_certificate(instance, "shared context", about="mha-verify check proposition2: rank(Z) <= "
                               "H(n-1)+1 for ANY key/query weights on examples sharing one context (App. E)")
    if sid == "proposition5" and ev.verdict == "verified":
        return cap_certificate(instance, "every token sums to c", about="mha-verify check proposition5: rank(Z) "
                               "<= H(d-1)+1 (H(d-1) when c = 0) for ANY key/query weights (App. I)")
    raise CertificateRefused(f"the {ev.verdict} verdict of {sid} has no certificate kind")


def exact_instance_size(instance, sid: str = "theorem1") -> int:
    """Bytes (about) of the binary64 arrays a memorization certificate of ``instance`` holds."""
    E = np.asarray(instance.contexts)
    ctx = E.shape[1] * E.shape[2] * (1 if model.is_shared(E) else E.shape[0])
    H, d, dh, dv, do = instance.H, instance.d, instance.d_h, instance.d_v, instance.d_out
    return 8 * (ctx + instance.T * (d + do) + H * d * (2 * dh + dv) + H * dv * d + d * do)


__all__ = ["CERTIFIABLE", "CertificateRefused", "for_check", "mha_data", "feature_rank_certificate",
           "memorization_weights", "residual_enclosure", "memorization_certificate", "cap_certificate",
           "exact_instance_size", "exact"]
