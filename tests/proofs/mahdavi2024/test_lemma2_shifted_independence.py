"""Lemma 2: x_i + c xbar independent iff 1 + c != 0 (exact ranks, sympy det)."""
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma2_shifted_independence import (
    build_shifted_tokens,
    check_lemma2,
    control_lemma2_minus_one,
    prove_mean_shift_determinant,
)
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances

shifts = st.fractions(min_value=-5, max_value=5, max_denominator=7).filter(lambda c: c != -1)


def test_symbolic_determinant_identities_hold():
    assert all(s.holds for s in prove_mean_shift_determinant())


@given(attention_instances(H=1, n=st.integers(1, 4), context=st.sampled_from(["random", "uniform", "pe"]),
                           T=st.integers(1, 4)), shifts)
def test_shift_by_c_not_minus_one_keeps_independence(inst, c):
    ev = check_lemma2(inst, c=c)
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["min rank after"] == inst.n


@given(attention_instances(H=1, n=st.integers(2, 4), context="random", T=st.integers(1, 3)))
def test_c_minus_one_is_refuted_with_the_all_ones_dependence(inst):
    ev = check_lemma2(inst, c=-1)
    assert ev.verdict == "refuted"
    Xc = build_shifted_tokens(inst.contexts[0], -1)
    assert exact_rank(Xc) == inst.n - 1
    assert exact_matvec_is_zero(Xc.transpose(), [1] * inst.n)


def test_negative_control_c_minus_one():
    ev = control_lemma2_minus_one()
    assert ev.verdict == "refuted"
    dep = [c for c in ev.certificates if c.get("kind") == "exact dependence of the shifted tokens"]
    coefficients = [v for k, v in dep[0].items() if k.startswith("coefficients")][0]
    assert coefficients == ["1"] * len(coefficients)  # sum_i (x_i - xbar) = 0


def test_dependent_context_is_hypotheses_unmet():
    inst = make_instance(H=1, n=3, d=5, T=2, degenerate="rank-deficient-context", seed=3)
    assert check_lemma2(inst).verdict == "hypotheses-unmet"


def test_shift_is_exact_rationals():
    E = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    X = build_shifted_tokens(E, Fraction(1))
    assert [str(x) for x in X.entries()] == ["3/2", "1/2", "0", "1/2", "3/2", "0"]
