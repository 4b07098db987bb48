"""Exact subset independence (verifier/arith/independence.py): the mod-p
elimination agrees with flint, and every answer is exact."""
import numpy as np
from flint import nmod_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.exact import exact_rank
from verifier.arith.independence import SubsetIndependence, _full_rank_mod_p, combination_blocks, smallest_per_row


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


# ------------------------------------------------------------- Gram route

def _with_dependency(seed, m=30, d=40):
    """Gaussian rows rounded to dyadics, row 23 = row 0 + row 1 - row 2 exactly."""
    V = np.round(np.random.default_rng(seed).standard_normal((m, d)) * 2**20) / 2**20
    V[23] = V[0] + V[1] - V[2]
    assert (V[23] - V[0] - V[1] + V[2] == 0).all()
    return V


def _subsets(m, k, B, seed):
    rng, rows = np.random.default_rng(seed), np.delete(np.arange(m), 23)
    idx = np.array([sorted(rng.choice(rows, k, replace=False)) for _ in range(B)])
    return np.vstack([idx, np.arange(k)[None, :]])  # only the last one holds 0, 1, 2 and 23


def _backends():
    from summation_orders import ordered_backends

    from verifier.arith.backend import get_backend
    return [get_backend("numpy"), *ordered_backends()]


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 2**32 - 1))
def test_gram_route_is_one_sided_and_batch_independent_in_every_summation_order(seed):
    """Every subset the Gram route certifies has rank k exactly; a subset
    holding the dependent rows is never certified, in any summation order;
    the batched verdicts equal the one-subset-at-a-time verdicts."""
    from verifier.arith.independence import FLOAT_FROM_K, gram_ball, gram_certified

    V, k = _with_dependency(seed), FLOAT_FROM_K
    idx = _subsets(30, k, 12, seed)
    exact = np.array([exact_rank(V[list(r)]) == k for r in idx])
    dependent = np.array([{0, 1, 2, 23} <= set(r.tolist()) for r in idx])
    assert not exact[dependent].any()
    for b in _backends():
        G, e = gram_ball(V, b)
        ok = gram_certified(G, e, idx, b)
        assert not (ok & ~exact).any() and not ok[dependent].any()
        assert ok[~dependent].all()  # well conditioned Gaussian subsets: decided by the float route
        assert ok.tolist() == [bool(gram_certified(G, e, idx[i:i + 1], b)[0]) for i in range(len(idx))]


def test_gram_route_then_exact_gives_the_exact_answers():
    """SubsetIndependence with the Gram route first: the mask and the witness
    are the exact ones (a summation order as the backend)."""
    from summation_orders import OrderedBackend

    from verifier.arith.independence import FLOAT_FROM_K

    V, k = _with_dependency(11), FLOAT_FROM_K
    idx = _subsets(30, k, 8, 11)
    for backend in (None, OrderedBackend("numpy", "reversed")):
        sets = SubsetIndependence(V, backend=backend)
        ok, dep, b = sets.independent(idx)
        assert b == len(idx) - 1 and ok[:b].all() and dep[0] == list(range(k))
        assert sets._float_certified(idx[:-1]).all()  # the independent ones need no modular test
        T, v = sets.circuit(*dep)
        assert sorted(T) == [0, 1, 2, 23]
        fresh = SubsetIndependence(V, backend=backend)  # a batch the float route decides reads no exact rationals
        assert fresh.independent(idx[:-1])[0].all() and fresh._exact_rows is None
        assert fresh.independent(idx[-1:])[1][0] == list(range(k))  # ... and they are formed when needed


def test_gram_route_leaves_out_of_range_rows_to_the_other_tests():
    from verifier.arith.independence import FLOAT_FROM_K, gram_ball, gram_certified

    V = np.random.default_rng(3).standard_normal((30, 40))
    V[4] *= 2.0**-1040  # a subnormal row: the Gram entries underflow
    idx = np.array([np.arange(FLOAT_FROM_K), np.arange(5, 5 + FLOAT_FROM_K)])
    assert gram_certified(*gram_ball(V), idx).tolist() == [False, True]
    ok, dep, b = SubsetIndependence(V).independent(idx)
    assert ok.tolist() == [True, True] and dep is None


def _argpartition_draw(X, k):
    return np.sort(X.argpartition(k - 1, axis=1)[:, :k], axis=1)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 400), st.integers(2, 700), st.integers(0, 2**32 - 1))
def test_the_threshold_screen_draws_what_argpartition_draws(n, m, seed):
    """smallest_per_row (issue 38): uniform draws as the random subsets are
    drawn, every k: the same subsets, entry for entry, as the full
    argpartition (a seed's draws stay the same draws)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, m))
    X = rng.random((n, m))
    assert np.array_equal(smallest_per_row(X, k), _argpartition_draw(X, k))


def test_the_threshold_screen_with_ties_nan_infinities_and_few_candidates():
    """Rows the screen cannot settle (too few entries below the threshold, a
    tie at the k-th entry) are argpartition's own, so the draws are the same
    here too; NaN sorts last, -inf first; the chosen values are the k smallest
    of each row in every case."""
    rng = np.random.default_rng(7)
    X = np.round(rng.random((500, 300)) * 40) / 40  # many ties at every place
    X[0] = 0.9  # one value: all tie
    X[1, :5] = np.nan
    X[2, :3] = -np.inf
    X[3] = 1.0 - X[3] * 0.01  # every entry far above the threshold: no candidate at all
    X[4, :100] = np.nan  # NaN where candidates would be
    for k in (1, 7, 32, 299):
        got, want = smallest_per_row(X, k), _argpartition_draw(X, k)
        vals = np.sort(np.take_along_axis(X, got, axis=1), axis=1)
        assert np.array_equal(vals, np.sort(np.take_along_axis(X, want, axis=1), axis=1), equal_nan=True), k
        assert (np.diff(got, axis=1) > 0).all()  # sorted, distinct
        assert np.array_equal(got, want), k
    Y = rng.random((3, 5))
    assert np.array_equal(smallest_per_row(Y, 5), _argpartition_draw(Y, 5))  # k = m: every column
    assert smallest_per_row(Y.astype(np.float32), 2).tolist() == _argpartition_draw(Y.astype(np.float32), 2).tolist()
