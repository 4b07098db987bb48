"""Remark 1: Kruskal rank k < n gives r = min(n, k, d_h); r = k+1 is impossible."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.remark1_low_kruskal_queries import check_remark1, control_r_too_large
from verifier.data.instances import make_instance


@given(st.integers(2, 4), st.integers(3, 4), st.sampled_from(["random", "shared"]), st.integers(0, 10**6))
def test_low_kruskal_bound(H, n, context, seed):
    inst = make_instance(H=H, n=n, d=n + 2, T=H + 1, context=context, degenerate="low-kruskal-queries", seed=seed)
    ev = check_remark1(inst)
    assert ev.verdict == "verified", ev.reason
    assert ev.measured["r"] == 2 and ev.measured["certified_rank"] == H + 1


def test_negative_control_r_too_large():
    assert control_r_too_large().verdict == "refuted"
