"""verifier/experiments/precision.py and real_assumptions.py: independence at the data's precision
(rho = sigma_min / sigma_max of the unit-row matrix against tau = max(k, m) eps).

Tiny matrices; each reading has a control that must come out the other way."""
import numpy as np
import torch

from verifier.experiments.precision import (
    certify_all_square_subsets,
    certify_rho,
    rho_screen,
    rho_upper_certificate,
    tolerance_of,
    unit_gram,
)
from verifier.experiments.real_assumptions import Budget, analyse_layer, kruskal_at_precision, random_subsets

F32 = np.zeros((1, 3), dtype=np.float32) + np.float32(0.1)


def test_tolerance_is_numpys_numerical_rank_tolerance():
    """The paper's own criterion (numerical): max(k, m) * eps of the dtype, whatever the values."""
    assert tolerance_of(F32, (3, 8)) == 8 * 2.0 ** -23
    assert tolerance_of(np.array([[0.5, 1.0]]), (3, 8)) == 8 * 2.0 ** -52  # dyadic floats are floats
    assert tolerance_of(np.array([[1, 2]]), (3, 8)) == 0.0  # integers


def test_independent_rows_certified():
    A = np.random.default_rng(0).standard_normal((4, 9))
    c = certify_rho(A, tolerance=9 * 2.0 ** -23)
    assert c["decision"] == "holds" and c["rho_lower"] <= c["rho_upper"]


def test_rows_dependent_below_precision_certified_failing():
    """Control: independent as exact rationals, dependent within float32 precision."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 9))
    A[3] = A[0] + 2 * A[1] + 1e-9 * rng.standard_normal(9)
    assert np.linalg.matrix_rank(A, tol=0) == 4
    tau = tolerance_of(F32, A.shape)
    assert certify_rho(A, tolerance=tau)["decision"] == "fails"
    assert rho_upper_certificate(A, tolerance=tau)["decision"] == "fails"
    assert rho_upper_certificate(A, tolerance=1e-12)["decision"] == "undecided"  # an upper bound proves no hold


def test_nearly_parallel_rows_fail_with_the_sigma_max_bound():
    """rho = sigma_min / sigma_max with sigma_max ~ sqrt(k) for nearly parallel rows: the cheap
    certificate must divide by a lower bound of sigma_max, not by 1, to see the failure."""
    rng = np.random.default_rng(7)
    A = 1.0 + 3e-4 * rng.standard_normal((64, 128))  # rho ~ 1.2e-5 < tau = 128 eps32 ~ 1.5e-5 < sigma_min(U)
    tau = tolerance_of(F32, A.shape)
    rho = np.linalg.svd(A / np.linalg.norm(A, axis=1, keepdims=True), compute_uv=False)
    assert rho[-1] / rho[0] < tau < rho[-1]  # fails at precision, but sigma_min(U) alone is above tau
    assert rho_upper_certificate(A, tolerance=tau)["decision"] == "fails"


def test_float_screen_matches_svd():
    V = np.random.default_rng(3).standard_normal((12, 7))
    S = random_subsets(np.random.default_rng(0), 12, 5, 20)
    got = rho_screen(unit_gram(V), S)
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    want = [np.linalg.svd(U[s], compute_uv=False)[[-1, 0]] for s in S]
    assert np.allclose(got, [a / b for a, b in want], rtol=1e-6)


def test_all_square_subsets_fail_for_numerically_low_rank_data():
    rng = np.random.default_rng(4)
    V = rng.standard_normal((30, 5)) @ rng.standard_normal((5, 8))  # rank 5 < d = 8 up to rounding
    tau = tolerance_of(F32, (8, 8))
    assert certify_all_square_subsets(V, tolerance=tau)["all_dependent"]
    assert not certify_all_square_subsets(rng.standard_normal((30, 8)), tolerance=tau)["all_dependent"]


def test_kruskal_at_precision_finds_the_near_dependent_triple():
    rng = np.random.default_rng(5)
    V = rng.standard_normal((6, 10))
    V[5] = V[0] - V[1] + 1e-12 * rng.standard_normal(10)
    G, tau = unit_gram(V), tolerance_of(F32, (3, 10))
    r2 = kruskal_at_precision(V, 2, tolerance=tau, samples=100, rng=rng, certify=True, gram=G)
    assert r2["exhaustive"] and r2["status"] == "holds" and r2["independent"] == 15
    r3 = kruskal_at_precision(V, 3, tolerance=tau, samples=100, rng=rng, certify=False, gram=G)
    assert r3["status"] == "fails" and r3["basis"].startswith("certified") and r3["witness"] == [0, 1, 5]


def test_analyse_layer_reads_the_embedding_pattern():
    """Identical queries (the [CLS] at the embedding): Assumption 1 fails, certified exact;
    a context with a repeated token fails Assumption 2 exactly."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(12, 3, 8, generator=g)
    X[:, 0] = X[0, 0]
    budget = Budget(samples=10, exact_samples=0, kr_samples=3, kr_levels=3)
    out = analyse_layer(X, X[:, 0], budget=budget, seed=0, log=lambda s: None)
    assert out["assumption1"]["status"] == "fails" and out["assumption1"]["basis"].startswith("certified exact")
    assert out["assumption2"]["status"] == "holds"
    X[4, 2] = X[4, 1]
    out = analyse_layer(X, X[:, 0], budget=budget, seed=0, log=lambda s: None)
    assert out["assumption2"]["status"] == "fails" and "repeats a token" in out["assumption2"]["basis"]


def test_combine_keeps_exact_and_precision_failures_apart():
    from verifier.experiments.real_assumptions import combine

    screen = {"status": "holds", "basis": "evidence at precision (10/10)"}
    exact = {"at the data's precision": "fails (at the stored values)", "reason": "queries [0, 1] dependent"}
    assert combine(exact, screen) == ("fails", "certified exact (queries [0, 1] dependent)")
    box = {"witness": [0, 3, 7]}
    status, basis = combine({"at the data's precision": "fails", "over the data's intervals": box, "examples": 256},
                            screen)
    assert status == "fails" and basis.startswith("certified at the data's precision") and "[0, 3, 7]" in basis
    assert combine({"at the data's precision": "holds"}, screen) == ("holds", screen["basis"])


def test_analyse_layer_with_more_examples_than_dimensions():
    """T >= d: the all-d-subsets certificate and the registered general-position checker both run
    (a T >= d layer once crashed the table1 run)."""
    g = torch.Generator().manual_seed(1)
    X = torch.randn(40, 3, 8, generator=g)
    out = analyse_layer(X, X[:, 0], budget=Budget(samples=5, exact_samples=0, kr_samples=2, kr_levels=3),
                        seed=0, log=lambda s: None, exact_T=20)
    gp = out["general_position"]
    assert gp["k"] == 8 and "all_subsets_certificate" in gp and gp["status"] in ("holds", "fails")
