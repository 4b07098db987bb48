"""Thm. 1 (eps = 0) pinned (mutation testing, issue 17): every path of check_dana_thm1_eps0
(the capacity reading refuted, a step of the paper's route refuted, the route impossible by
its ceiling, the route certified, weights saved) returns well-formed evidence: its statement,
claim, hypotheses, method, certificates, trail and reason.  Only exact facts are pinned (names,
texts, exact counts, ball-decided verdicts), never a float value."""
import numpy as np
import pytest

from proofs.dana2025.thm1_exact_route import check_dana_thm1_eps0, neg_det_G, neg_skiphead, neg_thm1_shared, neg_wv_rank
from verifier.data.sequences import from_sequences, make_sequence_instance
from verifier.statements.evidence import Step

CLAIM = "some AoT has T(t) = W E(t) on every sequence (=> d_KL(pi,T) <= d_KL(pi,L) + gamma for all gamma)"
SIZE_HYPOTHESES = [("T0 <= H d_h + d", "certified"), ("d_h <= d (App. A.1)", "certified")]
HEAD = [("Sizes", "Thm. 1"), ("Capacity reading: upper bound of d_KL(pi,L) vs a floor over every AoT", "D2")]
ROUTE = ("Exact route: M = [x'_S; V^h A'^h], rank M = T0 by a nonsingular minor", "D1, Lemma 2")
STEP_I = ("Paper step (i): head 0 = lambda I tends to x(t,S) iff g(t) > 0", "D5")


def well_formed(ev, trail, prec=128):
    assert ev.statement == "dana_thm1_eps0"
    assert [(s.title, s.uses) for s in ev.trail] == trail
    for s in ev.trail:
        assert isinstance(s, Step) and isinstance(s.data, dict) and s.data
    assert ev.prec_bits == prec
    assert ev.certificates and all(isinstance(c, dict) and c for c in ev.certificates)
    assert isinstance(ev.measured, dict) and ev.measured


def test_the_capacity_reading_refuted_on_shared_last_tokens():
    ev = neg_thm1_shared()
    well_formed(ev, HEAD)
    assert ev.verdict == "refuted" and ev.certified and ev.claimed == CLAIM
    assert [(h.name, h.status) for h in ev.hypotheses] == SIZE_HYPOTHESES
    assert ev.method == "arb balls (Pinsker + Eckart-Young) / exact"
    assert list(ev.measured) == ["d_KL(pi,T) >= (every AoT)", "d_KL(pi,L) <=", "k = rank of the heads' sum <="]
    assert ev.margin > 0 and len(ev.certificates) == 2 and "kappa0" in ev.certificates[0]
    assert ev.reason.startswith("every AoT with (d, d_h, H) = (2, 1, 1) has d_KL >= ")
    assert "the capacity reading fails for gamma <" in ev.reason
    assert ev.trail[1].data["AoT floor"] and "certificate" not in ev.trail[1].data["AoT floor"]


@pytest.mark.parametrize("control, title, kind", [
    (neg_wv_rank, "step (iii): full-rank W_V keeps rank T0", "rank A' (certified)"),
    (neg_skiphead, "step (i): head 0 with W_QK^0 = lambda I tends to x(t,S)",
     "sequences with g(t) <= 0 (head 0 does not tend to x(t,S))"),
    (neg_det_G, "step (iv): det G != 0", "rank E (exact)"),
])
def test_a_step_of_the_papers_route_refuted(control, title, kind):
    ev = control()
    well_formed(ev, HEAD + [ROUTE, (title, "the paper's route")])
    assert ev.verdict == "refuted" and ev.certified and ev.claimed == title
    assert ev.method == "exact rationals / arb balls / sympy"
    assert kind in ev.measured and "decision" not in ev.measured and ev.measured["why"]
    assert ev.reason == (ev.measured["why"] + "; refutes the variant (step=...: one step of the paper's route), "
                                              "not the statement")
    assert kind in ev.certificates[-1] and "decision" in ev.certificates[-1]
    assert ev.trail[-1].data == ev.measured


def test_the_route_impossible_by_its_ceiling_is_inconclusive_not_refuted():
    """DANA2025.md's D1 example: rank M <= 5 < T0 = 6 for every x', K, V."""
    seqs = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 2], [3, 3]])
    ev = check_dana_thm1_eps0(from_sequences(seqs, N=4, targets=[0] * 6, d=3, d_h=3, H=1))
    well_formed(ev, HEAD + [ROUTE, STEP_I], prec=None)  # exact: no precision
    assert ev.verdict == "inconclusive" and not ev.certified and ev.claimed == CLAIM
    assert [(h.name, h.status) for h in ev.hypotheses] == SIZE_HYPOTHESES
    assert ev.method == "exact formal rank"
    assert (ev.measured["ceiling"], ev.measured["T0"], ev.measured["DANA2025.md ceiling"]) == (5, 6, 6)
    assert ev.reason == "route impossible: rank M <= 5 < T0 = 6 for every x', K, V (D1); this does not refute the theorem"
    assert [c["kind"] for c in ev.certificates] == ["rank M >= T0: nonsingular minor"]


def test_the_route_certified_and_its_weights_saved(tmp_path):
    path = tmp_path / "w.npz"
    ev = check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=3, H=2, seed=0), save_weights=str(path))
    assembled = ("Assemble e = G e', pos = G pos', W_Q = P G^-1, W_K = Q G^-1, W_V = V G^-1, W_U = W; "
                 "forward pass of Eq. (2) in balls", "App. A.2 (exact route)")
    well_formed(ev, HEAD + [ROUTE, STEP_I, assembled, ("Weights saved", "--save-weights")])
    assert ev.verdict == "verified" and ev.certified and ev.claimed == CLAIM
    assert [(h.name, h.status) for h in ev.hypotheses] == SIZE_HYPOTHESES
    assert ev.method == "arb balls (minor + det G)"
    assert ev.reason == "conclusion holds on the instance (hypotheses: certified)"
    assert [c["kind"] for c in ev.certificates] == ["rank M >= T0: nonsingular minor", "det G ball excludes 0"]
    assert ev.measured["certified rank M"] == ev.measured["T0"] <= ev.measured["ceiling"]
    assert ev.trail[-1].data == {"path": str(path)} and path.exists()
    assert int(np.load(path)["N"]) == 5
    assert [h.detail for h in ev.hypotheses] == ["T0 = 9, H d_h + d = 9", "d_h = 3, d = 3"]
    assert ev.margin is None and ev.measured["det G"] == ev.certificates[1]["det G"] != "None"
    assert "decision" not in ev.trail[3].data and ev.trail[3].data["why"]
    assert set(ev.trail[1].data) == {"d_KL(pi,L) upper", "AoT floor"}
    assert ev.trail[-2].data == {"radius of T - W E": ev.measured["max |T - W E| (ball parameters)"],
                                 "float64 weights residual": ev.measured["max |T - W E| (saved float64 weights)"]}


def test_no_weights_step_without_the_option():
    ev = check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=3, H=2, seed=0))
    assert ev.verdict == "verified" and ev.trail[-1].uses == "App. A.2 (exact route)"


def test_d_h_above_d_is_an_unmet_hypothesis():
    ev = check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=2, d_h=3, H=1, seed=0))
    assert ev.verdict == "hypotheses-unmet"
    assert [(h.name, h.status, h.detail) for h in ev.hypotheses] == [
        ("T0 <= H d_h + d", "certified", "T0 = 5, H d_h + d = 5"), ("d_h <= d (App. A.1)", "refuted", "d_h = 3, d = 2")]
