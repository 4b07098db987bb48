"""Structural null vectors (Props. 2 and 5) and their symbolic proofs."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.compare import workprec
from verifier.arith.exact import exact_rank
from verifier.arith.structure import (
    ball_annihilation,
    block_sum_null_vectors,
    prove_block_sums_constant,
    prove_stochastic_blocks_annihilated,
    stochastic_block_null_vectors,
)
from verifier.data.instances import make_instance
from verifier.model.mha_balls import scores_matrix_ball


@given(st.integers(1, 5), st.integers(1, 5))
def test_stochastic_null_vectors_independent(H, n):
    V = stochastic_block_null_vectors(H, n)
    assert len(V) == H - 1
    if V:
        assert exact_rank(np.array(V, dtype=float)) == H - 1


def test_scores_annihilate_null_vectors_in_balls():
    inst = make_instance(H=3, n=3, d=5, context="shared", seed=0)
    rng = np.random.default_rng(0)
    WK, WQ = rng.standard_normal((3, 5, 3)), rng.standard_normal((3, 5, 3))
    with workprec(128):
        S = scores_matrix_ball(inst.contexts, inst.queries, WK, WQ)
        res = ball_annihilation(S, stochastic_block_null_vectors(3, 3))
    assert res.decision.value == "true"


def test_wrong_null_vector_is_not_annihilated():
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    rng = np.random.default_rng(1)
    WK, WQ = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    with workprec(128):
        S = scores_matrix_ball(inst.contexts, inst.queries, WK, WQ)
        res = ball_annihilation(S, [[1, 0, 0, -1, 0, 0]])  # not a null vector
    assert res.decision.value == "false"


def test_symbolic_proofs_hold():
    assert prove_stochastic_blocks_annihilated(2, 3).holds
    assert prove_block_sums_constant(2, 2, 3).holds
    assert len(block_sum_null_vectors(3, 4, zero_sum=True)) == 3
