"""Certified rank lower bounds (verifier/arith/rank.py).

The central property: a certified lower bound never exceeds the exact rank
over Q.
"""

import numpy as np
import pytest
from flint import arb, arb_mat
from hypothesis import given, settings

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.arith.rank import (
    certify_full_row_rank,
    certify_rank_lower_bound,
    numerical_rank,
)
from verifier.data.strategies import low_rank_integer_matrices, rational_matrices
from verifier.errors import InvalidInstance

# --- lower bounds -------------------------------------------------------------

@settings(deadline=None)
@given(low_rank_integer_matrices())
def test_lower_bound_never_exceeds_exact_rank(A):
    r = exact_rank(A)
    lb = certify_rank_lower_bound(A)
    assert lb.decision is Decision.TRUE  # k=None: some k (maybe 0) is always certified
    assert lb.k <= r
    # small integer matrices are easy: the certified bound is the exact rank
    assert lb.k == r
    for k in range(0, min(A.shape) + 2):
        res = certify_rank_lower_bound(A, k=k)
        if res.decision is Decision.TRUE:
            assert k <= r
            rows, cols = list(res.rows), list(res.cols)
            assert exact_rank(A[np.ix_(rows, cols)]) == k  # the minor really is nonsingular
        elif k <= r:
            assert res.decision is Decision.UNDECIDED


@settings(deadline=None)
@given(rational_matrices())
def test_ball_enclosure_lower_bound_never_exceeds_exact_rank(rows):
    Q = to_fmpq_mat(rows)
    r = exact_rank(Q)
    B = arb_mat(Q)  # balls around the rationals
    lb = certify_rank_lower_bound(B)
    if lb.decision is Decision.TRUE:
        assert lb.k <= r
    for k in range(1, min(Q.nrows(), Q.ncols()) + 1):
        if certify_rank_lower_bound(B, k=k).decision is Decision.TRUE:
            assert k <= r


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (20, 20), (40, 90), (90, 40)])
def test_full_rank_random_matrices_are_certified(shape):
    A = np.random.default_rng(sum(shape)).standard_normal(shape)
    lb = certify_rank_lower_bound(A)
    assert lb.decision is Decision.TRUE and lb.k == min(shape)
    assert lb.residual_norm_upper < 1
    if shape[0] <= shape[1]:
        assert certify_full_row_rank(A).decision is Decision.TRUE


def test_rank_deficient_full_row_rank_is_not_certified():
    rng = np.random.default_rng(1)
    A = (rng.integers(-3, 4, (6, 3)) @ rng.integers(-3, 4, (3, 9))).astype(float)
    res = certify_full_row_rank(A, max_prec=256)
    assert res.decision is Decision.UNDECIDED and res.certified_k == 0
    assert certify_full_row_rank(A.T).decision is Decision.FALSE  # 9 rows > 6 columns


def test_float_product_is_not_exactly_low_rank_and_higher_precision_finds_it():
    """A float64 product of rank-2 factors is rounded: its EXACT rank is full,
    which the precision ladder certifies though floats call it rank 2.  Which
    rung decides depends on this machine's float inverse (it may even raise
    LinAlgError: then the ladder starts with the approximate solve), so only
    the decision is asserted; test_float_failures_climb patches the float step."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 8))
    assert numerical_rank(A) == 2
    assert exact_rank(A) == 8
    res = certify_rank_lower_bound(A, k=8)
    assert res.decision is Decision.TRUE and res.certified_k == 8


def test_wide_balls_are_undecided_not_wrong():
    A = np.eye(3)
    B = arb_mat([[arb(A[i, j], 2.0) for j in range(3)] for i in range(3)])  # contains 0
    assert certify_rank_lower_bound(B, k=3).decision is Decision.UNDECIDED
    narrow = arb_mat([[arb(A[i, j], 1e-6) for j in range(3)] for i in range(3)])
    assert certify_rank_lower_bound(narrow, k=3).decision is Decision.TRUE


def test_lower_bound_to_dict_and_invalid_input():
    d = certify_rank_lower_bound(np.eye(2)).to_dict()
    assert d["decision"] == "true" and d["k"] == 2 and d["rows"] == [0, 1]
    with pytest.raises(InvalidInstance):
        certify_rank_lower_bound(np.array([[1.0, np.nan]]))
    with pytest.raises(InvalidInstance):
        certify_rank_lower_bound(np.ones(3))
