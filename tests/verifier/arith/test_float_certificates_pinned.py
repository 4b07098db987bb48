"""Pinned behaviour of verifier/arith/float_certificates.py (mutation testing,
issue 9): the batched bounds equal the single ones, every bound encloses the
exact quantity (computed in rationals) and is tight to rounding, ranges and
edge shapes."""
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, arb_mat

from verifier.arith.backend import Backend, get_backend
from verifier.arith.compare import lower, upper
from verifier.arith.exact import to_fmpq_mat
from verifier.arith.float_bounds import MAG, U, gamma
from verifier.arith.float_certificates import (
    FloatBall,
    abs_ball_upper,
    float_ball_of,
    inverse_residual_bound,
    inverse_residual_bound_explained,
    inverse_residual_bounds,
    residual_upper_float,
    sigma_min_lower_float,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

BACKENDS = ["numpy", "torch-cpu"]
HUGE = 2.0 ** 401  # above MAG = 2^400


def _q(x):
    return Fraction(float(x))


def _exact_ball_residual(mid, rad, R) -> Fraction:
    """max over X in mid +/- rad of ||I - R X||_inf, exactly: row i's maximum is
    sum_j |(I - R mid)_ij| + (|R| rad)_ij (each column of X enters one entry)."""
    k = mid.shape[0]
    Rq, Mq = to_fmpq_mat(R), to_fmpq_mat(mid)
    E = to_fmpq_mat(np.eye(k)) - Rq * Mq
    best = Fraction(0)
    for i in range(k):
        s = Fraction(0)
        for j in range(k):
            e = E[i, j]
            s += abs(Fraction(int(e.p), int(e.q)))
            if rad is not None:
                s += sum(abs(_q(R[i, l])) * _q(rad[l, j]) for l in range(k))
        best = max(best, s)
    return best


def _formula(mid, rad, R) -> Fraction:
    """The documented bound without its underflow terms, in rationals from the
    float D = fl(I - fl(R mid)): rowsum|D|/(1-u) + |R|(gamma_k |mid| 1 + rad 1)."""
    k = mid.shape[0]
    D = -get_backend("numpy").matmul(R, mid)  # the backend's product: the same summation order as the bound's
    D[np.diag_indices(k)] += 1.0
    g = gamma(k)
    best = Fraction(0)
    for i in range(k):
        s = sum(abs(_q(D[i, j])) for j in range(k)) / (1 - U)
        for l in range(k):
            w = g * sum(abs(_q(mid[l, j])) for j in range(k))
            if rad is not None:
                w += sum(_q(rad[l, j]) for j in range(k))
            s += abs(_q(R[i, l])) * w
        best = max(best, s)
    return best


def _mats(seed=0, k=4):
    rng = np.random.default_rng(seed)
    mid = rng.standard_normal((k, k)) + 3 * np.eye(k)
    rad = np.abs(rng.standard_normal((k, k))) * 1e-3
    return mid, rad


@pytest.mark.parametrize("backend", BACKENDS)
def test_single_bound_encloses_the_exact_residual_and_follows_the_formula(backend):
    mid, rad = _mats()
    for R, r in [(np.linalg.inv(mid), None), (0.7 * np.linalg.inv(mid), None), (np.linalg.inv(mid), rad),
                 (0.7 * np.linalg.inv(mid), rad), (np.eye(4) / 3, rad)]:
        bound = Fraction(upper(inverse_residual_bound(FloatBall(mid, r), R=R, backend=backend)))
        exact, ref = _exact_ball_residual(mid, r, R), _formula(mid, r, R)
        # torch sums in another order (another float D): the formula within 10% there
        tol = Fraction(1, 10**12) if backend == "numpy" else Fraction(1, 10)
        assert exact <= bound and ref * (1 - tol) <= bound <= ref * (1 + tol), (exact, ref, bound)
    # R omitted: a float inverse of the midpoint (the same bound as passing it)
    if backend == "numpy":
        assert upper(inverse_residual_bound(mid, backend=backend)) == \
            upper(inverse_residual_bound(mid, R=np.linalg.inv(mid), backend=backend))


def test_single_bound_edges_and_ranges():
    assert inverse_residual_bound(np.zeros((0, 0))).value == 0
    with pytest.raises(InvalidInstance, match="needs a square matrix, got \\(2, 3\\)"):
        inverse_residual_bound(np.ones((2, 3)))
    inf = float("inf")
    assert upper(inverse_residual_bound(np.diag([HUGE, 1.0]))) == inf  # operand out of range
    assert upper(inverse_residual_bound(FloatBall(np.eye(2), np.diag([HUGE, 0.0])))) == inf
    assert upper(inverse_residual_bound(np.eye(2), R=np.diag([HUGE, 1.0]))) == inf
    assert upper(inverse_residual_bound(np.eye(2), R=np.diag([np.nan, 1.0]))) == inf
    assert upper(inverse_residual_bound(np.ones((2, 2)))) >= 1  # singular: never certified, whatever inv does
    assert upper(inverse_residual_bound(np.eye(2))) < 1e-12  # a float inverse: a few ulps off on another machine


def test_no_float_inverse_gives_no_bound(monkeypatch):
    """Whether LAPACK raises on a singular matrix depends on the machine: patched."""
    def singular(*a, **k):
        raise np.linalg.LinAlgError("Singular matrix (patched)")

    monkeypatch.setattr(np.linalg, "inv", singular)
    assert upper(inverse_residual_bound(np.ones((2, 2)))) == float("inf")
    assert upper(inverse_residual_bound(np.eye(2))) == float("inf")
    assert list(inverse_residual_bounds(np.stack([np.eye(2), np.ones((2, 2))]))) == [np.inf, np.inf]


def test_the_explanation_names_each_failure_and_only_a_failure(monkeypatch):
    """inverse_residual_bound_explained: ``""`` with every finite bound (k = 0
    included), the reason with every +inf (rank.py writes it into the method text
    and climbs on it); inverse_residual_bound is its bound, with the R given."""
    import verifier.arith.float_certificates as fc

    bound, why = inverse_residual_bound_explained(np.zeros((0, 0)))
    assert bound.value == 0 and why == ""
    for shape in [(3,), (2, 3), (3, 2), (2, 2, 2)]:  # k read from the first axis: a vector is refused too
        with pytest.raises(InvalidInstance, match="needs a square matrix, got " + re.escape(str(shape))):
            inverse_residual_bound_explained(np.ones(shape))
    bound, why = inverse_residual_bound_explained(np.eye(2))
    assert upper(bound) < 1e-12 and why == ""  # a float inverse of I: a few ulps from I on another machine
    # I - (I/2) I = I/2 exactly: the bound is of the R given, not of a float inverse
    assert 0.5 <= upper(inverse_residual_bound(np.eye(2), R=np.eye(2) / 2)) < 0.5 * (1 + 1e-12)
    assert upper(inverse_residual_bound(np.eye(2), R=np.eye(2) / 2)) == upper(
        inverse_residual_bound_explained(np.eye(2), R=np.eye(2) / 2)[0])
    bound, why = inverse_residual_bound_explained(np.diag([HUGE, 1.0]))
    assert upper(bound) == float("inf") and why.startswith("float range: an operand exceeds 2^400")

    def singular(*a, **k):
        raise np.linalg.LinAlgError("Singular matrix (patched)")

    with monkeypatch.context() as m:
        m.setattr(np.linalg, "inv", singular)
        bound, why = inverse_residual_bound_explained(np.eye(2))
        assert upper(bound) == float("inf")
        assert why == "no float64 inverse of the midpoint (LinAlgError or non-finite)"
    # in range (entries <= 2^400, k <= 2^40) a row bound is about k^2 2^800 < 2^1024 at most:
    # the overflow branch is reached by patching the row bounds
    monkeypatch.setattr(fc, "_residual_row_bounds", lambda b, mid, rad, R: np.array([1.0, np.inf]))
    bound, why = inverse_residual_bound_explained(np.eye(2))
    assert upper(bound) == float("inf") and why == "the float bound overflowed"


def test_the_backend_given_computes_every_bound(monkeypatch):
    """A backend given is used as given: with MHA_VERIFY_BACKEND naming no backend,
    the default ("auto") raises, so a bound that dropped its backend argument
    fails here (the values are pinned elsewhere)."""
    monkeypatch.setenv("MHA_VERIFY_BACKEND", "no-such-backend")
    with pytest.raises(InvalidInstance, match="no-such-backend"):
        get_backend(None)
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    ball = FloatBall(A, np.full((2, 2), 2.0**-30))
    for backend in ("numpy", get_backend("numpy")):
        assert upper(inverse_residual_bound(ball, backend=backend)) < 1e-8
        R = np.array([[0.6, -0.2], [-0.2, 0.4]])  # A^-1 rounded: the same R on every machine
        assert upper(inverse_residual_bound(A, R=R, backend=backend)) < 1e-12
        assert inverse_residual_bound_explained(A, backend=backend)[1] == ""
        assert (inverse_residual_bounds(np.stack([A, A]), np.stack([ball.rad, ball.rad]), backend=backend)
                < 1e-8).all()
        assert lower(sigma_min_lower_float(ball, backend=backend)) > 1
        assert 0.99 < lower(sigma_min_lower_float(A, alpha=1.0, backend=backend)) <= 1  # alpha minus the defects
        assert (residual_upper_float(A, np.eye(2), A, backend=backend) < 1e-14).all()  # X I - A = 0 at X = A
        assert (abs_ball_upper(ball, backend=backend) >= np.abs(A)).all()
        assert float_ball_of(A, backend).mid is not None
        with monkeypatch.context() as m:  # the stack's inverse fails: one by one, on the same backend
            m.setattr(np.linalg, "inv", _no_inverse)
            assert list(inverse_residual_bounds(np.stack([A, A]), backend=backend)) == [np.inf, np.inf]


def _no_inverse(*a, **k):
    raise np.linalg.LinAlgError("Singular matrix (patched)")


def _diagonal_inverse(self, a):
    """The exact inverse of a (stack of) nonsingular diagonal matrices (the float
    step patched: LAPACK's may move it by an ulp on another machine)."""
    d = np.diagonal(a, axis1=-2, axis2=-1)
    return np.eye(a.shape[-1]) * (1 / d)[..., None, :]


def _rounded_inverse(M: np.ndarray):
    """The exact inverse rounded to float64 (None if singular): one R per matrix,
    the same for a stack and for its members on every machine."""
    try:
        inv = to_fmpq_mat(M).inv()
    except ZeroDivisionError:
        return None
    return np.array([[float(Fraction(int(inv[i, j].p), int(inv[i, j].q))) for j in range(M.shape[1])]
                     for i in range(M.shape[0])])


def _rounded_backend_inverse(self, a):
    """Backend.inv patched: the float step of the batched and the single bound is
    the same R (LAPACK's batched and single inverses may differ on another machine)."""
    a = self.to_numpy(a)
    stack = [_rounded_inverse(M) for M in a.reshape(-1, *a.shape[-2:])]
    if any(R is None for R in stack):
        return None
    return self.asarray(np.stack(stack).reshape(a.shape))


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_bounds_equal_the_single_bounds(backend, monkeypatch):
    monkeypatch.setattr(Backend, "inv", _rounded_backend_inverse)
    mids = np.stack([_mats(s)[0] for s in range(3)] + [np.diag([2.0 ** -401, 1.0, 1.0, 1.0])])
    rads = np.stack([_mats(s)[1] for s in range(3)] + [np.zeros((4, 4))])
    for r in (None, rads):
        out = inverse_residual_bounds(mids, r, backend=backend)
        assert out.shape == (4,) and out.dtype == np.float64
        for i in range(3):
            single = upper(inverse_residual_bound(FloatBall(mids[i], None if r is None else r[i]), backend=backend))
            assert out[i] == pytest.approx(single, rel=1e-12) and 0 < out[i] < 1
            R = _rounded_inverse(mids[i])
            assert _exact_ball_residual(mids[i], None if r is None else r[i], R) <= Fraction(out[i])
        assert out[3] == np.inf  # its inverse exceeds 2^400: not certified
    # a singular member: the stack is certified one by one
    sing = mids.copy()
    sing[1] = np.ones((4, 4))
    out = inverse_residual_bounds(sing, rads, backend=backend)
    assert out[1] >= 1 and out[3] == np.inf and 0 < out[0] < 1 and 0 < out[2] < 1
    assert out[0] == pytest.approx(upper(inverse_residual_bound(FloatBall(mids[0], rads[0]))), rel=1e-12)


def test_batched_edge_shapes_and_ranges():
    assert inverse_residual_bounds(np.zeros((0, 3, 3))).shape == (0,)
    assert list(inverse_residual_bounds(np.zeros((2, 0, 0)))) == [0.0, 0.0]
    one = inverse_residual_bounds(np.array([[[2.0]]]))
    assert one.shape == (1,) and 0 <= one[0] < 1e-12
    one_by_one = inverse_residual_bounds(np.full((2, 1, 1), 3.0))
    assert np.all(one_by_one < 1e-12)
    wide = inverse_residual_bounds(np.stack([np.eye(2)] * 2), np.full((2, 2, 2), 0.75))
    assert np.all((wide > 1.4) & (wide < 1.6))  # the radii count
    with pytest.raises(InsufficientPrecision):
        inverse_residual_bounds(np.stack([np.diag([HUGE, 1.0])]))
    with pytest.raises(InsufficientPrecision):
        inverse_residual_bounds(np.stack([np.eye(2)]), np.stack([np.diag([HUGE, 0.0])]))


def test_float_ball_of_encloses_arb_midpoints_tightly():
    third = arb(1) / 3  # not a float: the rounded midpoint needs a radius
    A = arb_mat([[third, arb(2)], [arb(1, 1e-10), -third]])
    fb = float_ball_of(A)
    q = Fraction(1, 3)
    for (i, j), exact in {(0, 0): q, (1, 1): -q}.items():
        assert abs(_q(fb.mid[i, j]) - exact) <= _q(fb.rad[i, j]) <= 2.1 * float(U) * abs(exact)
    assert fb.rad[0, 1] <= 4.0 * 2 * float(U) + 1e-300 and fb.rad[1, 0] >= 1e-10
    plain = float_ball_of(FloatBall(np.eye(2), None))
    assert plain.rad is None and np.array_equal(plain.mid, np.eye(2))
    assert float_ball_of(np.eye(2)).rad is None
    with pytest.raises(InvalidInstance, match="NaN or infinite midpoints"):
        float_ball_of(arb_mat([[arb("nan")]]))


def test_residual_upper_float_encloses_and_is_tight():
    mid, rad = _mats(3, k=3)
    M = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]])
    B = mid @ M + 0.125
    out = residual_upper_float(FloatBall(mid, rad), M, B)
    Mq = to_fmpq_mat(M)
    C = to_fmpq_mat(mid) * Mq
    for i in range(3):
        for j in range(2):
            c = C[i, j]
            exact = abs(Fraction(int(c.p), int(c.q)) - _q(B[i, j])) + sum(_q(rad[i, l]) * abs(_q(M[l, j]))
                                                                      for l in range(3))
            assert exact <= _q(out[i, j]) <= exact * (1 + Fraction(1, 10**9)) + Fraction(1, 10**14)
    with pytest.raises(InsufficientPrecision, match="2\\^400"):
        residual_upper_float(np.diag([HUGE, 1.0]), np.eye(2), np.eye(2))


def test_sigma_min_lower_float_pins():
    A = np.array([[3.0, 4.0]])  # one row: sigma = 5
    s = float(sigma_min_lower_float(A).value.mid())
    assert 0.95 * 5 < s <= 5  # alpha = 15/16 of the float estimate: s ~ 0.968 sigma
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 5))
    sig = np.linalg.svd(X, compute_uv=False)[-1]
    s2 = float(sigma_min_lower_float(X).value.mid())
    assert 0.95 * sig < s2 < sig
    # alpha too large: tried `tries` times, halved after each (4 by default: 10, 5, 2.5, 1.25 sigma^2 all fail)
    with pytest.raises(InsufficientPrecision, match="not proved positive definite for any alpha tried"):
        sigma_min_lower_float(X, alpha=10 * sig**2)
    assert 0 < float(sigma_min_lower_float(X, alpha=10 * sig**2, tries=5).value.mid()) < sig
    with pytest.raises(InsufficientPrecision, match="2\\^400"):
        sigma_min_lower_float(np.array([[HUGE, 1.0]]))
    with pytest.raises(InsufficientPrecision, match="2\\^400"):
        sigma_min_lower_float(FloatBall(np.array([[1.0, 1.0]]), np.array([[HUGE, 0.0]])))
    with pytest.raises(InsufficientPrecision, match="not positive definite: A may be rank deficient"):
        sigma_min_lower_float(np.zeros((2, 3)))
    with pytest.raises(InvalidInstance, match="needs T <= m"):
        sigma_min_lower_float(np.ones((3, 2)))
    with pytest.raises(InvalidInstance, match="empty matrix"):
        sigma_min_lower_float(np.zeros((0, 2)))
    assert MAG == 2.0 ** 400


@pytest.mark.parametrize("backend", BACKENDS)
def test_abs_ball_upper(backend):
    from verifier.arith.float_certificates import abs_ball_upper

    mid = np.array([[1.0, -2.0], [0.0, 3.0]])
    rad = np.array([[0.5, 0.0], [0.25, 1.0]])
    out = abs_ball_upper(FloatBall(mid, rad), backend=backend)
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert np.all(out >= np.abs(mid) + rad) and np.all(out <= (np.abs(mid) + rad) * (1 + 1e-15) + 1e-300)
    assert np.array_equal(abs_ball_upper(mid, backend=backend), np.abs(mid))


def test_sigma_min_square_root_guard_steps_down(monkeypatch):
    """The loop after the square root steps s down until s^2 <= lb2 (exactly); force
    it to run with a square root 8 ulps too high: the result is a lower bound again,
    within a few ulps of the normal one."""
    import math
    from types import SimpleNamespace

    import verifier.arith.float_certificates as fc

    X = np.random.default_rng(2).standard_normal((3, 6))
    sig = np.linalg.svd(X, compute_uv=False)[-1]
    normal = float(sigma_min_lower_float(X).value.mid())
    steps = []

    def nextafter(x, to):  # a guard loop that does not stop fails here, not after mutmut's CPU limit
        steps.append(to)
        assert len(steps) <= 64, "the guard loop took 64 steps"
        return math.nextafter(x, to)

    fake = SimpleNamespace(sqrt=lambda x: math.sqrt(x) * (1 + 8 * 2.0 ** -52), nextafter=nextafter, inf=math.inf)
    monkeypatch.setattr(fc, "math", fake)
    guarded = float(sigma_min_lower_float(X).value.mid())
    assert steps and set(steps) == {-math.inf}  # about 8 ulps down (ulp by ulp), never up
    assert normal <= guarded <= math.nextafter(math.nextafter(normal, math.inf), math.inf) and guarded < sig


def test_a_zero_lower_bound_of_sigma_squared_proves_nothing(monkeypatch):
    """lb2 = alpha - defect - eps_gram exactly 0 on every try (both bounds patched:
    the Cholesky succeeds with a defect of exactly alpha, no perturbation) proves
    no positive sigma_min: InsufficientPrecision after the tries, never a square
    root of 0 (whose guard loop would step down from -2^-1074 forever)."""
    from types import SimpleNamespace

    import verifier.arith.float_certificates as fc

    tried = []

    def defect_alpha(b, G, alpha):
        tried.append(alpha)
        return np.zeros_like(G), Fraction(alpha)

    def no_sqrt(x):
        raise AssertionError(f"square root of lb2 = {x} taken")

    monkeypatch.setattr(fc, "_cholesky_defect", defect_alpha)
    monkeypatch.setattr(fc, "_gram_perturbation_bound", lambda b, mid, rad: Fraction(0))
    monkeypatch.setattr(fc, "math", SimpleNamespace(sqrt=no_sqrt, nextafter=math.nextafter, inf=math.inf))
    with pytest.raises(InsufficientPrecision, match="not proved positive definite for any alpha tried"):
        sigma_min_lower_float(np.eye(2), alpha=1.0, tries=3)
    assert tried == [1.0, 0.5, 0.25]


def test_batched_boundaries(monkeypatch):
    # an inverse of magnitude exactly 2^400 is in range (MAG is inclusive)
    monkeypatch.setattr(Backend, "inv", _diagonal_inverse)
    edge = inverse_residual_bounds(np.stack([np.diag([2.0 ** -400, 1.0])]))
    assert 0 <= edge[0] < 1e-15
    assert upper(inverse_residual_bound(np.diag([2.0 ** -400, 1.0]))) < 1e-15
    monkeypatch.undo()
    # a singular member without radii: never certified (one by one if the stack's inverse fails), the others are
    mids = np.stack([np.eye(2), np.ones((2, 2)), 2 * np.eye(2)])
    out = inverse_residual_bounds(mids)
    assert out[1] >= 1 and out[0] < 1e-12 and out[2] < 1e-12
