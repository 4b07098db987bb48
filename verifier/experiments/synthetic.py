"""The authors' synthetic data (Sec. 5.2, App. A, App. I.1), as nested pools.

Raw tokens are Uniform[0,1]^d (the model adds its embedding and the
sinusoidal positions); "shared" context: one n x d context for every example
(Assumption 2 with Prop. 2's cap H(n-1)+1); "random": one context per
example (general position, App. I.1).  Labels: classification uniform over
``classes`` classes, regression Uniform[0,1].

A pool is drawn once per (seed, n, d, context kind) from three separate
streams (queries, contexts, labels), so the first T examples of a pool do not
depend on the pool's size: the dataset of size T is a prefix, the same for
every sweep value (H, d_h) at a seed, and independent of any constructive
count.

>>> a = authors_pool(10, 3, 4, seed=0)
>>> b = authors_pool(20, 3, 4, seed=0)
>>> bool((a.queries == b.queries[:10]).all() and (a.labels == b.labels[:10]).all()), a.contexts.shape
(True, (3, 4))
"""
from __future__ import annotations

import numpy as np

from verifier.data.instances import from_arrays, sinusoidal_encoding
from verifier.errors import InvalidInstance
from verifier.experiments.engine import Dataset

CONTEXTS = ("shared", "random")


def authors_pool(T: int, n: int, d: int, *, seed: int, context: str = "shared", task: str = "classification",
                 classes: int = 100) -> Dataset:
    """T examples of the authors' data (raw tokens; no positions added)."""
    if context not in CONTEXTS:
        raise InvalidInstance(f"unknown context kind {context!r}; choose from {', '.join(CONTEXTS)}")
    key = [int(seed), int(n), int(d), CONTEXTS.index(context)]
    rq, rc, ry = (np.random.default_rng(key + [k]) for k in (1, 2, 3))
    queries = rq.uniform(0.0, 1.0, (T, d))
    contexts = rc.uniform(0.0, 1.0, (n, d) if context == "shared" else (T, n, d))
    if task == "classification":
        labels = ry.integers(0, classes, T)
    else:
        labels = ry.uniform(0.0, 1.0, (T, 1))
    return Dataset(queries, contexts, labels)


def with_positions(ds: Dataset, T: int | None = None):
    """(contexts (T, n, d), queries (T, d)): the pool's first T examples with the
    sinusoidal positions added (query at 0, context token j at j): the tokens that
    enter Eq. (1) in a layer without learned embedding (the construction's input)."""
    T = ds.T if T is None else int(T)
    pe = sinusoidal_encoding(ds.n + 1, ds.queries.shape[1])
    E = ds.contexts + pe[1:]
    E = np.broadcast_to(E, (T,) + E.shape) if ds.shared else E[:T]
    return E, ds.queries[:T] + pe[0]


def layer_instance(ds: Dataset, T: int, *, H: int, d_h: int, labels=None):
    """The verifier's :class:`~verifier.data.instances.Instance` of the first T examples
    (positions added), for the constructions of the registry."""
    E, e = with_positions(ds, T)
    y = None if labels is None else np.asarray(labels, dtype=np.float64).reshape(T, -1)
    return from_arrays(E, e, y, H=H, d_h=d_h, d_v=1, seed=0, source="authors' synthetic data")
