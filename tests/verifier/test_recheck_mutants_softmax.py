"""The re-checker's exp, softmax and feature enclosures (verifier/recheck.py: exp_bounds, softmax_ball,
features_float, features_intervals; docs/CERTIFICATES.md Secs. 5, 6.4, 6.5) on inputs chosen to break what a
changed line would break (the survivors of the mutation run, reports/experiments/mutation/recheck.json).

Ground truth: logits as exact rationals (fractions.Fraction), exp and softmax in mpmath at 60 digits. Every
assertion holds for ANY summation order of the float products (the enclosures are a priori bounds; the only
values compared bit for bit are elementwise IEEE operations, the same on every machine).  Adversarial inputs: a
logit difference whose float subtraction is a tie (an error of u |x|), enclosed logit differences of exactly 1/2,
a reference logit with a wide radius, one-key rows (even an overflowed logit), three-dimensional batches, a query
bias, products whose midpoint is moved inside a valid (wider) enclosure, keys that cancel exactly against a
boxed query, logits near 2^600, and weights beyond 2^400 in a head that the minor does not use.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from test_recheck_exact import b64, cert, judge

from verifier import recheck as rc

U = 2.0**-53


@pytest.fixture(autouse=True)
def _numpy_loaded():
    rc._numpy()


def mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def softmax_exact(a) -> list:
    """softmax of exact logits (Fractions or floats), 60 digits."""
    a = [Fraction(x) for x in a]
    m = max(a)
    with mpmath.workdps(60):
        ex = [mpmath.exp(mp(x - m)) for x in a]
        tot = sum(ex)
        return [x / tot for x in ex]


def assert_in_ball(mid, rad, exact, what=""):
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(float(mid)) - exact) <= mpmath.mpf(float(rad)), (what, float(mid), float(rad),
                                                                               mpmath.nstr(exact, 20))


def corners(am_row, ar_row):
    """The midpoint and the corners that put one logit at an end and the rest at the other (softmax is monotone
    in each logit difference: its extremes over a box are at such corners)."""
    yield am_row
    for j in range(len(am_row)):
        for s in (1.0, -1.0):
            signs = -s * np.ones(len(am_row))
            signs[j] = s
            yield [Fraction(float(m)) + Fraction(float(si)) * Fraction(float(r))
                   for m, si, r in zip(am_row, signs, ar_row)]


def assert_softmax_encloses(am, ar, mid, rad):
    am2, ar2 = am.reshape(-1, am.shape[-1]), ar.reshape(-1, am.shape[-1])
    mid2, rad2 = mid.reshape(am2.shape), rad.reshape(am2.shape)
    for i in range(am2.shape[0]):
        for point in corners(am2[i], ar2[i]):
            for j, p in enumerate(softmax_exact(point)):
                assert_in_ball(mid2[i, j], rad2[i, j], p, (i, j))


# -- softmax_ball (spec 6.5) ------------------------------------------------------------------------------------

def test_softmax_along_the_last_axis_of_a_three_dimensional_batch():
    """softmax_ball works along the LAST axis of any batch (a (2, 3, 4) array here), not along axis 1; each
    row's largest logit has the widest radius (its radius enters every difference of the row)."""
    rng = np.random.default_rng(11)
    am = rng.standard_normal((2, 3, 4)) * 3
    ar = np.where(am == np.max(am, axis=-1, keepdims=True), 1e-6, 1e-12)
    mid, rad = rc.softmax_ball(am, ar)
    assert mid.shape == rad.shape == am.shape
    assert_softmax_encloses(am, ar, mid, rad)
    assert float(np.max(rad)) < 1e-5


def test_exact_logits_with_zero_radii():
    """A radius of 0 (exact logits) is a valid ball: no 0/0 anywhere."""
    am = np.array([[0.5, -1.25, 3.0, 3.0], [-7.0, 0.0, 2.0**-30, -2.0**-30]])
    mid, rad = rc.softmax_ball(am, np.zeros_like(am))
    assert np.all(np.isfinite(mid)) and np.all(np.isfinite(rad))
    assert_softmax_encloses(am, np.zeros_like(am), mid, rad)
    assert float(np.max(rad)) < 1e-13


def test_a_subtraction_tie_far_from_the_reference_costs_u_times_x():
    """x = fl(-256 - 2^-45) = -256 (a tie, rounded to even): the error is 2^-45 = u |x|, the largest the spec's
    term u |x| / (1 - u) must cover.  A term u |x| / 2 leaves e^x's lower end above the exact softmax."""
    am, ar = np.array([[2.0**-45, -256.0]]), np.zeros((1, 2))
    assert Fraction(-256.0) - Fraction(2.0**-45) != Fraction(-256.0 - 2.0**-45)  # the subtraction rounds
    mid, rad = rc.softmax_ball(am, ar)
    assert_softmax_encloses(am, ar, mid, rad)


def test_the_reference_logit_s_radius_counts_once():
    """xr_j = up(u |x_j| / (1 - u) + ar_j + ar_ref) for j != ref and 0 for ref (spec 6.5): a reference logit of
    radius 0.26 and exact others give differences within 0.26 + tiny <= 1/2, decided; counting the reference's
    radius for its own entry too (2 x 0.26) would refuse the row."""
    am, ar = np.array([[0.0, -1.0, -2.0], [5.0, 4.5, 5.0]]), np.array([[0.26, 0.0, 0.0], [0.24, 0.0, 0.25]])
    mid, rad = rc.softmax_ball(am, ar)
    assert_softmax_encloses(am, ar, mid, rad)
    mid, rad = rc.softmax_ball(np.array([[-3.0]]), np.array([[0.3]]))  # one key: softmax is 1 for any logit
    assert_in_ball(mid[0, 0], rad[0, 0], mpmath.mpf(1))


def test_a_one_key_row_is_one_whatever_its_logit():
    """One key: softmax = 1 exactly (the reference entry is 1, spec 6.5), so the ball's radius carries only the
    roundings of the sum and the quotient (7 u; an exp(0) enclosure instead of 1 would add about 60 u), even for
    an overflowed logit, a huge one with a huge radius, or a wide one."""
    am = np.array([[np.inf], [1e300], [-5.0], [0.0]])
    ar = np.array([[0.0], [1e300], [0.49], [0.0]])
    with np.errstate(invalid="ignore"):
        mid, rad = rc.softmax_ball(am, ar)
    for i in range(am.shape[0]):
        assert_in_ball(mid[i, 0], rad[i, 0], mpmath.mpf(1), i)
        assert 0 < float(rad[i, 0]) <= 16 * U, (i, float(rad[i, 0]) / U)


def _xr(a: float) -> float:
    """The enclosure radius of the logit difference x_1 = 0 - 0 for ar = (a, a): spec 6.5's
    up(u |x_1| / (1 - u) + ar_1 + ar_ref), as the checker evaluates it (6.2's up and sum of two bounds)."""
    return float(rc.add_up(rc.up(np.zeros(1), rc.U / (1 - rc.U)), rc.add_up(np.array([a]), np.array([a])))[0])


def test_logit_differences_enclosed_within_exactly_one_half_are_decided():
    """xr <= 1/2 is required (spec 6.5): at xr = 1/2 exactly the row is decided (e^{-t} >= 1 - t and
    e^t <= 1 + 2 t hold at t = 1/2), one float above it is refused."""
    a = 0.25
    while _xr(a) > 0.5:
        a = math.nextafter(a, 0.0)
    assert _xr(a) == 0.5 and _xr(math.nextafter(a, 1.0)) > 0.5
    am, ar = np.zeros((1, 2)), np.full((1, 2), a)
    mid, rad = rc.softmax_ball(am, ar)
    assert_softmax_encloses(am, ar, mid, rad)
    # spec 6.5 at x = 0, xr = 1/2: e^y in [1 - 1/2, 1 + 2/2] (up to exp's and the roundings' relative 2^-40),
    # S in [3/2, 3], p_ref in [1/3, 2/3], p_1 in [1/6, min(1, 4/3)]: the ends of each ball
    ends = [(Fraction(1, 3), Fraction(2, 3)), (Fraction(1, 6), Fraction(1))]
    for j, (lo, hi) in enumerate(ends):
        m, r = Fraction(float(mid[0, j])), Fraction(float(rad[0, j]))
        assert abs(m - r - lo) <= Fraction(1, 2**40) and abs(m + r - hi) <= Fraction(1, 2**40), j
    with pytest.raises(rc.Rejected, match="wider than 1/2"):
        rc.softmax_ball(am, np.full((1, 2), math.nextafter(a, 1.0)))


# -- exp_bounds (spec 6.4) --------------------------------------------------------------------------------------

def _exp_spec(x: float) -> tuple[float, float]:
    """Spec 6.4's evaluation in Python floats (IEEE binary64, round to nearest, one operation at a time, as
    numpy's elementwise operations): k = rint(x / ln 2), r, Horner of the 15 coefficients, times UPF / DNF, 2^k."""
    C = rc._exp_constants()
    k = round(x * 1.4426950408889634)  # round half to even, as numpy's rint
    r = (x - k * rc.LN2_HI) - k * C["lo"]
    p = C["coeffs"][14]
    for j in range(13, -1, -1):
        p = p * r + C["coeffs"][j]
    return math.ldexp(p * C["dnf"], k), math.ldexp(p * C["upf"], k)


# points whose r is within 0.05 of +-ln(2)/2, where the Horner sum's last bit is sensitive (a 16th Horner step,
# r^15 / 14! or about 1.5e-18 relative, moves it at the first five), and a grid of such points
HORNER_POINTS = [-16.320032333438686, -10.048175912454619, -3.83384462182121, -3.116704106855166,
                 -12.137303096232861, -0.34657359027997264, 0.3465735902799726, 0.9, 1.0, 0.0, -689.5]


def test_exp_bounds_follow_the_spec_to_the_bit_and_enclose():
    """exp_bounds is spec 6.4's formula to the last bit (elementwise IEEE operations: no order freedom), and
    its ends enclose e^x (60 digits)."""
    xs = HORNER_POINTS + [k * 0.6931471805599453 + s * 0.34657 for k in range(-30, 1) for s in (-1, 1)]
    lo, hi = rc.exp_bounds(np.array(xs))
    for x, lo_x, hi_x in zip(xs, lo.tolist(), hi.tolist()):
        assert (lo_x, hi_x) == _exp_spec(x), x
        with mpmath.workdps(60):
            assert mpmath.mpf(lo_x) <= mpmath.exp(mpmath.mpf(x)) <= mpmath.mpf(hi_x), x


# -- the features Z (Eq. 7): intervals and float balls against exact logits and a 60-digit softmax ----------------

def floats_of(rng, shape, scale=1.0) -> list:
    return [Fraction(float(v)) for v in (rng.standard_normal(math.prod(shape)) * scale).ravel()]


def nest(values: list, shape: tuple):
    if not shape:
        return str(values[0])
    step = math.prod(shape[1:])
    return [nest(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def instance(seed: int, shared: bool, bias: bool, T=3, n=3, d=2, H=2, dh=2) -> dict:
    """mha-feature-rank data of binary64 entries (both paths apply), rows = cols = 0..min(T, H d) - 1."""
    rng = np.random.default_rng(seed)
    k = min(T, H * d)
    data = {"T": T, "n": n, "d": d, "H": H, "d_h": dh, "shared": shared,
            "contexts": nest(floats_of(rng, ((1 if shared else T), n, d)), ((1 if shared else T), n, d)),
            "queries": nest(floats_of(rng, (T, d)), (T, d)),
            "W_K": nest(floats_of(rng, (H, d, dh)), (H, d, dh)), "W_Q": nest(floats_of(rng, (H, d, dh)), (H, d, dh)),
            "rows": list(range(k)), "cols": list(range(k))}
    if bias:
        data["b_Q"] = nest(floats_of(rng, (H, dh), 2.0), (H, dh))
    return data


def exact_Z(o: dict) -> dict:
    """{h: T x d list} of Z (Eq. 7; with b_Q: p = W_Q^T e + b_Q) for point data: exact logits, 60-digit softmax."""
    T, n, d, H, dh = o["T"], o["n"], o["d"], o["H"], o["d_h"]
    E, e, WK, WQ = (o[k].fractions() for k in ("E", "e", "W_K", "W_Q"))
    bQ = o["b_Q"].fractions() if o["b_Q"] is not None else [Fraction(0)] * (H * dh)
    Z = {}
    for h in range(H):
        block = []
        for t in range(T):
            p = [sum(e[t * d + i] * WQ[(h * d + i) * dh + c] for i in range(d)) + bQ[h * dh + c] for c in range(dh)]
            base = 0 if o["shared"] else t * n * d
            a = [sum(E[base + r * d + i] * WK[(h * d + i) * dh + c] * p[c] for i in range(d) for c in range(dh))
                 for r in range(n)]
            s = softmax_exact(a)
            with mpmath.workdps(60):
                block.append([sum(s[r] * mp(E[base + r * d + j]) for r in range(n)) for j in range(d)])
        Z[h] = block
    return Z


def assert_float_Z(o: dict, Zf: dict, Zx: dict):
    for h, (m, r) in Zf.items():
        for t in range(o["T"]):
            for j in range(o["d"]):
                assert_in_ball(m[t, j], r[t, j], Zx[h][t][j], (h, t, j))


def assert_interval_Z(o: dict, Zi: dict, Zx: dict):
    for h, block in Zi.items():
        for t in range(o["T"]):
            for j in range(o["d"]):
                x = block[t][j]
                with mpmath.workdps(60):
                    assert mpmath.mpf(x.a) <= Zx[h][t][j] <= mpmath.mpf(x.b), (h, t, j)
                assert rc.upper(x) - rc.lower(x) < Fraction(1, 2**100)


@pytest.mark.parametrize("shared", [True, False])
def test_features_with_a_query_bias_enclose_the_exact_features(shared):
    """b_Q^h is added to every head's p (per coordinate c of that head: b_Q[h, c]); both paths enclose the exact
    Z; the float path's sum P + b_Q carries its rounding."""
    o = rc.mha_data(instance(3, shared, bias=True), readout=False)
    Zx = exact_Z(o)
    with rc.precision(128):
        assert_interval_Z(o, rc.features_intervals(o, everything=True), Zx)
    assert_float_Z(o, rc.features_float(o, everything=True), Zx)


def _moved(accurate_mul, queries):
    """accurate_mul with the midpoint of e W_Q^h (``queries``) or of E W_K^h (not) moved by about 2^-30 of
    itself and its radius widened to cover the move: still an enclosure of the exact product (another correct
    implementation may return it)."""
    def moved(A, B):
        mid, rad = accurate_mul(A, B)
        if (A is moved.e) != queries:
            return mid, rad
        new = mid + np.ldexp(mid, -30) + 2.0**-40
        return new, rc.add_up(rad, rc.up(np.abs(new - mid), 1 / (1 - rc.U)))  # new - mid: one rounding
    return moved


@pytest.mark.parametrize("shared, bias, queries", [(True, False, True), (True, True, True), (True, False, False),
                                                   (False, False, True), (False, True, True)])
def test_float_features_propagate_every_radius(shared, bias, queries, monkeypatch):
    """The radii of e W_Q^h (+ b_Q), of E W_K^h and of every product after them reach the logits and Z: with
    one accurate product's midpoint moved inside its (widened) enclosure, Z's balls still hold Z."""
    o = rc.mha_data(instance(5, shared, bias=bias), readout=False)
    Zx = exact_Z(o)
    moved = _moved(rc.accurate_mul, queries)
    moved.e = o["e"].floats()
    monkeypatch.setattr(rc, "accurate_mul", moved)
    Zf = rc.features_float(o, everything=True)
    assert_float_Z(o, Zf, Zx)
    assert max(float(np.max(r)) for _, r in Zf.values()) > 1e-12  # the move shows in the radii


def _feature_rank(data: dict) -> dict:
    return cert("mha-feature-rank", {"rank_at_least": len(data["rows"])}, data)


@pytest.mark.parametrize("which", ["W_K", "W_Q"])
def test_the_float_path_refuses_a_weight_beyond_2_to_400_in_a_head_the_minor_does_not_use(which, monkeypatch):
    """Every operand of the float path is checked (spec 6 and 5: beyond 2^400 is not provable there: exit 1),
    including the weights of heads whose features the minor does not need; base64 arrays reach the float path
    unchecked by the reader."""
    monkeypatch.setattr(rc, "MP_WORK", -1)
    data = instance(7, shared=False, bias=False, T=2, n=2, d=2, H=2, dh=2)
    data["rows"], data["cols"] = [0, 1], [0, 1]  # head 0 only
    values = [Fraction(x) for x in np.ravel(np.array(data[which], dtype=object))]
    data[which] = b64(values)
    code, line = judge(_feature_rank(data))
    assert code == 0 and "(float64, a priori bounds)" in line, line  # the control: head 0's minor is proved
    values[-1] = Fraction(2) ** 401  # head 1
    data[which] = b64(values)
    assert judge(_feature_rank(data)) == (1, "an operand of the float path is infinite or beyond 2^400")


def test_shared_keys_cancel_exactly_against_a_boxed_query():
    """Shared context: K = E W_K is formed first (spec 5: K = E W_K^h, a = K p).  Here K = 0 exactly, so every
    logit is 0 for every query in the box e_1 in [1, 2] and Z = (E_1 + E_2) / 2 = (1, 1): proved.  Forming
    W_K p first (the per-example order) gives logits [-3, 3] and [-1, 1] and a Z enclosure around 0."""
    data = {"T": 1, "n": 2, "d": 2, "H": 1, "d_h": 1, "shared": True, "contexts": [[["3", "3"], ["-1", "-1"]]],
            "queries": [[["1", "2"], "0"]], "W_K": [[["1"], ["-1"]]], "W_Q": [[["1"], ["0"]]],
            "rows": [0], "cols": [0]}
    code, line = judge(_feature_rank(data))
    assert code == 0 and "(intervals, 128 bits)" in line, line
    data["contexts"] = [[["3", "3"], ["-1", "-2"]]]  # the control: K_2 = 1, Z = (3 - e^p)/(1 + e^p) is 0 at p = ln 3
    assert judge(_feature_rank(data))[0] == 1


def test_logits_near_2_to_600_are_shifted_by_the_largest():
    """Logits 2^600 and 2^600 - 2^88 (exact at 512 bits): softmax is shifted by the largest midpoint (spec 5),
    so the differences 0 and -2^88 are exact and Z = s_1 - s_2 = 1 - 2 e^-2^88 / (1 + e^-2^88) is proved at 512
    bits.  (Shifting the other way, 2^601 - 2^88 needs 513 bits and the enclosure of Z reaches 0.)"""
    E1 = Fraction(2) ** 300 - Fraction(1, 2**212)
    data = {"T": 1, "n": 2, "d": 2, "H": 1, "d_h": 1, "shared": True,
            "contexts": [[["1", str(2**300)], ["-1", f"{E1.numerator}/{E1.denominator}"]]],
            "queries": [["0", str(2**300)]], "W_K": [[["0"], ["1"]]], "W_Q": [[["0"], ["1"]]],
            "rows": [0], "cols": [0]}
    code, line = judge(_feature_rank(data))
    assert code == 0 and "(intervals, 512 bits)" in line, line


def test_the_exact_work_message_names_the_conditional_row(monkeypatch):
    """The exact-work budget's refusal names the row it was summing (a user reads which)."""
    monkeypatch.setattr(rc, "EXACT_WORK", 0)
    c = cert("dana-thm2-negative-rhs", {"rhs_below": "-1/10"},
             {"N": 2, "d": 2, "T0": 1, "conditionals": [["1/2", "1/2"]], "weights": ["1"]})
    code, line = judge(c)
    assert code == 2 and line.startswith("conditional row 0: exact arithmetic of about "), line
