"""Certified bounds on the smallest singular value of a full-row-rank matrix.

``sigma_min_lower_bound`` proves ``sigma_T(A) >= lb`` for every matrix in the
ball (a one-sided bound: it can prove ``sigma >= x``, never refute it);
``sigma_min_enclosure`` adds an upper bound from one float test vector, so the
pair encloses sigma_min.

>>> import numpy as np
>>> lo, hi = sigma_min_enclosure(np.diag([3.0, 2.0]))
>>> float(lo.mid()) <= 2.0 <= hi
True
"""
from __future__ import annotations

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import float_up, frobenius_upper, identity, matmul, spectral_norm_upper, to_arb_mat
from verifier.arith.compare import Decision, certainly_positive, workprec
from verifier.arith.rank import _split
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["sigma_min_lower_bound", "sigma_min_enclosure"]


def _norm2_upper_by_powers(R: arb_mat, squarings: int) -> arb:
    """``||R||_2 <= ||G^(2^j)||_F^(1/2^(j+1))`` with ``G = R^T R`` (since
    ``||R||_2^2 = ||G||_2`` and ``||G||_2^p = ||G^p||_2 <= ||G^p||_F``).
    Tight to a factor ``rank^(1/2^(j+1))``; rigorous (all products in arb)."""
    G = matmul(R.transpose(), R)
    for _ in range(squarings):
        G = matmul(G, G)
    f = frobenius_upper(G)
    return arb(float_up(f ** (arb(1) / 2 ** (squarings + 1))))


def sigma_min_lower_bound(A, *, prec: int = 128, squarings: int = 3) -> arb:
    """A rigorous lower bound of sigma_min(A) for A of full row rank (T x m, T <= m).

    With ``R = pinv(mid A)`` (m x T, any matrix works) and ``F = A R - I_T``:
    for a unit x in R^T, ``x^T A R = x^T + x^T F``, so
    ``||x^T A|| ||R||_2 >= ||x^T A R|| >= 1 - ||F||_2``, i.e.

        sigma_T(A) = min_{|x|=1} ||x^T A|| >= (1 - ||A R - I||_2) / ||R||_2.

    ``||F||_2`` is bounded by :func:`spectral_norm_upper`; ``||R||_2`` by the
    Gram-power bound with ``squarings`` squarings (within a factor
    rank^(1/2^(j+1)) of the truth; ~1.03 on a 621 x 1280 Gaussian matrix), or by
    :func:`spectral_norm_upper` when ``squarings=0`` (cheap but up to ~10x
    loose).  Cost: about 5 arb matrix products (~8 s at 621 x 1280, 2 cores).
    Returns an exact arb (radius 0) that is <= sigma_min(X) for every X in
    the ball.  Raises :class:`InsufficientPrecision` if ``1 - ||F||_2`` is not
    certainly positive (A numerically rank deficient or too wide a ball).
    """
    mid, ball = _split(A)
    T, m = mid.shape
    if T > m:
        raise InvalidInstance(f"sigma_min_lower_bound needs T <= m, got {T} x {m}")
    if T == 0:
        raise InvalidInstance("empty matrix has no smallest singular value")
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        Rf = np.linalg.pinv(mid)
        scale = 2.0 ** -int(np.round(np.log2(max(np.linalg.norm(Rf, 2), 1e-300))))
        Ra = to_arb_mat(Rf * scale)  # exact scaling by a power of two
        F = matmul(Aball, Ra) - identity(T) * arb(scale)
        f = spectral_norm_upper(F)  # bounds ||A R_s - s I|| = s ||A R - I||
        gap = arb(scale) - f
        if certainly_positive(gap) is not Decision.TRUE:
            raise InsufficientPrecision(
                f"1 - ||A R - I||_2 not certainly positive (bound {float_up(f) / scale:.3g}); "
                "A may be rank deficient or the ball too wide")
        # Gram powers are far tighter than the norm bound whenever squarings > 0
        r = _norm2_upper_by_powers(Ra, squarings) if squarings > 0 else spectral_norm_upper(Ra)
        lb = gap / r  # sigma >= (s - s||F||)/(s||R||)
        return arb(-float_up(-lb))  # an exact float <= the ball's lower end


def sigma_min_enclosure(A, *, prec: int = 128, squarings: int = 3) -> tuple[arb, float]:
    """(rigorous lower bound, rigorous upper bound as a float) of sigma_min(A).

    The upper bound is ``||x^T A|| / ||x||`` for the float left singular vector
    x of the midpoint (true for any x, so for every matrix in the ball it is
    ``<= ||x^T X|| / ||x||``, bounded above in arb).
    """
    mid, ball = _split(A)
    lo = sigma_min_lower_bound(A, prec=prec, squarings=squarings)
    U, _, _ = np.linalg.svd(mid, full_matrices=False)
    x = U[:, -1]
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        y = matmul(to_arb_mat(x[None, :]), Aball)
        num = frobenius_upper(y)
        den2 = arb(0)
        for v in x.tolist():
            den2 += arb(v) * arb(v)
        hi = num / den2.sqrt()
    return lo, float_up(hi)
