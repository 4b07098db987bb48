"""Certified bounds on singular values: each one-sided, typed as such.

* ``sigma_min_lower_bound(A)`` -> :class:`~verifier.arith.compare.LowerBound`:
  ``sigma_T(X) >= lb`` for every X in the ball (A of full row rank);
* ``sigma_min_upper_bound(A)`` -> :class:`~verifier.arith.compare.UpperBound`:
  ``sigma_T(X) <= ||x^T X|| / ||x||`` for one float vector x;
* ``spectral_norm_lower_bound(A)`` -> ``LowerBound``: ``||X||_2 >= ||X x|| / ||x||``;
* ``spectral_norm_upper_bound(A)`` -> ``UpperBound``: Gram powers (tight);
* ``sigma_min_enclosure`` / ``spectral_norm_enclosure``: both sides, an
  :class:`~verifier.arith.compare.Enclosure` (compares TRUE or FALSE).

A lower bound proves ``sigma > x`` and never refutes it; refuting needs the
upper side (and vice versa): :mod:`verifier.arith.compare` enforces it.

>>> import numpy as np
>>> from verifier.arith.compare import lower, upper
>>> enc = sigma_min_enclosure(np.diag([3.0, 2.0]))
>>> lower(enc) <= 2.0 <= upper(enc)
True
"""
from __future__ import annotations

import numpy as np
from flint import arb, arb_mat, ctx

from verifier.arith.balls import (
    arb_mat_mid,
    float_up,
    frobenius_upper,
    identity,
    matmul,
    spectral_norm_upper,
    to_arb_mat,
)
from verifier.arith.compare import Decision, Enclosure, LowerBound, UpperBound, certainly_positive, workprec
from verifier.arith.rank import _split
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["sigma_min_lower_bound", "sigma_min_upper_bound", "sigma_min_enclosure",
           "spectral_norm_lower_bound", "spectral_norm_upper_bound", "spectral_norm_enclosure"]

#: Gram squarings (adaptive): the bound ``||G^p||_F^(1/2p)`` is within a factor
#: rank^(1/2p) of ``||R||_2``; small matrices square until it stops improving.
SMALL = 64
MAX_SQUARINGS = {True: 20, False: 4}  # small / large matrices
CONVERGED = 1e-12  # relative improvement below this: stop squaring
REFINE_STEPS, REFINE_ABOVE = 3, 1e-12  # Newton-Schulz steps on R while ||A R - I|| > this


def _norm2_upper_by_powers(R: arb_mat, squarings: int | None, target: arb | None = None) -> arb:
    """``||R||_2 <= ||G^(2^j)||_F^(1/2^(j+1))`` with ``G = R^T R`` (since
    ``||R||_2^2 = ||G||_2`` and ``||G||_2^p = ||G^p||_2 <= ||G^p||_F``).
    Non-increasing in j; rigorous (all products in arb; after each squaring G
    is rescaled by an exact power of two, tracked in ``log2_scale``, so the
    entries stay in float range).  ``squarings=None``: square until converged,
    below ``target``, or ``MAX_SQUARINGS``."""
    G = matmul(R.transpose(), R) if R.nrows() >= R.ncols() else matmul(R, R.transpose())
    small = G.nrows() <= SMALL
    top = MAX_SQUARINGS[small] if squarings is None else int(squarings)
    best, log2_scale = None, 0  # G_j = G^(2^j) * 2^log2_scale
    for j in range(top + 1):
        if j:
            G = matmul(G, G)
            log2_scale *= 2
        # the radii count: a ball with zero midpoints is not the zero matrix
        big = max((abs(float(e.mid())) + float(e.rad()) for e in G.entries()), default=0.0)
        if big == 0.0:  # G is exactly zero
            return arb(0)
        e = -int(np.round(np.log2(big)))
        G = G * arb(2.0) ** e  # exact power of two
        log2_scale += e
        f = frobenius_upper(G).value  # >= ||G^(2^j)||_F 2^log2_scale
        root = arb(1) / 2 ** (j + 1)
        b = arb(float_up(f ** root * arb(2) ** (arb(-log2_scale) * root)))
        improved = best is None or bool(b < best * (1 - CONVERGED))
        best = b if best is None or b < best else best
        if squarings is None and (not improved or (target is not None and best < target)):
            break
    return best


def _right_inverse(mid: np.ndarray) -> tuple[np.ndarray, float]:
    """(R, ||R||_2 estimate): a float right inverse of the T x m midpoint (any
    R is valid for the bound; only its quality matters).  numpy's pinv, or,
    when a float step fails (LinAlgError, a non-finite entry or norm), ``M^T
    (M M^T)^-1`` by an approximate solve at the working precision, so that a
    float failure climbs with the caller's precision instead of ending it."""
    try:
        Rf = np.linalg.pinv(mid)
        nR = float(np.linalg.norm(Rf, 2))
        if np.all(np.isfinite(Rf)) and np.isfinite(nR):
            return Rf, nR
        why = "non-finite"
    except np.linalg.LinAlgError as exc:
        why = str(exc)
    M = to_arb_mat(mid)  # exact
    try:
        X = matmul(M, M.transpose()).solve(identity(mid.shape[0]), algorithm="approx")
    except ZeroDivisionError:
        raise InsufficientPrecision(f"float pseudo-inverse failed ({why}) and M M^T is singular at "
                                    f"{ctx.prec} bits: A numerically singular") from None
    Rf = arb_mat_mid(matmul(M.transpose(), X))
    if not np.all(np.isfinite(Rf)):
        raise InsufficientPrecision(f"float pseudo-inverse failed ({why}); the {ctx.prec}-bit one is not "
                                    "finite: A numerically singular")
    return Rf, float(np.max(np.sum(np.abs(Rf), axis=0)))  # ~ ||R||_2: only a power-of-two scale


def sigma_min_lower_bound(A, *, prec: int = 128, squarings: int | None = None,
                          at_least: float | None = None) -> LowerBound:
    """A rigorous lower bound of sigma_min(A) for A of full row rank (T x m, T <= m).

    With ``R = pinv(mid A)`` (m x T, any matrix works) and ``F = A R - I_T``:
    for a unit x in R^T, ``x^T A R = x^T + x^T F``, so
    ``||x^T A|| ||R||_2 >= ||x^T A R|| >= 1 - ||F||_2``, i.e.

        sigma_T(A) = min_{|x|=1} ||x^T A|| >= (1 - ||A R - I||_2) / ||R||_2.

    ``||F||_2`` is bounded by :func:`spectral_norm_upper`; ``||R||_2`` by Gram
    powers: ``squarings`` fixed, or (None) adaptive -- up to 20 squarings for
    T <= 64 (the bound then matches sigma_min to ~1e-6 relative), 4 above
    (each a T x T arb product), stopping early once the bound exceeds
    ``at_least``.  Raises :class:`InsufficientPrecision` if ``1 - ||F||_2`` is
    not certainly positive (A numerically rank deficient or too wide a ball).
    """
    mid, ball = _split(A)
    T, m = mid.shape
    if T > m:
        raise InvalidInstance(f"sigma_min_lower_bound needs T <= m, got {T} x {m}")
    if T == 0:
        raise InvalidInstance("empty matrix has no smallest singular value")
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        Rf, nR = _right_inverse(mid)
        scale = 2.0 ** -int(np.round(np.log2(nR))) if np.isfinite(nR) and nR > 0 else 1.0
        Ra = to_arb_mat(Rf * scale)  # exact scaling by a power of two
        I_s = identity(T) * arb(scale)
        F = matmul(Aball, Ra) - I_s
        f = spectral_norm_upper(F).value  # bounds ||A R_s - s I|| = s ||A R - I||
        for _ in range(REFINE_STEPS):  # ill-conditioned A: a better R (any R is valid)
            if not f > arb(scale) * REFINE_ABOVE:
                break
            Rn = (Ra - matmul(Ra, F) * (arb(1) / arb(scale))).mid()  # R + R (I - A R): error squared
            Fn = matmul(Aball, Rn) - I_s
            fn = spectral_norm_upper(Fn).value
            if not fn < f:
                break
            Ra, F, f = Rn, Fn, fn
        gap = arb(scale) - f
        if certainly_positive(gap) is not Decision.TRUE:
            raise InsufficientPrecision(
                f"1 - ||A R - I||_2 not certainly positive (bound {float_up(f) / scale:.3g}); "
                "A may be rank deficient or the ball too wide")
        # sigma >= gap / r  <=>  r <= gap / sigma: a target for the squarings
        target = None if at_least is None or at_least <= 0 else gap / arb(at_least)
        r = _norm2_upper_by_powers(Ra, squarings, target) if squarings != 0 else spectral_norm_upper(Ra).value
        lb = gap / r  # sigma >= (s - s||F||)/(s||R||)
        return LowerBound(arb(-float_up(-lb)))  # an exact float <= the ball's lower end


def _float_svd(mid: np.ndarray):
    """A float SVD (thin) to choose test vectors; LAPACK's gesdd may not
    converge on one machine: then the sturdier gesvd (floats only choose)."""
    try:
        return np.linalg.svd(mid, full_matrices=False)
    except np.linalg.LinAlgError:
        import scipy.linalg

        return scipy.linalg.svd(mid, full_matrices=False, lapack_driver="gesvd")


def _left_min_vector(mid: np.ndarray) -> np.ndarray:
    U, _, _ = _float_svd(mid)
    return U[:, -1]


def _vector_norm_ball(v) -> arb:
    """The 2-norm of a ball row/column vector, as a ball (an enclosure)."""
    s = arb(0)
    for x in (v.entries() if isinstance(v, arb_mat) else v):
        x = x if isinstance(x, arb) else arb(float(x))
        s += x * x
    return s.nonnegative_part().sqrt()


def sigma_min_upper_bound(A, *, prec: int = 128, x=None) -> UpperBound:
    """``sigma_T(X) <= ||x^T X|| / ||x||`` for any nonzero x (T <= m), so the
    upper end of that ball bounds sigma_min of every X in the ball.  ``x``
    defaults to the float left singular vector of the smallest singular value."""
    mid, ball = _split(A)
    T, m = mid.shape
    if T > m or T == 0:
        raise InvalidInstance(f"sigma_min_upper_bound needs 0 < T <= m, got {T} x {m}")
    x = _left_min_vector(mid) if x is None else np.asarray(x, dtype=np.float64)
    if not np.any(x):
        raise InvalidInstance("test vector is zero")
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        y = matmul(to_arb_mat(x[None, :]), Aball)
        return UpperBound(_vector_norm_ball(y) / _vector_norm_ball(x.tolist()))


def sigma_min_enclosure(A, *, prec: int = 128, squarings: int | None = None) -> Enclosure:
    """Both sides of sigma_min(A): :func:`sigma_min_lower_bound` and
    :func:`sigma_min_upper_bound` (raises like the lower bound)."""
    return Enclosure(sigma_min_lower_bound(A, prec=prec, squarings=squarings), sigma_min_upper_bound(A, prec=prec))


def spectral_norm_lower_bound(A, *, prec: int = 128, x=None) -> LowerBound:
    """``||X||_2 >= ||X x|| / ||x||`` for any nonzero x; x defaults to the
    float top right singular vector of the midpoint.  A zero matrix gives 0."""
    mid, ball = _split(A)
    if mid.size == 0 or not np.any(mid):
        return LowerBound(arb(0))
    if x is None:
        _, _, Vt = _float_svd(mid)
        x = Vt[0]
    x = np.asarray(x, dtype=np.float64)
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        y = matmul(Aball, to_arb_mat(x[:, None]))
        return LowerBound(_vector_norm_ball(y) / _vector_norm_ball(x.tolist()))


def spectral_norm_upper_bound(A, *, prec: int = 128, squarings: int | None = None) -> UpperBound:
    """``||X||_2`` bounded above by Gram powers (tighter than
    :func:`verifier.arith.balls.spectral_norm_upper`; the smaller is returned)."""
    mid, ball = _split(A)
    if mid.size == 0:
        return UpperBound(arb(0))
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        cheap = spectral_norm_upper(Aball).value
        if cheap.is_zero():  # every matrix in the ball is 0 (was an OverflowError for an exact zero arb_mat)
            return UpperBound(arb(0))
        scale = arb(2) ** -int(np.round(np.log2(float(cheap.mid()))))  # exact power of two
        tight = _norm2_upper_by_powers(Aball * scale, squarings) / scale
        return UpperBound(tight if tight < cheap else cheap)


def spectral_norm_enclosure(A, *, prec: int = 128, squarings: int | None = None) -> Enclosure:
    """Both sides of ``||A||_2``."""
    return Enclosure(spectral_norm_lower_bound(A, prec=prec), spectral_norm_upper_bound(A, prec=prec,
                                                                                        squarings=squarings))
