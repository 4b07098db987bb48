"""Exact linear algebra over Q (verifier/arith/exact.py)."""
from fractions import Fraction

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.exact import exact_nullspace, exact_rank


def test_exact_helpers_accept_many_number_types():
    import sympy
    rows = [[Fraction(1, 2), sympy.Rational(1, 3), fmpq(1, 5)], [1, 2, "3/4"]]
    assert exact_rank(rows) == 2
    assert exact_rank(fmpq_mat(2, 2, [1, 2, 2, 4])) == 1
    assert exact_nullspace(np.eye(3)) == []


# --- every input type and edge shape, exactly (mutation survivors) ---------------------

import numbers  # noqa: E402

import pytest  # noqa: E402
from flint import fmpz, fmpz_mat  # noqa: E402

from verifier.arith.exact import exact_matvec, exact_matvec_is_zero, to_fmpq, to_fmpq_mat, to_fmpq_vector  # noqa: E402
from verifier.errors import InvalidInstance  # noqa: E402


class _MyRational:
    """A numbers.Rational that is neither Fraction nor sympy (the generic path)."""

    def __init__(self, p, q):
        self.numerator, self.denominator = p, q


numbers.Rational.register(_MyRational)


def test_to_fmpq_reads_each_number_type_exactly():
    import sympy
    assert to_fmpq(True) == 1 and to_fmpq(np.bool_(False)) == 0
    assert to_fmpq(np.int64(-7)) == -7 and to_fmpq(fmpz(9)) == 9 and to_fmpq(3) == 3
    assert to_fmpq(0.1) == fmpq(3602879701896397, 36028797018963968)
    assert to_fmpq(np.float32(0.5)) == fmpq(1, 2) and to_fmpq(-2.75) == fmpq(-11, 4)
    assert to_fmpq(Fraction(-3, 7)) == fmpq(-3, 7)
    assert to_fmpq(" -3/4 ") == fmpq(-3, 4)
    assert to_fmpq(sympy.Rational(5, 6)) == fmpq(5, 6) and to_fmpq(sympy.Integer(-4)) == -4
    assert to_fmpq(_MyRational(2, 9)) == fmpq(2, 9)
    assert to_fmpq(fmpq(1, 3)) == fmpq(1, 3)
    for bad in (float("nan"), float("inf"), "x/2", "1/0", object()):
        with pytest.raises(InvalidInstance):
            to_fmpq(bad)


def test_half_integer_rows_keep_their_rank():
    """Rows are scaled by the lcm of their denominators (2 included)."""
    assert exact_rank([[0.5, 1.5], [1.0, 3.0]]) == 1
    assert exact_rank([[0.5, 1.5], [1.0, 2.0]]) == 2
    assert exact_rank([[0.5, 0.25], [0.75, 0.125]]) == 2
    assert [str(x) for x in exact_nullspace([[0.5, 1.5]])[0]] == ["3", "-1"]


def test_nullspace_basis_is_primitive_with_a_positive_lead():
    assert [[str(x) for x in v] for v in exact_nullspace([[2, 4]])] == [["2", "-1"]]
    assert [[str(x) for x in v] for v in exact_nullspace([[-1, 2]])] == [["2", "1"]]
    assert [[str(x) for x in v] for v in exact_nullspace([[6, 0, -3]])] == [["0", "1", "0"], ["1", "0", "2"]] or \
        all(sum(int(x) != 0 for x in v) and next(int(x) for x in v if x != 0) > 0 for v in exact_nullspace([[6, 0, -3]]))


def test_edge_shapes():
    assert exact_rank(np.zeros((0, 3))) == 0 and exact_rank(np.zeros((3, 0))) == 0
    assert exact_rank([[0.0, 0.0]]) == 0
    basis = exact_nullspace(np.zeros((0, 2)))
    assert [[str(x) for x in v] for v in basis] == [["1", "0"], ["0", "1"]]
    assert exact_nullspace(np.zeros((2, 0))) == []
    assert exact_matvec(np.zeros((2, 0)), []) == [0, 0]
    assert exact_matvec([[1, 2], [3, 4]], [1, -1]) == [-1, -1]
    assert exact_matvec_is_zero([[1, 2]], [2, -1]) and not exact_matvec_is_zero([[1, 2]], [1, 1])
    with pytest.raises(InvalidInstance):
        exact_matvec([[1, 2]], [1, 2, 3])
    Q = to_fmpq_mat([])
    assert (Q.nrows(), Q.ncols()) == (0, 0)
    assert to_fmpq_mat(fmpz_mat(1, 2, [3, 4])) == fmpq_mat(1, 2, [3, 4])
    assert to_fmpq_mat(np.array([[1, 2]], dtype=np.int64)) == fmpq_mat(1, 2, [1, 2])
    assert to_fmpq_mat(np.array([["1/3", "2"]], dtype=object)) == fmpq_mat(1, 2, [fmpq(1, 3), 2])
    assert to_fmpq_vector(np.array([0.5, 2.0])) == [fmpq(1, 2), fmpq(2)]
    with pytest.raises(InvalidInstance):
        to_fmpq_vector(np.zeros((2, 2)))
    with pytest.raises(InvalidInstance):
        to_fmpq_mat(np.array([[np.nan]]))
    with pytest.raises(InvalidInstance):
        to_fmpq_mat([[1, 2], [3]])


def test_integer_entries_take_flints_integer_rank():
    """exact_rank of rows of Python ints or of an integer array (issue 38: no
    rationals formed) is the rational rank; big integers stay exact; a bool,
    a float or a Fraction among them goes the rational way, with the same
    answer."""
    big = 2**80
    rows = [[1, 2, 3], [2, 4, 6], [big, big + 1, 0]]
    assert exact_rank(rows) == 2 == exact_rank(fmpq_mat(3, 3, [fmpq(v) for r in rows for v in r]))
    assert exact_rank([[big + 1, big], [big, big - 1]]) == 2  # det = -1: a float64 rounding would say 1
    assert exact_rank(np.array([[1, 2], [2, 4]], dtype=np.int64)) == 1
    assert exact_rank(np.array([[1, 2], [3, 4]], dtype=np.uint8)) == 2
    assert exact_rank([[True, 1], [1, 1]]) == 1 and exact_rank([[1, 0.5], [2, 1.0]]) == 1
    assert exact_rank([[1, Fraction(1, 3)], [3, 1]]) == 1
    assert exact_rank([]) == 0 and exact_rank([[]]) == 0 and exact_rank(np.zeros((0, 3), dtype=int)) == 0
    with pytest.raises(InvalidInstance):
        exact_rank([[1, 2], [3]])  # ragged: refused as before
