"""Lemma 2: certified rank on generic instances, refuted exactly where the
all-parameter cap is below min(T0, Hd) (S = 1, N + S - 1 < d), and the proof's
hyperplane step (c) refuted for S < d, verified for S >= d."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.dana2025.lemma2_attention_rank import (
    attention_output_matrix,
    check_dana_lemma2,
    control_lemma2_head_differences,
    draw_embeddings,
    neg_hyperplane,
    neg_lemma2_S1,
    neg_lemma2_smallN,
)
from proofs.dana2025.rank_ceilings import lemma2_caps
from verifier.arith.compare import workprec
from verifier.arith.rank import certify_rank_lower_bound
from verifier.data.sequences import make_sequence_instance


@settings(max_examples=6)
@given(st.integers(3, 6), st.integers(1, 3), st.integers(2, 4), st.integers(1, 2), st.integers(0, 1000))
def test_verdict_follows_the_cap(N, S, d, H, seed):
    T0 = min(H * d + 1, N ** S)
    inst = make_sequence_instance(N=N, S=S, d=d, H=H, T0=T0, seed=seed)
    ev = check_dana_lemma2(inst, seed=seed)
    cap = lemma2_caps(inst.sequences, N=N, d=d, H=H)["cap"]
    if cap < min(T0, H * d):
        assert ev.verdict == "refuted" and ev.certified
    else:
        assert ev.verdict in ("verified", "inconclusive")
        if ev.verdict == "verified":
            assert ev.measured["certified rank"] == min(T0, H * d) <= cap


@settings(max_examples=4)
@given(st.integers(2, 4), st.integers(1, 3), st.integers(2, 6), st.integers(0, 1000))
def test_certified_rank_never_exceeds_the_cap(N, S, d, seed):
    """The cap holds for every parameter choice: random W_QK cannot certify more."""
    import itertools

    seqs = np.array(list(itertools.product(range(N), repeat=S)))
    cap = lemma2_caps(seqs, N=N, d=d, H=2)["cap"]
    e, pos = draw_embeddings(N, S, d, seed)
    W = [np.random.default_rng(seed + h).integers(-64, 65, (d, d)) / 64 for h in range(2)]
    with workprec(128):
        cert = certify_rank_lower_bound(attention_output_matrix(seqs, e, pos, W))
    assert cert.certified_k <= cap


def test_controls_are_refuted():
    for control in (neg_lemma2_S1, neg_lemma2_smallN, neg_hyperplane, control_lemma2_head_differences):
        ev = control()
        assert ev.verdict == "refuted" and ev.certified, control.__name__
    assert neg_lemma2_S1().measured["rank cap (all e, pos, W)"] == 2
    assert neg_lemma2_smallN().measured["rank cap (all e, pos, W)"] == 4
    assert control_lemma2_head_differences().measured["rank cap (all e, pos, W)"] == 13


def test_hyperplane_step_holds_when_S_ge_d():
    inst = make_sequence_instance(N=3, S=4, d=3, H=2, T0=6, seed=0)
    assert check_dana_lemma2(inst, claim="hyperplane").verdict == "verified"
