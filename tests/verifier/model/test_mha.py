"""The layer, Eqs. (1)-(8): softmax in the open simplex, Z rows as convex
combinations of context tokens, three back ends (numpy / arb balls / torch)
agreeing, Eq. (8) equal to the forward pass, the skip connection.

Tolerances: float64 results are compared with ``TOL * (1 + scale)`` where
``scale`` is the largest magnitude involved; ``TOL = 1e-10`` is about 10^6
ulps, far above the rounding of these few-term sums and far below any
structural error (a wrong transpose changes entries by O(1)).
"""
import numpy as np
import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.balls import arb_mat_mid, arb_mat_rad_upper
from verifier.arith.compare import Decision, certainly_positive, workprec
from verifier.data.strategies import attention_instances, attention_weights
from verifier.model.mha import (
    Weights,
    feature_matrix,
    forward,
    head_outputs,
    logits,
    logits_from_attention_matrices,
    readout,
    readout_matrix,
    softmax,
)
from verifier.model.mha_balls import feature_matrix_ball, forward_ball, softmax_ball

TOL = 1e-10
BALL_RADIUS = 1e-25  # at 128 bits the enclosures are ~2^-120 wide relative to the data


@st.composite
def layers(draw, **instance_kw):
    """An instance and weights of matching sizes."""
    inst = draw(attention_instances(**instance_kw))
    w = draw(attention_weights(H=inst.H, d=inst.d, d_h=inst.d_h, d_v=inst.d_v, d_out=inst.d_out))
    return inst, w


def _close(a, b, tol=TOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(1.0, float(np.max(np.abs(a), initial=0)), float(np.max(np.abs(b), initial=0)))
    return float(np.max(np.abs(a - b), initial=0)) <= tol * scale


# ---------------------------------------------------------------- softmax (2)

@given(st.lists(st.floats(-30, 30), min_size=1, max_size=8))
def test_softmax_is_in_the_open_simplex(a):
    s = softmax(np.array([a]))[0]
    assert np.all(s > 0)
    assert abs(s.sum() - 1.0) <= 8 * len(a) * np.finfo(float).eps


def test_softmax_does_not_overflow_at_large_logits():
    a = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]])
    s = softmax(a)
    assert np.all(np.isfinite(s)) and np.all(s >= 0)
    np.testing.assert_allclose(s.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(s, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], atol=1e-15)


def test_ball_softmax_is_certainly_interior_at_large_logits():
    """Where float64 underflows to 0, the ball softmax still certifies s_i > 0
    and encloses sum s_i = 1."""
    with workprec(128):
        s = softmax_ball([arb(1e4), arb(-1e4), arb(0)])
        assert all(certainly_positive(x) is Decision.TRUE for x in s)
        total = s[0] + s[1] + s[2]
        assert total.contains(1) and total.rad() < 1e-30
        assert s[1].contains(arb(-2e4).exp() / (1 + arb(-1e4).exp() + arb(-2e4).exp()))


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=6))
def test_softmax_is_shift_invariant(a):
    a = np.array([a])
    assert _close(softmax(a), softmax(a + 17.25))


# ------------------------------------------------------- logits and Z (1), (3), (7)

@given(layers())
def test_logit_orderings_agree(layer):
    """a = E W_K W_Q^T e computed via (W_K, W_Q) and via W^h = W_K W_Q^T."""
    inst, w = layer
    a1 = logits(inst.contexts, inst.queries, w.W_K, w.W_Q)
    a2 = logits_from_attention_matrices(inst.contexts, inst.queries, w.attention_matrices())
    assert a1.shape == (inst.T, inst.H, inst.n)
    assert _close(a1, a2)
    # direct, unfactored evaluation of Eq. (1) for every (t, h)
    for t in range(inst.T):
        for h in range(inst.H):
            direct = inst.contexts[t] @ w.W_K[h] @ w.W_Q[h].T @ inst.queries[t]
            assert _close(a1[t, h], direct)


@given(layers())
def test_z_rows_are_convex_combinations_of_context_rows(layer):
    inst, w = layer
    S = softmax(logits(inst.contexts, inst.queries, w.W_K, w.W_Q))  # (T, H, n)
    Z = feature_matrix(inst.contexts, inst.queries, w.W_K, w.W_Q)
    assert Z.shape == (inst.T, inst.H * inst.d)
    assert np.all(S >= 0) and _close(S.sum(axis=-1), 1.0)
    z = Z.reshape(inst.T, inst.H, inst.d)
    for t in range(inst.T):
        E = inst.contexts[t]
        lo, hi = E.min(axis=0), E.max(axis=0)
        for h in range(inst.H):
            assert _close(z[t, h], E.T @ S[t, h])  # z_h = E^T s_h, Eq. (3)
            slack = TOL * (1 + np.abs(E).max())
            assert np.all(z[t, h] >= lo - slack) and np.all(z[t, h] <= hi + slack)
    assert _close(head_outputs(inst.contexts, S).reshape(inst.T, -1), Z)


@given(layers(context="shared"))
def test_shared_context_rows_lie_in_one_hull(layer):
    inst, w = layer
    Z = feature_matrix(inst.contexts, inst.queries, w.W_K, w.W_Q).reshape(inst.T, inst.H, inst.d)
    E = inst.contexts[0]
    # each z is E^T s with s = least-squares coefficients; n < d and E generic
    for t in range(inst.T):
        for h in range(inst.H):
            s, *_ = np.linalg.lstsq(E.T, Z[t, h], rcond=None)
            assert _close(E.T @ s, Z[t, h], 1e-8) and abs(s.sum() - 1) < 1e-8 and np.all(s > -1e-8)


# ------------------------------------------------------------ readout (4)-(8)

@given(layers())
def test_readout_matrix_equals_forward_pass(layer):
    inst, w = layer
    Z = feature_matrix(inst.contexts, inst.queries, w.W_K, w.W_Q)
    M = readout_matrix(w)
    assert M.shape == (inst.H * inst.d, inst.d_out)
    yhat = forward(inst.contexts, inst.queries, w)
    assert yhat.shape == (inst.T, inst.d_out)
    assert _close(Z @ M, yhat)  # Eq. (8)
    assert _close(readout(Z, w), yhat)


@given(layers())
def test_skip_connection_adds_e_times_W_D(layer):
    inst, w = layer
    plain = forward(inst.contexts, inst.queries, w)
    skip = forward(inst.contexts, inst.queries, w, skip=True)
    assert _close(skip - plain, inst.queries @ w.W_D)


def test_weights_reject_inconsistent_shapes():
    from verifier.errors import InvalidInstance

    good = dict(W_Q=np.zeros((2, 5, 3)), W_K=np.zeros((2, 5, 3)), W_V=np.zeros((2, 5, 1)),
                W_O=np.zeros((2, 5)), W_D=np.zeros((5, 1)))
    Weights(**good)
    for key, bad in (("W_K", np.zeros((2, 5, 2))), ("W_O", np.zeros((3, 5))),
                     ("W_D", np.zeros((4, 1))), ("W_V", np.full((2, 5, 1), np.nan))):
        with pytest.raises(InvalidInstance):
            Weights(**{**good, key: bad})


# ---------------------------------------------------------- back ends agree

@given(layers(H=st.integers(1, 2), n=st.integers(2, 3)))
def test_torch_float64_agrees_with_numpy(layer):
    torch = pytest.importorskip("torch")
    from verifier.model.mha_torch import feature_matrix_torch, forward_torch

    inst, w = layer
    dev = torch.device("cpu")
    for skip in (False, True):
        yt = forward_torch(inst.contexts, inst.queries, w.W_Q, w.W_K, w.W_V, w.W_O, w.W_D,
                           skip=skip, dtype=torch.float64, device=dev).numpy()
        assert _close(yt, forward(inst.contexts, inst.queries, w, skip=skip))
    Zt = feature_matrix_torch(inst.contexts, inst.queries, w.W_K, w.W_Q, dtype=torch.float64,
                              device=dev).numpy()
    assert _close(Zt, feature_matrix(inst.contexts, inst.queries, w.W_K, w.W_Q))


@given(layers(H=st.integers(1, 2), n=st.integers(2, 3), context=st.sampled_from(["random", "shared"])))
def test_balls_contain_the_float64_results(layer):
    """Ball midpoints within TOL of float64, radii tiny; and a 256-bit
    enclosure lies inside the 64-bit one (the balls are nested enclosures)."""
    inst, w = layer
    with workprec(128):
        Zb = feature_matrix_ball(inst.contexts, inst.queries, w.W_K, w.W_Q)
        Yb = forward_ball(inst.contexts, inst.queries, w, skip=True)
    Z = feature_matrix(inst.contexts, inst.queries, w.W_K, w.W_Q)
    assert _close(arb_mat_mid(Zb), Z)
    assert _close(arb_mat_mid(Yb), forward(inst.contexts, inst.queries, w, skip=True))
    for B in (Zb, Yb):
        assert float(arb_mat_rad_upper(B).max()) < BALL_RADIUS
    with workprec(64):
        Z64 = feature_matrix_ball(inst.contexts, inst.queries, w.W_K, w.W_Q)
    with workprec(256):
        Z256 = feature_matrix_ball(inst.contexts, inst.queries, w.W_K, w.W_Q)
    assert all(a.contains(b) for a, b in zip(Z64.entries(), Z256.entries()))
