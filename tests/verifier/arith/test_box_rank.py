"""Full row rank over a box, and exact singular points inside one
(verifier/arith/box_rank.py).  Ground truth in exact rationals: points of
the box (its corners and random points, Fraction) have their rank computed
with python-flint; a witness is rebuilt from its coefficients alone."""
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.box_rank import (
    box_full_row_rank,
    box_full_row_rank_arb,
    equilibrate,
    gap_sides,
    singular_point,
)


def rank(rows) -> int:
    rows = [[Fraction(x) for x in r] for r in rows]
    return fmpq_mat(len(rows), len(rows[0]), [fmpq(v.numerator, v.denominator) for r in rows for v in r]).rank()


def box_points(mid, rad, rng, count=12):
    """Corners (random sign patterns) and random points of the box, exact."""
    k, m = mid.shape
    for i in range(count):
        s = rng.choice([-1, 1], size=(k, m)) if i % 2 == 0 else rng.uniform(-1, 1, (k, m))
        yield [[Fraction(float(mid[a, b])) + Fraction(float(s[a, b])) * Fraction(float(rad[a, b]))
                for b in range(m)] for a in range(k)]


matrices = st.integers(1, 4).flatmap(lambda k: st.tuples(
    st.just(k), st.integers(k, 5), st.integers(0, 2**32), st.sampled_from([0.0, 2.0**-30, 2.0**-12, 2.0**-4, 0.3])))


@settings(deadline=None)
@given(matrices)
def test_a_certificate_holds_at_the_box_points(args):
    """Whenever the bound is below 1, every sampled point of the box (corners included) has full row rank."""
    k, m, seed, r = args
    rng = np.random.default_rng(seed)
    mid = rng.standard_normal((k, m))
    if seed % 3 == 0:  # nearly dependent rows
        mid[-1] = mid[0] * 0.5 + 1e-3 * rng.standard_normal(m)
    rad = np.abs(mid) * r + (r * 0.01 if seed % 5 == 0 else 0.0)
    bound = box_full_row_rank(mid, rad)[0]
    if bound < 1:
        for P in box_points(mid, rad, rng):
            assert rank(P) == k


@pytest.mark.parametrize("scale", [1.0, 2.0**-600, 2.0**600])
def test_a_box_that_contains_a_singular_matrix_is_never_certified(scale):
    """S singular exactly (row 3 = row 1 + 2 row 2) inside the box: the bound is never below 1, at any scale."""
    rng = np.random.default_rng(1)
    S = np.round(rng.standard_normal((3, 4)) * 64) / 64
    S[2] = S[0] + 2 * S[1]
    mid = (S + 2.0**-20) * scale  # the box mid +/- 2^-19 |.| covers S
    rad = np.full(S.shape, 2.0**-19) * scale
    assert rank(S) == 2
    assert not box_full_row_rank(mid, rad)[0] < 1
    assert not box_full_row_rank_arb(mid, rad) < 1


def test_equilibration_is_exact_and_undoes_a_column_scaling():
    rng = np.random.default_rng(2)
    M = rng.standard_normal((1, 3, 5))
    mid, rad, re, ce = equilibrate(M, np.abs(M) * 2.0**-24)
    assert np.array_equal(mid, np.ldexp(np.ldexp(M, re[:, :, None]), ce[:, None, :]))
    assert np.array_equal(rad, np.ldexp(np.ldexp(np.abs(M) * 2.0**-24, re[:, :, None]), ce[:, None, :]))
    M2 = M.copy()
    M2[0, :, 2] *= 2.0**100
    assert np.array_equal(equilibrate(M2, None)[0], mid)


def test_the_float_path_and_arb_agree_on_a_range_error():
    """An entry beyond the float bounds' range (2^500 times the others after equilibration) sends the
    matrix to Arb, which still certifies a well-conditioned box; the float path alone gives no bound."""
    M = np.array([[1.0, 2.0**-900, 0.0], [0.0, 1.0, 1.0]])
    assert box_full_row_rank_arb(M, np.abs(M) * 2.0**-30) < 1
    assert box_full_row_rank(M, np.abs(M) * 2.0**-30)[0] < 1


def rebuild_and_check(S, up, down, c):
    """Independent check of a witness: for each column j, the point D_j = (t_j / U_j) g (or / L_j) with
    t_j = -c^T S_j lies strictly inside the half-gaps and makes c^T (S + D) = 0, exactly."""
    c = [Fraction(str(x)) for x in c]
    k, m = S.shape
    P = [[Fraction(float(S[i, j])) for j in range(m)] for i in range(k)]
    for j in range(m):
        t = -sum(c[i] * P[i][j] for i in range(k))
        if t == 0:
            continue
        side = [(Fraction(str(up[i][j])) if (c[i] > 0) == (t > 0) else -Fraction(str(down[i][j]))) for i in range(k)]
        total = sum(c[i] * side[i] for i in range(k))
        lam = t / total
        assert 0 < lam < 1
        for i in range(k):
            P[i][j] += lam * side[i]
    assert all(sum(c[i] * P[i][j] for i in range(k)) == 0 for j in range(m))
    assert any(c)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("seed", range(4))
def test_a_rounded_dependence_has_an_explicit_point(dtype, seed):
    """Row 3 = 2 row 1 - 3 row 2 computed in float64 and rounded to dtype: a singular point inside the
    half-gaps, found and re-checked independently (or, rarely, none found: never a wrong one)."""
    from verifier.data.precision import array_precision

    rng = np.random.default_rng(seed)
    e = rng.standard_normal((3, 5)).astype(dtype)
    e[2] = (2 * e[0].astype(np.float64) - 3 * e[1].astype(np.float64)).astype(dtype)
    p = array_precision(e)
    a, t = p.half_gap_exponents(e)
    up, down = gap_sides(e.astype(np.float64), a, t, np.ones(e.shape, bool))
    w = singular_point(e.astype(np.float64), up, down)
    if w is not None:
        rebuild_and_check(e.astype(np.float64), up, down, w.c)


def test_no_point_is_claimed_where_the_box_excludes_every_singular_matrix():
    """Orthonormal rows with tiny half-gaps: no singular point exists, none is returned."""
    S = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    up, down = gap_sides(S, np.full(S.shape, -30), np.full(S.shape, -31), np.ones(S.shape, bool))
    assert singular_point(S, up, down) is None


def test_exact_entries_cannot_move():
    """A mask of exact entries: a dependence needing them to move is not a witness."""
    S = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-20]])
    mask = np.zeros(S.shape, bool)
    up, down = gap_sides(S, np.full(S.shape, -30), np.full(S.shape, -30), mask)
    assert singular_point(S, up, down) is None
    up, down = gap_sides(S, np.full(S.shape, -19), np.full(S.shape, -19), np.ones(S.shape, bool))
    w = singular_point(S, up, down)
    assert w is not None
    rebuild_and_check(S, up, down, w.c)
