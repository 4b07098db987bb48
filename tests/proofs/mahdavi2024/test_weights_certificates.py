"""Certificate files of the verdicts about given weights: a rank certificate
over the data's and the weights' intervals is accepted by today's standalone
re-checker (verifier/recheck.py), a tampered one is rejected; the readout
kinds have the documented shape."""
from __future__ import annotations

import numpy as np
import pytest

from proofs.mahdavi2024.weights_certificates import export_certificate
from proofs.mahdavi2024.weights_classify_margins import check_weights_classify
from proofs.mahdavi2024.weights_memorize_residual import check_weights_memorize
from proofs.mahdavi2024.weights_rank_readout_capacity import check_weights_rank
from verifier import recheck
from verifier.data.instances import from_arrays, make_instance
from verifier.data.weights import weights_from_arrays
from verifier.errors import InvalidInstance


def _float32_case():
    rng = np.random.default_rng(0)
    inst = from_arrays(rng.standard_normal((6, 3, 5)).astype(np.float32),
                       rng.standard_normal((6, 5)).astype(np.float32), H=2, reading="dtype", precision_source="file")
    w = weights_from_arrays({k: rng.standard_normal((2, 5, 3)).astype(np.float32) for k in ("W_Q", "W_K")})
    return inst, w


def test_rank_certificate_over_the_intervals_is_accepted_and_tampering_rejected():
    inst, w = _float32_case()
    ev = check_weights_rank(inst, weights=w)
    assert ev.verdict == "verified"
    cert = export_certificate(ev, inst, w)
    assert isinstance(cert["data"]["W_Q"][0][0][0], list)  # intervals, not points
    ok, why = recheck.check_certificate(cert)
    assert ok, why
    forged = dict(cert, claim={**cert["claim"], "k": cert["claim"]["k"] + 1})
    forged["sha256"] = recheck.digest(forged)
    assert not recheck.check_certificate(forged)[0]
    moved = dict(cert, claim=dict(cert["claim"]))
    moved["data"] = {**cert["data"], "W_K": [[[["0", "0"]] * 3] * 5] * 2}  # a key matrix of zeros: Z rank 1
    moved["sha256"] = recheck.digest(moved)
    assert not recheck.check_certificate(moved)[0]


def test_readout_certificates_have_the_documented_shape():
    inst = make_instance(H=2, n=3, d=5, d_out=3, seed=0)
    mem = export_certificate(check_weights_memorize(inst), inst)
    assert mem["kind"] == "mha-readout-residual" and mem["claim"]["relation"] == "<="
    assert {"contexts", "queries", "labels", "W_Q", "W_K", "W_V", "W_O", "W_D", "skip"} <= set(mem["data"])
    cls = export_certificate(check_weights_classify(inst), inst)
    assert cls["kind"] == "mha-argmax-margins" and sorted(cls["claim"]["correct"]) == list(range(inst.T))
    assert cls["sha256"] == recheck.digest(cls)


def test_an_uncertified_verdict_has_no_certificate():
    from dataclasses import replace

    inst = make_instance(H=2, n=3, d=5, seed=0)
    ev = replace(check_weights_memorize(inst), verdict="inconclusive", certified=False)
    with pytest.raises(InvalidInstance, match="only a certified verdict"):
        export_certificate(ev, inst)
