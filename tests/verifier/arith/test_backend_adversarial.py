"""The array backend (verifier/arith/backend.py) that every float certificate
runs on, each operation checked on values where its result is exact and
machine-independent (issue 17, item 2): ulp steps at 0, subnormals and
2^400, nan/inf and empty reductions, ties in argmax, breakdowns of inv and
Cholesky (None, never a wrong factor), in-place diagonal updates on stacks,
and stacked products (exact on small integers) in numpy and torch.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from verifier.arith import backend as bk
from verifier.arith.backend import BACKENDS, Backend, batched_matmul, get_backend
from verifier.errors import InvalidInstance

NAMES = ["numpy", "torch-cpu"]
TINY = 2.0**-1074


@pytest.fixture(params=NAMES)
def b(request) -> Backend:
    return get_backend(request.param)


def _np(b, x):
    return b.to_numpy(x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # next_up of the largest float is inf
def test_next_up_and_down_are_one_ulp_everywhere(b):
    x = np.array([0.0, -0.0, TINY, -TINY, 1.0, -1.0, 2.0**400, 2.0**-1022, np.finfo(float).max])
    up, dn = _np(b, b.next_up(b.asarray(x))), _np(b, b.next_down(b.asarray(x)))
    assert all(u == math.nextafter(v, math.inf) for u, v in zip(up, x))
    assert all(d == math.nextafter(v, -math.inf) for d, v in zip(dn, x))


def test_elementwise_operations_are_exact_where_float64_is(b):
    x = b.asarray(np.array([-2.5, -0.5, 0.5, 1.5, 3.0, -TINY]))
    assert np.array_equal(_np(b, b.abs(x)), [2.5, 0.5, 0.5, 1.5, 3.0, TINY])
    assert np.array_equal(_np(b, b.maximum(x, 0.5)), [0.5, 0.5, 0.5, 1.5, 3.0, 0.5])
    assert np.array_equal(_np(b, b.maximum(x, b.asarray(np.full(6, -1.0)))), [-1.0, -0.5, 0.5, 1.5, 3.0, -TINY])
    r = _np(b, b.rint(x))
    assert np.all(r == np.round(r)) and np.all(np.abs(r - _np(b, x)) <= 0.5)
    assert np.array_equal(_np(b, b.ldexp(b.asarray(np.array([1.0, 3.0, 1.0])), b.asarray(np.array([-1074.0, 2.0,
                                                                                                     1023.0])))),
                          [TINY, 12.0, 2.0**1023])
    assert np.array_equal(_np(b, b.where(x > 0, x, 7.0)), [7.0, 7.0, 0.5, 1.5, 3.0, 7.0])
    assert np.array_equal(_np(b, b.where(x > 0, x, b.asarray(np.zeros(6)))), [0, 0, 0.5, 1.5, 3.0, 0])
    assert np.array_equal(_np(b, b.sqrt(b.asarray(np.array([4.0, 2.0**-1074 * 4, 0.0])))), [2.0, 2.0**-536, 0.0])
    assert _np(b, b.exp(b.asarray(np.array([0.0]))))[0] == 1.0


def test_argmax_onehot_picks_the_first_of_ties(b):
    a = b.asarray(np.array([[1.0, 3.0, 3.0], [-1.0, -1.0, -1.0], [0.0, 0.0, 2.0]]))
    m = _np(b, b.argmax_onehot(a))
    assert m.dtype == bool
    assert np.array_equal(m, [[False, True, False], [True, False, False], [False, False, True]])
    s = _np(b, b.argmax_onehot(b.asarray(np.array([[[5.0, 5.0]], [[1.0, 2.0]]]))))
    assert np.array_equal(s, [[[True, False]], [[False, True]]])


def test_reductions_handle_nan_inf_and_empty(b):
    assert b.max(b.asarray(np.array([1.0, -3.0, 2.5]))) == 2.5
    assert math.isnan(b.max(b.asarray(np.array([1.0, np.nan]))))
    assert b.max(b.asarray(np.zeros((0, 3)))) == -math.inf
    assert b.all_finite(b.asarray(np.array([1.0, 2.0**1023])))
    for bad in (np.inf, -np.inf, np.nan):
        assert not b.all_finite(b.asarray(np.array([1.0, bad])))
    assert b.any(b.asarray(np.array([0.0, 1.0])) > 0.5) is True
    assert b.any(b.asarray(np.array([0.0, 1.0])) > 2.0) is False


def test_inv_breaks_down_to_none_never_to_a_wrong_inverse(b):
    A = b.asarray(np.array([[2.0, 0.0], [0.0, 4.0]]))
    assert np.allclose(_np(b, b.inv(A)), [[0.5, 0.0], [0.0, 0.25]], rtol=1e-13, atol=1e-13)  # LAPACK: a few ulps
    assert b.inv(b.asarray(np.zeros((2, 2)))) is None  # singular
    assert b.inv(b.asarray(np.array([[1e-320, 0.0], [0.0, 1.0]]))) is None  # inverse overflows: inf
    assert b.inv(b.asarray(np.array([[np.nan, 0.0], [0.0, 1.0]]))) is None


def test_cholesky_of_a_non_positive_matrix_is_none(b):
    L = b.cholesky_lower(b.asarray(np.array([[4.0, 2.0], [2.0, 2.0]])))
    assert np.allclose(_np(b, L), [[2.0, 0.0], [1.0, 1.0]], rtol=1e-13, atol=1e-13)  # LAPACK: a few ulps
    assert b.cholesky_lower(b.asarray(np.array([[1.0, 2.0], [2.0, 1.0]]))) is None
    assert b.cholesky_lower(b.asarray(np.array([[-1.0]]))) is None


def test_small_linear_algebra_is_exact_on_integers(b):
    A = b.asarray(np.array([[2.0, 1.0], [1.0, 2.0]]))
    assert np.allclose(_np(b, b.eigvalsh(A)), [1.0, 3.0], rtol=1e-13, atol=1e-13)
    assert np.array_equal(_np(b, b.tril(A)), [[2.0, 0.0], [1.0, 2.0]])
    assert np.array_equal(_np(b, b.diagonal(A)), [2.0, 2.0])
    assert np.array_equal(_np(b, b.eye(2)), np.eye(2)) and np.array_equal(_np(b, b.ones(3)), np.ones(3))
    z = b.zeros_like(A)
    assert np.array_equal(_np(b, z), np.zeros((2, 2))) and tuple(b.empty_like(A).shape) == (2, 2)


def test_diagonal_updates_in_place_on_stacks_and_rectangles(b):
    S = b.asarray(np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3))
    b.add_to_diagonal(S, 0.5)
    b.scale_diagonal(S, 2.0)
    want = np.arange(12, dtype=float).reshape(2, 2, 3)
    for k in range(2):
        for i in range(2):
            want[k, i, i] = (want[k, i, i] + 0.5) * 2.0
    assert np.array_equal(_np(b, S), want)


def test_matmul_and_mm_on_matrices_and_stacks(b):
    rng = np.random.default_rng(0)
    A = rng.integers(-9, 10, (3, 4, 5)).astype(float)
    B = rng.integers(-9, 10, (3, 5, 2)).astype(float)
    want = np.stack([A[i] @ B[i] for i in range(3)])  # small integers: exact in any order
    assert np.array_equal(_np(b, b.matmul(b.asarray(A), b.asarray(B))), want)
    assert np.array_equal(_np(b, b.matmul(b.asarray(A[0]), b.asarray(B[0]))), want[0])
    assert np.array_equal(b.mm(A[0], B[0]), want[0])
    assert isinstance(b.mm(A[1], B[1]), np.ndarray)
    assert np.array_equal(batched_matmul(A, B), want)
    assert np.array_equal(batched_matmul(A[:, ::-1], B), np.stack([A[i, ::-1] @ B[i] for i in range(3)]))


def test_asarray_keeps_float64_and_refuses_narrower_floats(b):
    x = b.asarray(np.array([1, 2, 3], dtype=np.int64))
    assert _np(b, x).dtype == np.float64 and np.array_equal(_np(b, x), [1.0, 2.0, 3.0])
    assert _np(b, b.asarray(np.array([True, False]))).dtype == np.float64
    ro = np.array([1.0, 2.0])
    ro.flags.writeable = False
    assert np.array_equal(_np(b, b.asarray(ro)), ro)
    assert _np(b, b.asarray(torch.tensor([1.5], dtype=torch.float64)))[0] == 1.5
    if b.is_torch:  # numpy float32 is widened exactly; a float32 tensor is refused
        assert _np(b, b.asarray(np.array([0.1], dtype=np.float32)))[0] == float(np.float32(0.1))
        with pytest.raises(InvalidInstance):
            b.asarray(torch.tensor([1.0], dtype=torch.float32))
    else:
        for bad in (np.array([1.0], dtype=np.float32), np.array([1.0], dtype=np.float16), np.array(["a"])):
            with pytest.raises(InvalidInstance):
                b.asarray(bad)


def test_backend_names():
    assert get_backend("numpy").name == "numpy" and not get_backend("numpy").is_torch
    t = get_backend("torch-cpu")
    assert t.is_torch and t.device == "cpu" and get_backend(t) is t
    assert get_backend("numpy").device == "cpu"
    assert get_backend("torch").name in ("torch-cpu", "torch-cuda")
    assert get_backend(None).name in BACKENDS and get_backend("auto").name in BACKENDS
    with pytest.raises(InvalidInstance):
        get_backend("cupy")
    if not bk.cuda_available():
        assert get_backend("auto").name == "numpy" or "MHA_VERIFY_BACKEND" in __import__("os").environ
        assert get_backend("torch").name == "torch-cpu"
        bk._make.cache_clear()
        with pytest.raises(InvalidInstance):
            get_backend("torch-cuda")


def test_torch_backend_switches_tf32_off():
    get_backend("torch-cpu")
    bk._no_tf32()
    assert torch.backends.cuda.matmul.allow_tf32 is False and torch.backends.cudnn.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"
