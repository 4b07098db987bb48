"""ks_ntp_memorization: generated and user-supplied sequences memorized
exactly (IDs in balls, the FFN certified constant on [o-1, o+1]); the
count splits into V d + n + 4(d+1) + the FFN formula; positions matter;
the controls are rejected."""
import json
from fractions import Fraction

import numpy as np
import pytest

from proofs.kajitsuka2025.bit_extraction import build_bit_extraction, evaluate_forms, forward_dense
from proofs.kajitsuka2025.ntp_memorization import check_ks_ntp_memorization
from verifier.data.token_sequences import from_arrays, load_token_sequences, make_token_instance
from verifier.statements import registry
from verifier.statements.runner import run_control


@pytest.mark.parametrize("kw", [dict(N=30, S=4, V=5, d=2, C=3, seed=0), dict(N=400, S=6, V=6, d=3, C=7, seed=3),
                                dict(N=50, S=1, V=60, d=2, C=2, seed=1)])
def test_generated_memorized(kw):
    ev = check_ks_ntp_memorization(make_token_instance(**kw))
    m = ev.measured
    assert ev.verdict == "verified" and ev.certified and m["not memorized"] == 0
    assert m["parameters P"] == (m["embedding + positions (V d + n)"] + m["attention 4(d+1)"]
                                 + m["FFN (16 ceil(U/K) + 5 + K(56(w+beta)+139))"])
    assert m["attention 4(d+1)"] == 4 * (kw["d"] + 1)


def test_user_file(tmp_path):
    p = tmp_path / "seqs.json"
    p.write_text(json.dumps({"sequences": [[0, 1, 2], [2, 1, 0], [1, 1, 1], [0, 0, 1], [2, 2, 0]],
                             "labels": [3, 1, 4, 1, 5], "embeddings": [[1, 0], [0, 2], [3, 1]]}))
    ev = check_ks_ntp_memorization(load_token_sequences(p))
    assert ev.verdict == "verified" and ev.measured["distinct sequence IDs"] == 5


def test_duplicate_sequences_with_equal_labels_are_one_point():
    inst = from_arrays(np.array([[0, 1], [0, 1], [1, 0]]), np.array([2, 2, 0]), V=2, d=2)
    assert check_ks_ntp_memorization(inst).verdict == "verified"


def test_robust_ffn_is_constant_on_the_interval():
    rng = np.random.default_rng(5)
    o = np.cumsum(rng.integers(3, 40, 60))
    labels = rng.integers(0, 6, 60)
    net = build_bit_extraction(o, labels, C=6, robust=True)
    a, b, failed = evaluate_forms(net, o, 1)
    assert not failed.any() and (b == 0).all() and (a == labels).all()
    pts = [Fraction(int(x)) + Fraction(int(rng.integers(-64, 65)), 64) for x in o]
    assert forward_dense(net, pts) == labels.tolist()  # any point of [o-1, o+1], exact rationals


def test_controls_rejected():
    reg = registry.load_all()
    controls = reg["ks_ntp_memorization"].controls
    assert len(controls) >= 3
    for c in controls:
        ev, ok = run_control("ks_ntp_memorization", c)
        assert ok, (c.description, ev.verdict, ev.reason)


def test_extreme_magnitudes_never_pass_falsely():
    big = (1 << 39) - 5
    rng = np.random.default_rng(0)
    seqs = np.unique(rng.integers(0, 4, (40, 3)), axis=0)
    E = np.array([[big, -big], [-big, big - 1], [1, -1], [big, big]])
    inst = from_arrays(seqs, rng.integers(0, 3, len(seqs)), embeddings=E)
    assert check_ks_ntp_memorization(inst).verdict in ("verified", "inconclusive")
    scaled = from_arrays(seqs, inst.labels, embeddings=np.array([[3, -1], [-2, 5], [1, -1], [4, 4]]) * 1000)
    assert check_ks_ntp_memorization(scaled).verdict == "verified"
