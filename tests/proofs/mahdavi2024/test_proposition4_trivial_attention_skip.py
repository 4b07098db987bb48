"""Proposition 4: uniform attention + skip maps Assumptions 2-3 to 1-2
(exact), the model's layer is the mean map (balls contain x + xbar), and a
nonzero adversarial W^h voids the claim."""
import numpy as np
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition4_trivial_attention_skip import (
    build_dominant_token_instance,
    build_trivial_layer,
    check_proposition4,
    control_proposition4_adversarial_attention,
    exact_layer_outputs,
    layer_inputs,
)
from verifier.arith.compare import workprec
from verifier.arith.structure import ball_contains_rational
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances
from verifier.model.mha import forward


@given(attention_instances(H=st.integers(1, 2), n=st.integers(2, 3), context=st.sampled_from(["pe", "random", "uniform"]),
                           degenerate=st.sampled_from([None, "cls-queries", "repeated-queries"]),
                           T=st.integers(3, 7)))
def test_trivial_layer_turns_assumptions_2_3_into_1_2(inst):
    ev = check_proposition4(inst)
    hyps = {h.name: h.status for h in ev.hypotheses}
    if all(s == "certified" for s in hyps.values()):
        assert ev.verdict == "verified" and ev.certified
    else:
        assert ev.verdict in ("verified", "hypotheses-unmet", "inconclusive")


def test_cls_queries_fail_assumption_1_before_and_meet_it_after():
    inst = make_instance(H=1, n=3, d=6, T=8, context="pe", degenerate="cls-queries", seed=7)
    ev = check_proposition4(inst)
    assert ev.verdict == "verified"
    assert ev.measured["Assumption 1 before the layer"] == "refuted"
    assert ev.measured["Assumption 1 after (output queries' Kruskal rank >= n)"] == "true"


def test_shared_context_with_cls_queries_fails_assumption_3_and_the_conclusion():
    inst = make_instance(H=1, n=3, d=6, T=5, context="shared", degenerate="cls-queries", seed=1)
    ev = check_proposition4(inst)  # every ebar is equal: Assumption 3 and the output Assumption 1 fail
    assert ev.verdict == "hypotheses-unmet"
    assert ev.measured["Assumption 1 after (output queries' Kruskal rank >= n)"] == "false"


def test_model_layer_is_the_mean_map():
    inst = make_instance(H=2, n=3, d=5, T=3, context="uniform", seed=2)
    layer = build_trivial_layer(2, 5, 3)
    contexts, queries = layer_inputs(inst)
    out_q, out_c = exact_layer_outputs(inst)
    from verifier.model.mha_balls import forward_ball
    with workprec(128):
        Y = forward_ball(contexts, queries, layer, skip=True)
    assert all(ball_contains_rational(Y[4 * t, j], out_q[t][j]) for t in range(3) for j in range(5))
    mean = inst.contexts.mean(axis=1)
    assert np.allclose(forward(contexts, queries, layer, skip=True)[::4], inst.queries + mean, atol=1e-12)


def test_ball_containment_is_exact_not_rounded():
    with workprec(128):
        x = arb(1) / 3
    from flint import fmpq
    assert ball_contains_rational(x, fmpq(1, 3)) and not ball_contains_rational(x, fmpq(1, 3) + fmpq(1, 10**30))


def test_negative_control_adversarial_attention_is_not_claimed():
    ev = control_proposition4_adversarial_attention()
    assert ev.verdict == "hypotheses-unmet"
    assert {h.name: h.status for h in ev.hypotheses}["W^h = W_K^h (W_Q^h)^T = 0 (uniform softmax)"] == "refuted"
    assert ev.measured["float numerical rank of output queries"] == 1  # collapsed onto e + x_1


def test_adversarial_instance_meets_the_input_assumptions():
    inst, u, q = build_dominant_token_instance(seed=3)
    ev = check_proposition4(inst)  # with W^h = 0 the proposition applies and holds
    assert ev.verdict == "verified" and all(h.status == "certified" for h in ev.hypotheses)


def test_without_the_skip_connection_the_exact_ranks_refute():
    from proofs.mahdavi2024.proposition4_trivial_attention_skip import control_proposition4_without_skip
    ev = control_proposition4_without_skip()
    assert ev.verdict == "refuted" and ev.certified
    assert ev.measured["Assumption 2 after (min output context rank)"] == 1
