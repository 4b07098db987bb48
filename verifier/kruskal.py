"""Kruskal rank (Definition 1), with what is KNOWN kept apart from evidence.

kr(V) is the largest k such that EVERY k-subset of the vectors is linearly
independent.  Independence is inherited by subsets, so

    kr(V) >= k   <=>   every k-subset is independent        (monotone in k)

and kr(V) <= min(m, d), kr(V) <= rank(V) when rank(V) < m.  What we certify:

* an upper bound kr <= c - 1 from a *witness*: a dependent subset of size c
  with an exact rational null combination (it is shrunk to a circuit, a
  minimal dependent subset, so c is as small as that subset allows);
* a lower bound kr >= k by *exhaustion*: every k-subset shown independent,
  only when C(m, k) <= ``exhaustive_limit``.

A subset is shown independent exactly, by its rank modulo a prime: scale each
vector by a power of two to integers (float64 entries are exact rationals),
reduce mod p, multiply by a fixed random d x k matrix S (rank can only drop,
so full rank of the k x k image mod p proves rank k over Q) and eliminate,
vectorised over thousands of subsets.  A subset that fails for two primes is
decided over Q with flint (dependent => exact null vector, the witness).  So
every per-subset verdict here is exact; no float screen is needed.

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
from flint import fmpq, fmpq_mat

from .balls import as_float_matrix
from .compare import Decision
from .errors import InvalidInstance
from .exact import exact_nullspace

__all__ = ["KruskalRank", "kruskal_rank", "kruskal_rank_at_least", "general_position"]

_PRIMES = (1048573, 1048571)  # < 2^20: products < 2^40, exact in int64 and float64
_CHUNK_ELEMS = 4_000_000  # entries of the (B, k, k) work array per chunk


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

    @property
    def exact(self) -> bool:
        return self.lower == self.upper

    def at_least(self, k: int) -> Decision:
        """Is kr(V) >= k?  TRUE/FALSE only when certified, else UNDECIDED."""
        if self.lower >= k:
            return Decision.TRUE
        if self.upper < k:
            return Decision.FALSE
        return Decision.UNDECIDED

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
        }


def _full_rank_mod_p(Y: np.ndarray, p: int) -> np.ndarray:
    """For a stack Y (B, k, k) of integers in [0, p): is each matrix
    nonsingular mod p?  Gaussian elimination with row swaps, fraction-free
    (row_i <- pivot * row_i - y_ic * pivot_row keeps entries < 2^41)."""
    Y = Y.copy()
    B, k, _ = Y.shape
    ok = np.ones(B, dtype=bool)
    ar = np.arange(B)
    for c in range(k):
        nz = Y[:, c:, c] != 0
        has = nz.any(axis=1)
        ok &= has
        piv = nz.argmax(axis=1) + c
        swap = piv != c
        if swap.any():
            b = ar[swap]
            rc, rp = Y[b, c, c:].copy(), Y[b, piv[swap], c:].copy()
            Y[b, c, c:], Y[b, piv[swap], c:] = rp, rc
        if c + 1 < k:
            pv = np.where(has, Y[:, c, c], 1)
            col = Y[:, c + 1:, c]
            prow = Y[:, c, c + 1:]
            Y[:, c + 1:, c + 1:] = (Y[:, c + 1:, c + 1:] * pv[:, None, None]
                                    - col[:, :, None] * prow[:, None, :]) % p
    return ok


def _all_combinations(m: int, k: int) -> np.ndarray:
    """All k-subsets of range(m) as rows, in lexicographic order (vectorised)."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.intp)
    arr = np.arange(m - k + 1, dtype=np.intp)[:, None]
    for s in range(1, k):
        last = arr[:, -1]
        cnt = (m - k + s) - last  # next entry ranges over last+1 .. m-k+s
        starts = np.cumsum(cnt) - cnt
        offs = np.arange(int(cnt.sum()), dtype=np.intp) - np.repeat(starts, cnt)
        arr = np.hstack([np.repeat(arr, cnt, axis=0), (np.repeat(last + 1, cnt) + offs)[:, None]])
    return arr


def _combination_blocks(m: int, k: int, chunk: int, offset: int = 0):
    """Yield all k-subsets of offset + range(m) in blocks of about <= chunk rows."""
    if math.comb(m, k) <= chunk or k == 0:
        yield _all_combinations(m, k) + offset
        return
    for i in range(m - k + 1):
        for blk in _combination_blocks(m - i - 1, k - 1, chunk, offset + i + 1):
            yield np.hstack([np.full((blk.shape[0], 1), offset + i, dtype=np.intp), blk])


class _Search:
    """State of one analysis: exact data, bounds, witness, log."""

    def __init__(self, V, exhaustive_limit: int, samples: int, seed: int):
        V = as_float_matrix(V, "(m, d) array of row vectors")
        if exhaustive_limit < 0 or samples < 0:
            raise InvalidInstance("exhaustive_limit and samples must be >= 0")
        self.V, (self.m, self.d) = V, V.shape
        self.limit, self.samples = int(exhaustive_limit), int(samples)
        self.rng = np.random.default_rng(seed)
        self.t0 = time.perf_counter()
        self.lower, self.upper = 0, min(self.m, self.d)
        self.witness: tuple[int, ...] | None = None
        self.coeffs: tuple[str, ...] | None = None
        self.cut = False  # exhaustion stopped by the limit
        self.sampled = self.sampled_ind = 0
        self.sample_size: int | None = None
        self.log: list[str] = [f"upper <= min(m, d) = {self.upper}"]
        self._rows = [[x.as_integer_ratio() for x in row] for row in V.tolist()]
        self._mod: dict[int, np.ndarray] = {}
        self._proj: dict[tuple[int, int], np.ndarray] = {}
        self._q: list[list[fmpq]] | None = None

    # --- exact data ---------------------------------------------------------
    def _vmod(self, p: int) -> np.ndarray:
        """Row i scaled by 2^e_i to integers, mod p (independence unchanged)."""
        if p not in self._mod:
            out = np.zeros((self.m, self.d), dtype=np.int64)
            for i, row in enumerate(self._rows):
                if row:
                    D = max(q for _, q in row)  # denominators are powers of two
                    out[i] = [(a * (D // q)) % p for a, q in row]
            self._mod[p] = out
        return self._mod[p]

    def _projected(self, p: int, k: int) -> np.ndarray:
        """W = Vmod S mod p, S a fixed random d x k matrix (k < d); exact:
        float64 matmul over blocks whose sums stay below 2^53."""
        key = (p, k)
        if key not in self._proj:
            Vm = self._vmod(p)
            if k >= self.d:
                self._proj[key] = Vm
            else:
                S = np.random.default_rng([p, k]).integers(0, p, size=(self.d, k))
                L = max(1, (2**53 - 1) // (p - 1) ** 2)
                acc = np.zeros((self.m, k), dtype=np.int64)
                for s in range(0, self.d, L):
                    blk = Vm[:, s:s + L].astype(np.float64) @ S[s:s + L].astype(np.float64)
                    acc = (acc + blk.astype(np.int64)) % p
                self._proj[key] = acc
        return self._proj[key]

    def _qmat(self, idx) -> fmpq_mat:
        """The d x k exact matrix whose columns are the vectors idx."""
        if self._q is None:
            self._q = [[fmpq(a, q) for a, q in row] for row in self._rows]
        return fmpq_mat(self.d, len(idx), [self._q[i][r] for r in range(self.d) for i in idx])

    def _exact_null(self, idx) -> list[fmpq] | None:
        """Exact null combination of the vectors idx (None: independent)."""
        ns = exact_nullspace(self._qmat(idx))
        return ns[0] if ns else None

    def independent(self, idx: np.ndarray) -> tuple[np.ndarray, tuple | None, int]:
        """idx (B, k): exact independence mask.  Stops at the first dependent
        subset b and returns (mask, (subset, null vector), b); the mask is
        complete for rows < b.  Without a dependent subset b = B."""
        B, k = idx.shape
        if k > self.d:
            return np.zeros(B, dtype=bool), self._dep(idx[0]), 0
        ok = np.zeros(B, dtype=bool)
        todo = np.arange(B)
        for p in _PRIMES:
            if todo.size == 0:
                break
            W = self._projected(p, k)
            ok[todo] = _full_rank_mod_p(W[idx[todo]], p)
            todo = todo[~ok[todo]]
        for b in todo:
            dep = self._dep(idx[b])
            if dep is not None:
                return ok, dep, int(b)
            ok[b] = True
        return ok, None, B

    def _dep(self, subset):
        v = self._exact_null([int(i) for i in subset])
        return None if v is None else ([int(i) for i in subset], v)

    # --- bounds -------------------------------------------------------------
    def note(self, msg: str) -> None:
        if msg not in self.log:
            self.log.append(msg)

    def record_witness(self, dep, how: str) -> None:
        """Shrink a dependent subset to a circuit; upper <- |circuit| - 1."""
        T, v = dep
        while True:
            T = [t for t, c in zip(T, v) if c != 0]
            ns = exact_nullspace(self._qmat(T))
            if len(ns) == 1 and all(c != 0 for c in ns[0]):
                v = ns[0]
                break
            if len(ns) == 1:
                v = ns[0]
                continue
            v1, v2 = ns[0], ns[1]
            j = next(i for i, c in enumerate(v1) if c != 0)
            v = [b - (v2[j] / v1[j]) * a for a, b in zip(v1, v2)]
        if len(T) - 1 < self.upper:
            self.upper = len(T) - 1
            order = sorted(range(len(T)), key=lambda i: T[i])
            self.witness = tuple(T[i] for i in order)
            self.coeffs = tuple(str(v[i]) for i in order)
            self.note(f"witness ({how}): dependent {len(T)}-subset {list(self.witness)} => upper <= {self.upper}")

    def zero_vectors(self) -> None:
        zero = np.flatnonzero(~self.V.any(axis=1))
        if zero.size:
            self.upper = 0
            self.witness, self.coeffs = (int(zero[0]),), ("1",)
            self.note(f"vector {int(zero[0])} is zero => Kruskal rank 0")
        elif self.m:
            self.lower = max(self.lower, 1)

    def exhaust_level(self, k: int) -> bool:
        """Test every k-subset; True if all independent (then lower >= k)."""
        m = self.m
        chunk = max(1, _CHUNK_ELEMS // max(1, k * k))
        for block in _combination_blocks(m, k, chunk):
            _, dep, _ = self.independent(block)
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

    def hunt(self) -> None:
        """Cheap witness hunt: parallel pairs and whole-set rank deficiency
        (floats propose, exact arithmetic decides)."""
        V, m = self.V, self.m
        if self.upper >= 2 and 2 <= m <= 5000 and math.comb(m, 2) > self.limit:
            U = V / np.linalg.norm(V, axis=1)[:, None]
            G = np.abs(U @ U.T)
            np.fill_diagonal(G, 0.0)
            for i, j in zip(*np.nonzero(np.triu(G) > 1 - 1e-9)):
                dep = self._dep([i, j])
                if dep is not None:
                    self.record_witness(dep, "parallel pair")
                    break
        r = int(np.linalg.matrix_rank(V)) if V.size else 0
        if r < self.upper and r + 1 <= 200:
            import scipy.linalg
            _, piv = scipy.linalg.qr(V.T, mode="r", pivoting=True)
            basis = sorted(int(i) for i in piv[:r])
            for j in [int(i) for i in piv[r:r + 10]]:
                dep = self._dep(sorted(basis + [j]))
                if dep is not None:
                    self.record_witness(dep, "rank deficiency of the whole set")
                    break

    def sample(self, target: int) -> None:
        """The paper's random-subset test at size ``target``: evidence only."""
        left = self.samples
        while left > 0 and self.lower < target <= self.upper:
            if self.sample_size != target:
                self.sample_size, self.sampled, self.sampled_ind = target, 0, 0
            n = min(left, max(1, 2_000_000 // max(self.m, 1)), max(1, _CHUNK_ELEMS // (target * target)))
            idx = np.sort(self.rng.random((n, self.m)).argpartition(target - 1, axis=1)[:, :target], axis=1)
            ok, dep, b = self.independent(idx)
            if dep is not None:
                n = b + 1  # subsets looked at in this chunk
                self.record_witness(dep, f"random {target}-subset")
                self.sampled += n
                self.sampled_ind += int(ok[:n].sum())
                left -= n
                target = self.upper
                continue
            self.sampled += n
            self.sampled_ind += int(ok.sum())
            left -= n
        if self.sample_size is not None:
            self.note(f"evidence: {self.sampled_ind}/{self.sampled} random {self.sample_size}-subsets "
                            "independent (exact per subset; not a proof for all subsets)")

    def result(self) -> KruskalRank:
        exhausted = self.lower == self.upper or not self.cut
        return KruskalRank(self.lower, self.upper, self.witness, self.coeffs, bool(exhausted),
                           self.sampled, self.sampled_ind, "; ".join(self.log),
                           time.perf_counter() - self.t0, self.sample_size)


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
    s.exhaust(k)
    s.hunt()
    if s.lower < k <= s.upper:
        s.sample(k)
    return s.result()


def general_position(V, **kw) -> KruskalRank:
    """Definition 2: general position iff kr(V) = min(m, d); read it with
    ``result.at_least(min(m, d))``."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2:
        raise InvalidInstance(f"expected an (m, d) array of row vectors, got shape {V.shape}")
    return kruskal_rank_at_least(V, min(V.shape), **kw)
