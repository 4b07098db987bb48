"""Certified bounds on the rank of a matrix, and on its smallest singular value.

What counts as a certificate here (``Decision.TRUE``):

* rank(A) >= k: a k x k submatrix ``A_k`` (rows ``I``, columns ``J``) and a
  matrix ``R`` with ``||I_k - R A_k||_inf < 1``, bounded above either in ball
  arithmetic (``method="arb"``) or by float64 products with a priori error
  bounds valid for any summation order (``method="float"``,
  :func:`verifier.arith.float_certificates.inverse_residual_bound`, Rump's
  verification method: one inverse and one product of the minor).  Then ``R A_k`` is invertible (its distance to ``I_k`` is below
  1, so the Neumann series converges), hence ``A_k`` is invertible and
  rank(A) >= k.  ``R`` is any matrix at all -- a float64 inverse of the
  midpoint -- so its own errors cannot make the test lie.  When ``A`` is an
  ``arb_mat`` the bound holds for every matrix in the ball, so the claim is
  about the true matrix that the ball encloses.

Rank upper bounds (exact null vectors) are in :mod:`verifier.arith.null_vectors`,
bounds on the smallest singular value in :mod:`verifier.arith.singular_values`.

The test avoids the Gram matrix ``A A^T`` (condition number squared) and
``arb_mat.det`` (about 6 s at 621 x 621): one matrix product does the work.
``method="auto"`` (default): arb for minors up to :data:`FLOAT_FROM` (small
cases, where the precision ladder is cheap), the float path above, and arb
again when the float path cannot decide a minor up to :data:`REFINE_LIMIT`
-- or fails at any size: a float step that raises (:data:`FLOAT_FAILURES`:
a range error in the minor's float enclosure, an overflow, LinAlgError) is
a failure of that path, and arb takes over.  The result's ``method`` names
the path that decided.

Floats (``numerical_rank``, the pivoted QR that chooses the minor) only make
the choice; they are never evidence.

>>> import numpy as np
>>> A = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
>>> lb = certify_rank_lower_bound(A)
>>> lb.k, lb.decision.value
(2, 'true')
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from flint import arb, arb_mat

from verifier.arith.backend import get_backend
from verifier.arith.balls import (
    arb_mat_mid,
    as_float_matrix,
    float_up,
    identity,
    inf_norm_upper,
    matmul,
    to_arb_mat,
)
from verifier.arith.compare import Decision, UpperBound, certainly_less, upper, with_precision_ladder
from verifier.arith.float_certificates import METHOD as FLOAT_METHOD
from verifier.arith.float_certificates import FloatBall, float_ball_of, inverse_residual_bound_explained
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = [
    "numerical_rank",
    "RankLowerBound",
    "certify_rank_lower_bound",
    "certify_rank_lower_bound_lazy",
    "certify_full_row_rank",
]

#: Largest minor for which an UNDECIDED float preconditioner is retried with a
#: multiprecision approximate inverse (arb ``solve(..., algorithm="approx")``
#: costs ~6 s at 621 x 621 and 256 bits).
REFINE_LIMIT = 300

#: ``method="auto"`` certifies minors larger than this with the float path.
FLOAT_FROM = 64
#: what a float step may raise (FloatRangeError, overflow, a non-finite division, LinAlgError): the float
#: path has failed and ``auto`` falls back to arb, as for a failure the bound reports itself
FLOAT_FAILURES = (ArithmeticError, np.linalg.LinAlgError)
METHODS = ("auto", "arb", "float")


def _split(A) -> tuple[np.ndarray, arb_mat | None]:
    """(float midpoint array, ball matrix or None for exact float input)."""
    if isinstance(A, FloatBall):
        mid = np.asarray(A.mid if not hasattr(A.mid, "numpy") else A.mid.cpu().numpy())
        return mid, (A if A.rad is not None else None)
    if isinstance(A, arb_mat):
        mid = arb_mat_mid(A)
        if not np.all(np.isfinite(mid)):
            # a computed ball that lost every digit (low --prec): not bad input, the arithmetic cannot decide
            raise InsufficientPrecision("ball matrix has NaN or infinite midpoints: the ball arithmetic lost all "
                                        "precision; raise --prec")
        return mid, A
    a = as_float_matrix(A)
    return a, None


def _singular_values(mid: np.ndarray) -> np.ndarray:
    if mid.size == 0:
        return np.zeros(0)
    try:
        return np.linalg.svd(mid, compute_uv=False)
    except np.linalg.LinAlgError:  # gesdd did not converge: the slower, sturdier gesvd (floats only choose)
        return scipy.linalg.svd(mid, compute_uv=False, lapack_driver="gesvd")


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


def certified_rank(k: int, decision: Decision) -> int:
    """k when the minor was certified, else 0 (a plain function for mutation testing)."""
    return k if decision is Decision.TRUE else 0


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
        return certified_rank(self.k, self.decision)

    @property
    def certified_by(self) -> str:
        """The path that decided, in an evidence's words: the float64
        verification (53 bits) or arb balls (after a float failure too)."""
        return "float64 verification (a priori bounds)" if self.method.startswith(FLOAT_METHOD) else "arb balls"

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
    """Column order of a column-pivoted QR of ``M`` (largest first); if LAPACK
    fails (LinAlgError, a non-finite entry), the columns by decreasing norm:
    floats only choose the minor, any choice is sound."""
    try:
        _, piv = scipy.linalg.qr(M, mode="r", pivoting=True)
    except (np.linalg.LinAlgError, ValueError):
        with np.errstate(all="ignore"):
            norms = np.nan_to_num(np.linalg.norm(np.nan_to_num(M), axis=0), nan=0.0, posinf=np.inf)
        return np.argsort(-norms, kind="stable").astype(np.intp)
    return np.asarray(piv, dtype=np.intp)


def _select_minor(mid: np.ndarray, k: int, row_order: np.ndarray | None):
    m, n = mid.shape
    rows = np.arange(m) if k == m else np.sort(row_order[:k])
    sub = mid[rows]
    cols = np.arange(n) if k == n else np.sort(_pivot_order(sub)[:k])
    return rows, cols


def _ball_minor(mid: np.ndarray, ball, rows, cols) -> arb_mat:
    """The minor as an arb_mat enclosing the true minor (exact for float input)."""
    if ball is None:
        return to_arb_mat(mid[np.ix_(rows, cols)])  # exact
    if isinstance(ball, FloatBall):
        fb = float_ball_of(ball, "numpy")
        sub_m, sub_r = fb.mid[np.ix_(rows, cols)], fb.rad[np.ix_(rows, cols)]
        return arb_mat([[arb(float(x), float(r)) for x, r in zip(xr, rr)] for xr, rr in zip(sub_m, sub_r)])
    m, n = mid.shape
    obj = np.empty(m * n, dtype=object)
    obj[:] = ball.entries()
    sub = obj.reshape(m, n)[np.ix_(rows, cols)]
    return arb_mat(len(rows), len(cols), sub.ravel().tolist())


def _float_minor(mid: np.ndarray, ball, rows, cols):
    """The minor as a float array (exact input) or a FloatBall enclosing it."""
    if ball is None:
        return mid[np.ix_(rows, cols)]
    if isinstance(ball, FloatBall):
        fb = float_ball_of(ball, "numpy")
        return FloatBall(fb.mid[np.ix_(rows, cols)], None if fb.rad is None else fb.rad[np.ix_(rows, cols)])
    return float_ball_of(_ball_minor(mid, ball, rows, cols))


def _float_inverse(M: np.ndarray) -> tuple[np.ndarray | None, str]:
    """(a float64 inverse of ``M``, "") or (None, why it failed: LinAlgError,
    a non-finite entry)."""
    try:
        R = np.linalg.inv(M)
    except np.linalg.LinAlgError as exc:
        return None, f"float64 inverse failed ({exc}); "
    if not np.all(np.isfinite(R)):
        return None, "float64 inverse not finite; "
    return R, ""


def _certify_minor(Mmid: np.ndarray, Mball: arb_mat, exact_input: bool, prec: int, max_prec: int):
    """Preconditioned nonsingularity test in arb; returns (decision, residual, bits, how)."""
    k = Mmid.shape[0]
    R0, why = _float_inverse(Mmid)
    I = identity(k)
    Mmid_ball = Mball if exact_input else Mball.mid()
    # A float failure is no verdict: the ladder starts with the multiprecision preconditioner.
    state = {"first": R0 is not None, "how": "R ~ inv(A_minor) in float64", "why": why}

    def attempt(bits: int):
        if state["first"]:
            R = to_arb_mat(R0)
            state["first"] = False
        else:  # a better preconditioner at this precision (no error bounds needed)
            state["how"] = f"{state['why']}R ~ inv(A_minor) by a {bits}-bit approximate solve"
            R = Mmid_ball.solve(I, algorithm="approx").mid()  # ZeroDivisionError: the ladder climbs
        E = I - matmul(R, Mball)
        nrm = inf_norm_upper(E)
        # ||.|| >= 1 does not make the minor singular: the test just failed.
        ok = certainly_less(nrm, 1) is Decision.TRUE
        return (Decision.TRUE if ok else Decision.UNDECIDED), nrm

    top = max_prec if k <= REFINE_LIMIT else prec
    decision, nrm, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, top))
    resid = float_up(nrm) if nrm is not None else float("inf")
    return decision, resid, bits, state["how"]


def _decide_minor(k: int, float_minor, arb_minor, exact_input: bool, *, method: str, prec: int,
                  max_prec: int, backend=None):
    """Certify a k x k minor nonsingular by the path ``method`` picks (see the
    module docstring).  ``float_minor()``/``arb_minor()`` build the minor on
    demand; ``float_minor`` may be a tuple of such builders, enclosures of
    the same minor from the cheapest to the tightest, tried in that order
    (any one certifying proves it).  Returns (decision, residual bound,
    bits, method text)."""
    if method not in METHODS:
        raise InvalidInstance(f"unknown certificate method {method!r}; choose from {', '.join(METHODS)}")
    note = ""
    if method == "float" or (method == "auto" and k > FLOAT_FROM):
        name = get_backend(backend).name
        tiers = tuple(float_minor) if isinstance(float_minor, (tuple, list)) else (float_minor,)
        if not tiers:
            raise InvalidInstance("no float enclosure of the minor given (an empty tuple)")
        for i, enclose in enumerate(tiers):  # cheaper enclosures first, the tighter ones where they fail
            try:  # the minor's enclosure is built here too: a float step that raises is a failure, never the end
                bound, why = inverse_residual_bound_explained(enclose(), backend=backend)
            except FLOAT_FAILURES as exc:
                bound, why = UpperBound(arb(float("inf"))), f"{type(exc).__name__}: {exc}"
            resid = upper(bound)
            text = f"{FLOAT_METHOD} [{name}]: ||I - R A_minor||_inf < 1, R ~ inv(mid A_minor)" + (
                f" (the minor's enclosure {i + 1} of {len(tiers)}: the looser ones undecided)" if i else "")
            if certainly_less(bound, 1) is Decision.TRUE:
                return Decision.TRUE, resid, 53, text
        failed = f"float path failed ({why})" if why else f"float path undecided (bound {resid:.3g})"
        # a weak bound above REFINE_LIMIT stays undecided (arb is slow there); a failure climbs
        if method == "float" or (k > REFINE_LIMIT and not why):
            return Decision.UNDECIDED, resid, 53, f"{text}: not decided ({failed})"
        note = f"{failed}; then "
    Mball = arb_minor()
    decision, resid, bits, how = _certify_minor(arb_mat_mid(Mball), Mball, exact_input, prec, max_prec)
    return decision, resid, bits, f"{note}arb: ||I - R A_minor||_inf < 1 with {how}"


def certify_rank_lower_bound(A, k: int | None = None, *, prec: int = 128, max_prec: int = 1024,
                             method: str = "auto", backend=None) -> RankLowerBound:
    """Certify rank(A) >= k by a nonsingular k x k minor.

    ``A``: float64 array (entries taken as exact), ``arb_mat`` or
    :class:`~verifier.arith.float_certificates.FloatBall` (a ball enclosure of
    the true matrix).  The minor is chosen in float64: rows by pivoted QR of
    A^T, then columns by pivoted QR of those rows.  The minor is certified by
    ``||I - R A_minor||_inf < 1`` (see the module docstring for ``method``);
    in arb with ``with_precision_ladder``, past the first precision with a
    multiprecision preconditioner for minors up to ``REFINE_LIMIT``.

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
    row_order = _pivot_order(mid.T) if candidates[-1] < m else None  # the smallest k tried (was a TypeError)
    first: RankLowerBound | None = None
    for kk in candidates:
        if kk == 0:
            break
        rows, cols = _select_minor(mid, kk, row_order)
        decision, resid, bits, how = _decide_minor(
            kk, lambda: _float_minor(mid, ball, rows, cols), lambda: _ball_minor(mid, ball, rows, cols),
            ball is None, method=method, prec=prec, max_prec=max_prec, backend=backend)
        res = RankLowerBound(kk, tuple(int(i) for i in rows), tuple(int(j) for j in cols), decision, bits,
                             how, resid, time.perf_counter() - t0, requested)
        if decision is Decision.TRUE:
            return res
        if first is None:
            first = res
    return RankLowerBound(first.k, first.rows, first.cols, Decision.UNDECIDED, first.prec_bits,
                          first.method + "; not certified: raise max_prec or supply a smaller k",
                          first.residual_norm_upper, time.perf_counter() - t0, requested)


def certify_rank_lower_bound_lazy(mid: np.ndarray, k: int, minor_ball, *, prec: int = 128,
                                  max_prec: int = 1024, method: str = "auto", backend=None,
                                  minor_float=None, cols=None) -> RankLowerBound:
    """rank >= k for a matrix known by its float64 midpoint ``mid`` and
    callbacks that enclose any k x k submatrix of the TRUE matrix:
    ``minor_ball(rows, cols) -> arb_mat`` and, for the float path,
    ``minor_float(rows, cols) -> FloatBall`` (default: ``minor_ball``
    converted; a tuple of them: enclosures from the cheapest to the
    tightest, tried in that order).  The minor is chosen in float64 as in
    :func:`certify_rank_lower_bound`, or its columns are given (``cols``,
    e.g. from the structure of a construction); only that minor is ever
    enclosed (e.g. 757 of the 9216 columns of a ViT-scale Z)."""
    t0 = time.perf_counter()
    m, n = mid.shape
    k = int(k)
    if k > min(m, n):
        return RankLowerBound(k, (), (), Decision.FALSE, prec, f"k={k} exceeds min(m, n)={min(m, n)}",
                              float("inf"), time.perf_counter() - t0, k)
    if k == 0:
        return RankLowerBound(0, (), (), Decision.TRUE, prec, "rank >= 0 holds trivially", 0.0,
                              time.perf_counter() - t0, k)
    if cols is not None:
        if len(cols) != k or k != m:
            raise InvalidInstance(f"given columns need k = rows = len(cols), got k={k}, {m} rows, {len(cols)} cols")
        rows, cols = np.arange(m), np.asarray(cols, dtype=np.intp)
    else:
        mid = np.asarray(mid, dtype=np.float64)
        row_order = _pivot_order(mid.T) if k < m else None
        rows, cols = _select_minor(mid, k, row_order)
    builders = ((lambda r, c: float_ball_of(minor_ball(r, c))),) if minor_float is None else \
        tuple(minor_float) if isinstance(minor_float, (tuple, list)) else (minor_float,)
    get_float = tuple((lambda f=f: f(rows, cols)) for f in builders)  # the cheapest enclosure first
    decision, resid, bits, how = _decide_minor(k, get_float, lambda: minor_ball(rows, cols), False,
                                               method=method, prec=prec, max_prec=max_prec, backend=backend)
    return RankLowerBound(k, tuple(int(i) for i in rows), tuple(int(j) for j in cols), decision, bits,
                          f"{how} (only the minor enclosed)", resid, time.perf_counter() - t0, k)


def certify_full_row_rank(A, **kw) -> RankLowerBound:
    """rank(A) >= number of rows (so = number of rows); FALSE if rows > cols."""
    mid, _ = _split(A)
    return certify_rank_lower_bound(A, k=mid.shape[0], **kw)
