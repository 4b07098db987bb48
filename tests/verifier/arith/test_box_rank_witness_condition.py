"""The exact witness condition of verifier/arith/box_rank.py (a point P = mid + D of the OPEN box of
half-gaps with c^T P = 0) and the half-gaps it reads, on hand-made rationals whose answers follow from
the definition: sum_i c_i D_ij ranges over (L_j, U_j) with U_j = sum_{c_i > 0} c_i up_ij +
sum_{c_i < 0} |c_i| down_ij and L_j = -(sum_{c_i > 0} c_i down_ij + sum_{c_i < 0} |c_i| up_ij); the
point exists iff t_j = -c^T mid_j lies in it for every column (or t_j = 0)."""
import numpy as np
from flint import fmpq

from verifier.arith.box_rank import _point_condition, gap_sides

E = fmpq(1, 2**10)
ROWS = [[fmpq(1)], [1 + E]]  # c = (1, -1): c^T mid = -2^-10
# asymmetric half-gaps: row 0 reaches 2^-9 up and 2^-12 down, row 1 the other way round
UP = [[fmpq(1, 2**9)], [fmpq(1, 2**12)]]
DOWN = [[fmpq(1, 2**12)], [fmpq(1, 2**9)]]


def test_a_zero_combination_is_never_a_witness():
    assert _point_condition([0, 0], ROWS, UP, DOWN) == (False, float("inf"))
    assert _point_condition([fmpq(0), fmpq(0)], [[fmpq(0)], [fmpq(0)]], UP, DOWN) == (False, float("inf"))


def test_a_positive_target_uses_its_share_of_the_upper_reach():
    """c = (1, -1): t = 2^-10, U = 2^-9 + 2^-9 = 2^-8, L = -(2^-12 + 2^-12) = -2^-11: inside, 1/4 used."""
    assert _point_condition([1, -1], ROWS, UP, DOWN) == (True, 0.25)
    assert _point_condition([fmpq(1), fmpq(-1)], ROWS, UP, DOWN) == (True, 0.25)


def test_a_negative_target_uses_its_share_of_the_lower_reach():
    """c = (-1, 1): t = -2^-10, U = 2^-12 + 2^-12 = 2^-11, L = -(2^-9 + 2^-9) = -2^-8: inside, 1/4 used."""
    assert _point_condition([-1, 1], ROWS, UP, DOWN) == (True, 0.25)


def test_the_sign_of_the_target_matters():
    """With the gaps swapped, c = (1, -1) needs t = 2^-10 below U = 2^-11: outside (the reach is one-sided)."""
    assert _point_condition([1, -1], ROWS, DOWN, UP) == (False, float("inf"))
    assert _point_condition([-1, 1], ROWS, DOWN, UP) == (False, float("inf"))


def test_the_box_is_open():
    """t exactly at U (or L) is not reached by any point strictly inside the half-gaps."""
    up = [[fmpq(1, 2**11)], [fmpq(0)]]
    down = [[fmpq(0)], [fmpq(1, 2**11)]]  # U = 2^-11 + 2^-11 = 2^-10 = t
    assert _point_condition([1, -1], ROWS, up, down) == (False, float("inf"))
    up2 = [[fmpq(1, 2**10)], [fmpq(0)]]
    assert _point_condition([1, -1], ROWS, up2, down)[0] is True  # U above t
    # t at L: c = (-1, 1), t = -2^-10, L = -(up_0 + down_1)
    assert _point_condition([-1, 1], ROWS, up, down) == (False, float("inf"))


def test_an_exact_column_needs_an_exact_zero():
    """Column 0 exact (no gaps) and c^T mid_0 = 0: no perturbation needed there; column 1 as above."""
    rows = [[fmpq(2), fmpq(1)], [fmpq(2), 1 + E]]
    up = [[fmpq(0), UP[0][0]], [fmpq(0), UP[1][0]]]
    down = [[fmpq(0), DOWN[0][0]], [fmpq(0), DOWN[1][0]]]
    assert _point_condition([1, -1], rows, up, down) == (True, 0.25)
    rows[1][0] = fmpq(2) + E * E  # now column 0 needs a perturbation it cannot have
    assert _point_condition([1, -1], rows, up, down) == (False, float("inf"))


def test_rational_coefficients_are_taken_exactly():
    """c = (1/3, -1) makes [3; 1] dependent exactly; read through a float, 1/3 would miss by 2^-54."""
    rows = [[fmpq(3)], [fmpq(1)]]
    zero = [[fmpq(0)], [fmpq(0)]]
    assert _point_condition([fmpq(1, 3), fmpq(-1)], rows, zero, zero) == (True, 0.0)
    assert _point_condition([1 / 3, -1.0], rows, zero, zero) == (False, float("inf"))


def test_gap_sides_put_the_away_gap_on_the_side_away_from_zero():
    x = np.array([[0.5, -0.5, 0.0, 3.0]])
    away = np.array([[-10, -10, -20, -1]])
    toward = np.array([[-11, -11, -21, -2]])
    mask = np.array([[True, True, True, False]])
    up, down = gap_sides(x, away, toward, mask)
    assert up == [[fmpq(1, 2**10), fmpq(1, 2**11), fmpq(1, 2**20), fmpq(0)]]
    assert down == [[fmpq(1, 2**11), fmpq(1, 2**10), fmpq(1, 2**20), fmpq(0)]]
    # a masked entry (exact) in the middle does not stop the row
    mask = np.array([[True, False, True, True]])
    up, down = gap_sides(x, away, toward, mask)
    assert up[0][1] == down[0][1] == 0 and up[0][3] == fmpq(1, 2) and down[0][3] == fmpq(1, 4)
    # exact rationals given as lists of fmpq rows read the same
    assert gap_sides([[fmpq(1, 2), fmpq(-1, 2), fmpq(0), fmpq(3)]], away, toward, mask) == (up, down)


def test_stored_values_are_read_exactly_whatever_their_type():
    """int64 beyond 2^53, Fractions and fmpq stand for themselves; a float for the rational it encodes."""
    from fractions import Fraction

    from verifier.arith.box_rank import _fmpq_rows

    rows = _fmpq_rows(np.array([[2**62 + 1, Fraction(1, 3)], [fmpq(2, 7), 0.1]], dtype=object))
    assert rows == [[fmpq(2**62 + 1), fmpq(1, 3)], [fmpq(2, 7), fmpq(*(0.1).as_integer_ratio())]]
    # 2^53 + 1 and 2^53 are dependent only through a float detour: exactly, [2^53 + 1] - [2^53] != 0
    big = [[fmpq(2**53 + 1)], [fmpq(2**53)]]
    zero = [[fmpq(0)], [fmpq(0)]]
    assert _point_condition([1, -1], _fmpq_rows(np.array([[2**53 + 1], [2**53]], dtype=np.int64)), zero, zero) == (
        False, float("inf"))
    assert _point_condition([1, -1], big, zero, zero) == (False, float("inf"))


def test_a_witness_holds_its_coefficients_as_exact_rationals():
    from verifier.arith.box_rank import singular_point

    S = np.array([[1.0, 2.0], [2.0, 4.0000001]])
    up, down = gap_sides(S, np.full((2, 2), -24), np.full((2, 2), -25), np.ones((2, 2), bool))
    w = singular_point(S, up, down)
    assert w is not None and all(isinstance(x, fmpq) for x in w.c)
    assert _point_condition(w.c, [[fmpq(*float(x).as_integer_ratio()) for x in r] for r in S], up, down)[0]
    assert w.to_dict()["coefficients"] == [str(x) for x in w.c]
