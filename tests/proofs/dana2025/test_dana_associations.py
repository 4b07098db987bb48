"""Cor. 1, Contribution 1, Cor. 2: certified memorization on generated tables,
exact impossibilities (H = 0, d = 1), the upper-bound reading and Cor. 2's cap."""
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.dana2025.contrib1_associations import check_dana_contrib1, neg_contrib1_d1
from proofs.dana2025.corollary1_associations import check_dana_corollary1, control_upper_reading, neg_cor1_H0
from proofs.dana2025.corollary2_accuracy import accuracy_bound, check_dana_corollary2, neg_cor2_cap
from verifier.data.sequences import make_sequence_instance


@settings(max_examples=5)
@given(st.integers(4, 10), st.integers(1, 2), st.integers(1, 3), st.integers(0, 1000))
def test_corollary1_and_2_verified(N, d_h, H, seed):
    inst = make_sequence_instance(N=N, S=2, d=2, d_h=d_h, H=H, seed=seed)
    ev = check_dana_corollary1(inst, seed=seed)
    assert ev.verdict in ("verified", "inconclusive")
    if ev.verdict == "verified":
        assert ev.measured["memorized (certified)"] == inst.T0 and ev.margin > 0
    assert check_dana_corollary2(inst, seed=seed).verdict in ("verified", "inconclusive")


@settings(max_examples=3)
@given(st.integers(3, 5), st.integers(0, 1000))
def test_contrib1_general_d(d, seed):
    inst = make_sequence_instance(N=12, S=2, d=d, d_h=d - 1, H=2, seed=seed)
    assert check_dana_contrib1(inst, seed=seed).verdict == "verified"


def test_controls_are_refuted():
    for control in (neg_cor1_H0, control_upper_reading, neg_contrib1_d1, neg_cor2_cap):
        ev = control()
        assert ev.verdict == "refuted" and ev.certified, control.__name__


def test_exp6_text_value():
    assert accuracy_bound(10, 100, 102) == 1.018 or float(accuracy_bound(10, 100, 102)) == 1.018


def test_corollary1_saves_the_weights_it_certified(tmp_path):
    """Cor. 1 is constructive: --save-weights writes the float64 weights whose margins
    were certified, and they certify again from the file (with W_U zeroed, every
    logit ties: nothing is certified)."""
    import numpy as np

    from proofs.dana2025.associations import certified_margins
    from verifier.arith.compare import Decision
    from verifier.model.aot import AoTWeights
    from verifier.statements.registry import REGISTRY

    assert REGISTRY["dana_corollary1"].writes_weights and REGISTRY["dana_contrib1"].writes_weights
    inst = make_sequence_instance(N=6, S=2, d=2, d_h=1, H=2, seed=0)
    path = tmp_path / "w.npz"
    ev = check_dana_corollary1(inst, save_weights=str(path))
    assert ev.verdict == "verified" and path.exists()
    saved = np.load(path)
    assert np.array_equal(saved["sequences"], inst.sequences) and np.array_equal(saved["targets"], inst.targets)
    weights = AoTWeights(**{k: saved[k] for k in ("e", "pos", "W_Q", "W_K", "W_V", "W_O", "W_U")})
    dec, low, _ = certified_margins(saved["sequences"], saved["targets"], weights)
    assert dec is Decision.TRUE and low > 0 and low == float(saved["certified_min_margin"]) == ev.margin
    assert ev.trail[-1].uses == "--save-weights" and ev.trail[-1].data == {"path": str(path)}
    tied = AoTWeights(**{**{k: saved[k] for k in ("e", "pos", "W_Q", "W_K", "W_V", "W_O")},
                         "W_U": np.zeros_like(saved["W_U"])})
    assert certified_margins(saved["sequences"], saved["targets"], tied)[0] is not Decision.TRUE
