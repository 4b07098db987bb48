"""accurate_matmul (verifier/arith/float_accurate.py) against exact rationals,
for every sign pattern and every summation order (tests/summation_orders.py).

Issue 22: the slices' unit was taken as ``ulp(sigma)``, which holds for
nonnegative entries only; a negative entry's slice lives on ``u sigma Z``
(ExtractScalar, Rump-Ogita-Oishi 2008, Lemma 3.3), and with one bit too few
of rho the slice products' partial sums reached ``2^54`` units and rounded.
The boundary inputs below put every entry at the largest odd number of units
of the first slice, ``-(1 - 2^(r - 53))`` (and ``1 - 2^(r - 52)`` for the
positive side), for the rho values around ``(52 + log2 k) / 2``.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from summation_orders import ORDERS, OrderedBackend, ordered_backends

from verifier.arith import float_accurate
from verifier.arith.backend import get_backend
from verifier.arith.float_accurate import accurate_matmul

U = 2.0**-53
KS = [2, 3, 4, 5, 12, 16, 17, 33, 64, 100, 256, 1024, 3000, 4096]
PATTERNS = ("negative", "positive", "alternating", "mixed")


def all_backends():
    return [get_backend("numpy"), get_backend("torch-cpu"), *ordered_backends()]


def _scaled_ints(M: np.ndarray, axis: int):
    """(N, e): Python ints and exponents with M = N * 2^e exactly, one exponent
    per row (axis=1) or column (axis=0), so the ints stay short."""
    mant, ex = np.frexp(M)
    ex = np.where(M != 0, ex - 53, 2**20)
    e = np.min(ex, axis=axis, keepdims=True)
    e = np.where(e == 2**20, 0, e)
    ints = (mant * 2.0**53).astype(np.int64).astype(object)
    return ints * (2 ** np.where(M != 0, ex - e, 0).astype(object)), e.ravel()


def exact_matmul(A: np.ndarray, B: np.ndarray):
    """A B exactly (float operands): a matrix of Fractions."""
    NA, ea = _scaled_ints(A, 1)
    NB, eb = _scaled_ints(B, 0)
    P = NA.dot(NB)
    return [[P[i, j] * Fraction(2) ** int(ea[i] + eb[j]) for j in range(P.shape[1])] for i in range(P.shape[0])]


def assert_encloses(b, A, B, exact, tight: bool = True):
    """|exact - mid| <= rad entrywise on backend b; and (tight, k <= 4096) rad
    below ``4 u |mid| + 2^-55 (max_l |A_il| sum_l |B_lj| + sum_l |A_il| max_l
    |B_lj|) + 2^-490`` (remainders below 2^-58 of the row/column maximum; the
    bounds' absolute slack is 2^-500 per step): a plain gamma_k |A||B| exceeds it."""
    mid, rad = accurate_matmul(b, b.asarray(A), b.asarray(B))
    mid, rad = b.to_numpy(mid), b.to_numpy(rad)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            miss = abs(Fraction(float(mid[i, j])) - exact[i][j])
            assert miss <= Fraction(float(rad[i, j])), (b, i, j, float(miss / Fraction(float(rad[i, j]))))
    if tight:
        aA, aB = np.abs(A), np.abs(B)
        scale = aA.max(1)[:, None] * aB.sum(0)[None, :] + aA.sum(1)[:, None] * aB.max(0)[None, :]
        assert np.all(rad <= 4 * U * np.abs(mid) + 2.0**-55 * scale + 2.0**-490), b


def boundary_vector(pattern: str, k: int, r: int) -> np.ndarray:
    """Length k, every entry the largest odd count of first-slice units for rho = r."""
    neg, pos = -(1 - 2.0 ** (r - 53)), 1 - 2.0 ** (r - 52)
    if pattern == "negative":
        return np.full(k, neg)
    if pattern == "positive":
        return np.full(k, pos)
    if pattern == "alternating":
        return np.where(np.arange(k) % 2 == 0, neg, -neg)
    n = -(-9 * k // 16)  # the issue's 9 negative of 16, then positive
    return np.array([neg] * n + [pos] * (k - n))


def boundary_matrices(k: int):
    """(A, B): rows of A and columns of B run through every pattern and the rho
    values around the slicing boundary, scaled by powers of two (exact)."""
    c = (k - 1).bit_length()
    rs = sorted({(53 + c) // 2, (54 + c) // 2, (55 + c) // 2, (56 + c) // 2})
    rows = [boundary_vector(p, k, r) for r in rs for p in PATTERNS]
    scales = [1.0, 2.0**-290, 2.0**390, 2.0**-7]
    A = np.array([row * scales[i % 4] for i, row in enumerate(rows)])
    B = np.array([row * scales[(i + 1) % 4] for i, row in enumerate(rows)]).T
    return A, B


@pytest.mark.parametrize("k", KS)
def test_enclosure_at_the_slicing_boundary_for_every_sign_and_order(k):
    A, B = boundary_matrices(k)
    exact = exact_matmul(A, B)
    for b in all_backends():
        assert_encloses(b, A, B, exact)


def test_issue22_reproducer_on_every_backend():
    neg, pos = -(1 - 2.0**-25), 1 - 2.0**-24
    A = np.array([[neg] * 9 + [pos] * 7] * 4)
    B = np.full((16, 4), neg)
    exact = exact_matmul(A, B)
    for b in all_backends():
        assert_encloses(b, A, B, exact)


def _issue22_rho(k: int) -> int:
    return math.ceil((52 + math.log2(max(k, 1))) / 2)


@pytest.mark.parametrize("k", [4, 12, 64, 1024, 4096])
def test_the_rho_of_issue22_is_refuted_by_the_boundary_inputs(k, monkeypatch):
    """Negative control: with rho one bit short (the code before issue 22)
    the all-negative boundary product misses its exact value; left-to-right
    summation is IEEE-deterministic, so this holds on every machine."""
    A, B = boundary_matrices(k)
    exact = exact_matmul(A, B)
    monkeypatch.setattr(float_accurate, "_rho", _issue22_rho)
    with pytest.raises(AssertionError):
        assert_encloses(OrderedBackend("numpy", "sequential"), A, B, exact, tight=False)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 16, 17, 4096, 4097, 2**40])
def test_rho_is_the_least_with_exact_slice_sums(k):
    """2^(2 rho - 53) >= k: k slice products of 2^(106 - 2 rho) units stay below 2^53."""
    rho = float_accurate._rho(k)
    assert 2 ** (2 * rho - 53) >= k and 2 ** (2 * (rho - 1) - 53) < k


@pytest.mark.parametrize("k", [2, 17, 1024])
def test_slices_of_either_sign_are_on_the_extract_scalar_grid(k):
    """Lemma 3.3 as used: A = sum of slices + remainder exactly; slice s in
    u sigma_s Z with |slice| <= 2^-rho sigma_s; |remainder| <= u sigma_3."""
    rng = np.random.default_rng(k)
    A = rng.standard_normal((4, k)) * np.ldexp(1.0, rng.integers(-60, 60, (4, 1)))
    A[0] = -np.abs(A[0])
    A[1] = boundary_vector("mixed", k, float_accurate._rho(k))
    rho = float_accurate._rho(k)
    slices, rem = float_accurate._split(get_backend("numpy"), A, 1, rho)
    for i in range(4):
        sigma = Fraction(2) ** (math.frexp(float(np.max(np.abs(A[i]))))[1] + rho)
        total = Fraction(0)
        for S in slices:
            unit = sigma / 2**53
            for x in S[i]:
                q = Fraction(float(x))
                assert (q / unit).denominator == 1 and abs(q) <= sigma / 2**rho
            total += sum(Fraction(float(x)) for x in S[i])
            sigma *= Fraction(2) ** (rho - 53)
        assert all(abs(Fraction(float(x))) <= sigma / 2**rho for x in rem[i])  # u sigma_3 = 2^-rho sigma_4
        assert total + sum(Fraction(float(x)) for x in rem[i]) == sum(Fraction(float(x)) for x in A[i])


@pytest.mark.parametrize("k", [2, 300])
def test_bits_below_the_last_slice_are_enclosed(k):
    """A row (column) of one entry near 1 and one with 53 significant bits near
    2^-60: the bits below the third slice (2^(E - 3(53 - rho))) land in A_rem
    (B_rem), and the product picks exactly them out (no cancellation hides
    them), so both remainder terms of the radius are needed, either sign."""
    rng = np.random.default_rng(k)
    x, y = np.ldexp(1.0 + rng.integers(1, 2**52, 2) * 2.0**-52, -60) * [1, -1]
    A = np.zeros((4, k))
    A[:, 0], A[:, 1] = [1.0, -1.0, 0.0, 0.0], [x, -x, 1.0, -1.0]
    B = np.zeros((k, 3))
    B[0], B[1] = [0.0, 1.0, -1.0], [1.0, y, y]
    exact = exact_matmul(A, B)
    for b in all_backends():
        assert_encloses(b, A, B, exact)


@given(k=st.one_of(st.integers(2, 64), st.integers(65, 4096)), seed=st.integers(0, 2**32 - 1),
       order=st.sampled_from(ORDERS + ("numpy",)))
def test_random_signed_near_boundary_products_are_enclosed(k, seed, order):
    """Random signs, entries a few units below a power of two on the grids of
    nearby rho values, row/column scales from 2^-290 to 2^390, one cancelling
    column: the ball holds the exact product in the drawn order."""
    rng = np.random.default_rng(seed)
    r = rng.integers(24, 36, (3, k))
    j = rng.integers(1, 4, (3, k))
    A = rng.choice([-1.0, 1.0], (3, k)) * (1 - j * np.ldexp(1.0, r - 53)) * np.ldexp(1.0, rng.integers(-3, 1, (3, k)))
    A *= np.ldexp(1.0, rng.integers(-290, 390, (3, 1)))
    r = rng.integers(24, 36, (k, 2))
    B = rng.choice([-1.0, 1.0], (k, 2)) * (1 - np.ldexp(1.0, r - 53)) * np.ldexp(1.0, rng.integers(-290, 390, (1, 2)))
    w = rng.standard_normal(k)
    B[:, 1] = w - A[0] * ((A[0] @ w) / (A[0] @ A[0]))  # nearly orthogonal to row 0: the product cancels
    b = get_backend("numpy") if order == "numpy" else OrderedBackend("numpy", order, seed)
    assert_encloses(b, A, B, exact_matmul(A, B), tight=False)


@given(st.floats(-2.0**800, 2.0**800), st.floats(-2.0**800, 2.0**800))
def test_two_sum_is_error_free_for_either_sign_and_order(s, p):
    """Knuth's TwoSum (Sum2's step) needs no |s| >= |p| and no sign: t + q = s + p exactly."""
    for x, y in ((s, p), (p, s)):
        t, q = float_accurate._two_sum(np.float64(x), np.float64(y))
        assert Fraction(float(t)) + Fraction(float(q)) == Fraction(x) + Fraction(y)
        assert t == x + y


@pytest.mark.parametrize("backend", ["numpy", "torch-cpu"])
def test_blocks_of_rows_give_the_bits_of_one_piece(backend, monkeypatch):
    """accurate_matmul a block of rows at a time (issue 38): every step is row
    by row, so blocks of 1, 3 or 7 rows (and one ragged last block) give the
    same mid and rad, bit for bit, as the whole product in one piece; the
    cancelling rows stay enclosed."""
    b = get_backend(backend)
    rng = np.random.default_rng(38)
    A = rng.standard_normal((23, 17)) * np.exp2(rng.integers(-40, 40, (23, 1)))
    B = rng.standard_normal((17, 9)) * np.exp2(rng.integers(-20, 20, (1, 9)))
    A[4] = 1e8 * B[:, 0] / np.abs(B[:, 0]).max()  # row 4 times column 0 cancels
    A[4, 0] = -(A[4, 1:] @ B[1:, 0]) / B[0, 0]
    monkeypatch.setattr(float_accurate, "BLOCK_ENTRIES", 10**9)
    mid, rad = (b.to_numpy(x) for x in accurate_matmul(b, b.asarray(A), b.asarray(B)))
    for rows in (1, 3, 7):
        monkeypatch.setattr(float_accurate, "BLOCK_ENTRIES", rows * B.shape[1])
        m2, r2 = (b.to_numpy(x) for x in accurate_matmul(b, b.asarray(A), b.asarray(B)))
        assert np.array_equal(m2, mid) and np.array_equal(r2, rad), rows
    exact = [[sum(Fraction(float(A[i, l])) * Fraction(float(B[l, j])) for l in range(17)) for j in range(9)]
             for i in range(23)]
    assert all(abs(Fraction(float(mid[i, j])) - exact[i][j]) <= Fraction(float(rad[i, j]))
               for i in range(23) for j in range(9))
    assert rad[4, 0] < 1e-6 * abs(A[4]).max() * abs(B[:, 0]).sum()  # accurate where the plain bound is not
