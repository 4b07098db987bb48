"""verifier/arith/gram_blocks.py: many Gram blocks proved positive definite at
once (issue 38), held against exact rationals in every summation order of
tests/summation_orders.py, on another machine, and with wrong factors.

* a certified subset (stack matrix) is EXACTLY independent (flint rank over
  Q): planted exact dependencies on a dyadic grid (which a naive float test
  may accept), one-ulp dependencies, rows 2^300 apart in scale, subnormal
  rows, both signs;
* ``factor_defect`` is at least the exact row sums of ``|fl(A - cI) - L L^T|``
  plus the diagonal's rounding, for the factor L it used (LAPACK's, another
  machine's, or a wrong one), in every order;
* ``lower_product``'s lower triangle is within ``gamma_k |L||L|^T + 3 k UL``
  of the exact ``L L^T``;
* the batched verdicts agree with the per-subset path and the exact truth
  (SubsetIndependence with the Gram route, without it, and exact ranks).
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from another_machine import on_another_machine
from flint import fmpq, fmpq_mat
from float_truth import F, exact_product
from summation_orders import ALL_ORDERS, ORDERS, summation_order

import verifier.arith.gram_blocks as gb
from verifier.arith.backend import get_backend
from verifier.arith.float_bounds import UL, gamma
from verifier.arith.independence import SubsetIndependence, gram_ball, gram_certified


def exact_rank(V, rows=None) -> int:
    V = np.asarray(V, dtype=np.float64)
    rows = range(len(V)) if rows is None else [int(r) for r in rows]
    rows = list(rows)
    return fmpq_mat(len(rows), V.shape[1], [fmpq(*F(x).as_integer_ratio()) for r in rows for x in V[r]]).rank()


def planted(seed=0, m=14, d=9, scaled=True):
    """Rows on the grid 2^-10 Z: rows 3, 8, 12 exact combinations of others (large cancellation in row 12),
    row 5 one ulp away from row 1 + row 2 (exactly independent); ``scaled``: rows 10-11 scaled by 2^300 and
    2^-300, row 13 subnormal-sized."""
    rng = np.random.default_rng(seed)
    V = np.round(rng.standard_normal((m, d)) * 1024) / 1024
    V[3] = V[0] - 2 * V[1]
    V[8] = 3 * V[2] + V[4] - V[6]
    V[12] = 2.0**20 * V[7] - 2.0**20 * V[9] + V[0]
    V[5] = V[1] + V[2]
    V[5, 0] = np.nextafter(V[5, 0], np.inf)
    if scaled:
        V[10] *= 2.0**300
        V[11] *= 2.0**-300
        V[13] = V[13] * 2.0**-1000
    return V


def subsets(m, k, count=60, seed=1):
    rng = np.random.default_rng(seed)
    every = list(itertools.combinations(range(m), k))
    pick = rng.choice(len(every), size=min(count, len(every)), replace=False)
    return np.array([every[i] for i in sorted(pick)], dtype=np.intp)


# ------------------------------------------------------ subsets: soundness

@pytest.mark.parametrize("order", ALL_ORDERS)
@pytest.mark.parametrize("scaled", [True, False])
def test_a_certified_subset_is_exactly_independent_in_every_order(order, scaled):
    """Rows on one scale (scaled=False: rows 10, 11, 13 kept at the grid's
    scale), and rows 2^300 apart (whose Gram ball's row bounds e_i, the
    largest error in row i, are set by the huge row: little is certified
    there, never a dependent subset)."""
    V = planted(scaled=scaled)
    with summation_order(order):
        G, e = gram_ball(V)
        for k in (1, 2, 3, 4, 6):
            idx = subsets(len(V), k, count=40 if order != "fma" else 12, seed=k)
            ok = gb.subsets_certified(G, e, idx)
            truth = np.array([exact_rank(V, r) == k for r in idx])
            assert ok.dtype == bool and not (ok & ~truth).any(), (order, k, idx[ok & ~truth])
            if not scaled:  # not vacuous: subsets of the generic rows (none planted) are certified
                generic = np.array([not set(r) & {3, 5, 8, 12} for r in idx.tolist()])
                assert ok[generic].all() and generic.any(), (order, k)


def test_planted_dependencies_are_dependent_and_near_ones_independent():
    V = planted()
    assert exact_rank(V, [0, 1, 3]) == 2 and exact_rank(V, [2, 4, 6, 8]) == 3
    assert exact_rank(V, [0, 7, 9, 12]) == 3 and exact_rank(V, [1, 2, 5]) == 3


@pytest.mark.parametrize("seed", range(4))
def test_a_certified_subset_is_exactly_independent_on_another_machine(seed):
    V = planted(seed=seed)
    idx = np.vstack([subsets(len(V), k, count=30, seed=seed + k)[:, :3] for k in (3, 4)])
    with on_another_machine(ulps=4, seed=seed):
        ok = gram_certified(*gram_ball(V), idx)
    truth = np.array([exact_rank(V, r) == 3 for r in idx])
    assert not (ok & ~truth).any()


def test_each_subset_is_judged_on_its_own_in_a_batch_of_any_size(monkeypatch):
    """Batches of 1, 2, 5 subsets and all at once: the same verdicts, every
    certified one exactly independent (a subset's eps, shift and factor are
    its own, never its batch's)."""
    V = planted(seed=5, scaled=False)
    idx = subsets(len(V), 4, count=50, seed=9)
    G, e = gram_ball(V)
    want = gb.subsets_certified(G, e, idx)
    for per in (1, 2, 5):
        monkeypatch.setattr(gb, "BLOCK_ENTRIES", per * 16)
        assert gb.subsets_certified(G, e, idx).tolist() == want.tolist()
    truth = np.array([exact_rank(V, r) == 4 for r in idx])
    assert not (want & ~truth).any() and want[truth].any()


# --------------------------------------------------- the defect, exactly

def _exact_residual_rows(As, L) -> Fraction:
    """max_i sum_j |As_ij - (L L^T)_ij| exactly (As symmetric from its lower triangle)."""
    k = As.shape[0]
    P = exact_product(L, L.T)
    S = [[F(As[max(i, j), min(i, j)]) for j in range(k)] for i in range(k)]
    return max(sum(abs(S[i][j] - P[i][j]) for j in range(k)) for i in range(k))


def _stacks(seed=0):
    """(A, c): Gram matrices (well and badly conditioned, huge and tiny), an indefinite one, a singular one."""
    rng = np.random.default_rng(seed)
    out = []
    for k, scale in ((3, 1.0), (5, 2.0**200), (6, 2.0**-200), (8, 1.0)):
        X = rng.standard_normal((k, k + 2)) * scale
        out.append((X @ X.T, 1e-3 * scale**2))
    X = rng.standard_normal((5, 7))
    X[4] = X[0] + X[1] * (1 + 2.0**-40)
    out.append((X @ X.T, 1e-30))
    S = rng.standard_normal((4, 4))
    out.append(((S + S.T) / 2, 1e-6))  # indefinite: the factorisation breaks down
    return out


def _defect_and_factor(monkeypatch, A, c, full=False):
    """factor_defect of the one matrix A with shift c, and the factor it used
    (whatever LAPACK, another machine or a patched cholesky returned)."""
    seen = []
    real = gb._factor

    def spy(M):
        L, ok = real(M)
        seen.append((L.copy(), ok.copy()))
        return L, ok

    monkeypatch.setattr(gb, "_factor", spy)
    delta = gb.factor_defect(get_backend("numpy"), A[None].copy(), np.array([c]), full=full)[0]
    monkeypatch.setattr(gb, "_factor", real)
    (L, ok), = seen
    return delta, L[0], bool(ok[0])


def _check_defect(A, c, delta, L, ok):
    k = A.shape[0]
    As = A.copy()
    As[np.arange(k), np.arange(k)] -= c
    shift = max(abs(F(As[i, i]) - (F(A[i, i]) - F(c))) for i in range(k))
    if not ok:
        assert delta == np.inf
        return
    assert np.array_equal(L, np.tril(L))
    assert F(delta) >= _exact_residual_rows(As, L) + shift


@pytest.mark.parametrize("order", ALL_ORDERS)
def test_the_defect_bounds_the_exact_residual_in_every_order(monkeypatch, order):
    for A, c in _stacks():
        with summation_order(order):
            delta, L, ok = _defect_and_factor(monkeypatch, A, c)
        _check_defect(A, c, delta, L, ok)


def _exact_full_residual_rows(As, L) -> Fraction:
    """max_i sum_j |As_ij - (L L^T)_ij| exactly, both triangles of As as given."""
    k = As.shape[0]
    P = exact_product(L, L.T)
    return max(sum(abs(F(As[i, j]) - P[i][j]) for j in range(k)) for i in range(k))


@pytest.mark.parametrize("order", ALL_ORDERS)
def test_the_full_defect_bounds_the_whole_residual_in_every_order(monkeypatch, order):
    """full=True (issue 38: both triangles read, k < 64): the bound holds for
    the residual of A as given, entry by entry, even when its upper triangle
    is not the mirror of its lower one (a few ulps moved, as a float product
    may leave it): what it read is what it bounds."""
    rng = np.random.default_rng(11)
    for A, c in _stacks():
        A = A.copy()
        k = A.shape[0]
        up = np.triu_indices(k, 1)
        A[up] = A[up] * (1 + rng.integers(-4, 5, len(up[0])) * 2.0**-52)
        with summation_order(order):
            delta, L, ok = _defect_and_factor(monkeypatch, A, c, full=True)
        As = A.copy()
        As[np.arange(k), np.arange(k)] -= c
        shift = max(abs(F(As[i, i]) - (F(A[i, i]) - F(c))) for i in range(k))
        if not ok:
            assert delta == np.inf
            continue
        assert F(delta) >= _exact_full_residual_rows(As, L) + shift, order


def test_the_full_defect_is_the_lower_one_for_large_blocks(monkeypatch):
    """k >= 64 (more than one block row): full=True reads the lower triangle
    as before, the same bound bit for bit."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((70, 90))
    A = X @ X.T
    b = get_backend("numpy")
    assert gb.factor_defect(b, A[None].copy(), np.array([1e-3]), full=True)[0] == \
        gb.factor_defect(b, A[None].copy(), np.array([1e-3]))[0]


def test_batches_of_small_subsets_stay_in_cache_and_large_ones_within_block_entries(monkeypatch):
    assert gb._batch(32) == gb.CACHE_ENTRIES // 32**2 and gb._batch(197) == gb.BLOCK_ENTRIES // 197**2
    assert gb._batch(128) == gb.MIN_BATCH and gb._batch(4000) == 1
    monkeypatch.setattr(gb, "BLOCK_ENTRIES", 48)
    assert gb._batch(4) == 3  # the test above shrinks the batches through BLOCK_ENTRIES


def _wrong(kind, real=np.linalg.cholesky):
    def factor(A):
        A = np.asarray(A)
        one = {"identity": lambda a: np.eye(len(a)),
               "scaled": lambda a: real(a) * (1 + 2.0**-20),
               "upper junk": lambda a: real(a) + np.triu(np.ones_like(a), 1),
               "read-only": lambda a: real(a)}[kind]
        L = one(A) if A.ndim == 2 else np.stack([one(a) for a in A])
        if kind == "read-only":
            L.setflags(write=False)
        return L
    return factor


@pytest.mark.parametrize("kind", ["identity", "scaled", "upper junk", "read-only"])
def test_the_defect_holds_for_a_wrong_factor(monkeypatch, kind):
    """Whatever finite factor the Cholesky returns (its strict upper triangle
    ignored), the bound holds for that factor: a wrong one only weakens it."""
    for A, c in _stacks(seed=3)[:5]:
        monkeypatch.setattr(np.linalg, "cholesky", _wrong(kind))
        delta, L, ok = _defect_and_factor(monkeypatch, A, c)
        monkeypatch.undo()
        _check_defect(A, c, delta, L, ok)


def test_a_wrong_factor_never_certifies_a_dependent_subset(monkeypatch):
    V = planted(scaled=False)
    idx = np.array([[0, 1, 3], [2, 4, 6, 8][:3], [0, 7, 9]])
    G, e = gram_ball(V)
    for kind in ("identity", "scaled", "upper junk", "read-only"):
        monkeypatch.setattr(np.linalg, "cholesky", _wrong(kind))
        ok = gb.subsets_certified(G, e, np.array([[0, 1, 3]]))
        assert not ok[0]
    monkeypatch.undo()
    assert gb.subsets_certified(G, e, idx[1:]).all()


# ------------------------------------------------------- the lower product

@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("k", [1, 5, 33, 70])
def test_the_lower_product_is_within_its_a_priori_bound(order, k):
    rng = np.random.default_rng(k)
    L = np.tril(rng.standard_normal((2, k, k)) * np.exp2(rng.integers(-30, 30, (2, k, 1))))
    with summation_order(order):
        P = gb.lower_product(get_backend("numpy"), L)
    g = gamma(k)
    for n in range(2):
        exact = exact_product(L[n], L[n].T)
        absl = exact_product(np.abs(L[n]), np.abs(L[n]).T)
        for i in range(k):
            for j in range(i + 1):
                assert abs(F(P[n, i, j]) - exact[i][j]) <= g * absl[i][j] + 3 * k * UL, (n, i, j)


def test_blocks_of_the_lower_product():
    assert [gb._blocks(k) for k in (1, 31, 63, 64, 96, 197, 2048)] == [1, 1, 1, 2, 3, 6, 6]


# -------------------------------------------------------------- the stack

def _stack_cases():
    rng = np.random.default_rng(7)
    M = np.round(rng.standard_normal((9, 4, 7)) * 256) / 256
    M[1, 3] = M[1, 0] - M[1, 2]  # exactly dependent
    M[2, 2] = 2.0**8 * M[2, 0] - 2.0**8 * M[2, 1] + M[2, 3]  # dependent, with cancellation
    M[3] *= 2.0**300
    M[4] *= 2.0**-300
    M[5, 1] = np.nextafter(M[5, 0], np.inf) * 0 + M[5, 0]  # two equal rows
    M[6, 0] = 0.0
    M[7] *= 2.0**-1060  # subnormal entries
    M[8, 3] = M[8, 0] + M[8, 1]
    M[8, 3, 2] = np.nextafter(M[8, 3, 2], -np.inf)  # one ulp from dependent: exactly independent
    return M


@pytest.mark.parametrize("order", ALL_ORDERS)
def test_a_certified_stack_matrix_has_exactly_independent_rows_in_every_order(order):
    M = _stack_cases()
    with summation_order(order):
        ok = gb.stack_certified(M)
    truth = np.array([exact_rank(m) == m.shape[0] for m in M])
    assert ok.dtype == bool and not (ok & ~truth).any()
    assert ok[[0, 3, 4, 7]].all()  # not vacuous: well-posed rows on any scale (row scaling), subnormal ones too
    assert not ok[[1, 2, 5, 6]].any()


def test_the_stack_selection_out_of_range_and_shapes():
    M = _stack_cases()
    which = [8, 0, 1, 3]
    assert gb.stack_certified(M, which).tolist() == gb.stack_certified(M[which]).tolist()
    big = M[[0, 3, 0]].copy()
    big[0, 0, :2] = 2.0**1000, 2.0**-1000  # its scaling would not be exact, and 2^1000 is beyond the range
    big[2, 1, 1] = np.nan
    assert gb.stack_certified(big).tolist() == [False, True, False]
    big[0, 0, 1] = 2.0**600  # now its row scales exactly (to 1/2, 2^-401): proved on its own scale
    assert gb.stack_certified(big).tolist() == [True, True, False]
    assert gb.stack_certified(np.zeros((3, 5, 4))).tolist() == [False] * 3  # k > m
    assert gb.stack_certified(np.zeros((0, 2, 4))).shape == (0,)


@pytest.mark.parametrize("seed", range(3))
def test_a_certified_stack_matrix_is_exact_on_another_machine(seed):
    M = _stack_cases()
    with on_another_machine(ulps=4, seed=seed):
        ok = gb.stack_certified(M)
    assert not (ok & ~np.array([exact_rank(m) == 4 for m in M])).any()


# ------------------------------------- the batch against the per-subset path

def test_the_batched_verdicts_are_those_of_the_per_subset_path_and_the_truth(monkeypatch):
    """SubsetIndependence on subsets of FLOAT_FROM_K rows: the Gram route
    (batched), the inverse route alone (GRAM_ROWS = 0), the modular test
    alone (no float route), one subset at a time: the same exact verdicts."""
    import verifier.arith.independence as ind

    k = ind.FLOAT_FROM_K
    rng = np.random.default_rng(4)
    V = np.round(rng.standard_normal((k + 6, k + 5)) * 2**12) / 2**12
    V[k + 2] = V[0] - V[3] + 2 * V[5]
    idx = np.array([sorted(rng.choice(k + 6, k, replace=False)) for _ in range(40)])
    truth = [exact_rank(V, r) == k for r in idx]
    runs = [SubsetIndependence(V, backend="numpy").independent(idx)]
    monkeypatch.setattr(ind, "GRAM_ROWS", 0)
    runs.append(SubsetIndependence(V, backend="numpy").independent(idx))
    monkeypatch.setattr(ind, "FLOAT_FROM_K", 10**6)
    runs.append(SubsetIndependence(V, backend="numpy").independent(idx))
    for ok, dep, b in runs:
        first = truth.index(False) if False in truth else len(idx)
        assert b == first and ok[:b].tolist() == truth[:b]
        assert (dep is None) == (first == len(idx))
    monkeypatch.undo()
    single = [bool(SubsetIndependence(V, backend="numpy").independent(idx[i:i + 1])[0][0]) for i in range(len(idx))]
    assert single == truth


# ------------------------------------------------------------ row scaling

def test_row_scaling_multiplies_each_row_by_a_power_of_two_exactly():
    """Each row comes back as 2^j times itself, exactly (or as given: a zero,
    non-finite row, or one whose scaling would round an entry), its largest
    entry in [1/2, 1) when scaled."""
    rng = np.random.default_rng(8)
    M = rng.standard_normal((7, 5)) * np.exp2(rng.integers(-900, 900, (7, 1)))
    M[1] = 0.0
    M[2, 3] = np.inf
    M[3] = [2.0**1000, 2.0**-1000, 1.0, -3.0, 0.0]  # scaling by 2^-1001 would round 2^-1000 away
    M[4] = np.round(M[4] / np.abs(M[4]).max() * 8) * 2.0**-1070  # subnormal (4 bits): scaled up exactly
    S = gb.row_scaled(M)
    for row, out in zip(M, S):
        if np.array_equal(row, out, equal_nan=True):
            continue
        j = int(np.frexp(np.abs(row).max())[1])
        assert all(F(o) == F(x) * Fraction(2) ** -j for o, x in zip(out, row))
        assert 0.5 <= np.abs(out).max() < 1
    assert np.array_equal(S[[1, 3]], M[[1, 3]]) and np.isinf(S[2, 3])
    assert not np.array_equal(S[4], M[4])


def test_rows_on_any_scale_are_judged_alike_by_subset_independence():
    """Rows 2^300 and 2^-300 apart (and subnormal-sized): after the row
    scaling the Gram route certifies their independent subsets (not left to
    the modular test), never a dependent one."""
    import verifier.arith.independence as ind

    k = ind.FLOAT_FROM_K
    rng = np.random.default_rng(12)
    V = np.round(rng.standard_normal((k + 4, k + 6)) * 2**10) / 2**10
    V[k + 1] = V[1] + V[2] - V[5]
    V[::3] *= 2.0**300
    V[1::3] *= 2.0**-300
    idx = np.array([sorted(rng.choice(k + 4, k, replace=False)) for _ in range(20)])
    truth = np.array([exact_rank(V, r) == k for r in idx])
    ok = SubsetIndependence(V, backend="numpy")._float_certified(idx)
    assert not (ok & ~truth).any() and ok[truth].all()
