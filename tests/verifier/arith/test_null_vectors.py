"""Certified rank upper bounds (verifier/arith/null_vectors.py): only true,
independent null vectors are accepted."""

import numpy as np
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.balls import (
    to_arb_mat,
)
from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero, exact_nullspace, exact_rank
from verifier.arith.null_vectors import certify_rank_upper_bound, certify_rank_upper_bound_exact
from verifier.data.strategies import low_rank_integer_matrices
from verifier.errors import InvalidInstance

# --- upper bounds ---------------------------------------------------------------

@settings(deadline=None)
@given(low_rank_integer_matrices())
def test_exact_upper_bound_is_the_rank_and_its_vectors_are_null(A):
    ub = certify_rank_upper_bound_exact(A)
    assert ub.decision is Decision.TRUE
    assert ub.k_upper == exact_rank(A)
    assert all(exact_matvec_is_zero(A, v) for v in ub.null_vectors)
    assert certify_rank_upper_bound(A, [[str(x) for x in v] for v in ub.null_vectors]).decision is Decision.TRUE


@settings(deadline=None)
@given(low_rank_integer_matrices(), st.integers(0, 5), st.integers(1, 3))
def test_upper_bound_rejects_a_wrong_null_vector(A, pos, bump):
    """Negative control: a vector that is not in the null space is rejected."""
    n = A.shape[1]
    basis = exact_nullspace(A)
    v = list(basis[0]) if basis else [fmpq(0)] * n
    v[pos % n] += bump
    if exact_matvec_is_zero(A, v):  # still null (possible): make sure it is a real control
        return
    res = certify_rank_upper_bound(A, [v])
    assert res.decision is Decision.FALSE and "not in the null space" in res.reason


def test_upper_bound_rejects_dependent_vectors_and_balls():
    A = np.array([[1.0, 1.0, 0.0]])
    v = [1, -1, 0]
    assert certify_rank_upper_bound(A, [v, v]).decision is Decision.FALSE
    ok = certify_rank_upper_bound(A, [v, [0, 0, 1]])
    assert ok.decision is Decision.TRUE and ok.k_upper == 1
    assert ok.to_dict()["null_vectors"] == [["1", "-1", "0"], ["0", "0", "1"]]
    with pytest.raises(InvalidInstance):
        certify_rank_upper_bound(to_arb_mat(A), [v])
    with pytest.raises(InvalidInstance):
        certify_rank_upper_bound(A, [[1, 2]])
