"""exp_bounds (verifier/arith/float_exp.py) against Arb at 200 bits, at the
edges of its derivation (issue 17, item 2): the overflow limit X_MAX = 709,
the underflow range (results below 2^-1022, the 2^-1000 widening and X_MIN =
-745), the range-reduction boundaries (|r| near ln2 / 2, k near the split
k1/k2 of 2^k), long arrays that cross the chunk size, and the relative width
RHO that the Taylor/Horner analysis allows.  Exact truth: Arb's exp of the
float read exactly, at 200 bits.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb, ctx

from verifier.arith import float_exp
from verifier.arith.backend import get_backend
from verifier.arith.float_bounds import FloatRangeError
from verifier.arith.float_exp import RHO, X_MAX, exp_bounds

LN2 = math.log(2)


def _backends():
    out = [get_backend("numpy")]
    try:
        out.append(get_backend("torch-cpu"))
    except Exception:  # pragma: no cover - torch is a dependency
        pass
    return out


def _check(b, x: np.ndarray, rel: float | None = 4e-14):
    """lo <= exp(x) <= hi for every entry (Arb, 200 bits); and, where the
    value is in the normal range, hi - lo <= rel * exp(x)."""
    lo, hi = exp_bounds(b, b.asarray(x))
    lo, hi = b.to_numpy(lo), b.to_numpy(hi)
    old = ctx.prec
    ctx.prec = 200
    try:
        for xi, l, h in zip(x.ravel(), lo.ravel(), hi.ravel()):
            e = arb(float(xi)).exp()
            assert arb(float(l)) <= e.lower() and e.upper() <= arb(float(h)), (xi, l, h)
            if rel is not None and xi > -690:
                assert float(h) - float(l) <= rel * float(e.mid()), (xi, l, h, (h - l) / float(e.mid()))
    finally:
        ctx.prec = old
    return lo, hi


def _halfway_points(ks):
    """x = (k + 1/2) ln 2 (the range reduction's worst case, |r| ~ ln2/2 = 0.3466),
    and the two floats around it (k = rint(x / ln 2) flips between them)."""
    out = []
    for k in ks:
        x = (k + 0.5) * LN2
        out += [math.nextafter(x, -math.inf), x, math.nextafter(x, math.inf)]
    return np.array(out)


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_encloses_at_range_reduction_boundaries(b):
    x = _halfway_points([-1070, -1000, -999, -700, -60, -2, -1, 0, 1, 2, 60, 700, 1021])
    x = x[x <= X_MAX]
    _check(b, x)


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_encloses_near_overflow(b):
    x = np.array([X_MAX, math.nextafter(X_MAX, 0), 708.5, 708.0, 707.9999999999999, 700.0])
    lo, hi = _check(b, x)
    assert np.all(np.isfinite(hi))


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_above_the_range_is_refused(b):
    for bad in ([math.nextafter(X_MAX, math.inf)], [710.0], [np.inf], [np.nan], [0.0, np.nan]):
        with pytest.raises(FloatRangeError):
            exp_bounds(b, b.asarray(np.array(bad)))


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_encloses_in_the_underflow_range(b):
    """Results below 2^-1000 (x < -693.1), subnormal results (x < -708.4),
    below the smallest subnormal (x < -744.4), and x below X_MIN = -745 and
    at -inf-like magnitudes: lo = 0, hi >= exp(x), both rigorous."""
    x = np.array([-693.0, -693.2, -700.0, -708.3, -708.5, -720.0, -744.0, -744.5, -745.0,
                  math.nextafter(-745.0, -math.inf), -746.0, -1000.0, -1e300])
    lo, hi = _check(b, x, rel=None)
    assert np.all(lo[x < -693.15] == 0.0)
    assert np.all(hi[x < -693.15] <= 2.0**-1000)
    assert lo[0] > 0  # exp(-693) > 2^-1000: not widened


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_relative_width_is_what_rho_allows(b):
    """Tight in the normal range: a mutant that drops or doubles the Horner
    error, the coefficients, or the 2^k scaling fails either containment or
    this width (RHO ~ 1.3e-14 each way, plus the final rounding)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-690, 709, 400), rng.uniform(-1, 1, 200), np.array([0.0, 1e-300, -1e-300])])
    lo, hi = _check(b, x, rel=2 * RHO + 8 * 2.0**-53)
    assert RHO < 2e-14


@pytest.mark.parametrize("b", _backends(), ids=lambda b: b.name)
def test_exp_of_zero_and_tiny_arguments(b):
    lo, hi = _check(b, np.array([0.0, -0.0, 2.0**-1074, -(2.0**-1074), 2.0**-60, -(2.0**-60)]))
    assert lo[0] <= 1.0 <= hi[0] and lo[0] > 1 - 1e-13 and hi[0] < 1 + 1e-13


def test_exp_crosses_the_chunk_boundary():
    """More entries than one pass (CHUNK = 2^18): every pass fills its own
    slice; the entries around the boundary are checked against Arb, and the
    rest against math.exp to 1e-12."""
    b = get_backend("numpy")
    n = float_exp.CHUNK["numpy"] + 1000
    x = np.linspace(-50.0, 50.0, n)
    lo, hi = exp_bounds(b, x)
    ref = np.exp(x)
    assert np.all(lo <= ref * (1 + 1e-12)) and np.all(hi >= ref * (1 - 1e-12))
    assert np.all(hi - lo <= 1e-13 * ref)
    edge = slice(float_exp.CHUNK["numpy"] - 3, float_exp.CHUNK["numpy"] + 3)
    _check(b, x[edge])
    assert lo.shape == x.shape


def test_exp_keeps_shapes_and_accepts_empty_arrays():
    b = get_backend("numpy")
    x = np.array([[0.0, 1.0, 2.0], [-1.0, -2.0, 3.0]])
    lo, hi = exp_bounds(b, x)
    assert lo.shape == hi.shape == (2, 3)
    _check(b, x)
    lo, hi = exp_bounds(b, np.zeros((0, 4)))
    assert lo.shape == hi.shape == (0, 4)


def test_pow2_is_exact_over_the_normal_exponents():
    b = get_backend("numpy")
    k = np.arange(-1022, 1024, dtype=float)
    p = float_exp._pow2(b, k)
    assert all(float(pi) == math.ldexp(1.0, int(ki)) for pi, ki in zip(p, k))


def test_constants_are_what_the_derivation_uses():
    """ln 2 split to 2^-80 (checked in Arb at import), the Taylor coefficients
    1/j! rounded, and the scaling factors around 1 +/- RHO."""
    old = ctx.prec
    ctx.prec = 300
    try:
        err = arb(2).log() - arb(float_exp.LN2_HI) - arb(float_exp.LN2_LO)
        assert abs(err) < arb(2) ** -80
    finally:
        ctx.prec = old
    assert float_exp.COEFFS[0] == 1.0 and float_exp.COEFFS[1] == 1.0 and float_exp.COEFFS[2] == 0.5
    assert float_exp.COEFFS[14] == 1 / math.factorial(14)
    assert 1 + RHO < float_exp._UP < 1 + RHO + 4 * 2.0**-53
    assert 1 - RHO - 4 * 2.0**-53 < float_exp._DOWN < 1 - RHO


def test_constants_recomputed_independently():
    """``_constants()`` itself (module constants are computed once at import, so
    a mutant of it is only seen by calling it): ln 2's low part, the Taylor
    coefficients, and RHO recomputed in mpmath at 60 digits from the
    derivation in the module docstring (truncation + Horner gamma_28 + the
    coefficients' rounding, times e^R_MAX, then e^{2^-52}/(1 - rel) - 1)."""
    from fractions import Fraction

    import mpmath

    from verifier.arith.float_bounds import U, gamma

    old = ctx.prec
    lo, coeffs, rho = float_exp._constants()
    assert ctx.prec == old  # restored
    mp = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else mpmath.mp
    mp.dps = 60
    ln2 = mp.log(2)
    assert lo == float(ln2 - mp.mpf(float_exp.LN2_HI))
    assert abs(ln2 - mp.mpf(float_exp.LN2_HI) - mp.mpf(lo)) < mp.mpf(2) ** -80
    assert coeffs == [float(Fraction(1, math.factorial(j))) for j in range(float_exp.DEGREE + 1)]
    R, n = mp.mpf(float_exp.R_MAX), float_exp.DEGREE
    e = mp.exp(R)
    g, uu = gamma(2 * n), U
    abs_err = mp.mpf(g.numerator) / g.denominator * (1 + mp.mpf(uu.numerator) / uu.denominator) * e \
        + mp.mpf(uu.numerator) / uu.denominator * e + R ** (n + 1) / mp.factorial(n + 1) * e
    want = mp.exp(mp.mpf(2) ** -52) / (1 - abs_err * e) - 1
    assert want <= rho <= want * (1 + 2.0**-30)
    assert rho == RHO


@pytest.mark.parametrize("live", [0, 1, 7, 500])
def test_mostly_underflowing_arrays_evaluate_only_the_live_entries(live):
    """Saturated softmax rows: most arguments far below X_MIN = -745.  At most
    half the entries >= -745: only those go through the polynomial (the
    numpy path), the rest are [0, 2^-1000]; every entry still encloses exp
    (Arb), the live ones are the floats of the full evaluation, and entries
    just above and below -745, and a chunk boundary crossed by the live
    entries, are among them."""
    b = get_backend("numpy")
    rng = np.random.default_rng(live)
    n = 2 * float_exp.CHUNK["numpy"] + 3 if live == 500 else 41
    x = -rng.uniform(745.0, 1e6, n)
    where = rng.choice(n, size=min(live, n // 2), replace=False)
    x[where] = rng.uniform(-760.0, 40.0, where.size)
    if live:
        x[where[0]] = -745.0
        x[where[-1]] = math.nextafter(-745.0, -math.inf)
    lo, hi = exp_bounds(b, x)
    assert np.all(lo[x < -745.0] == 0.0) and np.all(hi[x < -745.0] == 2.0**-1000)
    full_lo, full_hi = float_exp._exp_chunk(b, x[where]) if live else (lo[:0], hi[:0])
    assert np.array_equal(lo[where], full_lo) and np.array_equal(hi[where], full_hi)
    _check(b, x[np.concatenate([where[:40], np.arange(5)])], rel=None)
    if live == 500:  # more live entries than one chunk: every chunk of them filled
        x[: n // 2 - 1] = rng.uniform(-700.0, 40.0, n // 2 - 1)
        lo, hi = exp_bounds(b, x)
        ok = x >= -745.0
        assert np.array_equal(lo[ok], float_exp._exp_chunk(b, x[ok])[0]) and np.all(lo[~ok] == 0.0)
