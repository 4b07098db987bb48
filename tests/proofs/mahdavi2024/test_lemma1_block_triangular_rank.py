"""Lemma 1: rank [[A, B], [0, C]] >= rank A + rank C, exact over Q with a
certificate minor; the variant with D != 0 is refuted."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma1_block_triangular_rank import (
    block_rank_certificate,
    check_block_rank_inequality,
    check_lemma1,
    control_lemma1_nonzero_lower_left,
    prove_block_triangular_determinant,
    random_blocks,
)
from verifier.data.strategies import attention_instances, vector_sets


@st.composite
def low_rank_integer_matrices(draw, max_size=5):
    m, n = draw(st.integers(1, max_size)), draw(st.integers(1, max_size))
    k = draw(st.integers(0, min(m, n)))
    X = np.array(draw(st.lists(st.integers(-3, 3), min_size=m * k, max_size=m * k))).reshape(m, k)
    Y = np.array(draw(st.lists(st.integers(-3, 3), min_size=k * n, max_size=k * n))).reshape(k, n)
    return (X @ Y).astype(float)


@given(low_rank_integer_matrices(), low_rank_integer_matrices(), st.data())
def test_block_triangular_rank_with_certificate_minor(A, C, data):
    B = data.draw(vector_sets(m=A.shape[0], d=C.shape[1], kind="small-integers"), label="B")
    cert = block_rank_certificate(A, B, C)
    assert cert["holds"] and cert["rank M"] >= cert["rank A"] + cert["rank C"]
    assert len(cert["minor rows"]) == cert["rank A"] + cert["rank C"]
    assert cert["det minor = det A[I,K] det C[I',K']"]
    assert cert["det minor != 0"] or cert["rank A"] + cert["rank C"] == 0


@given(attention_instances(H=1, n=st.integers(1, 4), degenerate=st.sampled_from([None, "rank-deficient-context"])),
       st.integers(0, 2**16))
def test_lemma1_checker_verifies(inst, seed):
    ev = check_lemma1(inst, seed=seed, trials=6)
    assert ev.verdict == "verified" and ev.certified


def test_symbolic_block_determinant():
    assert prove_block_triangular_determinant().holds


def test_random_family_has_rank_deficient_blocks():
    certs = [block_rank_certificate(*b) for b in random_blocks(np.random.default_rng(0), 24)]
    assert any(c["rank A"] < min(c["sizes"][:2]) for c in certs)
    assert any(c["rank A"] == 0 or c["rank C"] == 0 for c in certs)


def test_negative_control_nonzero_lower_left_is_refuted():
    ev = control_lemma1_nonzero_lower_left()
    assert ev.verdict == "refuted"
    fail = ev.measured["first failure"]
    assert (fail["rank M"], fail["rank A"], fail["rank C"]) == (1, 1, 1)


def test_variant_holds_when_D_is_zero_and_can_fail_otherwise():
    one = [[1]]
    assert check_block_rank_inequality([(one, one, one)]).verdict == "verified"
    assert check_block_rank_inequality([(one, one, one, [[0]])], zero_block=False).verdict == "verified"
    assert check_block_rank_inequality([(one, [[2]], one, [[1 / 2]])], zero_block=False).verdict == "refuted"
