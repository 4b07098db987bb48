"""The construction's fast paths (proofs/mahdavi2024/proposition1_construction.py)
against the plain computations they replace, on small sizes: the free rows by
one step at a time vs a full pivoted QR, the row-operation coefficients by
projections vs the least squares of the formed rows, and the whole
construction under both (the same basis, a certified rank)."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import proofs.mahdavi2024.proposition1_construction as p1c
from proofs.mahdavi2024.lemma3_rank_one_saturation import build_saturation_vectors, saturation_profile
from proofs.mahdavi2024.proposition1_rank_induction import certify_construction_rank
from verifier.data.instances import make_instance


def _low_rank_rows(seed: int, m: int, d: int, rank: int) -> np.ndarray:
    """m rows of rank ``rank``, singular values 1 .. 0.1: a clear gap to the
    rows' zero directions, so any rank-revealing order finds the same count."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((m, rank)))
    V, _ = np.linalg.qr(rng.standard_normal((d, rank)))
    return (U * np.linspace(1.0, 0.1, rank)) @ V.T


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 12), st.integers(0, 14), st.integers(1, 20))
def test_greedy_free_rows_match_the_pivoted_qr(seed, m, rank, limit):
    d = 16
    rank = min(rank, m)
    res = _low_rank_rows(seed, m, d, rank) if rank else np.zeros((m, d))
    greedy = p1c._greedy_free(res, p1c.FREE_ROW_RTOL, limit)
    _, Rm, _ = scipy.linalg.qr(res.T, mode="economic", pivoting=True)
    k_qr = int(np.sum(np.abs(np.diag(Rm)) > p1c.FREE_ROW_RTOL))
    if greedy is None:  # more free rows than the greedy steps: the caller falls back to the QR
        assert min(rank, limit) > p1c.GREEDY_FREE_ROWS
        return
    assert len(greedy) == min(k_qr, limit, rank)
    assert len(set(greedy)) == len(greedy)
    if greedy:  # the picked rows are independent (their sigma_min is far from 0)
        assert np.linalg.svd(res[greedy], compute_uv=False)[-1] > 1e-3


def test_greedy_free_rows_refuse_dependent_rows():
    """A negative control: rows in a 2-dim span give at most 2 free rows."""
    res = _low_rank_rows(0, 10, 8, 2)
    assert len(p1c._greedy_free(res, p1c.FREE_ROW_RTOL, 10)) == 2
    assert p1c._split_free(np.zeros((5, 8)), 1.0, 5) == []


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 6), st.integers(1, 6), st.integers(1, 4))
def test_row_operation_coefficients_equal_the_least_squares_of_the_formed_rows(seed, nb, nleft, nlow):
    rng = np.random.default_rng(seed)
    T, d = nb + nleft + nlow, 12
    Zh = rng.standard_normal((T, d))
    A = rng.standard_normal((T, nb))
    basis, left = list(range(nb)), list(range(nb, nb + nleft))
    Y_c = rng.standard_normal((nlow, d))
    y_left = Zh[left] - (A[left] @ Zh[basis] if basis else 0.0)
    want = p1c._lstsq_coeffs(y_left, Y_c)
    got = p1c._row_operation_coeffs(Zh, A[left], left, basis, Y_c)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()))


def test_saturation_profile_of_a_shared_context_equals_the_per_example_one():
    inst = make_instance(H=3, n=4, d=7, context="shared", seed=2)
    E, e = inst.contexts, np.asarray(inst.queries)
    v, w = build_saturation_vectors(e, [0, 1], np.random.default_rng(0))
    rows = list(range(2, inst.T))
    shared = saturation_profile(E, e, v, w, rows)
    copied = saturation_profile(np.ascontiguousarray(E), e, v, w, rows)  # per-example path, same values
    assert np.array_equal(shared[0], copied[0])
    np.testing.assert_allclose(shared[1], copied[1], rtol=1e-12, atol=1e-12)
    few = saturation_profile(np.ascontiguousarray(E), e, v, w, rows[:2])  # the copying branch (few rows)
    assert np.array_equal(few[0], copied[0][:2])


@pytest.mark.parametrize("context", ["shared", "random"])
def test_construction_with_and_without_the_greedy_free_rows_certifies_the_same_rank(context, monkeypatch):
    inst = make_instance(H=4, n=5, d=9, context=context, seed=3)
    fast = p1c.build_key_query_weights(inst, seed=0)
    monkeypatch.setattr(p1c, "GREEDY_FREE_ROWS", 0)  # every free-row choice by the full pivoted QR
    slow = p1c.build_key_query_weights(inst, seed=0)
    assert fast.basis == slow.basis
    for con in (fast, slow):
        assert certify_construction_rank(inst, con, con.target).certified_k == con.target
