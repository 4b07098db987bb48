"""Adversarial inputs for the Gram route of verifier/arith/independence.py
(mutation testing of target ``independence``).

The Gram certificate is a posteriori: ``lambda_min(V_S V_S^T) >= c - delta -
eps`` holds for ANY finite factor L the float Cholesky returns and any shift c,
so a dependent subset can never be certified, whatever LAPACK does.  These
tests feed it wrong factors (a patched ``numpy.linalg.cholesky``) and check
every verdict against the exact rank (flint ``fmpq_mat``); they pin the Gram
ball's row bounds against the exact Gram matrix (``fractions``), the empty and
one-row subsets, the scale of each subset's own rows, the backend that is used,
and the chunks the subsets go through."""
import dataclasses
import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat

import verifier.arith.float_certificates as fc
import verifier.arith.independence as ind
from verifier.arith.backend import Backend
from verifier.arith.independence import FLOAT_FROM_K, SubsetIndependence, gram_ball, gram_certified


def _exact_rank(V, rows) -> int:
    """Rank over Q of the rows ``rows`` of the float (or exact) matrix V."""
    rows = [int(r) for r in rows]
    return fmpq_mat(len(rows), V.shape[1], [fmpq(*Fraction(x).as_integer_ratio()) if not isinstance(x, fmpq) else x
                                            for r in rows for x in V[r]]).rank()


def _dependent_rows(seed=0, m=8, d=5):
    """Small integer rows, row 2 = row 0 + row 1 and row 6 = row 3 - 2 row 5 exactly."""
    V = np.random.default_rng(seed).integers(-3, 4, (m, d)).astype(float)
    V[2] = V[0] + V[1]
    V[6] = V[3] - 2 * V[5]
    return V


# --------------------------------------------------- wrong Cholesky factors

def _factors(real):
    """Float 'Cholesky factors' that are wrong in various ways (all finite)."""
    def each(A, f):
        A = np.asarray(A)
        return f(A) if A.ndim == 2 else np.stack([f(a) for a in A])

    def nearest_pd(a):  # the factor of the nearest positive definite matrix: defect ~ |lambda_min|
        w, Q = np.linalg.eigh((a + a.T) / 2)
        w = np.maximum(w, 1e-6 * max(1.0, np.abs(w).max()))
        return real((Q * w) @ Q.T + 0 * a)

    def shifted(a):  # an exact factor of a + s I with s twice the negative eigenvalue
        s = 2 * max(0.0, -np.linalg.eigvalsh((a + a.T) / 2).min()) + 1.0
        return real(a + s * np.eye(len(a)))

    def identity(a):
        return np.eye(len(a))

    def random(a):
        r = np.random.default_rng(len(a)).standard_normal(a.shape)
        return np.tril(r) * np.sqrt(np.abs(np.diagonal(a)).max() + 1.0)

    return {name: (lambda A, f=f: each(A, f)) for name, f in
            [("nearest_pd", nearest_pd), ("shifted", shifted), ("identity", identity), ("random", random)]}


@pytest.mark.parametrize("kind", ["nearest_pd", "shifted", "identity", "random"])
def test_a_dependent_subset_is_never_certified_whatever_factor_the_cholesky_returns(monkeypatch, kind):
    """A LAPACK that returns a finite but wrong factor for an indefinite
    fl(G_SS - c I) (here: every factor is replaced) must not make a dependent
    subset independent: the certificate needs c > delta + eps, and delta
    measures the factor's defect a posteriori."""
    V = _dependent_rows()
    idx = np.array(list(itertools.combinations(range(len(V)), 3)))
    exact = np.array([_exact_rank(V, r) == 3 for r in idx])
    assert not exact.all()  # {0, 1, 2}, {3, 5, 6} and any accidental ones
    G, e = gram_ball(V)
    monkeypatch.setattr(np.linalg, "cholesky", _factors(np.linalg.cholesky)[kind])
    ok = gram_certified(G, e, idx)
    assert ok.dtype == bool and not (ok & ~exact).any()
    for r in np.flatnonzero(~exact):  # one at a time too (no batch fallback involved)
        assert not gram_certified(G, e, idx[r:r + 1])[0]


def test_a_wrong_factor_does_not_reach_subset_independence(monkeypatch):
    """The same through SubsetIndependence (subsets of FLOAT_FROM_K rows, the
    Gram route first): the dependent subset comes back with its exact null
    vector, the independent ones as independent."""
    k = FLOAT_FROM_K
    V = np.round(np.random.default_rng(2).standard_normal((k + 4, k + 8)) * 2**10) / 2**10
    V[k - 1] = V[0] - V[1] + 2 * V[2]
    monkeypatch.setattr(np.linalg, "cholesky", _factors(np.linalg.cholesky)["nearest_pd"])
    idx = np.array([np.arange(1, k + 1), np.arange(k)])
    sets = SubsetIndependence(V, backend="numpy")
    assert not sets._float_certified(idx)[1]
    ok, dep, b = sets.independent(idx)
    assert b == 1 and ok[0] and dep[0] == list(range(k)) and _exact_rank(V, range(k)) == k - 1
    assert _exact_rank(V, idx[0]) == k


# ------------------------------------------------------------ the Gram ball

def test_gram_ball_bounds_every_entry_of_its_row_against_the_exact_gram():
    """|V V^T - G|_ij <= e_i for EVERY j (both triangles), exactly: row 0 is
    small, row 1 huge, and fl(v_0 . v_1) misses 2^60 + 1 by one in every
    order, far more than v_0 . v_0's own radius."""
    V = np.array([[1.0, 1.0, 0.0], [2.0**60, 1.0, 0.0], [0.5, -3.0, 2.0], [1.0, 2.0**-30, 7.0]])
    G, e = gram_ball(V)
    assert G.dtype == np.float64 and np.array_equal(G, G.T)
    F = [[Fraction(x) for x in row] for row in V]
    for i, j in itertools.product(range(len(V)), repeat=2):
        exact = sum(a * b for a, b in zip(F[i], F[j]))
        assert abs(exact - Fraction(G[i, j])) <= Fraction(e[i]), (i, j)


def test_gram_ball_of_float32_rows_encloses_their_exact_gram():
    """float32 rows are exact float64 numbers: the ball is computed in float64
    (a float32 product would round far beyond the float64 radius)."""
    V = np.random.default_rng(4).standard_normal((6, 9)).astype(np.float32)
    G, e = gram_ball(V)
    assert G.dtype == np.float64 and e.dtype == np.float64
    F = [[Fraction(float(x)) for x in row] for row in V]
    for i, j in itertools.product(range(len(V)), repeat=2):
        assert abs(sum(a * b for a, b in zip(F[i], F[j])) - Fraction(G[i, j])) <= Fraction(e[i])


def _two_scales(seed=6, k=FLOAT_FROM_K, d=60):
    """k Gaussian rows of size ~1, then k rows 2^30 times larger."""
    V = np.random.default_rng(seed).standard_normal((2 * k, d))
    V[k:] *= 2.0**30
    return V, np.array([np.arange(k), np.arange(k, 2 * k)])


def test_each_subset_is_judged_on_the_scale_of_its_own_rows():
    """A subset of small rows beside a subset of rows 2^30 larger: both are
    certified, in one batch and one at a time (neither the Gram ball's bound
    e_i nor the subset's eps and shift may be taken over all rows or the
    whole batch)."""
    V, idx = _two_scales()
    G, e = gram_ball(V)
    assert e[0] < 1e-2 * e[-1]  # e_i: the largest error of row i, not of the matrix
    for b in (None, "numpy"):
        assert gram_certified(G, e, idx, b).tolist() == [True, True]
        assert gram_certified(G, e, idx[:1], b).tolist() == [True]
    ok, dep, _ = SubsetIndependence(V).independent(idx)
    assert ok.tolist() == [True, True] and dep is None
    assert all(_exact_rank(V, r) == len(r) for r in idx)


# ---------------------------------------------- empty and one-row subsets

def test_empty_subsets_and_empty_batches():
    G, e = gram_ball(_dependent_rows())
    out = gram_certified(G, e, np.zeros((3, 0), dtype=np.intp))
    assert out.dtype == bool and out.tolist() == [True, True, True]  # the empty set is independent
    out = gram_certified(G, e, np.zeros((0, 4), dtype=np.intp))
    assert out.dtype == bool and out.shape == (0,)


def test_a_zero_row_alone_is_not_certified():
    V = _dependent_rows()
    V[4] = 0.0
    G, e = gram_ball(V)
    idx = np.arange(len(V))[:, None]
    ok = gram_certified(G, e, idx)
    exact = np.array([_exact_rank(V, r) == 1 for r in idx])
    assert ok.dtype == bool and not (ok & ~exact).any() and not ok[4]  # one-sided (a 1 x 1 factor a few ulps off
    # on another machine may leave a nonzero row undecided: its shift is only gamma_1 of its norm)


def test_an_infinite_gram_entry_is_refused_silently():
    """A ball with an infinite entry (out of range upstream) proves nothing,
    and the route stays quiet about the inf - inf it meets."""
    G, e = gram_ball(_dependent_rows())
    G = G.copy()
    G[3, 3] = np.inf
    idx = np.array([[3, 4, 5], [0, 3, 7], [0, 1, 4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = gram_certified(G, e, idx)
    assert ok.tolist() == [False, False, True]


# ---------------------------------------------------------------- backends

@dataclasses.dataclass(frozen=True)
class SpyBackend(Backend):
    """numpy, recording the shapes of its products."""

    seen: list = dataclasses.field(default_factory=list, compare=False, hash=False)

    def matmul(self, a, b):
        self.seen.append((np.shape(a), np.shape(b)))
        return super().matmul(a, b)


def test_gram_ball_and_gram_certified_default_to_numpy_not_auto(monkeypatch):
    """Without a backend the Gram route runs on numpy ("auto" would follow
    MHA_VERIFY_BACKEND, here a name no backend has); a backend given is used
    as given, also by SubsetIndependence (whose default is "auto")."""
    monkeypatch.setenv("MHA_VERIFY_BACKEND", "no-such-backend")
    V, idx = _two_scales()
    G, e = gram_ball(V)
    assert gram_certified(G, e, idx).tolist() == [True, True]
    for rows in (ind.GRAM_ROWS, 0):  # the Gram route, then the inverse route alone
        monkeypatch.setattr(ind, "GRAM_ROWS", rows)
        assert SubsetIndependence(V, backend="numpy").independent(idx)[0].tolist() == [True, True]
        with pytest.raises(ValueError, match="no-such-backend"):
            SubsetIndependence(V).independent(idx)


def test_the_backend_given_computes_the_gram_route(monkeypatch):
    V, idx = _two_scales()
    m, d = V.shape
    k = idx.shape[1]
    spy = SpyBackend("numpy")
    G, e = gram_ball(V, spy)
    assert ((m, d), (d, m)) in spy.seen
    spy.seen.clear()
    assert gram_certified(G, e, idx, spy).all()
    assert ((2, k, k), (2, k, k)) in spy.seen  # the Cholesky defect's L L^T
    spy.seen.clear()
    sets = SubsetIndependence(V, backend=spy)
    assert sets._float_certified(idx).all()
    assert ((m, d), (d, m)) in spy.seen and ((2, k, k), (2, k, k)) in spy.seen
    spy.seen.clear()
    monkeypatch.setattr(ind, "GRAM_ROWS", 0)  # the inverse route on the same backend
    assert SubsetIndependence(V, backend=spy)._float_certified(idx).all()
    assert any(len(a) == 3 and a[0] == 2 for a, _ in spy.seen)


# ------------------------------------------------------------------ chunks

@pytest.mark.parametrize("per_chunk", [1, 2, 5])
def test_every_subset_goes_through_the_gram_route_once_in_chunks(monkeypatch, per_chunk):
    """Chunks of CHUNK_ELEMS // k^2 subsets (the work array's bound), every
    subset exactly once and in order, and the Gram route decides all of them
    (the inverse route is not called) when m = GRAM_ROWS."""
    k, m, B = FLOAT_FROM_K, 34, 31
    V = np.random.default_rng(7).standard_normal((m, 40))
    rng = np.random.default_rng(8)
    idx = np.array([sorted(rng.choice(m, k, replace=False)) for _ in range(B)])
    monkeypatch.setattr(ind, "CHUNK_ELEMS", per_chunk * k * k + k - 1)
    monkeypatch.setattr(ind, "GRAM_ROWS", m)
    batches = []
    real = ind.gram_certified

    def spy(G, e, sub, backend=None):
        batches.append(np.array(sub))
        return real(G, e, sub, backend)

    def refuse(*args, **kwargs):
        raise AssertionError("the inverse route was called")

    monkeypatch.setattr(ind, "gram_certified", spy)
    monkeypatch.setattr(fc, "inverse_residual_bounds", refuse)
    ok = SubsetIndependence(V, backend="numpy")._float_certified(idx)  # not "auto": torch has no Gram route
    assert ok.dtype == bool and ok.all()
    assert all(len(x) <= per_chunk for x in batches) and np.array_equal(np.vstack(batches), idx)


# ------------------------------------------------------------ exact rows

def test_rows_of_exact_rationals():
    """An object array of fmpq (1/3 is no float): the modular and the exact
    tests read p / q of every entry."""
    Q = np.array([[fmpq(1, 3), fmpq(2), fmpq(0)], [fmpq(-5, 7), fmpq(1, 9), fmpq(4)],
                  [fmpq(1, 3) - fmpq(5, 7), fmpq(19, 9), fmpq(4)], [fmpq(0), fmpq(1), fmpq(1, 11)]], dtype=object)
    sets = SubsetIndependence(Q)
    idx = np.array(list(itertools.combinations(range(4), 2)) + [(1, 2)])[:, :2]
    ok, dep, b = sets.independent(idx)
    assert dep is None and ok.tolist() == [_exact_rank(Q, r) == 2 for r in idx]
    idx3 = np.array(list(itertools.combinations(range(4), 3)))
    ok, dep, b = sets.independent(idx3)
    assert b == 0 and dep[0] == [0, 1, 2] and _exact_rank(Q, [0, 1, 2]) == 2
    assert all(sum((dep[1][t] * Q[r][c] for t, r in enumerate(dep[0])), fmpq(0)) == 0 for c in range(3))
    assert sets.independent(idx3[1:])[0].tolist() == [True, True, True]


# ------------------------------------------------- the modular test's chunks

@pytest.mark.parametrize("k, chunk", [(1, 3), (2, 5), (3, 20), (3, 8)])
def test_the_modular_test_takes_chunks_of_chunk_elems_entries(monkeypatch, k, chunk):
    """Blocks of max(1, CHUNK_ELEMS // k^2) subsets (the (B, k, k) work
    array's bound, as many as it allows), every answer exact."""
    V = np.round(np.random.default_rng(k).standard_normal((9, 5)) * 8)
    idx = np.array(list(itertools.combinations(range(9), k)))[:13]
    monkeypatch.setattr(ind, "CHUNK_ELEMS", chunk)
    sizes = []
    real = ind._full_rank_mod_p

    def spy(Y, p):
        sizes.append(len(Y))
        return real(Y, p)

    monkeypatch.setattr(ind, "_full_rank_mod_p", spy)
    ok, dep, b = SubsetIndependence(V).independent(idx)
    assert dep is None and b == len(idx) and ok.tolist() == [_exact_rank(V, r) == k for r in idx]
    step = max(1, chunk // (k * k))
    assert sizes == [step] * (len(idx) // step) + ([len(idx) % step] if len(idx) % step else [])


def test_empty_subsets_are_independent():
    V = np.round(np.random.default_rng(1).standard_normal((4, 3)) * 8)
    ok, dep, b = SubsetIndependence(V).independent(np.zeros((2, 0), dtype=np.intp))
    assert ok.tolist() == [True, True] and dep is None and b == 2
