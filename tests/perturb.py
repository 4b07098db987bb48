"""Another machine, simulated: float results that differ in their last bits.

Two machines (another BLAS, another SIMD width, another summation order)
compute the same float64 functions to within a few ulps of each other, not
bit for bit.  :func:`another_machine` patches what the project's float
diagnostics are computed with, so that a test can run the same code twice,
plainly and "on another machine", and compare what must not change:

* the results of the ``numpy.linalg`` functions the project calls
  (:data:`LINALG`) and of ``scipy.linalg.qr`` / ``solve_triangular``: every
  float entry multiplied by ``1 + k * 2**-53`` with ``k`` drawn uniformly
  from ``-ulps .. ulps`` (a seeded generator: the same perturbation on every
  run);
* ``numpy.sum`` / ``numpy.dot`` / ``numpy.matmul`` called as functions
  (the ``@`` operator is a C slot and stays exact): the same relative
  perturbation, standing in for another summation order.

Only calls made by the project's own modules (:data:`CALLERS`) are
perturbed.  Integers, booleans, ``matrix_rank`` (an integer) and integer-valued float
entries (exact in every summation order) are left alone.  Usage::

    from tests.perturb import another_machine
    with another_machine(ulps=4, seed=1):
        run_the_code()

or the pytest fixture ``monkeypatch`` with :func:`patch_another_machine`.
The lead may unify this with the suite-wide ``--another-machine`` option.
"""
from __future__ import annotations

import contextlib
import functools
import sys

import numpy as np
import scipy.linalg

#: numpy.linalg functions whose float results are perturbed
LINALG = ("svd", "norm", "qr", "eigvalsh", "eigh", "eigvals", "pinv", "inv", "lstsq", "cholesky", "solve", "det",
          "cond", "slogdet")
#: numpy functions (called as ``np.<name>``) whose float results are perturbed
NUMPY = ("dot", "matmul", "sum")
SCIPY_LINALG = ("qr", "solve_triangular", "svd", "svdvals")
#: only calls made from these packages are perturbed (the project's own float steps; matplotlib's
#: transforms, torch and scipy's internals stay as they are)
CALLERS = ("verifier", "proofs")


def _jiggle(rng: np.random.Generator, ulps: int):
    def perturb(x):
        if isinstance(x, tuple):  # svd, qr, eigh, lstsq, slogdet: every float part
            return type(x)(*(perturb(v) for v in x)) if hasattr(x, "_fields") else tuple(perturb(v) for v in x)
        a = np.asarray(x)
        if a.dtype.kind not in "fc" or a.size == 0:
            return x
        k = rng.integers(-ulps, ulps + 1, size=a.shape)
        k = np.where(a == np.round(a), 0, k)  # integer values: exact in every order, on every machine
        out = a * (1.0 + k * np.finfo(a.dtype).eps / 2)
        return out.astype(a.dtype) if isinstance(x, np.ndarray) else type(x)(out) if np.isscalar(x) else out
    return perturb


def _wrap(fn, perturb, callers):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        out = fn(*args, **kwargs)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        return perturb(out) if caller.startswith(callers) else out
    wrapped.__wrapped_by_another_machine__ = True
    return wrapped


def _targets():
    for name in LINALG:
        if hasattr(np.linalg, name):
            yield np.linalg, name
    for name in NUMPY:
        yield np, name
    for name in SCIPY_LINALG:
        if hasattr(scipy.linalg, name):
            yield scipy.linalg, name


def patch_another_machine(setattr_, *, ulps: int = 4, seed: int = 1, callers=CALLERS) -> None:
    """Patch with ``setattr_(module, name, value)`` (e.g. ``monkeypatch.setattr``)."""
    perturb = _jiggle(np.random.default_rng(seed), ulps)
    for module, name in _targets():
        fn = getattr(module, name)
        if not getattr(fn, "__wrapped_by_another_machine__", False):
            setattr_(module, name, _wrap(fn, perturb, tuple(callers)))


@contextlib.contextmanager
def another_machine(*, ulps: int = 4, seed: int = 1, callers=CALLERS):
    """Within the block, float results of :data:`LINALG`, :data:`NUMPY` and
    :data:`SCIPY_LINALG` differ from the plain ones by a few ulps."""
    saved = [(m, n, getattr(m, n)) for m, n in _targets()]
    try:
        patch_another_machine(setattr, ulps=ulps, seed=seed, callers=callers)
        yield
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)
