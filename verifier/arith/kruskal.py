"""Kruskal rank (Definition 1), with what is KNOWN kept apart from evidence.

kr(V) is the largest k such that EVERY k-subset of the vectors is linearly
independent.  Independence is inherited by subsets, so

    kr(V) >= k   <=>   every k-subset is independent        (monotone in k)

and kr(V) <= min(m, d), kr(V) <= rank(V) when rank(V) < m.  What we certify:

* an upper bound kr <= c - 1 from a *witness*: a dependent subset of size c
  with an exact rational null combination (it is shrunk to a circuit, a
  minimal dependent subset, so c is as small as that subset allows);
* a lower bound kr >= k by *exhaustion*: every k-subset shown independent,
  only when C(m, k) <= ``exhaustive_limit``;
* for m <= d, kr = m by ONE rank certificate of the whole m x d matrix (a
  nonsingular m x m minor, :mod:`verifier.arith.rank`: float64 verification
  or arb balls): all m vectors independent, so every subset is
  (``rank_certificate``; :func:`kruskal_rank_at_least` tries it before any
  sample, when the k-subsets are too many to exhaust).

Each subset is decided exactly (mod-p elimination, then flint over Q for the
few that fail; :mod:`verifier.arith.independence`), so every per-subset
verdict here is exact (rigorous float certificates first, where they
decide).  V is float64 (its
entries are exact dyadics) or an object array of exact rationals (``fmpq``:
a user's int64 beyond 2^53 or long doubles, which float64 would round).

The paper's test (5000 random n-subsets) is run as EVIDENCE: it fills
``sampled``/``sampled_independent`` and may find a witness (lowering the
upper bound), but it never raises the certified lower bound.

>>> import numpy as np
>>> V = np.array([[1., 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
>>> r = kruskal_rank(V)
>>> (r.lower, r.upper, r.witness, r.witness_coefficients)
(2, 2, (0, 1, 2), ('1', '1', '-1'))
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from verifier.arith.balls import as_float_matrix, exact_rationals_if_rounded
from verifier.arith.compare import Decision
from verifier.arith.independence import CHUNK_ELEMS, SubsetIndependence, combination_blocks
from verifier.arith.subset_sample import draw_subsets, take_sample
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["KruskalRank", "kruskal_rank", "kruskal_rank_at_least", "general_position"]



def _minor_columns(V: np.ndarray) -> np.ndarray:
    """m columns of V (m x d, m <= d) for a nonsingular minor, chosen by a
    float LU with partial pivoting of V^T (its pivot rows): a choice only."""
    import warnings

    import scipy.linalg

    m, d = V.shape
    if not np.all(np.isfinite(V)):
        raise ValueError("non-finite entries")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular factor still names its pivots
        piv = scipy.linalg.lu_factor(V.T, check_finite=False)[1]
    perm = np.arange(d)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return np.sort(perm[:m])


def kruskal_at_least(lower: int, upper: int, k: int) -> Decision:
    """kr >= k from certified bounds lower <= kr <= upper (a plain function, so
    mutation testing reaches it: methods of dataclasses are not mutated)."""
    if lower >= k:
        return Decision.TRUE
    if upper < k:
        return Decision.FALSE
    return Decision.UNDECIDED


@dataclass(frozen=True)
class KruskalRank:
    """Certified bounds ``lower <= kr(V) <= upper`` and the evidence gathered.

    ``witness``: indices of a dependent subset (a circuit) of size
    ``upper + 1`` when the upper bound comes from one, with
    ``witness_coefficients`` (integers as strings, sum_i c_i v_i = 0
    exactly); None when the upper bound is structural (min(m, d)).
    ``exhausted``: the exhaustive search was not cut short by
    ``exhaustive_limit`` (or the bounds already meet).
    ``sampled``/``sampled_independent``: random ``sample_size``-subsets drawn
    and shown independent -- evidence only.
    """

    lower: int
    upper: int
    witness: tuple[int, ...] | None
    witness_coefficients: tuple[str, ...] | None
    exhausted: bool
    sampled: int
    sampled_independent: int
    method: str
    seconds: float
    sample_size: int | None = None
    rank_certificate: dict | None = None

    @property
    def exact(self) -> bool:
        return self.lower == self.upper

    def at_least(self, k: int) -> Decision:
        """Is kr(V) >= k?  TRUE/FALSE only when certified, else UNDECIDED."""
        return kruskal_at_least(self.lower, self.upper, k)

    def to_dict(self) -> dict:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "exact": self.exact,
            "witness": list(self.witness) if self.witness is not None else None,
            "witness_coefficients": list(self.witness_coefficients) if self.witness_coefficients else None,
            "exhausted": self.exhausted,
            "sampled": self.sampled,
            "sampled_independent": self.sampled_independent,
            "sample_size": self.sample_size,
            "method": self.method,
            "seconds": self.seconds,
            **({"rank_certificate": self.rank_certificate} if self.rank_certificate is not None else {}),
        }


class _Search:
    """State of one analysis: exact data, bounds, witness, log."""

    def __init__(self, V, exhaustive_limit: int, samples: int, seed: int):
        exact = V if isinstance(V, np.ndarray) and V.dtype == object else exact_rationals_if_rounded(V)
        V = as_float_matrix(V, "(m, d) array of row vectors", rounding=exact is not None)  # floats propose
        if exhaustive_limit < 0 or samples < 0:
            raise InvalidInstance("exhaustive_limit and samples must be >= 0")
        self.V, (self.m, self.d) = V, V.shape
        self.limit, self.samples = int(exhaustive_limit), int(samples)
        self.rng, self.seed = np.random.default_rng(seed), seed
        self.t0 = time.perf_counter()
        self.lower, self.upper = 0, min(self.m, self.d)
        self.witness: tuple[int, ...] | None = None
        self.coeffs: tuple[str, ...] | None = None
        self.cut = False  # exhaustion stopped by the limit
        self.sampled = self.sampled_ind = 0
        self.sample_size: int | None = None
        self.rank_certificate: dict | None = None
        self.log: list[str] = [f"upper <= min(m, d) = {self.upper}"]
        self.rationals = exact
        self.exact = SubsetIndependence(V if exact is None else exact)
        self.zero = (~V.any(axis=1) if exact is None else
                     np.array([all(x == 0 for x in row) for row in exact], dtype=bool).reshape(-1))

    # --- bounds -------------------------------------------------------------
    def note(self, msg: str) -> None:
        if msg not in self.log:
            self.log.append(msg)

    def record_witness(self, dep, how: str) -> None:
        """Shrink a dependent subset to a circuit; upper <- |circuit| - 1."""
        T, v = self.exact.circuit(*dep)
        if len(T) - 1 < self.upper:
            self.upper = len(T) - 1
            order = sorted(range(len(T)), key=lambda i: T[i])
            self.witness = tuple(T[i] for i in order)
            self.coeffs = tuple(str(v[i]) for i in order)
            self.note(f"witness ({how}): dependent {len(T)}-subset {list(self.witness)} => upper <= {self.upper}")

    def zero_vectors(self) -> None:
        zero = np.flatnonzero(self.zero)
        if zero.size:
            self.upper = 0
            self.witness, self.coeffs = (int(zero[0]),), ("1",)
            self.note(f"vector {int(zero[0])} is zero => Kruskal rank 0")
        elif self.m:
            self.lower = max(self.lower, 1)

    def exhaust_level(self, k: int) -> bool:
        """Test every k-subset; True if all independent (then lower >= k)."""
        m = self.m
        chunk = max(1, CHUNK_ELEMS // max(1, k * k))
        for block in combination_blocks(m, k, chunk):
            _, dep, _ = self.exact.independent(block)
            if dep is not None:
                self.record_witness(dep, f"exhaustion of {k}-subsets")
                return False
        self.lower = max(self.lower, k)
        self.note(f"all C({m},{k}) = {math.comb(m, k)} {k}-subsets independent (exact, mod p / Q)")
        return True

    def exhaust(self, target: int) -> None:
        """Raise lower by exhausting the largest affordable level <= target."""
        while self.lower < min(target, self.upper):
            top = min(target, self.upper)
            levels = [j for j in range(top, self.lower, -1) if math.comb(self.m, j) <= self.limit]
            if not levels:
                self.cut = True
                self.note(f"C({self.m},{self.lower + 1}..{top}) exceed exhaustive_limit={self.limit}")
                return
            if levels[0] < top:
                self.cut = True
            if self.exhaust_level(levels[0]) and levels[0] < top:
                self.note(f"C({self.m},{levels[0] + 1}..{top}) exceed exhaustive_limit={self.limit}")
                return

    def whole_set(self) -> None:
        """m <= d: ONE rank certificate of the m x d matrix (a nonsingular
        m x m minor, :func:`verifier.arith.rank.certify_rank_lower_bound_lazy`)
        proves all m vectors independent, hence every subset of them: lower
        = m = upper.  The minor's columns are the pivots of a float LU with
        partial pivoting of V^T (floats only choose: 0.15 s where a pivoted
        QR takes 1.3 s at 2000 x 2048).  Exact rationals: the minor in arb
        balls from the rationals themselves (arb path, m <= 64) or in float
        balls around them (float path,
        :func:`~verifier.arith.robustness_screen.float_ball_of_rationals`).
        Not certified (too ill-conditioned, out of the float range): nothing
        changes, the other tests follow."""
        if not 1 <= self.m <= self.d or self.lower >= self.m:
            return
        from verifier.arith.rank import certify_rank_lower_bound_lazy

        try:
            cols = _minor_columns(self.V)
            mid, minor_ball, minor_float = self._minors()
            cert = certify_rank_lower_bound_lazy(mid, self.m, minor_ball, minor_float=minor_float, cols=cols)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError, InvalidInstance, InsufficientPrecision):
            return  # a float step failed: not certified here
        if cert.decision is Decision.TRUE:
            self.lower = self.upper = self.m
            self.rank_certificate = {**cert.to_dict(), "certified_by": cert.certified_by}
            self.note(f"all {self.m} vectors independent: rank of the {self.m} x {self.d} matrix = {self.m} "
                      f"(a nonsingular minor, {cert.certified_by}) => every subset independent, lower = {self.m}")

    def _minors(self):
        """(float midpoint, arb minor, float-ball minor) of the exact vectors."""
        from flint import arb, arb_mat

        from verifier.arith.balls import to_arb_mat
        from verifier.arith.compare import workprec
        from verifier.arith.float_certificates import FloatBall
        from verifier.arith.robustness_screen import float_ball_of_rationals

        if self.rationals is None:
            V = self.V
            return (V, lambda r, c: to_arb_mat(V[np.ix_(r, c)]),
                    lambda r, c: FloatBall(np.ascontiguousarray(V[np.ix_(r, c)]), None))
        Q = self.rationals
        mid, rad = float_ball_of_rationals(Q)
        if not np.all(np.isfinite(mid)):
            raise ValueError("an exact entry beyond the float range")
        def exact_minor(r, c):  # the rationals at 512 bits (not the ambient 53: 2^60 + 1 would be +/- 256)
            with workprec(512):
                return arb_mat([[arb(Q[i, j]) for j in c] for i in r])

        return mid, exact_minor, lambda r, c: FloatBall(mid[np.ix_(r, c)], rad[np.ix_(r, c)])

    def hunt(self) -> None:
        """Cheap witness hunt: parallel pairs and whole-set rank deficiency
        (floats propose, exact arithmetic decides)."""
        V, m = self.V, self.m
        if self.upper >= 2 and 2 <= m <= 5000 and math.comb(m, 2) > self.limit:
            gram = self.exact.gram()  # the sample's Gram matrix, when it has one: no second product
            with np.errstate(divide="ignore", invalid="ignore"):  # a float copy may round a row to 0
                if gram is not None:
                    n = np.sqrt(np.diagonal(gram[0]))
                    G = np.abs(gram[0]) / n[:, None] / n[None, :]
                else:
                    U = V / np.linalg.norm(V, axis=1)[:, None]
                    G = np.abs(U @ U.T)
            np.fill_diagonal(G, 0.0)
            for i, j in zip(*np.nonzero(np.triu(G) > 1 - 1e-9)):
                dep = self.exact.dependent([i, j])
                if dep is not None:
                    self.record_witness(dep, "parallel pair")
                    break
        try:
            r = int(np.linalg.matrix_rank(V)) if V.size else 0
        except np.linalg.LinAlgError:  # a float proposal failed: no witness proposed, the exhaustion decides
            return
        if r < self.upper and r + 1 <= 200:
            import scipy.linalg
            _, piv = scipy.linalg.qr(V.T, mode="r", pivoting=True)
            basis = sorted(int(i) for i in piv[:r])
            for j in [int(i) for i in piv[r:r + 10]]:
                dep = self.exact.dependent(sorted(basis + [j]))
                if dep is not None:
                    self.record_witness(dep, "rank deficiency of the whole set")
                    break

    def prefetchable(self) -> bool:
        """Whether a prefetched draw can be this search's: float vectors, an
        integer seed and nothing drawn yet (the state of ``default_rng(seed)``)."""
        return (self.rationals is None and isinstance(self.seed, (int, np.integer))
                and self.rng.bit_generator.state == np.random.default_rng(self.seed).bit_generator.state)

    def sample(self, target: int) -> None:
        """The paper's random-subset test at size ``target``: evidence only.
        Every subset left is drawn first (in blocks of about 2e6 random
        numbers, the RNG state kept after each) and tested as ONE batch; a
        dependent subset rewinds the RNG to the end of its block, so the
        counts and the subsets drawn next are those of a block-by-block
        search (the rest of that block is dropped, not counted)."""
        left = self.samples
        while left > 0 and self.lower < target <= self.upper:
            if self.sample_size != target:
                self.sample_size, self.sampled, self.sampled_ind = target, 0, 0
            pre = take_sample(self.V, target, samples=left, seed=int(self.seed)) if self.prefetchable() else None
            if pre is not None:  # the same draw, screened on a second thread (prefetch_sample)
                idx, ends, states, screened = pre
                self.rng.bit_generator.state = states[-1]
            else:
                (idx, ends, states), screened = draw_subsets(self.rng, self.m, target, left), None
            ok, dep, b = self.exact.independent(idx, screened)
            n = b + 1 if dep is not None else len(idx)  # subsets looked at
            self.sampled += n
            self.sampled_ind += int(ok[:n].sum())
            left -= n
            if dep is not None:
                j = next(i for i, e in enumerate(ends) if b < e)
                self.rng.bit_generator.state = states[j]
                self.record_witness(dep, f"random {target}-subset")
                target = self.upper
        if self.sample_size is not None:
            self.note(f"evidence: {self.sampled_ind}/{self.sampled} random {self.sample_size}-subsets "
                            "independent (exact per subset; not a proof for all subsets)")

    def result(self) -> KruskalRank:
        exhausted = self.lower == self.upper or not self.cut
        return KruskalRank(self.lower, self.upper, self.witness, self.coeffs, bool(exhausted),
                           self.sampled, self.sampled_ind, "; ".join(self.log),
                           time.perf_counter() - self.t0, self.sample_size, self.rank_certificate)


def kruskal_rank(V, *, exhaustive_limit: int = 20000, samples: int = 5000, seed: int = 0) -> KruskalRank:
    """Certified bounds on the Kruskal rank of the rows of ``V`` (m, d).

    Exact when every needed level C(m, k) <= ``exhaustive_limit``: the largest
    affordable level <= the current upper bound is exhausted (a dependent
    subset found there is shrunk to a circuit and lowers the upper bound; the
    loop repeats).  Otherwise the lower bound is the last exhausted level and
    ``samples`` random subsets of size ``upper`` are tested as evidence.
    """
    s = _Search(V, exhaustive_limit, samples, seed)
    s.zero_vectors()
    s.exhaust(s.upper)
    if s.lower < s.upper:
        s.hunt()
        s.exhaust(s.upper)
    if s.lower < s.upper:
        s.sample(s.upper)
        s.exhaust(s.upper)
    return s.result()


def kruskal_rank_at_least(V, k: int, *, exhaustive_limit: int = 20000, samples: int = 5000,
                          seed: int = 0) -> KruskalRank:
    """Is every k-subset of the rows of V independent?  Read the answer with
    ``result.at_least(k)``: TRUE by exhaustion of the k-subsets, FALSE by a
    witness (or k > min(m, d)), UNDECIDED when C(m, k) > ``exhaustive_limit``
    and no witness turned up -- then ``sampled_independent/sampled`` is the
    paper's random-subset evidence at size k."""
    k = int(k)
    if k < 0:
        raise InvalidInstance(f"k must be >= 0, got {k}")
    s = _Search(V, exhaustive_limit, samples, seed)
    s.zero_vectors()
    if k <= s.lower or k > s.upper:
        return s.result()
    if math.comb(s.m, k) <= s.limit:
        s.exhaust_level(k)
        return s.result()
    s.whole_set()  # m <= d: one rank certificate decides every subset
    if s.lower >= k:
        return s.result()
    s.exhaust(k)
    s.hunt()
    if s.lower < k <= s.upper:
        s.sample(k)
    return s.result()


def general_position(V, **kw) -> KruskalRank:
    """Definition 2: general position iff kr(V) = min(m, d); read it with
    ``result.at_least(min(m, d))``."""
    V = V if isinstance(V, np.ndarray) and V.dtype == object else np.asarray(V, dtype=np.float64)
    if V.ndim != 2:
        raise InvalidInstance(f"expected an (m, d) array of row vectors, got shape {V.shape}")
    return kruskal_rank_at_least(V, min(V.shape), **kw)
