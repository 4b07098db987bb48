"""Ball matrices and their norm bounds (verifier/arith/balls.py)."""

import numpy as np
import pytest
from flint import arb, arb_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.balls import (
    arb_mat_abs_upper,
    arb_mat_mid,
    arb_mat_rad_upper,
    frobenius_upper,
    inf_norm_upper,
    one_norm_upper,
    spectral_norm_upper,
    to_arb_mat,
)
from verifier.arith.compare import upper
from verifier.errors import InvalidInstance

# --- balls -----------------------------------------------------------------------

@settings(deadline=None)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**32 - 1), st.floats(0, 1e-3))
def test_norm_upper_bounds_are_rigorous(m, n, seed, rad):
    A = np.random.default_rng(seed).standard_normal((m, n)) * 10.0 ** np.random.default_rng(seed).integers(-3, 4)
    B = arb_mat([[arb(float(A[i, j]), rad) for j in range(n)] for i in range(m)]) if rad else to_arb_mat(A)
    absA = np.abs(A) + rad
    assert upper(frobenius_upper(B)) >= np.sqrt((absA ** 2).sum()) * (1 - 1e-15)
    assert upper(inf_norm_upper(B)) >= absA.sum(1).max() * (1 - 1e-15)
    assert upper(one_norm_upper(B)) >= absA.sum(0).max() * (1 - 1e-15)
    assert upper(spectral_norm_upper(B)) >= np.linalg.norm(A, 2) * (1 - 1e-15)
    assert np.all(arb_mat_abs_upper(B) >= np.abs(A))
    assert np.all(arb_mat_rad_upper(B) >= rad)
    assert np.array_equal(arb_mat_mid(to_arb_mat(A)), A)  # float64 converts exactly


def test_to_arb_mat_is_exact_and_validates():
    M = to_arb_mat(np.array([[0.1, 1e-300, -3.0]]))
    assert all(e.is_exact() for e in M.entries())
    with pytest.raises(InvalidInstance):
        to_arb_mat(np.array([[np.inf]]))


# --- tightness and edge shapes (mutation testing: a loosened bound must fail) -------

@settings(deadline=None, max_examples=20)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_norm_upper_bounds_are_tight_on_exact_matrices(m, n, seed):
    A = np.random.default_rng(seed).standard_normal((m, n))
    B = to_arb_mat(A)
    tight = 1 + 1e-12
    assert upper(frobenius_upper(B)) <= np.sqrt((A ** 2).sum()) * tight
    assert upper(inf_norm_upper(B)) <= np.abs(A).sum(1).max() * tight
    assert upper(one_norm_upper(B)) <= np.abs(A).sum(0).max() * tight
    fro, hoelder = np.sqrt((A ** 2).sum()), np.sqrt(np.abs(A).sum(0).max() * np.abs(A).sum(1).max())
    assert upper(spectral_norm_upper(B)) <= min(fro, hoelder) * tight


def test_norms_of_empty_and_zero_matrices_are_zero():
    for shape in ((0, 3), (3, 0), (0, 0)):
        M = to_arb_mat(np.zeros(shape))
        assert (M.nrows(), M.ncols()) == shape
        for bound in (frobenius_upper, inf_norm_upper, one_norm_upper, spectral_norm_upper):
            assert upper(bound(M)) <= 1e-300, (shape, bound.__name__)
    for bound in (frobenius_upper, inf_norm_upper, one_norm_upper, spectral_norm_upper):
        assert upper(bound(np.zeros((2, 3)))) <= 1e-300


def test_helpers_on_float_input_and_extremes():
    from verifier.arith.balls import ball_max, ball_min, identity
    A = np.array([[1.0, -2.0], [3.0, 0.5]])
    assert np.array_equal(arb_mat_mid(A), A) and arb_mat_mid(A) is not A
    assert np.array_equal(arb_mat_rad_upper(A), np.zeros((2, 2)))
    assert np.array_equal(arb_mat_abs_upper(A), np.abs(A))
    assert float(ball_max([arb(1), arb(3), arb(2)]).mid()) == 3.0
    assert float(ball_min([arb(2), arb(1), arb(3)]).mid()) == 1.0
    assert float(ball_min([arb(3), arb(2), arb(1)]).mid()) == 1.0
    I0 = identity(0)
    assert (I0.nrows(), I0.ncols()) == (0, 0) and identity(2)[1, 1] == 1 and identity(2)[0, 1] == 0
    with pytest.raises(InvalidInstance):
        identity(-1)


def test_values_float64_would_round_are_refused_not_rounded():
    """A certificate of the rounded matrix is not one of the matrix given:
    [[2^53 + 1, 3 (2^53 + 1)], [1, 3]] is singular, its float64 copy is not."""
    from fractions import Fraction

    import numpy as np
    import pytest

    from verifier.arith.balls import as_float_matrix, exact_rationals_if_rounded
    from verifier.arith.rank import certify_rank_lower_bound
    from verifier.errors import InvalidInstance

    A = [[2**53 + 1, 3 * 2**53 + 3], [1, 3]]
    for value in (A, np.array(A, dtype=np.int64), np.array(A, dtype=object),
                  np.array([[Fraction(1, 3), 1.0], [0.0, 1.0]], dtype=object),
                  np.array([[np.longdouble(1) + np.finfo(np.longdouble).eps, 1.0], [0.0, 1.0]])
                  if np.finfo(np.longdouble).eps < 2.0**-52 else A):
        with pytest.raises(InvalidInstance, match="float64 would round"):
            as_float_matrix(value)
        with pytest.raises(InvalidInstance, match="float64 would round"):
            certify_rank_lower_bound(value, k=2)
    assert as_float_matrix(A, rounding=True)[0, 0] == 2.0**53  # the caller keeps the exact values
    for exact in ([[2**53, -(2**53)], [1, 2]], np.array([[0.5, 2**-1074], [1, 2]]), np.int64([[7, 1], [2, 3]]),
                  np.float32([[0.1, 1], [2, 3]]), np.array([[True, False], [False, True]])):
        assert np.array_equal(as_float_matrix(exact), np.asarray(exact, dtype=np.float64))
        assert exact_rationals_if_rounded(exact) is None
    Q = exact_rationals_if_rounded(np.array(A, dtype=np.int64))
    assert Q.dtype == object and int(Q[0, 0].p) == 2**53 + 1 and Q.shape == (2, 2)


def test_long_doubles_and_numpy_scalars_are_read_as_the_rationals_they_encode():
    """One exact reader (exact.to_fmpq) for every path: a long double 1/3 is
    its own 64-bit-mantissa rational (not 0, not its float64 rounding)."""
    from fractions import Fraction

    import numpy as np
    import pytest

    from verifier.arith.balls import as_float_matrix, exact_rationals_if_rounded
    from verifier.arith.exact import to_fmpq
    from verifier.errors import InvalidInstance

    third = np.longdouble(1) / np.longdouble(3)
    p, q = third.as_integer_ratio()
    assert to_fmpq(third) == to_fmpq(Fraction(p, q))
    assert to_fmpq(np.float32(0.1)) == to_fmpq(Fraction(13421773, 134217728))
    if np.finfo(np.longdouble).eps < 2.0**-52:  # a wider long double: float64 rounds 1/3
        Q = exact_rationals_if_rounded(np.array([[third, 1], [0, 1]], dtype=np.longdouble))
        assert Q[0, 0] == to_fmpq(Fraction(p, q)) and Q[0, 0] != to_fmpq(float(third))
    for bad in (np.array([["0.5", "1"], ["0", "1"]]), np.array([["0.5", 1.0], [0.0, 1.0]], dtype=object)):
        with pytest.raises(InvalidInstance, match="not a"):
            as_float_matrix(bad)
