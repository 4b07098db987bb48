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
