"""Prop. 1: the induction reaches min(H(r-1)+1, T), certified; controls refuted."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from proofs.mahdavi2024.proposition1_rank_induction import (
    check_proposition1,
    control_no_minus_one,
    control_repeated_queries,
)
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances
from verifier.errors import ConstructionFailed
from verifier.model.factorisation import factor_attention


def _expected(ev):
    """verified when every hypothesis holds, else hypotheses-unmet (e.g. T < n: Assumption 1, Kruskal rank >= n,
    fails), whatever the conclusion does: the construction still runs and its numbers are checked below."""
    return "hypotheses-unmet" if any(h.status in ("refuted", "fails-at-precision") for h in ev.hypotheses) \
        else "verified"


@given(attention_instances(H=st.integers(1, 4), n=st.integers(2, 4), context=st.sampled_from(["random", "shared", "uniform", "pe"])))
def test_rank_reaches_capacity_certified(inst):
    ev = check_proposition1(inst)
    assert ev.verdict == _expected(ev), ev.reason
    assert ev.certified == (ev.verdict == "verified")
    assert ev.measured["certified_rank"] == min(inst.H * (inst.r - 1) + 1, inst.T)


@given(attention_instances(H=st.integers(2, 4), n=st.integers(2, 4), context="shared"),
       st.integers(1, 3))
def test_more_examples_than_capacity(inst, extra):
    inst = make_instance(H=inst.H, n=inst.n, d=inst.d, d_h=inst.d_h, T=inst.capacity + extra,
                         context="shared", seed=inst.seed)
    ev = check_proposition1(inst)
    assert ev.verdict == _expected(ev), ev.reason
    assert ev.measured["certified_rank"] == inst.capacity


def test_shared_context_reaches_prop2_cap_exactly():
    inst = make_instance(H=4, n=3, d=6, context="shared", seed=1)
    con = build_key_query_weights(inst)
    assert len(con.basis) == inst.H * (inst.n - 1) + 1
    for hs in con.heads[1:]:
        assert hs.perturbation_actual <= hs.perturbation_bound < hs.sigma_min_limit


def test_heads_have_rank_at_most_r_and_factor():
    inst = make_instance(H=3, n=4, d=7, d_h=3, seed=2)
    con = build_key_query_weights(inst)
    assert all(rk <= inst.r for rk in con.attention_ranks)
    assert con.W_K.shape == (3, 7, 3) and con.factorisation_error < 1e-10


def test_factorisation_refuses_rank_above_dh():
    W = np.random.default_rng(0).standard_normal((5, 5))
    with pytest.raises(ConstructionFailed, match="exceeds d_h"):
        factor_attention(W, 3)


def test_negative_control_no_minus_one_refuted():
    ev = control_no_minus_one()
    assert ev.verdict == "refuted"
    assert ev.measured["upper_bound (structural, any weights)"] == 7
    cap = [c for c in ev.certificates if c.get("kind", "").startswith("structural cap")][0]
    assert "shared context" in cap["why"]  # Prop. 2, at the instance's own H and n


def test_a_minor_above_the_structural_cap_is_a_conflict_not_a_verdict(monkeypatch):
    """A rank certificate that claims more than the data allow for ANY weights
    contradicts a proof: CertificateConflict, never 'verified' or 'refuted'."""
    import proofs.mahdavi2024.proposition1_rank_induction as p1
    from verifier.arith.compare import Decision
    from verifier.arith.rank import RankLowerBound
    from verifier.errors import CertificateConflict

    def always_true(mid, k, minor_ball, **kw):
        return RankLowerBound(k, (), (), Decision.TRUE, 128, "patched", 0.0, 0.0, k)

    monkeypatch.setattr(p1, "certify_rank_lower_bound_lazy", always_true)
    inst = make_instance(H=3, n=3, d=5, T=11, context="shared", seed=0)
    with pytest.raises(CertificateConflict):
        p1.check_proposition1(inst, claimed_rank=inst.H * inst.r)


def test_negative_control_repeated_queries():
    ev = control_repeated_queries()
    assert ev.verdict == "hypotheses-unmet"
    assert "Claim 1" in ev.reason or any(h.status == "refuted" for h in ev.hypotheses)


def test_trail_reads_like_appendix_B():
    ev = check_proposition1(make_instance(H=3, n=3, d=5, context="shared", seed=0))
    titles = [s.title for s in ev.trail]
    assert titles[1].startswith("Head 1: base") and titles[2].startswith("Head 2: induction step")
    assert any("Lemma 3" in k for k in ev.trail[2].data)


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 4), context=st.sampled_from(["random", "shared"])),
       st.integers(0, 2))
def test_float_and_arb_certificates_of_the_construction_agree(inst, extra):
    """The rigorous float64 path (Rump) and arb balls on the same construction:
    every TRUE of the float path is a TRUE of arb, and neither certifies a rank
    that the data forbid for ANY weights (Prop. 2's cap for shared contexts: a
    minor above it would raise CertificateConflict)."""
    from proofs.mahdavi2024.proposition1_rank_induction import certify_construction_rank
    from verifier.arith.compare import Decision
    from verifier.arith.rank_caps import structural_rank_cap

    inst = make_instance(H=inst.H, n=inst.n, d=inst.d, d_h=inst.d_h, T=inst.capacity + extra,
                         context=inst.kind, seed=inst.seed)
    con = build_key_query_weights(inst, seed=inst.seed)
    cap = structural_rank_cap(inst.contexts, inst.queries, inst.H)
    for k in sorted({con.target, min(inst.T, con.target + 1)}):
        f = certify_construction_rank(inst, con, k, method="float", cap=cap)
        a = certify_construction_rank(inst, con, k, method="arb", cap=cap)
        if f.decision is Decision.TRUE:
            assert a.decision is Decision.TRUE and "float64" in f.method and "arb" in a.method
        if k > cap.cap:
            assert f.decision is not Decision.TRUE and a.decision is not Decision.TRUE
        if k == con.target:  # small, well-conditioned minors: the float path reaches the construction's rank
            assert f.decision is Decision.TRUE, f.method


def test_no_pivoted_qr_of_a_huge_z_when_the_block_minor_is_undecided(monkeypatch):
    """Above PIVOTED_QR_LIMIT the whole-Z pivoted QR fallback is skipped: the
    block minor's UNDECIDED stands (never a claim), and says why."""
    import proofs.mahdavi2024.proposition1_rank_induction as p1
    from verifier.arith.compare import Decision
    from verifier.arith.rank import RankLowerBound

    calls = []

    def undecided(mid, k, minor_ball, **kw):
        calls.append(kw.get("cols"))
        return RankLowerBound(k, (), (), Decision.UNDECIDED, 53, "patched", float("inf"), 0.0, k)

    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst)
    monkeypatch.setattr(p1, "certify_rank_lower_bound_lazy", undecided)
    monkeypatch.setattr(p1, "PIVOTED_QR_LIMIT", con.Z.size - 1)
    cert = p1.certify_construction_rank(inst, con, con.target)
    assert cert.decision is Decision.UNDECIDED and "no fallback" in cert.method and len(calls) == 1
    monkeypatch.setattr(p1, "PIVOTED_QR_LIMIT", con.Z.size)
    calls.clear()
    p1.certify_construction_rank(inst, con, con.target)
    assert len(calls) == 2 and calls[1] is None  # small Z: the pivoted-QR minor is tried too
