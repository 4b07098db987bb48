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
>>> from verifier.arith.compare import Decision
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
from verifier.arith.compare import Decision, UpperBound, certainly_less, lower
from verifier.arith.float_bounds import U, rowsum_up, up_scale
from verifier.arith.float_certificates import FloatBall, float_ball_of, sigma_min_lower_float
from verifier.arith.rank import RankLowerBound
from verifier.errors import InsufficientPrecision

__all__ = ["frobenius_up", "normwise_rank"]


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


def normwise_rank(Zball, rows, *, backend=None) -> RankLowerBound:
    """rank Z[rows] = |rows| for every Z in the ball ``Zball`` (FloatBall,
    T x m), by Weyl (module docstring); ``cols`` of the result is empty: no
    minor.  ``residual_norm_upper`` holds ||rad||_F / s (< 1 when certified)."""
    t0 = time.perf_counter()
    b = get_backend(backend)
    fb = float_ball_of(Zball, b)
    idx = np.asarray(rows, dtype=np.int64)
    sel = idx if not b.is_torch else __import__("torch").as_tensor(idx, device=b.device)
    mid, rad = fb.mid[sel], None if fb.rad is None else fb.rad[sel]
    r = frobenius_up(b, rad)
    try:
        s = sigma_min_lower_float(FloatBall(mid, None), backend=b)
        decision = certainly_less(UpperBound(arb(r)), s)
        ratio = r / lower(s)
    except InsufficientPrecision as exc:
        decision, ratio, why = Decision.UNDECIDED, float("inf"), f": {exc}"
    else:
        why = ""
    k = len(idx)
    how = (f"normwise (Weyl): sigma_min(mid Z[S]) >= s (float Gram-Cholesky, any summation order) > ||rad||_F "
           f">= ||Z[S] - mid||_2 over all {mid.shape[1]} columns [{b.name}]{why}")
    return RankLowerBound(k, tuple(int(i) for i in idx), (), decision, 53, how, ratio, time.perf_counter() - t0, k)
