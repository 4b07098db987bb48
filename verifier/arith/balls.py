"""Ball (arb) matrices: conversion from floats and rigorous norm bounds.

A ball matrix ``M`` in python-flint's ``arb_mat`` holds, entry by entry, an
interval ``[m_ij +/- r_ij]``; it stands for every real matrix inside it.  This
module converts numpy arrays to ball matrices and measures them:

* ``to_arb_mat(A)`` is EXACT for float64 input: a double is a dyadic rational
  ``p 2^e`` with ``|p| < 2^53`` and ``arb`` stores it with radius 0 whatever the
  working precision.  So a float64 array *is* an exact rational matrix here.
* the ``*_upper`` functions return :class:`~verifier.arith.compare.UpperBound`
  values: ``>=`` the norm for EVERY matrix in the ball, one-sided (they prove
  ``||M|| < x``, never refute it: see :mod:`verifier.arith.compare`).  They are rigorous because each float step that
  could round down is followed by ``np.nextafter(., inf)`` (one float op under
  IEEE round-to-nearest is off by at most half an ulp, and python-flint's
  ``float(arb)`` by at most one ulp), and every sum is taken in arb.

The matrix norms used, for ``M`` in ``R^{m x n}``:

    ||M||_F   = sqrt(sum_ij M_ij^2)
    ||M||_inf = max_i sum_j |M_ij|            (largest row sum)
    ||M||_1   = max_j sum_i |M_ij|            (largest column sum)
    ||M||_2  <= min(||M||_F, sqrt(||M||_1 ||M||_inf))

(the last by Hoelder: ||M||_2^2 = rho(M^T M) <= ||M^T M||_1 <= ||M||_inf ||M||_1).

>>> M = to_arb_mat([[3.0, -4.0]])
>>> upper(frobenius_upper(M)) >= 5.0
True
>>> upper(inf_norm_upper(M)) >= 7.0
True
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

import numpy as np
from flint import arb, arb_mat, ctx

from verifier.arith.compare import UpperBound, upper
from verifier.errors import InvalidInstance

__all__ = [
    "to_arb_mat",
    "arb_mat_mid",
    "arb_mat_rad_upper",
    "arb_mat_abs_upper",
    "frobenius_upper",
    "inf_norm_upper",
    "one_norm_upper",
    "spectral_norm_upper",
    "identity",
    "matmul",
    "float_up",
]

_THREADS = max(1, min(os.cpu_count() or 1, 8))


def _up(x: np.ndarray | float) -> np.ndarray:
    """One ulp towards +inf: turns a round-to-nearest result into an upper bound."""
    return np.nextafter(x, np.inf)


def _squares_up(U: np.ndarray) -> np.ndarray:
    """Floats >= U_ij^2 (nonnegative U): one ulp up, exact zeros kept (so a zero
    matrix has norm bound 0, while a square that underflows is still nudged up)."""
    return np.where(U == 0, 0.0, _up(U * U))


def _float_up0(x: arb) -> float:
    """:func:`float_up`, but an exact zero stays 0."""
    return 0.0 if x.is_zero() else float_up(x)


def float_up(x) -> float:
    """A Python float ``>=`` every point of the ball ``x`` (rigorous).

    ``float(arb)`` rounds to nearest, so :func:`verifier.arith.compare.upper` may
    land half an ulp below the exact endpoint; one ``nextafter`` fixes that.
    """
    return float(_up(upper(x)))


def ball_max(xs) -> arb:
    """A ball containing max(x_1, ..., x_k) for every choice of points of the balls."""
    xs = list(xs)
    m = xs[0]
    for x in xs[1:]:
        m = m.max(x)
    return m


def ball_min(xs) -> arb:
    """A ball containing min(x_1, ..., x_k) for every choice of points of the balls."""
    xs = list(xs)
    m = xs[0]
    for x in xs[1:]:
        m = m.min(x)
    return m


def as_float_matrix(A, what: str = "matrix", *, rounding: bool = False) -> np.ndarray:
    """A finite 2-D float64 array holding exactly the values given, or
    InvalidInstance with one line saying why: integers beyond 2^53, long
    doubles, Fractions or fmpq that float64 would round are refused (a
    certificate of the rounded matrix is not one of the matrix given).
    ``rounding=True``: the nearest floats, for a caller that keeps the exact
    values and lets the floats only propose."""
    try:
        raw = np.asarray(A)
        if raw.dtype.kind in "USaVcM":
            raise TypeError(f"{raw.dtype} entries are not real numbers")
        a = raw.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInstance(f"not a real {what}: {exc}") from None
    if a.ndim != 2:
        raise InvalidInstance(f"expected a 2-D {what}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InvalidInstance(f"{what} has NaN or infinite entries")
    if not rounding and _rounded(raw, a):
        raise InvalidInstance(f"{what} has values float64 would round (integers beyond 2^53, long doubles, exact "
                              "rationals): pass them as exact rationals (an object array of fmpq) or as floats")
    return a


def _rounded(raw: np.ndarray, a: np.ndarray) -> bool:
    """Whether the float64 array ``a`` differs from the values ``raw`` it was read from."""
    from flint import fmpq

    kind = raw.dtype.kind
    if kind == "b" or (kind == "f" and raw.dtype.itemsize <= 8):
        return False  # booleans and binary16/32/64 widen exactly
    if kind in "iu":
        return bool(np.any((raw > 2**53) | (raw < -(2**53))))  # every integer up to 2^53 is a float64
    if kind == "f":  # long double
        return bool(np.any(a.astype(raw.dtype) != raw))
    return any(_given(x) != fmpq(*f.as_integer_ratio()) for x, f in zip(raw.reshape(-1).tolist(), a.reshape(-1).tolist()))


def _given(x):
    """One entry of an object array as the exact rational it is (:func:`.exact.to_fmpq`); a string is no number here."""
    from verifier.arith.exact import to_fmpq

    if isinstance(x, (str, bytes)):
        raise InvalidInstance(f"not a number: {x!r}")
    return to_fmpq(x)


def exact_rationals_if_rounded(A):
    """A finite 2-D numeric array whose values float64 would round (integers
    beyond 2^53, long doubles) as an object array of exact rationals (fmpq),
    for the exact paths; None otherwise (float64 holds it, or it is not such
    an array: :func:`as_float_matrix` says why)."""
    raw = np.asarray(A)
    if raw.dtype.kind not in "iuf" or raw.ndim != 2:
        return None
    with np.errstate(all="ignore"):
        a = raw.astype(np.float64)
    if not np.all(np.isfinite(a)) or not _rounded(raw, a):
        return None
    return np.array([_given(x) for x in raw.reshape(-1).tolist()], dtype=object).reshape(raw.shape)


def to_arb_mat(A) -> arb_mat:
    """A 2-D float64 array (or nested list of numbers) as an exact ``arb_mat``.

    Every float64 is a dyadic rational, so the result has radius 0 entrywise:
    no rounding happens, whatever ``ctx.prec`` is.  An ``arb_mat`` is returned
    unchanged.  NaN/inf entries raise :class:`InvalidInstance`.

    >>> to_arb_mat([[0.1]])[0, 0].rad() == 0
    True
    """
    if isinstance(A, arb_mat):
        return A
    a = as_float_matrix(A)
    m, n = a.shape
    if m == 0 or n == 0:
        return arb_mat(m, n)
    return arb_mat(a.tolist())


def _upper_floats(xs: list) -> np.ndarray:
    """Floats >= the nonnegative exact values ``xs`` (arb): one ulp up, except
    that exact zeros stay 0 (a float 0 from underflow becomes 5e-324)."""
    f = np.array([float(x) for x in xs], dtype=np.float64)
    up = _up(f)
    zero = np.flatnonzero(f == 0)
    if zero.size:
        exact0 = np.array([xs[i].is_zero() for i in zero.tolist()], dtype=bool)
        up[zero[exact0]] = 0.0
    return up


def arb_mat_mid(M) -> np.ndarray:
    """Midpoints as a float64 array (rounded to nearest: a float, not a bound)."""
    if not isinstance(M, arb_mat):
        return as_float_matrix(M).copy()
    m, n = M.nrows(), M.ncols()
    return np.array([float(e) for e in M.entries()], dtype=np.float64).reshape(m, n)


def arb_mat_rad_upper(M) -> np.ndarray:
    """Float64 upper bounds of the radii (zeros for a float array)."""
    if not isinstance(M, arb_mat):
        return np.zeros_like(as_float_matrix(M))
    return _upper_floats([e.rad() for e in M.entries()]).reshape(M.nrows(), M.ncols())


def arb_mat_abs_upper(M) -> np.ndarray:
    """Float64 array ``U`` with ``|X_ij| <= U_ij`` for every ``X`` in the ball.

    For a float array this is ``|A|`` itself (exact).
    """
    if not isinstance(M, arb_mat):
        return np.abs(as_float_matrix(M))
    return _upper_floats([e.abs_upper() for e in M.entries()]).reshape(M.nrows(), M.ncols())


@contextmanager
def _threads() -> Iterator[None]:
    """Let flint's matrix product use the machine's cores (restored after)."""
    old = ctx.threads
    ctx.threads = _THREADS
    try:
        yield
    finally:
        ctx.threads = old


def matmul(A: arb_mat, B: arb_mat) -> arb_mat:
    """Ball product ``A B`` (an enclosure of every product), multi-threaded."""
    with _threads():
        return A * B


def _ones(n: int, column: bool = True) -> arb_mat:
    return arb_mat(n, 1, [1] * n) if column else arb_mat(1, n, [1] * n)


def _sums_upper(U: np.ndarray, axis: int) -> np.ndarray:
    """Rigorous float upper bounds of the row (axis=1) / column (axis=0) sums
    of a nonnegative float array, summed in arb."""
    m, n = U.shape
    if m == 0 or n == 0:
        return np.zeros(m if axis == 1 else n)
    Ua = arb_mat(U.tolist())
    S = matmul(Ua, _ones(n)) if axis == 1 else matmul(_ones(m, column=False), Ua)
    return np.array([_float_up0(s) for s in S.entries()], dtype=np.float64)


def inf_norm_upper(M) -> UpperBound:
    """``u >= max_i sum_j |M_ij|`` for every matrix in the ball (u an exact float)."""
    U = arb_mat_abs_upper(M)
    s = _sums_upper(U, axis=1)
    return UpperBound(arb(float(s.max())) if s.size else arb(0))


def one_norm_upper(M) -> UpperBound:
    """``u >= max_j sum_i |M_ij|`` for every matrix in the ball (u an exact float)."""
    U = arb_mat_abs_upper(M)
    s = _sums_upper(U, axis=0)
    return UpperBound(arb(float(s.max())) if s.size else arb(0))


def frobenius_upper(M) -> UpperBound:
    """``u >= ||M||_F`` for every matrix in the ball (rigorous, u an exact float).

    Squares are formed in float and nudged up one ulp, then summed in arb.
    """
    U = arb_mat_abs_upper(M)
    if U.size == 0:
        return UpperBound(arb(0))
    sq = _squares_up(U)
    rows = _sums_upper(sq, axis=1)
    total = arb(0)
    for r in rows.tolist():
        total += r
    return UpperBound(arb(_float_up0(total.sqrt())))


def _norms_upper(M) -> tuple[float, float, float]:
    U = arb_mat_abs_upper(M)
    if U.size == 0:
        return 0.0, 0.0, 0.0
    one = float(_sums_upper(U, axis=0).max())
    inf = float(_sums_upper(U, axis=1).max())
    rows = _sums_upper(_squares_up(U), axis=1)
    total = arb(0)
    for r in rows.tolist():
        total += r
    return _float_up0(total.sqrt()), one, inf


def spectral_norm_upper(M) -> UpperBound:
    """``u >= ||M||_2`` for every matrix in the ball (one-sided; u an exact float):
    ``min(||M||_F, sqrt(||M||_1 ||M||_inf))`` with each norm bounded above.
    A lower bound (to refute ``||M||_2 < x``) is
    :func:`verifier.arith.singular_values.spectral_norm_lower_bound`.

    >>> upper(spectral_norm_upper(identity(4))) >= 1.0
    True
    """
    fro, one, inf = _norms_upper(M)
    hoelder = _float_up0((arb(one) * arb(inf)).sqrt())
    return UpperBound(arb(min(fro, hoelder)))


def identity(n: int) -> arb_mat:
    """The exact ``n x n`` identity as an ``arb_mat``."""
    if n < 0:
        raise InvalidInstance(f"identity size must be >= 0, got {n}")
    I = arb_mat(n, n)
    for i in range(n):
        I[i, i] = 1
    return I


class BallArray:
    """Midpoints and entrywise radii of data known to a precision: every
    array ``X`` with ``|X - mid| <= rad`` (``rad`` None: the exact floats
    ``mid``).  Indexing selects both; the ball back ends
    (:mod:`verifier.model.mha_balls`, :mod:`verifier.model.mha_float`) read
    it as balls, so what they enclose holds for every such X.

    >>> b = BallArray(np.zeros((2, 3)), np.full((2, 3), 0.5))
    >>> b[1].shape, float(b[1].rad[0])
    ((3,), 0.5)
    """

    __slots__ = ("mid", "rad", "exact")

    def __init__(self, mid, rad=None, exact=None):
        self.mid = mid
        self.rad = rad
        self.exact = exact  # the exact values (fmpq) when they are points that float64 rounds: read exactly

    @property
    def shape(self):
        return self.mid.shape

    @property
    def ndim(self):
        return self.mid.ndim

    @property
    def strides(self):
        return self.mid.strides

    def __len__(self):
        return len(self.mid)

    def __getitem__(self, idx) -> "BallArray":
        return BallArray(self.mid[idx], None if self.rad is None else self.rad[idx],
                         None if self.exact is None else self.exact[idx])

    def to_arb_mat(self) -> arb_mat:
        """The balls as an ``arb_mat`` (2-D; a vector as a column)."""
        if self.exact is not None:  # exact points: each rational as a ball at the working precision
            q = np.asarray(self.exact, dtype=object)
            q = q[:, None] if q.ndim == 1 else q
            return arb_mat([[arb(x) for x in row] for row in q])
        mid = np.asarray(self.mid, dtype=np.float64)
        rad = None if self.rad is None else np.asarray(self.rad, dtype=np.float64)
        if mid.ndim == 1:
            mid, rad = mid[:, None], None if rad is None else rad[:, None]
        if rad is None:
            return to_arb_mat(mid)
        return arb_mat([[arb(float(m), float(r)) for m, r in zip(rm, rr)] for rm, rr in zip(mid, rad)])
