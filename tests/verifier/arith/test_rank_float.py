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


def test_subset_independence_float_prepass_agrees_with_mod_p_and_misses_no_dependence():
    """k >= FLOAT_FROM_K: the float certificate decides first; on exactly
    dependent subsets (a planted exact combination) it must say nothing, and
    where it certifies, elimination mod p agrees."""
    from verifier.arith.independence import _PRIMES, FLOAT_FROM_K, SubsetIndependence, _full_rank_mod_p

    rng = np.random.default_rng(11)
    k, d, m = FLOAT_FROM_K + 2, FLOAT_FROM_K + 10, FLOAT_FROM_K + 20
    V = np.round(rng.standard_normal((m, d)) * 64) / 64
    V[3] = V[0] + V[1] - 0.5 * V[2]  # exact (dyadic): every subset holding 0, 1, 2, 3 is dependent
    sets = SubsetIndependence(V)
    idx = np.array([sorted(rng.choice(m, k, replace=False)) for _ in range(40)]
                   + [sorted([0, 1, 2, 3] + list(rng.choice(np.arange(4, m), k - 4, replace=False))) for _ in range(5)])
    cert = sets._float_certified(idx)
    assert not cert[-5:].any()  # never on a dependent subset
    assert cert[:40].mean() > 0.5  # and it does decide most random ones
    W = sets._projected(_PRIMES[0], k)
    modp = _full_rank_mod_p(W[idx[cert]], _PRIMES[0])
    assert modp.all()
    ok, dep, b = sets.independent(idx)
    assert dep is not None and {0, 1, 2, 3} <= set(dep[0])  # the exact path still finds the dependence
