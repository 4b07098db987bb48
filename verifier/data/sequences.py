"""Next-token datasets of Dana et al. (AISTATS 2025): a prior pi on token
sequences t in [N]^S (its support: ``sequences``, one row each, with prior
weights) and the conditionals pi_t = pi(. | t) in the simplex of R^N, plus the
sizes (d, d_h, H) of the attention-only transformer that should memorize them.

* an association table (Assumption 1): every pi_t is a point mass at a
  target g(t) (``targets``); memorized = g(t) is the strict argmax of T(t);
* distributions (Assumption 2): every pi_t > 0; memorized in d_KL.

Generated instances are exact: conditionals are dyadic (k / 2^10), prior
weights integers.  User files (``.npz`` or ``.json``: ``N``, ``sequences``
and ``targets`` or ``conditionals``, optional ``prior``) are read by the one
reader, :func:`verifier.data.files.read_data_file`, and pass the same
validation: one line of :class:`~verifier.errors.InvalidInstance` for bad
input.  ``N``, ``sequences`` and ``targets`` hold integers
(:func:`verifier.data.integers.integer_values`: a float there is bad input
unless ``--exact-input``).

What a number in a file means (:mod:`verifier.data.sequence_reading`, by
:mod:`verifier.data.precision`): a float stands for every real that rounds
to it, so a row of the conditionals stands for every distribution in its
entries' intervals and the checkers compute on balls enclosing all of them;
integers, JSON decimals and ``--exact-input`` floats stand for themselves.
The float64 arrays ``conditionals`` and ``weights`` are guides (an argmax,
a starting point), never what a decision reads.  ``summary()["reading"]``
says which reading was used.

>>> inst = make_sequence_instance(N=4, S=2, d=2, d_h=1, H=2, seed=0)
>>> inst.T0, inst.claimed_capacity, inst.is_table    # T0 defaults to H d_h + d
(4, 4, True)
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from verifier.data.files import read_data_file
from verifier.data.integers import integer_values
from verifier.data.sequence_instance import (  # noqa: F401 (re-exported: the paper's data API)
    MAX_CONTEXT,
    MAX_SEQUENCES,
    MAX_VOCABULARY,
    SequenceInstance,
    _positive_int,
    _sizes_fit,
    _vocabulary,
    from_sequences,
)
from verifier.errors import InvalidInstance

DATASET_KINDS = ("random", "all", "shared-last", "distinct-last")
CONDITIONAL_KINDS = ("table", "table-distinct", "positive", "peaked")
DYADIC_BITS = 10  # generated conditionals are multiples of 2^-10
#: the arrays of a data file: required, and optional (one of targets / conditionals must be there)
FILE_ARRAYS = (("N", "sequences"), ("targets", "conditionals", "prior"))


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



def load_sequences(path, *, d: int = 2, d_h: int | None = None, H: int = 1, eps: float | None = None,
                   exact_input: bool = False, **_ignored) -> SequenceInstance:
    """A dataset from ``.npz`` or ``.json`` (:func:`verifier.data.files.read_data_file`): ``N``,
    ``sequences`` (T0, S) and ``targets`` (T0,) or ``conditionals`` (T0, N); optional ``prior`` (T0,).
    ``exact_input``: floats stand for the rationals they encode (``--exact-input``)."""
    p = Path(path)
    f = read_data_file(p, required=FILE_ARRAYS[0], optional=FILE_ARRAYS[1], exact_input=exact_input)
    N = integer_values("N", f.values("N"), exact=exact_input)
    if N.size != 1:
        raise InvalidInstance(f"{p.name}: N must be one integer, got shape {N.shape}")
    if eps is not None and not 0 < eps < 1:
        raise InvalidInstance(f"eps = {eps} must lie in (0, 1)")
    inst = from_sequences(f.values("sequences"), N=int(N.reshape(-1)[0]), targets=f.values("targets"),
                          conditionals=f.values("conditionals"), prior=f.values("prior"), d=d, d_h=d_h, H=H,
                          kind="user", seed=None, source=f"file:{p.name}", exact=exact_input, normalize=False)
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
