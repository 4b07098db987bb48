"""weights_rank: certified rank(Z) of GIVEN weights, the examples on which the
readout alone fits ANY labels, and the caps for any weights."""
from __future__ import annotations

import numpy as np
import pytest

from proofs.mahdavi2024.step2_linear_readout import build_readout
from proofs.mahdavi2024.weights_common import feature_midpoint, layer_weights
from proofs.mahdavi2024.weights_memorize_residual import check_weights_memorize
from proofs.mahdavi2024.weights_rank_readout_capacity import check_weights_rank
from verifier.data.instances import from_arrays, make_instance
from verifier.data.weights import weights_from_arrays
from verifier.statements import registry
from verifier.statements.runner import run_check, run_control


def test_default_verified_on_the_verifier_s_own_weights():
    ev = check_weights_rank(make_instance(H=2, n=3, d=5, seed=1))
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["largest T' certified"] == ev.measured["T"] == 5
    assert ev.measured["weights"].startswith("construction")


def test_negative_controls_are_refuted():
    registry.load_all()
    controls = registry.REGISTRY["weights_rank"].controls
    assert len(controls) == 3
    for c in controls:
        ev, ok = run_control("weights_rank", c)
        assert ok and ev.verdict == "refuted" and ev.certified, (c.description, ev.reason)


def _random_weights(H, d, d_h, seed, scale=0.5):
    rng = np.random.default_rng(seed)
    return {"W_Q": rng.standard_normal((H, d, d_h)) * scale, "W_K": rng.standard_normal((H, d, d_h)) * scale}


def test_the_certified_examples_take_any_labels_through_the_readout():
    """S = the certified minor's rows; random labels on S; a readout fitted in
    float64 (Step 2) with the SAME W_Q, W_K memorizes them (certified by
    weights_memorize): the claim 'ANY labels on S fit by refitting only the
    readout', exercised."""
    inst = make_instance(H=2, n=3, d=6, T=9, seed=4)  # T > Hd? no: Hd = 12; T = 9 > capacity 5
    w = weights_from_arrays(_random_weights(2, 6, 3, 4), exact_input=True)
    ev = check_weights_rank(inst, weights=w)
    S = ev.certificates[0]["rows"]
    assert len(S) == ev.measured["largest T' certified"] >= 1
    sub = inst.subset(S)
    Y = np.random.default_rng(9).standard_normal((len(S), 2))
    Z = feature_midpoint(sub, w)
    M = np.linalg.lstsq(Z, Y, rcond=None)[0]
    W_V, W_O, W_D = build_readout(M, 2, 6, 2, 2)
    fitted = weights_from_arrays({**{k: np.array(v) for k, v in w.mid.items()}, "W_V": W_V, "W_O": W_O, "W_D": W_D},
                                 exact_input=True)
    mem = check_weights_memorize(sub.replace(labels=Y, d_v=2), weights=fitted, tol="1e-6")
    assert mem.verdict == "verified", mem.reason


def test_float_data_equal_only_as_stored_refute_at_the_stored_point():
    """A float32 file with one shared context and T > H(n-1)+1: the cap is
    about the stored values (a point of the intervals): refuted, and the
    evidence says what the cap rests on."""
    rng = np.random.default_rng(0)
    E = np.broadcast_to(rng.standard_normal((1, 3, 5)).astype(np.float32), (6, 3, 5)).copy()
    e = rng.standard_normal((6, 5)).astype(np.float32)
    inst = from_arrays(E, e, H=2, reading="dtype", precision_source="file")
    ev = check_weights_rank(inst)
    assert ev.verdict == "refuted"
    assert "stored" in ev.measured["caps rest on"]


def test_exact_data_caps_rest_on_the_values_given():
    ev = check_weights_rank(make_instance(H=2, n=3, d=5, T=6, context="shared", seed=0))
    assert ev.verdict == "refuted" and ev.measured["caps rest on"].startswith("exact")


def test_float16_weights_stand_for_their_intervals_and_wide_ones_are_inconclusive():
    """float16 weights: verified only with an enclosure over the float16
    intervals; weights so coarse that the float softmax cannot be enclosed
    give inconclusive (the runner's InsufficientPrecision), never a verdict."""
    inst = make_instance(H=2, n=3, d=5, seed=2)
    w64, _ = layer_weights(inst, None, seed=2, readout=False)
    w16 = weights_from_arrays({k: np.asarray(v, np.float16) for k, v in w64.mid.items() if k in ("W_Q", "W_K")})
    q, r = w16.mid["W_Q"], w16.rad["W_Q"]
    assert np.all(r[q == 0] == 2.0**-25)  # a float16 zero stands for every real below half its smallest step
    normal = np.abs(q) >= 2.0**-14
    assert np.all(r[normal] <= np.abs(q[normal]) * 2.0**-10) and np.all(r[normal] >= np.abs(q[normal]) * 2.0**-12)
    ev = run_check("weights_rank", inst, weights=w16)
    assert ev.verdict in ("verified", "inconclusive")
    big = weights_from_arrays({k: (np.asarray(v) * 2**12).astype(np.float16) for k, v in
                               _random_weights(2, 5, 3, 0).items()})
    ev = run_check("weights_rank", inst, weights=big)
    assert ev.verdict in ("inconclusive", "verified")
    assert ev.verdict != "refuted"


def test_wrong_d_is_bad_input():
    from verifier.errors import InvalidInstance

    with pytest.raises(InvalidInstance, match="d = 4, but the data's tokens have d = 5"):
        check_weights_rank(make_instance(H=2, n=3, d=5), weights=weights_from_arrays(_random_weights(2, 4, 3, 0)))



def test_the_torch_backend_certifies_what_numpy_does():
    """The float path on torch (the GPU's when present; its CPU here): the
    normwise certificate of 80 float32 examples and the readout statements."""
    from proofs.mahdavi2024.weights_classify_margins import check_weights_classify

    rng = np.random.default_rng(0)
    inst = from_arrays(rng.standard_normal((80, 4, 40)).astype(np.float32),
                       rng.standard_normal((80, 40)).astype(np.float32), H=3, reading="dtype")
    w = weights_from_arrays({k: (rng.standard_normal((3, 40, 8)) * 0.2).astype(np.float32) for k in ("W_Q", "W_K")})
    for backend in ("torch-cpu", "numpy"):
        ev = check_weights_rank(inst, weights=w, backend=backend)
        assert ev.verdict == "verified" and ev.method.startswith("normwise"), (backend, ev.reason)
    small = make_instance(H=2, n=3, d=5, d_out=3, seed=0)
    assert check_weights_classify(small, backend="torch-cpu").verdict == "verified"
    assert check_weights_memorize(small, backend="torch-cpu").verdict == "verified"
