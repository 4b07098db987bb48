"""The array backend (verifier/arith/backend.py) that every float certificate
runs on, each operation checked on values where its result is exact and
machine-independent (issue 17, item 2): ulp steps at 0, subnormals and
2^400, nan/inf and empty reductions, ties in argmax, breakdowns of inv and
Cholesky (None, never a wrong factor), in-place diagonal updates on stacks,
and stacked products (exact on small integers) in numpy and torch.
Then the selection logic (CUDA patched in, never needed), conversions to float64,
memory sharing, and which library computes what (spies), for the backend's mutants.
"""
from __future__ import annotations

import builtins
import math
import os
import sys
import warnings

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


# -- issue 17, item 2: the backend's survivors (selection, conversion, dispatch) ---------------------------------

NVIDIA = ("/proc/driver/nvidia/version", "/dev/nvidia0")


def _driver(monkeypatch, present) -> None:
    """os.path.exists sees exactly the NVIDIA driver files in ``present`` (other paths: the real answer)."""
    real = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: p in present if p in NVIDIA else real(p))


@pytest.fixture
def fresh(monkeypatch):
    """No MHA_VERIFY_BACKEND, and _make's cache empty before and after (a patched CUDA leaves no backend behind)."""
    monkeypatch.delenv("MHA_VERIFY_BACKEND", raising=False)
    bk._make.cache_clear()
    yield
    bk._make.cache_clear()


def test_cuda_available_asks_torch_once_torch_is_imported(monkeypatch):
    """torch is imported (by this module): its answer decides, whatever driver files exist."""
    assert "torch" in sys.modules
    for present in ((), NVIDIA[:1], NVIDIA):
        _driver(monkeypatch, present)
        for answer in (True, False):
            monkeypatch.setattr(torch.cuda, "is_available", lambda answer=answer: answer)
            assert bk.cuda_available() is answer


def test_cuda_available_without_torch_imported_needs_a_driver_file(monkeypatch):
    """torch not imported yet (sys.modules without it): no driver file -> False without asking torch;
    either driver file -> torch's answer."""
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items() if k != "torch"})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    _driver(monkeypatch, ())
    assert bk.cuda_available() is False
    for present in (NVIDIA[:1], NVIDIA[1:], NVIDIA):
        _driver(monkeypatch, present)
        assert bk.cuda_available() is True


def test_cuda_available_is_false_when_torch_cannot_be_imported(monkeypatch):
    real = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("no torch here")
        return real(name, *args, **kwargs)

    _driver(monkeypatch, NVIDIA)
    monkeypatch.setattr(builtins, "__import__", no_torch)
    assert bk.cuda_available() is False


def test_auto_and_torch_follow_cuda_availability(fresh, monkeypatch):
    """'auto' (the default, None) is torch-cuda exactly when CUDA is present, else numpy; 'torch' is
    torch-cuda or torch-cpu.  CUDA is patched in: a torch-cuda Backend object is made, no device is touched."""
    for cuda, auto, torch_name in ((False, "numpy", "torch-cpu"), (True, "torch-cuda", "torch-cuda")):
        monkeypatch.setattr(bk, "cuda_available", lambda cuda=cuda: cuda)
        bk._make.cache_clear()
        assert get_backend().name == get_backend(None).name == get_backend("auto").name == auto
        assert get_backend("torch").name == torch_name
        assert get_backend("torch").device == ("cuda" if cuda else "cpu")


def test_the_environment_variable_overrides_auto_only(fresh, monkeypatch):
    monkeypatch.setattr(bk, "cuda_available", lambda: False)
    monkeypatch.setenv("MHA_VERIFY_BACKEND", "torch-cpu")
    assert get_backend().name == get_backend(None).name == get_backend("auto").name == "torch-cpu"
    assert get_backend("numpy").name == "numpy"  # a name given explicitly wins
    monkeypatch.setenv("MHA_VERIFY_BACKEND", "")
    assert get_backend().name == "numpy"
    monkeypatch.setenv("MHA_VERIFY_BACKEND", "cupy")
    with pytest.raises(InvalidInstance):
        get_backend()


def test_no_tf32_sets_the_highest_precision_whatever_the_state_before():
    """Whatever precision was set before (TF32 allowed by 'high' and 'medium'), _no_tf32 leaves 'highest'
    and TF32 off, and warns about nothing (an unknown precision name only warns in torch)."""
    for before in ("high", "medium", "highest"):
        torch.set_float32_matmul_precision(before)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            bk._no_tf32()
        assert torch.get_float32_matmul_precision() == "highest"
        assert torch.backends.cuda.matmul.allow_tf32 is False and torch.backends.cudnn.allow_tf32 is False


def test_torch_view_shares_memory_and_copies_only_negative_strides():
    x = np.arange(12.0).reshape(3, 4)
    ro = np.arange(4.0)
    ro.flags.writeable = False
    for a in (x, x.T, x[:, ::2], np.broadcast_to(np.arange(4.0), (5, 4)), ro):  # strides >= 0, 0 included
        t = bk._torch_view(a)
        assert t.dtype == torch.float64 and np.array_equal(t.numpy(), a)
        assert t.data_ptr() == a.__array_interface__["data"][0]  # no copy
    t = bk._torch_view(x[:, ::-1])
    assert np.array_equal(t.numpy(), x[:, ::-1])


def test_batched_matmul_and_mm_compute_in_float64_whatever_the_input_dtype():
    """float32 and integer operands are converted to float64 first: 4097^2 = 2^24 + 8193 is exact in float64,
    not in float32."""
    A = np.full((2, 1, 1), 4097.0, dtype=np.float32)
    for a in (A, A.astype(np.int64)):
        p = batched_matmul(a, a)
        assert p.dtype == np.float64 and np.all(p == 4097.0**2)
        q = get_backend("torch-cpu").mm(a[0], a[0])
        assert q.dtype == np.float64 and q[0, 0] == 4097.0**2


def test_asarray_of_python_lists_and_numbers(b):
    assert np.array_equal(_np(b, b.asarray([1.0, 2.5])), [1.0, 2.5])
    assert np.array_equal(_np(b, b.asarray([[1, 2]])), [[1.0, 2.0]])
    assert _np(b, b.asarray(3.0)) == 3.0


def test_numpy_backend_reads_tensors_that_require_grad():
    p = torch.nn.Parameter(torch.tensor([1.5, -2.0], dtype=torch.float64))  # np.asarray(p) raises
    x = get_backend("numpy").asarray(p)
    assert isinstance(x, np.ndarray) and np.array_equal(x, [1.5, -2.0])


def test_torch_asarray_copies_only_read_only_arrays():
    t = get_backend("torch-cpu")
    w = np.array([1.0, 2.0])
    assert t.asarray(w).data_ptr() == w.__array_interface__["data"][0]  # writable: shared
    ro = np.array([3.0, 4.0])
    ro.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns about a non-writable buffer
        x = t.asarray(ro)
    assert np.array_equal(t.to_numpy(x), ro) and x.data_ptr() != ro.__array_interface__["data"][0]


def test_torch_backend_computes_elementwise_in_torch():
    """The torch backend's operations run in torch, also on tensors numpy cannot read (requires_grad)."""
    t = get_backend("torch-cpu")

    def g(v):
        return t.asarray(torch.tensor(v, dtype=torch.float64, requires_grad=True))

    assert np.array_equal(t.to_numpy(t.abs(g([-2.25, 0.0]))), [2.25, 0.0])
    assert np.array_equal(t.to_numpy(t.sqrt(g([4.0, 2.25]))), [2.0, 1.5])
    assert np.array_equal(t.to_numpy(t.exp(g([0.0]))), [1.0])
    assert np.array_equal(t.to_numpy(t.rint(g([-2.5, 0.5, 1.5, 2.25]))), [-2.0, 0.0, 2.0, 2.0])


def test_eye_and_ones_are_float64(b):
    assert _np(b, b.eye(3)).dtype == np.float64 and _np(b, b.ones(3)).dtype == np.float64


def test_diagonal_updates_reach_every_diagonal_entry_of_a_stack_of_one(b):
    for shape in ((1, 3, 3), (1, 2, 4), (2, 4, 3)):
        S = b.asarray(np.ones(shape))
        b.add_to_diagonal(S, 1.0)
        b.scale_diagonal(S, 4.0)
        want = np.ones(shape)
        for i in range(min(shape[-2:])):
            want[..., i, i] = 8.0
        assert np.array_equal(_np(b, S), want)


def test_scalar_operands_keep_every_bit(b):
    """A Python float beside a float64 array is used as float64 (1 + 2^-40 and 2^-1074 are not float32)."""
    x = b.asarray(np.array([0.0, 2.0]))
    for v in (1.0 + 2.0**-40, TINY):
        assert np.array_equal(_np(b, b.maximum(x, v)), [v, 2.0])
        assert np.array_equal(_np(b, b.where(x > 1.0, x, v)), [v, 2.0])


def test_numpy_stacks_go_through_torch_and_matrices_through_numpy(monkeypatch):
    """numpy backend: a product with an operand of more than 2 axes goes to batched_matmul (torch), a product
    of matrices stays with numpy's @; the torch backend always uses its own @."""
    calls = []

    def spy(a, b):
        calls.append((np.ndim(a), np.ndim(b)))
        return batched_matmul(a, b)

    monkeypatch.setattr(bk, "batched_matmul", spy)
    n, t = get_backend("numpy"), get_backend("torch-cpu")
    M, S = np.arange(4.0).reshape(2, 2), np.arange(8.0).reshape(2, 2, 2)
    for a, b_ in ((M, M), (S, S), (S, M), (M, S), (M, M[0])):
        calls.clear()
        assert np.array_equal(n.matmul(a, b_), a @ b_)
        # --another-machine computes a product in blocks (another summation order): one call or several
        stacked = max(np.ndim(a), np.ndim(b_)) > 2
        assert (bool(calls) and set(calls) == {(np.ndim(a), np.ndim(b_))}) if stacked else calls == []
        calls.clear()
        assert np.array_equal(t.to_numpy(t.matmul(t.asarray(a), t.asarray(b_))), a @ b_) and calls == []


def test_mm_computes_on_its_own_backend(monkeypatch):
    """numpy's mm stays with numpy; torch-cpu's mm calls torch.matmul (small integers: exact either way)."""
    calls = []
    real = torch.matmul
    monkeypatch.setattr(torch, "matmul", lambda a, b: calls.append(1) or real(a, b))
    A = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(get_backend("numpy").mm(A, A.T), A @ A.T) and calls == []
    out = get_backend("torch-cpu").mm(A, A.T)
    assert isinstance(out, np.ndarray) and np.array_equal(out, A @ A.T) and calls  # one call, or one per block


def test_synchronize_waits_for_cuda_only(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: calls.append(1))
    get_backend("numpy").synchronize()
    get_backend("torch-cpu").synchronize()
    assert calls == []
    Backend("torch-cuda").synchronize()  # the object only (no device is touched: synchronize is patched)
    assert calls == [1]
