"""check_ieee (verifier/arith/float_bounds.py) against backends that round
otherwise (issue 17, item 2).

The a priori bounds assume IEEE binary64 rounding to nearest, ties to even,
with gradual underflow; ``check_ieee`` probes the backend once per name.  Here
the probe meets emulated arithmetics, each wrong in ONE way (the result of
every +, -, * and matmul is the exact rational rounded by the named rule, so
the emulation is the same on every machine):

* ``nearest-even`` (IEEE): accepted;
* ``toward-zero``, ``upward``, ``downward``, ``nearest-away`` (ties away from
  zero), ``negatives-truncated`` (nearest for positive results, toward zero
  for negative ones), ``flush-products`` (elementwise products below 2^-1022
  flushed to 0): each refused.  Together they need every comparison of the
  probe (the tie, the near case, the negative case, the subnormal product).

The probe is cached per backend name, so each backend here has a fresh name
and is removed from the cache afterwards (mutmut's children inherit the
cache of the parent, where "numpy" was probed before any mutant ran).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from verifier.arith import float_bounds as fb
from verifier.arith.backend import Backend

TWO_M1022 = Fraction(1, 2**1022)


def _round(q: Fraction, rule: str) -> float:
    """The exact rational q rounded to a float64 by ``rule``."""
    if rule == "flush-products":
        rule = "nearest-even"
    f = float(q)  # correctly rounded to nearest, ties to even (subnormals included)
    if Fraction(f) == q or rule == "nearest-even":
        return f
    up = f if Fraction(f) > q else math.nextafter(f, math.inf)
    down = f if Fraction(f) < q else math.nextafter(f, -math.inf)
    if rule == "upward":
        return up
    if rule == "downward":
        return down
    if rule == "toward-zero" or (rule == "negatives-truncated" and q < 0):
        return down if q > 0 else up
    if rule == "negatives-truncated":
        return f
    if rule == "nearest-away":
        tie = Fraction(up) - q == q - Fraction(down)
        return (up if q > 0 else down) if tie else f
    raise ValueError(rule)


class Emulated(np.ndarray):
    """float64 arrays whose +, -, * and @ round by ``rule`` (exact rationals, then rounded)."""

    rule = "nearest-even"

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x) if isinstance(x, np.ndarray) else x for x in inputs]
        ops = {np.add: lambda a, b: a + b, np.subtract: lambda a, b: a - b, np.multiply: lambda a, b: a * b}
        if method == "__call__" and ufunc in ops and not kwargs:
            a, b = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in plain))
            out = np.empty(a.shape)
            for idx in np.ndindex(*a.shape):
                q = ops[ufunc](Fraction(float(a[idx])), Fraction(float(b[idx])))
                r = _round(q, self.rule)
                if self.rule == "flush-products" and ufunc is np.multiply and abs(Fraction(r)) < TWO_M1022:
                    r = 0.0
                out[idx] = r
            return self._wrap(out)
        if method == "__call__" and ufunc is np.negative:
            return self._wrap(-np.asarray(plain[0]))
        if method == "__call__" and ufunc is np.matmul and not kwargs:
            A, B = (np.asarray(x, dtype=np.float64) for x in plain)
            out = np.empty(A.shape[:-1] + B.shape[-1:])
            for i, j in np.ndindex(*out.shape):
                q = sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(A[i], B[:, j])), Fraction(0))
                out[i, j] = _round(q, self.rule)
            return self._wrap(out)
        return getattr(ufunc, method)(*plain, **kwargs)

    def _wrap(self, out):
        view = np.asarray(out, dtype=np.float64).view(type(self))
        view.rule = self.rule
        return view

    def __array_finalize__(self, obj):
        self.rule = getattr(obj, "rule", "nearest-even")


class EmulatedBackend(Backend):
    """The numpy backend, its arrays rounding by ``rule``."""

    def __init__(self, rule: str):
        object.__setattr__(self, "name", f"emulated-{rule}")
        object.__setattr__(self, "rule", rule)

    def asarray(self, a):
        view = np.array(a, dtype=np.float64).view(Emulated)
        view.rule = self.rule
        return view

    def to_numpy(self, a):
        return np.asarray(a).view(np.ndarray)

    def matmul(self, a, b):
        return np.matmul(a, b)


def _probe(rule: str) -> None:
    b = EmulatedBackend(rule)
    fb._IEEE_CHECKED.discard(b.name)
    try:
        fb.check_ieee(b)
    finally:
        fb._IEEE_CHECKED.discard(b.name)


def test_the_emulation_rounds_as_named():
    u = Fraction(1, 2**53)
    assert _round(1 + u, "nearest-even") == 1.0 and _round(1 + u, "nearest-away") == 1.0 + 2.0**-52
    assert _round(1 + u, "upward") == 1.0 + 2.0**-52 and _round(1 + 3 * u, "downward") == 1.0 + 2.0**-52
    assert _round(-(1 + u), "toward-zero") == -1.0 and _round(-(1 + 3 * u), "negatives-truncated") == -(1 + 2.0**-52)
    assert _round(-(1 + u), "downward") == -(1 + 2.0**-52) and _round(-(1 + u), "upward") == -1.0
    assert _round(1 + 3 * u, "negatives-truncated") == 1.0 + 2.0**-51
    x = EmulatedBackend("flush-products").asarray([2.0**-1040])
    assert float((x * 0.5)[0]) == 0.0 and float((x + x)[0]) == 2.0**-1039


def test_check_ieee_accepts_round_to_nearest_even_under_a_fresh_name():
    """The probe itself on a correct arithmetic not cached yet: a mutant that
    breaks one of its comparisons refuses IEEE arithmetic."""
    _probe("nearest-even")
    _probe_numpy = Backend("numpy-fresh-probe")
    fb._IEEE_CHECKED.discard(_probe_numpy.name)
    try:
        fb.check_ieee(_probe_numpy)
        assert _probe_numpy.name in fb._IEEE_CHECKED
    finally:
        fb._IEEE_CHECKED.discard(_probe_numpy.name)


@pytest.mark.parametrize("rule", ["toward-zero", "upward", "downward", "nearest-away", "negatives-truncated",
                                  "flush-products"])
def test_check_ieee_refuses_every_other_rounding(rule):
    with pytest.raises(fb.FloatRangeError):
        _probe(rule)


def test_check_ieee_refuses_each_time_it_is_asked():
    """A refused backend is not cached as checked: asking again refuses again."""
    for _ in range(2):
        b = EmulatedBackend("upward")
        with pytest.raises(fb.FloatRangeError):
            fb.check_ieee(b)
    assert b.name not in fb._IEEE_CHECKED
