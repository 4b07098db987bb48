"""The ball forward pass (verifier/model/mha_balls.py) encloses the float64 one
(verifier/model/mha.py) on every path (mutation testing, issue 9)."""
import numpy as np
from flint import arb, arb_mat

from verifier.arith.compare import workprec
from verifier.model import mha
from verifier.model.mha import Weights
from verifier.model.mha_balls import (
    feature_matrix_ball,
    forward_ball,
    logits_ball,
    readout_matrix_ball,
    scores_matrix_ball,
    softmax_ball,
)

RNG = np.random.default_rng(7)
H, T, n, d, d_h, d_v, d_out = 2, 3, 4, 5, 3, 2, 2
W = Weights(RNG.standard_normal((H, d, d_h)), RNG.standard_normal((H, d, d_h)), RNG.standard_normal((H, d, d_v)),
            RNG.standard_normal((H * d_v, d)), RNG.standard_normal((d, d_out)))
E = RNG.standard_normal((T, n, d))
e = RNG.standard_normal((T, d))


def _close(B: arb_mat, F: np.ndarray, tol=1e-12):
    F = np.atleast_2d(F)
    assert (B.nrows(), B.ncols()) == F.shape
    for i in range(B.nrows()):
        for j in range(B.ncols()):
            assert abs(float(B[i, j].mid()) - F[i, j]) <= tol * (1 + abs(F[i, j])) and B[i, j].rad() < 1e-20


def test_forward_readout_scores_enclose_the_float_model():
    with workprec(128):
        for skip in (False, True):
            _close(forward_ball(E, e, W, skip=skip), mha.forward(E, e, W, skip=skip))
        _close(readout_matrix_ball(W), mha.readout_matrix(W))
        S = mha.softmax(mha.logits(E, e, W.W_K, W.W_Q))  # (T, H, n)
        _close(scores_matrix_ball(E, e, W.W_K, W.W_Q), S.reshape(T, H * n))
        Z = feature_matrix_ball(E, e, W.W_K, W.W_Q)
        _close(Z, mha.feature_matrix(E, e, W.W_K, W.W_Q))
        _close(forward_ball(E, e, W, Z=Z), mha.forward(E, e, W))
        Ws = [W.W_K[h] @ W.W_Q[h].T for h in range(H)]  # attention matrices: u = W e
        _close(feature_matrix_ball(E, e, W=Ws), mha.feature_matrix(E, e, W=np.stack(Ws)), tol=1e-10)
        S_W = mha.softmax(mha.logits_from_attention_matrices(E, e, np.stack(Ws)))
        _close(scores_matrix_ball(E, e, W=Ws), S_W.reshape(T, H * n), tol=1e-10)
        shared = np.broadcast_to(E[:1], E.shape)
        _close(feature_matrix_ball(shared, e, W.W_K, W.W_Q), mha.feature_matrix(shared, e, W.W_K, W.W_Q))
        L = logits_ball(E, e, W.W_K, W.W_Q, rows=[2])
        ref = mha.logits(E, e, W.W_K, W.W_Q)[2]
        assert len(L) == 1 and all(abs(float(L[0][h][i].mid()) - ref[h, i]) < 1e-12 for h in range(H) for i in range(n))


def test_softmax_ball_of_floats_and_large_logits():
    with workprec(128):
        s = softmax_ball([0.0, np.log(3.0)])
        assert abs(float(s[0].mid()) - 0.25) < 1e-15 and abs(float(s[1].mid()) - 0.75) < 1e-15
        big = softmax_ball([arb(1000), arb(999)])  # shifted by the max: no overflow, exact ratio e
        assert abs(float((big[0] / big[1]).mid()) - np.e) < 1e-12


def test_a_vector_is_a_column():
    from verifier.model.mha_balls import _mat

    v = _mat(np.array([1.0, 2.0]))
    assert (v.nrows(), v.ncols()) == (2, 1) and v[1, 0] == 2
