"""ks_ntp_memorization: generated and user-supplied sequences memorized
exactly (IDs in balls, the FFN certified constant on [o-1, o+1]); the
count splits into V d + n + 4 D + the FFN formula with its first layer reading
the D = d + 2 wide stream; positions matter; a failed draw of w is redrawn;
the controls are rejected."""
import json
from fractions import Fraction

import mpmath
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
    # one convention (issue 32): every weight and bias entry at the widths a matrix reads and writes; the stream
    # (e(t), k+1, g) has width D = d + 2 and the FFN's first layer (2B - 1 units) reads all of it
    D, (K, w, beta), U = kw["d"] + 2, m["FFN K, w, beta"], m["distinct sequence IDs"]
    B = -(-U // K)
    ffn = 16 * B + 5 + K * (56 * (w + beta) + 139) + (2 * B - 1) * (D - 1)
    assert m["residual stream width D"] == D and m["attention 4 D"] == 4 * D
    assert m["FFN (16 ceil(U/K) + 5 + K(56(w+beta)+139) + (2B-1)(D-1))"] == ffn
    assert m["embedding + positions (V d + n)"] == kw["V"] * kw["d"] + kw["S"]
    assert m["parameters P"] == kw["V"] * kw["d"] + kw["S"] + 4 * D + ffn


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


# -- issue 32: a failed draw of w is redrawn; the inconclusive message names the cause and a remedy ------

def test_a_failed_draw_of_w_is_redrawn(monkeypatch):
    """The first projection's IDs out of the evaluator's range (patched): w is drawn again and the
    instance verified, with the failed draw recorded."""
    import proofs.kajitsuka2025.ntp_memorization as ntp

    real, calls = ntp._ids, []

    def first_out_of_range(keys, lam):
        calls.append(1)
        dec, (items, s, z, o) = real(keys, lam)
        return (dec, (items, s, None, None)) if len(calls) == 1 else (dec, (items, s, z, o))

    monkeypatch.setattr(ntp, "_ids", first_out_of_range)
    ev = check_ks_ntp_memorization(make_token_instance(N=30, S=4, V=5, d=2, C=3, seed=0))
    assert ev.verdict == "verified" and ev.measured["draws of w"] == 2
    assert ev.measured["draws"][0]["failed"].startswith("ID spread / gap beyond")


def _ids_mp(inst, w, dps=60):
    """The sequence IDs g for projection w, in mpmath (the last position's attention output)."""
    mpmath.mp.dps = dps
    pairs = sorted({(t, k) for row in inst.sequences.tolist() for k, t in enumerate(row)})
    p = {pk: int(np.dot(list(inst.embeddings[pk[0]]) + [pk[1] + 1], w)) for pk in pairs}
    lam = mpmath.mpf(1) / max(abs(v) for v in p.values()) ** 2
    ids = set()
    for row in inst.sequences.tolist():
        ps = [p[(t, k)] for k, t in enumerate(row)]
        a = [mpmath.exp(lam * ps[-1] * q) for q in ps]
        ids.add(sum(q * x for q, x in zip(ps, a)) / sum(a))
    return sorted(ids)


def test_every_draw_failing_names_the_closest_ids_and_a_remedy(monkeypatch):
    """Every draw out of range (the evaluator's range patched down to 2^7): inconclusive, never refuted;
    the reason gives the closest IDs' gap (a lower bound) and the spread (an upper bound), both checked
    against the IDs computed in mpmath at 60 digits, and a remedy that can work (another --seed)."""
    import proofs.kajitsuka2025.ntp_memorization as ntp

    monkeypatch.setattr(ntp, "MAX_ID", 1 << 7)
    inst = make_token_instance(N=30, S=4, V=5, d=2, C=3, seed=0)
    ev = check_ks_ntp_memorization(inst, draws=2)
    assert ev.verdict == "inconclusive" and ev.refutation.kind == "failed-construction"
    assert "another --seed" in ev.reason and "magnitudes" not in ev.reason
    last = ev.measured["draws"][-1]
    ids = _ids_mp(inst, last["w"])
    gap = min(b - a for a, b in zip(ids, ids[1:]))
    assert mpmath.mpf(last["closest IDs: gap >="]) <= gap <= mpmath.mpf(last["closest IDs: gap >="]) * (1 + 1e-9)
    assert mpmath.mpf(last["ID spread <="]) >= ids[-1] - ids[0]
    assert f"{last['closest IDs: gap >=']:.3g}" in ev.reason


def test_a_failed_ffn_is_inconclusive_not_refuted(monkeypatch):
    import proofs.kajitsuka2025.ntp_memorization as ntp

    real = ntp.evaluate_forms
    monkeypatch.setattr(ntp, "evaluate_forms", lambda net, o, r: (lambda a, b, f: (a + 1, b, f))(*real(net, o, r)))
    ev = check_ks_ntp_memorization(make_token_instance(N=30, S=4, V=5, d=2, C=3, seed=0))
    assert ev.verdict == "inconclusive" and ev.refutation.kind == "failed-construction"
