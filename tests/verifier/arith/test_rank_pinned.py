"""Pinned behaviour of verifier/arith/rank.py beyond the central property
(mutation testing, issue 9): the lazy certificate's paths, the results' fields,
the method texts that say which path decided, and the edge shapes."""

import re

import numpy as np
import pytest
from flint import arb, arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision
from verifier.arith.float_certificates import METHOD as FLOAT_METHOD
from verifier.arith.float_certificates import FloatBall, float_ball_of
from verifier.arith.rank import (
    FLOAT_FROM,
    REFINE_LIMIT,
    certified_rank,
    certify_full_row_rank,
    certify_rank_lower_bound,
    certify_rank_lower_bound_lazy,
    numerical_rank,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

RANK2 = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 1.0, 0.0]])  # rank 2, 3 x 4


def _lazy(A, k, *, floats=False, **kw):
    A = np.asarray(A, dtype=np.float64)
    calls = []

    def ball(rows, cols):
        calls.append(("ball", tuple(int(i) for i in rows), tuple(int(j) for j in cols)))
        return to_arb_mat(A[np.ix_(rows, cols)])

    def flt(rows, cols):
        calls.append(("float", tuple(int(i) for i in rows), tuple(int(j) for j in cols)))
        return FloatBall(A[np.ix_(rows, cols)], None)

    return certify_rank_lower_bound_lazy(A, k, ball, minor_float=flt if floats else None, **kw), calls


def test_constants():
    assert (FLOAT_FROM, REFINE_LIMIT) == (64, 300)


def test_certified_rank_truth_table():
    assert certified_rank(4, Decision.TRUE) == 4
    assert certified_rank(4, Decision.UNDECIDED) == 0 and certified_rank(4, Decision.FALSE) == 0


def test_lazy_certifies_the_same_minor_as_the_eager_path_and_encloses_only_it():
    lb, calls = _lazy(RANK2, 2)
    eager = certify_rank_lower_bound(RANK2, 2)
    assert lb.decision is Decision.TRUE and lb.k == lb.certified_k == lb.requested_k == 2
    assert (lb.rows, lb.cols) == (eager.rows, eager.cols) and len(lb.rows) == len(lb.cols) == 2
    assert calls == [("ball", lb.rows, lb.cols)]
    assert lb.method.startswith("arb: ||I - R A_minor||_inf < 1 with R ~ inv(A_minor) in float64")
    assert lb.method.endswith(" (only the minor enclosed)")
    assert lb.prec_bits == 128 and 0 <= lb.residual_norm_upper < 1 and lb.seconds >= 0
    assert _lazy(RANK2, 2, prec=192)[0].prec_bits == 192


def test_lazy_never_certifies_above_the_rank_and_says_false_only_above_the_shape():
    lb, _ = _lazy(RANK2, 3)
    assert lb.decision is Decision.UNDECIDED and lb.certified_k == 0 and lb.k == 3
    big, calls = _lazy(RANK2, 4)
    assert big.decision is Decision.FALSE and calls == [] and (big.rows, big.cols) == ((), ())
    assert big.method == "k=4 exceeds min(m, n)=3" and big.residual_norm_upper == float("inf")
    assert big.requested_k == 4 and big.prec_bits == 128
    zero, calls = _lazy(RANK2, 0)
    assert zero.decision is Decision.TRUE and zero.k == 0 and calls == []
    assert zero.method == "rank >= 0 holds trivially" and zero.residual_norm_upper == 0.0
    assert zero.requested_k == 0 and zero.prec_bits == 128 and (zero.rows, zero.cols) == ((), ())


def test_lazy_with_given_columns():
    A = np.array([[1.0, 5.0, 0.0, 7.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.0], [0.0, 9.0, 0.0, 1.0, 1.0]])
    lb, calls = _lazy(A, 3, cols=[0, 2, 4])
    assert lb.decision is Decision.TRUE and lb.rows == (0, 1, 2) and lb.cols == (0, 2, 4)
    assert calls == [("ball", (0, 1, 2), (0, 2, 4))]
    singular, _ = _lazy(np.array([[1.0, 1.0, 2.0], [1.0, 1.0, 3.0]]), 2, cols=[0, 1])
    assert singular.decision is Decision.UNDECIDED and singular.cols == (0, 1)
    with pytest.raises(InvalidInstance, match="given columns need k = rows = len"):
        _lazy(A, 3, cols=[0, 2])
    with pytest.raises(InvalidInstance, match="given columns need k = rows = len"):
        _lazy(A, 2, cols=[0, 2])


def test_lazy_float_path_uses_the_float_callback_or_converts_the_ball():
    lb, calls = _lazy(RANK2, 2, floats=True, method="float")
    assert lb.decision is Decision.TRUE and lb.prec_bits == 53
    assert calls == [("float", lb.rows, lb.cols)]
    assert lb.method == f"{FLOAT_METHOD} [numpy]: ||I - R A_minor||_inf < 1, R ~ inv(mid A_minor) (only the minor enclosed)"
    lb2, calls2 = _lazy(RANK2, 2, method="float")
    assert lb2.decision is Decision.TRUE and calls2 == [("ball", lb2.rows, lb2.cols)]
    bad, _ = _lazy(np.array([[1.0, 1.0], [1.0, 1.0]]), 2, floats=True, method="float")
    assert bad.decision is Decision.UNDECIDED and "not decided (float path " in bad.method
    with pytest.raises(InvalidInstance, match="unknown certificate method 'exact'"):
        _lazy(RANK2, 2, method="exact")


def test_eager_fields_edge_shapes_and_the_fallback_ladder():
    lb = certify_rank_lower_bound(RANK2)
    assert lb.decision is Decision.TRUE and lb.k == 2 and lb.requested_k is None and lb.prec_bits == 128
    assert lb.method.startswith("arb: ") and lb.rows == tuple(sorted(lb.rows))
    assert certify_rank_lower_bound(np.zeros((2, 3))).method == "rank >= 0 holds trivially"
    assert certify_rank_lower_bound(np.zeros((0, 3))).k == 0
    with pytest.raises(InvalidInstance, match="k must be >= 0, got -1"):
        certify_rank_lower_bound(RANK2, -1)
    over = certify_rank_lower_bound(RANK2, 4)
    assert over.decision is Decision.FALSE and over.method == "k=4 exceeds min(m, n)=3" and over.requested_k == 4
    # a numerically full-rank but exactly singular matrix: the ladder tries smaller k, certifies 2
    eps = 2.0 ** -30
    A = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, eps]])
    assert certify_rank_lower_bound(A).k == 3  # eps is exact: truly rank 3
    full = certify_full_row_rank(RANK2[[0, 2]])
    assert full.decision is Decision.TRUE and full.k == 2 and full.requested_k == 2
    assert certify_full_row_rank(RANK2).decision is Decision.UNDECIDED
    assert certify_full_row_rank(RANK2.T).decision is Decision.FALSE  # 4 rows, 3 columns


def test_to_dict_fields():
    d = certify_rank_lower_bound(RANK2, 2).to_dict()
    assert set(d) == {"k", "certified_k", "requested_k", "rows", "cols", "decision", "prec_bits", "method",
                      "residual_norm_upper", "seconds"}
    assert d["k"] == d["certified_k"] == d["requested_k"] == 2 and d["decision"] == "true"
    assert d["prec_bits"] == 128 and 0 <= d["residual_norm_upper"] < 1 and d["method"].startswith("arb")
    assert isinstance(d["rows"], list) and isinstance(d["cols"], list) and d["seconds"] >= 0
    u = certify_rank_lower_bound(RANK2, 4).to_dict()
    assert u["residual_norm_upper"] is None and u["certified_k"] == 0 and u["decision"] == "false"


def test_numerical_rank_thresholds(monkeypatch):
    assert numerical_rank(np.zeros((2, 2))) == 0 and numerical_rank(np.zeros((0, 2))) == 0
    A = np.diag([1.0, 1e-3, 1e-20])
    assert numerical_rank(A) == 2 and numerical_rank(A, rtol=1e-2) == 1 and numerical_rank(A, rtol=1e-25) == 3
    # the default tolerance is max(m, n) * eps * sigma_max, strictly; the boundary cases get the exact
    # singular values of the diagonal matrices (the float SVD patched: its last bit is the machine's)
    import verifier.arith.rank as rank

    monkeypatch.setattr(rank, "_singular_values", lambda mid: np.sort(np.abs(np.diagonal(mid)))[::-1])
    e = np.finfo(np.float64).eps
    assert numerical_rank(np.diag([1.0, 3 * e * 1.01])) == 2 and numerical_rank(np.diag([1.0, 2 * e])) == 1
    assert numerical_rank(np.diag([1.0, 2 * e]), rtol=2 * e) == 1  # equal to the tolerance: not counted
    B = arb_mat([[arb(1.0), arb(0.0)], [arb(0.0), arb(1e-30)]])
    assert numerical_rank(B) == 1 and numerical_rank(FloatBall(np.eye(3), None)) == 3


def test_ball_and_float_ball_inputs_enclose_the_true_matrix():
    # a FloatBall with radii: the ball minor carries the radii (a zero-width ball would certify)
    mid = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0 ** -20]])
    wide = FloatBall(mid, np.full((2, 2), 2.0 ** -18))
    assert certify_rank_lower_bound(wide, 2, method="arb").decision is Decision.UNDECIDED
    assert certify_rank_lower_bound(wide, 2, method="float").decision is Decision.UNDECIDED
    assert certify_rank_lower_bound(FloatBall(mid, None), 2, method="arb").decision is Decision.TRUE
    ball = float_ball_of(to_arb_mat(mid))
    assert certify_rank_lower_bound(ball, 2).decision is Decision.TRUE
    nan = arb_mat([[arb("nan")]])
    with pytest.raises(InsufficientPrecision, match="NaN or infinite midpoints"):
        certify_rank_lower_bound(nan)  # a computed ball that lost every digit: raise --prec, not bad input


def _ball_diag(s0, s1, r):
    return arb_mat([[arb(s0, r), arb(0.0, r)], [arb(0.0, r), arb(s1, r)]])


@pytest.mark.parametrize("s0, s1", [(1.0, 1e-13), (1.0, 1e-11), (1.0, 1e-9), (1.0, 1e-7), (1.0, 1e-5), (1.0, 1e-3),
                                    (1.0, 1e-2), (4.0, 0.02)])
def test_the_fallback_ladder_certifies_the_smaller_rank(s0, s1, monkeypatch):
    """The 2 x 2 ball contains singular matrices (radius 2 s1): rank >= 2 is never
    certified, and each rtol of the ladder (1e-12 ... 1e-2, relative to sigma_max,
    strictly above) is the one that offers k = 1.  The float SVD is patched to the
    exact singular values: the boundary case s1 = 1e-2 s0 must not depend on its last bit."""
    import verifier.arith.rank as rank

    monkeypatch.setattr(rank, "_singular_values", lambda mid: np.array([s0, s1]))
    lb = certify_rank_lower_bound(_ball_diag(s0, s1, 2 * s1))
    assert lb.decision is Decision.TRUE and lb.k == 1 and lb.requested_k is None


def test_failure_fields_are_pinned():
    over = certify_rank_lower_bound(RANK2, 4)
    assert 0 <= over.seconds < 60 and over.prec_bits == 128
    zero = certify_rank_lower_bound(np.zeros((2, 3)), prec=192)
    assert zero.decision is Decision.TRUE and zero.prec_bits == 192 and 0 <= zero.seconds < 60
    assert zero.residual_norm_upper == 0.0 and zero.requested_k is None and (zero.rows, zero.cols) == ((), ())
    lazy_over, _ = _lazy(RANK2, 4)
    assert 0 <= lazy_over.seconds < 60
    assert certify_full_row_rank(RANK2[[0, 2]], prec=192).prec_bits == 192
    assert certify_full_row_rank(RANK2[[0, 2]], method="float").prec_bits == 53


@pytest.mark.parametrize("method", ["arb", "float", "auto"])
def test_radii_of_the_chosen_columns_are_kept(method):
    """A 2 x 3 ball whose chosen minor (columns 0 or 1, and 2) contains a singular
    matrix only through column 2's radius: never certified; a minor built from the
    wrong columns (or without radii) would be."""
    mid = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    rad = np.array([[0.0, 0.0, 0.9], [0.0, 0.0, 0.9]])
    fb = FloatBall(mid, rad)
    assert certify_rank_lower_bound(fb, 2, method=method).decision is Decision.UNDECIDED
    ab = arb_mat([[arb(mid[i, j], rad[i, j]) for j in range(3)] for i in range(2)])
    assert certify_rank_lower_bound(ab, 2, method=method).decision is Decision.UNDECIDED
    # the same without the radius is certified (the test can fail)
    assert certify_rank_lower_bound(FloatBall(mid, np.zeros((2, 3))), 2, method=method).decision is Decision.TRUE


def test_wide_arb_balls_on_the_float_path_are_undecided():
    B = arb_mat([[arb(float(i == j), 2.0) for j in range(3)] for i in range(3)])
    assert certify_rank_lower_bound(B, k=3, method="float").decision is Decision.UNDECIDED
    narrow = arb_mat([[arb(float(i == j), 1e-6) for j in range(3)] for i in range(3)])
    assert certify_rank_lower_bound(narrow, k=3, method="float").decision is Decision.TRUE


WIDE = FloatBall(np.eye(2), np.full((2, 2), 0.75))  # contains [[.5, .5], [.5, .5]]; ||I - A||_inf <= 1.5


@pytest.mark.parametrize("method", ["arb", "float"])
def test_the_criterion_is_strictly_below_one(method):
    """The residual bound of the wide ball lies in [1, 2): a criterion loosened to
    '< 2' would certify a ball that contains a singular matrix."""
    lb = certify_rank_lower_bound(WIDE, 2, method=method)
    assert lb.decision is Decision.UNDECIDED and 1.4 < lb.residual_norm_upper < 1.6
    lz = certify_rank_lower_bound_lazy(WIDE.mid, 2, lambda r, c: arb_mat([[arb(float(i == j), 0.75) for j in c] for i in r]),
                                       minor_float=lambda r, c: FloatBall(WIDE.mid[np.ix_(r, c)],
                                                                          WIDE.rad[np.ix_(r, c)]), method=method)
    assert lz.decision is Decision.UNDECIDED and 1.4 < lz.residual_norm_upper < 1.6
    if method == "arb":  # the ladder ran to max_prec (1024 by default) with approximate solves
        assert lb.prec_bits == lz.prec_bits == 1024 and "by a 1024-bit approximate solve" in lb.method
        assert lb.method.endswith("; not certified: raise max_prec or supply a smaller k")
    else:
        assert lb.prec_bits == lz.prec_bits == 53


def test_undecided_result_fields():
    """RANK2 has rank 2: no route certifies k = 3, so the ladder climbs to max_prec
    (1024) whatever the float inverse does on this machine (it may fail or not), and
    the recorded residual bound is never below 1."""
    u = certify_full_row_rank(RANK2)
    assert u.decision is Decision.UNDECIDED and u.k == u.requested_k == 3 and u.certified_k == 0
    assert u.rows == (0, 1, 2) and len(u.cols) == 3 and u.prec_bits == 1024 and 0 <= u.seconds < 60
    assert u.residual_norm_upper >= 1
    assert u.method.startswith("arb: ||I - R A_minor||_inf < 1 with ")
    assert u.method.endswith("; not certified: raise max_prec or supply a smaller k")
    t = certify_rank_lower_bound(RANK2, 2)
    assert 0 <= t.seconds < 60 and t.requested_k == 2


_UNDECIDED_FLOAT = re.compile(r"float path undecided \(bound [0-9.e+]+\)")


def test_refinement_limits_and_the_ladder(monkeypatch):
    """Hilbert(13) in float64 (its float entries taken as exact): no float64 matrix R
    makes ||I - R A|| < 1 here (the float inverse leaves ~700 on every machine: the
    condition number is ~3e18), so the float path and the first arb rung (float R)
    cannot decide; arb decides at the second rung with an approximate solve, only for
    minors up to REFINE_LIMIT (patched here to 13 and 12) and only up to max_prec.
    Hilbert(10) (condition ~2e13, residual ~0.005) is decided at the first rung."""
    import scipy.linalg

    import verifier.arith.rank as rank

    A = scipy.linalg.hilbert(13)
    monkeypatch.setattr(rank, "FLOAT_FROM", 4)
    monkeypatch.setattr(rank, "REFINE_LIMIT", 13)
    auto = certify_rank_lower_bound(A, 13)
    assert auto.decision is Decision.TRUE and auto.prec_bits == 256
    assert _UNDECIDED_FLOAT.match(auto.method) and "; then arb: " in auto.method
    assert "256-bit approximate" in auto.method
    arb_ = certify_rank_lower_bound(A, 13, method="arb")
    assert arb_.decision is Decision.TRUE and arb_.prec_bits == 256
    assert certify_rank_lower_bound(A, 13, method="arb", max_prec=128).decision is Decision.UNDECIDED
    assert certify_rank_lower_bound(A, 13, method="arb", prec=192).prec_bits == 384
    assert certify_rank_lower_bound(scipy.linalg.hilbert(10), 10, method="arb", prec=192).prec_bits == 192
    monkeypatch.setattr(rank, "REFINE_LIMIT", 12)
    over = certify_rank_lower_bound(A, 13)
    assert over.decision is Decision.UNDECIDED and over.prec_bits == 53
    assert "not decided (" + _UNDECIDED_FLOAT.search(over.method).group(0) + ")" in over.method
    assert certify_rank_lower_bound(A, 13, method="arb").decision is Decision.UNDECIDED  # no ladder above the limit


def test_the_backend_is_passed_on():
    lb = certify_rank_lower_bound(np.eye(3), method="float", backend="torch-cpu")
    assert lb.decision is Decision.TRUE and "[torch-cpu]" in lb.method
    lz, _ = _lazy(RANK2, 2, floats=True, method="float", backend="torch-cpu")
    assert lz.decision is Decision.TRUE and "[torch-cpu]" in lz.method


def test_lazy_defaults():
    lb, _ = _lazy(RANK2, 2)
    assert lb.method.startswith("arb: ") and lb.prec_bits == 128  # method "auto", prec 128


def test_radii_of_unchosen_columns_do_not_count():
    """Columns 0 and 1 (2 I, exact) are the chosen minor; column 2 is tiny with a huge
    radius and must not enter the certificate of that minor (either path)."""
    mid = np.array([[2.0, 0.0, 0.001], [0.0, 2.0, 0.001]])
    rad = np.array([[0.0, 0.0, 5.0], [0.0, 0.0, 5.0]])
    for method in ("arb", "float"):
        lb = certify_rank_lower_bound(FloatBall(mid, rad), 2, method=method)
        assert lb.decision is Decision.TRUE and lb.cols == (0, 1), method


def test_more_fields_on_every_path():
    over = certify_rank_lower_bound(RANK2, 4)
    assert over.k == 4 and over.certified_k == 0
    zero = certify_rank_lower_bound(RANK2, 0)
    assert zero.decision is Decision.TRUE and zero.k == 0 and zero.requested_k == 0
    lz_over, _ = _lazy(RANK2, 4)
    assert lz_over.k == 4
    for lb in (_lazy(RANK2, 2)[0], _lazy(RANK2, 0)[0], _lazy(RANK2, 4)[0]):
        assert 0 <= lb.seconds < 60


def test_singular_values_fall_back_to_gesvd_when_gesdd_fails(request):
    """gesdd failing to converge (patched: numpy's svd raises, and scipy's svd raises for
    any driver but gesvd) moves rank's float singular values to scipy's gesvd: the
    values of a diagonal matrix, and the numerical rank, as without the failure."""
    import verifier.arith.rank as rank

    request.getfixturevalue("only_gesvd")  # gesdd fails from here on (conftest)
    with pytest.raises(np.linalg.LinAlgError):  # the failure is in place
        np.linalg.svd(np.eye(2))
    A = np.array([[3.0, 0.0, 0.0], [0.0, 0.25, 0.0]])
    s = rank._singular_values(A)
    assert s.shape == (2,) and np.allclose(s, [3.0, 0.25], rtol=1e-12, atol=0)
    assert rank.numerical_rank(A) == 2
    assert rank.numerical_rank(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])) == 1
    assert rank._singular_values(np.zeros((0, 3))).shape == (0,)
