"""Memorization data of Kajitsuka & Sato (ICLR 2025): N token sequences of
length n (``S`` on the command line, since ``--n`` is the first paper's
context size) over a vocabulary of V tokens with integer embeddings in Z^d,
one next-token label in [0, C) per sequence, and N scalar ids (distinct
integers) for the feed-forward memorizer alone.

Everything is exact: embeddings, ids and labels are integers (a rational
embedding scaled to a common denominator has the same separation structure:
every statement here is invariant under scaling the tokens).  This module
only VALIDATES the format; the papers' hypotheses (token-wise separatedness,
no duplicated sequence with conflicting labels, distinct ids) are properties
of the data that a checker reports as hypotheses-unmet, not bad input.

User files (``--data file.npz|.json``, read by the one reader
:func:`verifier.data.files.read_data_file`): ``sequences`` (N, n) token ids
in [0, V), ``labels`` (N,) integers >= 0; optional ``token_labels`` (N, n)
(sequence-to-sequence labels), ``embeddings`` (V, d) integers (default: the
generated embedding for V, d and the seed) and ``ids`` (N,) integers
(default: 0, 4, 8, ...).  Every array holds integers
(:func:`verifier.data.integers.integer_values`): an integer dtype or JSON
integers.  A float array is bad input, since a float stands for every real
that rounds to it and two float ids (or embedding entries) may stand for
the same integer: "distinct ids" or "token-wise separated" would be
certified for the stored values only.  ``--exact-input`` says the floats
are exact: then an integral float is that integer.  Bad input is one line
of :class:`~verifier.errors.InvalidInstance`.

>>> inst = make_token_instance(N=6, S=3, V=4, d=2, C=2, seed=0)
>>> inst.sequences.shape, inst.embeddings.shape, inst.ids.shape
((6, 3), (4, 2), (6,))
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from verifier.data.files import read_data_file
from verifier.data.integers import integer_values
from verifier.errors import InvalidInstance

#: |entries| of embeddings and ids: small enough that every int64 sum of a
#: few hundred products stays exact (|x| < 2^40).
MAX_ABS = 1 << 40
#: the arrays of a data file: required, and optional
FILE_ARRAYS = (("sequences", "labels"), ("token_labels", "embeddings", "ids"))


@dataclass(frozen=True, eq=False)
class TokenInstance:
    sequences: np.ndarray  # (N, n) int64 token ids in [0, V)
    labels: np.ndarray  # (N,) int64 in [0, C)
    embeddings: np.ndarray  # (V, d) int64
    ids: np.ndarray  # (N,) int64 scalar ids for the FFN memorizer
    C: int
    token_labels: np.ndarray | None = None  # (N, n) int64 in [0, C): sequence-to-sequence labels
    d_h: int = 1
    kind: str = "random"
    seed: int | None = None
    source: str = "generated"

    @property
    def N(self) -> int:
        return int(self.sequences.shape[0])

    @property
    def S(self) -> int:
        return int(self.sequences.shape[1])

    @property
    def V(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def d(self) -> int:
        return int(self.embeddings.shape[1])

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        extra = () if self.token_labels is None else (self.token_labels,)
        for a in (self.sequences, self.labels, self.embeddings, self.ids) + extra:
            h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        return {"N": self.N, "S (sequence length n)": self.S, "V": self.V, "d": self.d, "C": self.C,
                "d_h": self.d_h, "kind": self.kind, "seed": self.seed, "source": self.source,
                "sha256_16": self.fingerprint()}

    def replace(self, **changes) -> "TokenInstance":
        return replace(self, **changes)


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=np.int64, copy=True)
    a.setflags(write=False)
    return a


def _positive_int(name, v, minimum=1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise InvalidInstance(f"{name} = {v!r} must be an integer >= {minimum}")
    return int(v)


def _int_array(name, a, ndim: int, exact: bool) -> np.ndarray:
    """Integers of magnitude < 2^40 (compared exactly, never through float64), as int64."""
    a = integer_values(name, a, exact=exact)
    if a.ndim != ndim or a.size == 0:
        raise InvalidInstance(f"'{name}' must be a non-empty {ndim}-d array, got shape {a.shape}")
    flat = a.reshape(-1).tolist()
    if max(abs(min(flat)), abs(max(flat))) >= MAX_ABS:
        raise InvalidInstance(f"'{name}' has an entry of magnitude >= 2^40 (the constructions' integer sums "
                              "must stay exact in int64)")
    return a.astype(np.int64)


def default_embeddings(V: int, d: int, seed: int = 0) -> np.ndarray:
    """V distinct nonzero integer vectors in [-4V, 4V]^d (redrawn until distinct and nonzero)."""
    rng = np.random.default_rng([seed, 7])
    span = 4 * V
    for _ in range(1000):
        E = rng.integers(-span, span + 1, size=(V, d))
        if np.all(np.any(E != 0, axis=1)) and np.unique(E, axis=0).shape[0] == V:
            return E
    raise InvalidInstance(f"could not draw {V} distinct nonzero tokens in dimension {d}")  # pragma: no cover


def from_arrays(sequences, labels, *, embeddings=None, ids=None, V: int | None = None, d: int = 2,
                C: int | None = None, d_h: int = 1, seed: int = 0, kind: str = "user",
                source: str = "arrays", token_labels=None, exact: bool = True) -> TokenInstance:
    """Validate the format (shapes, integer entries, ids in range); the data's hypotheses are the checkers'.
    ``exact``: an integral float is that integer (arrays handed over in Python, ``--exact-input``); else a
    float array is bad input (a user's file read by its dtype)."""
    seqs = _int_array("sequences", sequences, 2, exact)
    lab = _int_array("labels", labels, 1, exact)
    N = seqs.shape[0]
    if lab.shape != (N,):
        raise InvalidInstance(f"'labels' must have N = {N} entries, got shape {lab.shape}")
    if lab.min() < 0:
        raise InvalidInstance("labels must be integers >= 0")
    tok = None if token_labels is None else _int_array("token_labels", token_labels, 2, exact)
    if tok is not None and (tok.shape != seqs.shape or tok.min() < 0):
        raise InvalidInstance(f"'token_labels' must be integers >= 0 of the sequences' shape {seqs.shape}")
    top = max(int(lab.max()), -1 if tok is None else int(tok.max()))
    C = top + 1 if C is None else _positive_int("C", C)
    if top >= C:
        raise InvalidInstance(f"labels must lie in [0, C) = [0, {C})")
    if embeddings is None:
        V = int(seqs.max()) + 1 if V is None else _positive_int("V", V)
        emb = default_embeddings(V, _positive_int("d", d), seed)
    else:
        emb = _int_array("embeddings", embeddings, 2, exact)
    if seqs.min() < 0 or seqs.max() >= emb.shape[0]:
        raise InvalidInstance(f"token ids must lie in [0, V) = [0, {emb.shape[0]}), found {seqs.min()}..{seqs.max()}")
    sid = 4 * np.arange(N, dtype=np.int64) if ids is None else _int_array("ids", ids, 1, exact)
    if sid.shape != (N,):
        raise InvalidInstance(f"'ids' must have N = {N} entries, got shape {sid.shape}")
    return TokenInstance(_frozen(seqs), _frozen(lab), _frozen(emb), _frozen(sid), C,
                         None if tok is None else _frozen(tok), _positive_int("d_h", d_h),
                         kind=kind, seed=seed, source=source)


def _distinct_rows(rng, N: int, V: int, n: int) -> np.ndarray:
    if N > V ** n:
        raise InvalidInstance(f"N = {N} distinct sequences need V^n >= N (V^n = {V ** n})")
    rows = np.empty((0, n), dtype=np.int64)
    while rows.shape[0] < N:
        more = rng.integers(0, V, size=(2 * (N - rows.shape[0]) + 8, n))
        rows = np.unique(np.concatenate([rows, more]), axis=0)
    return rng.permutation(rows)[:N]


def make_token_instance(*, N: int = 8, S: int = 3, V: int = 5, d: int = 2, C: int = 3, d_h: int | None = None,
                        seed: int = 0, ids_only: bool = False, **_ignored) -> TokenInstance:
    """N distinct random sequences of length S over V tokens (random distinct
    nonzero integer embeddings in Z^d), random labels in [0, C), and N
    distinct random scalar ids in [0, 4N).  ``ids_only``: the ids and labels
    alone (every sequence the single token 0), for the FFN memorizer."""
    N, S, V, d, C = (_positive_int(k, v) for k, v in (("N", N), ("S", S), ("V", V), ("d", d), ("C", C)))
    seed = _positive_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    if ids_only:
        S, V = 1, 1
    seqs = np.zeros((N, 1), dtype=np.int64) if ids_only else _distinct_rows(rng, N, V, S)
    labels = rng.integers(0, C, size=N)
    ids = rng.choice(4 * N, size=N, replace=False)
    token_labels = rng.integers(0, C, size=seqs.shape)
    return from_arrays(seqs, labels, embeddings=default_embeddings(V, d, seed), ids=ids, C=C,
                       token_labels=token_labels, d_h=1 if d_h is None else d_h, seed=seed, kind="random",
                       source="generated")


def load_token_sequences(path, *, d: int = 2, d_h: int | None = None, seed: int = 0, exact_input: bool = False,
                         **_ignored) -> TokenInstance:
    """A dataset from ``.npz`` or ``.json`` (see the module docstring); C = the largest label + 1, V = the
    embeddings' rows (without embeddings: the largest token id + 1).  ``exact_input``: integral floats are
    the integers they encode (``--exact-input``); otherwise a float array is bad input."""
    p = Path(path)
    f = read_data_file(p, required=FILE_ARRAYS[0], optional=FILE_ARRAYS[1], exact_input=exact_input)
    return from_arrays(f.values("sequences"), f.values("labels"), embeddings=f.values("embeddings"),
                       ids=f.values("ids"), token_labels=f.values("token_labels"), d=d, C=None,
                       d_h=1 if d_h is None else d_h, seed=seed, kind="user", source=f"file:{p.name}",
                       exact=exact_input)


def vary_token_options(base: dict, rng: np.random.Generator) -> dict:
    """A nearby option set for the report: N, S, V, d, C moved by at most one, a new seed."""
    o = dict(base)
    for key, low in (("N", 2), ("S", 1), ("V", 3), ("d", 1), ("C", 2)):
        o[key] = int(max(low, base[key] + rng.integers(-1, 2)))
    o["N"] = int(min(o["N"], o["V"] ** o["S"]))
    o["seed"] = int(rng.integers(1, 2**31 - 1))
    return o
