"""Certified bounds on the rank of a matrix, and on its smallest singular value.

What counts as a certificate here (``Decision.TRUE``):

* rank(A) >= k: a k x k submatrix ``A_k`` (rows ``I``, columns ``J``) and a
  matrix ``R`` with ``||I_k - R A_k||_inf < 1``, bounded above in ball
  arithmetic.  Then ``R A_k`` is invertible (its distance to ``I_k`` is below
  1, so the Neumann series converges), hence ``A_k`` is invertible and
  rank(A) >= k.  ``R`` is any matrix at all -- a float64 inverse of the
  midpoint -- so its own errors cannot make the test lie.  When ``A`` is an
  ``arb_mat`` the bound holds for every matrix in the ball, so the claim is
  about the true matrix that the ball encloses.
* rank(A) <= k: ``n - k`` vectors, independent and with ``A v = 0`` EXACTLY
  over Q (``fmpq``); only for exact input (float64 arrays are exact rationals).

The test avoids the Gram matrix ``A A^T`` (condition number squared) and
``arb_mat.det`` (about 6 s at 621 x 621): one arb matrix product does the work.

Floats (``numerical_rank``, the pivoted QR that chooses the minor) only make
the choice; they are never evidence.

>>> import numpy as np
>>> A = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
>>> lb = certify_rank_lower_bound(A)
>>> lb.k, lb.decision.value
(2, 'true')
>>> certify_rank_upper_bound_exact(A).k_upper
2
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.linalg
from flint import arb, arb_mat, fmpq

from .balls import (
    as_float_matrix,
    float_up,
    identity,
    frobenius_upper,
    inf_norm_upper,
    matmul,
    spectral_norm_upper,
    to_arb_mat,
    arb_mat_mid,
)
from .compare import Decision, certainly_less, certainly_positive, with_precision_ladder, workprec
from .errors import InsufficientPrecision, InvalidInstance
from .exact import exact_rank, exact_nullspace, exact_matvec_is_zero, to_fmpq_mat, to_fmpq_vector

__all__ = [
    "numerical_rank",
    "RankLowerBound",
    "certify_rank_lower_bound",
    "certify_full_row_rank",
    "RankUpperBound",
    "certify_rank_lower_bound_lazy",
    "certify_rank_upper_bound",
    "certify_rank_upper_bound_exact",
    "sigma_min_lower_bound",
    "sigma_min_enclosure",
    "spectral_norm_upper",
]

#: Largest minor for which an UNDECIDED float preconditioner is retried with a
#: multiprecision approximate inverse (arb ``solve(..., algorithm="approx")``
#: costs ~6 s at 621 x 621 and 256 bits).
REFINE_LIMIT = 300


def _split(A) -> tuple[np.ndarray, arb_mat | None]:
    """(float midpoint array, ball matrix or None for exact float input)."""
    if isinstance(A, arb_mat):
        mid = arb_mat_mid(A)
        if not np.all(np.isfinite(mid)):
            raise InvalidInstance("ball matrix has NaN or infinite midpoints")
        return mid, A
    a = as_float_matrix(A)
    return a, None


def _singular_values(mid: np.ndarray) -> np.ndarray:
    if mid.size == 0:
        return np.zeros(0)
    return np.linalg.svd(mid, compute_uv=False)


def numerical_rank(A, rtol: float | None = None) -> int:
    """Number of singular values above ``rtol * sigma_max`` (default
    ``max(m, n) * eps``), from a float64 SVD of the midpoint.  A guess, never
    evidence."""
    mid, _ = _split(A)
    s = _singular_values(mid)
    if s.size == 0 or s[0] == 0:
        return 0
    tol = (max(mid.shape) * np.finfo(np.float64).eps if rtol is None else rtol) * s[0]
    return int(np.count_nonzero(s > tol))


@dataclass(frozen=True)
class RankLowerBound:
    """rank(A) >= k, certified iff ``decision is Decision.TRUE``.

    ``rows``/``cols`` index the k x k minor; ``residual_norm_upper`` is the
    certified upper bound of ``||I - R A_minor||_inf`` (``inf`` if never
    computed).  FALSE only when k > min(m, n) (rank cannot reach k).
    """

    k: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    decision: Decision
    prec_bits: int
    method: str
    residual_norm_upper: float
    seconds: float
    requested_k: int | None = None

    @property
    def certified_k(self) -> int:
        """The rank lower bound actually proved (0 when not certified)."""
        return self.k if self.decision is Decision.TRUE else 0

    def to_dict(self) -> dict:
        r = self.residual_norm_upper
        return {
            "k": self.k,
            "certified_k": self.certified_k,
            "requested_k": self.requested_k,
            "rows": list(self.rows),
            "cols": list(self.cols),
            "decision": self.decision.value,
            "prec_bits": self.prec_bits,
            "method": self.method,
            "residual_norm_upper": r if np.isfinite(r) else None,
            "seconds": self.seconds,
        }


def _pivot_order(M: np.ndarray) -> np.ndarray:
    """Column order of a column-pivoted QR of ``M`` (largest first)."""
    _, piv = scipy.linalg.qr(M, mode="r", pivoting=True)
    return np.asarray(piv, dtype=np.intp)


def _select_minor(mid: np.ndarray, k: int, row_order: np.ndarray | None):
    m, n = mid.shape
    rows = np.arange(m) if k == m else np.sort(row_order[:k])
    sub = mid[rows]
    cols = np.arange(n) if k == n else np.sort(_pivot_order(sub)[:k])
    return rows, cols


def _ball_minor(mid: np.ndarray, ball: arb_mat | None, rows, cols) -> arb_mat:
    if ball is None:
        return to_arb_mat(mid[np.ix_(rows, cols)])  # exact
    m, n = mid.shape
    obj = np.empty(m * n, dtype=object)
    obj[:] = ball.entries()
    sub = obj.reshape(m, n)[np.ix_(rows, cols)]
    return arb_mat(len(rows), len(cols), sub.ravel().tolist())


def _certify_minor(Mmid: np.ndarray, Mball: arb_mat, exact_input: bool, prec: int, max_prec: int):
    """Preconditioned nonsingularity test; returns (decision, residual, bits, how)."""
    k = Mmid.shape[0]
    try:
        R0 = np.linalg.inv(Mmid)
    except np.linalg.LinAlgError:
        R0 = None
    if R0 is None or not np.all(np.isfinite(R0)):
        return Decision.UNDECIDED, float("inf"), prec, "float64 inverse failed (numerically singular)"
    I = identity(k)
    Mmid_ball = Mball if exact_input else Mball.mid()
    state = {"first": True, "how": "R ~ inv(A_minor) in float64"}

    def attempt(bits: int):
        if state["first"]:
            R = to_arb_mat(R0)
            state["first"] = False
        else:  # a better preconditioner at this precision (no error bounds needed)
            R = Mmid_ball.solve(I, algorithm="approx").mid()
            state["how"] = f"R ~ inv(A_minor) by a {bits}-bit approximate solve"
        E = I - matmul(R, Mball)
        nrm = inf_norm_upper(E)
        # ||.|| >= 1 does not make the minor singular: the test just failed.
        ok = certainly_less(nrm, 1) is Decision.TRUE
        return (Decision.TRUE if ok else Decision.UNDECIDED), nrm

    top = max_prec if k <= REFINE_LIMIT else prec
    decision, nrm, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, top))
    resid = float_up(nrm) if nrm is not None else float("inf")
    return decision, resid, bits, state["how"]


def certify_rank_lower_bound(A, k: int | None = None, *, prec: int = 128, max_prec: int = 1024) -> RankLowerBound:
    """Certify rank(A) >= k by a nonsingular k x k minor.

    ``A``: float64 array (entries taken as exact) or ``arb_mat`` (a ball
    enclosure of the true matrix).  The minor is chosen in float64: rows by
    pivoted QR of A^T, then columns by pivoted QR of those rows.  The minor is
    certified by ``||I - R A_minor||_inf < 1`` in arb (see module docstring),
    with ``with_precision_ladder``; past the first precision a multiprecision
    preconditioner is tried, for minors up to ``REFINE_LIMIT``.

    ``k`` given: that k only; UNDECIDED if it cannot be certified (never a
    smaller k).  ``k=None``: start at the numerical rank and, on failure, try
    the smaller ranks that stricter SVD thresholds give (rtol 1e-12 ... 1e-2);
    the result is the first k certified (UNDECIDED with the numerical rank if
    none).  Never certifies more than the true rank.
    """
    t0 = time.perf_counter()
    mid, ball = _split(A)
    m, n = mid.shape
    requested = k
    if k is not None:
        k = int(k)
        if k < 0:
            raise InvalidInstance(f"k must be >= 0, got {k}")
        if k > min(m, n):
            return RankLowerBound(k, (), (), Decision.FALSE, prec, f"k={k} exceeds min(m, n)={min(m, n)}",
                                  float("inf"), time.perf_counter() - t0, requested)
        candidates = [k]
    else:
        s = _singular_values(mid)
        k0 = numerical_rank(mid)
        candidates = [k0]
        for rtol in (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2):
            kk = int(np.count_nonzero(s > rtol * s[0])) if s.size and s[0] > 0 else 0
            if kk < candidates[-1]:
                candidates.append(kk)
    if candidates[0] == 0:
        return RankLowerBound(0, (), (), Decision.TRUE, prec, "rank >= 0 holds trivially", 0.0,
                              time.perf_counter() - t0, requested)
    row_order = _pivot_order(mid.T) if candidates[0] < m else None
    first: RankLowerBound | None = None
    for kk in candidates:
        if kk == 0:
            break
        rows, cols = _select_minor(mid, kk, row_order)
        Mmid = mid[np.ix_(rows, cols)]
        Mball = _ball_minor(mid, ball, rows, cols)
        decision, resid, bits, how = _certify_minor(Mmid, Mball, ball is None, prec, max_prec)
        res = RankLowerBound(kk, tuple(int(i) for i in rows), tuple(int(j) for j in cols), decision, bits,
                             f"arb: ||I - R A_minor||_inf < 1 with {how}", resid,
                             time.perf_counter() - t0, requested)
        if decision is Decision.TRUE:
            return res
        if first is None:
            first = res
    return RankLowerBound(first.k, first.rows, first.cols, Decision.UNDECIDED, first.prec_bits,
                          first.method + "; not certified: raise max_prec or supply a smaller k",
                          first.residual_norm_upper, time.perf_counter() - t0, requested)


def certify_rank_lower_bound_lazy(mid: np.ndarray, k: int, minor_ball, *, prec: int = 128,
                                  max_prec: int = 1024) -> RankLowerBound:
    """rank >= k for a matrix known by its float64 midpoint ``mid`` and a
    callback ``minor_ball(rows, cols) -> arb_mat`` that encloses any k x k
    submatrix of the TRUE matrix.  The minor is chosen in float64 exactly as
    in :func:`certify_rank_lower_bound`; only that minor is ever computed in
    balls (e.g. 757 of the 9216 columns of a ViT-scale Z)."""
    t0 = time.perf_counter()
    mid = np.asarray(mid, dtype=np.float64)
    m, n = mid.shape
    k = int(k)
    if k > min(m, n):
        return RankLowerBound(k, (), (), Decision.FALSE, prec, f"k={k} exceeds min(m, n)={min(m, n)}",
                              float("inf"), time.perf_counter() - t0, k)
    if k == 0:
        return RankLowerBound(0, (), (), Decision.TRUE, prec, "rank >= 0 holds trivially", 0.0,
                              time.perf_counter() - t0, k)
    row_order = _pivot_order(mid.T) if k < m else None
    rows, cols = _select_minor(mid, k, row_order)
    Mball = minor_ball(rows, cols)
    decision, resid, bits, how = _certify_minor(arb_mat_mid(Mball), Mball, False, prec, max_prec)
    return RankLowerBound(k, tuple(int(i) for i in rows), tuple(int(j) for j in cols), decision, bits,
                          f"arb: ||I - R A_minor||_inf < 1 with {how} (minor computed in balls)", resid,
                          time.perf_counter() - t0, k)


def certify_full_row_rank(A, **kw) -> RankLowerBound:
    """rank(A) >= number of rows (so = number of rows); FALSE if rows > cols."""
    mid, _ = _split(A)
    return certify_rank_lower_bound(A, k=mid.shape[0], **kw)


@dataclass(frozen=True)
class RankUpperBound:
    """rank(A) <= k_upper, certified iff ``decision is Decision.TRUE`` by the
    exact null vectors.  FALSE means the offered certificate was rejected
    (``reason`` says why), not that the rank is larger."""

    k_upper: int
    null_vectors: tuple[tuple[fmpq, ...], ...]
    decision: Decision
    method: str
    reason: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "k_upper": self.k_upper,
            "null_vectors": [[str(x) for x in v] for v in self.null_vectors],
            "decision": self.decision.value,
            "method": self.method,
            "reason": self.reason,
            "seconds": self.seconds,
        }


def _exact_input(A):
    if isinstance(A, arb_mat):
        raise InvalidInstance("rank upper bounds need an exact matrix: every ball of positive "
                              "radius holds full-rank matrices")
    return to_fmpq_mat(A)


def certify_rank_upper_bound(A, null_vectors: Sequence[Sequence]) -> RankUpperBound:
    """Check exactly that ``null_vectors`` are independent and ``A v = 0``;
    then rank(A) <= min(m, n - #vectors).  Entries may be floats, ints,
    Fractions, fmpq, sympy Rationals or strings like "-3/4"."""
    t0 = time.perf_counter()
    Q = _exact_input(A)
    m, n = Q.nrows(), Q.ncols()
    vecs = [tuple(to_fmpq_vector(v)) for v in null_vectors]
    method = "exact over Q: A v = 0 and the vectors independent (flint fmpq)"
    for v in vecs:
        if len(v) != n:
            raise InvalidInstance(f"null vector of length {len(v)} for a matrix with {n} columns")

    def reject(reason: str) -> RankUpperBound:
        return RankUpperBound(min(m, n), tuple(vecs), Decision.FALSE, method, reason, time.perf_counter() - t0)

    for i, v in enumerate(vecs):
        if not exact_matvec_is_zero(Q, v):
            return reject(f"vector {i} is not in the null space: A v != 0")
    if vecs and exact_rank([list(v) for v in vecs]) != len(vecs):
        return reject("the vectors are linearly dependent")
    return RankUpperBound(min(m, n - len(vecs)), tuple(vecs), Decision.TRUE, method, "",
                          time.perf_counter() - t0)


def certify_rank_upper_bound_exact(A) -> RankUpperBound:
    """Compute an exact null-space basis and certify rank(A) <= n - nullity
    (= the exact rank).  For small or moderate matrices only."""
    Q = _exact_input(A)
    basis = exact_nullspace(Q)
    res = certify_rank_upper_bound(Q, basis)
    return RankUpperBound(res.k_upper, res.null_vectors, res.decision,
                          "exact null space over Q (flint fmpz_mat.nullspace), re-checked", res.reason,
                          res.seconds)


def _norm2_upper_by_powers(R: arb_mat, squarings: int) -> arb:
    """``||R||_2 <= ||G^(2^j)||_F^(1/2^(j+1))`` with ``G = R^T R`` (since
    ``||R||_2^2 = ||G||_2`` and ``||G||_2^p = ||G^p||_2 <= ||G^p||_F``).
    Tight to a factor ``rank^(1/2^(j+1))``; rigorous (all products in arb)."""
    G = matmul(R.transpose(), R)
    for _ in range(squarings):
        G = matmul(G, G)
    f = frobenius_upper(G)
    return arb(float_up(f ** (arb(1) / 2 ** (squarings + 1))))


def sigma_min_lower_bound(A, *, prec: int = 128, squarings: int = 3) -> arb:
    """A rigorous lower bound of sigma_min(A) for A of full row rank (T x m, T <= m).

    With ``R = pinv(mid A)`` (m x T, any matrix works) and ``F = A R - I_T``:
    for a unit x in R^T, ``x^T A R = x^T + x^T F``, so
    ``||x^T A|| ||R||_2 >= ||x^T A R|| >= 1 - ||F||_2``, i.e.

        sigma_T(A) = min_{|x|=1} ||x^T A|| >= (1 - ||A R - I||_2) / ||R||_2.

    ``||F||_2`` is bounded by :func:`spectral_norm_upper`; ``||R||_2`` by the
    Gram-power bound with ``squarings`` squarings (within a factor
    rank^(1/2^(j+1)) of the truth; ~1.03 on a 621 x 1280 Gaussian matrix), or by
    :func:`spectral_norm_upper` when ``squarings=0`` (cheap but up to ~10x
    loose).  Cost: about 5 arb matrix products (~8 s at 621 x 1280, 2 cores).
    Returns an exact arb (radius 0) that is <= sigma_min(X) for every X in
    the ball.  Raises :class:`InsufficientPrecision` if ``1 - ||F||_2`` is not
    certainly positive (A numerically rank deficient or too wide a ball).
    """
    mid, ball = _split(A)
    T, m = mid.shape
    if T > m:
        raise InvalidInstance(f"sigma_min_lower_bound needs T <= m, got {T} x {m}")
    if T == 0:
        raise InvalidInstance("empty matrix has no smallest singular value")
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        Rf = np.linalg.pinv(mid)
        scale = 2.0 ** -int(np.round(np.log2(max(np.linalg.norm(Rf, 2), 1e-300))))
        Ra = to_arb_mat(Rf * scale)  # exact scaling by a power of two
        F = matmul(Aball, Ra) - identity(T) * arb(scale)
        f = spectral_norm_upper(F)  # bounds ||A R_s - s I|| = s ||A R - I||
        gap = arb(scale) - f
        if certainly_positive(gap) is not Decision.TRUE:
            raise InsufficientPrecision(
                f"1 - ||A R - I||_2 not certainly positive (bound {float_up(f) / scale:.3g}); "
                "A may be rank deficient or the ball too wide")
        # Gram powers are far tighter than the norm bound whenever squarings > 0
        r = _norm2_upper_by_powers(Ra, squarings) if squarings > 0 else spectral_norm_upper(Ra)
        lb = gap / r  # sigma >= (s - s||F||)/(s||R||)
        return arb(-float_up(-lb))  # an exact float <= the ball's lower end


def sigma_min_enclosure(A, *, prec: int = 128, squarings: int = 3) -> tuple[arb, float]:
    """(rigorous lower bound, rigorous upper bound as a float) of sigma_min(A).

    The upper bound is ``||x^T A|| / ||x||`` for the float left singular vector
    x of the midpoint (true for any x, so for every matrix in the ball it is
    ``<= ||x^T X|| / ||x||``, bounded above in arb).
    """
    mid, ball = _split(A)
    lo = sigma_min_lower_bound(A, prec=prec, squarings=squarings)
    U, _, _ = np.linalg.svd(mid, full_matrices=False)
    x = U[:, -1]
    with workprec(prec):
        Aball = ball if ball is not None else to_arb_mat(mid)
        y = matmul(to_arb_mat(x[None, :]), Aball)
        num = frobenius_upper(y)
        den2 = arb(0)
        for v in x.tolist():
            den2 += arb(v) * arb(v)
        hi = num / den2.sqrt()
    return lo, float_up(hi)
