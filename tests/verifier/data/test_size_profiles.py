"""Sizes drawn up to real models' (verifier/data/size_profiles.py): every
draw within its bounds with T = H(r-1)+1 >= n, both ends of each size drawn,
the same seed giving the same draws, and a budget that shrinks a draw until
its estimated cost fits."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from verifier.data.size_profiles import (
    CONTEXTS,
    REAL_MAX,
    SizeDraw,
    fit_to_budget,
    real_sizes,
    seeded_real_sizes,
    smallest_head_dim,
)

SMALL = dict(max_H=4, max_n=5, max_d=8)


def within(s: SizeDraw, *, max_H: int, max_n: int, max_d: int) -> bool:
    return (1 <= s.H <= max_H and 2 <= s.n <= max_n and s.n < s.d <= max_d
            and smallest_head_dim(s.H, s.n) <= s.d_h <= s.n and s.context in CONTEXTS
            and s.T == s.H * (min(s.n, s.d_h) - 1) + 1 >= s.n and 0 <= s.seed < 2**31)


def toy_cost(s: SizeDraw) -> float:
    """Grows with every size (as the report's cost model must)."""
    return s.T * s.H * s.n * s.d


@settings(max_examples=60, database=None, deadline=None)
@given(real_sizes(**SMALL))
def test_draws_respect_their_bounds(s):
    assert within(s, **SMALL) and s.drawn is None


@settings(max_examples=60, database=None, deadline=None)
@given(real_sizes(**SMALL, cost=toy_cost, cap=60))
def test_a_budget_shrinks_a_draw_until_it_fits(s):
    assert within(s, **SMALL)
    if s.drawn is not None:  # shrunk: never grown, and it fits (or is as small as it gets)
        H, n, d, d_h = (s.drawn[k] for k in range(4))
        assert s.H <= H and s.n <= n and s.d <= d
        assert toy_cost(s) <= 60 or (s.H, s.n, s.d) == (1, 2, 3)
    else:
        assert toy_cost(s) <= 60


@settings(max_examples=40, database=None, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_seeded_draws_are_the_same_for_the_same_seed(seed):
    a = seeded_real_sizes(seed=seed, count=5, **SMALL)
    assert a == seeded_real_sizes(seed=seed, count=5, **SMALL)
    assert all(within(s, **SMALL) for s in a)


def test_the_first_draws_pin_both_ends():
    a = seeded_real_sizes(seed=7, count=3)
    assert a[0].H == REAL_MAX["H"]
    assert (a[1].n, a[1].d) == (REAL_MAX["n"], REAL_MAX["d"])
    assert (a[2].H, a[2].n, a[2].d, a[2].d_h) == (1, 2, 3, 2)


def test_both_ends_of_every_size_come_up():
    draws = seeded_real_sizes(seed=0, count=300)
    for k, lo in (("H", 1), ("n", 2)):
        values = [getattr(s, k) for s in draws[3:]]
        assert values.count(lo) > 30 and values.count(REAL_MAX[k]) > 30
        assert any(lo < v < REAL_MAX[k] for v in values)
    assert sum(s.d == REAL_MAX["d"] for s in draws) > 30
    assert {s.context for s in draws} == set(CONTEXTS)


def test_pinned_sizes_shrink_last():
    big = SizeDraw(H=60, n=197, d=768, d_h=197, context="shared", seed=0)
    kept = fit_to_budget(big, toy_cost, 1e8, keep=("n", "d"))
    assert (kept.n, kept.d) == (197, 768) and kept.H < 60 and kept.drawn == (60, 197, 768, 197)
    assert toy_cost(kept) <= 1e8
    tiny = fit_to_budget(big, toy_cost, 0.0, keep=("n", "d"))  # nothing fits: as small as it gets
    assert (tiny.H, tiny.n, tiny.d, tiny.d_h) == (1, 2, 3, 2)


@pytest.mark.parametrize("kwargs", [dict(max_n=8, max_d=8), dict(max_H=0), dict(max_n=1), dict(max_d=2.5),
                                    dict(cost=toy_cost)])
def test_impossible_bounds_are_refused(kwargs):
    with pytest.raises(InvalidArgument):
        real_sizes(**kwargs)
