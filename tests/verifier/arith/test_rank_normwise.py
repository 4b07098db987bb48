"""Weyl's normwise rank certificate on a ball (verifier/arith/rank_normwise.py)."""
from __future__ import annotations

import numpy as np

from verifier.arith.compare import Decision
from verifier.arith.float_certificates import FloatBall
from verifier.arith.rank_normwise import frobenius_up, normwise_rank


def test_normwise_rank_never_certifies_a_ball_that_holds_a_singular_matrix():
    """Weyl's test on a ball: certified on a well-conditioned one; never when
    the ball contains a singular matrix (mid + a perturbation within rad), and
    never on an exactly dependent midpoint."""

    rng = np.random.default_rng(0)
    mid = rng.standard_normal((5, 20))
    assert normwise_rank(FloatBall(mid, np.full(mid.shape, 1e-3)), range(5)).decision is Decision.TRUE
    singular = mid.copy()
    singular[4] = singular[0] + singular[1]  # exactly (well: to float rounding) dependent
    v = rng.standard_normal(20)
    near = singular.copy()
    near[4] += 1e-4 * v / np.linalg.norm(v)  # distance to the singular matrix: 1e-4 (2-norm)
    rad = np.zeros(mid.shape)
    rad[4] = np.abs(near[4] - singular[4]) * 1.01  # the ball holds `singular` (entrywise)
    assert normwise_rank(FloatBall(near, rad), range(5)).decision is not Decision.TRUE
    exact_dep = np.vstack([mid[:4], mid[0] * 2.0])  # row 4 = 2 row 0, exactly
    assert normwise_rank(FloatBall(exact_dep, None), range(5)).decision is not Decision.TRUE


def test_frobenius_bound_is_above_the_exact_norm():
    from fractions import Fraction

    from verifier.arith.backend import get_backend

    rng = np.random.default_rng(2)
    for scale in (1e-300, 1e-20, 1.0, 1e100):
        rad = np.abs(rng.standard_normal((7, 9))) * scale
        r = frobenius_up(get_backend("numpy"), rad)
        assert Fraction(r) ** 2 >= sum(Fraction(float(x)) ** 2 for x in rad.ravel())
