"""One token-sequence dataset of Dana et al. (:class:`SequenceInstance`)
and its validation (:func:`from_sequences`), for every source: generated,
arrays handed over in Python, a user's file (:mod:`.sequences` draws and
reads them).

Every number keeps its meaning (:mod:`verifier.data.sequence_reading`):
``given_conditionals`` and ``given_prior`` hold the values as given and how
they are read; the float64 ``conditionals`` and ``weights`` are guides for
choices (an argmax, a starting point), never what a decision reads.
Hypotheses on the numbers (Assumptions 1, 2, a uniform prior) are decided
over every point the data stand for: :meth:`SequenceInstance.assumption1`
and its siblings return TRUE, FALSE or UNDECIDED with the reason.

>>> inst = from_sequences([[0, 1], [1, 1]], N=2, targets=[1, 0], d=2)
>>> inst.assumption1()[0].value, inst.uniform()[0].value, inst.reading
('true', 'true', 'exact: floats read as the rationals they encode')
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from verifier.arith.compare import Decision
from verifier.data.integers import integer_values, within
from verifier.data.precision import EXACT, array_precision
from verifier.data.sequence_reading import (
    GivenNumbers,
    checked_rows,
    conditional_balls,
    normalized_rows,
    point_masses,
    positivity,
    prior_balls,
    reading_text,
    uniform_weights,
)
from verifier.errors import InvalidInstance

__all__ = ["SequenceInstance", "from_sequences", "MAX_VOCABULARY", "MAX_SEQUENCES", "MAX_CONTEXT"]

MAX_VOCABULARY = 1024  # N: the checks build exact N x N Gram matrices and T0 x N tables
MAX_SEQUENCES = 2**16  # T0: the checks run each sequence through Eq. (2) in balls
MAX_CONTEXT = 4096  # S


@dataclass(frozen=True, eq=False)
class SequenceInstance:
    N: int
    sequences: np.ndarray  # (T0, S) int, distinct rows
    weights: np.ndarray  # (T0,) float64 guide: w_t / max w (decisions read prior_balls / given_prior)
    conditionals: np.ndarray  # (T0, N) float64 guide of the rows (decisions read conditional_balls)
    d: int
    d_h: int
    H: int
    kind: str = "random"
    seed: int | None = None
    source: str = "generated"
    eps: float | None = None  # Thm. 1 with eps > 0: the prior mass left out (None: the checker's default)
    given_conditionals: GivenNumbers | None = None  # the rows as given and their meaning (None: exact guide)
    given_prior: GivenNumbers | None = None  # the weights as given and their meaning (None: exact guide)
    normalized: bool = False  # rows of Python arrays within 8 N eps of 1 normalized exactly

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
    def cond_numbers(self) -> GivenNumbers:
        return self.given_conditionals if self.given_conditionals is not None else GivenNumbers(self.conditionals)

    @property
    def prior_numbers(self) -> GivenNumbers:
        return self.given_prior if self.given_prior is not None else GivenNumbers(self.weights)

    @property
    def at_precision(self) -> bool:
        """Are some of the numbers read as intervals (a user's floats)?"""
        return not (self.cond_numbers.exact and self.prior_numbers.exact)

    def assumption1(self) -> tuple[Decision, str]:
        """Every pi_t a point mass, over every point the data stand for (:func:`.sequence_reading.point_masses`)."""
        return point_masses(self.cond_numbers)

    def assumption2(self) -> tuple[Decision, str]:
        """Every pi_t > 0, over every point the data stand for."""
        return positivity(self.cond_numbers)

    def uniform(self) -> tuple[Decision, str]:
        """A uniform prior, over every point the data stand for."""
        return uniform_weights(self.prior_numbers)

    @property
    def is_table(self) -> bool:
        """Assumption 1 CERTIFIED (every point the data stand for is a table)."""
        return self.assumption1()[0] is Decision.TRUE

    @property
    def is_positive(self) -> bool:
        """Assumption 2 CERTIFIED (every entry of every point is positive)."""
        return self.assumption2()[0] is Decision.TRUE

    @property
    def uniform_prior(self) -> bool:
        """A uniform prior CERTIFIED (exact equal weights)."""
        return self.uniform()[0] is Decision.TRUE

    @property
    def targets(self) -> np.ndarray:
        """g(t) = argmax pi_t (of the stored values; the target of a point mass)."""
        v = self.cond_numbers.values
        if v.dtype == object:
            return np.array([max(range(v.shape[1]), key=lambda j, r=r: (r[j], -j)) for r in v.tolist()],
                            dtype=np.int64)
        return np.argmax(v, axis=1)

    @property
    def claimed_capacity(self) -> int:
        """H d_h + d (Thm. 1, Cor. 1 with d = 2)."""
        return self.H * self.d_h + self.d

    @property
    def reading(self) -> str:
        return reading_text(self.cond_numbers, self.prior_numbers, self.normalized)

    def conditional_balls(self) -> np.ndarray:
        """(T0, N) arb balls enclosing every distribution the rows stand for (:mod:`.sequence_reading`)."""
        return conditional_balls(self.cond_numbers)

    def prior_balls(self) -> list:
        """The prior weights as balls (each weight's interval when read at the data's precision)."""
        return prior_balls(self.prior_numbers)

    def prior_rationals(self) -> list:
        """The stored prior weights, exact (fmpq)."""
        return self.prior_numbers.rationals.tolist()

    def exact_reading(self) -> "SequenceInstance":
        """The stored values read as exact rationals (what ``--exact-input`` would read), rows not summing to
        1 normalized exactly (p / sum p): a hint of what exact data would decide, never the user's data."""
        if not self.at_precision:
            return self
        cond = self.cond_numbers if self.cond_numbers.exact else normalized_rows(self.cond_numbers)
        return replace(self, given_conditionals=cond, given_prior=GivenNumbers(self.prior_numbers.values, EXACT),
                       normalized=self.normalized or not self.cond_numbers.exact)

    def fingerprint(self) -> str:
        """sha256 of the sequences and the float64 guides (what generated instances always hashed), plus the
        given numbers and their reading wherever the guides are not them (wide integers, decimals, long
        doubles, other float widths, a reading at the data's precision)."""
        h = hashlib.sha256()
        for a in (self.sequences.astype(np.int64), self.weights, self.conditionals):
            h.update(np.ascontiguousarray(a).tobytes())
        for g in (self.prior_numbers, self.cond_numbers):
            if g.exact and g.values.dtype in (np.int64, np.float64) and np.array_equal(g.float64(), g.values):
                continue
            h.update(g.values.dtype.str.encode() + g.precision.kind.encode())
            h.update(repr(g.values.tolist()).encode() if g.values.dtype == object else
                     np.ascontiguousarray(g.values).tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        a1, a2 = self.assumption1()[0], self.assumption2()[0]
        word = {Decision.TRUE: True, Decision.FALSE: False, Decision.UNDECIDED: "undecided at the data's precision"}
        return {"N": self.N, "S": self.S, "T0": self.T0, "d": self.d, "d_h": self.d_h, "H": self.H,
                "u (distinct last tokens)": self.u, "H d_h + d": self.claimed_capacity,
                "association table": word[a1], "positive conditionals": word[a2],
                "kind": self.kind, "seed": self.seed, "source": self.source, "reading": self.reading,
                "sha256_16": self.fingerprint()}

    def replace(self, **changes) -> "SequenceInstance":
        """A copy with ``changes``; new float64 ``weights`` or ``conditionals`` (without their given
        numbers) are read as the exact values they are."""
        if "weights" in changes and "given_prior" not in changes:
            changes["given_prior"] = None
        if "conditionals" in changes and "given_conditionals" not in changes:
            changes["given_conditionals"] = None
        return replace(self, **changes)

    def subset(self, rows) -> "SequenceInstance":
        rows = np.asarray(rows, dtype=int)
        return replace(self, sequences=_frozen(self.sequences[rows], np.int64),
                       weights=_frozen(self.weights[rows]), conditionals=_frozen(self.conditionals[rows]),
                       given_conditionals=self.cond_numbers.subset(rows),
                       given_prior=self.prior_numbers.subset(rows))


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
                   source: str = "arrays", exact: bool = True, normalize: bool | None = None) -> SequenceInstance:
    """Validate a dataset: distinct sequences of tokens in [0, N), targets or
    conditionals (rows >= 0 for which some distribution of the entries'
    sets sums to 1), a positive prior (default uniform).

    ``exact``: every float stands for itself (arrays handed over in Python,
    ``--exact-input``); else each array is read by its dtype
    (:mod:`verifier.data.precision`: a float stands for its rounding
    interval).  ``normalize`` (default: ``exact`` and not a file): an exact
    row within 8 N eps of 1 becomes p / sum p, exactly."""
    N = _vocabulary(N)
    if targets is not None and conditionals is not None:
        raise InvalidInstance("the dataset gives both 'targets' and 'conditionals': give one (targets are the "
                              "point masses of an association table)")
    d = _positive_int("d", d)
    H = _positive_int("H", H, 0)
    d_h = d if d_h is None else _positive_int("d_h", d_h)
    seqs = integer_values("sequences", sequences, exact=exact)
    if seqs.ndim != 2 or seqs.size == 0:
        raise InvalidInstance(f"sequences must be a non-empty (T0, S) array, got shape {seqs.shape}")
    if not within(seqs, 0, N):
        raise InvalidInstance(f"token ids must lie in [0, N) = [0, {N}), found {min(seqs.reshape(-1).tolist())}.."
                              f"{max(seqs.reshape(-1).tolist())}")
    seqs = seqs.astype(np.int64)
    _, first, counts = np.unique(seqs, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        raise InvalidInstance(f"sequence {seqs[first[np.argmax(counts > 1)]].tolist()} is listed more than once "
                              "(the support of pi lists each sequence once)")
    T0 = seqs.shape[0]
    _sizes_fit(T0, seqs.shape[1])
    normalize = exact and not source.startswith("file:") if normalize is None else normalize
    if conditionals is None:
        if targets is None:
            raise InvalidInstance("the dataset needs 'targets' (an association table) or 'conditionals'")
        g = integer_values("targets", targets, exact=exact)
        if g.shape != (T0,):
            raise InvalidInstance(f"targets must be T0 = {T0} integer token ids, got shape {g.shape}")
        if not within(g, 0, N):
            raise InvalidInstance(f"targets must lie in [0, N) = [0, {N})")
        cond = np.zeros((T0, N), dtype=np.int64)
        cond[np.arange(T0), g.astype(np.intp)] = 1
        cond_given, normalized = GivenNumbers(cond, EXACT), False
    else:
        c = _numbers("conditionals", conditionals, (T0, N))
        if np.any(c < 0):
            raise InvalidInstance("conditionals have negative entries")
        raw = GivenNumbers(c, array_precision(c, exact=exact))
        cond_given = checked_rows(raw, normalize=normalize)
        normalized = cond_given is not raw
    if prior is None:
        w = np.ones(T0, dtype=np.int64)
    else:
        prior = np.asarray(prior)
        if prior.shape != (T0,):
            raise InvalidInstance(f"array 'prior' has shape {prior.shape}; expected (T0,) = ({T0},): one weight per "
                                  "sequence")
        w = _numbers("prior", prior[None, :], (1, T0))[0]
    if np.any(w <= 0):
        raise InvalidInstance("the prior must be positive on every listed sequence (it lists the support)")
    prior_given = GivenNumbers(w, array_precision(w, exact=exact))
    return SequenceInstance(N, _frozen(seqs, np.int64), _frozen(_weights_guide(prior_given)),
                            _frozen(cond_given.float64()), d, d_h, H, kind=kind, seed=seed, source=source,
                            given_conditionals=cond_given, given_prior=prior_given, normalized=normalized)


def _weights_guide(prior: GivenNumbers) -> np.ndarray:
    """w_t / max w in float64 (a guide: no overflow at weights near 1e308 or integers beyond it)."""
    q = prior.rationals.tolist()
    top = max(q)
    return np.array([float(Fraction(int((x / top).p), int((x / top).q))) for x in q])


def _numbers(name, a, shape) -> np.ndarray:
    """A numeric array in its own type (float16..long double, integers, or exact ints/Fractions), of ``shape``,
    finite."""
    try:
        a = np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise InvalidInstance(f"array '{name}' is not numeric: {exc}") from None
    if a.dtype.kind == "O":
        bad = [x for x in a.reshape(-1) if isinstance(x, bool) or not isinstance(x, (int, Fraction, np.integer))]
        if bad:
            raise InvalidInstance(f"array '{name}' holds {type(bad[0]).__name__} {bad[0]!r}; give numbers")
    elif a.dtype.kind not in "biuf":
        raise InvalidInstance(f"array '{name}' is not numeric (dtype {a.dtype})")
    if a.shape != shape:
        raise InvalidInstance(f"array '{name}' has shape {a.shape}; expected {shape}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise InvalidInstance(f"array '{name}' has NaN or infinite entries")
    return a


def _sizes_fit(T0: int, S: int) -> None:
    if T0 > MAX_SEQUENCES:
        raise InvalidInstance(f"T0 = {T0} sequences exceed the largest support checked, {MAX_SEQUENCES}")
    if S > MAX_CONTEXT:
        raise InvalidInstance(f"S = {S} exceeds the longest sequence checked, {MAX_CONTEXT}")


