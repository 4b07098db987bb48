"""Definition 2: general position decided as the oracle says (Kruskal rank
= min(m, d) by brute force), Gaussian queries in general position, planted
dependencies refuted with an exact witness, negative controls rejected."""
import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.definition2_general_position import check_definition2
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances, planted_dependencies, vector_sets
from verifier.statements import registry
from verifier.statements.runner import run_control


def oracle_general_position(V) -> bool:
    m, d = V.shape
    k = min(m, d)
    return all(exact_rank(V[list(S)]) == k for S in itertools.combinations(range(m), k))


def _witness(ev):
    return next(c for c in ev.certificates if c["kind"] == "witness")


@given(vector_sets())
def test_general_position_matches_the_oracle(V):
    ev = check_definition2(None, vectors=V)
    assert ev.certified
    assert ev.verdict == ("verified" if oracle_general_position(V) else "refuted")
    if ev.verdict == "refuted":
        w = _witness(ev)
        assert len(w["subset"]) <= min(V.shape)
        assert exact_matvec_is_zero(V[w["subset"]].T, w["coefficients"])


@given(planted_dependencies())
def test_planted_dependency_is_refuted(planted):
    V, support, _ = planted
    ev = check_definition2(None, vectors=V)
    assert ev.verdict == "refuted" and ev.exit_code == 1
    assert len(_witness(ev)["subset"]) <= len(support)


@given(attention_instances(T=st.integers(1, 8)))
def test_gaussian_queries_are_in_general_position(inst):
    ev = check_definition2(inst)
    assert ev.verdict == "verified"
    assert ev.certificates[0]["kind"] == "exhaustion"
    assert ev.certificates[0]["level"] == min(inst.T, inst.d)


@given(attention_instances(degenerate=st.sampled_from(["repeated-queries", "cls-queries"]),
                           T=st.integers(2, 6)))
def test_equal_queries_are_not_in_general_position(inst):
    ev = check_definition2(inst)
    assert ev.verdict == "refuted"
    assert len(_witness(ev)["subset"]) == 2


def test_too_many_subsets_is_inconclusive_with_evidence():
    inst = make_instance(H=40, n=3, d=6, seed=1)  # T = 81, C(81, 6) subsets
    ev = check_definition2(inst, samples=200)
    assert ev.verdict == "inconclusive" and not ev.certified and ev.exit_code == 3
    assert ev.measured["sampled_independent"] == "200/200"
    assert "C(81,6)" in ev.reason


def test_general_position_fails_while_assumption1_holds():
    """Sec. 5.1's point: Kruskal rank n (Assumption 1) without general position."""
    from proofs.mahdavi2024.assumption1_query_kruskal_rank import check_assumption1

    rng = np.random.default_rng(3)
    basis = np.round(rng.standard_normal((3, 6)) * 64) / 64
    coeffs = np.round(rng.standard_normal((7, 3)) * 64) / 64
    inst = make_instance(H=2, n=3, d=6, T=7, seed=3).replace(queries=coeffs @ basis)  # exact
    assert check_definition2(inst).verdict == "refuted"
    assert check_assumption1(inst).verdict == "verified"


def test_negative_controls_are_rejected():
    controls = registry.get("definition2").controls
    assert controls
    for control in controls:
        ev, rejected = run_control("definition2", control)
        assert rejected, (control.description, ev.verdict, ev.reason)
