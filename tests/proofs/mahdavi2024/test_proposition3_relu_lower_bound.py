"""Proposition 3: on the lifted dataset an m-unit ReLU net is an m-unit net on
R^d (exact), its reachable labels lie in subspaces of dimension m(d+1)+1, and a
threshold at or below m(d+1) is refuted by a full-rank Jacobian."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition3_relu_lower_bound import (
    build_lifted_dataset,
    check_proposition3,
    control_proposition3_threshold_too_low,
    jacobian,
    preactivations,
    prove_reduction_symbolically,
    random_relu_network,
    reduce_network,
    relu_outputs,
)
from verifier.arith.exact import exact_rank
from verifier.data.instances import make_instance


@st.composite
def relu_settings(draw, *, slack=st.integers(1, 3)):
    n = draw(st.integers(1, 2))
    d = n + draw(st.integers(1, 2))
    m = draw(st.integers(1, 2))
    T = m * (d + 1) + 1 + draw(slack)
    return make_instance(H=1, n=n, d=d, T=T, seed=draw(st.integers(0, 2**16))), m


@given(relu_settings())
def test_generic_labels_are_out_of_reach_above_the_pattern_dimension(setting):
    inst, m = setting
    ev = check_proposition3(inst, m=m)
    # the paper's hypothesis is T > m(d+2)+1; between m(d+1)+1 and it the conclusion holds all the same
    paper = inst.T > m * (inst.d + 2) + 1
    assert ev.verdict == ("verified" if paper else "hypotheses-unmet") and ev.certified == paper
    assert ev.measured["max exact Jacobian rank"] <= m * (inst.d + 1) + 1 < inst.T


@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(0, 2**16))
def test_reduction_identity_and_jacobian_rank_are_exact(m, n, extra, seed):
    d = n + extra
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((6, d)) * 64) / 64
    _, inputs = build_lifted_dataset(X, n)
    net = random_relu_network(m, (n + 1) * d, rng, spread=inputs)
    assert relu_outputs(net, inputs) == relu_outputs(reduce_network(net, n, d), X)
    P = preactivations(net, inputs)
    if all(P[i, j] != 0 for i in range(6) for j in range(m)):
        assert exact_rank(jacobian(net, inputs)) <= m * (d + 1) + 1


def test_reduction_holds_symbolically():
    assert prove_reduction_symbolically(2, 3) and prove_reduction_symbolically(1, 4)


def test_lifted_data_meet_assumptions_and_explicit_labels_are_unreachable():
    ev = check_proposition3(make_instance(H=1, n=2, d=3, T=7, seed=11))
    assert ev.verdict == "verified"
    assert all(h.status == "certified" for h in ev.hypotheses)
    assert ev.measured["explicit unreachable labels"] is True


def test_paper_threshold_is_loose_by_m():
    # T = m(d+2)+1: the paper's hypothesis fails, the conclusion still holds (said, not counted).
    ev = check_proposition3(make_instance(H=1, n=2, d=3, T=6, seed=0), m=1)
    assert ev.verdict == "hypotheses-unmet"
    assert {h.name: h.status for h in ev.hypotheses}["T > 6"] == "refuted"
    assert "the conclusion still holds" in ev.reason and ev.measured["max exact Jacobian rank"] == 5


def test_negative_control_threshold_too_low_is_refuted():
    ev = control_proposition3_threshold_too_low()
    assert ev.verdict == "refuted"
    assert ev.measured["max exact Jacobian rank"] == ev.measured["T"]
