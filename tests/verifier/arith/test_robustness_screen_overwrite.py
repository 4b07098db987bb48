"""``_cholesky_defect(b, G, c, overwrite=...)`` (verifier/arith/robustness_screen.py;
issue 20): the in-place path is memory reuse only.

* ``overwrite=True`` (the caller's own temporary, as ``gram_certified``'s
  gathered blocks) and ``overwrite=False`` give the same bound bit for bit;
* both give, bit for bit, the bound of the function as it was before the
  option (``_defect_before``: its operations verbatim, every step allocating);
* ``overwrite=False`` leaves the caller's array untouched (bit for bit, NaN
  included);

on factorable stacks, stacks where LAPACK breaks down for some matrices (the
one-by-one path), non-finite entries, k = 1, a near-singular Gram, a patched
``cholesky`` that returns its own input or a read-only array (the in-place
steps must never write into what the factorisation returned), with the numpy
backend and in every summation order of tests/summation_orders.py.  Nothing
here depends on the BLAS: both sides run the same operations on the same
machine.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import verifier.arith.robustness_screen as rs
from verifier.arith.backend import get_backend
from verifier.arith.float_bounds import SLACK, UL, U, add_up, gamma, nonneg_matmul_up, rowsum_up, up_scale


def _defect_before(b, G, c) -> np.ndarray:
    """robustness_screen._cholesky_defect before the overwrite option (commit de4d11c), verbatim: the oracle."""
    N, k, _ = G.shape
    Gs = G.copy()
    i = np.arange(k)
    Gs[:, i, i] -= c[:, None]
    shift = np.max(up_scale(b, np.abs(Gs[:, i, i]), U / (1 - U), UL + SLACK), axis=-1)
    out = np.full(N, np.inf)
    try:
        L = np.linalg.cholesky(Gs)
        ok = np.ones(N, dtype=bool)
    except np.linalg.LinAlgError:
        L, ok = np.zeros_like(Gs), np.zeros(N, dtype=bool)
        for j in range(N):
            try:
                L[j], ok[j] = np.linalg.cholesky(Gs[j]), True
            except np.linalg.LinAlgError:
                pass
    ok &= np.all(np.isfinite(L), axis=(-2, -1))
    L = np.tril(np.where(ok[:, None, None], L, 0.0))
    H = np.abs(Gs - b.matmul(L, np.swapaxes(L, -1, -2)))
    h = up_scale(b, rowsum_up(b, H), 1 / (1 - U))
    aL = np.abs(L)
    t = up_scale(b, nonneg_matmul_up(b, aL, rowsum_up(b, np.swapaxes(aL, -1, -2))[..., None])[..., 0], gamma(k))
    total = np.max(up_scale(b, add_up(b, h, t), Fraction(1), 3 * k * k * UL + SLACK), axis=-1)
    out[ok] = add_up(b, total, shift)[ok]
    return out


def _bits(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)


def _gram(rng, N, k, m, scale=1.0):
    V = rng.standard_normal((N, k, m)) * scale
    return V @ np.swapaxes(V, -1, -2)


def _cases():
    rng = np.random.default_rng(20)
    G = _gram(rng, 6, 4, 7)
    yield "factorable", G, np.full(6, 1e-3)
    lam = np.linalg.eigvalsh(G)[:, 0]
    yield "some break down", G, np.where(np.arange(6) % 2 == 0, 2 * lam, lam / 2)  # the one-by-one path
    yield "all break down", G, 2 * np.linalg.eigvalsh(G)[:, -1]
    H = G.copy()
    H[1, 0, 2] = H[1, 2, 0] = np.nan
    H[4, 3, 3] = np.inf
    yield "non-finite entries", H, np.full(6, 1e-3)
    yield "k = 1", np.array([[[1.0]], [[1.0 + 2.0**-52]], [[2.0**-30]], [[3.0]]]), np.array([1 - 2.0**-53, 2.0**-53,
                                                                                              2.0**-31, 4.0])
    V = rng.standard_normal((3, 6))
    V = np.vstack([V, V[0] + V[1]])  # rank 3: lambda_min about u
    yield "near singular", (V @ V.T)[None], np.array([2.0**-40])
    yield "scaled", _gram(rng, 3, 5, 5, 2.0**-300), np.full(3, 2.0**-620)


CASES = list(_cases())
IDS = [name for name, _, _ in CASES]


def _check(b, G, c):
    before = G.copy()
    want = _defect_before(b, G, c)
    got = rs._cholesky_defect(b, G, c)
    assert np.array_equal(_bits(G), _bits(before))  # overwrite=False: the caller's array untouched
    mine = G.copy()
    got_in_place = rs._cholesky_defect(b, mine, c, overwrite=True)
    assert np.array_equal(_bits(got), _bits(want))
    assert np.array_equal(_bits(got_in_place), _bits(want))
    return got


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_overwrite_is_memory_reuse_only(case):
    _, G, c = case
    with np.errstate(all="ignore"):
        _check(get_backend("numpy"), G, c)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_overwrite_is_memory_reuse_only_in_every_order(order, case):
    _, G, c = case
    with np.errstate(all="ignore"):
        _check(get_backend("numpy"), G, c)


@pytest.mark.parametrize("kind", ["its input", "read-only", "zero"])
def test_the_in_place_steps_never_write_into_the_returned_factor(monkeypatch, kind):
    """A cholesky (as the module sees it) that returns its own argument, a
    read-only array or zeros: any float L is legal (the bound is a posteriori),
    and the in-place steps must give what the allocating steps give."""
    real = np.linalg.cholesky

    def factor(a):
        if kind == "its input":
            return a
        if kind == "read-only":
            L = real(a)
            L.setflags(write=False)
            return L
        return np.zeros_like(a)

    monkeypatch.setattr(np.linalg, "cholesky", factor)
    rng = np.random.default_rng(5)
    G = _gram(rng, 4, 3, 5)
    with np.errstate(all="ignore"):
        out = _check(get_backend("numpy"), G, np.full(4, 1e-2))
    assert np.isfinite(out).all()


def test_gram_certified_passes_its_own_blocks_and_leaves_the_ball_alone(monkeypatch):
    """gram_certified gathers G_SS for each batch and lets the defect
    (verifier/arith/gram_blocks.py, which overwrites its stack) work on it:
    the same answers as on a copy, the ball (G, e) unchanged bit for bit."""
    import verifier.arith.gram_blocks as gb
    from verifier.arith.independence import gram_ball, gram_certified

    V = np.round(np.random.default_rng(3).standard_normal((12, 9)) * 2**8) / 2**8
    V[5] = V[0] - V[1]  # subsets holding 0, 1, 5 are dependent
    idx = np.array([[0, 1, 5], [0, 1, 2], [2, 3, 4], [1, 5, 0], [6, 7, 8]])
    G, e = gram_ball(V)
    G0, e0 = G.copy(), e.copy()
    seen = []
    real = gb.factor_defect

    def spy(b, A, c, **kw):
        seen.append(np.shares_memory(A, G))
        return real(b, A, c, **kw)

    def copying(b, A, c, **kw):
        return real(b, A.copy(), c, **kw)

    monkeypatch.setattr(gb, "factor_defect", spy)
    got = gram_certified(G, e, idx)
    monkeypatch.setattr(gb, "factor_defect", copying)
    want = gram_certified(G, e, idx)
    assert seen == [False]
    assert got.tolist() == want.tolist() and not got[0] and not got[3] and got[2]
    assert np.array_equal(_bits(G), _bits(G0)) and np.array_equal(_bits(e), _bits(e0))
