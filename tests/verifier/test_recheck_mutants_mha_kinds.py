"""The re-checker's MHA kinds (docs/CERTIFICATES.md 4.3-4.4b, Sec. 5) on certificates small enough to decide
by hand: one context token (n = 1), so the softmax is exactly 1 and Z[t] = E^(t) whatever W_K, W_Q are, and every
product of the readout is a single term.  The scores yhat^(t) = x_t w (d = H = d_v = 1) are then exact rationals
known in advance, on the interval path exactly (no rounding at all) and on the float path up to a radius.

Pinned here: the comparisons at the edge (a tie is never "beats"; a residual equal to tol is "<=", not ">"), the
binary scores [0, yhat] of d_out = 1, claims of wrong examples, ill-formed claims and their one-line messages,
the statement lines, the path chosen at the work and memory limits (Sec. 5), the float path's charge (Sec. 7.1),
interval ends beyond 2^65536 (they prove nothing: exit 1, never a crash), and the float readout's enclosures
in a summation order where its rounding matters.  Written against the mutation run's survivors in these kinds.
"""
from __future__ import annotations

import base64
import struct
from fractions import Fraction

import numpy as np
import pytest
from summation_orders import ordered_matmul

from verifier import recheck as rc

ARGMAX, RESIDUAL = "mha-argmax-margins", "mha-readout-residual"
TAIL = " at every point of the intervals of the data and weights"


def seal(kind: str, claim: dict, data: dict) -> dict:
    c = {"format": rc.FORMAT, "kind": kind, "about": "", "claim": claim, "data": data}
    c["sha256"] = rc.digest(c)
    return c


def judge(kind: str, claim: dict, data: dict) -> tuple[int, str]:
    return rc.check_certificate(seal(kind, claim, data))


def layer(xs, w, **extra) -> dict:
    """T = len(xs) examples, one context token x_t each (d = 1), W_K = 0: Z[t] = x_t exactly, yhat^(t) = x_t w."""
    T = len(xs)
    data = {"T": T, "n": 1, "d": 1, "H": 1, "d_h": 1, "shared": False, "contexts": [[[x]] for x in xs],
            "queries": [["1"]] * T, "W_K": [[["0"]]], "W_Q": [[["1"]]], "d_v": 1, "d_out": len(w),
            "W_V": [[["1"]]], "W_O": [["1"]], "W_D": [list(w)], "skip": False}
    data.update(extra)
    return data


@pytest.fixture(params=["intervals", "float"])
def path(request, monkeypatch):
    """Each test on both paths (the float path forced: no certificate's work is at most -1)."""
    rc._numpy()
    if request.param == "float":
        monkeypatch.setattr(rc, "MP_WORK", -1)
    return request.param


def how(p: str) -> str:
    return "Z (intervals, 128 bits)" if p == "intervals" else "float64 balls, a priori bounds"


# -- 4.4b argmax margins ------------------------------------------------------------------------------------------

# yhat = x (1, 2, 3): class 2 wins for x > 0, class 0 for x < 0, a three-way tie at x = 0
THREE = layer(["1", "-1", "1", "0"], ["1", "2", "3"], classes=[2, 0, 1, 2])


def test_argmax_correct_and_wrong_examples_are_proved(path):
    code, line = judge(ARGMAX, {"correct": [0, 1], "wrong": [2]}, THREE)
    assert (code, line) == (0, "mha-argmax-margins: argmax of yhat is the class, uniquely, on the 2 examples [0, 1] "
                               "and is not on the 1 examples [2], for the given W_K, W_Q, W_V, W_O, W_D" + TAIL
                               + f" (T = 4, Eqs. 1-8): {how(path)}")


@pytest.mark.parametrize("claim, t, which", [({"correct": [2], "wrong": []}, 2, "correct"),  # class 2 beats 1
                                             ({"correct": [], "wrong": [0]}, 0, "wrong"),  # class 2 is the argmax
                                             ({"correct": [3], "wrong": []}, 3, "correct"),  # a tie: none beats
                                             ({"correct": [], "wrong": [3]}, 3, "wrong")])
def test_argmax_false_claims_and_ties_are_refused(claim, t, which, path):
    code, line = judge(ARGMAX, claim, THREE)
    c = THREE["classes"][t]
    assert (code, line) == (1, f"example {t}: yhat_c > yhat_j for every j != c = {c} not shown" if which == "correct"
                            else f"example {t}: yhat_j > yhat_c for some j != c = {c} not shown")


# d_out = 1: the scores are [0, yhat]; yhat = x
ONE = layer(["1/2", "-1/2", "1/2", "0", "0"], ["1"], classes=[1, 0, 0, 1, 0])


def test_binary_scores_are_zero_and_yhat(path):
    code, line = judge(ARGMAX, {"correct": [0, 1], "wrong": [2]}, ONE)
    assert code == 0, line
    assert line.startswith("mha-argmax-margins: argmax of the scores [0, yhat] is the class, uniquely, on the 2 "
                           "examples [0, 1] and is not on the 1 examples [2], for "), line


@pytest.mark.parametrize("claim, t", [({"correct": [2], "wrong": []}, 2),  # yhat = 1/2: class 1, not 0
                                      ({"correct": [3], "wrong": []}, 3),  # yhat = 0 ties 0
                                      ({"correct": [4], "wrong": []}, 4),
                                      ({"correct": [], "wrong": [3]}, 3),
                                      ({"correct": [], "wrong": [4]}, 4)])
def test_binary_scores_false_claims_and_ties_are_refused(claim, t, path):
    code, line = judge(ARGMAX, claim, ONE)
    assert code == 1 and line.startswith(f"example {t}: "), line


def test_two_classes_and_a_class_out_of_range(path):
    two = layer(["1", "-1"], ["1", "-1"], classes=[0, 1])
    assert judge(ARGMAX, {"correct": [0, 1], "wrong": []}, two)[0] == 0
    assert judge(ARGMAX, {"correct": [], "wrong": [0]}, dict(two, classes=[1, 1]))[0] == 0
    assert judge(ARGMAX, {"correct": [0], "wrong": []}, dict(two, classes=[2, 1])) == (
        2, "classes entry = 2 outside [0, 1]")
    assert judge(ARGMAX, {"correct": [0], "wrong": []}, dict(ONE, classes=[2, 0, 0, 1, 0])) == (
        2, "classes entry = 2 outside [0, 1]")  # d_out = 1: two classes too


def test_an_interval_score_that_straddles_another_is_not_beating_it():
    """yhat = x w with w in [-1, 1]: the class-1 score [-1, 1] against 0 (d_out = 1), and a class whose upper end
    alone is above the other's: nothing is shown either way."""
    box = layer(["1"], [["-1", "1"]], classes=[1])
    assert judge(ARGMAX, {"correct": [0], "wrong": []}, box)[0] == 1
    assert judge(ARGMAX, {"correct": [], "wrong": [0]}, dict(box, classes=[0]))[0] == 1
    three = layer(["1"], ["0", ["-1", "1"], "0"], classes=[1])
    assert judge(ARGMAX, {"correct": [0], "wrong": []}, three)[0] == 1


@pytest.mark.parametrize("claim, classes, line", [
    ({"correct": [0], "wrong": []}, [0, 0], "classes: expected a list of 1 to 1 entries"),
    ({"correct": [0], "wrong": []}, ["0"], "classes entry = '0' is not an integer"),
    ({"correct": [1], "wrong": []}, [0], "correct entry = 1 outside [0, 0]"),
    ({"correct": [], "wrong": [1]}, [0], "wrong entry = 1 outside [0, 0]"),
    ({"correct": [], "wrong": ["0"]}, [0], "wrong entry = '0' is not an integer"),
    ({"correct": [], "wrong": []}, [0], "correct and wrong must be disjoint, not both empty"),
    ({"correct": [0], "wrong": [0]}, [0], "correct and wrong must be disjoint, not both empty"),
])
def test_ill_formed_argmax_claims(claim, classes, line):
    assert judge(ARGMAX, claim, layer(["1"], ["1", "-1"], classes=classes)) == (2, line)


@pytest.mark.parametrize("ok", [9, 8])
def test_the_statement_lists_at_most_eight_examples(ok):
    """17 examples, yhat = (1, -1): class 0 wins everywhere; the first ``ok`` claimed correct, the rest wrong."""
    data = layer(["1"] * 17, ["1", "-1"], classes=[0] * ok + [1] * (17 - ok))
    code, line = judge(ARGMAX, {"correct": list(range(ok)), "wrong": list(range(ok, 17))}, data)
    assert code == 0, line
    first, rest = list(range(8)), list(range(ok, ok + 8))
    assert (f"uniquely, on the {ok} examples {first}{'...' if ok > 8 else ''} and is not on the {17 - ok} examples "
            f"{rest}{'...' if 17 - ok > 8 else ''}, for the given") in line, line


def test_the_float_path_comparisons_are_charged(monkeypatch):
    """Float path (4.4b): mid -/+ rad compared as exact rationals, charged (|correct| + |wrong|) C 200 word
    operations (Sec. 7.1's budget); 2 examples, C = 2: 800. At a budget of 800 accepted, at 799 refused."""
    monkeypatch.setattr(rc, "MP_WORK", -1)
    data = layer(["1", "-1"], ["1", "-1"], classes=[0, 0])
    monkeypatch.setattr(rc, "EXACT_WORK", 800)
    assert judge(ARGMAX, {"correct": [0], "wrong": [1]}, data)[0] == 0
    monkeypatch.setattr(rc, "EXACT_WORK", 799)
    assert judge(ARGMAX, {"correct": [0], "wrong": [1]}, data) == (
        2, "argmax margins: exact arithmetic of about 800 word operations, above the 799 a file may use")


# -- interval ends beyond 2^65536 prove nothing (Sec. 5): exit 1, never a crash -------------------------------------

def huge(**extra) -> dict:
    """A logit in [-30000, 30000]: the softmax weight is in [e^-60000, e^60000], Z in [0, e^60000] (E in [0, 1]),
    and yhat = -Z in [-e^60000, 0]: a lower end beyond 2^65536, the upper end 0."""
    return layer([["0", "1"]], ["-1"], W_K=[[["1"]]], W_Q=[[[["-30000", "30000"]]]], **extra)


def test_a_score_whose_lower_end_is_unknown_beats_nothing():
    assert judge(ARGMAX, {"correct": [0], "wrong": []}, huge(classes=[1])) == (
        1, "example 0: yhat_c > yhat_j for every j != c = 1 not shown")
    assert judge(ARGMAX, {"correct": [], "wrong": [0]}, huge(classes=[0]))[0] == 1


def test_a_residual_whose_upper_end_is_unknown_proves_no_bound():
    assert judge(RESIDUAL, {"relation": "<=", "tol": "1"}, huge(labels=[["0"]])) == (
        1, "max |yhat - y| is enclosed in [0, inf]: <= 1 not shown")
    assert judge(RESIDUAL, {"relation": ">", "tol": "0"}, huge(labels=[["0"]]))[0] == 1


# -- 4.4a readout residual ----------------------------------------------------------------------------------------

# yhat = x, y = x - 1: the residual is exactly 1 on both examples
OFF_BY_ONE = layer(["1", "2"], ["1"], labels=[["0"], ["1"]])


@pytest.mark.parametrize("rel, tol, ok", [("<=", "1", 0), ("<=", "999999/1000000", 1), (">", "999999/1000000", 0),
                                          (">", "1", 1)])
def test_a_residual_of_exactly_tol(rel, tol, ok):
    code, line = judge(RESIDUAL, {"relation": rel, "tol": tol}, OFF_BY_ONE)
    assert code == ok, line
    if ok == 0:
        assert line == (f"mha-readout-residual: max_t,j |yhat^(t)_j - y^(t)_j| {rel} {rc.show(rc.number(tol))} for "
                        f"the given W_K, W_Q, W_V, W_O, W_D{TAIL} (T = 2, Eqs. 1-8): Z (intervals, 128 bits)")
    else:
        assert line == f"max |yhat - y| is enclosed in [1, 1]: {rel} {rc.show(rc.number(tol))} not shown"


def test_a_residual_on_both_paths(path):
    for rel, tol, ok in (("<=", "2", 0), ("<=", "1/2", 1), (">", "1/2", 0), (">", "2", 1)):
        code, line = judge(RESIDUAL, {"relation": rel, "tol": tol}, OFF_BY_ONE)
        assert code == ok, (rel, tol, line)
        assert ok or line.endswith(f": {how(path)}"), line


def test_a_zero_residual_with_tol_zero():
    exact = layer(["1", "2"], ["1"], labels=[["1"], ["2"]])
    assert judge(RESIDUAL, {"relation": "<=", "tol": "0"}, exact)[0] == 0
    assert judge(RESIDUAL, {"relation": ">", "tol": "0"}, exact)[0] == 1


@pytest.mark.parametrize("rel, tol, line", [
    ("<=", "-1", 'relation must be "<=" or ">", and tol >= 0'),
    ("<", "1", 'relation must be "<=" or ">", and tol >= 0'),
    (">=", "0", 'relation must be "<=" or ">", and tol >= 0'),
    ("<=", "x", "tol: 'x' is not \"p/q\" or a decimal within 800 digits and exponent 400"),
])
def test_ill_formed_residual_claims(rel, tol, line):
    assert judge(RESIDUAL, {"relation": rel, "tol": tol}, OFF_BY_ONE) == (2, line)


def test_a_base64_label_beyond_2_to_the_400_is_not_provable_on_the_float_path(monkeypatch):
    """A base64 array is not range-checked when read (any finite binary64): the float path refuses 2^401 (exit 1)."""
    monkeypatch.setattr(rc, "MP_WORK", -1)
    raw = struct.pack("<2d", 2.0**401, 1.0)
    data = dict(OFF_BY_ONE, labels={"float64": base64.b64encode(raw).decode()})
    assert judge(RESIDUAL, {"relation": "<=", "tol": "1e200"}, data) == (
        1, "an operand of the float path is infinite or beyond 2^400")
    assert judge(RESIDUAL, {"relation": ">", "tol": "1"}, data)[0] == 1


# -- 4.4 memorization and 4.3 feature rank -----------------------------------------------------------------------

def test_a_memorization_claim_of_exactly_zero_residual():
    data = layer(["2"], ["1"], labels=[["2"]], rows=[0], cols=[0])
    code, line = judge("mha-memorization", {"rank_at_least": 1, "max_abs_residual": ["0", "0"]}, data)
    assert code == 0 and line.endswith("have max |yhat - y| in [0, 0]"), line
    assert judge("mha-memorization", {"rank_at_least": 1, "max_abs_residual": ["0", "1/2"]},
                 dict(data, labels=[["3"]]))[0] == 1


@pytest.mark.parametrize("bias", [False, True])
def test_the_feature_rank_statement_names_the_query_bias(bias, path):
    data = {k: v for k, v in layer(["2"], ["1"]).items() if k not in rc.READOUT_KEYS}
    data.update(rows=[0], cols=[0], **({"b_Q": [["1"]]} if bias else {}))
    code, line = judge("mha-feature-rank", {"rank_at_least": 1}, data)
    assert code == 0, line
    assert (f"of Mahdavi et al.'s Eq. (7) on these contexts, queries and key/query weights"
            f"{' (query bias b_Q)' if bias else ''}, at every point of their intervals: ") in line, line


def test_a_minor_with_rows_of_scale_1_and_2_to_the_100_on_the_float_path(monkeypatch):
    """Z = [[1, 1], [2^100, -2^100]] (rows: examples, columns: Z's columns, spec 4.2): R = inv(mid) is exact and
    ||I - R A||_inf is a few ulps for every A in the balls (the test is invariant under row scaling)."""
    monkeypatch.setattr(rc, "MP_WORK", -1)
    s = str(2**100)
    data = {"T": 2, "n": 1, "d": 2, "H": 1, "d_h": 1, "shared": False, "contexts": [[["1", "1"]], [[s, "-" + s]]],
            "queries": [["1", "1"]] * 2, "W_K": [[["0"], ["0"]]], "W_Q": [[["1"], ["1"]]], "rows": [0, 1],
            "cols": [0, 1]}
    code, line = judge("mha-feature-rank", {"rank_at_least": 2}, data)
    assert code == 0 and "(float64, a priori bounds)" in line, line


# -- Sec. 5: the path, at the limits of work and memory -----------------------------------------------------------

def spec_work(T, n, d, H, dh, dv, do, k=0):
    """Sec. 5's W, per-example contexts, no b_Q, with the readout's term (4.4a/4.4b)."""
    return T * H * (d * dh + n * dh + 2 * n * d) + H * d * dh * T + k ** 3 + (T * H * d + 2 * H * d * dv + T * d) * do


def spec_memory(T, n, d, H, dh, dv, do, k=0):
    return 8 * (12 * T * dh + 8 * T * n + 4 * T * d + 3 * H * d * dh + 4 * T * n * d + 6 * k * k
                + 2 * T * H * d + 3 * H * d * dv + 2 * T * do)


def test_intervals_up_to_the_work_limit_then_floats(monkeypatch):
    W = spec_work(T=2, n=1, d=1, H=1, dh=1, dv=1, do=1)
    assert W == 16
    claim = {"relation": "<=", "tol": "2"}
    monkeypatch.setattr(rc, "MP_WORK", W)
    assert judge(RESIDUAL, claim, OFF_BY_ONE)[1].endswith(": Z (intervals, 128 bits)")
    monkeypatch.setattr(rc, "MP_WORK", W - 1)
    assert judge(RESIDUAL, claim, OFF_BY_ONE)[1].endswith(": float64 balls, a priori bounds")


def test_the_float_path_up_to_its_memory_estimate(monkeypatch):
    M = spec_memory(T=2, n=1, d=1, H=1, dh=1, dv=1, do=1)
    monkeypatch.setattr(rc, "MP_WORK", -1)
    monkeypatch.setattr(rc, "MEMORY", M)
    assert judge(RESIDUAL, {"relation": "<=", "tol": "2"}, OFF_BY_ONE)[0] == 0
    monkeypatch.setattr(rc, "MEMORY", M - 1)
    assert judge(RESIDUAL, {"relation": "<=", "tol": "2"}, OFF_BY_ONE) == (
        2, "the float path would need about 0 MiB (at most 0)")


def test_interval_entries_above_the_work_limit_are_refused(monkeypatch):
    monkeypatch.setattr(rc, "MP_WORK", -1)
    data = dict(OFF_BY_ONE, W_D=[[["1", "1"]]])
    assert judge(RESIDUAL, {"relation": "<=", "tol": "2"}, data) == (
        2, "interval entries (W_D) are checked on the interval path only, up to work -1; this certificate's is 16")
    monkeypatch.undo()
    assert judge(RESIDUAL, {"relation": "<=", "tol": "1"}, data)[0] == 0


# -- the float readout's enclosures, in a summation order where its roundings matter ------------------------------

def _float_o(d: int, W_V, W_O, W_D) -> dict:
    data = {"T": 1, "n": 1, "d": d, "H": 1, "d_h": 1, "shared": False, "contexts": [[["0"] * d]],
            "queries": [["0"] * d], "W_K": [[["0"]] * d], "W_Q": [[["0"]] * d], "d_v": 1, "d_out": 1,
            "W_V": W_V, "W_O": W_O, "W_D": W_D, "skip": False, "labels": [["0"]]}
    return rc.mha_data(data, readout=True, minor=False)


def _exact_yhat(o, z) -> Fraction:
    WV, WO, WD = (o[k].fractions() for k in ("W_V", "W_O", "W_D"))
    d = o["d"]
    return sum((Fraction(z[j]) * WV[j] * WO[i] * WD[i] for j in range(d) for i in range(d)), Fraction(0))


def _assert_contains(ball, exact):
    (ym, yr) = ball
    assert abs(Fraction(float(ym[0, 0])) - exact) <= Fraction(float(yr[0, 0])), (float(ym[0, 0]), float(exact))


@pytest.mark.parametrize("order", ["sequential", "reversed", "pairwise"])
def test_the_float_readout_encloses_every_point_of_z_s_balls(order, monkeypatch):
    """yhat = Z W_V W_O W_D for every Z in the ball 0 +/- 1: the corners +/-1 give +/-1, so the radius is >= 1."""
    rc._numpy()
    monkeypatch.setattr(rc, "_matmul", lambda a, b: ordered_matmul(a, b, order))
    o = _float_o(1, [[["1"]]], [["1"]], [["1"]])
    Z = {0: (np.zeros((1, 1)), np.ones((1, 1)))}
    for z in (-1, 1):
        _assert_contains(rc.yhat_float(o, Z), _exact_yhat(o, [z]))


@pytest.mark.parametrize("order", ["sequential", "reversed", "pairwise"])
def test_the_float_readout_encloses_a_cancelling_w_o_w_d(order, monkeypatch):
    """W_O W_D = 1 + (1 + 2^-52)(-(1 - 2^-52)) = 2^-104 exactly; without a fused multiply-add the second product
    rounds to -1 and the float sum is 0: the readout's ball must still hold yhat = 2^-104 (Z = [1, 0])."""
    rc._numpy()
    monkeypatch.setattr(rc, "_matmul", lambda a, b: ordered_matmul(a, b, order))
    a, b = str(Fraction(1 + 2.0**-52)), str(-Fraction(1 - 2.0**-52))
    o = _float_o(2, [[["1"], ["0"]]], [["1", a]], [["1"], [b]])
    exact = _exact_yhat(o, [1, 0])
    assert exact == Fraction(1, 2**104)
    _assert_contains(rc.yhat_float(o, {0: (np.array([[1.0, 0.0]]), np.zeros((1, 2)))}), exact)
