"""The re-checker's float path (docs/CERTIFICATES.md Sec. 6) against exact
rationals and mpmath, with every product and row sum computed in each legal
summation order (tests/summation_orders.py: the bounds claim to hold for ANY
order), on adversarial inputs: cancellation, absorption, huge and tiny
magnitudes, subnormals, saturated and tied softmax rows, minors at the edge of
the test ||I - R X|| < 1.  Tightness checks beside the enclosures: a bound
loosened far beyond its derivation fails too.
"""
from __future__ import annotations

import copy
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from summation_orders import ALL_ORDERS, ordered_matmul

from verifier import recheck as rc

CORPUS = Path(__file__).resolve().parent / "recheck_corpus"
U = 2.0**-53


@pytest.fixture(autouse=True)
def _numpy_loaded():
    rc._numpy()


@pytest.fixture(params=ALL_ORDERS)
def order(request, monkeypatch):
    monkeypatch.setattr(rc, "_matmul", lambda a, b: ordered_matmul(a, b, request.param))
    return request.param


def exact_matmul(A, B):
    A, B = np.asarray(A), np.asarray(B)
    return [[sum((Fraction(A[i, l]) * Fraction(B[l, j]) for l in range(A.shape[1])), Fraction(0))
             for j in range(B.shape[1])] for i in range(A.shape[0])]


def assert_encloses(mid, rad, exact, slack=0):
    for i, row in enumerate(exact):
        for j, v in enumerate(row):
            assert abs(Fraction(float(mid[i, j])) - v) <= Fraction(float(rad[i, j])), (i, j, float(mid[i, j]),
                                                                                         float(v), rad[i, j])


ABSORB = np.array([[1.0] + [0.99 * U] * 63, [2.0**-1060] * 64, [2.0**400] + [-2.0**400] + [1.0] * 62])


def test_up_bounds_exactly():
    xs = np.array([0.0, 2.0**-1074, 2.0**-1022, 1.0 - U, 1.0, 1.0 + 2 * U, 3.0, 2.0**400])
    for F, A in ((Fraction(1), rc.SLACK), (1 / (1 - rc.U), rc.SLACK), (rc.gamma(7), Fraction(0)),
                 (Fraction(1), 3 * rc.UL)):
        ys = rc.up(xs, F, A)
        for x, y in zip(xs, ys):
            assert Fraction(float(y)) >= F * Fraction(float(x)) + A
    assert float(rc.up(np.array([1.0]), Fraction(1))[0]) <= 1 + 8 * U  # tight: a few ulps


def test_fl_up_and_down_are_the_nearest_floats():
    for q in (Fraction(1, 3), Fraction(-1, 3), Fraction(1), Fraction(2**60 + 1), Fraction(1, 10**400)):
        a, b = rc.fl_down(q), rc.fl_up(q)
        assert Fraction(a) <= q <= Fraction(b) and b in (a, math.nextafter(a, math.inf))


def test_gamma():
    assert rc.gamma(1) == rc.U / (1 - rc.U) and rc.gamma(0) == 0


def test_row_sums_bound_the_exact_sums_in_every_order(order):
    M = np.abs(ABSORB)
    up = rc.rowsum_up(M)
    for i in range(M.shape[0]):
        exact = sum((Fraction(x) for x in M[i]), Fraction(0))
        assert Fraction(float(up[i])) >= exact
        assert Fraction(float(up[i])) <= exact * (1 + Fraction(1, 2**40)) + rc.SLACK * 2  # tight


def test_products_of_nonnegative_arrays_bound_in_every_order(order):
    P = np.abs(ABSORB[:, :8])
    Q = np.abs(np.vstack([np.ones(3), np.full(3, 0.99 * U), np.full(3, 2.0**-1070)] + [np.full(3, 0.7)] * 5))
    B = rc.mul_up(P, Q)
    for i, row in enumerate(exact_matmul(P, Q)):
        for j, v in enumerate(row):
            assert Fraction(float(B[i, j])) >= v
            assert Fraction(float(B[i, j])) <= v * (1 + Fraction(1, 2**40)) + 2**-499


@pytest.mark.parametrize("case", ["cancel", "absorb", "balls", "tiny"])
def test_ball_products_enclose_every_point_in_every_order(case, order):
    rng = np.random.default_rng(3)
    Am = ABSORB[:, :6] if case == "absorb" else rng.standard_normal((3, 6)) * (1e-300 if case == "tiny" else 1)
    Bm = rng.standard_normal((6, 2))
    if case == "cancel":
        Am[0] = [1e8, 1.0, -1e8, 3.0, -3.0, 2.0**-30]
        Bm[:, 0] = [1.0, 0.5, 1.0, 2.0, 2.0, 1.0]
    Ar = np.abs(rng.standard_normal(Am.shape)) * 1e-9 if case == "balls" else None
    Br = np.abs(rng.standard_normal(Bm.shape)) * 1e-9 if case == "balls" else None
    C, R = rc.ball_mul(Am, Ar, Bm, Br)
    points = [(Am, Bm)]
    if case == "balls":
        points += [(Am + s * Ar, Bm + t * Br) for s in (-1, 1) for t in (-1, 1)]
    for X, Y in points:
        assert_encloses(C, R, exact_matmul(X, Y))


def _full_mantissas(rng, shape, spread=0):
    x = rng.integers(2**52, 2**53, shape).astype(np.float64) * 2.0**-52
    return x * np.where(rng.random(shape) < 0.5, -1.0, 1.0) * 2.0 ** rng.integers(-spread, spread + 1, shape)


@pytest.mark.parametrize("k", [1, 3, 64, 256])
def test_accurate_products_enclose_the_exact_product_in_every_order(k, order):
    """Full-width mantissas make every slice carry b bits: a wrong b (slice products that round) shows."""
    if order == "fma" and k > 64:
        pytest.skip("the fma order is emulated in rationals")
    rng = np.random.default_rng(k)
    A, B = _full_mantissas(rng, (3, k), 20), _full_mantissas(rng, (k, 2), 20)
    if k >= 3:
        A[0, :3] = [1e8, 1.0, -1e8]
        B[:3, 0] = [1.0, 0.5, 1.0]
    mid, rad = rc.accurate_mul(A, B)
    exact = exact_matmul(A, B)
    assert_encloses(mid, rad, exact)
    b = (53 - (k - 1).bit_length()) // 2
    for i, row in enumerate(exact):  # accurate: a few ulps of the result, plus what three slices drop
        for j, v in enumerate(row):
            dropped = (Fraction(np.max(np.abs(A[i]))) * Fraction(np.sum(np.abs(B[:, j])))
                       + Fraction(np.sum(np.abs(A[i]))) * Fraction(np.max(np.abs(B[:, j])))) * 2 / 2 ** (3 * b - 1)
            assert Fraction(float(rad[i, j])) <= 4 * rc.U * abs(v) + dropped + 2**-490


def test_accurate_products_of_tiny_rows_fall_back_to_ball_products():
    A = np.array([[2.0**-420, 1.0], [1.0, 1.0]])
    B = np.array([[1.0], [2.0]])
    mid, rad = rc.accurate_mul(A, B)
    assert_encloses(mid, rad, exact_matmul(A, B))
    np.testing.assert_array_equal(rc.accurate_mul(A, B)[0], rc.ball_mul(A, None, B, None)[0])


def test_slices_are_exact_and_truncate_towards_zero():
    rng = np.random.default_rng(0)
    A = _full_mantissas(rng, (4, 16), 30)
    e = np.frexp(np.max(np.abs(A), axis=1))[1][:, None]
    parts, R = rc._slices(A, e, 21)
    for i in range(4):
        for j in range(16):
            total = sum(Fraction(p[i, j]) for p in parts) + Fraction(R[i, j])
            assert total == Fraction(A[i, j])
            assert abs(Fraction(A[i, j]) - Fraction(R[i, j])) <= abs(Fraction(A[i, j]))
            for s, p in enumerate(parts, 1):
                unit = Fraction(2) ** (int(e[i, 0]) - 21 * s)
                assert (Fraction(p[i, j]) / unit).denominator == 1 and abs(Fraction(p[i, j]) / unit) < 2**21


EXP_POINTS = [0.0, -0.0, 1.0, 0.5, -0.35, -1e-300, -2.0**-1074, -1.0, -10.5, -100.25, -689.99, -690.0, -690.5,
              -690.1, -690.0001, -700.0, -745.5, -1e4, -1e300, -2.0**400, 0.34657359027997264, 0.3465735902799727, -0.34657359027997264]


def test_exp_bounds_enclose_and_are_tight():
    x = np.array(EXP_POINTS + list(np.random.default_rng(1).uniform(-700, 1, 200)))
    lo, hi = rc.exp_bounds(x)
    with mpmath.workdps(60):
        for xi, l, h in zip(x, lo, hi):
            e = mpmath.exp(mpmath.mpf(float(xi)))
            assert mpmath.mpf(float(l)) <= e <= mpmath.mpf(float(h)), xi
            if xi >= -690:
                assert (mpmath.mpf(float(h)) - mpmath.mpf(float(l))) / e < 1e-13, xi
            else:
                assert float(l) == 0.0 and float(h) <= 2.0**-995


def test_exp_refuses_an_argument_above_one():
    with pytest.raises(rc.Rejected):
        rc.exp_bounds(np.array([1.5]))
    with pytest.raises(rc.Rejected):
        rc.exp_bounds(np.array([np.nan]))


def test_exp_constants_recomputed_independently():
    """Spec 6.4's constants from its own formulas, in mpmath at 60 digits (not recheck's code)."""
    rc._EXP.clear()
    C = rc._exp_constants()
    assert Fraction(rc.LN2_HI) == Fraction(372130559, 2**29)
    with mpmath.workdps(60):
        ln2 = mpmath.log(2)
        assert C["lo"] == float(ln2 - mpmath.mpf(rc.LN2_HI))
        assert abs(ln2 - mpmath.mpf(rc.LN2_HI) - mpmath.mpf(C["lo"])) < mpmath.mpf(2) ** -80
        u = mpmath.mpf(2) ** -53
        g28 = 28 * u / (1 - 28 * u)
        e = mpmath.exp(mpmath.mpf("0.35"))
        eps = (g28 * (1 + u) + u + mpmath.mpf("0.35") ** 15 / math.factorial(15)) * e
        rho1 = eps * e
        er = mpmath.mpf(2) ** -52
        rho = max(mpmath.exp(er) / (1 - rho1) - 1, 1 - mpmath.exp(-er) / (1 + rho1))
        up, down = (1 + rho) / (1 - u), (1 - rho) / (1 + u)
        assert Fraction(C["upf"]) >= Fraction(mpmath.nstr(up, 55)) > Fraction(math.nextafter(C["upf"], 0))
        assert Fraction(C["dnf"]) <= Fraction(mpmath.nstr(down, 55)) < Fraction(math.nextafter(C["dnf"], 2))
    assert C["coeffs"] == [float(Fraction(1, math.factorial(j))) for j in range(15)]
    assert 1 < C["upf"] < 1 + 2.0**-40 and 1 - 2.0**-40 < C["dnf"] < 1


def _softmax_exact(a):
    with mpmath.workdps(50):
        m = max(a)
        ex = [mpmath.exp(mpmath.mpf(float(x)) - mpmath.mpf(float(m))) for x in a]
        tot = sum(ex)
        return [x / tot for x in ex]


@pytest.mark.parametrize("case", ["random", "saturated", "ties", "one", "wide", "tiny"])
def test_softmax_balls_enclose_every_point(case, order):
    rng = np.random.default_rng(5)
    am = {"random": rng.standard_normal((4, 5)), "saturated": np.array([[0.0, -800.0, -30.0, 1000.0, 999.0]]),
          "ties": np.zeros((2, 4)), "one": np.array([[3.0], [-2.0]]), "wide": rng.standard_normal((2, 3)),
          "tiny": np.array([[1e-300, -1e-300, 0.0]])}[case]
    ar = np.full(am.shape, {"wide": 0.2499}.get(case, 1e-12))
    mid, rad = rc.softmax_ball(am, ar)
    for i in range(am.shape[0]):
        for signs in (np.zeros(am.shape[1]), np.ones(am.shape[1]), -np.ones(am.shape[1]),
                      np.resize([1.0, -1.0], am.shape[1])):
            a = am[i] + signs * ar[i]
            for j, p in enumerate(_softmax_exact(a)):
                assert abs(mpmath.mpf(float(mid[i, j])) - p) <= mpmath.mpf(float(rad[i, j])), (case, i, j)
    if case != "wide":
        assert float(np.max(rad)) < 1e-9  # tight: about the logits' own radius


def test_softmax_refuses_logits_wider_than_a_half():
    with pytest.raises(rc.Rejected):
        rc.softmax_ball(np.zeros((1, 3)), np.full((1, 3), 0.26))


@pytest.mark.parametrize("rad, ok", [(1 - 2.0**-30, True), (1.0, False), (0.0, True)])
def test_nonsingularity_at_the_edge(rad, ok, order):
    """diag(1, 2) +/- rad on the first entry: R = diag(1, 1/2) exactly, sup ||I - R X||_inf = rad."""
    Am = np.array([[1.0, 0.0], [0.0, 2.0]])
    Ar = np.array([[rad, 0.0], [0.0, 0.0]])
    if ok:
        assert re.fullmatch(r"\|\|I - R A\|\|_inf <= \S+ < 1 \(float64, a priori bounds\)", rc.nonsingular_float(Am, Ar))
    else:
        with pytest.raises(rc.Rejected):
            rc.nonsingular_float(Am, Ar)


def test_nonsingularity_refuses_singular_and_nearly_singular_minors(order):
    for A in (np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]]),
              np.zeros((3, 3)), np.array([[2.0**400, 0.0], [0.0, 1.0]]) * 2):
        with pytest.raises(rc.Rejected):
            rc.nonsingular_float(A, np.zeros_like(A))
    # the rounding of R A matters: off-diagonal 1 +- u stays provable, a ball of radius 1/2 per entry does not
    A = np.array([[3.0, 1.0], [1.0, 3.0]])
    assert "< 1" in rc.nonsingular_float(A, np.zeros_like(A))
    with pytest.raises(rc.Rejected):
        rc.nonsingular_float(A, np.full((2, 2), 1.0))


def test_in_range():
    rc.in_range(np.array([2.0**400, -1.0]), None, np.zeros((0, 3)))
    for bad in (np.array([np.inf]), np.array([np.nan]), np.array([2.0**401])):
        with pytest.raises(rc.Rejected):
            rc.in_range(bad)


def _mha(name):
    return rc.mha_data(json.loads((CORPUS / f"{name}.json").read_text())["data"], readout=name.startswith(
        ("check.theorem1", "check.appendixC", "check.step2")))


@pytest.mark.parametrize("name", ["check.theorem1", "check.appendixC", "check.proposition1",
                                  "proposition5.zero_sum.attained_c0"])
def test_float_features_and_residuals_enclose_the_interval_ones(name):
    """Z (all heads and coordinates) and max |yhat - y| from both paths overlap entry by entry: each is an
    enclosure of the same numbers (a wrong head, coordinate or context in one of them shows)."""
    o = _mha(name)
    with rc.precision(128):
        Zi = rc.features_intervals(o, everything=True)
        Zf = rc.features_float(o, everything=True)
        for h in range(o["H"]):
            for t in range(o["T"]):
                for j in range(o["d"]):
                    x, (m, r) = Zi[h][t][j], (Zf[h][0][t, j], Zf[h][1][t, j])
                    assert rc.lower(x) <= Fraction(float(m)) + Fraction(float(r))
                    assert rc.upper(x) >= Fraction(float(m)) - Fraction(float(r))
                    assert float(r) < 1e-12
        if "d_v" in o:
            lo_i, hi_i = rc.residual_intervals(o, Zi)
            lo_f, hi_f = rc.residual_float(o, Zf)
            assert lo_f <= hi_i and lo_i <= hi_f and hi_f < Fraction(1, 10**9)


def test_per_example_and_shared_contexts_agree_on_the_float_path():
    """The same data written with one shared context and as T copies give the same Z (both layouts)."""
    o = _mha("check.proposition1")
    shared = rc.features_float(o, everything=True)
    copies = dict(o)
    E = o["E"].fractions()
    copies["shared"] = False
    copies["E"] = rc.Exact((o["T"], o["n"], o["d"]), values=E * o["T"])
    per = rc.features_float(copies, everything=True)
    for h in range(o["H"]):
        m1, r1 = shared[h]
        m2, r2 = per[h]
        assert np.all(np.abs(m1 - m2) <= r1 + r2)


def test_the_float_path_refuses_values_that_are_not_binary64(monkeypatch):
    c = json.loads((CORPUS / "check.proposition1.json").read_text())
    c["data"]["queries"][0][0] = "1/3"
    monkeypatch.setattr(rc, "MP_WORK", -1)
    got, line = rc.check_certificate(_redigest(c))
    assert got == 1 and "binary64" in line


def test_the_float_path_refuses_a_memory_estimate_above_its_budget(monkeypatch):
    monkeypatch.setattr(rc, "MP_WORK", -1)
    monkeypatch.setattr(rc, "MEMORY", 1000)
    c = json.loads((CORPUS / "check.proposition1.json").read_text())
    assert rc.check_certificate(_redigest(copy.deepcopy(c)))[0] == 2


def _redigest(c):
    c["sha256"] = rc.digest(c)
    return c


# -- the IEEE probe against emulated arithmetics, each wrong in one way ----------------------------------------

def _round(q: Fraction, rule: str) -> float:
    f = float(q)  # to nearest, ties to even (subnormals included)
    if Fraction(f) == q or rule in ("nearest-even", "flush"):
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
    tie = Fraction(up) - q == q - Fraction(down)  # nearest-away
    return (up if q > 0 else down) if tie else f


class Emulated(np.ndarray):
    """float64 arrays whose +, -, * and @ round by ``rule`` (exact rationals, then rounded)."""

    rule = "nearest-even"

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x).view(np.ndarray) if isinstance(x, np.ndarray) else x for x in inputs]
        ops = {np.add: lambda a, b: a + b, np.subtract: lambda a, b: a - b, np.multiply: lambda a, b: a * b}
        if method == "__call__" and ufunc in ops:
            a, b = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in plain))
            out = np.empty(a.shape)
            for idx in np.ndindex(*a.shape):
                r = _round(ops[ufunc](Fraction(float(a[idx])), Fraction(float(b[idx]))), self.rule)
                out[idx] = 0.0 if self.rule == "flush" and abs(r) < 2.0**-1022 else r
            return self._wrap(out)
        if method == "__call__" and ufunc is np.negative:
            return self._wrap(-np.asarray(plain[0]))
        if method == "__call__" and ufunc is np.matmul:
            A, B = (np.asarray(x, dtype=np.float64) for x in plain)
            out = np.empty(A.shape[:-1] + B.shape[-1:])
            for i, j in np.ndindex(*out.shape):
                r = _round(sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(A[i], B[:, j])),
                               Fraction(0)), self.rule)
                out[i, j] = 0.0 if self.rule == "flush" and abs(r) < 2.0**-1022 else r
            return self._wrap(out)
        return getattr(ufunc, method)(*plain, **kwargs)

    def _wrap(self, out):
        view = np.asarray(out, dtype=np.float64).view(type(self))
        view.rule = self.rule
        return view

    def __array_finalize__(self, obj):
        self.rule = getattr(obj, "rule", "nearest-even")


class EmulatedNumpy:
    def __init__(self, rule):
        self.rule = rule

    def array(self, a):
        view = np.array(a, dtype=np.float64).view(Emulated)
        view.rule = self.rule
        return view


@pytest.mark.parametrize("rule", ["nearest-even", "toward-zero", "upward", "downward", "nearest-away",
                                  "negatives-truncated", "flush"])
def test_the_ieee_probe_refuses_every_other_rounding(rule):
    if rule == "nearest-even":
        assert rc._check_ieee(EmulatedNumpy(rule)) is None
        assert rc._check_ieee(np) is None
    else:
        with pytest.raises(rc.Rejected, match="not IEEE"):
            rc._check_ieee(EmulatedNumpy(rule))


def test_the_emulation_rounds_as_named():
    u = Fraction(1, 2**53)
    assert _round(1 + u, "nearest-even") == 1.0 and _round(1 + u, "nearest-away") == 1.0 + 2.0**-52
    assert _round(1 + u, "upward") == 1.0 + 2.0**-52 and _round(1 + 3 * u, "downward") == 1.0 + 2.0**-52
    assert _round(-(1 + u), "toward-zero") == -1.0 and _round(-(1 + 3 * u), "negatives-truncated") == -(1 + 2.0**-52)


# -- pinned helpers: every operand range-checked, the estimates as the spec writes them -------------------------

@pytest.mark.parametrize("which", range(4))
def test_ball_products_check_every_operand_s_range(which):
    ops = [np.ones((2, 3)), np.zeros((2, 3)), np.ones((3, 2)), np.zeros((3, 2))]
    ops[which] = ops[which] + 2.0**401
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.ball_mul(*ops)


def test_the_nonsingularity_test_checks_its_operands_and_its_inverse():
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.nonsingular_float(np.eye(2) * 2.0**401, np.zeros((2, 2)))
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.nonsingular_float(np.eye(2), np.full((2, 2), 2.0**401))
    with pytest.raises(rc.Rejected, match="2\\^400"):
        rc.nonsingular_float(np.eye(2) * 2.0**-410, np.zeros((2, 2)))  # R = 2^410 I


def test_batched_ball_products_bound_like_their_slices():
    """A stack (T, n, d) @ (T, d, 1) bounds each slice as the 2-D product does (inner dimension d, not n)."""
    rng = np.random.default_rng(2)
    E, u, r = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 8, 1)), np.abs(rng.standard_normal((2, 8, 1)))
    m3, r3 = rc.ball_mul(E, None, u, r)
    for t in range(2):
        m2, r2 = rc.ball_mul(E[t], None, u[t], r[t])
        np.testing.assert_array_equal(m3[t], m2)
        np.testing.assert_array_equal(r3[t], r2)
    P, Q = np.abs(E), np.abs(u)
    for t in range(2):
        np.testing.assert_array_equal(rc.mul_up(P, Q)[t], rc.mul_up(P[t], Q[t]))


def _o(**kw):
    o = {"T": 7, "n": 3, "d": 5, "H": 2, "d_h": 4, "rows": list(range(6)), "shared": False, "d_v": 3, "d_out": 2}
    o.update(kw)
    return o


def test_the_work_and_memory_estimates_are_the_spec_s():
    for o in (_o(), _o(shared=True), _o(T=11, n=2, d=9, H=3, d_h=1, rows=[0, 1], d_v=1, d_out=1)):
        T, n, d, H, dh, k, dv, do = (o[x] for x in ("T", "n", "d", "H", "d_h", "rows", "d_v", "d_out"))
        k = len(k)
        keys = H * d * dh * (n if o["shared"] else T)  # E W_K^h per head, or W_K^h p per example (finding 33)
        assert rc._work(o, False) == T * H * (d * dh + n * dh + 2 * n * d) + keys + k ** 3
        assert rc._work(o, True) == T * H * (d * dh + n * dh + 2 * n * d) + keys + k ** 3 + (T * H * d + 2 * H * d * dv
                                                                                              + T * d) * do
        per = 0 if o["shared"] else 4 * T * n * d
        base = 12 * T * dh + 8 * T * n + 4 * T * d + 3 * H * d * dh + per + 6 * k * k
        assert rc._memory(o, False) == 8 * base
        assert rc._memory(o, True) == 8 * (base + 2 * T * H * d + 3 * H * d * dv + 2 * T * do)


def test_base64_arrays_take_the_float_path(monkeypatch):
    """The corpus certificates with every array in base64 (exactly their binary64 values): accepted on both paths."""
    import base64

    for name in ("check.proposition1", "check.theorem1"):
        c = json.loads((CORPUS / f"{name}.json").read_text())
        for key in ("contexts", "queries", "W_K", "W_Q", "labels", "W_V", "W_O", "W_D"):
            if key in c["data"]:
                a = np.array([[float(rc.number(x)) for x in np.ravel(np.array(c["data"][key], dtype=object))]])
                c["data"][key] = {"float64": base64.b64encode(a.astype("<f8").tobytes()).decode()}
        c["claim"].update({"max_abs_residual": ["0", "1e-6"]} if "max_abs_residual" in c["claim"] else {})
        c = _redigest(c)
        assert rc.check_certificate(copy.deepcopy(c))[0] == 0
        monkeypatch.setattr(rc, "MP_WORK", -1)
        got, line = rc.check_certificate(copy.deepcopy(c))
        assert got == 0 and "float64" in line, line
        monkeypatch.undo()


def test_exact_rank_normalizes_its_pivots():
    assert rc.exact_rank([[2, 0], [1, 0]]) == 1
    assert rc.exact_rank([[0, 3, 6], [0, 1, 2], [5, 0, 1]]) == 2
    assert rc.exact_rank([[1, 2], [2, 4], [3, 7]]) == 2
    assert rc.exact_rank([[0, 0]]) == 0 and rc.exact_rank([]) == 0
    assert rc.exact_rank([[Fraction(1, 3), 1], [1, 3]]) == 1


def test_below_is_strict():
    with rc.precision(128):
        assert rc.below(mpmath.iv.mpf(1), Fraction(2)) and not rc.below(mpmath.iv.mpf(1), Fraction(1))
        assert not rc.below(mpmath.iv.mpf([0, 1]), Fraction(1)) and rc.below(mpmath.iv.mpf([0, 1]), Fraction(3, 2))
        assert not rc.below(mpmath.iv.mpf(1) / 0, Fraction(10**9))
        assert rc.lower(mpmath.iv.mpf([-1, 2])) == -1 and rc.upper(mpmath.iv.mpf([-1, 2])) == 2


@pytest.mark.parametrize("G, pd", [([[2, 1], [1, 2]], True), ([[1, 2], [2, 1]], False), ([[1, 1], [1, 1]], False),
                                   ([[4, 2, 2], [2, 5, 3], [2, 3, 6]], True), ([[4, 2, 2], [2, 1, 3], [2, 3, 6]], False),
                                   ([[1, 0, 0], [0, 1, 2], [0, 2, 1]], False), ([[1, 0, 1], [0, 1, 1], [1, 1, 2]], False),
                                   ([[1, 0, 1], [0, 1, 1], [1, 1, 3]], True), ([[5]], True), ([[0]], False),
                                   ([[3, 1, 1, 1], [1, 3, 1, 1], [1, 1, 3, 1], [1, 1, 1, -0.5]], False)])
def test_positive_definite_by_interval_cholesky(G, pd):
    with rc.precision(128):
        M = [[mpmath.iv.mpf(x) for x in row] for row in G]
        assert rc.positive_definite(M) is pd
        if pd:  # a ball around it that contains an indefinite matrix is refused
            assert not rc.positive_definite([[x + mpmath.iv.mpf([-10, 10]) for x in row] for row in M])


def test_the_minor_is_gathered_rows_by_columns():
    """Column j of the minor is Z's column j (coordinate j mod d of head j // d, spec 4.2), whichever coordinates
    Z was computed on: the minor's own (feature rank) or all of them (memorization; issue 33: there the checker read
    the j-th stated column of a head as that head's coordinate j)."""
    o = {"d": 3, "H": 2, "rows": [2, 0], "cols": [4, 0, 2, 1]}
    assert rc._heads_coords(o, False) == {1: [1], 0: [0, 2, 1]}
    assert rc._minor_where(o, False) == [(1, 0), (0, 0), (0, 1), (0, 2)]  # positions in the computed blocks
    assert rc._heads_coords(o, True) == {0: [0, 1, 2], 1: [0, 1, 2]}
    assert rc._minor_where(o, True) == [(1, 1), (0, 0), (0, 2), (0, 1)]  # the coordinates themselves
