"""Definition 1: the checker's Kruskal rank against a brute-force oracle
(every subset, exact rank), claims one off in either direction refuted, the
planted dependencies found, and the negative controls rejected."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.definition1_kruskal_rank import check_definition1, planted_triple
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.data.strategies import attention_instances, planted_dependencies, vector_sets
from verifier.errors import InvalidInstance
from verifier.statements import registry
from verifier.statements.runner import run_control


def oracle_kruskal_rank(V) -> int:
    """Definition 1 read literally: the largest k with every k-subset independent."""
    m, d = V.shape
    k = 0
    for j in range(1, min(m, d) + 1):
        if all(exact_rank(V[list(S)]) == j for S in itertools.combinations(range(m), j)):
            k = j
        else:
            break
    return k


def assert_witness_valid(V, ev):
    for cert in ev.certificates:
        if cert["kind"] == "witness":
            rows, coeffs = cert["subset"], cert["coefficients"]
            assert any(c != "0" for c in coeffs)
            assert exact_matvec_is_zero(V[rows].T, coeffs)


@given(vector_sets())
def test_kruskal_rank_matches_the_oracle(V):
    ev = check_definition1(None, vectors=V)
    kr = oracle_kruskal_rank(V)
    assert ev.verdict == "verified" and ev.certified
    assert ev.claimed == {"kruskal_rank": kr}
    assert ev.measured["kruskal_lower"] == ev.measured["kruskal_upper"] == kr
    assert_witness_valid(V, ev)
    kinds = {c["kind"] for c in ev.certificates}
    assert ("witness" in kinds) == (kr < min(V.shape))


@given(vector_sets(), st.sampled_from([-1, 1]))
def test_a_claim_one_off_is_refuted(V, off):
    kr = oracle_kruskal_rank(V)
    claim = kr + off
    if claim < 0:
        return
    ev = check_definition1(None, vectors=V, claimed=claim)
    assert ev.verdict == "refuted" and ev.certified
    if off == 1 and claim <= min(V.shape):
        assert any(c["kind"] == "witness" for c in ev.certificates)
    assert check_definition1(None, vectors=V, claimed=kr).verdict == "verified"


@given(planted_dependencies())
def test_planted_dependency_bounds_the_rank(planted):
    V, support, _ = planted
    ev = check_definition1(None, vectors=V, claimed=len(support))
    assert ev.verdict == "refuted"
    assert ev.measured["kruskal_upper"] <= len(support) - 1
    witness = next(c for c in ev.certificates if c["kind"] == "witness")
    assert len(witness["subset"]) <= len(support)
    assert_witness_valid(V, ev)


@given(attention_instances(T=st.integers(1, 8)))
def test_gaussian_queries_have_maximal_kruskal_rank(inst):
    ev = check_definition1(inst)
    assert ev.verdict == "verified"
    assert ev.claimed == {"kruskal_rank": min(inst.T, inst.d)}
    assert ev.instance["sha256_16"] == inst.fingerprint() and ev.instance["vectors"] == "queries"


@given(attention_instances(T=st.integers(1, 3), context="random"))
def test_context_tokens_as_the_vector_set(inst):
    ev = check_definition1(inst, vectors="tokens")
    V = inst.contexts.reshape(-1, inst.d)
    assert ev.claimed == {"kruskal_rank": oracle_kruskal_rank(V)}


def test_hidden_triple_witness():
    V = planted_triple(0)
    ev = check_definition1(None, vectors=V)
    assert ev.verdict == "verified" and ev.claimed == {"kruskal_rank": 2}
    witness = next(c for c in ev.certificates if c["kind"] == "witness")
    assert witness["subset"] == [0, 1, 2] and witness["coefficients"] == ["1", "2", "-1"]


def test_large_set_gives_bounds_only():
    V = np.random.default_rng(0).standard_normal((40, 6))
    ev = check_definition1(None, vectors=V, exhaustive_limit=100, samples=50)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.measured["kruskal_lower"] < ev.measured["kruskal_upper"] == 6
    assert "exhaustive_limit" in ev.reason


@pytest.mark.parametrize("vectors, claimed", [
    (np.zeros((0, 3)), None), (np.zeros(3), None), (np.array([[np.nan, 1.0]]), None),
    ("bogus", None), (np.eye(3), -1), (np.eye(3), 1.5),
])
def test_bad_input_is_rejected(vectors, claimed):
    from verifier.data.instances import make_instance

    with pytest.raises(InvalidInstance):
        check_definition1(make_instance(), vectors=vectors, claimed=claimed)


def test_negative_controls_are_rejected():
    st_ = registry.get("definition1")
    assert len(st_.controls) >= 2
    for control in st_.controls:
        ev, rejected = run_control("definition1", control)
        assert rejected, (control.description, ev.verdict, ev.reason)
        assert ev.certified and ev.certificates
