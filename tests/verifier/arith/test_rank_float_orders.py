"""The float rank certificates and the independence prepass under every
summation order of tests/summation_orders.py (issue 17, item 1): a certified
rank >= k is never above the exact rank (python-flint), a certified minor is
exactly nonsingular, a subset the float prepass proves is exactly
independent; on low-rank integer matrices, one ulp from them (exactly full
rank, numerically not), rows scaled by 2^+-300 and tiny Gaussian matrices,
and balls that hold a rank-deficient member."""
from __future__ import annotations

import numpy as np
import pytest
from flint import arb_mat

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank
from verifier.arith.float_certificates import FloatBall
from verifier.arith.independence import SubsetIndependence
from verifier.arith.rank import certify_rank_lower_bound, certify_rank_lower_bound_lazy


def rank_cases():
    rng = np.random.default_rng(21)
    L = (rng.integers(-3, 4, (12, 5)) @ rng.integers(-3, 4, (5, 14))).astype(float)  # exact rank <= 5
    Lu = L.copy()
    Lu[0, 0] = np.nextafter(Lu[0, 0], np.inf) if Lu[0, 0] else 2.0**-1074  # exact rank 6, numerically 5
    S = L * np.ldexp(1.0, rng.integers(-300, 300, (12, 1)))
    G = rng.standard_normal((10, 16)) * 2.0**-200
    return [L, Lu, S, G]


@pytest.mark.parametrize("case", range(4))
def test_float_rank_certificates_never_exceed_the_exact_rank_in_every_order(order, case):
    A = rank_cases()[case]
    r = exact_rank(A)
    for k in range(1, min(A.shape) + 1):
        res = certify_rank_lower_bound(A, k=k, method="float")
        if res.decision is Decision.TRUE:
            assert k <= r, (order, case, k)
            assert exact_rank(A[np.ix_(list(res.rows), list(res.cols))]) == k
    if case in (0, 3):  # integer-valued or well-conditioned: the float path reaches the exact rank
        assert certify_rank_lower_bound(A, method="float").certified_k == r, order


def test_lazy_rank_certificate_with_a_float_ball_minor(order):
    A = rank_cases()[1]
    rad = np.abs(A) * 2.0**-60 + 2.0**-1074  # a ball containing the rank-5 matrix and the rank-6 one
    for k in (5, 6):
        res = certify_rank_lower_bound_lazy(A, k, lambda rows, cols: arb_mat(A[np.ix_(rows, cols)].tolist()),
                                            method="float",
                                            minor_float=lambda rows, cols: FloatBall(A[np.ix_(rows, cols)],
                                                                                     rad[np.ix_(rows, cols)]))
        if res.decision is Decision.TRUE:
            assert k <= 5  # some member of the ball has rank 5: no minor of size 6 is nonsingular for all


def test_independence_float_prepass_proves_only_independent_subsets(order):
    rng = np.random.default_rng(4)
    d, k = 26, 24
    V = rng.integers(-4, 5, (30, d)).astype(float)
    V[25] = V[:k - 1].sum(0)  # subset 0..22 + 25: exactly dependent
    V[26] = V[25].copy()
    V[26, 0] += 2.0**-40  # one tiny step away: independent, nearly dependent
    V[27] = V[1] * 2.0**-30 + V[2]
    subsets = np.array([list(range(k - 1)) + [25], list(range(k - 1)) + [26], list(range(k)),
                        [0, 1, 2] + list(range(4, k)) + [27], list(range(5, k + 5))])
    if order == "fma":
        subsets = subsets[:3]
    ok = SubsetIndependence(V)._float_certified(subsets)
    for s, proved in zip(subsets, ok):
        if proved:
            assert exact_rank(V[s]) == k, (order, s)
    assert ok[2]  # a well-conditioned subset is proved by the float path
