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
from dataclasses import dataclass, field, replace

import numpy as np

from verifier.data.given import add_up, half_gaps_of, validated
from verifier.data.precision import (
    EXACT_GENERATED,
    InputPrecision,
    exact_reading,
    input_precision,
)
from verifier.errors import InvalidInstance

CONTEXT_KINDS = ("random", "uniform", "shared", "pe", "sumconst")
DEGENERATE_KINDS = ("repeated-queries", "low-kruskal-queries", "rank-deficient-context", "cls-queries")


@dataclass(frozen=True, eq=False)
class Instance:
    """A dataset plus the attention layer's sizes.  Arrays are float64 and
    read-only: the working copies the constructions compute with.
    ``precision`` says what the values given mean
    (:mod:`verifier.data.precision`): exact for generated instances, the
    rounding interval of each float for a user's file.

    ``given``: for an array whose float64 copy rounds the values the user
    gave (integers beyond 2^53, long doubles, JSON decimals), those values as
    exact rationals (an object array of ``fmpq``) and ``given_rad`` a float64
    bound on ``|given - copy|``.  :meth:`exact_array` is what a certificate
    about the stored values reads, :meth:`ball` what a certificate about
    every value the data stand for reads."""

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
    given: dict = field(default_factory=dict)
    rounding: dict = field(default_factory=dict)  # name -> why float64 rounds it
    given_rad: dict = field(default_factory=dict)  # name -> float64 >= |given - float64 copy|
    reading: dict = field(default_factory=dict)  # name -> how the file's numbers were read

    @property
    def rounded(self) -> dict:
        """{array name: why its float64 copy is not the given values}."""
        return {k: self.rounding.get(k, "float64 rounds its given values") for k in self.given}

    def exact_array(self, name: str) -> np.ndarray:
        """The given values of ``name`` ("contexts", "queries", "labels"):
        the object array of exact rationals where float64 rounds them, else
        the float64 array itself (then exact)."""
        return self.given[name] if name in self.given else getattr(self, name)

    @property
    def at_precision(self) -> bool:
        """Do the contexts or queries stand for intervals (a user's floats
        under the dtype reading), not only for the values stored?"""
        return not self.precision.exact_for("contexts", "queries")

    def ball(self, name: str, index=slice(None)) -> tuple[np.ndarray, np.ndarray | None]:
        """``(mid, rad)``: float64 arrays with every value the entries
        ``name[index]`` stand for within ``mid +/- rad`` (``rad`` None when
        they are exact float64 values)."""
        meaning = self.precision.of(name)
        extra = self.given_rad.get(name)
        if name == "contexts" and self.shared_context and self.T > 1 and isinstance(index, slice) \
                and index == slice(None):  # one context: its radii once, broadcast (never T copies)
            mid0, rad0 = self.ball("contexts", 0)
            return self.contexts, None if rad0 is None else np.broadcast_to(rad0, self.contexts.shape)
        mid = np.asarray(getattr(self, name)[index], dtype=np.float64)
        if meaning.exact and extra is None:
            return mid, None
        rad = meaning.radius(mid)
        if extra is not None:
            rad = add_up(rad, np.asarray(extra[index], dtype=np.float64))
        return mid, rad

    def balls(self):
        """``(contexts, queries)`` as the model's ball back ends read them:
        :class:`~verifier.arith.balls.BallArray` of every value the data stand
        for when they are read at their precision, else the stored arrays."""
        if not self.at_precision and "contexts" not in self.given_rad and "queries" not in self.given_rad:
            return self.contexts, self.queries
        from verifier.arith.balls import BallArray

        def one(name):
            exact = self.given.get(name) if self.precision.exact_for(name) else None
            return BallArray(*self.ball(name), exact=exact)  # exact points read exactly in Arb
        return one("contexts"), one("queries")

    def half_gaps(self, name: str, index=slice(None)):
        """``(up, down)``: the exact half-gaps (lists of ``fmpq`` rows) above
        and below each entry of ``name[index]`` (a 2-d selection): the open
        interval of reals that round to it under the dtype reading
        (:func:`half_gaps_of`).  None for an exact array."""
        return half_gaps_of(self.precision.of(name), self.exact_array(name)[index])

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
        T copies: 272 GB at the 7B-class setting).  The arrays' own buffers
        are hashed (no bytes copy: 0.9 GB for random ViT-base contexts), once
        per instance (its arrays are read-only)."""
        cached = self.__dict__.get("_fingerprint")
        if cached is not None:
            return cached
        h = hashlib.sha256()
        if self.shared_context and self.T > 1:
            h.update(b"shared context, T=%d;" % self.T)
            h.update(np.ascontiguousarray(self.contexts[0], dtype=np.float64))
            arrays = (self.queries, self.labels)
        else:
            arrays = (self.contexts, self.queries, self.labels)
        for a in arrays:
            h.update(np.ascontiguousarray(a, dtype=np.float64))
        for name in sorted(self.given):  # the values float64 rounds: hashed exactly
            h.update(f"{name}:{';'.join(str(x) for x in self.given[name].ravel())}".encode())
        self.__dict__["_fingerprint"] = cached = h.hexdigest()[:16]
        return cached

    def summary(self) -> dict:
        return {
            "T": self.T, "n": self.n, "d": self.d, "H": self.H, "d_h": self.d_h,
            "d_v": self.d_v, "d_out": self.d_out, "r": self.r, "capacity": self.capacity,
            "kind": self.kind, "seed": self.seed, "source": self.source,
            "reading": self.precision.describe(), "sha256_16": self.fingerprint(),
            **({"arrays read": dict(self.reading)} if self.reading else {}),
            **({"float64 copy rounds": dict(self.rounded)} if self.given else {}),
        }

    def replace(self, **changes) -> "Instance":
        """A changed copy; a replaced array's given values are dropped (the
        new float64 array is then its own exact value)."""
        if any(k in self.given for k in changes):
            changes.setdefault("given", {k: v for k, v in self.given.items() if k not in changes})
            changes.setdefault("rounding", {k: v for k, v in self.rounding.items() if k in changes["given"]})
            changes.setdefault("given_rad", {k: v for k, v in self.given_rad.items() if k in changes["given"]})
        return replace(self, **changes)

    def subset(self, rows) -> "Instance":
        rows = np.asarray(rows, dtype=int)
        given = {k: v[rows] for k, v in self.given.items()}
        given_rad = {k: v[rows] for k, v in self.given_rad.items()}
        return replace(self, given_rad=given_rad, contexts=_shared(self.contexts[0], len(rows))
                       if self.shared_context else _frozen(self.contexts[rows], _shareable(given)),
                       queries=_frozen(self.queries[rows]), labels=_frozen(self.labels[rows]), given=given)


def _shared(context, T: int) -> np.ndarray:
    """One read-only n x d context broadcast over T examples (stride 0): the
    memory of ONE context, however large T."""
    base = np.array(context, dtype=np.float64, copy=True)
    base.setflags(write=False)
    return np.broadcast_to(base, (int(T),) + base.shape)


def _shareable(given: dict) -> bool:
    """May float64 contexts equal across examples be stored as one?  Only if
    the values given are equal too (not just their float64 roundings)."""
    g = given.get("contexts")
    return g is None or np.array_equal(g, np.broadcast_to(g[:1], g.shape))


def _frozen(a, share: bool = True) -> np.ndarray:
    """A read-only float64 copy; contexts equal across examples are stored as
    one matrix broadcast over T (stride 0), which the model exploits
    (``share=False``: never, for float64 copies equal only after rounding).
    A stride-0 input stays one context (no T copies on the way)."""
    if isinstance(a, np.ndarray) and a.ndim == 3 and a.shape[0] > 1 and a.strides[0] == 0:
        return _shared(a[0], a.shape[0])
    a = np.array(a, dtype=np.float64, copy=True)
    if share and a.ndim == 3 and a.shape[0] > 1 and np.array_equal(a, np.broadcast_to(a[:1], a.shape)):
        a = np.broadcast_to(a[0].copy(), a.shape)
    a.setflags(write=False)
    return a


def _check_sizes(H, d_h, d_v, d_out):
    for name, v in (("H", H), ("d_h", d_h), ("d_v", d_v), ("d_out", d_out)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidInstance(f"{name} = {v!r} must be a positive integer")


def from_arrays(contexts, queries, labels=None, *, H=2, d_h=None, d_v=None, d_out=None,
                kind="user", seed=0, source="arrays", allow_n_ge_d=True, reading: str = "exact",
                precision_source: str | None = None, readings: dict | None = None) -> Instance:
    """Validate user arrays; missing labels are drawn N(0,1) from ``seed``.

    ``reading``: "exact" (every value is the rational it encodes: the
    default for arrays handed over in Python) or "dtype" (what a user's file
    means: each float stands for the reals that round to it,
    :func:`verifier.data.precision.input_precision`).  ``precision_source``
    names why (default "arrays"; :func:`load_data` passes "file" or
    "--exact-input"); ``readings``: {array: how the file's numbers were read}."""
    arrays, rounding = validated(contexts, queries, labels, allow_n_ge_d=allow_n_ge_d)
    E, e, y = arrays["contexts"], arrays["queries"], arrays.get("labels")
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
    given = {name: g for name, (_, g, _) in rounding.items()}
    return Instance(_frozen(E, _shareable(given)), _frozen(e), _frozen(y), int(H), int(d_h), int(d_v),
                    kind=kind, seed=seed, source=source, precision=precision, given=given,
                    rounding={name: why for name, (why, _, _) in rounding.items()},
                    given_rad={name: r for name, (_, _, r) in rounding.items()}, reading=dict(readings or {}))


def load_data(path, *, exact_input: bool = False, **sizes) -> Instance:
    """User data from ``path`` (.npz or .json, :func:`verifier.data.files.read_data_file`):
    arrays ``contexts`` (T, n, d), ``queries`` (T, d), optional ``labels``
    (T, d_out; drawn N(0, 1) from ``seed`` when absent).  ``sizes``: H,
    d_h, d_v, d_out (d_out only used when the file has no labels), seed."""
    from verifier.data.files import read_data_file

    f = read_data_file(path, required=("contexts", "queries"), optional=("labels",), exact_input=exact_input)
    return from_arrays(f.values("contexts"), f.values("queries"), f.values("labels"), kind="user",
                       source=f"file:{f.path.name}", reading="exact" if exact_input else "dtype",
                       precision_source="--exact-input" if exact_input else "file", readings=f.reading, **sizes)


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
