"""Lemma 4: ||softmax(E(W + cW')e) - one-hot||_1 <= 2(n-1) exp(R - cg) in balls,
at c0/4, c0, 10 c0, 1000 c0; c below c0 and two wrong bounds are refuted."""
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma4_softmax_saturation import (
    CONTROL_INSTANCE,
    build_saturation_setting,
    check_lemma4,
    control_lemma4_c_below_c0,
    control_lemma4_missing_factor_two,
    control_lemma4_missing_spread,
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
    # ... while the correct bound holds on the same instance (nearly tight: high precision needed)
    ok = check_lemma4(make_instance(**CONTROL_INSTANCE))
    assert ok.verdict == "verified" and ok.measured["max prec_bits"] > 128


def test_negative_control_missing_spread_is_refuted():
    assert control_lemma4_missing_spread().verdict == "refuted"
