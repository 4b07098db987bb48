"""Lemma 3: W' = v w^T kills J's queries exactly (20) and separates the
entries off J (21) with an exact positive gap; broken W' and repeated tokens rejected."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma3_rank_one_saturation import (
    build_exact_saturation_vectors,
    build_saturation_vectors,
    check_lemma3,
    control_lemma3_repeated_token,
    control_lemma3_w_not_orthogonal,
    exact_entries,
    min_gap,
)
from verifier.data.strategies import attention_instances


@given(attention_instances(H=1, n=st.integers(2, 4), context=st.sampled_from(["random", "uniform", "pe", "shared"]),
                           T=st.integers(2, 7)), st.integers(0, 2**16), st.data())
def test_lemma3_holds_exactly_for_any_admissible_J(inst, seed, data):
    k = data.draw(st.integers(0, min(inst.T - 1, inst.d - 1, inst.n)), label="|J|")
    ev = check_lemma3(inst, seed=seed, J_size=k)
    assert ev.verdict == "verified" and ev.certified, ev.reason
    assert ev.measured["(20) exact"] and ev.measured["(21) exact"]
    eq20 = ev.certificates[0]
    assert eq20["w^T e^(j) for j in J"] == ["0"] * k
    if inst.T > k:
        assert ev.measured["min gap (exact, as float)"] > 0


@given(attention_instances(H=1, n=st.integers(2, 4), context="random", T=st.integers(3, 6)), st.integers(0, 2**16))
def test_exact_w_is_the_float_w_up_to_scale(inst, seed):
    J = list(range(inst.T - 1))[: inst.d - 1]
    v, w = build_exact_saturation_vectors(inst.queries, J, np.random.default_rng(seed))
    vf, wf = build_saturation_vectors(inst.queries, J, np.random.default_rng(seed))
    wq = np.array([float(x) for x in w])
    assert np.array_equal(v, vf)
    assert np.allclose(wq / np.linalg.norm(wq), wf, atol=1e-9)


def test_min_gap_finds_the_tied_pair():
    from flint import fmpq
    gap, pair = min_gap([fmpq(3), fmpq(1), fmpq(3, 1), fmpq(7)])
    assert gap == 0 and sorted(pair) == [0, 2]


def test_negative_control_w_not_orthogonal_refutes_eq20():
    ev = control_lemma3_w_not_orthogonal()
    assert ev.verdict == "refuted"
    assert ev.measured["(20) exact"] is False and "(20)" in ev.reason
    assert all(x != "0" for x in ev.certificates[0]["w^T e^(j) for j in J"])


def test_negative_control_repeated_token_gap_is_exactly_zero():
    ev = control_lemma3_repeated_token()
    assert ev.verdict == "hypotheses-unmet"
    assert [h.status for h in ev.hypotheses if "Assumption 2" in h.name] == ["refuted"]
    assert ev.measured["(21) exact"] is False
    assert ev.certificates[1]["min gap"] == "0" and sorted(ev.certificates[1]["tokens"]) == [0, 1]


def test_entries_are_exact_products():
    E = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    from flint import fmpq
    assert exact_entries(E, np.array([0.5, 0.0, 0.0]), np.array([1.0, 1.0, 0.0]), [fmpq(2), fmpq(0), fmpq(0)]) \
        == [fmpq(1), fmpq(2)]
