"""Lemma 4: ||softmax(E(W + cW')e) - one-hot||_1 <= 2(n-1) exp(R - cg) in balls,
at c0/4, c0, 10 c0, 1000 c0; c below c0 and two wrong bounds are refuted."""
import math

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma4_softmax_saturation import (
    CONTROL_INSTANCE,
    build_saturation_setting,
    check_lemma4,
    control_lemma4_c_below_c0,
    control_lemma4_missing_factor_two,
    control_lemma4_missing_spread,
    largest_saturation_constant,
    saturation_constant,
    saturation_error_bound,
    saturation_logits,
)
from verifier.arith.compare import workprec
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 4),
                           context=st.sampled_from(["random", "uniform", "pe"]),
                           T=st.integers(2, 6)), st.integers(0, 2**16),
       st.sampled_from([1e-1, 1e-3, 1e-8]), st.sampled_from([("claim1", 1.0), ("gaussian", 1.0), ("gaussian", 20.0)]))
@example(make_instance(H=1, n=2, d=3, T=5, d_h=1, d_v=1, context="random", seed=1126), 2251, 1e-8, ("gaussian", 20.0))
def test_saturation_bound_holds_in_balls(inst, seed, eps, base):
    ev = check_lemma4(inst, seed=seed, eps=eps, base=base[0], base_scale=base[1])
    assert ev.verdict == "verified" and ev.certified, ev.reason
    for row in ev.certificates:
        for c in row["checks"]:
            assert c["err <= bound"] == "true"
            if c["c/c0"] >= 1:
                assert c["err <= eps"] == "true"


def test_float_constant_makes_the_bound_equal_eps():
    R, g, n, eps = 1.7, 0.3, 4, 1e-5
    c0 = saturation_constant(R, g, eps, n)
    assert math.isclose(saturation_error_bound(R, g, c0, n), eps, rel_tol=1e-12)
    assert saturation_constant(R, g, eps, 1) == 0.0 and saturation_error_bound(R, g, 1.0, 1) == 0.0


def test_huge_logits_do_not_overflow():
    inst = make_instance(H=2, n=3, d=5, seed=3)
    ev = check_lemma4(inst, multipliers=(1e3, 1e5))
    assert ev.verdict == "verified"
    errs = [c["err (l1)"] for r in ev.certificates for c in r["checks"]]
    assert all("e-" in e for e in errs)  # astronomically small, still a positive ball


def test_logits_of_the_saturation_matrix_are_rank_one():
    inst = make_instance(H=2, n=3, d=5, seed=1)
    st_ = build_saturation_setting(inst)
    t = st_["saturated"][0]
    with workprec(128):
        _, ap = saturation_logits(inst.contexts[t], inst.queries[t], st_["W"], st_["v"], st_["w"])
    direct = inst.contexts[t] @ np.outer(st_["v"], st_["w"]) @ inst.queries[t]
    assert np.allclose([float(x.mid()) for x in ap], direct, rtol=1e-12)


def test_negative_control_c_below_c0_is_refuted():
    ev = control_lemma4_c_below_c0()
    assert ev.verdict == "refuted"
    assert ev.measured["first failure"]["err <= eps"] == "false"
    assert ev.measured["first failure"]["err <= bound"] == "true"  # the bound itself still holds at c0/4


def test_negative_control_missing_factor_two_is_refuted():
    ev = control_lemma4_missing_factor_two()
    assert ev.verdict == "refuted" and ev.measured["n"] == 2
    # ... while the correct bound holds on the same nearly tight instance, decided on the exact
    # logits at the first precision (in balls alone it needed the ladder's high precision)
    ok = check_lemma4(make_instance(**CONTROL_INSTANCE))
    assert ok.verdict == "verified" and ok.certified and ok.measured["max prec_bits"] == 128


def test_negative_control_missing_spread_is_refuted():
    assert control_lemma4_missing_spread().verdict == "refuted"



# --- the constants, pinned (mutation testing: a changed constant must fail) ---------

@given(st.floats(-5, 5), st.floats(0.01, 3), st.integers(1, 6), st.sampled_from([1e-12, 1e-3, 0.5]))
def test_ball_constants_make_the_bound_equal_eps_at_c0(R, g, n, eps):
    from flint import arb

    from proofs.mahdavi2024.lemma4_softmax_saturation import c0_ball, error_bound_ball
    with workprec(128):
        Rb, gb = arb(R), arb(g)
        if n == 1:
            assert error_bound_ball(Rb, gb, 3.0, n).is_zero()
            return
        c0 = c0_ball(Rb, gb, eps, n)
        assert abs(float(c0.mid()) - (R + math.log(2 * (n - 1) / eps)) / g) <= 1e-9 * (1 + abs(float(c0.mid())))
        assert (error_bound_ball(Rb, gb, c0, n) - arb(eps)).contains(0)  # 2(n-1) exp(R - c0 g) = eps
        no_R = error_bound_ball(Rb, gb, 1.5, n, uses_R=False)
        assert abs(float(no_R.mid()) - 2 * (n - 1) * math.exp(-1.5 * g)) <= 1e-12 * float(no_R.mid())
        half = error_bound_ball(Rb, gb, 1.5, n, factor=1)
        assert abs(float(half.mid()) - (n - 1) * math.exp(R - 1.5 * g)) <= 1e-12 * float(half.mid())


def test_float_constants_at_n_2_and_small_c0():
    assert math.isclose(saturation_constant(0.5, 2.0, 0.1, 2), (0.5 + math.log(2 / 0.1)) / 2.0, rel_tol=1e-14)
    assert math.isclose(saturation_error_bound(0.5, 2.0, 1.0, 2), 2 * math.exp(0.5 - 2.0), rel_tol=1e-14)
    assert math.isclose(saturation_constant(-3.0, 10.0, 0.5, 3), 0.0)  # (R + ln 8)/g < 0: clipped at 0
    small = saturation_constant(-1.0, 10.0, 0.5, 3)  # (ln 8 - 1)/10 ~ 0.108 < 1
    assert math.isclose(small, (math.log(8.0) - 1.0) / 10.0, rel_tol=1e-14)


def test_logit_spread_is_max_minus_chosen():
    from proofs.mahdavi2024.lemma4_softmax_saturation import logit_spread
    b = np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]])
    assert np.array_equal(logit_spread(b, np.array([0, 2])), np.array([2.0, 0.0]))


def test_setting_is_the_documented_one():
    for T in (2, 5, 7):
        inst = make_instance(H=2, n=3, d=5, T=T, seed=2)
        st_ = build_saturation_setting(inst)
        k = min(inst.r - 1, T - 1)
        assert st_["J"] == list(range(k)) and st_["saturated"] == list(range(k, T))


def test_base_falls_back_to_the_exact_claim1_then_to_a_gaussian():
    """float64 gives up on a context with a token repeated to 1e-17 relative:
    the exact W* (rounded) serves; an exactly rank-deficient context: a Gaussian."""
    from verifier.data.instances import from_arrays
    base = make_instance(H=2, n=3, d=5, seed=4)
    E = np.array(base.contexts)
    E[:, 1] = E[:, 0] * (1 + 2.0 ** -52)
    inst = from_arrays(E, base.queries, base.labels, H=2)
    st_ = build_saturation_setting(inst)
    J = st_["J"]
    a = np.einsum("tnd,de,te->tn", inst.contexts[J], st_["W"], inst.queries[J])
    assert np.all(np.isfinite(a)) and np.abs(st_["W"]).max() > 0
    E[:, 1] = E[:, 0]
    st2 = build_saturation_setting(from_arrays(E, base.queries, base.labels, H=2))
    assert np.all(np.isfinite(st2["W"])) and np.abs(st2["W"]).max() < 10


def test_tight_case_is_decided_on_the_exact_logits():
    """n = 2 with the base logits favouring the other token: err and the bound agree to
    ~83,000 digits at c = 1000 c0 (undecidable in balls at 2^18 bits); D <= 0 decides it
    exactly, and the wrong bounds are still refuted on the same example."""
    inst = make_instance(H=1, n=2, d=3, T=5, d_h=1, d_v=1, context="random", seed=1126)
    ev = check_lemma4(inst, seed=2251, eps=1e-8, base="gaussian", base_scale=20.0)
    assert ev.verdict == "verified" and ev.certified
    assert max(c["prec_bits"] for r in ev.certificates for c in r["checks"]) <= 4096
    for wrong in ("no-2", "no-R"):
        assert check_lemma4(inst, seed=2251, eps=1e-8, base="gaussian", base_scale=20.0,
                            bound=wrong).verdict == "refuted"


def test_margin_sign_matches_the_inequality():
    """D <= 0 iff err <= factor (n-1) e^{U - cg}, on exact logits where both sides are computable."""
    from flint import arb, fmpq

    from proofs.mahdavi2024.lemma4_softmax_saturation import saturation_margin_ball
    from verifier.arith.compare import Decision, certainly_less_equal

    b, a = [fmpq(1), fmpq(0), fmpq(-1, 2)], [fmpq(0), fmpq(1), fmpq(-1)]  # i* = 1, R = 1, g = 1
    for c, factor, uses_R in [(0.5, 2, True), (3.0, 2, True), (3.0, 1, True), (0.0, 1, True), (2.0, 2, False)]:
        z = [bi + fmpq(*c.as_integer_ratio()) * ai for bi, ai in zip(b, a)]
        ex = [arb(zi).exp() for zi in z]
        err = 2 * (ex[0] + ex[2]) / (ex[0] + ex[1] + ex[2])
        bound = factor * 2 * (arb(1 if uses_R else 0) - arb(c)).exp()
        D = saturation_margin_ball(b, a, 1, c, factor=factor, uses_R=uses_R)
        truth = certainly_less_equal(err, bound)
        assert truth is not Decision.UNDECIDED
        assert certainly_less_equal(D, arb(0)) is truth, (c, factor, uses_R)


# -- the deciding lines, pinned by value (mutation testing) --------------------

def _mp_margin(b, a, istar, c, factor, uses_R):
    """D = e^{-(U - cg)} (1 + S) (err - factor (n-1) e^{U - cg}), in mpmath at 60 digits (independent of arb)."""
    import mpmath

    with mpmath.workdps(60):
        n = len(b)
        z = [mpmath.mpf(bi) + mpmath.mpf(c) * mpmath.mpf(ai) for bi, ai in zip(b, a)]
        R = max(mpmath.mpf(x) for x in b) - mpmath.mpf(b[istar])
        g = mpmath.mpf(a[istar]) - max(mpmath.mpf(a[i]) for i in range(n) if i != istar)
        shift = (R if uses_R else 0) - mpmath.mpf(c) * g
        S = sum(mpmath.exp(z[i] - z[istar]) for i in range(n) if i != istar)
        err = 2 * S / (1 + S)
        return mpmath.exp(-shift) * (1 + S) * (err - factor * (n - 1) * mpmath.exp(shift))


def test_margin_value_matches_an_independent_formula():
    """saturation_margin_ball's value (not only its sign) at n = 3, 4, with its defaults (factor 2, with R)."""
    import mpmath
    from flint import fmpq

    from proofs.mahdavi2024.lemma4_softmax_saturation import saturation_margin_ball

    rng = np.random.default_rng(5)
    for n in (3, 4):
        for _ in range(4):
            b = [fmpq(int(x), 8) for x in rng.integers(-16, 16, n)]
            a = [fmpq(int(x), 4) for x in rng.integers(-8, 8, n)]
            istar = max(range(n), key=lambda i: a[i])
            if sorted(a)[-1] == sorted(a)[-2]:
                continue
            bf, af = [float(x.p) / float(x.q) for x in b], [float(x.p) / float(x.q) for x in a]
            for c in (0.0, 0.75, 3.0):
                for factor, uses_R in [(2, True), (1, True), (2, False)]:
                    with workprec(200):
                        D = saturation_margin_ball(b, a, istar, c, factor=factor, uses_R=uses_R)
                    want = _mp_margin(bf, af, istar, c, factor, uses_R)
                    assert abs(float(D.mid()) - float(want)) <= 1e-12 * max(1.0, abs(float(want))), (n, c, factor)
                with workprec(200):
                    dflt = saturation_margin_ball(b, a, istar, c)
                assert abs(float(dflt.mid()) - float(_mp_margin(bf, af, istar, c, 2, True))) <= 1e-12 * max(
                    1.0, abs(float(mpmath.mpf(_mp_margin(bf, af, istar, c, 2, True)))))


def test_exact_logits_are_the_rational_products():
    """b = E W e and a' = (E v)(w . e) over Q, with w . e far from +-1."""
    from flint import fmpq

    from proofs.mahdavi2024.lemma4_softmax_saturation import exact_saturation_logits

    E = np.array([[1.0, 0.5, 0.0], [0.25, -1.0, 2.0]])
    e, W = np.array([3.0, -0.5, 1.0]), np.arange(9.0).reshape(3, 3) / 4
    v, w = np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.25, 3.0])
    b, a = exact_saturation_logits(E, e, W, v, w)
    we = fmpq(3, 2) - fmpq(1, 8) + 3
    assert we == fmpq(35, 8)
    assert b == [fmpq(int(round(x * 64)), 64) for x in E @ W @ e]
    assert a == [fmpq(int(x * 4), 4) * we for x in E @ v]


def test_bound_at_n_one_is_zero_without_evaluating_the_exponential():
    assert saturation_error_bound(5000.0, 0.0, 0.0, 1) == 0.0  # exp(5000) would overflow


def test_reported_bound_is_the_balls_bound():
    """saturation_at reports err and factor (n-1) exp(U - c g) as balls (Lemma 4's, and both wrong ones)."""
    from flint import arb

    from proofs.mahdavi2024.lemma4_softmax_saturation import (
        exact_saturation_logits,
        saturation_at,
        saturation_constants_ball,
    )

    inst = make_instance(**CONTROL_INSTANCE)  # the saturated token is not the base argmax: R > 0
    st_ = build_saturation_setting(inst)
    t = 2
    args = (inst.contexts[t], inst.queries[t], st_["W"], st_["v"], st_["w"])
    with workprec(128):
        b, ap = saturation_logits(*args)
        exact = exact_saturation_logits(*args)
        istar = max(range(inst.n), key=lambda i: exact[1][i])
        R, g = saturation_constants_ball(b, ap, istar)
        assert R > 0.1
        c = 2.5
        for bound, factor, U in [("lemma4", 2, R), ("no-2", 1, R), ("no-R", 2, arb(0))]:
            dec, pay = saturation_at(b, ap, istar, c, 1e-3, bound, False, exact)
            want = factor * (inst.n - 1) * (U - c * g).exp()
            assert (pay["bound"] - want).contains(0) and pay["bound"].rad() < 1e-30 * abs(want.mid())
        assert not pay["err"].contains(0) and pay["err"] < 2


def test_setting_defaults_and_the_gaussian_scale():
    inst = make_instance(H=1, n=3, d=16, T=4, seed=2)
    assert np.array_equal(build_saturation_setting(inst)["W"], build_saturation_setting(inst, seed=0)["W"])
    g1 = build_saturation_setting(inst, base="gaussian")["W"]
    assert np.array_equal(g1, build_saturation_setting(inst, base="gaussian", base_scale=1.0)["W"])
    g20 = build_saturation_setting(inst, base="gaussian", base_scale=20.0)["W"]
    assert np.allclose(g20, 20 * g1, rtol=1e-15, atol=0)
    ratio = np.linalg.norm(g1) / np.sqrt(16)  # entries N(0, 1/d): ||W||_F ~ sqrt(d)
    assert 0.5 < ratio < 2, ratio


def test_exactly_singular_context_on_J_gets_a_gaussian_base():
    """Claim 1 fails exactly on J (a repeated token in example 0): the Gaussian base W serves ("for any W")."""
    from verifier.data.instances import from_arrays

    inst = make_instance(H=2, n=3, d=5, T=5, seed=0)
    E = np.array(inst.contexts, dtype=float)
    E[0, 1] = E[0, 0]
    st_ = build_saturation_setting(from_arrays(E, np.asarray(inst.queries), np.asarray(inst.labels), H=2))
    assert st_["J"] == [0, 1]
    assert st_["W"].shape == (5, 5) and np.all(np.isfinite(st_["W"]))
    assert 0.2 < np.linalg.norm(st_["W"]) / np.sqrt(5) < 5


def test_lemma3_unavailable_decides_the_queries_of_J_exactly_and_at_precision():
    """When the float construction gives up at Lemma 3, the queries e^(j), j in J = {0, 1}
    (r = 3), are decided: independent -> certified, the verdict inconclusive; dependent over Q
    (e^(1) = 2 e^(0)) -> refuted; independent as rationals but within the dtype's precision of
    dependent -> fails-at-precision (both hypotheses-unmet); the claim and the failed step kept."""
    from proofs.mahdavi2024.lemma4_softmax_saturation import lemma3_unavailable
    from verifier.data.instances import from_arrays, make_instance
    from verifier.errors import ConstructionFailed

    inst = make_instance(H=2, n=3, d=5, seed=0)
    assert (inst.r, inst.T) == (3, 5)
    exc = ConstructionFailed("Lemma 3", "queries dependent (patched)")
    name = "the queries e^(j), j in J = [0, 1] (Lemma 3's W' = v w^T) linearly independent (Assumption 1)"

    ev = lemma3_unavailable(inst, exc, eps=0.1, multipliers=(1, 2))
    (h,) = ev.hypotheses
    assert ev.verdict == "inconclusive" and (h.name, h.status) == (name, "certified")
    assert h.detail == "exact rank 2 over Q of the values given; exact reading"
    assert ev.claimed == {"bound": "2(n-1) exp(R - c g)", "eps": 0.1, "c/c0": [1, 2]}
    assert ev.measured == {"construction failed at": "Lemma 3"} and ev.method == "exact rationals"
    assert "queries dependent (patched)" in ev.reason and ev.statement == "lemma4" and not ev.certified
    assert ev.instance == inst.summary()
    assert [(t.title, t.uses) for t in ev.trail] == [
        ("Construction failed at Lemma 3: Lemma 3: queries dependent (patched)", "Lemma 3")]

    e = np.array(inst.queries, dtype=np.float64)
    e[1] = 2 * e[0]
    ev = lemma3_unavailable(from_arrays(inst.contexts, e, inst.labels, H=2), exc, eps=0.1, multipliers=(1, 2))
    (h,) = ev.hypotheses
    assert ev.verdict == "hypotheses-unmet" and (h.name, h.status) == (name, "refuted")
    assert h.detail.startswith("exact null combination sum_t c_t e^(t) = 0")

    e = np.array(inst.queries, dtype=np.float64)
    e[1] = e[0] * (1 + 2.0**-50)  # independent over Q, parallel at a point of the float64 intervals
    for reading, status in (("dtype", "fails-at-precision"), ("exact", "certified")):
        ev = lemma3_unavailable(from_arrays(inst.contexts, e, inst.labels, H=2, reading=reading), exc, eps=0.1,
                                multipliers=(1, 2))
        (h,) = ev.hypotheses
        assert (h.name, h.status) == (name, status)
        if status == "fails-at-precision":
            assert "dependent at an explicit point of the data's intervals" in h.detail
    assert ev.verdict == "inconclusive"


def test_the_largest_saturation_constant_is_the_largest_one_by_one():
    """largest_saturation_constant (issue 38: one pass) is, bit for bit, the
    max of saturation_constant over the examples, negative c0 clipped to 0 and
    n = 1 giving 0 as there."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 64):
        for eps in (1e-12, 0.3, 0.5):
            R = np.concatenate([rng.standard_normal(40) * 30, [-1e3, 0.0]])
            g = np.concatenate([rng.random(40) * 5 + 1e-9, [1.0, 2.0**-40]])
            want = max(saturation_constant(float(r), float(x), eps, n) for r, x in zip(R, g))
            assert largest_saturation_constant(R, g, eps, n) == want
    assert largest_saturation_constant(np.array([-100.0]), np.array([1.0]), 0.5, 3) == 0.0
