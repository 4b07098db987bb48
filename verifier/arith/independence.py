"""Exact independence of many small subsets of one set of vectors at once.

A subset is shown independent exactly, by its rank modulo a prime: scale each
vector by a power of two to integers (float64 entries are exact rationals),
reduce mod p, multiply by a fixed random d x k matrix S (rank can only drop,
so full rank of the k x k image mod p proves rank k over Q) and eliminate,
vectorised over thousands of subsets.  A subset that fails for two primes is
decided over Q with flint (dependent => exact null vector).  So every
per-subset answer here is exact; no float screen is involved.

Large subsets (k >= ``FLOAT_FROM_K``) are first tried by rigorous float
certificates, valid whatever order the BLAS sums in (the a priori bounds of
:mod:`verifier.arith.float_bounds`), all subsets of a batch at once:

1. the Gram route (:func:`gram_certified`; numpy backends, m <= ``GRAM_ROWS``):
   the ball ``G +/- E`` of V V^T is computed ONCE (one product, symmetrised
   from its lower triangle); a subset S is independent when its Gram block
   ``G_SS`` minus a small shift c has a float Cholesky factor and
   ``c > delta + eps`` (``delta`` bounds ``||G_SS - cI - L L^T||_2``,
   :func:`verifier.arith.robustness_screen._cholesky_defect`; ``eps`` bounds
   the row sums of ``E_SS``): then ``lambda_min(V_S V_S^T) >= c - delta - eps > 0``.
   Per subset a gather, one Cholesky and one product: about 3x faster than
2. the inverse route
   (:func:`verifier.arith.float_certificates.inverse_residual_bounds`): the
   k x k image ``V_S G`` (G a fixed Gaussian d x k matrix) enclosed in float
   balls and proved nonsingular by ``||I - R X||_inf < 1``; about 8x faster
   than elimination mod p at k = 197.

Only the subsets both leave open go to the modular test.

>>> import numpy as np
>>> sets = SubsetIndependence(np.array([[1., 0, 0], [0, 1, 0], [1, 1, 0]]))
>>> mask, dep, _ = sets.independent(np.array([[0, 1], [0, 2]]))
>>> mask.tolist(), dep
([True, True], None)
>>> sets.dependent([0, 1, 2])[0]
[0, 1, 2]
"""
from __future__ import annotations

import math

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.exact import exact_nullspace

__all__ = ["SubsetIndependence", "combination_blocks", "smallest_per_row", "gram_ball", "gram_certified",
           "CHUNK_ELEMS"]

_PRIMES = (1048573, 1048571)  # < 2^20: products < 2^40, exact in int64 and float64
CHUNK_ELEMS = 4_000_000  # entries of the (B, k, k) work array per chunk
FLOAT_FROM_K = 24  # subsets at least this large try the float certificates first
GRAM_ROWS = 4096  # the Gram route keeps two m x m float arrays: m at most this


def _ratio(x) -> tuple[int, int]:
    """(p, q) with x = p / q exactly: floats, ints, fmpq, Fraction."""
    if hasattr(x, "as_integer_ratio"):
        p, q = x.as_integer_ratio()
        return int(p), int(q)
    return int(x.p), int(x.q)  # fmpq


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


def combination_blocks(m: int, k: int, chunk: int, offset: int = 0):
    """Yield all k-subsets of offset + range(m) in blocks of about <= chunk rows."""
    if math.comb(m, k) <= chunk or k == 0:
        yield _all_combinations(m, k) + offset
        return
    for i in range(m - k + 1):
        for blk in combination_blocks(m - i - 1, k - 1, chunk, offset + i + 1):
            yield np.hstack([np.full((blk.shape[0], 1), offset + i, dtype=np.intp), blk])


def smallest_per_row(X: np.ndarray, k: int) -> np.ndarray:
    """The column indices of the k smallest entries of each row of X, sorted:
    ``np.sort(X.argpartition(k - 1, axis=1)[:, :k], axis=1)``, the same
    array, from a threshold screen (the random subsets of a seed stay the
    same draws, at a fraction of a full argpartition of the n x m draws).
    Only entries below ``t`` (about k + 5 sqrt(k) + 4 of m per row for
    uniform [0, 1) draws) are candidates: where a row has at least k of them
    and its k-th smallest entry is strictly below its (k+1)-th, that set of
    k is determined and the screen's answer is argpartition's (NaN is never
    a candidate and sorts last for argpartition).  The other rows (too few
    candidates, a tie at the k-th entry: there argpartition's choice is its
    own, as it was) are partitioned as before, row for row."""
    X = np.asarray(X)
    n, m = X.shape
    if not 0 < k < m or n == 0 or X.dtype != np.float64:
        return np.sort(X.argpartition(k - 1, axis=1)[:, :k], axis=1) if 0 < k <= m else \
            np.zeros((n, max(k, 0)), dtype=np.intp)
    t = (k + 5 * math.sqrt(k) + 4) / m
    mask = X < t
    cnt = np.count_nonzero(mask, axis=1)
    flat = np.flatnonzero(mask)  # row-major: by row, then column
    r = flat // m
    width = max(k + 1, int(cnt.max()))
    dest = r * width + (np.arange(flat.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))  # (row, place in row)
    vals = np.full(n * width, np.inf)
    vals[dest] = X.reshape(-1)[flat]
    cols = np.zeros(n * width, dtype=np.intp)
    cols[dest] = flat - r * m
    vals, cols = vals.reshape(n, width), cols.reshape(n, width)
    part = vals.argpartition(k, axis=1)  # the first k: at most the (k+1)-th smallest, in place k
    kth = np.take_along_axis(vals, part[:, :k], axis=1).max(axis=1)
    nxt = np.take_along_axis(vals, part[:, k:k + 1], axis=1)[:, 0]
    out = np.sort(np.take_along_axis(cols, part[:, :k], axis=1), axis=1)
    redo = np.flatnonzero((cnt < k) | (kth == nxt))  # too few candidates, or a tie: argpartition decides
    if redo.size:
        out[redo] = np.sort(X[redo].argpartition(k - 1, axis=1)[:, :k], axis=1)
    return out


def gram_ball(V, backend=None) -> tuple[np.ndarray, np.ndarray]:
    """(G, e): G (m, m) symmetric, fl(V V^T) read from its lower triangle (ONE
    product), and e (m,) with ``|V V^T - G|_ij <= e_i`` for every j (V exact
    floats): a dot product of length d errs by at most ``gamma_d (|V||V|^T)_ij
    + 3 d UL`` in any summation order, and ``(|V||V|^T)_ij <= ||v_i|| ||v_j||``
    (Cauchy-Schwarz), so ``e_i = gamma_d ||v_i|| max_j ||v_j|| + 3 d UL``
    from upper bounds of the norms: O(m d), no second m x m product."""
    from verifier.arith.backend import get_backend
    from verifier.arith.float_bounds import UL, U, check_ieee, check_range, gamma, rowsum_up, up_scale

    b = get_backend("numpy" if backend is None else backend)
    check_ieee(b)
    V = np.asarray(V, dtype=np.float64)
    check_range(b, V)
    m, d = V.shape
    C = np.tril(np.asarray(b.matmul(V, V.T)))
    G = C + C.T
    G[np.diag_indices_from(G)] *= 0.5  # the diagonal was doubled: halving is exact
    squares = rowsum_up(b, up_scale(b, V * V, 1 / (1 - U), UL / (1 - U)))  # >= ||v_i||^2 (each square rounded)
    norms = up_scale(b, np.sqrt(squares), 1 / (1 - U))  # fl(sqrt(x)) >= sqrt(x) (1 - u)
    top = float(np.max(norms)) if m else 0.0
    e = up_scale(b, norms * top, gamma(d) / (1 - U), 3 * d * UL + UL)  # the product norms * top rounded too
    return G, e


def gram_certified(G: np.ndarray, e: np.ndarray, idx: np.ndarray, backend=None) -> np.ndarray:
    """For a ball of V V^T (:func:`gram_ball`) and subsets idx (B, k): True
    where the rows V_S are proved independent (a one-sided test: False means
    "not proved here"): ``G_SS`` gathered from the ONE Gram matrix, and
    ``lambda_min(V_S V_S^T) >= c - delta - eps > 0`` proved in cache-sized
    batches (:func:`verifier.arith.gram_blocks.subsets_certified`)."""
    from verifier.arith.gram_blocks import subsets_certified

    return subsets_certified(G, e, idx, backend)


class SubsetIndependence:
    """The exact data of a set of row vectors ``V`` (m, d) and the tests of
    its subsets: :meth:`independent` for a batch, :meth:`dependent` for one
    (with its exact null combination), :meth:`circuit` to shrink a dependent
    subset to a minimal one."""

    def __init__(self, V: np.ndarray, backend=None):
        """V: float64 (its entries are exact dyadics), or an object array of
        exact rationals (``fmpq``, ints) whose float64 rounding is not them:
        then the float certificates, which read float64, are not used.
        ``backend``: where the float certificates run (default "auto")."""
        self.V, (self.m, self.d) = V, V.shape
        self.float_exact = V.dtype != object
        self.backend = backend
        self._exact_rows: list[list[tuple[int, int]]] | None = None
        self._mod: dict[int, np.ndarray] = {}
        self._proj: dict[tuple[int, int], np.ndarray] = {}
        self._q: list[list[fmpq]] | None = None
        self._fproj: dict = {}
        self._gram = None

    @property
    def _rows(self) -> list[list[tuple[int, int]]]:
        """Each entry as (p, q), p / q exactly; formed on first use (the
        modular and rational tests need it; a batch the float certificates
        prove independent does not)."""
        if self._exact_rows is None:
            self._exact_rows = [[_ratio(x) for x in row] for row in self.V.tolist()]
        return self._exact_rows

    def _vmod(self, p: int) -> np.ndarray:
        """Row i scaled by 2^e_i to integers, mod p (independence unchanged)."""
        if p not in self._mod:
            out = np.zeros((self.m, self.d), dtype=np.int64)
            for i, row in enumerate(self._rows):
                if row:
                    D = math.lcm(*(q for _, q in row))  # powers of two for floats
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

    def independent(self, idx: np.ndarray, screened: np.ndarray | None = None
                    ) -> tuple[np.ndarray, tuple | None, int]:
        """idx (B, k): exact independence mask.  Stops at the first dependent
        subset b and returns (mask, (subset, null vector), b); the mask is
        complete for rows < b.  Without a dependent subset b = B.  All B
        subsets go through the float certificates as one batch
        (:meth:`float_screen`, or ``screened``: its mask for these subsets
        of these same vectors, computed on another thread); the modular
        test takes what they leave, in blocks of ``CHUNK_ELEMS`` entries."""
        B, k = idx.shape
        if k > self.d:
            return np.zeros(B, dtype=bool), self.dependent(idx[0]), 0
        ok = self.float_screen(idx) if screened is None else np.array(screened, dtype=bool, copy=True)
        todo = np.flatnonzero(~ok)
        step = max(1, CHUNK_ELEMS // max(1, k * k))
        for p in _PRIMES:
            if todo.size == 0:
                break
            W = self._projected(p, k)
            for s in range(0, todo.size, step):
                part = todo[s:s + step]
                ok[part] = _full_rank_mod_p(W[idx[part]], p)
            todo = todo[~ok[todo]]
        for b in todo:
            dep = self.dependent(idx[b])
            if dep is not None:
                return ok, dep, int(b)
            ok[b] = True
        return ok, None, B

    def gram(self):
        """The ball (G, e) of the Gram matrix of the rows scaled by powers of
        two (:func:`verifier.arith.gram_blocks.row_scaled`: the same
        independences), formed once; None where the Gram route does not
        apply (exact rationals, a torch backend, more than GRAM_ROWS rows,
        entries beyond the float bounds' range)."""
        from verifier.arith.backend import get_backend
        from verifier.arith.float_bounds import FloatRangeError
        from verifier.arith.gram_blocks import row_scaled

        if self._gram is None:
            b = get_backend("auto" if self.backend is None else self.backend)
            if not self.float_exact or b.is_torch or self.m > GRAM_ROWS:
                self._gram = False
            else:
                try:
                    self._gram = gram_ball(row_scaled(self.V), b)
                except FloatRangeError:
                    self._gram = False
        return self._gram or None

    def float_screen(self, idx: np.ndarray) -> np.ndarray:
        """The float certificates of :meth:`independent` for subsets idx (B,
        k): True where proved independent, from size ``FLOAT_FROM_K`` up
        (smaller subsets: all False, the modular test is cheaper)."""
        return self._float_certified(idx) if idx.shape[1] >= FLOAT_FROM_K else np.zeros(idx.shape[0], dtype=bool)

    def _float_certified(self, idx: np.ndarray) -> np.ndarray:
        """Subsets proved independent by a float certificate: the Gram route
        (:func:`gram_certified`), then the inverse route on V_S G for the
        rest (one-sided: False means "not proved here", never "dependent")."""
        from verifier.arith.backend import get_backend
        from verifier.arith.float_bounds import FloatRangeError, ball_matmul
        from verifier.arith.float_certificates import inverse_residual_bounds

        k = idx.shape[1]
        ok = np.zeros(idx.shape[0], dtype=bool)
        if not self.float_exact:
            return ok
        b = get_backend("auto" if self.backend is None else self.backend)
        step = max(1, CHUNK_ELEMS // (k * k))
        gram = self.gram()
        if gram is not None:
            for s in range(0, idx.shape[0], step):
                ok[s:s + step] = gram_certified(*gram, idx[s:s + step], b)
        todo = np.flatnonzero(~ok)
        if todo.size == 0:
            return ok
        try:
            if k not in self._fproj:
                V = np.asarray(self.V, dtype=np.float64)
                if k >= self.d:
                    self._fproj[k] = (V, None)
                else:
                    G = np.random.default_rng([k, self.d]).standard_normal((self.d, k))
                    mid, rad = ball_matmul(b, b.asarray(V), None, b.asarray(G), None)
                    self._fproj[k] = (b.to_numpy(mid), b.to_numpy(rad))
            mid, rad = self._fproj[k]
            for s in range(0, todo.size, step):
                part = idx[todo[s:s + step]]
                bounds = inverse_residual_bounds(mid[part], None if rad is None else rad[part], backend=b)
                ok[todo[s:s + step]] = bounds < 1.0
            return ok
        except FloatRangeError:
            return ok

    def dependent(self, subset):
        """(subset, exact null vector) if the vectors ``subset`` are dependent, else None."""
        v = self._exact_null([int(i) for i in subset])
        return None if v is None else ([int(i) for i in subset], v)

    def circuit(self, subset, null_vector):
        """Shrink a dependent subset with its null combination to a circuit (a
        minimal dependent subset): returns (indices, coefficients), all
        coefficients non-zero."""
        T, v = subset, null_vector
        while True:
            T = [t for t, c in zip(T, v) if c != 0]
            ns = exact_nullspace(self._qmat(T))
            if len(ns) == 1 and all(c != 0 for c in ns[0]):
                return T, ns[0]
            if len(ns) == 1:
                v = ns[0]
                continue
            v1, v2 = ns[0], ns[1]
            j = next(i for i, c in enumerate(v1) if c != 0)
            v = [b - (v2[j] / v1[j]) * a for a, b in zip(v1, v2)]
