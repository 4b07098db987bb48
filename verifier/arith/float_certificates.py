"""Rigorous floating-point certificates: nonsingular minors, smallest singular
values, residuals (Rump, Acta Numerica 2010; INTLAB's ``verifylss`` style).

Each certificate is a few float64 matrix products on a backend (numpy, torch
CPU, torch CUDA: :mod:`.backend`) plus the a priori error bounds of
:mod:`.float_bounds`, which hold for any summation order.  Input matrices are
exact floats or balls ``mid +/- rad`` (float arrays; :func:`float_ball_of`
turns an ``arb_mat`` into one, rigorously), and every claim holds for every
matrix in the ball.

* :func:`inverse_residual_bound`: an upper bound of ``||I - R X||_inf`` for every X in
  the ball, ``R`` any float matrix (default a float inverse of the midpoint).
  Below 1 proves every X nonsingular (the Neumann series of ``I - R X``
  converges, so ``R X`` is invertible).  Cost: one inverse and one product of
  the minor; the error terms are matrix-VECTOR products
  (``|R| (gamma_k |mid| 1 + rad 1)``), so the floor is the plain product.
* :func:`sigma_min_lower_float`: ``sigma_min(X) >= s`` for every X in the ball
  (T x m, T <= m), from ``X X^T - alpha I`` positive definite: a float
  Cholesky ``L`` of ``G - alpha I`` (G = fl(mid mid^T)) and the rigorous bound
  ``lambda_min(X X^T) >= alpha - ||G - alpha I - L L^T||_2 - ||X X^T - G||_2``
  (both norms bounded by row sums of entrywise bounds: a nonnegative symmetric
  bound's spectral radius is at most its largest row sum).
* :func:`residual_upper_float`: floats ``>= |X M - B|`` entrywise.

A one-sided bound proves its inequality and never refutes it: a bound ``>= 1``
means "not decided", never "singular".

>>> import numpy as np
>>> from verifier.arith.compare import certainly_less
>>> certainly_less(inverse_residual_bound(np.array([[2.0, 1.0], [1.0, 3.0]])), 1)
<Decision.TRUE: 'true'>
>>> certainly_less(inverse_residual_bound(np.array([[1.0, 2.0], [2.0, 4.0]])), 1)   # singular: never
<Decision.UNDECIDED: 'undecided'>
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb

from verifier.arith.backend import get_backend
from verifier.arith.compare import Decision, LowerBound, UpperBound, certainly_less
from verifier.arith.float_bounds import (
    INV_1MU,
    MAG,
    SLACK,
    UL,
    FloatRangeError,
    U,
    abs_upper,
    add_up,
    ball_matmul,
    check_ieee,
    check_range,
    gamma,
    nonneg_matmul_up,
    product_slack,
    rowsum_up,
    up_scale,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["FloatBall", "float_ball_of", "inverse_residual_bound", "inverse_residual_bound_explained",
           "inverse_residual_bounds", "sigma_min_lower_float", "residual_upper_float", "METHOD"]

#: How the evidence names this path.
METHOD = "float64 verification (Rump): a priori error bounds, any summation order"


@dataclass(frozen=True)
class FloatBall:
    """Every real matrix X with ``|X - mid| <= rad`` entrywise (``rad`` None:
    the exact float matrix ``mid``).  Arrays of one backend.  ``R_first``: a
    float matrix, or a function giving one (or None), that
    :func:`inverse_residual_bound_explained` tries as R before inverting
    ``mid`` itself, e.g. an inverse computed on a second core while the ball
    was built (any R is valid: the bound decides; it only saves an inverse)."""

    mid: object
    rad: object = None
    R_first: object = field(default=None, compare=False, repr=False)

    @property
    def shape(self) -> tuple:
        return tuple(self.mid.shape)


def float_ball_of(A, backend=None) -> FloatBall:
    """A :class:`FloatBall` enclosing ``A``: a float array (exact), a
    FloatBall (moved to the backend), or an ``arb_mat``: midpoints rounded to
    float64 and radii ``>= rad + |float(mid) - mid|`` (rounding to nearest
    moves a midpoint by at most u |mid|), rounded up."""
    b = get_backend(backend)
    if isinstance(A, FloatBall):
        return FloatBall(b.asarray(A.mid), None if A.rad is None else b.asarray(A.rad))
    from flint import arb_mat

    if isinstance(A, arb_mat):
        from verifier.arith.balls import arb_mat_mid, arb_mat_rad_upper

        mid = arb_mat_mid(A)
        if not np.all(np.isfinite(mid)):
            raise InvalidInstance("ball matrix has NaN or infinite midpoints")
        rad = arb_mat_rad_upper(A)
        rad = up_scale(b, rad + np.abs(mid) * float(2 * U), Fraction(1) / (1 - U))
        return FloatBall(b.asarray(mid), b.asarray(rad))
    return FloatBall(b.asarray(A), None)


def _split(A, backend):
    b = get_backend(backend)
    check_ieee(b)
    ball = float_ball_of(A, b)
    return b, ball.mid, ball.rad


_NO_BOUND = UpperBound(arb(float("inf")))


def inverse_residual_bound(A, R=None, *, backend=None) -> UpperBound:
    """An :class:`~verifier.arith.compare.UpperBound` of ``max_X ||I - R X||_inf``
    over the ball ``A`` (k x k); ``+inf`` when no float inverse exists or an
    operand is out of range.  ``certainly_less(bound, 1)`` proves every X
    nonsingular; nothing ever proves the opposite.

    With ``P = fl(R mid)`` and ``D = fl(I - P)`` (one rounding on the
    diagonal only), for every X in the ball:

        |I - R X| <= (|D| + UL)/(1-u) + gamma_k |R||mid| + 3 k UL + |R| rad,

    whose row sums are ``rowsum|D|/(1-u) + |R| (gamma_k |mid| 1 + rad 1) + ...``.
    """
    return inverse_residual_bound_explained(A, R, backend=backend)[0]


def inverse_residual_bound_explained(A, R=None, *, backend=None) -> tuple[UpperBound, str]:
    """:func:`inverse_residual_bound` and, when it is ``+inf``, why (``""``
    otherwise): no float inverse (LinAlgError or non-finite), an operand out
    of range, or an overflow in the bound; the caller records it and climbs
    to another route."""
    hint = getattr(A, "R_first", None) if R is None else None
    b, mid, rad = _split(A, backend)
    k = mid.shape[0]
    if mid.shape != (k, k):
        raise InvalidInstance(f"inverse_residual_bound needs a square matrix, got {tuple(mid.shape)}")
    if k == 0:
        return UpperBound(arb(0)), ""
    R_hint = _given_inverse(hint, k)
    if R_hint is not None:  # taken where it proves the ball nonsingular
        bound, why = _float_bound(b, mid, rad, R_hint)
        if not why and certainly_less(UpperBound(arb(bound)), 1) is Decision.TRUE:
            return UpperBound(arb(bound)), ""
    bound, why = _float_bound(b, mid, rad, R)
    return (_NO_BOUND if why else UpperBound(arb(bound))), why


def inverse_beside(M, rows, cols, backend=None):
    """A :class:`~verifier.arith.second_thread.FloatJob` computing a float
    inverse of ``M[rows][:, cols]`` (for a ball's ``R_first``), on a second
    core where there is one, else at once: the same R either way, so the
    same bounds with or without the second core.  None for a backend other
    than numpy or more than :data:`~verifier.arith.second_thread.ONE_BLAS_THREAD_UP_TO`
    entries in M (there BLAS has every core)."""
    from verifier.arith.second_thread import ONE_BLAS_THREAD_UP_TO, FloatJob

    b = get_backend(backend)
    if b.name != "numpy" or np.size(M) > ONE_BLAS_THREAD_UP_TO:
        return None
    return FloatJob(lambda: b.inv(np.ascontiguousarray(np.asarray(M)[np.ix_(rows, cols)])))


def _given_inverse(hint, k: int):
    """The k x k float64 array a ball's ``R_first`` gives, or None (none, another kind of value, or it
    failed: the ball's own inverse is taken)."""
    try:
        R = hint() if callable(hint) else hint
    except Exception:  # noqa: BLE001 - only a speed-up
        return None
    ok = isinstance(R, np.ndarray) and R.dtype == np.float64 and R.shape == (k, k)
    return np.array(R, copy=True) if ok else None  # our own: whoever handed it over may still write to theirs


def _float_bound(b, mid, rad, R=None) -> tuple[float, str]:
    """The bound of :func:`inverse_residual_bound` as a float, and why it is
    ``inf`` ("" otherwise), in floats only (no arb: the stack's one-by-one
    fallback may run on a second thread, :mod:`verifier.arith.second_thread`)."""
    try:
        check_range(b, mid, rad)
        R = b.inv(mid) if R is None else b.asarray(R)
        if R is None:
            return float("inf"), "no float64 inverse of the midpoint (LinAlgError or non-finite)"
        check_range(b, R)
    except FloatRangeError as exc:
        return float("inf"), f"float range: {exc}"
    total = _residual_row_bounds(b, mid, rad, R)
    if not b.all_finite(total):
        return float("inf"), "the float bound overflowed"
    return float(b.max(total)), ""


def _residual_row_bounds(b, mid, rad, R):
    """Floats >= the row sums of |I - R X| for every X in the ball (any
    leading batch axes; R and mid in range)."""
    k = mid.shape[-1]
    g = gamma(k)
    D = -b.matmul(R, mid)
    b.add_to_diagonal(D, 1.0)  # fl(1 - P_ii): one rounding per diagonal entry
    a = up_scale(b, rowsum_up(b, b.abs(D)), INV_1MU, k * UL * INV_1MU)
    w = up_scale(b, rowsum_up(b, b.abs(mid)), g)
    if rad is not None:
        w = add_up(b, w, rowsum_up(b, rad))
    t = nonneg_matmul_up(b, b.abs(R), w[..., None])[..., 0]
    return up_scale(b, add_up(b, a, t), 1, product_slack(k * k))


def inverse_residual_bounds(mids, rads=None, *, backend=None) -> np.ndarray:
    """A stack of k x k balls (B, k, k): floats (numpy, one per matrix), each
    ``>= max_X ||I - R_b X||_inf`` over ball b with R_b a float inverse of its
    midpoint; ``inf`` where no usable inverse exists.  An entry below 1 proves
    every matrix of that ball nonsingular (one-sided: an entry >= 1 proves
    nothing).  Batched inverses and products: many small certificates at
    matrix-product speed."""
    b = get_backend(backend)
    check_ieee(b)
    mids = b.asarray(mids)
    rads = None if rads is None else b.asarray(rads)
    Bn, k = mids.shape[0], mids.shape[-1]
    if Bn == 0 or k == 0:
        return np.zeros(Bn)
    check_range(b, mids, rads)
    R = b.inv(mids)
    if R is None:  # a whole-stack failure: certify them one by one (floats only: it may run on a second thread)
        return np.array([_float_bound(b, mids[i], None if rads is None else rads[i])[0] for i in range(Bn)])
    absR = b.abs(R)
    mag = absR.amax(dim=(-2, -1)) if b.is_torch else np.max(absR, axis=(-2, -1))
    bad = b.to_numpy(~(mag <= MAG))  # also NaN
    if bad.any():
        R[b.asarray(bad.astype(np.float64)) > 0 if b.is_torch else bad] = 0.0  # R = 0: bound >= 1, not certified
    rows = _residual_row_bounds(b, mids, rads, R)
    out = b.to_numpy(rows.amax(dim=-1) if b.is_torch else np.max(rows, axis=-1)).astype(np.float64)
    out[bad | ~np.isfinite(out)] = np.inf
    return out


def _gram_perturbation_bound(b, mid, rad) -> Fraction:
    """An exact rational ``>= ||X X^T - G||_2`` for every X in the ball, where
    G is the symmetric matrix from the lower triangle of fl(mid mid^T):
    row sums of ``gamma_m |mid||mid|^T + 3 m UL + |mid| rad^T + rad |mid|^T +
    rad rad^T``, by matrix-vector products."""
    T, m = mid.shape
    amid = b.abs(mid)
    c_abs = rowsum_up(b, amid.T)  # >= |mid|^T 1 (column sums)
    v = up_scale(b, c_abs, gamma(m))
    if rad is not None:
        c_rad = rowsum_up(b, rad.T)
        v = add_up(b, v, c_rad)
    s = nonneg_matmul_up(b, amid, v)
    if rad is not None:
        s = add_up(b, s, nonneg_matmul_up(b, rad, add_up(b, c_abs, c_rad)))
    s = up_scale(b, s, Fraction(1), 3 * m * T * UL + SLACK)
    return Fraction(b.max(s))


def _cholesky_defect(b, G, alpha: float):
    """(L, bound) with ``||G - alpha I - L L^T||_2 + |fl(G - alpha I) - (G - alpha I)|``
    bounded by ``bound`` (an exact rational), or (None, None) if the float
    Cholesky of ``G - alpha I`` breaks down."""
    T = G.shape[0]
    Gs = G.clone() if b.is_torch else G.copy()
    b.add_to_diagonal(Gs, -alpha)  # one rounding per diagonal entry
    shift_err = Fraction(b.max(up_scale(b, b.abs(b.diagonal(Gs)), U / (1 - U), UL)))
    L = b.cholesky_lower(Gs)
    if L is None or not b.all_finite(L):
        return None, None
    L = b.tril(L)
    F = b.matmul(L, L.T)
    H = b.abs(Gs - F)  # |fl(Gs - F)| ; |Gs - F| <= |H|/(1-u)
    h = up_scale(b, rowsum_up(b, H), 1 / (1 - U))
    aL = b.abs(L)
    t = up_scale(b, nonneg_matmul_up(b, aL, rowsum_up(b, aL.T)), gamma(T))  # gamma_T |L||L|^T 1
    total = up_scale(b, add_up(b, h, t), Fraction(1), 3 * T * T * UL + SLACK)
    return L, Fraction(b.max(total)) + shift_err


def sigma_min_lower_float(A, *, alpha: float | None = None, backend=None, tries: int = 4) -> LowerBound:
    """A :class:`~verifier.arith.compare.LowerBound` ``s > 0`` (an exact
    float) with ``sigma_T(X) >= s`` for every X in the ball
    ``A`` (T x m, T <= m); raises :class:`InsufficientPrecision` when the
    test cannot prove any positive bound (A numerically rank deficient, too
    ill-conditioned for the Gram route (kappa^2 u T >~ 1), or too wide a ball).

    ``alpha``: the squared bound to try (default 15/16 of the float estimate
    ``lambda_min(fl(mid mid^T))``); halved on failure, ``tries`` times.
    """
    b, mid, rad = _split(A, backend)
    T, m = mid.shape
    if T > m:
        raise InvalidInstance(f"sigma_min_lower_float needs T <= m, got {T} x {m}")
    if T == 0:
        raise InvalidInstance("empty matrix has no smallest singular value")
    try:
        check_range(b, mid, rad)
    except FloatRangeError as exc:
        raise InsufficientPrecision(str(exc)) from None
    G0 = b.tril(b.matmul(mid, mid.T))
    G = G0 + G0.T
    b.scale_diagonal(G, 0.5)  # the diagonal was doubled: halving is exact
    del G0
    eps_gram = _gram_perturbation_bound(b, mid, rad)
    if alpha is None:
        try:
            lam = float(b.to_numpy(b.eigvalsh(G))[0])
        except (np.linalg.LinAlgError, RuntimeError) as exc:  # LAPACK did not converge: climb, do not crash
            raise InsufficientPrecision(f"float eigvalsh of fl(A A^T) failed ({exc})") from None
        if not lam > 0:
            raise InsufficientPrecision("fl(A A^T) is not positive definite: A may be rank deficient")
        alpha = lam * 15 / 16
    for _ in range(max(1, tries)):
        L, defect = _cholesky_defect(b, G, alpha)
        if L is not None:
            lb2 = Fraction(alpha) - defect - eps_gram
            if lb2 > 0:
                s = math.sqrt(float(lb2))
                s = math.nextafter(s, -math.inf)
                while Fraction(s) ** 2 > lb2:  # float(lb2) may round up
                    s = math.nextafter(s, -math.inf)
                return LowerBound(arb(s))
        alpha /= 2
    raise InsufficientPrecision("A A^T - alpha I not proved positive definite for any alpha tried: "
                                "A may be rank deficient or too ill-conditioned for the float route")


def residual_upper_float(A, M, B, *, backend=None):
    """Floats (numpy) ``>= |X M - B|`` entrywise for every X in the ball ``A``
    (``M``, ``B`` exact float matrices)."""
    b, mid, rad = _split(A, backend)
    M, B = b.asarray(M), b.asarray(B)
    try:
        C, C_rad = ball_matmul(b, mid, rad, M, None)
    except FloatRangeError as exc:
        raise InsufficientPrecision(str(exc)) from None
    Dm = b.abs(C - B)  # one rounding: |C - B| <= |fl(C - B)| / (1 - u)
    return b.to_numpy(add_up(b, up_scale(b, Dm, 1 / (1 - U)), C_rad))


def abs_ball_upper(A, backend=None):
    """Floats ``>= |X|`` for every X in the ball (numpy)."""
    b, mid, rad = _split(A, backend)
    return b.to_numpy(abs_upper(b, mid, rad))
