"""Certified rank bounds (verifier/rank.py), ball norms (balls.py), exact LA (exact.py).

The central property: a certified lower bound never exceeds the exact rank
over Q, and a certified upper bound only accepts true null vectors.
"""
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, arb_mat, fmpq, fmpq_mat
from hypothesis import given, settings, strategies as st

from verifier.balls import (
    arb_mat_abs_upper,
    arb_mat_mid,
    arb_mat_rad_upper,
    frobenius_upper,
    inf_norm_upper,
    one_norm_upper,
    spectral_norm_upper,
    to_arb_mat,
)
from verifier.compare import Decision, upper
from verifier.errors import InsufficientPrecision, InvalidInstance
from verifier.exact import exact_matvec_is_zero, exact_nullspace, exact_rank, to_fmpq_mat
from verifier.rank import (
    certify_full_row_rank,
    certify_rank_lower_bound,
    certify_rank_upper_bound,
    certify_rank_upper_bound_exact,
    numerical_rank,
    sigma_min_enclosure,
    sigma_min_lower_bound,
)


@st.composite
def low_rank_integer_matrices(draw, *, max_dim=6, max_entry=4):
    """A = F G with integer factors: exact rank <= r, computed exactly
    (small integers, so the float64 product has no rounding)."""
    m = draw(st.integers(1, max_dim))
    n = draw(st.integers(1, max_dim))
    r = draw(st.integers(0, min(m, n)))
    ints = st.integers(-max_entry, max_entry)
    F = np.array(draw(st.lists(st.lists(ints, min_size=r, max_size=r), min_size=m, max_size=m)),
                 dtype=np.int64).reshape(m, r)
    G = np.array(draw(st.lists(st.lists(ints, min_size=n, max_size=n), min_size=r, max_size=r)),
                 dtype=np.int64).reshape(r, n)
    return (F @ G).astype(np.float64)


@st.composite
def rational_matrices(draw, *, max_dim=5):
    """Rational matrices with denominators 1..7 (not floats: 1/3 is not a double)."""
    m = draw(st.integers(1, max_dim))
    n = draw(st.integers(1, max_dim))
    q = st.builds(Fraction, st.integers(-5, 5), st.integers(1, 7))
    rows = draw(st.lists(st.lists(q, min_size=n, max_size=n), min_size=m, max_size=m))
    if draw(st.booleans()) and m > 1:  # plant a dependent row
        c = draw(q)
        rows[-1] = [c * x for x in rows[0]]
    return rows


# --- lower bounds -------------------------------------------------------------

@settings(deadline=None)
@given(low_rank_integer_matrices())
def test_lower_bound_never_exceeds_exact_rank(A):
    r = exact_rank(A)
    lb = certify_rank_lower_bound(A)
    assert lb.decision is Decision.TRUE  # k=None: some k (maybe 0) is always certified
    assert lb.k <= r
    # small integer matrices are easy: the certified bound is the exact rank
    assert lb.k == r
    for k in range(0, min(A.shape) + 2):
        res = certify_rank_lower_bound(A, k=k)
        if res.decision is Decision.TRUE:
            assert k <= r
            rows, cols = list(res.rows), list(res.cols)
            assert exact_rank(A[np.ix_(rows, cols)]) == k  # the minor really is nonsingular
        elif k <= r:
            assert res.decision is Decision.UNDECIDED


@settings(deadline=None)
@given(rational_matrices())
def test_ball_enclosure_lower_bound_never_exceeds_exact_rank(rows):
    Q = to_fmpq_mat(rows)
    r = exact_rank(Q)
    B = arb_mat(Q)  # balls around the rationals
    lb = certify_rank_lower_bound(B)
    if lb.decision is Decision.TRUE:
        assert lb.k <= r
    for k in range(1, min(Q.nrows(), Q.ncols()) + 1):
        if certify_rank_lower_bound(B, k=k).decision is Decision.TRUE:
            assert k <= r


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (20, 20), (40, 90), (90, 40)])
def test_full_rank_random_matrices_are_certified(shape):
    A = np.random.default_rng(sum(shape)).standard_normal(shape)
    lb = certify_rank_lower_bound(A)
    assert lb.decision is Decision.TRUE and lb.k == min(shape)
    assert lb.residual_norm_upper < 1
    if shape[0] <= shape[1]:
        assert certify_full_row_rank(A).decision is Decision.TRUE


def test_rank_deficient_full_row_rank_is_not_certified():
    rng = np.random.default_rng(1)
    A = (rng.integers(-3, 4, (6, 3)) @ rng.integers(-3, 4, (3, 9))).astype(float)
    res = certify_full_row_rank(A, max_prec=256)
    assert res.decision is Decision.UNDECIDED and res.certified_k == 0
    assert certify_full_row_rank(A.T).decision is Decision.FALSE  # 9 rows > 6 columns


def test_float_product_is_not_exactly_low_rank_and_higher_precision_finds_it():
    """A float64 product of rank-2 factors is rounded: its EXACT rank is full,
    which the precision ladder can certify though floats call it rank 2."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 8))
    assert numerical_rank(A) == 2
    assert exact_rank(A) == 8
    res = certify_rank_lower_bound(A, k=8)
    assert res.decision is Decision.TRUE and res.prec_bits > 128


def test_wide_balls_are_undecided_not_wrong():
    A = np.eye(3)
    B = arb_mat([[arb(A[i, j], 2.0) for j in range(3)] for i in range(3)])  # contains 0
    assert certify_rank_lower_bound(B, k=3).decision is Decision.UNDECIDED
    narrow = arb_mat([[arb(A[i, j], 1e-6) for j in range(3)] for i in range(3)])
    assert certify_rank_lower_bound(narrow, k=3).decision is Decision.TRUE


def test_lower_bound_to_dict_and_invalid_input():
    d = certify_rank_lower_bound(np.eye(2)).to_dict()
    assert d["decision"] == "true" and d["k"] == 2 and d["rows"] == [0, 1]
    with pytest.raises(InvalidInstance):
        certify_rank_lower_bound(np.array([[1.0, np.nan]]))
    with pytest.raises(InvalidInstance):
        certify_rank_lower_bound(np.ones(3))


# --- upper bounds ---------------------------------------------------------------

@settings(deadline=None)
@given(low_rank_integer_matrices())
def test_exact_upper_bound_is_the_rank_and_its_vectors_are_null(A):
    ub = certify_rank_upper_bound_exact(A)
    assert ub.decision is Decision.TRUE
    assert ub.k_upper == exact_rank(A)
    assert all(exact_matvec_is_zero(A, v) for v in ub.null_vectors)
    assert certify_rank_upper_bound(A, [[str(x) for x in v] for v in ub.null_vectors]).decision is Decision.TRUE


@settings(deadline=None)
@given(low_rank_integer_matrices(), st.integers(0, 5), st.integers(1, 3))
def test_upper_bound_rejects_a_wrong_null_vector(A, pos, bump):
    """Negative control: a vector that is not in the null space is rejected."""
    n = A.shape[1]
    basis = exact_nullspace(A)
    v = list(basis[0]) if basis else [fmpq(0)] * n
    v[pos % n] += bump
    if exact_matvec_is_zero(A, v):  # still null (possible): make sure it is a real control
        return
    res = certify_rank_upper_bound(A, [v])
    assert res.decision is Decision.FALSE and "not in the null space" in res.reason


def test_upper_bound_rejects_dependent_vectors_and_balls():
    A = np.array([[1.0, 1.0, 0.0]])
    v = [1, -1, 0]
    assert certify_rank_upper_bound(A, [v, v]).decision is Decision.FALSE
    ok = certify_rank_upper_bound(A, [v, [0, 0, 1]])
    assert ok.decision is Decision.TRUE and ok.k_upper == 1
    assert ok.to_dict()["null_vectors"] == [["1", "-1", "0"], ["0", "0", "1"]]
    with pytest.raises(InvalidInstance):
        certify_rank_upper_bound(to_arb_mat(A), [v])
    with pytest.raises(InvalidInstance):
        certify_rank_upper_bound(A, [[1, 2]])


def test_exact_helpers_accept_many_number_types():
    import sympy
    rows = [[Fraction(1, 2), sympy.Rational(1, 3), fmpq(1, 5)], [1, 2, "3/4"]]
    assert exact_rank(rows) == 2
    assert exact_rank(fmpq_mat(2, 2, [1, 2, 2, 4])) == 1
    assert exact_nullspace(np.eye(3)) == []


# --- sigma_min -------------------------------------------------------------------

@settings(deadline=None, max_examples=30)
@given(st.integers(1, 12), st.integers(0, 10), st.integers(0, 2**32 - 1))
def test_sigma_min_lower_bound_is_below_numpy_and_positive(T, extra, seed):
    A = np.random.default_rng(seed).standard_normal((T, T + extra))
    s = np.linalg.svd(A, compute_uv=False)[-1]
    if s < 1e-6 * np.linalg.norm(A, 2):
        return  # not well conditioned
    lo, hi = sigma_min_enclosure(A)
    assert 0 < upper(lo) <= s * (1 + 1e-9)
    assert hi >= s * (1 - 1e-9)
    if s > 1e-3 * np.linalg.norm(A, 2):
        assert upper(lo) >= 0.3 * s  # not vacuous


def test_sigma_min_of_singular_matrix_raises():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    with pytest.raises(InsufficientPrecision):
        sigma_min_lower_bound(A)
    with pytest.raises(InvalidInstance):
        sigma_min_lower_bound(A.T)


# --- balls -----------------------------------------------------------------------

@settings(deadline=None)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**32 - 1), st.floats(0, 1e-3))
def test_norm_upper_bounds_are_rigorous(m, n, seed, rad):
    A = np.random.default_rng(seed).standard_normal((m, n)) * 10.0 ** np.random.default_rng(seed).integers(-3, 4)
    B = arb_mat([[arb(float(A[i, j]), rad) for j in range(n)] for i in range(m)]) if rad else to_arb_mat(A)
    absA = np.abs(A) + rad
    assert upper(frobenius_upper(B)) >= np.sqrt((absA ** 2).sum()) * (1 - 1e-15)
    assert upper(inf_norm_upper(B)) >= absA.sum(1).max() * (1 - 1e-15)
    assert upper(one_norm_upper(B)) >= absA.sum(0).max() * (1 - 1e-15)
    assert upper(spectral_norm_upper(B)) >= np.linalg.norm(A, 2) * (1 - 1e-15)
    assert np.all(arb_mat_abs_upper(B) >= np.abs(A))
    assert np.all(arb_mat_rad_upper(B) >= rad)
    assert np.array_equal(arb_mat_mid(to_arb_mat(A)), A)  # float64 converts exactly


def test_to_arb_mat_is_exact_and_validates():
    M = to_arb_mat(np.array([[0.1, 1e-300, -3.0]]))
    assert all(e.is_exact() for e in M.entries())
    with pytest.raises(InvalidInstance):
        to_arb_mat(np.array([[np.inf]]))
