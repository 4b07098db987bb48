"""A rigorous enclosure of exp on float64 arrays (INTLAB-style standard function).

``exp_bounds(b, x)`` returns floats ``lo <= exp(x) <= hi`` entrywise for
every float ``x <= 709``, with relative width about ``1.3e-14``, in a handful
of vectorised operations on any backend (numpy, torch CPU/CUDA).  It does not
trust the platform's ``exp``: the value is computed from scratch.

* Range reduction: ``k = rint(x / ln 2)``, ``r = x - k ln 2`` with ``ln 2 =
  LN2_HI + LN2_LO + delta`` (``LN2_HI`` has 29 significant bits, so ``k
  LN2_HI`` is exact for ``|k| < 2^24``; ``|delta| < 2^-80`` is checked in arb
  at import).  Each of the three roundings in ``r`` is at most ``u |.|``
  and ``|k delta| < 2^-69``; with ``|r| <= 0.35`` (checked on every call) the
  computed ``r`` is within ``E_R = 2^-52`` of ``x - k ln 2``.
* ``exp(r)`` by its Taylor polynomial of degree 14 in Horner form with
  float coefficients ``c_j = fl(1/j!)``: the truncation error is below
  ``0.35^15/15! e^0.35``; Horner's rounding error is below ``gamma_28 sum_j
  |c_j| |r|^j`` (Higham, Eq. 5.3) and the coefficients' own error below
  ``u e^|r|``.  :data:`RHO` bounds the total relative error, including
  ``e^{E_R} - 1``; it is computed in arb at import.
* ``2^k`` is built exactly from its bit pattern; results below ``2^-1000``
  are widened to ``[0, 2^-1000]`` (``exp(x) < 2^-1000`` there, whatever the
  underflow behaviour), and ``x < -745`` gives ``[0, 2^-1000]`` directly
  (on numpy, where at most half the entries are ``>= -745``, as in the
  saturated softmax rows of Prop. 1's heads, only those are evaluated:
  the same values, a fraction of the passes).

>>> import numpy as np
>>> from verifier.arith.backend import get_backend
>>> lo, hi = exp_bounds(get_backend("numpy"), np.array([0.0, 1.0, -1000.0]))
>>> bool(lo[1] <= 2.718281828459045 <= hi[1]), float(lo[0]) <= 1.0 <= float(hi[0]), float(lo[2])
(True, True, 0.0)
"""
from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np
from flint import arb, ctx

from verifier.arith.float_bounds import FloatRangeError, U, fl_down, fl_up, gamma

__all__ = ["exp_bounds", "RHO", "X_MAX"]

LN2_HI = 0.6931471806019545  # = 372130559 / 2^29 (29 significant bits): k * LN2_HI is exact for |k| < 2^24
INV_LN2 = 1.4426950408889634
DEGREE = 14
R_MAX = 0.35  # |r| must stay below this (checked)
X_MAX = 709.0  # exp(709) < 2^1023: no overflow
X_MIN = -745.0  # exp(-745) < 2^-1074: below every float but 0
TINY = 2.0**-1000


def _constants():
    old = ctx.prec
    ctx.prec = 256
    try:
        ln2 = arb(2).log()
        lo = float((ln2 - arb(LN2_HI)).mid())
        delta = ln2 - arb(LN2_HI) - arb(lo)
        if not abs(delta) < arb(2) ** -80:
            raise AssertionError("ln 2 split is not accurate to 2^-80")
        coeffs = [float(Fraction(1, factorial(j))) for j in range(DEGREE + 1)]
        # relative error of p(r) against exp(r), |r| <= R_MAX
        e = arb(R_MAX).exp()
        trunc = arb(R_MAX) ** (DEGREE + 1) / factorial(DEGREE + 1) * e
        g = arb(gamma(2 * DEGREE).numerator) / arb(gamma(2 * DEGREE).denominator)
        u = arb(U.numerator) / arb(U.denominator)
        abs_err = g * (1 + u) * e + u * e + trunc  # |fl(p(r)) - exp(r)| <= abs_err (r known exactly)
        rel = abs_err * e  # exp(r) >= e^{-R_MAX}
        e_r = arb(2) ** -52
        # exp(r*) = exp(r) e^{r* - r}, |r* - r| <= e_r, and exp(r) in p / (1 +- rel):
        rho = e_r.exp() / (1 - rel) - 1
        rho_f = float(rho.upper()) * (1 + 2**-40)
        return lo, coeffs, rho_f
    finally:
        ctx.prec = old


LN2_LO, COEFFS, RHO = _constants()  # LN2_LO = fl(ln 2 - LN2_HI)
_UP = fl_up(Fraction(1 + Fraction(RHO)) / (1 - U))
_DOWN = fl_down(Fraction(1 - Fraction(RHO)) / (1 + U))


def _pow2(b, k):
    """2^k exactly for integer-valued float arrays k in [-1022, 1023], from the bit pattern."""
    if b.is_torch:
        import torch

        return ((k.to(torch.int64) + 1023) << 52).view(torch.float64)
    return ((k.astype(np.int64) + 1023) << 52).view(np.float64)


#: elements per pass: on the CPU small temporaries are recycled by the allocator (fresh pages are slow)
CHUNK = {"numpy": 1 << 18, "torch-cpu": 1 << 18, "torch-cuda": 1 << 26}


def exp_bounds(b, x):
    """(lo, hi): floats with ``lo <= exp(x) <= hi`` entrywise (x a float array of backend b)."""
    shape = tuple(x.shape)
    flat = x.reshape(-1)
    n = int(flat.shape[0])
    if n == 0:
        return flat.reshape(shape), flat.reshape(shape)
    if not b.all_finite(flat) or b.max(flat) > X_MAX:
        raise FloatRangeError(f"exp argument above {X_MAX} or not finite")
    step = CHUNK[b.name]
    if not b.is_torch:  # below X_MIN the answer is [0, TINY] whatever the polynomial gives: not evaluated
        live = np.flatnonzero(flat >= X_MIN)
        if live.size <= n // 2:  # saturated softmax rows: most logit differences are far below -745
            lo, hi = np.zeros(n), np.full(n, TINY)
            for i in range(0, live.size, step):
                at = live[i:i + step]
                lo[at], hi[at] = _exp_chunk(b, flat[at])
            return lo.reshape(shape), hi.reshape(shape)
    lo, hi = b.empty_like(flat), b.empty_like(flat)
    for i in range(0, n, step):
        lo[i:i + step], hi[i:i + step] = _exp_chunk(b, flat[i:i + step])
    return lo.reshape(shape), hi.reshape(shape)


def _exp_chunk(b, x):
    xc = b.maximum(x, X_MIN)
    k = b.rint(xc * INV_LN2)
    r = xc - k * LN2_HI  # k * LN2_HI exact
    r -= k * LN2_LO
    if b.max(b.abs(r)) > R_MAX:
        raise FloatRangeError("range reduction failed (|r| > 0.35)")
    p = r * COEFFS[DEGREE]
    p += COEFFS[DEGREE - 1]
    for j in range(DEGREE - 2, -1, -1):
        p *= r
        p += COEFFS[j]
    # k in [-1075, 1023]: 2^k = 2^k1 * 2^k2 with both factors normal
    k1 = b.maximum(k, -1000.0)
    k2 = k - k1  # in [-75, 0]
    scale = _pow2(b, k1)
    scale *= _pow2(b, k2)  # exact unless below 2^-1022 (then widened below)
    hi = p * _UP  # >= p (1 + RHO) >= exp(r)
    hi *= scale
    lo = p
    lo *= _DOWN
    lo *= scale
    small = (hi < TINY) | (x < X_MIN)
    return b.where(small, 0.0, lo), b.where(small, TINY, hi)
