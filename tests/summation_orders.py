"""Float64 matrix products summed in other legal orders: the adversary for the
float certificates, whose a priori bounds claim to hold for ANY order.

:class:`OrderedBackend` is the numpy backend with one change: ``matmul``
rounds each term ``fl(a_il b_lj)`` once (as a BLAS without FMA does) and adds
the k terms of every dot product in the order named by ``order``:

* ``sequential``: left to right (``((t_1 + t_2) + t_3) + ...``);
* ``reversed``: right to left;
* ``pairwise``: a balanced tree (numpy's own ``sum`` strategy, OpenBLAS-like
  unrolling in the limit);
* ``blocked-<b>``: sequential within blocks of b terms, then the block sums
  left to right (a blocked GEMM's k-panels);
* ``permuted``: a random permutation per dot product (fixed seed), then
  sequential.

:data:`ADVERSARIAL_ORDERS` adds orders chosen per dot product from its terms
(issue 17, item 1), for the certificates' tests and the soundness sweep:

* ``largest-first``: sequential by decreasing ``|term|`` (every small term
  meets the largest partial sum: the most absorption);
* ``smallest-first``: sequential by increasing ``|term|`` (the classical
  accurate order: a bound that leans on cancellation errors averaging out
  sees the other side);
* ``fma``: left to right with a fused multiply-add, ``s <- fl(a_l b_l + s)``
  (the product is NOT rounded, as on a CPU or GPU with FMA; emulated
  exactly with rationals, so for small products only: at most
  :data:`FMA_LIMIT` terms).

Everything else (elementwise operations, ``inv``) is numpy's.  ``np.sum`` is
numpy's too, unless the module that calls it is run under
:func:`summation_order`, which also replaces that module's ``np`` by
:class:`OrderedNumpy` (``sum``, ``matmul`` and ``dot`` in the order; the rest
is numpy) and every numpy :class:`~verifier.arith.backend.Backend`'s
products by the order, so the certificates run unchanged through it, the
backend names included (``get_backend("numpy")`` inside a module sums in the
order too).  Meant for test-sized products: the terms are materialised,
``m k n`` floats.
Imported by tests as ``from summation_orders import ...`` (pytest puts
``tests/`` on the path: tests/conftest.py lives there and there is no
``__init__.py``).

>>> import numpy as np
>>> x = np.array([[1.0] + [2.0**-53] * 4])         # exact sum 1 + 4u
>>> [float(OrderedBackend("numpy", o).matmul(x, np.ones(5))[0]) - 1 for o in ("sequential", "reversed", "pairwise")]
[0.0, 4.440892098500626e-16, 4.440892098500626e-16]
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from verifier.arith.backend import Backend

__all__ = ["ORDERS", "ADVERSARIAL_ORDERS", "ALL_ORDERS", "FMA_LIMIT", "OrderedBackend", "OrderedNumpy",
           "ordered_backends", "ordered_matmul", "ordered_sum", "summation_order"]

ORDERS = ("sequential", "reversed", "pairwise", "blocked-4", "blocked-64", "permuted")
ADVERSARIAL_ORDERS = ("largest-first", "smallest-first", "fma")
ALL_ORDERS = ORDERS + ADVERSARIAL_ORDERS
FMA_LIMIT = 400_000  #: the ``fma`` order multiplies in Python rationals: at most this many terms per product


@dataclass(frozen=True)
class OrderedBackend(Backend):
    """The numpy backend, its products summed in ``order`` (one of :data:`ALL_ORDERS`)."""

    order: str = "sequential"
    seed: int = 0

    def matmul(self, a, b):
        return ordered_matmul(a, b, self.order, self.seed)


def ordered_backends(orders=ORDERS) -> list[OrderedBackend]:
    """One :class:`OrderedBackend` per order (default :data:`ORDERS`)."""
    return [OrderedBackend("numpy", order) for order in orders]


def ordered_sum(a, axis=None, order: str = "sequential", seed: int = 0):
    """``np.sum(a, axis)`` (one axis or all) added in ``order``."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return np.sum(a, axis=axis)
    terms = a.reshape(-1) if axis is None else np.moveaxis(a, axis, 0)
    out = _sum_terms(terms, order, seed)
    return out[()] if np.ndim(out) == 0 else out


class OrderedNumpy:
    """A stand-in for the ``numpy`` module inside one module under test:
    ``sum``, ``matmul`` and ``dot`` (2-D and below) in ``order``, every other
    name numpy's own."""

    def __init__(self, order: str, seed: int = 0):
        self.order, self.seed = order, seed
        self.products = 0  #: products computed in the order (through :func:`summation_order`'s backend patch)
        self.callers: dict[str, int] = {}  #: products per calling function (the first outside the float kernels)

    def count(self) -> None:
        """Count one product and the function that asked for it."""
        import sys

        self.products += 1
        f = sys._getframe(2)
        while f is not None and f.f_globals.get("__name__", "") in _KERNELS:
            f = f.f_back
        name = "?" if f is None else f"{f.f_globals.get('__name__', '?')}.{f.f_code.co_name}"
        self.callers[name] = self.callers.get(name, 0) + 1

    def __getattr__(self, name):
        return getattr(np, name)

    def sum(self, a, axis=None, **kw):
        if kw or isinstance(axis, tuple):
            return np.sum(a, axis=axis, **kw)
        return ordered_sum(a, axis, self.order, self.seed)

    def matmul(self, a, b):
        return ordered_matmul(a, b, self.order, self.seed)

    def dot(self, a, b):
        if np.ndim(a) > 2 or np.ndim(b) > 2 or np.ndim(a) == 0 or np.ndim(b) == 0:
            return np.dot(a, b)
        return ordered_matmul(a, b, self.order, self.seed)


_KERNELS = {"verifier.arith.backend", "verifier.arith.float_bounds", __name__}

#: the modules whose ``np`` :func:`summation_order` replaces (their plain sums are certified)
SHIMMED_MODULES = ("verifier.arith.float_bounds", "verifier.arith.float_certificates", "verifier.arith.float_accurate",
                   "verifier.arith.robustness_screen", "verifier.arith.float_exp", "verifier.model.mha_float",
                   "verifier.arith.gram_blocks")


@contextmanager
def summation_order(order: str, seed: int = 0):
    """Within the block every numpy :class:`~verifier.arith.backend.Backend`
    (``get_backend("numpy")`` included) multiplies in ``order``, so do
    ``batched_matmul`` and the float modules' ``np.sum``/``np.matmul``/``np.dot``
    (:data:`SHIMMED_MODULES`).  torch backends are left alone.  Restored on
    exit; not thread-safe (a test or one sweep instance at a time)."""
    import importlib

    from verifier.arith import backend as backend_module

    if order not in ALL_ORDERS:
        raise ValueError(f"unknown summation order {order!r}; choose from {', '.join(ALL_ORDERS)}")
    saved = []

    def patch(owner, attr, value):
        saved.append((owner, attr, owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)))
        setattr(owner, attr, value)

    plain_matmul = backend_module.Backend.__dict__["matmul"]
    shim = OrderedNumpy(order, seed)

    def matmul(self, a, b):
        if self.is_torch:
            return plain_matmul(self, a, b)
        shim.count()
        return ordered_matmul(a, b, order, seed)

    def batched(a, b):
        shim.count()
        return ordered_matmul(a, b, order, seed)

    patch(backend_module.Backend, "matmul", matmul)
    for mod in ("verifier.arith.backend", "verifier.model.mha"):
        m = importlib.import_module(mod)
        if hasattr(m, "batched_matmul"):
            patch(m, "batched_matmul", batched)
    for mod in SHIMMED_MODULES:
        patch(importlib.import_module(mod), "np", shim)
    try:
        yield shim
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)


def ordered_matmul(a, b, order: str = "sequential", seed: int = 0) -> np.ndarray:
    """``a @ b`` (numpy ``matmul`` shapes: vectors, matrices, stacks) with
    every dot product summed in ``order``."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    A = a[None, :] if a.ndim == 1 else a
    B = b[:, None] if b.ndim == 1 else b
    if order == "fma":
        out = _fma_matmul(A, B)
    else:
        out = _sum_terms(_terms(A, B), order, seed)
    if b.ndim == 1:
        out = out[..., 0]
    if a.ndim == 1:
        out = out[..., 0, :] if b.ndim > 1 else out[..., 0]
    return out


def _terms(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The products ``fl(A_il B_lj)`` as an array (k, ..., m, n)."""
    return np.moveaxis(A[..., :, :, None] * B[..., None, :, :], -2, 0)  # (k, ..., m, n), each rounded once


def _fma_matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``s <- fl(A_il B_lj + s)``, l = 1..k: one rounding per step (Python's
    ``float(Fraction)`` rounds correctly, subnormals included)."""
    from fractions import Fraction

    A, B = np.broadcast_arrays(A[..., :, :, None], B[..., None, :, :])  # (..., m, k, n)
    if A.size > FMA_LIMIT:
        raise ValueError(f"the fma order is emulated in rationals: {A.size} terms exceed FMA_LIMIT = {FMA_LIMIT}")
    A, B = np.moveaxis(A, -2, -1), np.moveaxis(B, -2, -1)  # (..., m, n, k)
    out = np.zeros(A.shape[:-1])
    for idx in np.ndindex(*out.shape):
        s = 0.0
        for x, y in zip(A[idx].tolist(), B[idx].tolist()):
            if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(s)):
                s = s + x * y  # IEEE's inf/nan propagation; no rational for them
                continue
            exact = Fraction(x) * Fraction(y) + Fraction(s)
            try:
                s = float(exact)
            except OverflowError:  # beyond the float range: rounds to an infinity
                s = float("inf") if exact > 0 else float("-inf")
        out[idx] = s
    return out


def _sequential(terms: np.ndarray) -> np.ndarray:
    """Left to right along axis 0: ``add.accumulate`` is defined by ``r_i =
    r_(i-1) + a_i`` (unlike ``add.reduce``, which numpy sums pairwise)."""
    if terms.shape[0] == 0:
        return np.zeros(terms.shape[1:])
    return np.add.accumulate(terms, axis=0)[-1]


def _sum_terms(terms: np.ndarray, order: str, seed: int) -> np.ndarray:
    """The sum over axis 0 in the named order."""
    k = terms.shape[0]
    if order == "sequential":
        return _sequential(terms)
    if order == "reversed":
        return _sequential(terms[::-1])
    if order == "pairwise":
        while terms.shape[0] > 1:
            h = terms.shape[0] // 2
            pairs = terms[:2 * h:2] + terms[1:2 * h:2]
            terms = np.concatenate([pairs, terms[2 * h:]]) if terms.shape[0] % 2 else pairs
        return terms[0] if k else np.zeros(terms.shape[1:])
    if order.startswith("blocked-"):
        size = int(order.split("-", 1)[1])
        nb = -(-k // size)
        padded = np.concatenate([terms, np.zeros((nb * size - k,) + terms.shape[1:])])  # + 0.0: no rounding
        blocks = padded.reshape((nb, size) + terms.shape[1:])
        return _sequential(_sequential(np.moveaxis(blocks, 1, 0)))
    if order == "permuted":
        return _sequential(np.random.default_rng(seed).permuted(terms, axis=0))  # each dot product on its own
    if order in ("largest-first", "smallest-first", "fma"):  # fma: a plain sum has no products to fuse
        if order == "fma":
            return _sequential(terms)
        key = np.abs(terms)
        idx = np.argsort(-key if order == "largest-first" else key, axis=0, kind="stable")
        return _sequential(np.take_along_axis(terms, idx, axis=0))
    raise ValueError(f"unknown summation order {order!r}; choose from {', '.join(ALL_ORDERS)}")
