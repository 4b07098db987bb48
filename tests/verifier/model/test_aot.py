"""Eq. (2) of Dana et al. written three times (numpy, balls, torch): the
three agree, the logits are W_U times the residual stream, argmax is strict,
and bad parameters are one-line errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.compare import workprec
from verifier.errors import InvalidInstance
from verifier.model.aot import AoTWeights, argmax_memorized, dkl, logits, parameter_count, residual_stream
from verifier.model.aot_balls import BallAoT, dkl_ball, logits_ball, margins_ball
from verifier.model.aot_torch import logits_torch


def random_weights(rng, N, S, d, d_h, H):
    g = rng.standard_normal
    return AoTWeights(g((N, d)), g((S, d)), g((H, d_h, d)), g((H, d_h, d)), g((H, d_h, d)), g((H, d, d_h)),
                      g((N, d)))


@given(st.integers(2, 5), st.integers(1, 3), st.integers(1, 4), st.integers(0, 3), st.integers(0, 2**20))
def test_numpy_balls_torch_agree(N, S, d, H, seed):
    import torch

    rng = np.random.default_rng(seed)
    w = random_weights(rng, N, S, d, max(1, d - 1), H)
    tok = rng.integers(0, N, (4, S))
    L = logits(tok, w)
    with workprec(128):
        Lb = logits_ball(tok, BallAoT.from_weights(w))
    for t in range(4):
        for j in range(N):
            assert Lb[t, j].rad() < 1e-25
            assert abs(float(Lb[t, j].mid()) - L[t, j]) <= 1e-9 * (1 + abs(L[t, j]))
    Lt = logits_torch(torch.as_tensor(tok), {k: torch.as_tensor(v) for k, v in w.as_arrays().items()})
    assert np.allclose(Lt.numpy(), L, rtol=1e-10, atol=1e-10)
    assert np.allclose(L, residual_stream(tok, w) @ w.W_U.T)


def test_skip_only_when_no_heads():
    rng = np.random.default_rng(1)
    w = random_weights(rng, 3, 2, 2, 1, 0)
    tok = np.array([[0, 1], [2, 1]])
    r = residual_stream(tok, w)
    assert np.array_equal(r, w.e[[1, 1]] + w.pos[1])  # same last token, H = 0: same residual


def test_argmax_is_strict_and_kl_vanishes_at_log_p():
    L = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]])
    assert argmax_memorized(L, [0, 1]).tolist() == [False, True]  # a tie fails
    p = np.array([[0.5, 0.25, 0.25]])
    assert abs(dkl([1.0], p, np.log(p))) < 1e-15
    with workprec(128):
        from verifier.arith.balls import to_arb_mat

        Lb = to_arb_mat(np.log(p))
        assert dkl_ball([1], p, Lb).contains(0) or abs(float(dkl_ball([1], p, Lb).mid())) < 1e-15
        m = margins_ball(to_arb_mat(L), [0, 1])
        assert m[0].contains(0) and m[1] > 0


def test_parameter_count_and_bad_shapes():
    assert parameter_count(N=10, S=2, d=2, d_h=2, H=20) == 2 * (2 + 20 + 4 * 2 * 20)
    rng = np.random.default_rng(0)
    w = random_weights(rng, 3, 2, 2, 1, 1).as_arrays()
    w["W_O"] = np.zeros((1, 2, 2))
    with pytest.raises(InvalidInstance, match="W_O has shape"):
        AoTWeights(**w)
    w = random_weights(rng, 3, 2, 2, 1, 1)
    with pytest.raises(InvalidInstance, match="tokens must lie"):
        logits(np.array([[0, 3]]), w)
