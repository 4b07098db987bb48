"""One array backend for the float64 numerics: numpy, torch on the CPU, torch on CUDA.

The rigorous floating-point certificates (:mod:`.float_bounds`,
:mod:`.float_certificates`) and the float-ball model are written once against
this small interface; the error bounds they use hold for ANY order of
summation, so they are valid for OpenBLAS, MKL and cuBLAS alike.  Everything
is float64: a torch backend refuses other dtypes, and creating one switches
TF32 off for CUDA matrix products and convolutions (TF32 would silently round
float32 operands to 10-bit mantissas; float64 never uses it, but the switch
makes the guarantee independent of torch's defaults).

Names: ``"numpy"``, ``"torch-cpu"``, ``"torch-cuda"``; ``"auto"`` (the
default) is ``"torch-cuda"`` when CUDA is present, else ``"numpy"``: on this
project's 2-core CPU OpenBLAS's dgemm/LU/SVD were measured faster than
torch's MKL (e.g. 2353 x 2353 product 0.26 s vs 0.33 s, inverse 0.68 s vs
1.1 s, svdvals of 2353 x 9216 6.6 s vs 49 s), while torch wins on batched
products of many small matrices (the model uses it there: see
:func:`batched_matmul`).  The environment variable ``MHA_VERIFY_BACKEND``
overrides "auto".

>>> b = get_backend("numpy")
>>> b.name, float(b.to_numpy(b.matmul(b.asarray([[1.0, 2.0]]), b.asarray([[3.0], [4.0]])))[0, 0])
('numpy', 11.0)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from verifier.errors import InvalidInstance

__all__ = ["Backend", "get_backend", "BACKENDS", "batched_matmul", "cuda_available"]

BACKENDS = ("numpy", "torch-cpu", "torch-cuda")
#: square float64 matrices of at least this order are inverted by LAPACK's LU and its inverse (getrf, getri
#: with the optimal workspace): 18 vs 27 ms for numpy's solve against I at 621 x 621 (Fig. 2's minor), one BLAS
#: thread; smaller ones, and stacks, by numpy
LU_INVERSE_FROM = 128


def cuda_available() -> bool:
    """torch sees a CUDA device.  Without an NVIDIA driver on the machine
    (no /proc/driver/nvidia, no /dev/nvidia0) the answer is no WITHOUT
    importing torch (seconds on a busy CPU)."""
    import sys

    if "torch" not in sys.modules and not (os.path.exists("/proc/driver/nvidia/version")
                                           or os.path.exists("/dev/nvidia0")):
        return False
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    return bool(torch.cuda.is_available())


def _no_tf32() -> None:
    """Full float32 precision in torch's CUDA products (float64 is unaffected)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


@dataclass(frozen=True)
class Backend:
    """float64 arrays and the few operations the certificates need."""

    name: str

    @property
    def is_torch(self) -> bool:
        return self.name.startswith("torch")

    @property
    def device(self) -> str:
        return "cuda" if self.name == "torch-cuda" else "cpu"

    # -- conversion -------------------------------------------------------------
    def asarray(self, a):
        """A float64 array of this backend (copies only when it must)."""
        if self.is_torch:
            import torch

            if isinstance(a, torch.Tensor):
                if a.dtype != torch.float64:
                    raise InvalidInstance(f"float certificates need float64, got {a.dtype}")
                return a.to(self.device)
            arr = np.asarray(a, dtype=np.float64)
            if not arr.flags.writeable:  # read-only instance arrays: torch wants a writable buffer
                arr = arr.copy()
            return torch.as_tensor(arr, device=self.device)
        if not isinstance(a, np.ndarray) and type(a).__module__.startswith("torch"):
            a = a.detach().cpu().numpy()
        arr = np.asarray(a)
        if arr.dtype != np.float64:
            if arr.dtype.kind == "f" and arr.dtype.itemsize < 8 or arr.dtype.kind not in "fiub":
                raise InvalidInstance(f"float certificates need float64, got {arr.dtype}")
            arr = arr.astype(np.float64)
        return arr

    def to_numpy(self, a) -> np.ndarray:
        if self.is_torch:
            return a.detach().cpu().numpy()
        return np.asarray(a)

    # -- elementwise -------------------------------------------------------------
    def abs(self, a):
        return a.abs() if self.is_torch else np.abs(a)

    def maximum(self, a, b):
        if self.is_torch:
            import torch

            return torch.maximum(a, b if isinstance(b, torch.Tensor) else torch.as_tensor(b, dtype=a.dtype,
                                                                                           device=a.device))
        return np.maximum(a, b)

    def next_up(self, a):
        """The next float towards +inf (one ulp up, entrywise)."""
        if self.is_torch:
            import torch

            return torch.nextafter(a, torch.full_like(a, float("inf")))
        return np.nextafter(a, np.inf)

    def next_down(self, a):
        if self.is_torch:
            import torch

            return torch.nextafter(a, torch.full_like(a, float("-inf")))
        return np.nextafter(a, -np.inf)

    def exp(self, a):
        return a.exp() if self.is_torch else np.exp(a)

    def sqrt(self, a):
        return a.sqrt() if self.is_torch else np.sqrt(a)

    def rint(self, a):
        """Round to an integer-valued float (any integer will do for the callers)."""
        return a.round() if self.is_torch else np.rint(a)

    def ldexp(self, a, k):
        """a * 2**k for an integer-valued float array k."""
        if self.is_torch:
            import torch

            return torch.ldexp(a, k)
        return np.ldexp(a, k.astype(np.int64))

    def where(self, cond, a, b):
        if self.is_torch:
            import torch

            return torch.where(cond, a, b if isinstance(b, torch.Tensor) else torch.as_tensor(
                b, dtype=a.dtype, device=a.device))
        return np.where(cond, a, b)

    def argmax_onehot(self, a):
        """Boolean mask with exactly one True per row (last axis): the first argmax."""
        if self.is_torch:
            import torch

            idx = a.argmax(dim=-1, keepdim=True)
            return torch.zeros(a.shape, dtype=torch.bool, device=a.device).scatter_(-1, idx, True)
        idx = np.argmax(a, axis=-1)[..., None]
        mask = np.zeros(a.shape, dtype=bool)
        np.put_along_axis(mask, idx, True, axis=-1)
        return mask

    # -- reductions ----------------------------------------------------------------
    def max(self, a) -> float:
        """The largest entry as a Python float (nan if any entry is nan)."""
        if self.is_torch:
            return float(a.max()) if a.numel() else float("-inf")
        return float(np.max(a)) if a.size else float("-inf")

    def all_finite(self, a) -> bool:
        if self.is_torch:
            import torch

            return bool(torch.isfinite(a).all())
        return bool(np.all(np.isfinite(a)))

    def any(self, mask) -> bool:
        return bool(mask.any())

    # -- linear algebra ---------------------------------------------------------------
    def matmul(self, a, b):
        """``a @ b``; numpy stacks of matrices go through torch (see :func:`batched_matmul`)."""
        if not self.is_torch and (np.ndim(a) > 2 or np.ndim(b) > 2):
            return batched_matmul(a, b)
        return a @ b

    def eye(self, n: int):
        if self.is_torch:
            import torch

            return torch.eye(n, dtype=torch.float64, device=self.device)
        return np.eye(n)

    def ones(self, n: int):
        if self.is_torch:
            import torch

            return torch.ones(n, dtype=torch.float64, device=self.device)
        return np.ones(n)

    def empty_like(self, a):
        if self.is_torch:
            import torch

            return torch.empty_like(a)
        return np.empty_like(a)

    def zeros_like(self, a):
        if self.is_torch:
            import torch

            return torch.zeros_like(a)
        return np.zeros_like(a)

    def inv(self, a):
        """A float inverse, or None when the factorisation breaks down (any
        matrix is a valid preconditioner: its errors cannot make a test lie)."""
        try:
            if self.is_torch:
                import torch

                r = torch.linalg.inv(a)
            else:
                r = _lu_inverse(a)
        except (np.linalg.LinAlgError, RuntimeError):
            return None
        return r if r is not None and self.all_finite(r) else None

    def cholesky_lower(self, a):
        """Lower Cholesky factor from the lower triangle of ``a``, or None."""
        if self.is_torch:
            import torch

            L, info = torch.linalg.cholesky_ex(a)
            return None if int(info) != 0 else L
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            return None

    def eigvalsh(self, a):
        if self.is_torch:
            import torch

            return torch.linalg.eigvalsh(a)
        return np.linalg.eigvalsh(a)

    def tril(self, a):
        if self.is_torch:
            import torch

            return torch.tril(a)
        return np.tril(a)

    def diagonal(self, a):
        """The diagonal (a read-only view for numpy: use the in-place helpers to write)."""
        return a.diagonal() if self.is_torch else np.diagonal(a)

    def add_to_diagonal(self, a, x: float) -> None:
        """a_ii <- fl(a_ii + x) on the last two axes (stacks too), in place."""
        if self.is_torch:
            a.diagonal(dim1=-2, dim2=-1).add_(x)
        else:
            i = np.arange(min(a.shape[-2:]))
            a[..., i, i] += x

    def scale_diagonal(self, a, x: float) -> None:
        """a_ii <- fl(a_ii * x) on the last two axes, in place."""
        if self.is_torch:
            a.diagonal(dim1=-2, dim2=-1).mul_(x)
        else:
            i = np.arange(min(a.shape[-2:]))
            a[..., i, i] *= x

    def mm(self, a, b) -> np.ndarray:
        """``a @ b`` for numpy arrays, computed on this backend, returned as numpy
        (the construction's large products; a no-op wrapper for numpy)."""
        if not self.is_torch:
            return self.matmul(np.asarray(a), np.asarray(b))
        import torch

        ta = _torch_view(a).to(self.device)
        tb = _torch_view(b).to(self.device)
        return torch.matmul(ta, tb).cpu().numpy()

    def synchronize(self) -> None:
        """Wait for the device (for timings)."""
        if self.name == "torch-cuda":
            import torch

            torch.cuda.synchronize()


def _lu_inverse(a):
    """numpy's inverse, or for one float64 matrix of order at least
    :data:`LU_INVERSE_FROM` LAPACK's ``getrf`` + ``getri`` (scipy's raw
    wrappers: no condition-number warning, which would be process-wide
    state); None where the LU has an exact zero pivot."""
    a = np.asarray(a)
    if a.ndim != 2 or a.dtype != np.float64 or a.shape[0] != a.shape[1] or a.shape[0] < LU_INVERSE_FROM:
        return np.linalg.inv(a)
    return _getrf_getri(a)


def _getrf_getri(a):
    """LAPACK's inverse of one float64 matrix (its LU, then the inverse from it), or None at an exact zero pivot."""
    from scipy.linalg import lapack

    lu, piv, info = lapack.dgetrf(a)
    if info != 0:  # < 0: an argument (never, for a square array); > 0: U_ii = 0 exactly
        return None
    lwork, info = lapack.dgetri_lwork(a.shape[0])
    r, info = lapack.dgetri(lu, piv, lwork=int(lwork), overwrite_lu=True)
    return r if info == 0 else None


@lru_cache(maxsize=None)
def _make(name: str) -> Backend:
    if name.startswith("torch"):
        _no_tf32()
        if name == "torch-cuda" and not cuda_available():
            raise InvalidInstance("backend 'torch-cuda' asked for, but torch sees no CUDA device")
    return Backend(name)


def get_backend(name: str | Backend | None = "auto") -> Backend:
    """The backend called ``name`` (``"auto"``/None: see the module docstring)."""
    if isinstance(name, Backend):
        return name
    if name in (None, "auto"):
        name = os.environ.get("MHA_VERIFY_BACKEND") or ("torch-cuda" if cuda_available() else "numpy")
    if name == "torch":
        name = "torch-cuda" if cuda_available() else "torch-cpu"
    if name not in BACKENDS:
        raise InvalidInstance(f"unknown backend {name!r}; choose from auto, torch, {', '.join(BACKENDS)}")
    return _make(name)


def _torch_view(a: np.ndarray):
    """A torch tensor sharing ``a``'s memory (no copy; read-only arrays too:
    the products never write into their operands)."""
    import warnings

    import torch

    a = np.asarray(a, dtype=np.float64)
    if any(st < 0 for st in a.strides):
        a = np.ascontiguousarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "non-writable array": nothing writes into it
        return torch.as_tensor(a)


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul`` of stacks of matrices, computed by torch (numpy's stacked
    matmul does not reach BLAS speed: 8 s vs 0.24 s for 757 products of
    197 x 768 by 768 x 12 on this machine).  float64 in, float64 out."""
    return (_torch_view(a) @ _torch_view(b)).numpy()
