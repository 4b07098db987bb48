"""Rank lower bounds by the float path, cross-checked against the arb path:
on every size where arb runs, both agree on every TRUE, and the float path
never says TRUE above the exact rank."""
import numpy as np
import pytest
from flint import arb_mat
from hypothesis import given, settings

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.arith.float_certificates import FloatBall
from verifier.arith.rank import FLOAT_FROM, certify_rank_lower_bound
from verifier.data.strategies import low_rank_integer_matrices, rational_matrices


@settings(deadline=None)
@given(low_rank_integer_matrices())
def test_float_path_never_exceeds_exact_rank(A):
    r = exact_rank(A)
    for k in range(1, min(A.shape) + 1):
        res = certify_rank_lower_bound(A, k=k, method="float")
        if res.decision is Decision.TRUE:
            assert k <= r and "float64" in res.method
            assert exact_rank(A[np.ix_(list(res.rows), list(res.cols))]) == k
    # small integer matrices are easy: the float path reaches the exact rank
    assert certify_rank_lower_bound(A, method="float").certified_k == r


@settings(deadline=None)
@given(rational_matrices())
def test_float_path_on_arb_balls_never_exceeds_exact_rank(rows):
    Q = to_fmpq_mat(rows)
    r = exact_rank(Q)
    B = arb_mat(Q)
    for k in range(1, min(Q.nrows(), Q.ncols()) + 1):
        f = certify_rank_lower_bound(B, k=k, method="float")
        a = certify_rank_lower_bound(B, k=k, method="arb")
        if f.decision is Decision.TRUE:
            assert k <= r
            assert a.decision is Decision.TRUE  # both paths agree on every TRUE


@pytest.mark.parametrize("shape", [(30, 30), (70, 150), (150, 70), (200, 200)])
def test_float_and_arb_agree_on_random_and_planted_low_rank(shape):
    rng = np.random.default_rng(sum(shape))
    A = rng.standard_normal(shape)
    f = certify_rank_lower_bound(A, k=min(shape), method="float")
    a = certify_rank_lower_bound(A, k=min(shape), method="arb")
    assert f.decision is Decision.TRUE and a.decision is Decision.TRUE
    assert f.residual_norm_upper >= a.residual_norm_upper * 0.5  # float bounds are never much tighter
    m = min(shape) // 2
    L = (rng.integers(-3, 4, (shape[0], m)) @ rng.integers(-3, 4, (m, shape[1]))).astype(float)  # exact rank <= m
    over = certify_rank_lower_bound(L, k=m + 1, method="float")
    assert over.decision is not Decision.TRUE


def test_auto_uses_float_above_the_threshold_and_names_it():
    A = np.random.default_rng(9).standard_normal((FLOAT_FROM + 1, FLOAT_FROM + 1))
    assert "float64 verification" in certify_rank_lower_bound(A).method
    assert certify_rank_lower_bound(A[:FLOAT_FROM, :FLOAT_FROM]).method.startswith("arb")


def test_float_ball_minor_with_a_singular_member_is_not_certified():
    mid = np.eye(80)
    mid[0, 1] = 1.0
    mid[1, 0] = 1.0 - 2.0**-30  # det of the top 2x2 block: 2^-30
    rad = np.zeros_like(mid)
    rad[1, 0] = 2.0**-29  # the ball holds a singular matrix
    res = certify_rank_lower_bound(FloatBall(mid, rad), k=80, method="float")
    assert res.decision is Decision.UNDECIDED
    rad[1, 0] = 2.0**-50
    assert certify_rank_lower_bound(FloatBall(mid, rad), k=80, method="float").decision is Decision.TRUE
