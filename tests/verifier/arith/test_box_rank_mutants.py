"""verifier/arith/box_rank.py against its mutation survivors: properties that hold on every machine.

* A bound below 1 excludes every singular matrix of the box: decided by hand on 1 x m boxes (rank 0 iff
  every interval holds 0) and 2 x 2 boxes (the determinant is multilinear: its range over the box is
  spanned by the corners' values), in exact rationals.
* Equilibration is an exact scaling by powers of two whose box contains the scaled input box; an entry
  pushed below 2^-1021 gets 2^-1074 more radius, never less.
* The chunks, the Arb fallback (reached through a radius beyond the float bounds' range or a NaN), the
  backend handed in and the right inverse handed in are all used as given.
* A witness of singular_point is rebuilt from its coefficients alone: an explicit point strictly inside
  the half-gaps with dependent rows, in exact rationals; the instances need the exact least-squares
  refinement (rationals no float reaches, column weights, tiny gaps) or the SVD candidate alone (one row,
  more rows than columns).
"""
import itertools
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from verifier.arith import box_rank
from verifier.arith.backend import Backend
from verifier.arith.box_rank import (
    box_full_row_rank,
    box_full_row_rank_arb,
    equilibrate,
    gap_sides,
    singular_point,
)

BEYOND = 2.0**500  # a radius past the float bounds' range (2^400) after equilibration


def contains_singular(mid, rad) -> bool:
    """Does the box mid +/- rad (1 x m or 2 x 2) hold a matrix without full row rank?  Exact."""
    mid = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(mid)]
    rad = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(rad)]
    if len(mid) == 1:
        return all(abs(a) <= r for a, r in zip(mid[0], rad[0]))
    assert len(mid) == 2 and len(mid[0]) == 2
    dets = []
    for s in itertools.product((-1, 1), repeat=4):
        a, b, c, d = (mid[i // 2][i % 2] + s[i] * rad[i // 2][i % 2] for i in range(4))
        dets.append(a * d - b * c)
    return min(dets) <= 0 <= max(dets)


def small_boxes():
    rng = np.random.default_rng(20240)
    for shape in [(1, 1), (1, 2), (1, 3), (2, 2)]:
        for _ in range(40):
            mid = rng.integers(-4, 5, size=shape) * 2.0 ** rng.integers(-3, 3, size=shape)
            rad = np.abs(mid) * rng.choice([0.0, 2.0**-20, 0.25, 0.75, 1.0, 1.5], size=shape) \
                + rng.choice([0.0, 2.0**-30, 0.5], size=shape)
            yield mid, rad


def test_a_bound_below_one_excludes_every_singular_matrix_of_small_boxes():
    certified = 0
    for mid, rad in small_boxes():
        for bound in (box_full_row_rank(mid, rad)[0], box_full_row_rank_arb(mid, rad)):
            if bound < 1:
                certified += 1
                assert not contains_singular(mid, rad), (mid, rad, bound)
    assert certified > 40  # the property is not vacuous


@pytest.mark.parametrize("mid, rad", [
    ([[1.0]], [[0.5]]),
    ([[0.0, -3.0]], [[1.0, 2.0]]),  # 1 x m: one interval away from 0 is enough
    ([[1.0, 2.0]], [[0.0, 0.0]]),
    ([[1.0, 0.25], [0.5, 1.0]], [[2.0**-10] * 2] * 2),
])
def test_boxes_far_from_singular_are_certified(mid, rad):
    mid, rad = np.array(mid), np.array(rad)
    assert not contains_singular(mid, rad)
    assert box_full_row_rank(mid, rad)[0] < 1
    assert box_full_row_rank_arb(mid, rad) < 1


def test_equilibration_reaches_what_one_float_right_inverse_cannot():
    """diag(2^-1000, 2^900): pinv drops the small singular value, the equilibrated problem is the identity."""
    mid = np.array([[2.0**-1000, 0.0], [0.0, 2.0**900]])
    rad = np.array([[2.0**-1010, 0.0], [0.0, 2.0**890]])
    assert box_full_row_rank(mid, rad)[0] < 1
    assert box_full_row_rank(mid.T.copy(), rad.T.copy())[0] < 1


@pytest.mark.parametrize("mid, rad", [
    ([[1.0]], [[1.0]]),  # 0 on the boundary
    ([[0.5, -2.0]], [[0.75, 2.0]]),
    ([[2.0**-1060]], [[2.0**-1060]]),
    ([[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]),
    ([[1.0, 0.0], [0.0, 1.0]], [[2.0, 1.0], [1.0, 2.0]]),
])
def test_boxes_holding_a_singular_matrix_are_not_certified(mid, rad):
    mid, rad = np.array(mid), np.array(rad)
    assert contains_singular(mid, rad)
    assert not box_full_row_rank(mid, rad)[0] < 1
    assert not box_full_row_rank_arb(mid, rad) < 1


# ---------------------------------------------------------------------------------------------------------
# equilibration


def singular_across_the_exponent_range(mu=0.8125, e=2.0**-967 * 1.8125):
    """[[2^100, mu 2^100], [e, mu e]]: exactly singular; its columns are scaled by 2^-101, which pushes the
    second row into the subnormal range, and that row is then scaled up by about 2^1030."""
    M = np.array([[2.0**100, mu * 2.0**100], [e, mu * e]])
    assert Fraction(M[0, 0]) * Fraction(M[1, 1]) == Fraction(M[0, 1]) * Fraction(M[1, 0])
    return M


@pytest.mark.parametrize("scale", [0.0, 2.0**-53, 2.0**-40])
def test_an_exactly_singular_matrix_across_the_exponent_range_is_never_certified(scale):
    """Was certified (bound 3.5e-13): the column pass rounded the second row in the subnormal range and the
    row pass scaled the rounded values up, leaving a nonsingular matrix and no radius for the lost bits."""
    M = singular_across_the_exponent_range()
    rad = None if scale == 0 else np.abs(M) * scale
    assert not box_full_row_rank(M, rad)[0] < 1
    assert not box_full_row_rank(M.T.copy(), None if rad is None else rad.T.copy())[0] < 1


def assert_contains_scaled_box(mids, rads, out):
    """The equilibrated box contains 2^row_exp [mids - rads, mids + rads] 2^col_exp, entry by entry, and
    the exponents are those of the returned midpoints wherever they are not subnormal."""
    mid, rad, re, ce = out
    assert mid.dtype == np.float64 and mid.shape == np.shape(mids)
    if rad is None:
        rad = np.zeros(mid.shape)
    assert rad.dtype == np.float64
    mids = np.asarray(mids, dtype=np.float64)
    rads = np.zeros(mids.shape) if rads is None else np.asarray(rads, dtype=np.float64)
    for b, i, j in np.ndindex(mid.shape):
        e = Fraction(2) ** int(re[b, i] + ce[b, j])
        x, r = Fraction(float(mids[b, i, j])) * e, Fraction(float(rads[b, i, j])) * e
        if rad[b, i, j] == np.inf:  # the scaled radius overflowed: the whole line
            continue
        m, s = Fraction(float(mid[b, i, j])), Fraction(float(rad[b, i, j]))
        assert abs(m - x) + r <= s, (b, i, j)
        if abs(mid[b, i, j]) >= 2.0**-1022:
            assert m == x


def adversarial_stacks():
    rng = np.random.default_rng(7)
    yield singular_across_the_exponent_range()[None], None
    M = singular_across_the_exponent_range()[None]
    yield M, np.abs(M) * 2.0**-53
    for _ in range(12):
        k, m = rng.integers(1, 4), rng.integers(1, 4)
        mant = rng.uniform(0.5, 1.0, (3, k, m)) * rng.choice([-1, 1], (3, k, m))
        mid = np.ldexp(mant, rng.integers(-1074, 1000, (3, k, m)))
        mid[rng.random((3, k, m)) < 0.15] = 0.0
        rad = np.ldexp(np.abs(mant), rng.integers(-1074, 1000, (3, k, m)))
        rad[rng.random((3, k, m)) < 0.3] = 0.0
        yield mid, None
        yield mid, rad


@pytest.mark.filterwarnings("ignore:overflow encountered in ldexp")
def test_the_equilibrated_box_contains_the_scaled_box():
    for mids, rads in adversarial_stacks():
        assert_contains_scaled_box(mids, rads, equilibrate(mids, rads))


@pytest.mark.filterwarnings("ignore:overflow encountered in ldexp")
def test_every_column_maximum_ends_in_one_half_to_one():
    for mids, rads in adversarial_stacks():
        mid = equilibrate(mids, rads)[0]
        top = np.max(np.abs(mid), axis=1)
        assert np.all((top == 0) | ((top >= 0.5) & (top < 1)))


def test_every_row_and_column_maximum_ends_in_one_half_to_one_in_the_normal_range():
    """Columns, rows, columns: with every entry and every scaled entry normal, each nonzero row's and each
    nonzero column's largest entry ends in [1/2, 1), and a scaled column gives the same matrix."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        k, m = rng.integers(1, 5), rng.integers(1, 5)
        M = rng.uniform(-1, 1, (2, k, m)) * 2.0 ** rng.integers(-300, 300, (2, k, m))
        M[rng.random(M.shape) < 0.2] = 0.0
        mid, _, re, ce = equilibrate(M, None)
        for axis in (1, 2):
            top = np.max(np.abs(mid), axis=axis)
            assert np.all((top == 0) | ((top >= 0.5) & (top < 1)))
        M2 = M.copy()
        M2[:, :, 0] *= 2.0**-200
        assert np.array_equal(equilibrate(M2, None)[0], mid)


def test_entries_pushed_below_2_pow_minus_1021_get_2_pow_minus_1074_more_radius():
    """Matrices [[1/2, 1/2], [x, 1/2]] need no scaling; x below 2^-1021 (subnormal or not) gets 2^-1074
    added to its radius, x = 2^-1021 and above none; a given radius keeps its value and is added to."""
    xs = [2.0**-1030, 1.5 * 2.0**-1022, 2.0**-1022, 2.0**-1021, 2.0**-100, 0.0]
    mids = np.array([[[0.5, 0.5], [x, 0.5]] for x in xs])
    mid, rad, re, ce = equilibrate(mids, None)
    assert np.array_equal(mid, mids) and not re.any() and not ce.any()
    expected = np.zeros(mids.shape)
    expected[[0, 1, 2, 5], 1, 0] = 2.0**-1074
    assert np.array_equal(rad, expected)
    rads = np.zeros(mids.shape)
    rads[:, 1, 0] = 3 * 2.0**-1074
    rads[:, 0, 0] = 2.0**-40
    mid, rad, _, _ = equilibrate(mids, rads)
    expected = rads.copy()
    expected[:, 1, 0] += 2.0**-1074  # every radius 3 2^-1074 is below 2^-1021 (a subnormal: perhaps rounded)
    assert np.array_equal(rad, expected)
    # normal entries with normal radii: no radius made up, none dropped
    assert equilibrate(mids[3:5], None)[1] is None
    assert np.array_equal(equilibrate(mids[3:5], np.full((2, 2, 2), 2.0**-60))[1], np.full((2, 2, 2), 2.0**-60))


def test_equilibration_reads_any_float_input_exactly():
    """float32 entries and radii (and nested lists) are read as float64: scaled by 2^-111 they would leave
    float32's range (2^-151, 2^-175), in float64 they stay exact."""
    M = np.array([[[2.0**110, 2.0**-40], [2.0**-40, 2.0**110]]], dtype=np.float32)
    R = (M.astype(np.float64) * 2.0**-24).astype(np.float32)
    for mids, rads in [(M, R), (M.tolist(), R.tolist()), (M, None)]:
        out = equilibrate(mids, rads)
        assert_contains_scaled_box(np.asarray(mids, np.float64), rads, out)
        assert out[0][0, 0, 1] != 0 and (rads is None or out[1][0, 0, 1] != 0)
        assert (out[1] is None) == (rads is None)


# ---------------------------------------------------------------------------------------------------------
# box_full_row_rank: shapes, backend, chunks, the Arb fallback, right inverses


def test_shapes_and_a_missing_radius():
    eye = np.array([[1.0, 0.25, 0.0], [0.0, 1.0, 0.5]])
    assert box_full_row_rank(eye)[0] < 1  # one matrix, exact
    assert np.all(box_full_row_rank(np.stack([eye, 2 * eye])) < 1)  # a stack, exact
    assert box_full_row_rank(np.eye(3))[0] < 1  # square
    assert np.array_equal(box_full_row_rank(np.zeros((3, 0, 2))), np.zeros(3))  # no rows: full rank 0
    assert box_full_row_rank(np.zeros((0, 2, 3))).shape == (0,)
    # k > m: rows always dependent, no bound at all (a float bound would be >= 1, but finite)
    tall = np.stack([eye.T, np.array([[-1.0, 3.0], [0.0, -2.0], [1.0, 5.0]]), np.array([[-3.0, 4.0], [2.0, 1.0],
                                                                                        [0.5, -1.0]])])
    assert np.array_equal(box_full_row_rank(tall), [np.inf] * 3)
    assert np.array_equal(box_full_row_rank(np.array([[-0.31630015636915454], [0.4116305363741328]])), [np.inf])


@dataclass(frozen=True)
class SpyBackend(Backend):
    log: list = field(default_factory=list, compare=False, hash=False)

    def matmul(self, a, b):
        self.log.append("matmul")
        return super().matmul(a, b)

    def inv(self, a):
        self.log.append("inv")
        return super().inv(a)


def test_the_backend_handed_in_is_the_one_used():
    spy = SpyBackend("numpy")
    assert box_full_row_rank(np.array([[1.0, 0.5], [0.0, 1.0]]), np.full((2, 2), 2.0**-20), backend=spy)[0] < 1
    assert "matmul" in spy.log and "inv" in spy.log  # the ball product and the residual certificate


@pytest.fixture
def arb_calls(monkeypatch):
    """Records every call of the Arb fallback (its midpoint matrix), passing it on."""
    calls = []
    real = box_rank.box_full_row_rank_arb

    def spy(mid, rad, X=None, prec=128):
        calls.append(mid)
        return real(mid, rad, X, prec)

    monkeypatch.setattr(box_rank, "box_full_row_rank_arb", spy)
    return calls


def stack_with_a_range_error(B, bad, k=2, m=2):
    """B well-conditioned k x m boxes; those in ``bad`` have one radius beyond the float range (their box
    then holds singular matrices)."""
    mids = np.stack([np.eye(k, m) + 0.25 * np.eye(k, m, 1) for _ in range(B)])
    rads = np.full(mids.shape, 2.0**-20)
    for b in bad:
        rads[b, -1, -1] = BEYOND
    return mids, rads


@pytest.mark.parametrize("chunk, k, m, bad, calls", [
    (4, 2, 2, [2], 1),  # one matrix per block: only the bad one goes to Arb
    (8, 2, 2, [2], 2),  # two per block: the bad one's block
    (8, 2, 2, [0, 3], 4),
    (12, 2, 3, [1], 2),
    (2, 1, 1, [1], 2),  # 1 x 1: two per block
    (1, 1, 1, [0], 1),
])
def test_each_block_of_matrices_is_certified_once_and_only_its_own(monkeypatch, arb_calls, chunk, k, m, bad,
                                                                  calls):
    monkeypatch.setattr(box_rank, "_CHUNK", chunk)
    mids, rads = stack_with_a_range_error(4, bad, k, m)
    out = box_full_row_rank(mids, rads)
    assert len(arb_calls) == calls
    assert all(not out[b] < 1 for b in bad)
    assert all(out[b] < 1 for b in range(4) if b not in bad)


def test_the_arb_fallback_uses_every_radius(arb_calls):
    """The fallback certifies the good boxes of the block and not the one whose radius, beyond the float
    range, reaches a singular matrix (its midpoint alone is the identity)."""
    mids, rads = stack_with_a_range_error(3, [1], 2, 3)
    out = box_full_row_rank(mids, rads)
    assert out[0] < 1 and out[2] < 1 and not out[1] < 1 and len(arb_calls) == 3
    assert not box_full_row_rank_arb(np.eye(2), np.array([[0.0, 0.0], [0.0, BEYOND]])) < 1


def test_a_nan_matrix_falls_back_to_arb_without_a_radius(arb_calls):
    """No radius and no zero entry (a zero would get 2^-1074): the block goes to Arb with no radius."""
    good = np.array([[1.0, 0.5], [0.25, 1.0]])
    bad = np.array([[1.0, np.nan], [0.5, 1.0]])
    out = box_full_row_rank(np.stack([good, bad, 3 * good]))
    assert out[0] < 1 and out[2] < 1 and not out[1] < 1 and len(arb_calls) == 3


@pytest.fixture
def pinv_of_stacks_fails(monkeypatch):
    """np.linalg.pinv raising for stacks and for matrices holding a NaN (as a LAPACK may)."""
    real = np.linalg.pinv

    def pinv(a, *args, **kwargs):
        if np.ndim(a) > 2 or np.isnan(a).any():
            raise np.linalg.LinAlgError("SVD did not converge")
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "pinv", pinv)


def test_right_inverses_one_by_one_when_the_stack_fails(pinv_of_stacks_fails):
    mids = np.stack([np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.5]]), np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 0.0]])])
    assert np.all(box_full_row_rank(mids, np.full(mids.shape, 2.0**-30)) < 1)
    bad = np.array([[1.0, np.nan, 0.0], [0.0, 1.0, 0.5]])
    out = box_full_row_rank(np.stack([mids[0], bad, mids[1]]))
    assert out[0] < 1 and out[2] < 1 and not out[1] < 1
    assert np.array_equal(box_rank._right_inverses(bad[None]), np.zeros((1, 3, 2)))


def test_non_finite_entries_of_a_right_inverse_become_zero_silently(monkeypatch):
    """Whatever pinv returns (and whatever it signals on the way), the entries that are not finite are 0,
    the others kept; the caller's floating-point error settings are not consulted."""
    def pinv(a, *args, **kwargs):
        out = np.ones(a.shape[:-2] + a.shape[:-3:-1])
        out[..., 0, 0] = np.float64(1.0) / np.zeros(())  # divide by zero: inf
        out[..., 1, 0] = np.float64(0.0) / np.zeros(())  # invalid: nan
        return out

    monkeypatch.setattr(np.linalg, "pinv", pinv)
    with np.errstate(all="raise"):
        X = box_rank._right_inverses(np.ones((2, 2, 3)))
    expected = np.ones((2, 3, 2))
    expected[:, :2, 0] = 0.0
    assert np.array_equal(X, expected)


def test_box_full_row_rank_arb_reads_mid_rad_and_the_right_inverse_given():
    eye = np.eye(2)
    assert box_full_row_rank_arb(eye, None) < 1  # an exact matrix
    assert box_full_row_rank_arb(eye, np.full((2, 2), 0.25)) < 1
    assert not box_full_row_rank_arb(eye, np.array([[2.0, 1.0], [1.0, 2.0]])) < 1  # holds [[0, 0], [1, 1]]
    assert not box_full_row_rank_arb(eye, None, X=np.zeros((2, 2))) < 1  # X = 0 certifies nothing
    assert box_full_row_rank_arb(eye, None, X=eye) < 1
    # A X = 2^-1074 I: its inverse overflows, no certificate
    assert not box_full_row_rank_arb(eye, None, X=np.eye(2) * 2.0**-1074) < 1
    assert not box_full_row_rank_arb(np.zeros((2, 3)), np.full((2, 3), 2.0**-30)) < 1  # pinv 0: A X = 0


# ---------------------------------------------------------------------------------------------------------
# singular_point


def q(x) -> fmpq:
    return x if isinstance(x, fmpq) else fmpq(*float(x).as_integer_ratio())


def assert_witness(rows, up, down, w):
    """Rebuild the point from w.c alone (exact): for each column, D_j = lam (up or -down on the side of the
    target), 0 < lam < 1; then every entry is strictly inside its half-gaps (or unmoved) and c^T P = 0."""
    assert w is not None and w.verified is True and 0 <= w.used < 1
    rows = [[q(x) for x in r] for r in rows]
    c = [q(x) for x in w.c]
    assert any(x != 0 for x in c)
    k, m = len(rows), len(rows[0])
    for j in range(m):
        t = -sum((c[i] * rows[i][j] for i in range(k)), fmpq(0))
        D = [fmpq(0)] * k
        if t != 0:
            side = [up[i][j] if (c[i] > 0) == (t > 0) else -down[i][j] for i in range(k)]
            total = sum((c[i] * side[i] for i in range(k)), fmpq(0))
            assert total != 0
            lam = t / total
            assert 0 < lam < 1
            D = [lam * s for s in side]
        for i in range(k):
            assert -down[i][j] < D[i] < up[i][j] or D[i] == 0
        assert sum((c[i] * (rows[i][j] + D[i]) for i in range(k)), fmpq(0)) == 0
    reported = w.to_dict()["coefficients"]
    assert [Fraction(s) for s in reported] == [Fraction(int(x.p), int(x.q)) for x in c]


def uniform(k, m, g):
    return [[g] * m for _ in range(k)], [[g] * m for _ in range(k)]


@pytest.mark.parametrize("rows", [
    [[fmpq(1, 3), fmpq(1)], [fmpq(1), fmpq(3)]],  # row 2 = 3 row 1
    [[fmpq(1), fmpq(0), fmpq(0)], [fmpq(1, 3), fmpq(1), fmpq(1, 5)], [fmpq(1), fmpq(3), fmpq(3, 5)]],  # c_0 = 0
    [[fmpq(1, 7), fmpq(-2, 7)], [fmpq(-5, 7), fmpq(10, 7)]],
])
@pytest.mark.parametrize("with_mid", [True, False])
def test_an_exact_rational_dependence_beyond_float_reach_is_found(rows, with_mid):
    """Half-gaps 2^-80: no float coefficient vector comes that close, the exact least squares (c_p = 1 at
    the right row p) does; the rows are read as the rationals they are, not as floats."""
    up, down = uniform(len(rows), len(rows[0]), fmpq(1, 2**80))
    mid = np.array([[float(x) for x in r] for r in rows]) if with_mid else None
    assert_witness(rows, up, down, singular_point(rows, up, down, mid=mid))


def test_exact_rationals_are_not_rounded_to_floats():
    """The float copy of [[1/3, 1], [1, 3]] is nonsingular (det 2^-54): with half-gaps 2^-80 no point of
    its box is singular, the exact rows have one."""
    rows = [[fmpq(1, 3), fmpq(1)], [fmpq(1), fmpq(3)]]
    up, down = uniform(2, 2, fmpq(1, 2**80))
    floats = np.array([[1 / 3, 1.0], [1.0, 3.0]])
    assert Fraction(floats[0, 0]) * 3 != 1
    w = singular_point(np.array(rows, dtype=object), up, down, mid=floats)
    assert_witness(rows, up, down, w)


def test_the_columns_are_weighted_by_their_own_half_gaps():
    """[[1, 1], [1, 1 + 2^-30]], half-gaps 2^-60 in column 0 and 2^-20 in column 1: c = (1, -1) leaves
    2^-30 in column 1 only, inside its gaps; least squares weighted otherwise (or not at all) spreads the
    residual over column 0, whose gaps are 2^30 times narrower."""
    S = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-30]])
    up, down = gap_sides(S, np.array([[-60, -20]] * 2), np.array([[-60, -20]] * 2), np.ones((2, 2), bool))
    assert_witness(S, up, down, singular_point(S, up, down))


def test_half_gaps_near_the_bottom_of_the_float_range():
    """Rows 2^-1000 [[1/3, 1], [1, 3]] with half-gaps 2^-1070: the weights are relative (an absolute
    weight 1/2^-1070 overflows), and the refinement finds the exact dependence."""
    s = fmpq(1, 2**1000)
    rows = [[s / 3, s], [s, 3 * s]]
    up, down = uniform(2, 2, fmpq(1, 2**1070))
    assert_witness(rows, up, down, singular_point(rows, up, down, mid=np.array([[float(x) for x in r] for r in rows])))


@pytest.mark.parametrize("row", [[0.0, 0.0], [0.0, 0.0, 0.0], [2.0**-40, -2.0**-41]])
def test_a_single_row_inside_the_gaps_around_zero_is_a_witness(row):
    """k = 1: the rows are dependent where the row is 0; the SVD candidate is the only one (no least
    squares for one row)."""
    S = np.array([row])
    up, down = gap_sides(S, np.full(S.shape, -39), np.full(S.shape, -39), np.ones(S.shape, bool))
    assert_witness(S, up, down, singular_point(S, up, down))


@pytest.mark.parametrize("S", [[[1.0], [2.0], [3.0]], [[1.0, 2.0], [0.5, -1.0], [3.0, 1.0], [-2.0, 0.25]]])
def test_more_rows_than_columns_are_dependent(S):
    """k > m: the smallest left singular vector of the full SVD (a left null vector) is a witness."""
    S = np.array(S)
    up, down = gap_sides(S, np.full(S.shape, -30), np.full(S.shape, -31), np.ones(S.shape, bool))
    assert_witness(S, up, down, singular_point(S, up, down))


def test_stored_values_of_any_float_type():
    """float16 values (exact in float64) as the stored values, or as the float copy: read as float64."""
    e = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=np.float16)
    up, down = gap_sides(e.astype(np.float64), np.full(e.shape, -12), np.full(e.shape, -13), np.ones(e.shape, bool))
    assert_witness(e.astype(np.float64), up, down, singular_point(e, up, down))
    rows = [[fmpq(1), fmpq(2)], [fmpq(2), fmpq(4)]]
    assert_witness(rows, up, down, singular_point(rows, up, down, mid=e))


def test_rows_spanning_the_exponent_range_give_no_false_witness_and_no_error():
    """Rows [1, 1] and 2^-1050 [1, 1] (dependent): the SVD candidate overflows (its second row is scaled by
    about 2^1050); the search may miss the point, never claims a wrong one, never fails."""
    S = np.array([[1.0, 1.0], [2.0**-1050, 2.0**-1050]])
    up, down = gap_sides(S, np.full(S.shape, -1070), np.full(S.shape, -1071), np.ones(S.shape, bool))
    with np.errstate(over="ignore"):
        w = singular_point(S, up, down)
    if w is not None:
        assert_witness(S, up, down, w)


def test_exact_columns_are_handled_silently():
    """A column of exact entries (no gaps) gives weight 0 to the least squares, which is then skipped: no
    floating-point exception reaches a caller that asks for them."""
    S = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-20]])
    mask = np.array([[True, False], [True, False]])
    up, down = gap_sides(S, np.full(S.shape, -19), np.full(S.shape, -19), mask)
    with np.errstate(all="raise"):
        assert singular_point(S, up, down) is None  # column 1 would need to move


@pytest.mark.parametrize("rows, x", [
    ([[1, 1], [2, 2]], -2),  # c = (x, 1) at p = 1: x = -2 exactly (mantissa 1, exponent 1)
    ([[1, 1], [3, 3]], -3),  # mantissa 3, exponent 0
    ([[1, 1], [8, 8]], -8),
    ([[2, 2], [2, 2]], -1),
    ([[4, 3], [1, 0.75]], -0.25),
])
def test_the_least_squares_coefficients_are_read_exactly(rows, x):
    """_weighted_null_vector with c0 pointing at row 1 (p = 1): the exact solution of dependent rows is a
    dyadic number, returned exactly (c proportional to (x, 1), c_p = +-1)."""
    rows = [[q(v) for v in r] for r in rows]
    for c0 in ([0.5, -1.0], [-0.25, 1.0]):
        c = box_rank._weighted_null_vector(rows, np.array(c0), np.full((2, 2), 2.0**-30))
        assert c is not None and c[1] in (1, -1)
        assert c[0] / c[1] == q(x)
