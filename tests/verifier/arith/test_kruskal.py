"""Kruskal rank (verifier/arith/kruskal.py) against a brute-force exact reference.

Properties: exhaustion equals the reference; a witness is a real circuit
(checked exactly, independently of the module); random-subset evidence never
raises the certified lower bound; the bounds always bracket the truth.
"""
import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.arith.kruskal import (
    general_position,
    kruskal_rank,
    kruskal_rank_at_least,
)
from verifier.errors import InvalidInstance


def kruskal_reference(V: np.ndarray) -> int:
    """Definition 1 by brute force over Q: the smallest dependent subset size - 1."""
    m, d = V.shape
    for k in range(1, m + 1):
        for S in itertools.combinations(range(m), k):
            if exact_rank(V[list(S)]) < k:
                return k - 1
    return m


def assert_witness_is_a_circuit(V, res):
    """The witness is dependent (exact combination), minimal, and gives upper."""
    W = list(res.witness)
    c = list(res.witness_coefficients)
    assert len(W) == res.upper + 1
    assert all(x != "0" for x in c)
    assert exact_matvec_is_zero(V[W].T, c)  # sum_i c_i v_i = 0 over Q
    assert exact_rank(V[W]) == len(W) - 1  # a circuit: dropping any one leaves it independent


@st.composite
def vector_sets(draw, *, max_m=7, max_d=4, entries=(-2, 2)):
    """Small integer vectors: many exact dependencies (zeros, parallels, ...)."""
    m = draw(st.integers(1, max_m))
    d = draw(st.integers(1, max_d))
    rows = draw(st.lists(st.lists(st.integers(*entries), min_size=d, max_size=d), min_size=m, max_size=m))
    return np.array(rows, dtype=np.float64).reshape(m, d)


@st.composite
def planted_triples(draw, *, d=5):
    """m random integer vectors in R^5 with v_k = a v_i + b v_j planted (a, b != 0)."""
    m = draw(st.integers(4, 10))
    V = np.array(draw(st.lists(st.lists(st.integers(-20, 20), min_size=d, max_size=d),
                               min_size=m, max_size=m)), dtype=np.float64)
    i, j, k = draw(st.permutations(range(m)))[:3]
    a = draw(st.integers(1, 4) | st.integers(-4, -1))
    b = draw(st.integers(1, 4) | st.integers(-4, -1))
    V[k] = a * V[i] + b * V[j]
    return V, (i, j, k)


@settings(deadline=None)
@given(vector_sets())
def test_exhaustion_matches_brute_force(V):
    ref = kruskal_reference(V)
    res = kruskal_rank(V)
    assert res.exact and res.exhausted
    assert res.lower == res.upper == ref
    if res.upper < min(V.shape):
        assert_witness_is_a_circuit(V, res)
    for k in range(0, min(V.shape) + 2):
        assert res.at_least(k) is (Decision.TRUE if k <= ref else Decision.FALSE)
        focused = kruskal_rank_at_least(V, k)
        assert focused.at_least(k) is (Decision.TRUE if k <= ref else Decision.FALSE)
        assert focused.lower <= ref <= focused.upper


@settings(deadline=None)
@given(planted_triples())
def test_hidden_dependent_triple_is_found_with_its_witness(case):
    V, (i, j, k) = case
    res = kruskal_rank(V)
    assert res.upper <= 2
    assert res.witness is not None
    assert_witness_is_a_circuit(V, res)
    assert res.lower == res.upper == kruskal_reference(V)
    assert kruskal_rank_at_least(V, 3).at_least(3) is Decision.FALSE


@settings(deadline=None)
@given(vector_sets(max_m=9, max_d=4, entries=(-3, 3)), st.integers(0, 40), st.integers(0, 3))
def test_sampling_never_raises_the_certified_lower_bound(V, limit, seed):
    ref = kruskal_reference(V)
    no_samples = kruskal_rank(V, exhaustive_limit=limit, samples=0, seed=seed)
    sampled = kruskal_rank(V, exhaustive_limit=limit, samples=300, seed=seed)
    for res in (no_samples, sampled):
        assert res.lower <= ref <= res.upper
        assert res.sampled_independent <= res.sampled
        if res.witness is not None:
            assert_witness_is_a_circuit(V, res)
    if no_samples.upper == sampled.upper:  # same upper => same levels tried
        assert sampled.lower == no_samples.lower
    # with nothing affordable, only the zero-vector check certifies anything -- and, when m <= d, the one rank
    # certificate of the whole set (every subset of independent vectors is independent): then kr = m truly
    zero = kruskal_rank(V, exhaustive_limit=0, samples=500, seed=seed)
    assert zero.lower <= 1
    for k in range(2, min(V.shape) + 1):
        res = kruskal_rank_at_least(V, k, exhaustive_limit=0, samples=200)
        if res.at_least(k) is Decision.TRUE:
            assert V.shape[0] <= V.shape[1] and res.rank_certificate is not None and ref == V.shape[0]
            assert res.sampled == 0  # nothing sampled: all subsets are certified


def test_evidence_is_reported_as_evidence():
    V = np.random.default_rng(0).standard_normal((40, 8))
    res = kruskal_rank(V, samples=1000)
    assert res.lower < res.upper == 8 and not res.exact and not res.exhausted
    assert res.sampled == res.sampled_independent == 1000 and res.sample_size == 8
    assert "evidence" in res.method
    assert res.at_least(8) is Decision.UNDECIDED
    d = res.to_dict()
    assert d["exact"] is False and d["witness"] is None


def test_witness_hunt_in_large_sets():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((300, 20))
    V[250] = -0.5 * V[17]  # parallel pair, exact in float64
    res = kruskal_rank_at_least(V, 10, samples=100)
    assert res.at_least(10) is Decision.FALSE and res.upper == 1
    assert res.witness == (17, 250)
    assert_witness_is_a_circuit(V, res)
    # all vectors in a 5-dimensional subspace, exactly (integer coordinates)
    B = rng.integers(-3, 4, (5, 20))
    W = (rng.integers(-3, 4, (200, 5)) @ B).astype(np.float64)
    res = kruskal_rank(W, samples=100)
    assert res.upper <= 5 and res.witness is not None
    assert_witness_is_a_circuit(W, res)


def test_general_position_and_speed():
    V = np.random.default_rng(1).standard_normal((30, 8))
    t = time.perf_counter()
    res = kruskal_rank(V)
    assert time.perf_counter() - t < 5
    assert res.lower >= 3 and res.upper == 8
    small = general_position(np.random.default_rng(2).standard_normal((12, 4)))
    assert small.at_least(4) is Decision.TRUE and small.exact


def test_invalid_input():
    with pytest.raises(InvalidInstance):
        kruskal_rank(np.ones(3))
    with pytest.raises(InvalidInstance):
        kruskal_rank(np.array([[np.nan, 1.0]]))
    with pytest.raises(InvalidInstance):
        kruskal_rank_at_least(np.eye(3), -1)
    assert kruskal_rank(np.zeros((0, 3))).upper == 0


def _block_by_block(V, k, samples, seed):
    """The paper's sampling one block at a time (the search before batching),
    as the reference for the batched search's subsets and counts."""
    from verifier.arith import kruskal as K
    from verifier.arith.kruskal import _Search

    s = _Search(V, 0, samples, seed)
    s.zero_vectors()
    s.hunt()
    left, target, sampled = samples, k, []
    while left > 0 and s.lower < target <= s.upper:
        n = min(left, max(1, 2_000_000 // s.m), max(1, K.CHUNK_ELEMS // (target * target)))
        idx = np.sort(s.rng.random((n, s.m)).argpartition(target - 1, axis=1)[:, :target], axis=1)
        ok, dep, b = s.exact.independent(idx)
        n = b + 1 if dep is not None else n
        sampled.append((target, n, int(ok[:n].sum())))
        left -= n
        if dep is not None:
            s.record_witness(dep, "sample")
            target = s.upper
    return s.upper, s.witness, sampled, s.rng.bit_generator.state


def test_batched_sampling_draws_and_counts_as_block_by_block(monkeypatch):
    """A dependence only random subsets find (rows 0, 1, 2, 30): the batched
    search finds the same circuit and, after it, draws the same subsets."""
    import verifier.arith.kruskal as K
    import verifier.arith.subset_sample as S

    monkeypatch.setattr(K, "CHUNK_ELEMS", 25 * 25 * 7)  # blocks of 7 subsets: the witness falls in the first
    monkeypatch.setattr(S, "CHUNK_ELEMS", 25 * 25 * 7)  # (the search draws them with subset_sample.draw_subsets)
    V = np.round(np.random.default_rng(2).standard_normal((40, 30)) * 2**10) / 2**10
    V[30] = V[0] + V[1] - V[2]
    from verifier.arith.kruskal import _Search

    upper, witness, blocks, state = _block_by_block(V, 25, 60, 0)
    s = _Search(V, 0, 60, 0)
    s.zero_vectors()
    s.hunt()
    s.sample(25)
    assert s.rng.bit_generator.state == state  # the same random numbers drawn, no more
    r = s.result()
    assert witness == (0, 1, 2, 30) and (r.upper, r.witness) == (upper, witness)
    assert blocks[-1][0] == upper and (r.sample_size, r.sampled, r.sampled_independent) == (
        upper, sum(n for t, n, _ in blocks if t == upper), sum(i for t, _, i in blocks if t == upper))


def test_integers_beyond_2_53_are_read_exactly():
    """int64 rows float64 would round: the search reads them exactly (the
    float copy [2^53, 3 2^53; 1, 3] would hide nothing here, but
    [2^53 + 1, 1; 2^53, 1] rounds to two parallel rows)."""
    from verifier.arith.kruskal import kruskal_rank_at_least

    dep = np.array([[2**53 + 1, 3 * 2**53 + 3], [1, 3]], dtype=np.int64)
    r = kruskal_rank_at_least(dep, 2)
    assert r.at_least(2).value == "false" and r.witness == (0, 1)
    ind = np.array([[2**53 + 1, 1], [2**53, 1]], dtype=np.int64)  # det = 1; rounded: two equal rows
    assert kruskal_rank_at_least(ind, 2).at_least(2).value == "true"
