"""weights_memorize and weights_classify: certified enclosures of the given
layer's output against the labels, decided one ulp from the boundary on an
exactly computable layer, and the inputs they refuse."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from proofs.mahdavi2024.weights_classify_margins import check_weights_classify
from proofs.mahdavi2024.weights_common import layer_weights
from proofs.mahdavi2024.weights_memorize_residual import check_weights_memorize
from verifier.data.instances import from_arrays, make_instance
from verifier.data.weights import weights_from_arrays
from verifier.errors import InvalidInstance
from verifier.model import mha
from verifier.statements import registry
from verifier.statements.runner import run_control

DELTA = 2.0**-10


def exact_layer(skip: bool = False):
    """W_Q = W_K = 0: uniform attention over n = 4 integer tokens, integer
    readout: yhat is an exact dyadic, computed here in float64 exactly."""
    rng = np.random.default_rng(0)
    T, n, d, H, d_v, d_out = 5, 4, 6, 2, 2, 2
    E = rng.integers(-4, 5, (T, n, d)).astype(float)
    e = rng.integers(-4, 5, (T, d)).astype(float)
    W = {"W_Q": np.zeros((H, d, 2)), "W_K": np.zeros((H, d, 2)), "W_V": rng.integers(-2, 3, (H, d, d_v)).astype(float),
         "W_O": rng.integers(-2, 3, (H * d_v, d)).astype(float), "W_D": rng.integers(-2, 3, (d, d_out)).astype(float)}
    yhat = mha.forward(E, e, mha.Weights(**W), skip=skip)
    return E, e, W, yhat


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("tol, expect", [(DELTA * (1 + 2.0**-20), ("verified",)),
                                         (DELTA * (1 - 2.0**-20), ("refuted",)),
                                         (DELTA, ("verified", "inconclusive"))])
def test_one_ulp_from_the_boundary(skip, tol, expect):
    E, e, W, yhat = exact_layer(skip)
    y = yhat.copy()
    y[3, 1] += DELTA  # max |yhat - y| = DELTA exactly
    inst = from_arrays(E, e, y, H=2, d_v=2)
    w = weights_from_arrays(W, exact_input=True)
    w = type(w)(w.mid, w.rad, w.precision, skip=skip, source="test")
    ev = check_weights_memorize(inst, weights=w, tol=str(Fraction(tol)))
    assert ev.verdict in expect, (ev.reason, ev.measured)
    lo, hi = ev.measured["max |yhat - y| >="], ev.measured["max |yhat - y| <="]
    assert lo <= DELTA <= hi


def test_tolerance_is_read_exactly_and_refused_when_not_a_number():
    E, e, W, yhat = exact_layer()
    inst = from_arrays(E, e, yhat + 0.0, H=2, d_v=2)
    w = weights_from_arrays(W, exact_input=True)
    assert check_weights_memorize(inst, weights=w, tol="0").verdict in ("verified", "inconclusive")
    for bad in ("x", "-1", "1/0"):
        with pytest.raises(InvalidInstance, match="--tol"):
            check_weights_memorize(inst, weights=w, tol=bad)


def test_float16_weights_refute_only_where_the_stored_point_misses():
    """Theorem 1's weights stored in float16: every value they stand for is
    enclosed; a refutation must hold at the stored point (float64 forward of
    the float16 values), a verification there too."""
    inst = make_instance(H=2, n=3, d=5, seed=3)
    w64, _ = layer_weights(inst, None, seed=3, readout=True)
    w16 = weights_from_arrays({k: np.asarray(v, np.float16) for k, v in w64.mid.items()})
    ev = check_weights_memorize(inst, weights=w16)
    stored = mha.forward(inst.contexts, inst.queries, mha.Weights(**{k: w16.mid[k] for k in
                                                                  ("W_Q", "W_K", "W_V", "W_O", "W_D")}))
    miss = float(np.max(np.abs(stored - inst.labels)))
    tol = ev.measured["tol"]
    if ev.verdict == "refuted":
        assert miss > tol
    elif ev.verdict == "verified":
        assert miss <= tol
    assert ev.measured["max |yhat - y| >="] <= miss <= ev.measured["max |yhat - y| <="] * (1 + 1e-9)


def test_controls_refuted():
    registry.load_all()
    for sid in ("weights_memorize", "weights_classify"):
        assert registry.REGISTRY[sid].controls
        for c in registry.REGISTRY[sid].controls:
            ev, ok = run_control(sid, c)
            assert ok and ev.verdict == "refuted" and ev.certified, (sid, c.description, ev.reason)


def test_labels_must_be_given_and_match_W_D(tmp_path):
    E, e, W, yhat = exact_layer()
    np.savez(tmp_path / "d.npz", contexts=E, queries=e)
    from verifier.data.instances import load_data

    inst = load_data(tmp_path / "d.npz", H=2, d_v=2, d_out=2)
    with pytest.raises(InvalidInstance, match="the data have none"):
        check_weights_memorize(inst, weights=weights_from_arrays(W))
    with pytest.raises(InvalidInstance, match="W_D has d_out = 2, the labels d_out = 1"):
        check_weights_memorize(from_arrays(E, e, yhat[:, :1], H=2, d_v=2), weights=weights_from_arrays(W))


# -- weights_classify --------------------------------------------------------------------------------------------

def test_classify_default_verified_and_class_ids():
    ev = check_weights_classify(make_instance(H=2, n=3, d=5, d_out=3, seed=1))
    assert ev.verdict == "verified" and ev.measured["certified correct"] == ev.measured["T"]
    E, e, W, yhat = exact_layer()
    ids = np.argmax(yhat, axis=1)
    inst = from_arrays(E, e, ids[:, None].astype(np.int64), H=2, d_v=2, d_out=1)
    ev = check_weights_classify(inst, weights=weights_from_arrays(W))
    assert ev.measured["classes read as"].startswith("class ids")
    assert ev.verdict in ("verified", "inconclusive")  # ties of the integer layer stay undecided
    wrong = from_arrays(E, e, ((ids + 1) % 2)[:, None].astype(np.int64), H=2, d_v=2, d_out=1)
    assert check_weights_classify(wrong, weights=weights_from_arrays(W)).verdict in ("refuted", "inconclusive")


def test_an_exact_tie_is_never_certified():
    """Two equal columns of W_D: yhat_0 = yhat_1 exactly: neither correct nor wrong."""
    E, e, W, _ = exact_layer()
    W = dict(W)
    W["W_D"] = np.repeat(W["W_D"][:, :1], 2, axis=1)
    inst = from_arrays(E, e, np.tile([[1.0, 0.0]], (5, 1)), H=2, d_v=2)
    ev = check_weights_classify(inst, weights=weights_from_arrays(W, exact_input=True))
    assert ev.verdict == "inconclusive" and ev.measured["undecided"] == 5


@pytest.mark.parametrize("labels, message", [
    (np.tile([[1.0, 1.0]], (5, 1)), "no largest entry"),
    (np.full((5, 1), 1.0, dtype=np.float32), "class ids must be integers"),
    (np.full((5, 1), 7, dtype=np.int64), "class ids must be integers"),
    (np.ones((5, 3)), "expected 2"),
])
def test_classify_refuses_undefined_classes(labels, message):
    E, e, W, _ = exact_layer()
    inst = from_arrays(E, e, labels, H=2, d_v=2, reading="dtype", precision_source="file")
    with pytest.raises(InvalidInstance, match=message):
        check_weights_classify(inst, weights=weights_from_arrays(W))


def test_one_output_is_a_binary_classifier_by_the_sign():
    inst = make_instance(H=2, n=3, d=5, seed=5)
    w, _ = layer_weights(inst, None, seed=5, readout=True)
    ev = check_weights_classify(inst, weights=w)
    assert ev.verdict == "verified" and ev.measured["classes read as"].startswith("sign")
    flipped = check_weights_classify(inst.replace(labels=-np.asarray(inst.labels)), weights=w)
    assert flipped.verdict == "refuted" and flipped.measured["certified wrong"] == inst.T
    with pytest.raises(InvalidInstance, match="no sign"):
        check_weights_classify(inst.replace(labels=np.zeros((inst.T, 1))), weights=w)
