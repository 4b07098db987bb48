"""Datasets the statements talk about: contexts E^(t) (T x n x d), queries
e^(t) (T x d), labels y^(t) (T x d_out), plus the layer's sizes H, d_h, d_v.

Every array that enters the verifier passes :func:`validate_arrays`: a bad
input raises :class:`~verifier.errors.InvalidInstance` with one line that says
what is wrong, never a traceback and never a pass.

>>> inst = make_instance(H=2, n=3, d=5, seed=0)
>>> inst.T, inst.n, inst.d, inst.r        # T defaults to the capacity H(r-1)+1
(5, 3, 5, 3)
>>> make_instance(n=4, d=3).n          # n >= d is a hypothesis of some statements, not bad input
4
>>> make_instance(seed=-1)
Traceback (most recent call last):
...
verifier.errors.InvalidInstance: seed = -1 must be a non-negative integer
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from verifier.data.precision import EXACT_GENERATED, InputPrecision, exact_reading, input_precision
from verifier.errors import InvalidInstance

CONTEXT_KINDS = ("random", "uniform", "shared", "pe", "sumconst")
DEGENERATE_KINDS = ("repeated-queries", "low-kruskal-queries", "rank-deficient-context", "cls-queries")
OVERFLOW_LIMIT = 1e100  # |entries| above this make exp/products meaningless in float64


@dataclass(frozen=True, eq=False)
class Instance:
    """A dataset plus the attention layer's sizes.  Arrays are float64 and
    read-only; every float64 is an exact dyadic rational, which is what the
    exact and ball back ends read.  ``precision`` says what those numbers
    mean (:mod:`verifier.data.precision`): exact for generated instances,
    known to their dtype's precision for a user's file."""

    contexts: np.ndarray
    queries: np.ndarray
    labels: np.ndarray
    H: int
    d_h: int
    d_v: int
    kind: str = "random"
    seed: int | None = None
    source: str = "generated"
    precision: InputPrecision = EXACT_GENERATED

    @property
    def T(self) -> int:
        return int(self.contexts.shape[0])

    @property
    def n(self) -> int:
        return int(self.contexts.shape[1])

    @property
    def d(self) -> int:
        return int(self.contexts.shape[2])

    @property
    def d_out(self) -> int:
        return int(self.labels.shape[1])

    @property
    def r(self) -> int:
        """r = min(n, d_h) (Theorem 1)."""
        return min(self.n, self.d_h)

    @property
    def capacity(self) -> int:
        """H(r-1)+1, the number of labels Theorem 1 memorizes."""
        return self.H * (self.r - 1) + 1

    @property
    def shared_context(self) -> bool:
        return self.T == 1 or self.contexts.strides[0] == 0

    def fingerprint(self) -> str:
        """sha256 of the arrays; a shared context is hashed once, with T (never
        T copies: 272 GB at the 7B-class setting)."""
        h = hashlib.sha256()
        if self.shared_context and self.T > 1:
            h.update(b"shared context, T=%d;" % self.T)
            h.update(np.ascontiguousarray(self.contexts[0], dtype=np.float64).tobytes())
            arrays = (self.queries, self.labels)
        else:
            arrays = (self.contexts, self.queries, self.labels)
        for a in arrays:
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        return {
            "T": self.T, "n": self.n, "d": self.d, "H": self.H, "d_h": self.d_h,
            "d_v": self.d_v, "d_out": self.d_out, "r": self.r, "capacity": self.capacity,
            "kind": self.kind, "seed": self.seed, "source": self.source,
            "reading": self.precision.describe(), "sha256_16": self.fingerprint(),
        }

    def replace(self, **changes) -> "Instance":
        return replace(self, **changes)

    def subset(self, rows) -> "Instance":
        rows = np.asarray(rows, dtype=int)
        return replace(self, contexts=_shared(self.contexts[0], len(rows))
                       if self.shared_context else _frozen(self.contexts[rows]),
                       queries=_frozen(self.queries[rows]), labels=_frozen(self.labels[rows]))


def _shared(context, T: int) -> np.ndarray:
    """One read-only n x d context broadcast over T examples (stride 0): the
    memory of ONE context, however large T."""
    base = np.array(context, dtype=np.float64, copy=True)
    base.setflags(write=False)
    return np.broadcast_to(base, (int(T),) + base.shape)


def _frozen(a) -> np.ndarray:
    """A read-only float64 copy; contexts equal across examples are stored as
    one matrix broadcast over T (stride 0), which the model exploits.  A
    stride-0 input stays one context (no T copies on the way)."""
    if isinstance(a, np.ndarray) and a.ndim == 3 and a.shape[0] > 1 and a.strides[0] == 0:
        return _shared(a[0], a.shape[0])
    a = np.array(a, dtype=np.float64, copy=True)
    if a.ndim == 3 and a.shape[0] > 1 and np.array_equal(a, np.broadcast_to(a[:1], a.shape)):
        a = np.broadcast_to(a[0].copy(), a.shape)
    a.setflags(write=False)
    return a


def validate_arrays(contexts, queries, labels=None, *, allow_n_ge_d: bool = True):
    """Shapes (T,n,d), (T,d), (T,d_out); real numbers (no complex, object or
    string arrays: never a silent cast); finite; no overflow.  n >= d is
    allowed (a hypothesis of some statements, checked by them); pass
    ``allow_n_ge_d=False`` to refuse it here."""
    arrays = {}
    for name, a, ndim in (("contexts", contexts, 3), ("queries", queries, 2), ("labels", labels, 2)):
        if a is None:
            if name == "labels":
                continue
            raise InvalidInstance(f"missing array '{name}'")
        try:
            raw = a if isinstance(a, np.ndarray) else np.asarray(a)
        except (TypeError, ValueError) as exc:
            raise InvalidInstance(f"array '{name}' is not a rectangular numeric array: {exc}") from None
        if raw.dtype.kind == "c":
            raise InvalidInstance(f"array '{name}' is complex ({raw.dtype.name}); the statements are about real data")
        if raw.dtype.kind == "O":
            raise InvalidInstance(f"array '{name}' is an object array; expected integers or floats")
        if raw.dtype.kind not in "biuf":
            raise InvalidInstance(f"array '{name}' has dtype {raw.dtype.name}, not a number type")
        try:
            a = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidInstance(f"array '{name}' is not numeric: {exc}") from None
        if a.ndim != ndim:
            want = {"contexts": "(T, n, d)", "queries": "(T, d)", "labels": "(T, d_out)"}[name]
            raise InvalidInstance(f"array '{name}' has shape {a.shape}; expected {want}")
        if a.size == 0:
            raise InvalidInstance(f"array '{name}' is empty (shape {a.shape})")
        look = a[:1] if a.ndim == 3 and a.shape[0] > 1 and a.strides[0] == 0 else a  # one shared context
        if not np.all(np.isfinite(look)):
            bad = int(np.sum(~np.isfinite(look)))
            raise InvalidInstance(f"array '{name}' has {bad} NaN or infinite entries")
        if np.max(np.abs(look)) > OVERFLOW_LIMIT:
            raise InvalidInstance(f"array '{name}' has entries above {OVERFLOW_LIMIT:g} in magnitude (overflow)")
        arrays[name] = a
    E, e = arrays["contexts"], arrays["queries"]
    T, n, d = E.shape
    if e.shape != (T, d):
        raise InvalidInstance(f"queries have shape {e.shape}; expected (T, d) = {(T, d)} to match contexts {E.shape}")
    y = arrays.get("labels")
    if y is not None and y.shape[0] != T:
        raise InvalidInstance(f"labels have {y.shape[0]} rows; expected T = {T}")
    if n >= d and not allow_n_ge_d:
        raise InvalidInstance(f"n = {n} must be < d = {d} (the paper assumes n < d throughout)")
    return E, e, y


def _check_sizes(H, d_h, d_v, d_out):
    for name, v in (("H", H), ("d_h", d_h), ("d_v", d_v), ("d_out", d_out)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidInstance(f"{name} = {v!r} must be a positive integer")


def from_arrays(contexts, queries, labels=None, *, H=2, d_h=None, d_v=None, d_out=None,
                kind="user", seed=0, source="arrays", allow_n_ge_d=True, reading: str = "exact",
                precision_source: str | None = None) -> Instance:
    """Validate user arrays; missing labels are drawn N(0,1) from ``seed``.

    ``reading``: "exact" (the floats are the rationals they encode: the
    default for arrays handed over in Python) or "dtype" (each array known
    to its dtype's precision, :func:`verifier.data.precision.input_precision`:
    what a user's file means).  ``precision_source`` names why (default
    "arrays"; ``load_npz`` passes "file" or "--exact-input")."""
    E, e, y = validate_arrays(contexts, queries, labels, allow_n_ge_d=allow_n_ge_d)
    if reading == "dtype":
        precision = input_precision({"contexts": contexts, "queries": queries, "labels": labels},
                                    source=precision_source or "file")
    elif reading == "exact":
        precision = exact_reading(precision_source or "arrays")
    else:
        raise InvalidInstance(f"reading {reading!r} must be 'exact' or 'dtype'")
    if y is None:
        d_out = 1 if d_out is None else d_out
        _check_sizes(H, 1, 1, d_out)
        y = np.random.default_rng(seed).standard_normal((E.shape[0], d_out))
    d_out = y.shape[1]
    d_h = E.shape[1] if d_h is None else d_h
    d_v = d_out if d_v is None else d_v
    _check_sizes(H, d_h, d_v, d_out)
    return Instance(_frozen(E), _frozen(e), _frozen(y), int(H), int(d_h), int(d_v),
                    kind=kind, seed=seed, source=source, precision=precision)


def sinusoidal_encoding(n_positions: int, d: int) -> np.ndarray:
    """The Transformer's positional encoding: PE[p, 2i] = sin(p / 10000^(2i/d)),
    PE[p, 2i+1] = cos(p / 10000^(2i/d))."""
    pos = np.arange(n_positions)[:, None]
    i = np.arange(d)[None, :]
    angle = pos / np.power(10000.0, (2 * (i // 2)) / d)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


def make_instance(*, H: int = 2, n: int = 3, d: int = 6, d_h: int | None = None,
                  d_v: int | None = None, d_out: int = 1, T: int | None = None,
                  context: str = "random", degenerate: str | None = None, seed: int = 0,
                  allow_n_ge_d: bool = True) -> Instance:
    """Draw a dataset.

    context: "random" (Gaussian, in general position a.s.), "uniform"
    (U[0,1] as in the paper's Sec. 5.2), "shared" (one Gaussian context for all
    examples), "pe" (uniform tokens plus the sinusoidal positional encoding of
    positions 1..n; the query has position 0), "sumconst" (every token sums
    to 1: Prop. 5's hypothesis).
    degenerate: break an assumption on purpose: "repeated-queries" (every
    query equal: Kruskal rank 1), "low-kruskal-queries" (queries b1 + t b2 in a 2-dim
    subspace, integer entries: Kruskal rank exactly 2), "rank-deficient-context" (token 2 repeats token 1 in every
    context), "cls-queries" (every query is one [CLS] vector plus position 0).
    """
    if context not in CONTEXT_KINDS:
        raise InvalidInstance(f"unknown context kind {context!r}; choose from {', '.join(CONTEXT_KINDS)}")
    if degenerate is not None and degenerate not in DEGENERATE_KINDS:
        raise InvalidInstance(f"unknown degenerate kind {degenerate!r}; choose from {', '.join(DEGENERATE_KINDS)}")
    for name, v in (("n", n), ("d", d)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidInstance(f"{name} = {v!r} must be a positive integer")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidInstance(f"seed = {seed!r} must be a non-negative integer")
    if n >= d and not allow_n_ge_d:
        raise InvalidInstance(f"n = {n} must be < d = {d} (the paper assumes n < d throughout)")
    d_h = n if d_h is None else d_h
    d_v = d_out if d_v is None else d_v
    _check_sizes(H, d_h, d_v, d_out)
    r = min(n, d_h)
    T = H * (r - 1) + 1 if T is None else T
    if not isinstance(T, (int, np.integer)) or T < 1:
        raise InvalidInstance(f"T = {T!r} must be a positive integer")
    rng = np.random.default_rng(seed)
    if context == "random":
        E = rng.standard_normal((T, n, d))
        e = rng.standard_normal((T, d))
    elif context == "uniform":
        E = rng.uniform(0.0, 1.0, (T, n, d))
        e = rng.uniform(0.0, 1.0, (T, d))
    elif context == "shared":
        E = rng.standard_normal((1, n, d))  # ONE context; broadcast over T at the end
        e = rng.standard_normal((T, d))
    elif context == "pe":
        pe = sinusoidal_encoding(n + 1, d)
        E = rng.uniform(0.0, 1.0, (T, n, d)) + pe[1:][None]
        e = rng.uniform(0.0, 1.0, (T, d)) + pe[0][None]
    else:  # sumconst: 1^T x = 1 EXACTLY for every token (contexts and queries):
        # dyadic entries (k / 256) so the last coordinate 1 - sum(others) is exact
        def _sum_one(shape):
            x = rng.integers(-512, 513, shape + (d,)).astype(np.float64) / 256.0
            x[..., -1] = 1.0 - x[..., :-1].sum(axis=-1)
            return x

        E = _sum_one((T, n))
        e = _sum_one((T,))
    if degenerate == "repeated-queries":
        e = np.broadcast_to(e[:1], e.shape).copy()
    elif degenerate == "low-kruskal-queries":
        # integer factors: the float64 product is exactly rank 2 (a float
        # product of Gaussian factors is, exactly, full rank)
        # every two independent, every three dependent: Kruskal rank exactly 2
        b = rng.integers(-4, 5, (2, d)).astype(np.float64)
        while np.linalg.matrix_rank(b) < 2:
            b = rng.integers(-4, 5, (2, d)).astype(np.float64)
        e = b[0][None, :] + np.arange(T, dtype=np.float64)[:, None] * b[1][None, :]
    elif degenerate == "rank-deficient-context" and n >= 2:
        E[:, 1, :] = E[:, 0, :]
    elif degenerate == "cls-queries":
        cls = rng.standard_normal(d)
        e = np.broadcast_to(cls + sinusoidal_encoding(1, d)[0], e.shape).copy()
    y = rng.standard_normal((T, d_out))
    kind = context if degenerate is None else f"{context}+{degenerate}"
    if context == "shared":
        E = _shared(E[0], T)
    return Instance(_frozen(E), _frozen(e), _frozen(y), int(H), int(d_h), int(d_v),
                    kind=kind, seed=seed, source="generated")


def rng_for(seed: int, purpose: str) -> np.random.Generator:
    """A random stream for a construction, independent of the instance's.

    :func:`make_instance` draws the data from ``default_rng(seed)``; a checker
    that also used ``default_rng(seed)`` would replay the data's numbers (its
    "random" Gaussian vector would be a token or a query).  ``purpose`` (e.g.
    the statement id) selects a separate stream of the same seed.
    """
    import zlib

    return np.random.default_rng([int(seed), zlib.crc32(purpose.encode())])
