"""Pinned behaviour of verifier/arith/independence.py (mutation testing, issue 9):
the exact scaling mod p, the fixed sketch ``W = Vmod S mod p`` against an
independent integer computation (also past 2^53 in one block), primes dividing
a minor, the dependent/independent boundary of the float prepass (an exactly
dependent subset whose rounded midpoint is well conditioned), its threshold,
chunking and range fallback, the circuit shrink through nullity 2 and 3, and
the subset enumeration in blocks."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import verifier.arith.float_certificates as fc
import verifier.arith.independence as ind
from verifier.arith.backend import get_backend
from verifier.arith.exact import exact_nullspace, exact_rank, to_fmpq_mat
from verifier.arith.independence import _PRIMES, FLOAT_FROM_K, SubsetIndependence, _all_combinations, combination_blocks

P1, P2 = _PRIMES


@pytest.fixture(autouse=True)
def _inverse_route_only(monkeypatch):
    """These tests pin the inverse route and the modular test: the Gram route
    (tested in test_independence.py) is switched off."""
    monkeypatch.setattr(ind, "GRAM_ROWS", 0)


def _is_null(V, T, coeffs):
    """sum_i c_i V[T_i] == 0 exactly (rationals)."""
    return all(sum((Fraction(V[t, r]) * Fraction(str(c)) for t, c in zip(T, coeffs)), Fraction(0)) == 0
               for r in range(V.shape[1]))


def _count_exact(sets):
    """Wrap sets.dependent (the flint fallback) to count its calls."""
    calls = []
    orig = sets.dependent

    def spy(subset):
        calls.append([int(i) for i in subset])
        return orig(subset)

    sets.dependent = spy
    return calls


# ---------------------------------------------------------------- enumeration

def test_all_combinations_is_lexicographic_integer_and_has_the_empty_subset():
    e = _all_combinations(4, 0)
    assert e.shape == (1, 0) and e.dtype == np.intp
    for m, k in ((5, 3), (6, 1), (6, 6), (7, 4)):
        a = _all_combinations(m, k)
        assert a.dtype == np.intp
        assert a.tolist() == [list(c) for c in itertools.combinations(range(m), k)]


@pytest.mark.parametrize("m,k,chunk", [(7, 3, 5), (6, 1, 2), (6, 2, 1), (8, 4, 7), (5, 2, 10), (6, 3, 100),
                                       (9, 3, 20), (4, 0, 3)])
def test_combination_blocks_cover_every_subset_once_in_order_in_small_blocks(m, k, chunk):
    blocks = list(combination_blocks(m, k, chunk))
    for blk in blocks:
        assert blk.dtype == np.intp and blk.ndim == 2 and blk.shape[1] == k
        assert 1 <= blk.shape[0] <= max(chunk, 1)
    rows = np.vstack(blocks).tolist()
    assert rows == [list(c) for c in itertools.combinations(range(m), k)]
    if math.comb(m, k) <= chunk:  # one block exactly when they all fit (also at equality)
        assert len(blocks) == 1


def test_combination_blocks_offset():
    blocks = list(combination_blocks(5, 2, 3, offset=10))
    assert np.vstack(blocks).tolist() == [list(c) for c in itertools.combinations(range(10, 15), 2)]
    assert [b.shape[0] for b in blocks] == [1, 1, 1, 1, 3, 2, 1]
    assert np.vstack(list(combination_blocks(4, 2, 100, offset=3))).tolist() == \
        [list(c) for c in itertools.combinations(range(3, 7), 2)]


# ------------------------------------------------------------ exact scaling mod p

def _ref_vmod(V, p):
    out = []
    for row in V.tolist():
        fr = [Fraction(x) for x in row]
        D = max(f.denominator for f in fr)
        out.append([int(f * D) % p for f in fr])
    return out


def test_vmod_is_the_row_scaled_to_integers_mod_p_even_across_huge_exponents():
    V = np.array([[0.5, -3.0, 2.0**-30, 7.25],
                  [2.0**600, 3 * 2.0**-600, -1.0, 0.0],  # 2^1200 as a float would overflow
                  [0.0, 0.0, 0.0, 0.0],
                  [1e-300, 7.0, -2.5, -(2.0**52 + 1)]])
    sets = SubsetIndependence(V)
    for p in _PRIMES:
        W = sets._vmod(p)
        assert W.dtype == np.int64
        assert W.tolist() == _ref_vmod(V, p)


def test_rows_of_mixed_magnitude_are_decided_exactly():
    """(1, 2^-600) and (2^600, 1) are parallel only if 2^-600 * 2^600 = 1: they are."""
    V = np.array([[1.0, 2.0**-600], [2.0**600, 1.0], [2.0**600, 2.0]])
    sets = SubsetIndependence(V)
    ok, dep, b = sets.independent(np.array([[1, 2], [0, 2], [0, 1]]))
    assert ok[:2].tolist() == [True, True] and b == 2 and dep[0] == [0, 1]
    assert _is_null(V, dep[0], dep[1])


# ------------------------------------------------------------------ the sketch

def _ref_projection(Vm, p, k, d):
    S = np.random.default_rng([p, k]).integers(0, p, size=(d, k))
    return (Vm.astype(np.int64) @ S.astype(np.int64)) % p  # entries < 2^40 * d < 2^63: exact


def test_projection_is_vmod_times_the_fixed_sketch():
    rng = np.random.default_rng(2)
    V = rng.integers(-50, 51, (6, 9)) / 8.0
    sets, again = SubsetIndependence(V), SubsetIndependence(V.copy())
    for p in _PRIMES:
        for k in (1, 3, 8):
            W = sets._projected(p, k)
            assert W.dtype == np.int64
            assert W.tolist() == _ref_projection(sets._vmod(p), p, k, 9).tolist()
            assert W.tolist() == again._projected(p, k).tolist()  # fixed, reproducible
        for k in (9, 12):  # no sketch when k >= d
            assert sets._projected(p, k).tolist() == sets._vmod(p).tolist()


def test_projection_is_exact_when_one_block_would_pass_2_53():
    """d = 16384: sums of (p-2)(p-1)-sized products exceed 2^53 within one
    float64 matmul; the blocks of 8192 keep them exact."""
    d, k = 16384, 24
    V = np.zeros((3, d))
    V[0], V[1] = -2.0, -1.0  # = p-2, p-1 mod p: the largest products
    V[2] = np.random.default_rng(1).integers(0, 2**20, d)
    sets = SubsetIndependence(V)
    for p in _PRIMES:
        W = sets._projected(p, k)
        assert W.tolist() == _ref_projection(sets._vmod(p), p, k, d).tolist()


def test_projection_is_exact_for_long_rows():
    d, k = 40000, 2
    V = np.zeros((2, d))
    V[0] = -1.0
    V[1] = np.random.default_rng(3).integers(0, 2**20, d)
    sets = SubsetIndependence(V)
    W = sets._projected(P1, k)
    assert W.tolist() == _ref_projection(sets._vmod(P1), P1, k, d).tolist()


# ------------------------------------------------------------- exact answers

def test_dependent_returns_none_on_independent_vectors():
    sets = SubsetIndependence(np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]))
    assert sets.dependent([0, 1]) is None
    assert sets._exact_null([0, 1]) is None
    T, v = sets.dependent([0, 2])
    assert T == [0, 2] and [str(c) for c in v] == ["2", "-1"]


def test_more_vectors_than_dimensions_all_dependent_at_row_zero():
    V = np.array([[1.0, 2.0], [3.0, 5.0], [1.0, 1.0], [0.0, 7.0]])
    sets = SubsetIndependence(V)
    ok, dep, b = sets.independent(np.array([[0, 1, 2], [1, 2, 3]]))
    assert ok.dtype == bool and ok.tolist() == [False, False]
    assert b == 0 and dep[0] == [0, 1, 2] and _is_null(V, dep[0], dep[1])


def test_a_prime_dividing_the_minor_does_not_make_it_dependent():
    """det = p1 p2: singular mod both primes, independent over Q; the flint
    fallback decides it (and only it)."""
    V = np.array([[1.0, 0.0], [0.0, float(P1 * P2)], [0.0, float(P1)], [2.0, 0.0], [1.0, 1.0]])
    sets = SubsetIndependence(V)
    calls = _count_exact(sets)
    ok, dep, b = sets.independent(np.array([[0, 1], [0, 2], [2, 4], [0, 4]]))
    assert ok.dtype == bool and ok.tolist() == [True, True, True, True] and dep is None and b == 4
    assert calls == [[0, 1]]  # det p1 fails the first prime only; the others pass mod p
    ok, dep, b = sets.independent(np.array([[0, 1], [1, 2], [0, 4]]))
    assert b == 1 and dep[0] == [1, 2] and ok[0] and _is_null(V, dep[0], dep[1])


@pytest.mark.parametrize("B", [1, 5])
def test_independent_subsets_are_decided_mod_p_without_flint(B):
    rng = np.random.default_rng(7)
    V = rng.integers(-9, 10, (8, 6)).astype(float)
    idx = np.array([sorted(rng.choice(8, 4, replace=False)) for _ in range(B)])
    assert all(exact_rank(V[list(r)]) == 4 for r in idx)
    sets = SubsetIndependence(V)
    calls = _count_exact(sets)
    ok, dep, b = sets.independent(idx)
    assert ok.tolist() == [True] * B and dep is None and b == B and calls == []
    assert (P1, 4) in sets._proj


def test_exactly_dependent_subsets_are_never_independent():
    rng = np.random.default_rng(8)
    V = rng.integers(-9, 10, (8, 6)).astype(float) / 4
    V[5] = V[0] - 3 * V[2] + 0.25 * V[4]  # exact dyadic combination
    sets = SubsetIndependence(V)
    idx = np.array([[0, 1, 2, 3], [0, 2, 4, 5], [1, 3, 6, 7]])
    ok, dep, b = sets.independent(idx)
    assert ok[0] and b == 1 and dep[0] == [0, 2, 4, 5] and _is_null(V, dep[0], dep[1])
    ok, dep, b = sets.independent(idx[[0, 2]])
    assert ok.tolist() == [True, True] and dep is None


# ------------------------------------------------------------ float prepass

def _gauss(m, d, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d))


def test_float_prepass_runs_from_float_from_k_on():
    V = _gauss(30, 40)
    idx = np.array([np.arange(FLOAT_FROM_K - 1)])
    sets = SubsetIndependence(V)
    ok, dep, b = sets.independent(idx)
    assert ok.tolist() == [True] and FLOAT_FROM_K - 1 not in sets._fproj
    idx = np.array([np.arange(FLOAT_FROM_K), np.arange(1, FLOAT_FROM_K + 1)])
    ok, dep, b = sets.independent(idx)
    assert ok.tolist() == [True, True] and dep is None and b == 2
    assert FLOAT_FROM_K in sets._fproj
    assert (P1, FLOAT_FROM_K) not in sets._proj  # the float certificate decided both


def test_float_projection_is_the_fixed_gaussian_sketch_with_radii():
    k, d = FLOAT_FROM_K, 40
    V = _gauss(30, d, 1)
    sets = SubsetIndependence(V)
    idx = np.array([np.arange(k)])
    assert sets._float_certified(idx).tolist() == [True]
    mid, rad = sets._fproj[k]
    G = np.random.default_rng([k, d]).standard_normal((d, k))
    b = get_backend("auto")  # the same product (same summation order on this machine)
    assert np.array_equal(mid, b.to_numpy(b.matmul(b.asarray(V), b.asarray(G))))
    assert rad is not None and rad.shape == mid.shape and (rad > 0).all()
    exact = to_fmpq_mat(V) * to_fmpq_mat(G)  # the radii enclose the exact product (any order)
    assert all(abs(Fraction(int(exact[i, j].p), int(exact[i, j].q)) - Fraction(float(mid[i, j])))
               <= Fraction(float(rad[i, j])) for i in range(mid.shape[0]) for j in range(mid.shape[1]))
    other = SubsetIndependence(V.copy())
    other._float_certified(idx)
    assert np.array_equal(other._fproj[k][0], mid) and np.array_equal(other._fproj[k][1], rad)


def test_float_prepass_square_case_uses_the_vectors_themselves():
    k = FLOAT_FROM_K
    V = _gauss(30, k, 2)
    sets = SubsetIndependence(V)
    idx = np.array([np.arange(k), np.arange(2, k + 2), np.arange(6, k + 6)])
    cert = sets._float_certified(idx)
    assert cert.dtype == bool and cert.tolist() == [True, True, True]
    mid, rad = sets._fproj[k]
    assert rad is None and np.array_equal(mid, V)


@pytest.mark.parametrize("chunk", [None, FLOAT_FROM_K ** 2 * 4])
def test_float_prepass_covers_every_row_in_chunks(monkeypatch, chunk):
    if chunk is not None:
        monkeypatch.setattr(ind, "CHUNK_ELEMS", chunk)  # 4 subsets per chunk
    k, d, m = FLOAT_FROM_K, 40, 34
    V = _gauss(m, d, 3)
    rng = np.random.default_rng(4)
    idx = np.array([sorted(rng.choice(m, k, replace=False)) for _ in range(31)])  # B = 31 > k
    cert = SubsetIndependence(V)._float_certified(idx)
    assert cert.dtype == bool and cert.shape == (31,) and cert.all()


def test_float_prepass_criterion_is_strictly_below_one(monkeypatch):
    bounds = np.array([1.0, np.nextafter(1.0, 0.0), 1.5, 0.5, np.inf, 1.0 + 2.0**-52])
    monkeypatch.setattr(fc, "inverse_residual_bounds", lambda mids, rads=None, *, backend=None: bounds[:len(mids)])
    V = _gauss(30, 40, 5)
    idx = np.array([np.arange(i, i + FLOAT_FROM_K) for i in range(6)])
    assert SubsetIndependence(V)._float_certified(idx).tolist() == [False, True, False, True, False, False]


def test_float_prepass_passes_the_radii_of_the_chosen_rows(monkeypatch):
    seen = []
    real = fc.inverse_residual_bounds

    def spy(mids, rads=None, *, backend=None):
        seen.append((np.array(mids), None if rads is None else np.array(rads)))
        return real(mids, rads, backend=backend)

    monkeypatch.setattr(fc, "inverse_residual_bounds", spy)
    V = _gauss(30, 40, 6)
    sets = SubsetIndependence(V)
    idx = np.array([np.arange(FLOAT_FROM_K), np.arange(3, FLOAT_FROM_K + 3)])
    sets._float_certified(idx)
    mid, rad = sets._fproj[FLOAT_FROM_K]
    (m_, r_), = seen
    assert np.array_equal(m_, mid[idx]) and r_ is not None and np.array_equal(r_, rad[idx])


def test_exactly_dependent_subset_with_a_well_conditioned_rounded_midpoint_is_not_certified():
    """Rows with a large component in the left null space of the sketch G:
    fl(V_S G) is nonsingular with condition ~1e2 although V_S G is exactly
    singular (V[23] = V[0] + V[1] - V[2]); only the radii of the projection
    stop the float certificate."""
    k, d, m = FLOAT_FROM_K, 40, 26
    G = np.random.default_rng([k, d]).standard_normal((d, k))
    N = np.linalg.svd(G)[0][:, k:].T  # N G ~ 0
    rng = np.random.default_rng(5)
    V = rng.standard_normal((m, d - k)) @ N * 2.0**20 + rng.standard_normal((m, d))
    V = np.round(V * 2**10) / 2**10
    V[k - 1] = V[0] + V[1] - V[2]
    assert (V[k - 1] - V[0] - V[1] + V[2] == 0).all()
    sets = SubsetIndependence(V)
    dep_idx = np.arange(k)[None, :]
    assert sets._float_certified(dep_idx).tolist() == [False]
    mid, rad = sets._fproj[k]
    assert fc.inverse_residual_bounds(mid[dep_idx], None)[0] < 1  # the midpoint alone would pass
    ok, dep, b = sets.independent(np.vstack([np.arange(1, k + 1)[None, :], dep_idx]))
    assert ok[0] and b == 1 and dep is not None and dep[0] == list(range(k))
    assert {i for i, c in zip(dep[0], dep[1]) if c != 0} == {0, 1, 2, k - 1}
    assert _is_null(V, dep[0], dep[1])


def test_float_prepass_outside_its_range_leaves_everything_to_the_exact_test():
    k, d, m = FLOAT_FROM_K, 40, 30
    V = _gauss(m, d, 7)
    V[0, 0] = 2.0**410  # beyond the float certificate's 2^400
    sets = SubsetIndependence(V)
    idx = np.array([np.arange(k), np.arange(1, k + 1), np.arange(2, k + 2), np.arange(3, k + 3), np.arange(4, k + 4)])
    cert = sets._float_certified(idx)
    assert cert.dtype == bool and cert.shape == (5,) and not cert.any()
    ok, dep, b = sets.independent(idx)
    assert ok.dtype == bool and ok.tolist() == [True] * 5 and dep is None and b == 5


def test_float32_vectors_take_the_float_prepass():
    k = FLOAT_FROM_K
    V = _gauss(30, 40, 8).astype(np.float32)
    for sq in (False, True):
        W = V[:, :k] if sq else V
        sets = SubsetIndependence(W)
        idx = np.array([np.arange(k), np.arange(5, k + 5)])
        assert sets._float_certified(idx).tolist() == [True, True]
        ok, dep, b = sets.independent(idx)
        assert ok.tolist() == [True, True] and dep is None


# ---------------------------------------------------------------- circuits

CIRC = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1]], dtype=float)


def _check_circuit(V, T, v):
    assert exact_rank(V[T]) == len(T) - 1 and all(c != 0 for c in v) and _is_null(V, T, v)


def test_circuit_through_nullity_three():
    sets = SubsetIndependence(CIRC)
    T = list(range(6))
    ns = exact_nullspace(sets._qmat(T))
    assert len(ns) == 3
    full = [a + 2 * b + 3 * c for a, b, c in zip(*ns)]  # support: all six
    assert all(c != 0 for c in full)
    Tc, vc = sets.circuit(T, full)
    _check_circuit(CIRC, Tc, vc)
    assert (Tc, [str(c) for c in vc]) == ([1, 2, 3, 4], ["1", "-1", "-1", "1"])
    Tc, vc = sets.circuit(T, [a - b for a, b in zip(ns[0], ns[1])])
    _check_circuit(CIRC, Tc, vc)


def test_circuit_through_nullity_two():
    V = CIRC[[0, 1, 2, 3, 4]]
    sets = SubsetIndependence(V)
    T = [0, 1, 2, 3, 4]
    v1, v2 = exact_nullspace(sets._qmat(T))
    full = [a + b for a, b in zip(v1, v2)]
    assert all(c != 0 for c in full)
    Tc, vc = sets.circuit(T, full)
    _check_circuit(V, Tc, vc)
    assert (Tc, [str(c) for c in vc]) == ([1, 2, 3, 4], ["1", "-1", "-1", "1"])


def test_circuit_of_random_dependent_sets():
    rng = np.random.default_rng(9)
    for _ in range(20):
        V = rng.integers(-2, 3, (7, 4)).astype(float)
        sets = SubsetIndependence(V)
        T = list(range(7))
        ns = exact_nullspace(sets._qmat(T))
        w = rng.integers(1, 5, len(ns))
        v = [sum((int(c) * x for c, x in zip(w, col)), 0) for col in zip(*ns)]
        if all(c == 0 for c in v):
            continue
        Tc, vc = sets.circuit(T, v)
        _check_circuit(V, Tc, vc)
        assert set(Tc) <= {t for t, c in zip(T, v) if c != 0}
