"""The preconditioner R: the numpy backend's LU inverse (getrf + getri) from
order LU_INVERSE_FROM, a ball's ``R_first`` tried before its own inverse
(any R is valid: the bound decides, and where the given R does not prove
the ball nonsingular the ball's own inverse is taken), and the construction's
minor inverted beside the ball (the same R with or without a second core)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import proofs.mahdavi2024.proposition1_rank_induction as p1
import verifier.arith.backend as backend_mod
import verifier.arith.float_certificates as fc
from verifier.arith.backend import LU_INVERSE_FROM, get_backend
from verifier.arith.compare import Decision, certainly_less, upper
from verifier.arith.float_certificates import FloatBall, inverse_beside, inverse_residual_bound_explained
from verifier.data.instances import make_instance
from verifier.statements.runner import run_check


def _well_posed(k, seed=0):
    return np.random.default_rng(seed).standard_normal((k, k)) + 4 * np.sqrt(k) * np.eye(k)


@pytest.mark.parametrize("k", [LU_INVERSE_FROM, LU_INVERSE_FROM + 1, 200])
def test_the_lu_inverse_is_an_inverse(k):
    A = _well_posed(k)
    R = get_backend("numpy").inv(A)
    assert R.shape == (k, k) and R.dtype == np.float64
    assert np.max(np.sum(np.abs(np.eye(k) - R @ A), axis=1)) < 1e-10


@pytest.mark.parametrize("k", [LU_INVERSE_FROM, 200])
def test_no_lu_inverse_of_an_exactly_singular_or_non_finite_matrix(k):
    A = _well_posed(k)
    A[5] = 0.0  # a zero row stays zero under any elimination (0 - 0 x): an exact zero pivot, on any BLAS
    assert get_backend("numpy").inv(A) is None
    A = _well_posed(k)
    A[2, 7] = np.nan
    assert get_backend("numpy").inv(A) is None


@pytest.mark.parametrize("shape", [(200, 150), (150, 200)])
def test_no_inverse_of_a_rectangular_matrix(shape):
    assert get_backend("numpy").inv(np.ones(shape)) is None  # numpy's LinAlgError, never LAPACK's LU of it


def test_small_matrices_stacks_and_other_types_keep_numpy_s_inverse(monkeypatch):
    calls = []
    real = np.linalg.inv
    monkeypatch.setattr(np.linalg, "inv", lambda a: calls.append(np.shape(a)) or real(a))
    b = get_backend("numpy")
    b.inv(_well_posed(LU_INVERSE_FROM - 1))
    b.inv(np.stack([_well_posed(LU_INVERSE_FROM)] * 2))
    b.inv(_well_posed(LU_INVERSE_FROM).astype(np.float32))
    assert calls == [(LU_INVERSE_FROM - 1,) * 2, (2,) + (LU_INVERSE_FROM,) * 2, (LU_INVERSE_FROM,) * 2]
    b.inv(_well_posed(LU_INVERSE_FROM))
    assert len(calls) == 3  # LAPACK's LU from LU_INVERSE_FROM on


def _bound(A, **kw):
    return upper(inverse_residual_bound_explained(A, **kw)[0])


@pytest.mark.parametrize("hint", [lambda k: np.zeros((k, k)), lambda k: np.full((k + 1, k + 1), 0.1),
                                  lambda k: (lambda: 1 / 0), lambda k: (lambda: None),
                                  lambda k: np.full((k, k), np.nan), lambda k: np.full((k, k), 1e300)])
def test_a_useless_or_broken_R_first_leaves_the_ball_s_own_inverse(hint):
    """A hint that does not prove the ball nonsingular (or fails) costs the ball's own inverse: the bound is
    exactly the one without it."""
    A = _well_posed(30)
    ball = FloatBall(A, np.full(A.shape, 1e-12))
    plain = _bound(ball)
    assert plain < 1
    assert _bound(FloatBall(A, ball.rad, R_first=hint(30))) == plain


@pytest.mark.parametrize("kind", [lambda R: R.astype(np.float32), lambda R: R.tolist(), lambda R: R.astype(object),
                                  lambda R: R[None], lambda R: np.asfortranarray(R).T.T.astype(np.float16)])
def test_an_R_first_of_another_kind_is_not_read(kind):
    """Only a k x k float64 array is tried: anything else (which would give another bound) is ignored."""
    A = _well_posed(30)
    ball = FloatBall(A, np.full(A.shape, 1e-12))
    R = np.linalg.inv(A) * (1 + 1e-6)
    assert _bound(FloatBall(A, ball.rad), R=R) != _bound(ball)  # used, it would show
    assert _bound(FloatBall(A, ball.rad, R_first=kind(R))) == _bound(ball)


def test_a_good_R_first_is_the_R_of_the_bound():
    A = _well_posed(30)
    R = np.linalg.inv(A) * (1 + 1e-9)  # not the ball's own inverse: its own bound
    ball = FloatBall(A, np.full(A.shape, 1e-12), R_first=lambda: R)
    assert _bound(ball) == _bound(FloatBall(A, ball.rad), R=R)
    assert _bound(FloatBall(A, ball.rad, R_first=R), R=np.zeros((30, 30))) >= 1  # an R given explicitly is the R
    assert _bound(FloatBall(A, ball.rad, R_first=R)) == _bound(ball)  # an array, not only a function giving one
    assert inverse_residual_bound_explained(ball)[1] == ""  # certified by the hint: nothing to explain


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.floats(-1e3, 1e3))
def test_a_singular_ball_is_never_proved_nonsingular_by_any_R_first(k, seed, scale):
    rng = np.random.default_rng(seed)
    A = (rng.integers(-5, 6, (k, k - 1)) @ rng.integers(-5, 6, (k - 1, k))).astype(np.float64)  # rank < k, exact
    for R in (rng.standard_normal((k, k)) * scale, np.linalg.pinv(A), np.eye(k)):
        bound, _ = inverse_residual_bound_explained(FloatBall(A, None, R_first=R))
        assert certainly_less(bound, 1) is not Decision.TRUE


def test_the_construction_s_minor_is_inverted_beside_the_ball(monkeypatch):
    M = np.random.default_rng(2).standard_normal((9, 12))
    rows, cols = [4, 0, 8, 1, 2], [11, 3, 5, 0, 7]
    job = inverse_beside(M, rows, cols)
    assert np.allclose(job.result() @ M[np.ix_(rows, cols)], np.eye(5))
    monkeypatch.setenv("MHA_VERIFY_THREADS", "1")  # no second core: the same R, computed at once
    alone = inverse_beside(M, rows, cols)
    assert not alone.threaded and np.array_equal(alone.result(), job.result())
    monkeypatch.setattr("verifier.arith.second_thread.ONE_BLAS_THREAD_UP_TO", M.size)
    assert inverse_beside(M, rows, cols) is not None  # at the limit: still beside
    monkeypatch.setattr("verifier.arith.second_thread.ONE_BLAS_THREAD_UP_TO", M.size - 1)
    assert inverse_beside(M, rows, cols) is None  # BLAS has every core there


def test_no_inverse_beside_on_other_backends():
    pytest.importorskip("torch")
    assert inverse_beside(np.eye(3), [0, 1], [0, 1], "torch-cpu") is None


def test_a_wrong_inverse_beside_still_certifies_the_construction(monkeypatch):
    """The R from beside is only tried first: a useless one costs an inverse, never the verdict."""
    from verifier.arith.second_thread import FloatJob

    monkeypatch.setattr(p1, "inverse_beside", lambda M, rows, cols, b=None: FloatJob(
        lambda: np.zeros((len(rows), len(cols))), thread=False))
    ev = run_check("theorem1", make_instance(H=3, n=24, d=26, d_h=24, context="shared", seed=3), prec=128, seed=0)
    assert ev.verdict == "verified"


def test_lu_inverse_from_is_where_numpy_s_stops(monkeypatch):
    """Both routes agree (to rounding) at the threshold, from either side."""
    monkeypatch.setattr(backend_mod, "LU_INVERSE_FROM", 3)
    A = _well_posed(3)
    assert np.allclose(get_backend("numpy").inv(A), np.linalg.inv(A), rtol=1e-12, atol=1e-15)
    assert fc.FloatBall(A).R_first is None


def test_an_R_first_written_to_after_it_is_handed_over_proves_nothing_false():
    """The R a hint gives is copied before the bound reads it twice (for fl(I - R mid), then for |R|): a writer
    that still holds the array (here a profile hook zeroing it between the two reads) cannot make a singular
    ball certified.  The R is chosen so that rounding makes fl(I - R mid)'s rows small (an independent
    attacker's case)."""
    import sys

    mid = np.array([[1.0, 1.1], [1.0, 1.1]])  # exactly rank one
    R = np.array([[8574993516872082.0, -8574993516872081.0], [8844170715394544.0, -8844170715394544.0]])

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "rowsum_up":
            R[:] = 0.0
            sys.setprofile(None)

    sys.setprofile(hook)
    try:
        bound, _ = inverse_residual_bound_explained(FloatBall(mid, None, R_first=lambda: R))
    finally:
        sys.setprofile(None)
    assert certainly_less(bound, 1) is not Decision.TRUE
