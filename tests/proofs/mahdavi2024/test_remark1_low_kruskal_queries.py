"""Remark 1: Kruskal rank k < n gives r = min(n, k, d_h); a failed construction at r = k + 1 is no
refutation; a pinned r whose claim exceeds a structural cap is refuted for ANY weights."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.remark1_low_kruskal_queries import check_remark1, control_r_above_the_cap
from verifier.data.instances import make_instance


@given(st.integers(2, 4), st.integers(3, 4), st.sampled_from(["random", "shared"]), st.integers(0, 10**6))
def test_low_kruskal_bound(H, n, context, seed):
    inst = make_instance(H=H, n=n, d=n + 2, T=H + 1, context=context, degenerate="low-kruskal-queries", seed=seed)
    ev = check_remark1(inst)
    assert ev.verdict == "verified", ev.reason
    assert ev.measured["r"] == 2 and ev.measured["certified_rank"] == H + 1


def test_negative_control_r_above_the_cap():
    ev = control_r_above_the_cap()
    assert ev.verdict == "refuted" and ev.certified
    assert ev.refutation.kind == "no-choice-works" and ev.refutation.variant.startswith("r_override")
    assert "rank(Z) <= 7 < 9 for ANY weights" in ev.reason and "refutes the variant" in ev.reason


def test_r_above_the_kruskal_rank_is_a_failed_construction_not_a_refutation():
    """Issue 32: r = k + 1 (the queries have exact rank 2 < 3): Claim 1's step cannot start, which used to be
    printed REFUTED; no cap rules rank(Z) >= 7 out for other weights, so it is inconclusive."""
    inst = make_instance(H=3, n=3, d=6, T=7, degenerate="low-kruskal-queries", seed=0)
    ev = check_remark1(inst, r_override=3)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.refutation.kind == "failed-construction"
    assert ev.reason.startswith("a failed construction is not a counterexample")
