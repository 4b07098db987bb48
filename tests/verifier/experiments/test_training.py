"""verifier/experiments/training.py: Adam on one attention layer (numerical; tiny sizes, no timing)."""
import numpy as np
import pytest
import torch

from verifier.data.instances import make_instance
from verifier.errors import InvalidInstance
from verifier.experiments.training import (
    AttentionLayer,
    attention_maxima,
    saturation_profile,
    train_memorization,
    train_memorization_grid,
)
from verifier.model.mha_torch import forward_torch


def tiny(T=8, n=3, d=8, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(T, n, d)), rng.uniform(size=(T, d)), rng.integers(0, classes, T)


def test_eight_examples_memorized():
    out = train_memorization(tiny(), H=2, d_h=4, n_classes=4, steps=600, lr=1e-2, seed=0)
    assert out["accuracy"] == 1.0 and out["memorized"] and out["correct"] == 8
    assert out["steps"] <= 600 and out["device"] in ("cpu", "cuda", "cuda:0")


def test_same_seed_same_numbers():
    a = train_memorization(tiny(), H=2, d_h=4, steps=50, lr=1e-2, seed=3)
    b = train_memorization(tiny(), H=2, d_h=4, steps=50, lr=1e-2, seed=3)
    c = train_memorization(tiny(), H=2, d_h=4, steps=50, lr=1e-2, seed=4)
    wa, wb, wc = (x["model"].export_weights() for x in (a, b, c))
    for k in wa:
        assert np.array_equal(wa[k], wb[k])
    assert not np.array_equal(wa["W_Q"], wc["W_Q"])


def test_saturation_profile_is_a_fraction():
    data = tiny()
    out = train_memorization(data, H=3, d_h=4, steps=100, lr=1e-2, seed=0)
    frac = saturation_profile(out["model"], data)
    mx = attention_maxima(out["model"], data)
    assert 0.0 <= frac <= 1.0 and mx.shape == (8, 3)
    assert np.all((mx >= 1.0 / 3 - 1e-6) & (mx <= 1.0 + 1e-6))  # the max of n = 3 weights
    assert saturation_profile(out["model"], data, threshold=0.0) == 1.0


def test_exported_weights_follow_model_torch_conventions():
    E, e, _ = tiny()
    layer = AttentionLayer(d=8, H=2, d_h=4, d_v=2, d_out=3, seed=1)
    w = layer.export_weights()
    assert w["W_Q"].shape == (2, 8, 4) and w["W_V"].shape == (2, 8, 2) and w["W_O"].shape == (4, 8)
    mine = layer(torch.as_tensor(E, dtype=torch.float32), torch.as_tensor(e, dtype=torch.float32))[0]
    ref = forward_torch(E, e, **w, device="cpu")
    assert np.allclose(mine.detach().double().numpy(), ref.numpy(), atol=1e-5)


def test_shared_context_and_regression():
    inst = make_instance(H=2, n=3, d=6, T=6, context="shared", seed=0)
    out = train_memorization(inst, H=2, d_h=3, task="regression", steps=40, lr=1e-2)
    assert out["mse"] >= 0.0 and out["max_residual"] >= 0.0 and "accuracy" not in out


def test_grid_replicas_see_prefixes():
    g = train_memorization_grid(tiny(T=12), [4, 12], H=2, d_h=4, n_classes=4, steps=30, lr=1e-2, restarts=2)
    assert [r["T"] for r in g["results"]] == [4, 12]
    assert all(0 <= r["correct"] <= r["T"] for r in g["results"])
    assert g["results"][0]["replica"] in (0, 1) and g["results"][1]["replica"] in (2, 3)
    w = [g["model"].export_weights(m)["W_Q"] for m in range(4)]
    init = AttentionLayer(d=8, H=2, d_h=4, d_out=4, replicas=2, seed=[0, 1])
    assert not np.array_equal(init.W_Q[0].detach(), init.W_Q[1].detach())  # restarts differ
    assert np.array_equal(AttentionLayer(d=8, H=2, d_h=4, seed=1).W_Q[0].detach(), init.W_Q[1].detach())
    assert not np.array_equal(w[0], w[2])  # different sizes, different trajectories


def test_bad_input_raises():
    with pytest.raises(InvalidInstance):
        train_memorization(make_instance(H=2, n=3, d=6, seed=0), H=2, d_h=3, steps=5)  # float labels
    with pytest.raises(InvalidInstance):
        train_memorization_grid(tiny(), [9], H=2, d_h=4, steps=5)  # T > 8
