"""accurate_matmul (verifier/arith/float_accurate.py) on the inputs where each
term of its radius is what keeps the enclosure (issue 17, item 2), against
exact rationals, in every summation order of tests/summation_orders.py:

* long cancelling dot products (k >= 4096) whose exact value is tiny next to
  |A||B|: the Sum2 bound ``u |mid| + gamma^2 sum |p|`` and the slices;
* operands whose low bits live below the third slice (the remainders
  ``A_rem``, ``B_rem``: terms t1 and t2), of both signs;
* row/column maxima on either side of TINY_SCALE = 2^-300 (the plain-bound
  fallback) and zero rows;
* entries near the 2^400 range limit.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from summation_orders import ordered_backends
from test_float_accurate import exact_matmul

from verifier.arith import float_accurate
from verifier.arith.backend import get_backend
from verifier.arith.float_accurate import accurate_matmul


def backends():
    return [get_backend("numpy"), *ordered_backends()]


def _ids(b):
    return getattr(b, "order", b.name)


def _encloses(b, A, B, slack_ok=True):
    mid, rad = accurate_matmul(b, b.asarray(A), b.asarray(B))
    mid, rad = b.to_numpy(mid), b.to_numpy(rad)
    exact = exact_matmul(A, B)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            miss = abs(Fraction(float(mid[i, j])) - exact[i][j])
            assert miss <= Fraction(float(rad[i, j])), (i, j, float(miss), float(rad[i, j]))
    return mid, rad, exact


def _low_bits(k: int, seed: int, scale: float = 1.0):
    """Entries 1 + (random 52-bit tail) of random sign, times scale: every bit of
    every entry is set somewhere, so all three slices and the remainder are busy."""
    rng = np.random.default_rng(seed)
    m = rng.integers(2**52, 2**53, k).astype(float) + 1.0
    return np.ldexp(m, -52) * np.where(rng.random(k) < 0.5, -1.0, 1.0) * scale


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_remainders_of_both_signs_at_k_4096(b):
    """k = 4096: rho = 33, the slices hold 20 bits each, so the third slice
    ends 60 bits below the row maximum and the remainder holds the rest of
    a 53-bit significand that starts lower: the remainder terms t1, t2 count."""
    k = 4096
    A = np.stack([_low_bits(k, 0), _low_bits(k, 1) * 2.0**-40])
    A[1, 0] = 1.0  # row maximum 1, the other entries 2^-40 below: their low bits fall into the remainder
    B = np.stack([_low_bits(k, 2), _low_bits(k, 3) * 2.0**-45], axis=1)
    B[0, 1] = -1.0
    _encloses(b, A, B)


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_long_cancellation_is_enclosed_tightly(b):
    """x . y with x = (a, -a), y = (c, c + tiny): exact value ~ 2^-30 |x||y|;
    the enclosure must hold and be far below gamma_k |x||y|."""
    k = 4096
    rng = np.random.default_rng(4)
    a = rng.integers(1, 2**26, k // 2).astype(float)
    c = rng.integers(1, 2**26, k // 2).astype(float)
    x = np.concatenate([a, -a])
    y = np.concatenate([c, c + 2.0**-20])
    A, B = x[None, :], np.stack([y, y[::-1]], axis=1)
    mid, rad, exact = _encloses(b, A, B)
    plain = 4096 * 2.0**-53 * float(np.abs(x) @ np.abs(y))
    assert rad[0, 0] < plain * 1e-6


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_row_maxima_around_the_tiny_scale(b):
    """A row maximum just above 2^-300 takes the sliced path (units down to
    ~2^-760); just below, the plain bound; a zero row in either case."""
    k = 8
    for top in (2.0**-299, 2.0**-300, 2.0**-301):
        A = np.stack([_low_bits(k, 5, top), np.zeros(k), _low_bits(k, 6)])
        B = np.stack([_low_bits(k, 7), _low_bits(k, 8, 2.0**-250)], axis=1)
        _encloses(b, A, B)


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_near_the_range_limit(b):
    k = 16
    A = np.stack([_low_bits(k, 9, 2.0**399), _low_bits(k, 10)])
    B = np.stack([_low_bits(k, 11, 2.0**-300), _low_bits(k, 12, 2.0**-10)], axis=1)
    mid, rad, _ = _encloses(b, A, B)
    assert np.all(np.isfinite(rad))


def test_rho_is_the_least_exponent_with_exact_slice_sums():
    for k in (1, 2, 3, 4, 5, 8, 9, 1024, 1025, 4096, 4097, 2**20):
        r = float_accurate._rho(k)
        assert 2 ** (2 * r - 53) >= k > 2 ** (2 * (r - 1) - 53), k


@pytest.mark.parametrize("rho", [27, 33, 40])
def test_split_is_error_free_and_on_the_unit_grid(rho):
    """A = A_1 + A_2 + A_3 + A_rem exactly, slice s on the grid u sigma_s, and
    |A_rem| <= u sigma_3, for entries of both signs and zero rows."""
    b = get_backend("numpy")
    A = np.stack([_low_bits(64, 13), _low_bits(64, 14, 2.0**-200), np.zeros(64)])
    slices, R = float_accurate._split(b, A, 1, rho)
    for i in range(3):
        for col in range(64):
            parts = [Fraction(float(s[i, col])) for s in slices] + [Fraction(float(R[i, col]))]
            assert sum(parts) == Fraction(float(A[i, col]))
    mu = np.max(np.abs(A), axis=1)
    for i in range(2):
        e = np.frexp(mu[i])[1]
        sigma = 2.0 ** (e + rho)
        for s in slices:
            unit = sigma * 2.0**-53
            assert np.all(np.mod(s[i], unit) == 0)
            sigma *= 2.0 ** (rho - 53)
        assert np.all(np.abs(R[i]) <= sigma / 2.0 ** (rho - 53) * 2.0**-53)
    assert all(np.all(s[2] == 0) for s in slices) and np.all(R[2] == 0)


def test_two_sum_is_error_free():
    for s, p in ((1.0, 2.0**-60), (2.0**60, -1.0), (-3.0, 3.0 + 2.0**-51), (1e300, 1e284)):
        t, e = float_accurate._two_sum(np.float64(s), np.float64(p))
        assert Fraction(float(t)) + Fraction(float(e)) == Fraction(s) + Fraction(p)


def test_outer_up_is_above_the_exact_products_in_the_underflow_range():
    b = get_backend("numpy")
    x = np.array([[2.0**-540], [3.0], [2.0**442]])
    y = np.array([[2.0**-540, 3 * 2.0**-537, 2.0**383]])
    o = float_accurate._outer_up(b, x, y)
    for i in range(3):
        for j in range(3):
            assert Fraction(float(o[i, j])) >= Fraction(float(x[i, 0])) * Fraction(float(y[0, j]))


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("bad", [np.inf, np.nan, 2.0**401])
def test_accurate_matmul_checks_the_range_of_both_operands(which, bad):
    from verifier.arith.float_bounds import FloatRangeError

    ops = [np.ones((2, 3)), np.ones((3, 2))]
    ops[which][1, 1] = bad
    with pytest.raises(FloatRangeError):
        accurate_matmul(get_backend("numpy"), *ops)


# -- the fallback to the plain bound: row maxima of A, column maxima of B below 2^-300 ---------------------------------
# Rows t (1, -1, 1/2, -1/2) against columns (1, 1, 1, 1) and (2, 2, 1, 1): every product is exactly 0.  The sliced
# path holds each entry in its first slice and multiplies exactly, so its radius is a few SLACK = 2^-500 in every
# order; the plain bound's radius is at least gamma_k (|A||B|)_ij (about 2^-351 for t = 2^-300).  Which one answers
# is the documented contract: the plain bound iff a NONZERO row maximum of |A| or column maximum of |B| is BELOW 2^-300.

ROW = np.array([1.0, -1.0, 0.5, -0.5])
COLS = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0]])


def _path(b, A, B):
    """'plain' if every radius is >= gamma_k (|A||B|)_ij, 'sliced' if every nonzero one is below it."""
    from verifier.arith.float_bounds import gamma

    mid, rad, _ = _encloses(b, A, B)
    g = gamma(A.shape[1])
    absAB = exact_matmul(np.abs(A), np.abs(B))
    above = [Fraction(float(rad[i, j])) >= g * absAB[i][j] for i in range(A.shape[0]) for j in range(B.shape[1])
             if absAB[i][j] != 0]
    return "plain" if all(above) else "sliced" if not any(above) else "mixed"


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_row_maxima_decide_the_fallback(b):
    B = COLS
    assert _path(b, np.stack([ROW, ROW * 2.0**-300]), B) == "sliced"  # a row maximum of exactly 2^-300: not below
    assert _path(b, np.stack([ROW, ROW * 0.0]), B) == "sliced"  # a zero row is not a tiny one
    assert _path(b, np.stack([ROW, ROW * 2.0**-301]), B) == "plain"  # one tiny row (the other normal)
    assert _path(b, np.stack([ROW * 2.0**-301, ROW * 2.0**-301]), B * 2.0**-301) == "plain"  # everything tiny


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_column_maxima_decide_the_fallback(b):
    A = np.stack([ROW, ROW * 3.0])
    assert _path(b, A, COLS * np.array([1.0, 2.0**-301])) == "sliced"  # a column maximum of exactly 2^-300
    assert _path(b, A, COLS * np.array([1.0, 0.0])) == "sliced"  # a zero column
    assert _path(b, A, COLS * np.array([1.0, 2.0**-302])) == "plain"  # one tiny column: rows of B stay normal
    assert _path(b, A, np.abs(COLS) * np.array([2.0**-301, 1.0])) == "plain"


# -- the Sum2 term of the radius ---------------------------------------------------------------------------------------
# The nine slice products p are exact (every order), and Sum2's result satisfies, for n = 9 terms,
#   |mid - sum p| <= u |mid| + gamma_7 sum_{i>=2} |q_i|,  |q_i| <= u |s_i| <= u (1 + gamma_8) sum |p|
# (TwoSum is error-free; the error sum err has 7 roundings; s_i are the computed partial sums), so the radius must be
# at least u |mid| + 8 u gamma_7 (1 + gamma_8) sum |p|: the NEED below, in exact rationals from the exact slices.
# Inputs: p_11 dominant (mid ~ p_11: the u |mid| term and the sum |p| term side by side) and p_12 = -p_21 (mid = 0:
# the sum |p| term alone).


def _slice_products(A, B):
    """The nine products A_s B_t of the slices, exactly (Fractions), as accurate_matmul forms them."""
    b = get_backend("numpy")
    rho = float_accurate._rho(A.shape[1])
    As, _ = float_accurate._split(b, A, 1, rho)
    Bs, _ = float_accurate._split(b, B.T, 1, rho)
    return [exact_matmul(a, bt.T) for a in As for bt in Bs]


def _need(p, mid, i, j):
    from verifier.arith.float_bounds import U, gamma

    total = sum(abs(x[i][j]) for x in p)
    return U * abs(Fraction(float(mid[i, j]))) + 8 * U * gamma(7) * (1 + gamma(8)) * total


@pytest.mark.parametrize("b", backends(), ids=_ids)
def test_the_radius_covers_sum2s_derived_error(b):
    cases = [  # (A, B): p_11 dominant; p_12 = -p_21 with p_11 = 0; a mixture of signs and slices
        (np.array([[1.0, 2.0**-40]]), np.array([[1.0], [-(2.0**-40)]])),
        (np.array([[2.0**-40, 1.0]]), np.array([[1.0], [-(2.0**-40)]])),
        (np.array([[3.0, -(2.0**-30), 5 * 2.0**-61]]), np.array([[1.0 + 2.0**-29], [7.0], [-(2.0**-45)]])),
    ]
    for A, B in cases:
        p = _slice_products(A, B)
        assert sum(1 for x in p if x[0][0] != 0) >= 2  # the Sum2 term is exercised
        mid, rad, _ = _encloses(b, A, B)
        assert Fraction(float(rad[0, 0])) >= _need(p, mid, 0, 0), (A, B)
