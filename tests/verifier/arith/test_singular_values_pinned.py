"""Pinned tightness and edges of verifier/arith/singular_values.py (mutation
testing, issue 9): every bound is on the right side of the true value (mpmath
SVD at 40 digits) AND as tight as documented, so a loosened or broken step fails."""
import mpmath
import numpy as np
import pytest
from flint import arb, arb_mat

from verifier.arith.compare import lower, upper
from verifier.arith.singular_values import (
    CONVERGED,
    MAX_SQUARINGS,
    REFINE_ABOVE,
    REFINE_STEPS,
    SMALL,
    sigma_min_enclosure,
    sigma_min_lower_bound,
    sigma_min_upper_bound,
    spectral_norm_enclosure,
    spectral_norm_lower_bound,
    spectral_norm_upper_bound,
)
from verifier.errors import InsufficientPrecision, InvalidInstance


def _svals(A):
    with mpmath.workdps(40):
        return sorted((float(s) for s in mpmath.svd_r(mpmath.matrix(A.tolist()), compute_uv=False)), reverse=True)


A = np.random.default_rng(5).standard_normal((4, 6))
S = _svals(A)


def test_constants():
    assert (SMALL, MAX_SQUARINGS, CONVERGED, REFINE_STEPS, REFINE_ABOVE) == (64, {True: 20, False: 4}, 1e-12, 3, 1e-12)


def test_sigma_min_bounds_are_sound_and_tight():
    lo, hi = float(sigma_min_lower_bound(A).value.mid()), upper(sigma_min_upper_bound(A))
    assert S[-1] * (1 - 1e-6) <= lo <= S[-1] <= hi <= S[-1] * (1 + 1e-12)
    e = sigma_min_enclosure(A)
    assert lower(e) <= S[-1] <= upper(e) and upper(e) - lower(e) < 1e-6 * S[-1]
    # fixed squarings: monotone, 0 = the cheap norm bound of R
    few, more = (float(sigma_min_lower_bound(A, squarings=j).value.mid()) for j in (1, 4))
    none = float(sigma_min_lower_bound(A, squarings=0).value.mid())
    assert 0 < none <= few < more <= lo * (1 + 1e-12) and none < 0.999 * lo
    assert float(sigma_min_enclosure(A, squarings=1).lower.value.mid()) == few
    # early stop once the bound exceeds at_least (looser, still sound, above the target)
    stop = float(sigma_min_lower_bound(A, at_least=S[-1] / 4).value.mid())
    assert S[-1] / 4 <= stop <= lo and stop < lo * (1 - 1e-9)
    assert float(sigma_min_lower_bound(A, at_least=0).value.mid()) == lo


def test_sigma_min_of_an_ill_conditioned_matrix_refines_R():
    B = np.array([[1.0, 1.0, 0.0], [1.0, 1.0 + 2.0 ** -30, 0.0]])
    s = _svals(B)[-1]
    lo = float(sigma_min_lower_bound(B).value.mid())
    assert s * (1 - 1e-6) <= lo <= s
    assert upper(sigma_min_upper_bound(B)) >= s
    with pytest.raises(InsufficientPrecision, match="not certainly positive"):
        sigma_min_lower_bound(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(InvalidInstance, match="needs T <= m"):
        sigma_min_lower_bound(np.ones((3, 2)))
    with pytest.raises(InvalidInstance, match="empty matrix"):
        sigma_min_lower_bound(np.zeros((0, 2)))
    with pytest.raises(InvalidInstance):
        sigma_min_upper_bound(np.ones((3, 2)))
    with pytest.raises(InvalidInstance, match="test vector is zero"):
        sigma_min_upper_bound(A, x=np.zeros(4))


def test_upper_bound_with_a_given_vector_and_balls():
    x = np.array([1.0, 0.0, 0.0, 0.0])
    assert upper(sigma_min_upper_bound(A, x=x)) >= np.linalg.norm(A[0]) * (1 - 1e-15)
    assert upper(sigma_min_upper_bound(A, x=2 * x)) == pytest.approx(np.linalg.norm(A[0]), rel=1e-14)
    ball = arb_mat([[arb(float(A[i, j]), 1e-9) for j in range(6)] for i in range(4)])
    lo, hi = float(sigma_min_lower_bound(ball).value.mid()), upper(sigma_min_upper_bound(ball))
    assert S[-1] - 1e-7 < lo <= S[-1] <= hi < S[-1] + 1e-7 and hi - lo > 1e-9  # the radius counts


def test_spectral_norm_bounds_are_sound_and_tight():
    lo, hi = float(spectral_norm_lower_bound(A).value.mid()), upper(spectral_norm_upper_bound(A))
    assert S[0] * (1 - 1e-12) <= lo <= S[0] <= hi <= S[0] * (1 + 1e-6)
    e = spectral_norm_enclosure(A, squarings=2)
    assert lower(e) <= S[0] <= upper(e)
    one = upper(spectral_norm_upper_bound(A, squarings=0))
    assert hi <= one and one > S[0] * (1 + 1e-9)  # no squaring: ||G||_F^(1/2), looser
    v = np.array([1.0, 0, 0, 0, 0, 0])
    assert float(spectral_norm_lower_bound(A, x=v).value.mid()) == pytest.approx(np.linalg.norm(A[:, 0]), rel=1e-14)
    assert float(spectral_norm_lower_bound(A, x=3 * v).value.mid()) == pytest.approx(np.linalg.norm(A[:, 0]), rel=1e-14)
    assert spectral_norm_lower_bound(np.zeros((2, 3))).value == 0 and spectral_norm_lower_bound(np.zeros((0, 3))).value == 0
    assert spectral_norm_upper_bound(np.zeros((2, 3))).value == 0 and spectral_norm_upper_bound(np.zeros((0, 3))).value == 0
    tall = A.T  # 6 x 4: the Gram matrix on the short side
    assert S[0] <= upper(spectral_norm_upper_bound(tall)) <= S[0] * (1 + 1e-6)
    big = 1e150 * A  # rescaled by exact powers of two inside: no overflow
    assert S[0] * 1e150 * (1 - 1e-12) <= upper(spectral_norm_upper_bound(big)) <= S[0] * 1e150 * (1 + 1e-6)


def test_balls_count_in_every_bound():
    """For the ball mid +/- r (entrywise) some member has sigma_min <= sigma(mid) - r
    and some has ||X|| >= ||mid|| + r (rank-one perturbations of entries <= r), so the
    one-sided bounds over the ball must leave that room: bounds of the midpoint alone fail."""
    r = 1e-3
    ball = arb_mat([[arb(float(A[i, j]), r) for j in range(6)] for i in range(4)])
    assert lower(sigma_min_lower_bound(ball)) <= S[-1] - r
    assert upper(sigma_min_upper_bound(ball)) >= S[-1] + r
    assert lower(spectral_norm_lower_bound(ball)) <= S[0] - r
    assert upper(spectral_norm_upper_bound(ball)) >= S[0] + r


def test_a_ball_around_zero_is_not_the_zero_matrix():
    """Found by mutation testing: the Gram-power bound returned 0 when the
    midpoints were 0, ignoring the radii ([[0 +/- 1]] holds [[1]], of norm 1)."""
    assert upper(spectral_norm_upper_bound(arb_mat([[arb(0, 1)]]))) >= 1
    assert upper(spectral_norm_upper_bound(arb_mat([[arb(0, 1), arb(0, 1)], [arb(0, 1), arb(0, 1)]]))) >= 2
    assert spectral_norm_upper_bound(arb_mat([[arb(0), arb(0)]])).value == 0


def test_vector_norm_is_an_enclosure_of_floats_and_the_enclosure_passes_squarings():
    from verifier.arith.singular_values import _vector_norm_ball

    assert _vector_norm_ball([0.1]).contains(arb(0.1))  # squares in arb: fl(0.1 * 0.1) would miss it
    assert _vector_norm_ball(arb_mat([[arb(3.0)], [arb(4.0)]])) == 5
    e0 = spectral_norm_enclosure(A, squarings=0)
    assert upper(e0) == upper(spectral_norm_upper_bound(A, squarings=0)) > S[0] * (1 + 1e-9)


def test_float_svd_is_thin_and_falls_back_to_gesvd_when_gesdd_fails(request):
    """_float_svd gives the thin SVD (U: T x k, Vt: k x m, k = min(T, m)); when gesdd does
    not converge (patched: numpy's svd raises, and scipy's svd raises for any driver but
    gesvd) scipy's gesvd gives the same thin factors, and the test vectors still choose
    ||A||_2 and sigma_min of a diagonal matrix."""
    import verifier.arith.singular_values as sv

    A = np.array([[3.0, 0.0, 0.0], [0.0, 0.25, 0.0]])
    for M in (A, A.T):
        U, s, Vt = sv._float_svd(M)
        assert U.shape == (M.shape[0], 2) and s.shape == (2,) and Vt.shape == (2, M.shape[1])

    request.getfixturevalue("only_gesvd")  # gesdd fails from here on (conftest)
    with pytest.raises(np.linalg.LinAlgError):  # the failure is in place
        np.linalg.svd(np.eye(2))
    for M in (A, A.T):
        U, s, Vt = sv._float_svd(M)
        assert U.shape == (M.shape[0], 2) and Vt.shape == (2, M.shape[1])
        assert np.allclose(s, [3.0, 0.25], rtol=1e-12, atol=0)
    assert 3.0 * (1 - 1e-12) < lower(sv.spectral_norm_lower_bound(A)) <= 3.0
    assert 0.25 <= upper(sv.sigma_min_upper_bound(A)) < 0.25 * (1 + 1e-12)
