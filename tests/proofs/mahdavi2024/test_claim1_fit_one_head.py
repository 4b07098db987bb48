"""Claim 1: one head fits r softmax targets exactly (exact identity over Q,
ball fit of the float64 construction); Assumptions 1-2 failing => hypotheses-unmet."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.claim1_fit_one_head import (
    build_claim1_attention,
    build_claim1_attention_exact,
    check_claim1,
    control_claim1_perturbed_weights,
    control_claim1_rank_deficient_context,
    control_claim1_repeated_queries,
    control_claim1_wrong_right_inverse,
    exact_claim1_identities,
    interior_targets,
)
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances

contexts = st.sampled_from(["random", "uniform", "shared", "pe"])


@given(attention_instances(H=1, n=st.integers(1, 4), context=contexts, T=st.integers(1, 5)), st.integers(0, 2**16))
def test_claim1_fits_the_targets_on_valid_instances(inst, seed):
    ev = check_claim1(inst, seed=seed)
    assert ev.verdict == "verified" and ev.certified, ev.reason
    k = min(inst.r, inst.T)
    assert ev.measured["k"] == k and ev.measured["inner dimension of W_K W_Q^T"] <= max(k, 1) <= inst.d_h
    assert ev.measured["exact identity"] is True
    assert ev.measured["float64 weights: max fit error (factored, certified upper)"] < 1e-10
    assert all(h.status == "certified" for h in ev.hypotheses)


@given(attention_instances(H=1, n=st.integers(2, 4), context="random"), st.integers(0, 2**16),
       st.floats(-30, 30))
def test_exact_construction_hits_arbitrary_rational_logits(inst, seed, shift):
    """E^(t) W e^(t) = a^(t) over Q for any logits (large ones included), rank W <= k."""
    k = min(inst.r, inst.T)
    rows = list(range(k))
    logits = np.random.default_rng(seed).standard_normal((k, inst.n)) * 10 + shift
    B, P = build_claim1_attention_exact(inst.contexts[rows], inst.queries[rows], logits)
    assert exact_claim1_identities(inst.contexts[rows], inst.queries[rows], logits, B, P)["holds"]
    assert B.ncols() == k and P.nrows() == k


def test_float_construction_matches_targets_in_float64():
    inst = make_instance(H=1, n=3, d=5, seed=7)
    s = interior_targets(np.random.default_rng(1), 3, 3)
    W = build_claim1_attention(inst.contexts, inst.queries, s)
    a = np.einsum("tnd,de,te->tn", inst.contexts, W, inst.queries)
    p = np.exp(a - a.max(1, keepdims=True))
    assert np.allclose(p / p.sum(1, keepdims=True), s, atol=1e-12)
    assert np.linalg.matrix_rank(W) == 3


def test_negative_control_repeated_queries_names_the_step():
    ev = control_claim1_repeated_queries()
    assert ev.verdict == "hypotheses-unmet"
    assert "Claim 1" in ev.reason and "dependent" in ev.reason
    assert any(s.uses == "Claim 1" and "stopped" in s.title for s in ev.trail)
    assert [h.status for h in ev.hypotheses if "queries" in h.name] == ["refuted"]


def test_negative_control_rank_deficient_context():
    ev = control_claim1_rank_deficient_context()
    assert ev.verdict == "hypotheses-unmet" and "Assumption 2" in ev.reason


def test_negative_control_perturbed_weights_is_refuted():
    ev = control_claim1_perturbed_weights()
    assert ev.verdict == "refuted"
    assert ev.measured["float64 weights: max fit error (factored, certified upper)"] > 1e-10


def test_negative_control_wrong_right_inverse_fails_the_exact_identity():
    ev = control_claim1_wrong_right_inverse()
    assert ev.verdict == "refuted" and ev.certified and ev.measured["exact identity"] is False
    assert ev.certificates[0]["E^(t) b^(t) = a^(t) for all t"] is False


def test_large_instances_decide_on_balls_of_the_exact_weights(monkeypatch):
    """Above EXACT_LIMIT the exact B, P are enclosed in balls: same verdict."""
    import proofs.mahdavi2024.claim1_fit_one_head as c1
    inst = make_instance(H=1, n=4, d=7, seed=3)
    monkeypatch.setattr(c1, "EXACT_LIMIT", 0)
    ev = c1.check_claim1(inst)
    assert ev.verdict == "verified" and ev.certified
    assert "balls" in ev.certificates[0]["kind"]


def test_float_miss_with_exact_identity_is_a_precision_note_not_a_refutation():
    """Issue 9: a near-repeated token (E[:,1] = E[:,0] + 1e-8 noise): the float64
    weights miss by more than tol, the exact W fits: verified, with a note."""
    from verifier.data.instances import from_arrays
    base = make_instance(H=3, n=3, d=5, T=7, d_out=2, seed=1)
    E = np.array(base.contexts)
    E[:, 1] = E[:, 0] + 1e-8 * np.random.default_rng([1, 99]).standard_normal(E[:, 0].shape)
    ev = check_claim1(from_arrays(E, base.queries, base.labels, H=3), seed=1)
    assert ev.verdict == "verified" and ev.measured["exact identity"] is True
    assert ev.measured["float64 weights: max fit error (factored, certified upper)"] > 1e-10
    assert "precision note" in ev.reason


def test_low_kruskal_queries_are_hypotheses_unmet():
    inst = make_instance(H=1, n=3, d=5, degenerate="low-kruskal-queries", seed=2)
    assert check_claim1(inst).verdict == "hypotheses-unmet"
