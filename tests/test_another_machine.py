"""The ``--another-machine`` shim itself (tests/another_machine.py): its products
are legal float64 results in other summation orders (within the a priori bound
of every order, exact where every order is exact), they do differ from this
machine's, and its LAPACK moves are small, deterministic and keep exact zeros."""
from fractions import Fraction

import numpy as np
import pytest

from verifier.arith.exact import to_fmpq_mat
from verifier.arith.float_bounds import gamma

try:
    import another_machine as am  # registered by conftest under the option
except ImportError:  # pragma: no cover - tests/ is on sys.path (rootdir conftest)
    pytest.skip("tests/another_machine.py not importable", allow_module_level=True)

RNG = np.random.default_rng(0)


def _orig(name):
    """The unpatched numpy function (the option may have patched it)."""
    return am._ORIGINALS.get((np, name), getattr(np, name))


def test_reordered_products_stay_within_the_any_order_bound():
    mm = _orig("matmul")
    A = RNG.standard_normal((7, 300)) * np.exp(RNG.uniform(-20, 20, (7, 300)))
    B = RNG.standard_normal((300, 5))
    exact = to_fmpq_mat(A) * to_fmpq_mat(B)
    g = gamma(300)
    absAB = np.abs(A) @ np.abs(B)
    differs = False
    for seed in range(6):
        am.set_seed(f"order {seed}")
        C = am.reordered(mm, A, B)
        differs |= not np.array_equal(C, mm(A, B))
        for i in range(7):
            for j in range(5):
                e = exact[i, j]
                err = abs(Fraction(float(C[i, j])) - Fraction(int(e.p), int(e.q)))
                assert err <= g * Fraction(float(absAB[i, j])) * (1 + Fraction(1, 10**6))
    assert differs, "the shim never changed the summation order"


def test_reordered_products_are_exact_where_every_order_is():
    mm = _orig("matmul")
    A = RNG.integers(-50, 51, (6, 40)).astype(float)
    B = RNG.integers(-50, 51, (40, 3)).astype(float)
    for seed in range(4):
        am.set_seed(f"exact {seed}")
        assert np.array_equal(am.reordered(mm, A, B), A @ B)
        assert np.array_equal(am.reordered(mm, A, B[:, 0]), A @ B[:, 0])  # matrix-vector
        stack = np.stack([A, -A])
        assert np.array_equal(am.reordered(mm, stack, B), stack @ B)  # stacks


def test_lapack_moves_are_small_deterministic_and_keep_zeros():
    am.set_seed("lapack")
    plain = am._ORIGINALS.get((np.linalg, "inv"), np.linalg.inv)
    inv = am._lapack("numpy.linalg.inv", plain)
    M = np.diag([2.0, 4.0, 8.0]) + np.triu(RNG.standard_normal((3, 3)), 1)
    R1, R2 = inv(M), inv(M.copy())
    assert np.array_equal(R1, R2)  # the same input, the same output (as on a real machine)
    assert np.allclose(R1, plain(M), rtol=1e-13, atol=0) and not np.array_equal(R1, plain(M))
    assert np.all(R1[np.tril_indices(3, -1)] == 0.0)  # structural zeros stay exact
    svd = am._lapack("numpy.linalg.svd", am._ORIGINALS.get((np.linalg, "svd"), np.linalg.svd))
    res = svd(M)
    assert type(res).__name__ == "SVDResult" and res.S.shape == (3,)


def test_reordered_sums_are_legal_orders_that_differ():
    """np.sum on another machine: within the any-order bound gamma(n-1) sum|x|, exact
    where every order is (integers), and another order than this machine's."""
    add = am._ORIGINALS.get((np, "sum"), np.sum)
    x = RNG.permutation(np.r_[1.0, np.full(999, 2.0**-53), -RNG.standard_normal(200)])
    exact = sum(map(Fraction, x.tolist()))
    ints = RNG.integers(-1000, 1001, (50, 7)).astype(float)
    results = set()
    for seed in range(6):
        am.set_seed(f"sum {seed}")
        s = am.reordered_sum(add, x, 0)
        assert abs(Fraction(float(s)) - exact) <= gamma(x.size - 1) * Fraction(float(np.abs(x).sum()))
        results.add(float(s))
        assert np.array_equal(am.reordered_sum(add, ints, 0), ints.sum(axis=0))
        assert np.array_equal(am.reordered_sum(add, ints, 1), ints.sum(axis=1))
    assert len(results) > 1, "the shim never changed the summation order"
