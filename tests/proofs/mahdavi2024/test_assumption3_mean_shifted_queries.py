"""Assumption 3: Kruskal rank of ebar^(t) = e^(t) + (1/n) E^(t)^T 1_n >= n.
ebar is formed exactly (compared with Python Fractions), the verdict agrees
with a sympy oracle, exact planted equalities and triples are found, large T
is inconclusive with evidence, and the negative control is rejected."""
import itertools
from fractions import Fraction

import numpy as np
import sympy
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.assumption1_query_kruskal_rank import check_assumption1
from proofs.mahdavi2024.assumption2_context_rank import check_assumption2
from proofs.mahdavi2024.assumption3_mean_shifted_queries import (
    build_equal_mean_shifted_pair,
    build_mean_shifted_queries,
    check_assumption3,
)
from verifier.arith.exact import exact_matvec_is_zero
from verifier.data.instances import from_arrays, make_instance
from verifier.data.strategies import attention_instances
from verifier.statements import registry
from verifier.statements.runner import run_control


def ebar_fractions(inst):
    """ebar^(t) with Python Fractions: an implementation independent of flint."""
    n = inst.n
    return [[Fraction(inst.queries[t, j]) + sum(Fraction(inst.contexts[t, i, j]) for i in range(n)) / n
             for j in range(inst.d)] for t in range(inst.T)]


def oracle(inst) -> bool:
    ebar = ebar_fractions(inst)
    n, T = inst.n, inst.T
    return T >= n and all(
        sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in ebar[t]] for t in S]).rank() == n
        for S in itertools.combinations(range(T), n))


@given(attention_instances(T=st.integers(1, 4)))
def test_mean_shifted_queries_are_exact(inst):
    U = build_mean_shifted_queries(inst)
    ebar = ebar_fractions(inst)
    for t in range(inst.T):
        for j in range(inst.d):
            x = U[t, j]
            assert Fraction(int(x.p), int(x.q)) == inst.n * ebar[t][j]


@given(attention_instances(T=st.integers(1, 6), n=st.integers(2, 3)))
def test_verdict_matches_the_oracle(inst):
    ev = check_assumption3(inst)
    assert ev.certified and ev.hypotheses == ()
    assert ev.verdict == ("verified" if oracle(inst) else "refuted")


@given(st.integers(0, 2**16))
def test_equal_mean_shifted_pair_is_refuted(seed):
    inst = build_equal_mean_shifted_pair(seed)
    assert not np.array_equal(inst.queries[0], inst.queries[1])
    ev = check_assumption3(inst)
    assert ev.verdict == "refuted"
    w = next(c for c in ev.certificates if c["kind"] == "witness")
    assert w["subset"] == [0, 1]
    # ...while Assumptions 1 and 2 hold on the same data: only Assumption 3 is broken
    assert check_assumption1(inst).verdict == "verified"
    assert check_assumption2(inst).verdict == "verified"


@given(st.integers(0, 2**16))
def test_planted_triple_found_by_exhaustion(seed):
    """n = 4 (1/n is dyadic): ebar^(3) = ebar^(1) - 2 ebar^(2) exactly; no
    two ebar are parallel, so only the exhaustion can find it."""
    rng = np.random.default_rng(seed)
    T, n, d = 7, 4, 6
    E = np.round(rng.standard_normal((T, n, d)) * 256) / 256
    e = np.round(rng.standard_normal((T, d)) * 256) / 256
    mean = E.mean(axis=1)  # exact: sums of grid values divided by 4
    e[3] = (e[1] + mean[1]) - 2 * (e[2] + mean[2]) - mean[3]
    inst = from_arrays(E, e)
    ev = check_assumption3(inst)
    assert ev.verdict == "refuted"
    w = next(c for c in ev.certificates if c["kind"] == "witness")
    assert set(w["subset"]) >= {1, 2, 3} and len(w["subset"]) == n
    U = build_mean_shifted_queries(inst)
    assert exact_matvec_is_zero(U[w["subset"]].T, w["coefficients"])
    assert check_assumption1(inst).verdict == "verified"


def test_large_T_is_inconclusive_with_sampled_evidence():
    inst = make_instance(H=40, n=3, d=6, seed=0)  # T = 81
    ev = check_assumption3(inst, samples=200)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.measured["sampled_independent"] == "200/200"


def test_too_few_examples_is_refuted_by_definition1():
    inst = make_instance(H=1, n=3, d=5, d_h=3, seed=0)  # T = 3 = n: fine
    assert check_assumption3(inst).verdict == "verified"
    small = inst.subset([0, 1])
    ev = check_assumption3(small)
    assert ev.verdict == "refuted" and "Definition 1" in ev.reason


def test_negative_controls_are_rejected():
    controls = registry.get("assumption3").controls
    assert controls
    for control in controls:
        ev, rejected = run_control("assumption3", control)
        assert rejected, (control.description, ev.verdict, ev.reason)
