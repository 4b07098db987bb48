"""Step 2's deciding lines pinned (mutation testing, issue 9): the exact
readout's residual, its defaults and undecided branch, the label scale and the
residual enclosure on numpy and ball labels."""
import numpy as np
import pytest
from flint import arb, arb_mat

from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from proofs.mahdavi2024.step2_linear_readout import (
    TOLERANCE,
    exact_readout_residual,
    label_scale,
    residual_enclosure,
    solve_readout_ball,
)
from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision
from verifier.data.instances import from_arrays, make_instance


def _setup(**kw):
    inst = make_instance(H=2, n=3, d=5, d_out=2, d_v=3, seed=0, **kw)
    con = build_key_query_weights(inst, seed=0)
    return inst, con


def test_defaults_are_no_skip_and_shifted_labels():
    inst, con = _setup()
    dflt = exact_readout_residual(inst, con.W_K, con.W_Q)
    plain = exact_readout_residual(inst, con.W_K, con.W_Q, skip=False)
    assert dflt[0] is Decision.TRUE and np.array_equal(dflt[3], plain[3])
    skip = exact_readout_residual(inst, con.W_K, con.W_Q, skip=True)  # shift_labels defaults to True: App. C fits
    assert skip[0] is Decision.TRUE and not np.allclose(skip[3], plain[3])
    unshifted = exact_readout_residual(inst, con.W_K, con.W_Q, skip=True, shift_labels=False)
    assert unshifted[0] is Decision.FALSE  # the skip adds W_D^T e on top of a fit of Y itself


def test_precision_is_the_callers():
    inst, con = _setup()
    assert exact_readout_residual(inst, con.W_K, con.W_Q, prec=256)[4] == 256
    assert exact_readout_residual(inst, con.W_K, con.W_Q)[4] == 128


def test_singular_gram_is_undecided_with_infinite_residual():
    """Two identical examples: Z Z^T is singular, no precision inverts it."""
    inst = make_instance(H=2, n=3, d=5, d_out=2, seed=0)
    E, e, Y = (np.array(a, dtype=float) for a in (inst.contexts, inst.queries, inst.labels))
    E[1], e[1], Y[1] = E[0], e[0], Y[0]
    dup = from_arrays(E, e, Y, H=2)
    con = build_key_query_weights(inst, seed=0)
    dec, worst, rad, M, bits = exact_readout_residual(dup, con.W_K, con.W_Q, max_prec=256)
    assert dec is Decision.UNDECIDED and M is None and bits == 256
    assert worst == float("inf") and rad == float("inf")


def test_label_scale():
    assert label_scale([[1.0, -3.0], [2.0, 0.0]]) == 3.0
    assert label_scale([[1, -7]]) == 7.0 and isinstance(label_scale([[1, -7]]), float)
    assert label_scale(np.zeros((0, 2))) == 0.0


def test_residual_enclosure_on_numpy_and_ball_labels():
    Y = np.array([[1e10, -2e10], [3.0, 0.5]])
    Yhat = to_arb_mat(Y) + arb_mat([[arb(1e-15), 0], [0, 0]])
    for labels in (Y, to_arb_mat(Y)):
        dec, worst, rad = residual_enclosure(Yhat, labels)  # tol = 1e-20 * 2e10 = 2e-10 >= 1e-15
        assert dec is Decision.TRUE and 1e-15 <= worst < 2e-15
        assert isinstance(rad, float) and 0.0 <= rad < 1e-20
    assert residual_enclosure(Yhat, Y, tol=1e-16)[0] is Decision.FALSE
    small = np.array([[1.0]])
    assert residual_enclosure(to_arb_mat(small) + arb(1e-19), small)[0] is Decision.FALSE  # 1e-19 > 1e-20 * 1
    assert TOLERANCE == 1e-20
    ints = np.array([[2, -3]])
    assert residual_enclosure(to_arb_mat(ints.astype(float)), ints)[0] is Decision.TRUE


@pytest.mark.parametrize("shape", [(0, 2), (2, 0)])
def test_residual_enclosure_of_nothing(shape):
    dec, worst, rad = residual_enclosure(arb_mat(*shape), np.zeros(shape))
    assert dec is Decision.TRUE and worst == 0.0 and rad == 0.0


def test_solve_readout_ball_takes_numpy_labels():
    Z = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0]])
    Y = np.array([[1.0], [4.0]])
    M = solve_readout_ball(to_arb_mat(Z), Y)
    res = to_arb_mat(Z) * M - to_arb_mat(Y)
    assert all(abs(res[i, 0]) < 1e-30 for i in range(2))
