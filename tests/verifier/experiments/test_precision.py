"""verifier/experiments/precision.py and real_assumptions.py: independence at the data's precision.

Tiny matrices; each reading has a control that must come out the other way."""
import numpy as np
import pytest
import torch

from verifier.experiments.precision import (
    certify_all_square_subsets,
    certify_subset,
    relative_precision,
    relative_sigma_min,
)
from verifier.experiments.real_assumptions import Budget, analyse_layer, kruskal_at_precision, random_subsets

U32 = 2.0 ** -24


def test_relative_precision_of_dtypes():
    assert relative_precision(np.float32) == U32 and relative_precision(np.float64) == 2.0 ** -53


def test_independent_rows_certified_independent():
    A = np.random.default_rng(0).standard_normal((4, 9))
    c = certify_subset(A, u=U32)
    assert c["decision"] == "independent" and c["sigma_lower"] <= c["sigma_upper"]


def test_rows_dependent_below_precision_certified_dependent():
    """Control: exactly independent as rationals, dependent within u (sigma ~ 1e-10 ||A||)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 9))
    A[3] = A[0] + 2 * A[1] + 1e-10 * rng.standard_normal(9)
    assert np.linalg.matrix_rank(A, tol=0) == 4  # independent as exact floats
    c = certify_subset(A, u=U32)
    assert c["decision"] == "dependent" and c["sigma_upper"] < c["delta_upper"]


def test_margin_just_above_precision_is_not_called_dependent():
    """Boundary: sigma_min = 100 u ||A||_F is independent at u, dependent at a coarser 1000 u."""
    Q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((6, 3)))
    A = (Q * np.array([1.0, 1.0, 0.0])).T[:3]
    A[2] = Q[:, 2] * 100 * U32 * np.sqrt(2.0)
    assert certify_subset(A, u=U32)["decision"] == "independent"
    assert certify_subset(A, u=1000 * U32)["decision"] == "dependent"


def test_float_screen_matches_svd():
    V = np.random.default_rng(3).standard_normal((12, 7))
    S = random_subsets(np.random.default_rng(0), 12, 5, 20)
    got = relative_sigma_min(V, S, u=U32)
    want = [np.linalg.svd(V[s], compute_uv=False)[-1] / np.linalg.norm(V[s]) for s in S]
    assert np.allclose(got, want, rtol=1e-6)


def test_all_square_subsets_dependent_for_numerically_low_rank_data():
    rng = np.random.default_rng(4)
    V = rng.standard_normal((30, 5)) @ rng.standard_normal((5, 8))  # rank 5 < d = 8 (up to rounding)
    assert certify_all_square_subsets(V, u=U32)["all_dependent"]
    assert not certify_all_square_subsets(rng.standard_normal((30, 8)), u=U32)["all_dependent"]


def test_kruskal_at_precision_finds_a_near_dependent_subset():
    rng = np.random.default_rng(5)
    V = rng.standard_normal((6, 10))
    V[5] = V[0] - V[1] + 1e-12 * rng.standard_normal(10)
    r2 = kruskal_at_precision(V, 2, u=U32, samples=100, rng=rng, certify=True)  # C(6,2) = 15: all of them
    assert r2["exhaustive"] and r2["status"] == "holds" and r2["independent"] == 15
    r3 = kruskal_at_precision(V, 3, u=U32, samples=100, rng=rng, certify=False)  # {0, 1, 5} within 1e-12
    assert r3["status"] == "fails" and r3["basis"].startswith("certified") and r3["witness"] == [0, 1, 5]


def test_analyse_layer_reads_the_embedding_pattern():
    """Identical queries (the [CLS] at the embedding): Assumption 1 fails, certified exact;
    a context with a repeated token fails Assumption 2 exactly."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(12, 3, 8, generator=g)
    X[:, 0] = X[0, 0]
    out = analyse_layer(X, X[:, 0], u=U32, budget=Budget(samples=10, exact_samples=0, kr_samples=3, kr_levels=3),
                        seed=0, log=lambda s: None)
    assert out["assumption1"]["status"] == "fails" and out["assumption1"]["basis"].startswith("certified exact")
    assert out["assumption2"]["status"] == "holds"
    X[4, 2] = X[4, 1]
    out = analyse_layer(X, X[:, 0], u=U32, budget=Budget(samples=10, exact_samples=0, kr_samples=3, kr_levels=3),
                        seed=0, log=lambda s: None)
    assert out["assumption2"]["status"] == "fails" and "repeats a token" in out["assumption2"]["basis"]
