"""Thm. 1 (eps > 0): eq. (13) certified, footnote 8 refuted by its control;
Thm. 2: refuted without C < 1/2, verified in the regime d > 128 ln(N+1),
the T5 step refuted on an instance."""
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.dana2025.thm1_eps_approximation import check_dana_thm1_eps, control_eq13_halved, neg_p1vp1
from proofs.dana2025.thm2_entropy_bound import check_dana_thm2, control_jensen_step, control_t4, neg_thm2_C
from verifier.data.sequences import make_sequence_instance


@settings(max_examples=5)
@given(st.integers(3, 6), st.integers(2, 4), st.integers(1, 2), st.sampled_from([0.1, 0.25, 0.5]),
       st.integers(0, 1000))
def test_eq13_verified(N, d, H, eps, seed):
    inst = make_sequence_instance(N=N, S=2, d=d, H=H, T0=min(H * d + d, N * N), conditionals="positive", eps=eps, seed=seed)
    ev = check_dana_thm1_eps(inst, seed=seed)
    assert ev.verdict == "verified" and ev.certified


@settings(max_examples=4)
@given(st.integers(3, 8), st.integers(1, 6), st.integers(0, 1000))
def test_thm2_refuted_without_the_hypothesis(N, d, seed):
    inst = make_sequence_instance(N=N, S=2, d=d, H=1, T0=3, conditionals="positive", seed=seed)
    assert check_dana_thm2(inst, seed=seed).verdict == "refuted"  # C > 1/2 for such d


def test_thm2_verified_when_C_below_half():
    inst = make_sequence_instance(N=3, S=2, d=180, H=0, T0=3, conditionals="positive", seed=0)
    ev = check_dana_thm2(inst)
    assert ev.verdict == "verified" and ev.measured["C"] < 0.5


def test_controls_are_refuted():
    for control in (neg_p1vp1, control_eq13_halved, neg_thm2_C, control_jensen_step, control_t4):
        ev = control()
        assert ev.verdict == "refuted" and ev.certified, control.__name__
    assert abs(neg_thm2_C().measured["RHS"] + 0.0555) < 1e-3
