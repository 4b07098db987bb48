"""rank >= k for a ball matrix by Weyl's inequality, over all its columns.

For every X with |X - mid| <= rad entrywise (a :class:`FloatBall`),

    sigma_k(X) >= sigma_k(mid) - ||X - mid||_2 >= s - ||rad||_F,

so ``s > ||rad||_F``, with ``s`` a certified lower bound of the EXACT float
midpoint's smallest singular value
(:func:`~verifier.arith.float_certificates.sigma_min_lower_float`: a float
Gram-Cholesky test with a priori bounds, any summation order), proves that
every X in the ball has full row rank.  It complements the minor test of
:mod:`verifier.arith.rank` (||I - R A_minor||_inf < 1): no minor is chosen,
every column counts, and the entrywise radii enter through one norm, which
wins for wide matrices whose entries are all known to a precision (a
transformers layer's Z: T x 9216).  A one-sided certificate: failure proves
nothing.

>>> import numpy as np
>>> from verifier.arith.float_certificates import FloatBall
>>> normwise_rank(FloatBall(np.eye(3, 5), np.full((3, 5), 0.1)), range(3)).decision   # 1 > 0.1 sqrt(15)
<Decision.TRUE: 'true'>
>>> normwise_rank(FloatBall(np.eye(3, 5), np.full((3, 5), 0.3)), range(3)).decision   # 1 < 0.3 sqrt(15)
<Decision.UNDECIDED: 'undecided'>
"""
from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
from flint import arb

from verifier.arith.backend import get_backend
from verifier.arith.compare import Decision, LowerBound, UpperBound, certainly_less, lower
from verifier.arith.float_bounds import U, check_ieee, check_range, rowsum_up, up_scale
from verifier.arith.float_certificates import _cholesky_defect, _gram_perturbation_bound, float_ball_of
from verifier.arith.rank import RankLowerBound
from verifier.errors import InsufficientPrecision

__all__ = ["frobenius_up", "normwise_rank", "NormwiseRank"]


def frobenius_up(b, rad) -> float:
    """A float >= ||rad||_F (rad >= 0): squares and sums rounded up."""
    if rad is None:
        return 0.0
    sq = up_scale(b, rad * rad, 1 / (1 - U))  # fl(r r) >= r^2 (1 - u) - UL; SLACK covers UL
    total = float(b.to_numpy(rowsum_up(b, rowsum_up(b, sq)[None, :]))[0])
    r = math.nextafter(math.sqrt(total), math.inf)
    while Fraction(r) ** 2 < Fraction(total):
        r = math.nextafter(r, math.inf)
    return r


class NormwiseRank:
    """Weyl's test on row subsets of one ball matrix (T x m, rows <= m): the
    float Gram G = fl(mid mid^T) is formed ONCE (T^2 m flops) and each subset
    S reads its block G[S, S] (each entry fl(mid_i . mid_j) whatever else is
    in the product: the a priori bound gamma_m |mid_i||mid_j| is per entry),
    so that a search over subsets costs one Gram and a few k^3 tests.
    :meth:`gram` hands the same float Gram to a caller that chooses rows."""

    def __init__(self, Zball, *, backend=None):
        self.b = get_backend(backend)
        check_ieee(self.b)
        fb = float_ball_of(Zball, self.b)
        self.mid, self.rad = fb.mid, fb.rad
        self._G = None

    def gram(self):
        """The symmetric float Gram (backend array), from the lower triangle of fl(mid mid^T)."""
        if self._G is None:
            b = self.b
            check_range(b, self.mid)
            G0 = b.tril(b.matmul(self.mid, self.mid.T))
            G = G0 + G0.T
            b.scale_diagonal(G, 0.5)  # the diagonal was doubled: halving is exact
            self._G = G
        return self._G

    def _take(self, a, idx):
        return a[idx] if not self.b.is_torch else a[__import__("torch").as_tensor(idx, device=self.b.device)]

    def sigma_lower(self, idx, tries: int = 4) -> LowerBound:
        """sigma_min(mid[idx]) >= s (the exact float midpoint), as
        :func:`~verifier.arith.float_certificates.sigma_min_lower_float` proves
        it, on the block of the shared Gram; InsufficientPrecision when no
        positive bound is proved."""
        b = self.b
        G = self._take(self._take(self.gram(), idx).T, idx).T
        mid = self._take(self.mid, idx)
        if mid.shape[0] > mid.shape[1]:
            raise InsufficientPrecision(f"{mid.shape[0]} rows in R^{mid.shape[1]}: dependent")
        eps_gram = _gram_perturbation_bound(b, mid, None)
        try:
            lam = float(b.to_numpy(b.eigvalsh(G))[0])
        except (np.linalg.LinAlgError, RuntimeError) as exc:
            raise InsufficientPrecision(f"float eigvalsh of the Gram failed ({exc})") from None
        if not lam > 0:
            raise InsufficientPrecision("fl(Z Z^T) is not positive definite: Z[S] may be rank deficient")
        alpha = lam * 15 / 16
        for _ in range(max(1, tries)):
            L, defect = _cholesky_defect(b, G, alpha)
            if L is not None:
                lb2 = Fraction(alpha) - defect - eps_gram
                if lb2 > 0:
                    v = math.nextafter(math.sqrt(float(lb2)), -math.inf)
                    while Fraction(v) ** 2 > lb2:
                        v = math.nextafter(v, -math.inf)
                    return LowerBound(arb(v))
            alpha /= 2
        raise InsufficientPrecision("Z Z^T - alpha I not proved positive definite for any alpha tried")

    def certify(self, rows) -> RankLowerBound:
        """rank Z[rows] = |rows| for every Z in the ball, or UNDECIDED."""
        t0 = time.perf_counter()
        idx = np.asarray(sorted(int(i) for i in rows), dtype=np.int64)
        r = frobenius_up(self.b, None if self.rad is None else self._take(self.rad, idx))
        try:
            s = self.sigma_lower(idx)
            decision, ratio, why = certainly_less(UpperBound(arb(r)), s), r / lower(s), ""
        except InsufficientPrecision as exc:
            decision, ratio, why = Decision.UNDECIDED, float("inf"), f": {exc}"
        k = len(idx)
        how = (f"normwise (Weyl): sigma_min(mid Z[S]) >= s (float Gram-Cholesky, any summation order) > ||rad||_F "
               f">= ||Z[S] - mid||_2 over all {self.mid.shape[1]} columns [{self.b.name}]{why}")
        return RankLowerBound(k, tuple(int(i) for i in idx), (), decision, 53, how, ratio, time.perf_counter() - t0,
                              k)


def normwise_rank(Zball, rows, *, backend=None) -> RankLowerBound:
    """rank Z[rows] = |rows| for every Z in the ball ``Zball`` (FloatBall,
    T x m), by Weyl (module docstring); ``cols`` of the result is empty: no
    minor.  ``residual_norm_upper`` holds ||rad||_F / s (< 1 when certified)."""
    return NormwiseRank(Zball, backend=backend).certify(rows)
