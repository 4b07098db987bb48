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

Everything else (elementwise operations, ``sum``, ``inv``) is numpy's.  Meant
for test-sized products: the terms are materialised, ``m k n`` floats.
Imported by tests as ``from summation_orders import ...`` (pytest puts
``tests/`` on the path: tests/conftest.py lives there and there is no
``__init__.py``).

>>> import numpy as np
>>> x = np.array([[1.0] + [2.0**-53] * 4])         # exact sum 1 + 4u
>>> [float(OrderedBackend("numpy", o).matmul(x, np.ones(5))[0]) - 1 for o in ("sequential", "reversed", "pairwise")]
[0.0, 4.440892098500626e-16, 4.440892098500626e-16]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.arith.backend import Backend

__all__ = ["ORDERS", "OrderedBackend", "ordered_backends", "ordered_matmul"]

ORDERS = ("sequential", "reversed", "pairwise", "blocked-4", "blocked-64", "permuted")


@dataclass(frozen=True)
class OrderedBackend(Backend):
    """The numpy backend, its products summed in ``order`` (one of :data:`ORDERS`)."""

    order: str = "sequential"
    seed: int = 0

    def matmul(self, a, b):
        return ordered_matmul(a, b, self.order, self.seed)


def ordered_backends() -> list[OrderedBackend]:
    """One :class:`OrderedBackend` per order of :data:`ORDERS`."""
    return [OrderedBackend("numpy", order) for order in ORDERS]


def ordered_matmul(a, b, order: str = "sequential", seed: int = 0) -> np.ndarray:
    """``a @ b`` (numpy ``matmul`` shapes: vectors, matrices, stacks) with
    every dot product summed in ``order``."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    A = a[None, :] if a.ndim == 1 else a
    B = b[:, None] if b.ndim == 1 else b
    terms = np.moveaxis(A[..., :, :, None] * B[..., None, :, :], -2, 0)  # (k, ..., m, n), each rounded once
    out = _sum_terms(terms, order, seed)
    if b.ndim == 1:
        out = out[..., 0]
    if a.ndim == 1:
        out = out[..., 0, :] if b.ndim > 1 else out[..., 0]
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
    raise ValueError(f"unknown summation order {order!r}; choose from {', '.join(ORDERS)}")
