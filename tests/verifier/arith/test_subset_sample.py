"""The sample's draw and its float screen prefetched on a second thread
(verifier/arith/subset_sample.py): the search takes a prefetch only for
exactly its draw on exactly its vectors, takes it once, and its counts,
witness and log are those of the search without it; the draw is the one
the search makes itself."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import verifier.arith.subset_sample as ss
from verifier.arith.independence import smallest_per_row
from verifier.arith.kruskal import kruskal_rank_at_least
from verifier.arith.subset_sample import draw_subsets, prefetch_sample, take_sample


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    monkeypatch.setattr(ss, "second_core", lambda: True)
    ss._PREFETCHED.clear()
    yield
    ss._PREFETCHED.clear()


def _fields(res):
    return {k: v for k, v in dataclasses.asdict(res).items() if k != "seconds"}


def test_the_draw_is_sorted_distinct_subsets_and_reproducible():
    idx, ends, states = draw_subsets(np.random.default_rng(5), 40, 7, 1000)
    assert idx.shape == (1000, 7) and ends[-1] == 1000 and len(states) == len(ends)
    assert np.all(np.diff(idx, axis=1) > 0) and idx.min() >= 0 and idx.max() < 40
    again, _, _ = draw_subsets(np.random.default_rng(5), 40, 7, 1000)
    assert np.array_equal(idx, again)
    rng = np.random.default_rng(5)  # block by block, as the search drew before: the same subsets
    first = smallest_per_row(rng.random((ends[0], 40)), 7)
    assert np.array_equal(idx[:ends[0]], first)
    assert rng.bit_generator.state == states[0]


def _vectors(m=60, d=26, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d))


def _planted(m=60, d=26, seed=1):
    """Vectors 0..39 span only 10 dimensions, exactly (small integers: float64 holds the products
    exactly): a random 24-subset (16 of them on average) is dependent as soon as it holds 11 of them."""
    rng = np.random.default_rng(seed)
    V = rng.integers(-9, 10, (m, d)).astype(np.float64)
    V[:40] = rng.integers(-3, 4, (40, 10)) @ rng.integers(-3, 4, (10, d))
    return V


@pytest.mark.parametrize("V", [_vectors(), _planted()], ids=["independent", "planted-dependence"])
def test_the_same_result_with_or_without_the_prefetch(V):
    k, kw = 24, dict(samples=400, seed=7)
    plain = kruskal_rank_at_least(V, k, **kw)
    assert prefetch_sample(V, k, **kw)
    pre = kruskal_rank_at_least(V, k, **kw)
    assert not ss._PREFETCHED  # taken
    assert _fields(pre) == _fields(plain)
    assert plain.sampled > 0


def test_the_planted_dependence_is_found_through_the_prefetch():
    V = _planted()
    assert prefetch_sample(V, 24, samples=400, seed=7)
    res = kruskal_rank_at_least(V, 24, samples=400, seed=7)
    assert res.witness is not None and res.upper < 24


def test_a_prefetch_of_other_vectors_or_another_draw_is_not_taken():
    V = _vectors()
    W = V.copy()
    W[3, 4] = np.nextafter(W[3, 4], np.inf)  # one ulp apart
    assert prefetch_sample(V, 24, samples=300, seed=7)
    assert take_sample(W, 24, samples=300, seed=7) is None
    assert take_sample(V, 24, samples=300, seed=8) is None
    assert take_sample(V, 24, samples=299, seed=7) is None
    assert take_sample(V, 23, samples=300, seed=7) is None
    got = take_sample(V, 24, samples=300, seed=7)
    assert got is not None and take_sample(V, 24, samples=300, seed=7) is None  # taken once
    idx, ends, states, screened = got
    assert np.array_equal(idx, draw_subsets(np.random.default_rng(7), 60, 24, 300)[0])
    assert screened.dtype == bool and screened.shape == (300,)


def test_a_prefetch_on_an_array_changed_after_it_started_is_not_taken():
    V = _vectors()
    assert prefetch_sample(V, 24, samples=200, seed=1)
    V[0, 0] += 1.0  # the caller's array changed: the prefetch holds its own copy of the old one
    assert take_sample(V, 24, samples=200, seed=1) is None


def test_a_forged_screen_for_other_vectors_cannot_reach_the_search(monkeypatch):
    """A prefetch whose screen says every subset is independent, filed for the
    independent vectors, is never handed to a search on the planted ones."""
    V, P = _vectors(), _planted()
    assert prefetch_sample(V, 24, samples=400, seed=7)
    job = ss._PREFETCHED[-1]
    idx, ends, states, _ = job.result()
    job.result = lambda: (idx, ends, states, np.ones(len(idx), dtype=bool))
    res = kruskal_rank_at_least(P, 24, samples=400, seed=7)
    assert res.witness is not None


def test_no_prefetch_where_it_cannot_apply(monkeypatch):
    V = _vectors()
    assert not prefetch_sample(V, 0, samples=10, seed=0)
    assert not prefetch_sample(V, 27, samples=10, seed=0)  # k > min(m, d)
    assert not prefetch_sample(V, 5, samples=0, seed=0)
    assert not prefetch_sample(V.astype(object), 5, samples=10, seed=0)
    assert not prefetch_sample(V[0], 5, samples=10, seed=0)
    monkeypatch.setattr(ss, "second_core", lambda: False)
    assert not prefetch_sample(V, 5, samples=10, seed=0)
    assert not ss._PREFETCHED


def test_a_failed_prefetch_leaves_the_search_to_itself(monkeypatch):
    V = _planted()
    plain = kruskal_rank_at_least(V, 24, samples=300, seed=2)

    def broken(*a, **k):
        raise MemoryError("no room on the second thread")

    monkeypatch.setattr(ss, "_draw_and_screen", broken)
    assert prefetch_sample(V, 24, samples=300, seed=2)
    assert take_sample(V, 24, samples=300, seed=2) is None  # failed: nothing handed over
    assert prefetch_sample(V, 24, samples=300, seed=2)
    assert _fields(kruskal_rank_at_least(V, 24, samples=300, seed=2)) == _fields(plain)


def test_only_the_newest_prefetches_are_kept():
    V = _vectors()
    for seed in range(ss.KEEP + 2):
        assert prefetch_sample(V, 24, samples=50, seed=seed)
    assert len(ss._PREFETCHED) == ss.KEEP
    assert take_sample(V, 24, samples=50, seed=0) is None  # dropped
    assert take_sample(V, 24, samples=50, seed=ss.KEEP + 1) is not None


@pytest.mark.parametrize("seed", [None, [1, 2], "generator"])
def test_seeds_other_than_integers_still_draw_and_never_take_a_prefetch(seed):
    V = _vectors()
    rng_seed = np.random.default_rng(3) if seed == "generator" else seed
    assert prefetch_sample(V, 24, samples=100, seed=0)
    res = kruskal_rank_at_least(V, 24, samples=100, seed=rng_seed)
    assert res.sampled == 100 and len(ss._PREFETCHED) == 1  # drawn from its own generator; the prefetch untouched


def test_the_draw_s_blocks_follow_the_chunk_and_the_2e6_numbers(monkeypatch):
    """Blocks of min(2e6 // m, CHUNK_ELEMS // k^2) subsets, at least one, the
    last one cut to what is left (the RNG states a dependent subset rewinds to)."""
    monkeypatch.setattr(ss, "CHUNK_ELEMS", 300 * 4)  # k = 2: 300 subsets per block
    idx, ends, _ = draw_subsets(np.random.default_rng(0), 10, 2, 1000)
    assert idx.shape == (1000, 2) and ends == [300, 600, 900, 1000]
    monkeypatch.setattr(ss, "CHUNK_ELEMS", 3)  # k^2 = 4 > 3: one subset per block, never none
    assert draw_subsets(np.random.default_rng(0), 10, 2, 3)[1] == [1, 2, 3]
    monkeypatch.setattr(ss, "CHUNK_ELEMS", 10**12)  # the 2e6 random numbers decide
    assert draw_subsets(np.random.default_rng(0), 3000, 2, 1000)[1] == [666, 1000]
    assert draw_subsets(np.random.default_rng(0), 3, 1, 666_668)[1] == [666_666, 666_668]  # 2e6 // 3, not 2000001 // 3
    assert draw_subsets(np.random.default_rng(0), 1, 1, 2_000_001)[1] == [2_000_000, 2_000_001]


def test_every_draw_a_search_can_make_is_prefetched():
    V = _vectors()
    assert prefetch_sample(V, 1, samples=1, seed=0) and prefetch_sample(V, min(V.shape), samples=2, seed=0)
    assert all(job.job.threaded for job in ss._PREFETCHED)  # on the second thread, not the caller's
