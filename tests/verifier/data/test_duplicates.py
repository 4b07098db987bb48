import numpy as np
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

import verifier.data.duplicates as dup
from verifier.data.duplicates import first_equal, first_equal_all, groups_of


def _reference(a) -> list[int]:
    """The definition, by value comparison of every pair (quadratic)."""
    a = np.asarray(a)
    return [next(s for s in range(t + 1) if np.array_equal(a[s], a[t])) for t in range(a.shape[0])]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(0, 4), st.integers(0, 2**32 - 1))
def test_first_equal_is_the_first_equal_row(T, width, seed):
    rng = np.random.default_rng(seed)
    pool = rng.choice([0.0, -0.0, 1.0, 1.0 + 2.0**-52, -3.5, 2.0**-1074], size=(3, width, 2))
    a = pool[rng.integers(0, 3, size=T)]  # few distinct rows: many duplicates
    assert first_equal(a).tolist() == _reference(a)


def test_values_not_bytes_and_not_rounded():
    a = np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0 + 2.0**-52]])
    assert first_equal(a).tolist() == [0, 0, 2]  # -0.0 == 0.0; one ulp apart: different


def test_hash_collisions_are_split_by_exact_comparison(monkeypatch):
    """Every row hashed alike: the groups must still be the exact ones."""
    monkeypatch.setattr(dup, "_row_hashes", lambda rows, idx, cols=None: np.zeros(len(idx), dtype=np.uint64))
    a = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [5.0, 6.0], [3.0, 4.0]])
    assert first_equal(a).tolist() == [0, 1, 0, 3, 1]


def test_shared_array_is_one_row_without_copies():
    E = np.broadcast_to(np.arange(6.0).reshape(2, 3), (10**7, 2, 3))  # 480 MB if copied
    assert first_equal(E)[[0, -1]].tolist() == [0, 0]


def test_exact_rationals_and_several_arrays():
    q = np.array([[fmpq(1, 3)], [fmpq(2, 6)], [fmpq(1, 2)]], dtype=object)
    assert first_equal(q).tolist() == [0, 0, 2]
    y = np.array([7.0, 8.0, 7.0])
    assert first_equal_all(q, y).tolist() == [0, 1, 2]
    assert first_equal_all(np.array([1, 1, 1]), np.array([2, 2, 3])).tolist() == [0, 0, 2]
    assert groups_of(np.array([0, 1, 0, 1, 4])) == {0: [0, 2], 1: [1, 3], 4: [4]}
