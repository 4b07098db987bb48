"""Certificate files of the verdicts about given weights (format 2, intervals for values known to their
precision): genuine ones are accepted by the standalone re-checker (verifier/recheck.py), forged ones rejected;
ground truth from exact rationals, never from the checker."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

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

ROOT = Path(__file__).resolve().parents[3]


def _float32_case(bias: bool = False):
    rng = np.random.default_rng(0)
    inst = from_arrays(rng.standard_normal((6, 3, 5)).astype(np.float32),
                       rng.standard_normal((6, 5)).astype(np.float32), H=2, reading="dtype", precision_source="file")
    arrays = {k: rng.standard_normal((2, 5, 3)).astype(np.float32) for k in ("W_Q", "W_K")}
    if bias:
        arrays["b_Q"] = rng.standard_normal((2, 3)).astype(np.float32)
    return inst, weights_from_arrays(arrays)


def _redigest(cert):
    cert["sha256"] = recheck.digest(cert)
    return cert


def _det(M):
    """Exact determinant (Fractions, Gaussian elimination)."""
    M, det = [list(r) for r in M], Fraction(1)
    for c in range(len(M)):
        p = next((i for i in range(c, len(M)) if M[i][c]), None)
        if p is None:
            return Fraction(0)
        if p != c:
            M[c], M[p], det = M[p], M[c], -det
        det *= M[c][c]
        for i in range(c + 1, len(M)):
            f = M[i][c] / M[c][c]
            M[i] = [x - f * y for x, y in zip(M[i], M[c])]
    return det


@pytest.mark.parametrize("bias", [False, True])
def test_float32_rank_certificate_over_the_rounding_box_is_accepted(bias):
    inst, w = _float32_case(bias)
    ev = check_weights_rank(inst, weights=w)
    assert ev.verdict == "verified"
    cert = export_certificate(ev, inst, w)
    assert cert["format"] == recheck.FORMAT and ("b_Q" in cert["data"]) == bias
    lo, hi = (Fraction(x) for x in cert["data"]["W_Q"][0][0][0])  # an interval: the float32's rounding interval
    mid = Fraction(float(w.mid["W_Q"][0, 0, 0]))
    assert lo < mid < hi and hi - lo <= Fraction(float(np.spacing(np.float32(w.mid["W_Q"][0, 0, 0]))))
    assert recheck.check_certificate(cert)[0] == 0
    forged = _redigest({**cert, "claim": {"rank_at_least": cert["claim"]["rank_at_least"] + 1}})
    assert recheck.check_certificate(forged)[0] == 1


def test_a_box_that_contains_a_rank_deficient_point_is_rejected():
    inst, w = _float32_case()
    cert = export_certificate(check_weights_rank(inst, weights=w), inst, w)
    rows, cols, d, n = cert["data"]["rows"], cert["data"]["cols"], cert["data"]["d"], cert["data"]["n"]
    assert len(rows) == 6
    # W_K = 0 lies in the box [-1/2^20, 1/2^20]: every softmax is uniform, z_h = mean of the tokens for every head
    moved = copy.deepcopy(cert)
    moved["data"]["W_K"] = [[[["-1/1048576", "1/1048576"]] * 3] * 5] * 2
    E = [[[Fraction(float(x)) for x in tok] for tok in ctx] for ctx in np.asarray(inst.contexts)]
    Z0 = [[sum(E[t][r][j % d] for r in range(n)) / n for j in range(2 * d)] for t in range(6)]
    assert _det([[Z0[t][j] for j in cols] for t in rows]) == 0  # ground truth: a singular minor inside the box
    assert recheck.check_certificate(_redigest(moved))[0] == 1
    point = copy.deepcopy(cert)
    point["data"]["W_K"] = [[["0"] * 3] * 5] * 2  # the point itself
    assert recheck.check_certificate(_redigest(point))[0] == 1
    bad = copy.deepcopy(cert)
    bad["data"]["W_K"][0][0][0] = ["1", "0"]  # an empty interval: ill-formed
    assert recheck.check_certificate(_redigest(bad))[0] == 2


def test_readout_certificates_are_accepted_and_forgeries_rejected():
    inst = make_instance(H=2, n=3, d=5, d_out=3, seed=0)
    mem = export_certificate(check_weights_memorize(inst), inst)
    assert mem["kind"] == "mha-readout-residual" and mem["claim"]["relation"] == "<="
    assert recheck.check_certificate(mem)[0] == 0
    assert recheck.check_certificate(_redigest({**mem, "claim": {"relation": ">", "tol": mem["claim"]["tol"]}}))[0] == 1
    assert recheck.check_certificate(_redigest({**mem, "claim": {"relation": "<=", "tol": "0"}}))[0] == 1
    cls = export_certificate(check_weights_classify(inst), inst)
    assert cls["kind"] == "mha-argmax-margins" and sorted(cls["claim"]["correct"]) == list(range(inst.T))
    assert recheck.check_certificate(cls)[0] == 0
    flipped = copy.deepcopy(cls)
    flipped["data"]["classes"][0] = (flipped["data"]["classes"][0] + 1) % 3  # example 0 now certainly wrong
    assert recheck.check_certificate(_redigest(flipped))[0] == 1
    flipped["claim"] = {"correct": list(range(1, inst.T)), "wrong": [0]}
    assert recheck.check_certificate(_redigest(flipped))[0] == 0


def test_the_writer_and_the_reader_agree_on_the_format():
    from proofs.mahdavi2024 import weights_certificates as wc
    from verifier.report import certificate_format

    assert wc.FORMAT == certificate_format.FORMAT == recheck.FORMAT
    a = np.array([[0.1, -3.0], [2.0**-1074, 1e300]])
    assert wc.encode(a) == certificate_format.encode(a)
    big = np.arange(5000.0)
    assert wc.encode(big) == certificate_format.encode(big)


def test_an_uncertified_verdict_has_no_certificate():
    from dataclasses import replace

    inst = make_instance(H=2, n=3, d=5, seed=0)
    ev = replace(check_weights_memorize(inst), verdict="inconclusive", certified=False)
    with pytest.raises(InvalidInstance, match="only a certified verdict"):
        export_certificate(ev, inst)


def test_cli_certificate_for_weights_rank_is_rechecked_in_a_fresh_process(tmp_path):
    inst, w = _float32_case(bias=True)
    np.savez(tmp_path / "w.npz", **{k: v.astype(np.float32) for k, v in w.mid.items()})
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "verifier.cli", "check", "weights_rank", "--weights",
                          str(tmp_path / "w.npz"), "--T", "6", "--certificate", str(tmp_path / "c.json")],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    cert = json.loads((tmp_path / "c.json").read_text())
    assert cert["kind"] == "mha-feature-rank" and "b_Q" in cert["data"]
    again = subprocess.run([sys.executable, str(ROOT / "verifier" / "recheck.py"), str(tmp_path / "c.json")],
                           capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "ACCEPTED" in again.stdout, again.stdout
