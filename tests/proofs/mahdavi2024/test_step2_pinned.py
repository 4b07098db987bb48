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


# The float readout's Gram route (solve_readout_float -> _gram_solution, _at_rounding_level):
# a candidate only, but each route must give Z^+ Y where it answers and decline where it cannot.

def test_at_rounding_level_on_exact_float64_inputs():
    """Every value below is exact in float64 (in any summation order): the test is
    max |Y - Z M| <= 1024 u max(|Z| |M| + |Y|), u = 2^-52, with <= (not <), the |Y| term
    counted, scales below 1 not raised to 1, empty labels accepted, non-finite residuals
    refused; silently on finite inputs."""
    import warnings

    from proofs.mahdavi2024.step2_linear_readout import _at_rounding_level as at

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one, e = np.ones((1, 1)), np.eye(2)
        assert at(e, np.ones((2, 1)), np.ones((2, 1))) and not at(e, np.ones((2, 1)), np.zeros((2, 1)))
        # Z M = 0 exactly, |Z| |M| = 2a, r = |y| = 2: with a = 2^42 - 1, 1024 u (2a + 2) = 2 = r exactly
        Z = np.array([[1.0, 1.0]])
        M = lambda a: np.array([[a], [-a]])  # noqa: E731
        assert at(Z, M(2.0 ** 42 - 1), 2 * one)
        assert not at(Z, M(2.0 ** 42 - 2), 2 * one)  # 1024 u (2^43 - 2) = 2 - 2^-41 < 2 (1025 u would pass)
        # |Y| counted: r = 3 2^-43, |Z| |M| = 1: 1024 u (1 + |y|) ~ 2^-41 >= r > 2^-42 = 1024 u |Z| |M|
        assert at(one, one, (1 + 3 * 2.0 ** -43) * one)
        # a scale below 1: r = 2^-50 = the scale, far above 1024 u times it (not 1024 u)
        assert not at(2.0 ** -50 * e, np.ones((2, 1)), np.zeros((2, 1)))
        assert at(e, np.zeros((2, 0)), np.zeros((2, 0)))  # no label columns: nothing to miss
    with np.errstate(all="ignore"):  # (inf 0 in Z M: its callers ignore the flags)
        assert not at(e, np.array([[np.inf], [0.0]]), np.zeros((2, 1)))
        assert not at(e, np.array([[np.nan], [0.0]]), np.zeros((2, 1)))


def _conditioned(T, m, cond, seed):
    """Z = U diag(s) V^T, s from 1 down to 1/cond (geometrically), U, V orthonormal."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.standard_normal((T, T)))[0]
    V = np.linalg.qr(rng.standard_normal((m, T)))[0]
    return (U * np.geomspace(1.0, 1.0 / cond, T)) @ V.T, rng.standard_normal((T, 2))


@pytest.mark.parametrize("cond", [1.0, 1e3, 1e6])
def test_gram_route_itself_returns_the_minimum_norm_solution(cond):
    """_gram_solution answers (not None: solve_readout_float would hide a failure behind the QR
    route) with M = Z^+ Y: at cond(Z) = 1e6 the first Cholesky solve is far from the rounding
    level (u cond(Z)^2 = 1e-4 << 1: the refinement on Y - Z M converges), and M agrees with
    lstsq's minimum-norm solution to 1e-6 relative (both are within ~u cond(Z) of it)."""
    import warnings

    from proofs.mahdavi2024.step2_linear_readout import _at_rounding_level, _gram_solution

    Z, Y = _conditioned(8, 20, cond, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M = _gram_solution(Z, Y)
    assert M is not None and M.shape == (20, 2) and _at_rounding_level(Z, M, Y)
    ref = np.linalg.lstsq(Z, Y, rcond=None)[0]
    assert np.abs(M - ref).max() <= 1e-6 * np.abs(ref).max()


def test_gram_route_refuses_non_finite_grams_and_labels_silently():
    """A Gram that overflows (Z = 1e200: Z Z^T = inf) is not numerically positive definite and
    labels with inf or NaN have no solution: None, without a warning or an exception (the
    exact answer M = 0 for Y = 0 is the QR route's to give)."""
    import warnings

    from proofs.mahdavi2024.step2_linear_readout import _gram_solution

    Z, _ = _conditioned(4, 6, 10.0, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _gram_solution(np.array([[1e200]]), np.zeros((1, 1))) is None
        assert _gram_solution(np.full((2, 3), 1e200), np.zeros((2, 1))) is None
        for bad in (np.inf, np.nan):
            Y = np.zeros((4, 1))
            Y[1, 0] = bad
            assert _gram_solution(Z, Y) is None
