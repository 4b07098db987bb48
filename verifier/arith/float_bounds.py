"""A priori error bounds for float64 computations, valid for any summation order.

The rigorous floating-point path (Rump, "Verification methods: rigorous
results using floating-point arithmetic", Acta Numerica 19, 2010, Sec. 2-3;
Higham, "Accuracy and Stability of Numerical Algorithms", Ch. 2-3) rests on
the standard model of IEEE 754 binary64 arithmetic with rounding to nearest:
every operation ``op`` returns ``fl(a op b) = (a op b)(1 + delta) + eta`` with
``|delta| <= u = 2^-53`` and ``|eta| <= UL``.  (With gradual underflow
``eta`` is 0 for additions and at most ``2^-1075`` for products; ``UL =
2^-1022`` is used everywhere, which also covers flush-to-zero.)  From it:

* a dot product of length ``k`` summed in ANY order (any tree, blocked, with
  or without FMA, as OpenBLAS, MKL and cuBLAS do; not a Strassen-like
  product) satisfies ``|fl(x^T y) - x^T y| <= gamma_k |x|^T |y| + 3 k UL``,
  ``gamma_k = k u / (1 - k u)`` (Higham, Lemma 3.1 and Eq. 3.5);
* for nonnegative ``x, y`` the computed sum is ``>= (1 - gamma_k) x^T y -
  3 k UL``, so ``x^T y <= (fl(x^T y) + 3 k UL) / (1 - gamma_k)``.

No rounding mode is ever changed.  The bounds on the bounds (a float ``F x +
A`` evaluated in floats) are made rigorous by inflating the constants
(:func:`up_scale`): ``fl(fl(x f) + a) >= F x + A`` whenever ``f >= F/(1-u)^2``
and ``a >= A/(1-u) + UL``, with ``f`` and ``a`` rounded up from exact
rationals (:func:`fl_up`).

Range: every operand must be finite with ``|x| <= 2^400`` and inner
dimensions at most ``2^40`` (:func:`check_range`); then each absolute
underflow contribution (``3 k UL`` times a factor of at most ``k 2^400``) is
below ``2^-500``, the absolute slack :data:`SLACK` added by :func:`up_scale`.

>>> from verifier.arith.backend import get_backend
>>> import numpy as np
>>> b = get_backend("numpy")
>>> x = np.array([[1.0, 2.0**-60, 2.0**-60]])
>>> s = float(rowsum_up(b, x)[0])
>>> s >= 1 + 2 * 2.0**-60          # the float sum is 1.0; the bound is above the exact sum
True
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from verifier.errors import InsufficientPrecision

__all__ = [
    "U", "UL", "SLACK", "MAG", "MAX_K", "FloatRangeError", "check_ieee", "fl_up", "fl_down", "gamma", "check_range",
    "up_scale", "down_scale", "add_up", "rowsum_up", "nonneg_matmul_up", "ball_matmul", "abs_upper",
    "INV_1MU", "INV_1PU", "U_1MU", "inv_1m_gamma", "product_slack", "constant_cache", "cached_constant", "clear_constant_caches",
    "colsum_up",
]

U = Fraction(1, 2**53)  #: unit roundoff of binary64, rounding to nearest
UL = Fraction(1, 2**1022)  #: absolute error of one operation in the underflow range (covers flush-to-zero)
SLACK = Fraction(1, 2**500)  #: absolute slack per bound: exceeds every underflow contribution here
MAG = 2.0**400  #: largest operand magnitude accepted
MAX_K = 2**40  #: largest inner dimension accepted


class FloatRangeError(InsufficientPrecision):
    """An operand is not finite, or too large, for the a priori bounds: the
    float certificate cannot decide (the caller reports UNDECIDED)."""


_IEEE_CHECKED: set = set()


def check_ieee(b) -> None:
    """The backend's float64 rounds to nearest (ties to even) and underflows
    gradually, as the model above assumes; checked once per backend on its
    own device (a changed rounding mode or flush-to-zero raises)."""
    if b.name in _IEEE_CHECKED:
        return
    one = b.asarray(np.array([1.0, 2.0**-1040, 3.0]))
    tie = b.to_numpy(one[:1] + 2.0**-53)[0]  # a tie: rounds to even, 1.0
    near = b.to_numpy(one[:1] + 1.5 * 2.0**-53)[0]  # rounds up to 1 + 2^-52 to nearest
    down = b.to_numpy(-one[:1] - 1.5 * 2.0**-53)[0]  # to nearest: -(1 + 2^-52)
    sub = b.to_numpy(one[1:2] * 0.5)[0]  # 2^-1041: subnormal, kept by gradual underflow
    prod = b.to_numpy(b.matmul(one[None, 1:2], one[1:2, None] * 0 + 2.0**-10))[0, 0]
    ok = tie == 1.0 and near == 1.0 + 2.0**-52 and down == -(1.0 + 2.0**-52) and sub == 2.0**-1041 \
        and prod == 2.0**-1050
    if not ok:
        raise FloatRangeError(f"backend {b.name}: float64 is not IEEE round-to-nearest with gradual underflow")
    _IEEE_CHECKED.add(b.name)


def fl_up(q: Fraction | int | float) -> float:
    """The smallest float ``>= q`` (exact rational in, rigorous float out)."""
    q = Fraction(q)
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def fl_down(q: Fraction | int | float) -> float:
    """The largest float ``<= q``."""
    q = Fraction(q)
    f = float(q)
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


#: the rational constants the bounds use most, formed once (exact rational arithmetic at every call costs
#: more than the small arrays it scales)
INV_1MU = 1 / (1 - U)  #: 1 / (1 - u)
INV_1PU = 1 / (1 + U)  #: 1 / (1 + u)
U_1MU = U / (1 - U)  #: u / (1 - u)


#: every cache of exact constants (a dict per function, plain functions: mutation testing mutates them),
#: emptied together by :func:`clear_constant_caches` (the test suite does, before each test)
_CACHES: list[dict] = []
_CACHE_SIZE = 4096


def constant_cache() -> dict:
    """A new dict of exact constants, registered for :func:`clear_constant_caches`."""
    cache: dict = {}
    _CACHES.append(cache)
    return cache


def clear_constant_caches() -> None:
    """Empty every cache of exact constants: each is computed again on first use."""
    for cache in _CACHES:
        cache.clear()


def cached_constant(cache: dict, key, compute):
    """``cache[key]``, computed by ``compute()`` on first use."""
    value = cache.get(key)
    if value is None:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        value = cache[key] = compute()
    return value


_GAMMA = constant_cache()
_INV_1M_GAMMA = constant_cache()
_PRODUCT_SLACK = constant_cache()
_MATMUL_SLACK = constant_cache()


def gamma(k: int) -> Fraction:
    """``gamma_k = k u / (1 - k u)`` exactly (Higham, Lemma 3.1); cached."""
    k = int(k)
    if k < 0 or k > MAX_K:
        raise FloatRangeError(f"inner dimension {k} outside [0, 2^40]")
    return cached_constant(_GAMMA, k, lambda: k * U / (1 - k * U))


def inv_1m_gamma(k: int) -> Fraction:
    """``1 / (1 - gamma_k)`` exactly (row sums and nonnegative products), cached."""
    return cached_constant(_INV_1M_GAMMA, int(k), lambda: 1 / (1 - gamma(k)))


def product_slack(k: int) -> Fraction:
    """``3 k UL + SLACK``: a product's underflow terms and the slack, cached."""
    return cached_constant(_PRODUCT_SLACK, int(k), lambda: 3 * int(k) * UL + SLACK)


def check_range(b, *arrays) -> None:
    """Every entry finite and ``|x| <= 2^400``, else :class:`FloatRangeError`.
    Two reductions per operand, no temporary: its largest and smallest entry
    both within [-2^400, 2^400] (a NaN fails the comparison: the max and min
    of an array holding one are NaN); only then is the reason looked for."""
    for a in arrays:
        if a is None or (a.numel() if b.is_torch else a.size) == 0:
            continue
        if float(a.max()) <= MAG and float(a.min()) >= -MAG:
            continue
        if not b.all_finite(a):
            raise FloatRangeError("an operand has NaN or infinite entries")
        raise FloatRangeError("an operand exceeds 2^400 in magnitude: outside the float certificate's range")


def up_scale(b, x, F: Fraction, A: Fraction = SLACK):
    """Floats ``>= F x + A`` entrywise for a nonnegative float array ``x``.

    ``fl(x f) >= x f (1-u) - UL`` and, both terms being nonnegative,
    ``fl(y + a) >= (y + a)(1-u)``; so ``fl(fl(x f) + a) >= x f (1-u)^2 + (a -
    UL)(1-u) >= F x + A`` with ``f = fl_up(F/(1-u)^2)``, ``a = fl_up(A/(1-u) + UL)``.
    """
    key = (_ratio(F), _ratio(A))
    f, a = cached_constant(_UP, key, lambda: _up_constants(Fraction(*key[0]), Fraction(*key[1])))
    return x * f + a


#: (f, a) of up_scale and f of down_scale, by the exact (numerator, denominator) of their rationals: a dict
#: lookup per call (a Fraction's own hash costs a modular inverse of its 1000-bit denominator)
_UP = constant_cache()
_DOWN = constant_cache()


def _ratio(q) -> tuple[int, int]:
    """(numerator, denominator) of q exactly, lowest terms (Fraction, int, float)."""
    if type(q) is Fraction:
        return q.numerator, q.denominator
    if type(q) is int:
        return q, 1
    q = Fraction(q)
    return q.numerator, q.denominator


def _up_constants(F: Fraction, A: Fraction) -> tuple[float, float]:
    """(f, a) of :func:`up_scale`: exact rational arithmetic, done once per
    pair (:data:`_UP`)."""
    return fl_up(F / (1 - U) ** 2), fl_up(A / (1 - U) + UL)


def down_scale(b, x, F: Fraction):
    """Floats ``<= F x`` entrywise for a nonnegative float array ``x`` (0 where
    the product would be tiny): ``fl(x f) <= x f (1+u)`` in the normal range
    with ``f = fl_down(F/(1+u))``; results below ``2^-1000`` are replaced by 0."""
    key = _ratio(F)
    f = cached_constant(_DOWN, key, lambda: fl_down(Fraction(*key) / (1 + U)))
    y = x * f
    return b.where(y < 2.0**-1000, 0.0, y)


def add_up(b, x, y):
    """Floats ``>= x + y`` for nonnegative float arrays (one rounded addition)."""
    return up_scale(b, x + y, INV_1MU)


def abs_upper(b, mid, rad=None):
    """Floats ``>= |X|`` entrywise for every X in the ball ``mid +/- rad``."""
    a = b.abs(mid)
    return a if rad is None else add_up(b, a, rad)


def rowsum_up(b, M):
    """Floats ``>= sum_j M_ij`` (exact row sums of a nonnegative float array),
    whatever order the backend sums in: ``sum <= fl(sum) / (1 - gamma_k)``.
    numpy sums as a product with a vector of ones (each term times 1 is
    exact; BLAS sums in its own order, 3-4x faster than ``np.sum`` along a
    short last axis)."""
    k = M.shape[-1]
    s = M.sum(-1) if b.is_torch else np.matmul(M, np.ones(k))
    return up_scale(b, s, inv_1m_gamma(k))


def colsum_up(b, M):
    """Floats ``>= sum_i M_ij`` (exact column sums, over the second-to-last
    axis, of a nonnegative float array): :func:`rowsum_up` of the transpose,
    summed as ``1^T M`` on numpy (no transposed copy)."""
    k = M.shape[-2]
    s = M.sum(-2) if b.is_torch else np.matmul(np.ones(k), M)
    return up_scale(b, s, inv_1m_gamma(k))


def nonneg_matmul_up(b, P, Q):
    """Floats ``>= P Q`` entrywise (exact product) for nonnegative float arrays
    (``Q`` may be a vector): ``P Q <= (fl(P Q) + 3 k UL) / (1 - gamma_k)``."""
    k = P.shape[-1]
    check_range(b, P, Q)
    return up_scale(b, b.matmul(P, Q), inv_1m_gamma(k), _matmul_slack(k))


def _matmul_slack(k: int) -> Fraction:
    """``3 k UL / (1 - gamma_k) + SLACK`` (:func:`nonneg_matmul_up`), cached."""
    return cached_constant(_MATMUL_SLACK, int(k), lambda: (3 * k * UL) / (1 - gamma(k)) + SLACK)


def ball_matmul(b, A_mid, A_rad, B_mid, B_rad):
    """(C_mid, C_rad) with ``|X Y - C_mid| <= C_rad`` entrywise for every X in
    ``A_mid +/- A_rad`` and Y in ``B_mid +/- B_rad`` (a radius may be None:
    an exact float matrix).  ``C_mid = fl(A_mid B_mid)`` and

        |XY - C_mid| <= gamma_k |A_mid||B_mid| + 3 k UL      (rounding)
                        + |A_mid| B_rad + A_rad (|B_mid| + B_rad)

    evaluated as ``|A_mid| (gamma_k |B_mid| + B_rad) + A_rad (|B_mid| + B_rad)``:
    one nonnegative product for exact A, two otherwise (batched arrays work
    when the backend's ``@`` broadcasts)."""
    check_range(b, A_mid, A_rad, B_mid, B_rad)
    k = A_mid.shape[-1]
    g = gamma(k)
    C = b.matmul(A_mid, B_mid)
    aB = b.abs(B_mid)
    G1 = up_scale(b, aB, g) if B_rad is None else add_up(b, up_scale(b, aB, g), B_rad)
    R = nonneg_matmul_up(b, b.abs(A_mid), G1)
    if A_rad is not None:
        G2 = aB if B_rad is None else add_up(b, aB, B_rad)
        R = add_up(b, R, nonneg_matmul_up(b, A_rad, G2))
    return C, up_scale(b, R, 1, product_slack(k))
