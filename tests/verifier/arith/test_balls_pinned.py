"""Pinned behaviour of verifier/arith/balls.py (mutation testing, issue 9)."""
import numpy as np
import pytest
from flint import arb, arb_mat

from verifier.arith.balls import (
    arb_mat_abs_upper,
    arb_mat_rad_upper,
    as_float_matrix,
    ball_max,
    ball_min,
    frobenius_upper,
    inf_norm_upper,
    spectral_norm_upper,
)
from verifier.arith.compare import upper
from verifier.errors import InvalidInstance


def test_exact_zeros_stay_zero_and_underflowed_values_do_not():
    tiny = arb(2) ** -1100  # nonzero, float() rounds it to 0
    U = arb_mat_abs_upper(arb_mat([[tiny, arb(0)], [arb(0), arb(3)]]))
    assert U[0, 0] > 0 and U[0, 1] == 0 and U[1, 0] == 0 and U[1, 1] >= 3
    R = arb_mat_rad_upper(arb_mat([[arb(1), arb("0 +/- 1e-330")]]))
    assert R[0, 0] == 0 and R[0, 1] > 0
    Z = arb_mat([[arb(0), arb(0)], [arb(0), arb(0)]])
    assert frobenius_upper(Z).value == 0 and inf_norm_upper(Z).value == 0 and spectral_norm_upper(Z).value == 0
    assert upper(frobenius_upper(arb_mat([[tiny]]))) > 0


def test_ball_max_and_min_read_every_ball():
    xs = [arb(5), arb(1), arb(2)]
    assert ball_max(xs) == 5 and ball_min(xs) == 1
    assert ball_max([arb(1), arb(5)]) == 5 and ball_min([arb(5), arb(1)]) == 1
    assert ball_max([arb(7)]) == 7 and ball_min([arb(7)]) == 7


def test_as_float_matrix_gives_float64_or_one_line_errors():
    a = as_float_matrix([[1, 2], [3, 4]])
    assert a.dtype == np.float64 and a.shape == (2, 2)
    with pytest.raises(InvalidInstance, match="not a real matrix"):
        as_float_matrix([["a", "b"]])
    with pytest.raises(InvalidInstance, match="expected a 2-D weights, got shape \\(3,\\)"):
        as_float_matrix([1.0, 2.0, 3.0], "weights")
    with pytest.raises(InvalidInstance, match="matrix has NaN or infinite entries"):
        as_float_matrix([[np.inf]])
