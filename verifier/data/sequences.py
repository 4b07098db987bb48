"""Next-token datasets of Dana et al. (AISTATS 2025): a prior pi on token
sequences t in [N]^S (its support: ``sequences``, one row each, with prior
weights) and the conditionals pi_t = pi(. | t) in the simplex of R^N, plus the
sizes (d, d_h, H) of the attention-only transformer that should memorize them.

* an association table (Assumption 1): every pi_t is a point mass at a
  target g(t) (``targets``); memorized = g(t) is the strict argmax of T(t);
* distributions (Assumption 2): every pi_t > 0; memorized in d_KL.

Generated instances are exact: conditionals are dyadic (k / 2^10), prior
weights integers, so the float64 arrays ARE the rationals the ball back end
reads.  User files (``.npz`` or ``.json``: ``N``, ``sequences`` and
``targets`` or ``conditionals``, optional ``prior``) pass the same validation:
one line of :class:`~verifier.errors.InvalidInstance` for bad input.

What a number in a file means (:mod:`verifier.data.sequence_reading`): a
float in a user's file is known to its dtype's precision, so a row of the
conditionals stands for every distribution within that precision of it; the
checkers compute on balls enclosing all of them.  ``summary()["reading"]``
says which reading was used.

>>> inst = make_sequence_instance(N=4, S=2, d=2, d_h=1, H=2, seed=0)
>>> inst.T0, inst.claimed_capacity, inst.is_table    # T0 defaults to H d_h + d
(4, 4, True)
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.data.sequence_reading import (
    check_rows_in_simplex,
    conditional_balls,
    prior_balls,
    reading_text,
    rescaled_prior,
    unit_roundoff,
)
from verifier.errors import InvalidInstance

DATASET_KINDS = ("random", "all", "shared-last", "distinct-last")
CONDITIONAL_KINDS = ("table", "table-distinct", "positive", "peaked")
DYADIC_BITS = 10  # generated conditionals are multiples of 2^-10
MAX_VOCABULARY = 1024  # N: the checks build exact N x N Gram matrices and T0 x N tables
MAX_SEQUENCES = 2**16  # T0: the checks run each sequence through Eq. (2) in balls
MAX_CONTEXT = 4096  # S


@dataclass(frozen=True, eq=False)
class SequenceInstance:
    N: int
    sequences: np.ndarray  # (T0, S) int, distinct rows
    weights: np.ndarray  # (T0,) prior weights > 0 (pi(t) = w_t / sum w)
    conditionals: np.ndarray  # (T0, N), rows in the simplex
    d: int
    d_h: int
    H: int
    kind: str = "random"
    seed: int | None = None
    source: str = "generated"
    eps: float | None = None  # Thm. 1 with eps > 0: the prior mass left out (None: the checker's default)
    unit_roundoff: Fraction = Fraction(0)  # relative precision u of the numbers read (0: exact rationals)

    @property
    def T0(self) -> int:
        return int(self.sequences.shape[0])

    @property
    def S(self) -> int:
        return int(self.sequences.shape[1])

    @property
    def last_tokens(self) -> np.ndarray:
        return self.sequences[:, -1]

    @property
    def u(self) -> int:
        """The number of distinct last tokens."""
        return int(np.unique(self.last_tokens).size)

    @property
    def is_table(self) -> bool:
        """Assumption 1: every conditional is a point mass."""
        return bool(np.all((self.conditionals == 0) | (self.conditionals == 1)) and
                    np.all(self.conditionals.sum(axis=1) == 1))

    @property
    def is_positive(self) -> bool:
        """Assumption 2: every conditional is positive."""
        return bool(np.all(self.conditionals > 0))

    @property
    def targets(self) -> np.ndarray:
        """g(t) = argmax pi_t (the target of a point mass)."""
        return np.argmax(self.conditionals, axis=1)

    @property
    def claimed_capacity(self) -> int:
        """H d_h + d (Thm. 1, Cor. 1 with d = 2)."""
        return self.H * self.d_h + self.d

    @property
    def uniform_prior(self) -> bool:
        return bool(np.all(self.weights == self.weights[0]))

    @property
    def reading(self) -> str:
        return reading_text(self.conditionals, self.unit_roundoff)

    def conditional_balls(self) -> np.ndarray:
        """(T0, N) arb balls enclosing every distribution the rows stand for (:mod:`.sequence_reading`)."""
        return conditional_balls(self.conditionals, self.unit_roundoff)

    def prior_balls(self) -> list:
        """The prior weights as balls (each within relative u when read at precision)."""
        return prior_balls(self.weights, self.unit_roundoff)

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for a in (self.sequences.astype(np.int64), self.weights, self.conditionals):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        return {"N": self.N, "S": self.S, "T0": self.T0, "d": self.d, "d_h": self.d_h, "H": self.H,
                "u (distinct last tokens)": self.u, "H d_h + d": self.claimed_capacity,
                "association table": self.is_table, "positive conditionals": self.is_positive,
                "kind": self.kind, "seed": self.seed, "source": self.source, "reading": self.reading,
                "sha256_16": self.fingerprint()}

    def replace(self, **changes) -> "SequenceInstance":
        return replace(self, **changes)

    def subset(self, rows) -> "SequenceInstance":
        rows = np.asarray(rows, dtype=int)
        return replace(self, sequences=_frozen(self.sequences[rows], np.int64),
                       weights=_frozen(self.weights[rows]), conditionals=_frozen(self.conditionals[rows]))


def _frozen(a, dtype=np.float64) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def _positive_int(name, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise InvalidInstance(f"{name} = {v!r} must be an integer >= {minimum}")
    return int(v)


def _vocabulary(N) -> int:
    """N in [2, MAX_VOCABULARY]: one token leaves nothing to predict; beyond the cap the exact checks do not fit."""
    if isinstance(N, (int, np.integer)) and not isinstance(N, bool) and N == 1:
        raise InvalidInstance("N = 1: a vocabulary of one token leaves nothing to memorize (every next-token "
                              "distribution is the point mass); give N >= 2")
    N = _positive_int("N", N, 2)
    if N > MAX_VOCABULARY:
        raise InvalidInstance(f"N = {N} exceeds the largest vocabulary checked, {MAX_VOCABULARY} (the checks build "
                              "exact N x N Gram matrices and T0 x N tables)")
    return N


def from_sequences(sequences, *, N: int, targets=None, conditionals=None, prior=None, d: int = 2,
                   d_h: int | None = None, H: int = 1, kind: str = "user", seed=None,
                   source: str = "arrays", precision: Fraction = Fraction(0)) -> SequenceInstance:
    """Validate a dataset: distinct sequences of tokens in [0, N), targets or
    conditionals (rows >= 0 summing to 1 within ``precision``, the relative
    precision of the numbers; 0: exact), a positive prior (default uniform)."""
    N = _vocabulary(N)
    if targets is not None and conditionals is not None:
        raise InvalidInstance("the dataset gives both 'targets' and 'conditionals': give one (targets are the "
                              "point masses of an association table)")
    d = _positive_int("d", d)
    H = _positive_int("H", H, 0)
    d_h = d if d_h is None else _positive_int("d_h", d_h)
    try:
        seqs = np.asarray(sequences)
    except (TypeError, ValueError) as exc:
        raise InvalidInstance(f"sequences are not an integer array: {exc}") from None
    if seqs.ndim != 2 or seqs.size == 0:
        raise InvalidInstance(f"sequences must be a non-empty (T0, S) array, got shape {seqs.shape}")
    if seqs.dtype.kind == "f":
        if not np.all(np.isfinite(seqs)) or not np.all(seqs == np.round(seqs)):
            raise InvalidInstance("sequences must hold integer token ids")
        seqs = seqs.astype(np.int64)
    if seqs.dtype.kind not in "iu":
        raise InvalidInstance(f"sequences must hold integer token ids, got dtype {seqs.dtype}")
    if seqs.min() < 0 or seqs.max() >= N:
        raise InvalidInstance(f"token ids must lie in [0, N) = [0, {N}), found {seqs.min()}..{seqs.max()}")
    _, first, counts = np.unique(seqs, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        raise InvalidInstance(f"sequence {seqs[first[np.argmax(counts > 1)]].tolist()} is listed more than once "
                              "(the support of pi lists each sequence once)")
    T0 = seqs.shape[0]
    _sizes_fit(T0, seqs.shape[1])
    if conditionals is None:
        if targets is None:
            raise InvalidInstance("the dataset needs 'targets' (an association table) or 'conditionals'")
        g = np.asarray(targets)
        if g.shape != (T0,) or g.dtype.kind not in "iuf" or not np.all(g == np.round(g)):
            raise InvalidInstance(f"targets must be T0 = {T0} integer token ids, got shape {g.shape}")
        if g.min() < 0 or g.max() >= N:
            raise InvalidInstance(f"targets must lie in [0, N) = [0, {N})")
        cond = np.zeros((T0, N))
        cond[np.arange(T0), g.astype(np.intp)] = 1.0
    else:
        cond = _checked_matrix("conditionals", conditionals, (T0, N))
        if np.any(cond < 0):
            raise InvalidInstance("conditionals have negative entries")
        check_rows_in_simplex(cond, Fraction(precision))
    try:
        w = np.ones(T0) if prior is None else _checked_matrix("prior", np.reshape(prior, (1, -1)), (1, T0))[0]
    except ValueError as exc:
        raise InvalidInstance(f"array 'prior' must hold T0 = {T0} weights: {exc}") from None
    if np.any(w <= 0):
        raise InvalidInstance("the prior must be positive on every listed sequence (it lists the support)")
    return SequenceInstance(N, _frozen(seqs, np.int64), _frozen(rescaled_prior(w)), _frozen(cond), d, d_h, H,
                            kind=kind, seed=seed, source=source, unit_roundoff=Fraction(precision))


def _checked_matrix(name, a, shape) -> np.ndarray:
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstance(f"array '{name}' is not numeric: {exc}") from None
    if a.shape != shape:
        raise InvalidInstance(f"array '{name}' has shape {a.shape}; expected {shape}")
    if not np.all(np.isfinite(a)):
        raise InvalidInstance(f"array '{name}' has NaN or infinite entries")
    return a


def _sizes_fit(T0: int, S: int) -> None:
    if T0 > MAX_SEQUENCES:
        raise InvalidInstance(f"T0 = {T0} sequences exceed the largest support checked, {MAX_SEQUENCES}")
    if S > MAX_CONTEXT:
        raise InvalidInstance(f"S = {S} exceeds the longest sequence checked, {MAX_CONTEXT}")


def _distinct_rows(rng, N: int, width: int, T0: int) -> np.ndarray:
    """T0 distinct rows of ``width`` tokens (uniform without replacement; for N^width beyond int64, rows
    drawn at random and redrawn until distinct)."""
    room = N ** width
    if room <= 2**62:
        codes = rng.choice(room, size=T0, replace=False)
        return np.array([np.unravel_index(k, (N,) * width) for k in codes]).reshape(T0, width)
    rows = rng.integers(0, N, (T0, width))
    while np.unique(rows, axis=0).shape[0] < T0:  # pragma: no cover - a collision among N^width >= 2^62
        rows = rng.integers(0, N, (T0, width))
    return rows


def _draw_sequences(rng, N, S, T0, dataset) -> np.ndarray:
    if dataset == "all":
        _sizes_fit(N ** S if S * N.bit_length() < 64 else MAX_SEQUENCES + 1, S)
        return np.array(np.meshgrid(*[np.arange(N)] * S, indexing="ij")).reshape(S, -1).T
    if dataset == "distinct-last":
        if T0 > N:
            raise InvalidInstance(f"T0 = {T0} sequences with distinct last tokens need N >= T0 (N = {N})")
        last = rng.permutation(N)[:T0]
        return np.column_stack([rng.integers(0, N, (T0, S - 1)), last]) if S > 1 else last[:, None]
    if dataset == "shared-last":
        room = N ** (S - 1)
        if T0 > room:
            raise InvalidInstance(f"T0 = {T0} sequences ending in the same token need N^(S-1) >= T0 ({room})")
        return np.column_stack([_distinct_rows(rng, N, S - 1, T0), np.zeros(T0, dtype=np.int64)])
    if T0 > N ** S:
        raise InvalidInstance(f"T0 = {T0} distinct sequences need N^S >= T0 (N^S = {N ** S})")
    return _distinct_rows(rng, N, S, T0)


def dyadic_simplex_rows(rng, T0: int, N: int, bits: int = DYADIC_BITS) -> np.ndarray:
    """T0 positive rows k / 2^bits summing to 1 EXACTLY (a random composition)."""
    total = 2 ** bits
    if N > total:
        raise InvalidInstance(f"N = {N} exceeds 2^{bits}: no positive dyadic conditionals")
    rows = []
    for _ in range(T0):
        cuts = np.sort(rng.choice(np.arange(1, total), size=N - 1, replace=False))
        rows.append(np.diff(np.concatenate([[0], cuts, [total]])) / total)
    return np.array(rows, dtype=np.float64)


def peaked_simplex_rows(rng, T0: int, N: int, bits: int = DYADIC_BITS) -> np.ndarray:
    """T0 positive rows with mass 1 - 2^-bits on a random mode and 2^-bits spread over the other N - 1 entries
    (a random composition at resolution 2^-(bits + b), 2^b >= N): dyadic, summing to 1 EXACTLY."""
    b = max(bits, (N - 1).bit_length())
    if bits + b > 52:
        raise InvalidInstance(f"N = {N} is too large for exact peaked conditionals")
    units, rows = 2 ** b, []
    for _ in range(T0):
        row = np.empty(N)
        g = int(rng.integers(N))
        cuts = np.sort(rng.choice(np.arange(1, units), size=N - 2, replace=False)) if N > 2 else np.array([], int)
        row[np.arange(N) != g] = np.diff(np.concatenate([[0], cuts, [units]])) / 2.0 ** (bits + b)
        row[g] = 1 - 2.0 ** -bits
        rows.append(row)
    return np.array(rows, dtype=np.float64)


def make_sequence_instance(*, N: int = 5, S: int = 2, d: int = 3, d_h: int | None = None, H: int = 2,
                           T0: int | None = None, dataset: str = "random", conditionals: str = "table",
                           seed: int = 0, eps: float | None = None, **_ignored) -> SequenceInstance:
    """Draw a dataset: ``T0`` (default H d_h + d, the claimed capacity) distinct
    sequences (``dataset``: random / all N^S / all ending in token 0 /
    distinct last tokens), uniform prior, conditionals a table with random
    targets, a table with distinct targets, positive dyadic rows, or peaked
    positive rows (mass 1 - 2^-10 on a random mode)."""
    if dataset not in DATASET_KINDS:
        raise InvalidInstance(f"unknown dataset kind {dataset!r}; choose from {', '.join(DATASET_KINDS)}")
    if conditionals not in CONDITIONAL_KINDS:
        raise InvalidInstance(f"unknown conditionals kind {conditionals!r}; choose from {', '.join(CONDITIONAL_KINDS)}")
    N, S, d = _vocabulary(N), _positive_int("S", S), _positive_int("d", d)
    H = _positive_int("H", H, 0)
    d_h = d if d_h is None else _positive_int("d_h", d_h)
    T0 = H * d_h + d if T0 is None else _positive_int("T0", T0)
    if eps is not None and not 0 < eps < 1:
        raise InvalidInstance(f"eps = {eps!r} must lie in (0, 1)")
    _sizes_fit(T0, S)
    rng = np.random.default_rng(seed)
    seqs = _draw_sequences(rng, N, S, T0, dataset)
    T0 = seqs.shape[0]
    if conditionals in ("positive", "peaked"):
        cond = (dyadic_simplex_rows if conditionals == "positive" else peaked_simplex_rows)(rng, T0, N)
        return replace(from_sequences(seqs, N=N, conditionals=cond, d=d, d_h=d_h, H=H,
                                      kind=f"{dataset}+{conditionals}", seed=seed, source="generated"), eps=eps)
    if conditionals == "table-distinct":
        if T0 > N:
            raise InvalidInstance(f"T0 = {T0} distinct targets need N >= T0 (N = {N})")
        g = rng.permutation(N)[:T0]
    else:
        g = rng.integers(0, N, T0)
    return replace(from_sequences(seqs, N=N, targets=g, d=d, d_h=d_h, H=H, kind=f"{dataset}+{conditionals}",
                                  seed=seed, source="generated"), eps=eps)



def read_named_arrays(path, required: tuple[str, ...], expected: str) -> dict:
    """The named arrays of a ``.npz`` or ``.json`` file (a JSON object of
    lists), with the ``required`` names present; any format error is one
    :class:`InvalidInstance` line (``expected`` says what the object holds)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInstance(f"no such file: {p}")
    try:
        if p.suffix == ".json":
            raw = json.loads(p.read_text())
            if not isinstance(raw, dict):
                raise InvalidInstance(f"{p.name}: expected a JSON object with {expected}")
            arrays = {k: np.asarray(v) for k, v in raw.items()}
        else:
            with np.load(p, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
    except InvalidInstance:
        raise
    except Exception as exc:  # format errors: one line, no traceback
        raise InvalidInstance(f"cannot read {p}: {type(exc).__name__}: {exc}") from None
    for name in required:
        if name not in arrays:
            raise InvalidInstance(f"{p.name}: missing '{name}' (has: {', '.join(sorted(arrays)) or 'none'})")
    return arrays

def load_sequences(path, *, d: int = 2, d_h: int | None = None, H: int = 1, eps: float | None = None,
                   **_ignored) -> SequenceInstance:
    """A dataset from ``.npz`` or ``.json``: ``N``, ``sequences`` (T0, S) and
    ``targets`` (T0,) or ``conditionals`` (T0, N); optional ``prior`` (T0,)."""
    p = Path(path)
    arrays = read_named_arrays(path, ("N", "sequences"), "N, sequences, targets/conditionals")
    N = arrays["N"]
    if N.size != 1 or N.dtype.kind not in "iuf" or not np.isfinite(N.ravel()[0]) or \
            float(N.ravel()[0]) != int(N.ravel()[0]):
        raise InvalidInstance(f"{p.name}: N must be one integer")
    u = max((unit_roundoff(arrays[k]) for k in ("conditionals", "prior") if k in arrays), default=Fraction(0))
    inst = from_sequences(arrays["sequences"], N=int(N.ravel()[0]), targets=arrays.get("targets"),
                          conditionals=arrays.get("conditionals"), prior=arrays.get("prior"), d=d, d_h=d_h,
                          H=H, kind="user", seed=None, source=f"file:{p.name}", precision=u)
    return replace(inst, eps=eps)


def vary_sequence_options(base: dict, rng: np.random.Generator) -> dict:
    """A nearby option set for the report's drawn instances: N, S, d, H, d_h
    moved by at most one (d_h <= d, T0 kept relative to H d_h + d), a new seed."""
    o = dict(base)
    o["N"] = int(max(2, base["N"] + rng.integers(-1, 2)))
    o["S"] = int(max(1 if base["S"] == 1 else 2, base["S"] + rng.integers(-1, 2)))
    o["d"] = int(max(1 if base["d"] == 1 else 2, base["d"] + rng.integers(-1, 2)))
    o["H"] = int(max(0 if base["H"] == 0 else 1, base["H"] + rng.integers(-1, 2)))
    dh = base["d_h"] if base["d_h"] is not None else base["d"]
    o["d_h"] = int(min(o["d"], max(1, dh + rng.integers(-1, 2))))
    if base.get("T0") is not None:
        shift = o["H"] * o["d_h"] + o["d"] - (base["H"] * dh + base["d"])
        o["T0"] = int(max(1, base["T0"] + shift))
    o["seed"] = int(rng.integers(1, 2**31 - 1))
    return o
