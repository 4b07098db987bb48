"""Thm. 2 pinned (mutation testing, issue 17): the paths of check_dana_thm2 (the bound refuted
without C < 1/2, verified through d_KL(pi, L) = 0, no Gram matrix within C, the steps (T4) and
(T5) refuted) return well-formed evidence.  Only exact facts are pinned (names, texts, exact
counts, ball-decided verdicts), never a float value."""
import numpy as np

import proofs.dana2025.thm2_entropy_bound as thm2
from proofs.dana2025.thm2_entropy_bound import check_dana_thm2, control_jensen_step, control_t4, neg_thm2_C
from verifier.data.sequences import make_sequence_instance
from verifier.statements.evidence import Step

CLAIM = "d_KL(pi, L) <= E_t[(1-pi_g)(1+2C+C d_TV)/(1-2C) log((N-1)/(e^{-H}-1))], C = sqrt(32 log(N+1)/d)"
T3 = ("(T3) lambda(t) exists iff W_j.W_g < ||W_g||^2 for every j != g (exact)", "T3")
T5 = ("(T5) simpler bound: E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H)?", "T5")


def trail_of(ev):
    for s in ev.trail:
        assert isinstance(s, Step) and isinstance(s.data, dict)
    return [(s.title, s.uses) for s in ev.trail]


def test_the_bound_refuted_without_c_below_one_half():
    ev = neg_thm2_C()
    assert ev.statement == "dana_thm2" and ev.claimed == CLAIM
    assert ev.verdict == "refuted" and ev.certified and ev.method == "arb balls" and ev.prec_bits == 128
    assert trail_of(ev) == [("W: +-1/sqrt(d) signs; exact Gram", "(T2)"), ("RHS of Thm. 2 in balls", "Thm. 2"), T3]
    assert list(ev.measured) == ["C", "RHS", "Gram error <= C"] and ev.measured["Gram error <= C"] == "true"
    assert ev.measured["RHS"] <= ev.margin < 0  # the margin is the RHS ball's upper end
    assert ev.reason.startswith("(T1) C = 4.71 >= 1/2 (the hypothesis C < 1/2, i.e. d > 128 ln(N+1), is missing): "
                                "the RHS is ")
    assert ev.reason.endswith("< 0 <= d_KL(pi, L) for every distribution the data stand for")
    assert ev.trail[0].data["C < 1/2"] is False and ev.trail[2].data == {"holds": ev.trail[2].data["holds"]}


def test_the_bound_verified_through_a_linear_class_at_zero():
    ev = check_dana_thm2(make_sequence_instance(N=3, S=2, d=180, H=0, T0=3, conditionals="positive", seed=0))
    assert ev.statement == "dana_thm2" and ev.claimed == CLAIM
    assert ev.verdict == "verified" and ev.certified and ev.method == "exact Gram + arb balls" and ev.prec_bits == 128
    assert trail_of(ev) == [("W: orthonormal rows; exact Gram", "(T2)"), ("RHS of Thm. 2 in balls", "Thm. 2"), T3,
                            ("d_KL(pi, L) = 0 (Prop. 2(a) / Prop. 3)", "dana_prop2/3"), T5]
    assert ev.measured["d_KL(pi, L) <="] == 0.0 and ev.measured["C"] < 0.5 and ev.margin >= 0
    assert ev.reason == "conclusion holds on the instance (hypotheses: none)"
    assert ev.trail[0].data["C < 1/2"] is True and ev.trail[0].data["max |W W^T - I|"] == 0.0


def test_no_gram_matrix_within_c_decides_nothing(monkeypatch):
    """The float step that proposes W patched to a bad one: the check says so, refutes nothing."""
    monkeypatch.setattr(thm2, "gram_construction", lambda N, d, seed: (np.ones((N, d), dtype=np.int64), 1, "all ones"))
    ev = check_dana_thm2(make_sequence_instance(N=3, S=2, d=180, H=0, T0=3, conditionals="positive", seed=0))
    assert ev.verdict == "inconclusive" and not ev.certified and ev.claimed == CLAIM
    assert ev.measured["Gram error <= C"] == "false"
    assert ev.reason == "no sign matrix with ||W W^T - I||_inf <= C found (decides nothing)"
    assert trail_of(ev)[0] == ("W: all ones; exact Gram", "(T2)")


def test_the_steps_t4_and_t5_refuted():
    t4 = control_t4()
    assert t4.statement == "dana_thm2" and t4.verdict == "refuted" and t4.certified
    assert t4.claimed == "(T4) f(t)_j = lambda(t) W_j^T W_g <= C for j != g"
    assert t4.method == "exact Gram + arb bracket of lambda" and t4.prec_bits == 128
    assert list(t4.measured) == ["sequence", "j", "lambda(t) >", "f(t)_j >=", "C"]
    assert t4.reason == ("the proof drops the factor lambda: lambda(t) > lambda_lo (certified) and lambda_lo W_j^T W_g > C"
                         "; refutes the variant (claim='T4': the proof's step f(t)_j <= C on its own), not the statement")
    t5 = control_jensen_step()
    assert t5.statement == "dana_thm2" and t5.verdict == "refuted" and t5.certified
    assert t5.claimed == "(T5) E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H) (the simpler bound's step)"
    assert t5.method == "arb balls" and t5.prec_bits == 128 and t5.measured["step holds"] == "false"
    assert t5.reason == ("b is convex: Jensen gives the opposite inequality; refutes the variant (claim='jensen': the "
                         "simpler bound's step (T5) on its own), not the statement")
