"""Exact subset independence (verifier/arith/independence.py): the mod-p
elimination agrees with flint, and every answer is exact."""
import numpy as np
from flint import nmod_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.exact import exact_rank
from verifier.arith.independence import SubsetIndependence, _full_rank_mod_p, combination_blocks


def test_rank_mod_p_matches_flint():
    rng = np.random.default_rng(4)
    p = 1048573
    for k in (1, 2, 3, 5):
        Y = rng.integers(0, 7, (300, k, k)) % p  # small entries: many singular
        ok = _full_rank_mod_p(Y, p)
        ref = [nmod_mat(k, k, [int(x) for x in M.ravel()], p).rank() == k for M in Y]
        assert ok.tolist() == ref


@settings(deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_every_subset_answer_is_exact(m, k, seed):
    """Small integer vectors (many dependencies): the batched answer equals
    the exact rank of every subset, and each dependency carries a true
    circuit."""
    rng = np.random.default_rng(seed)
    V = rng.integers(-1, 2, (m, 3)).astype(float)
    if k > m:
        return
    sets = SubsetIndependence(V)
    idx = np.vstack(list(combination_blocks(m, k, 1000)))
    ok, dep, b = sets.independent(idx)
    for row, flag in zip(idx[:b], ok[:b]):
        assert flag == (exact_rank(V[list(row)]) == k)
    if dep is not None:
        T, v = sets.circuit(*dep)
        assert exact_rank(V[T]) == len(T) - 1 and all(c != 0 for c in v)
