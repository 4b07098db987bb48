"""Full row rank for EVERY matrix of a box, and exact singular points inside one.

A user's float stands for an interval (:mod:`verifier.data.precision`), so a
k x m matrix of data stands for the box ``[mid - rad, mid + rad]``
(entrywise).  Two certificates decide a rank property there, and neither
reads a tolerance:

* **holds for every point** (:func:`box_full_row_rank`): with X a float
  right inverse of ``mid`` (any float matrix: it only chooses what to
  certify), every ``A`` of the box has full row rank k if every ``A X`` is
  nonsingular; ``A X`` lies in the ball ``fl(mid X) +/- (gamma_m |mid||X| +
  rad |X| + ...)`` (:func:`~verifier.arith.float_bounds.ball_matmul`, valid
  for any summation order), and ``||I - R (A X)||_inf < 1`` for every
  matrix of that ball (:func:`~verifier.arith.float_certificates.inverse_residual_bounds`)
  proves them all nonsingular.  The test is componentwise: a row or a
  column of the box scaled by a power of two scales ``rad`` with it, and the
  matrices are first equilibrated by exact powers of two (columns, rows,
  columns), so a column scaled by 2^100 gives the same float problem.
  An operand outside the float bounds' range falls back to the same test in
  Arb balls (:func:`box_full_row_rank_arb`).
* **fails at a point** (:func:`singular_point`): a nonzero c (chosen from
  an SVD, refined by weighted least squares in Arb) and the exact residual
  ``r = c^T mid``; for each column j the sums ``sum_i c_i D_ij`` over the
  OPEN box of half-gaps cover the open interval ``(L_j, U_j)`` (Oettli and
  Prager's argument, column by column), so ``-r_j`` inside it for every j
  gives an explicit point ``P = mid + D`` of the box with ``c^T P = 0``:
  ``D_ij = (-r_j / U_j) g_ij`` with g the half-gap on the side of c_i's sign
  (or ``/ L_j``).  Every comparison is exact (python-flint ``fmpq``).

A one-sided certificate proves what it bounds: neither a failed
certificate nor a missing witness decides anything.

>>> import numpy as np
>>> M = np.array([[[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]]])
>>> bool(box_full_row_rank(M, np.full(M.shape, 2.0**-24))[0] < 1)
True
>>> S = np.array([[1.0, 2.0], [2.0, 4.0000001]])  # dependent up to 1e-7
>>> up, down = gap_sides(S, np.full((2, 2), -24), np.full((2, 2), -25), np.ones((2, 2), bool))
>>> w = singular_point(S, up, down)
>>> w is not None and w.verified
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.arith.backend import get_backend
from verifier.arith.exact import to_fmpq
from verifier.arith.float_bounds import FloatRangeError, ball_matmul, check_ieee
from verifier.arith.float_certificates import inverse_residual_bounds

__all__ = ["box_full_row_rank", "box_full_row_rank_arb", "equilibrate", "singular_point", "SingularPoint", "gap_sides",
           "METHOD", "METHOD_ARB"]

METHOD = "componentwise box certificate (float64, a priori bounds for any summation order)"
METHOD_ARB = "componentwise box certificate (Arb balls)"
_CHUNK = 4_000_000  # entries per batched block


def _exponent(x: np.ndarray) -> np.ndarray:
    """floor(log2 |x|) + 1 of floats (0 for zeros): frexp's exponent."""
    return np.frexp(x)[1].astype(np.int64)


def equilibrate(mids: np.ndarray, rads: np.ndarray | None):
    """Scale each matrix of the (B, k, m) stack by powers of two, columns,
    then rows, then columns, bringing each one's largest entry into [1/2, 1)
    (exact, but for entries pushed into the subnormal range: their radius
    gets 2^-1074 more, or one ulp where it is larger; the exponents are
    chosen first and applied once, so an entry rounds at most once, and only
    to a subnormal result).  Returns ``(mid, rad, row_exp, col_exp)`` with
    ``mid = 2^row_exp * mids * 2^col_exp``.  A column of the input already
    scaled by a power of two gives the same result."""
    mid = np.array(mids, dtype=np.float64, copy=True)
    rad = None if rads is None else np.array(rads, dtype=np.float64, copy=True)
    row_exp = np.zeros(mid.shape[:-1], dtype=np.int64)
    col_exp = np.zeros(mid.shape[:-2] + mid.shape[-1:], dtype=np.int64)
    work = mid  # only chooses the exponents: its entries may round in the subnormal range
    for axis in (1, 2, 1):  # 1: column maxima (over rows), 2: row maxima
        top = np.max(np.abs(work), axis=axis, keepdims=True)
        s = np.where(top > 0, -_exponent(top), 0)
        work = np.ldexp(work, s)
        if axis == 1:
            col_exp += s[:, 0, :]
        else:
            row_exp += s[:, :, 0]
    # one scaling of the input: an entry rounds only if its result is subnormal (a column scaled down
    # into the subnormal range, then its row scaled up, would otherwise lose bits that no radius covers)
    e = row_exp[:, :, None] + col_exp[:, None, :]
    mid = np.ldexp(mid, e)
    tiny = np.abs(mid) < 2.0**-1021
    if rad is not None:
        scaled = np.ldexp(rad, e)
        tiny |= (rad != 0) & (scaled < 2.0**-1021)  # a radius rounded (perhaps down) in the subnormal range
        rad = scaled
    if tiny.any():
        rad = np.zeros(mid.shape) if rad is None else rad
        rad = np.where(tiny, np.nextafter(rad, np.inf), rad)  # + 2^-1074, at least (not absorbed by rounding)
    return mid, rad, row_exp, col_exp


def _right_inverses(mid: np.ndarray) -> np.ndarray:
    """Float right inverses (B, m, k) of the (B, k, m) stack (pinv; rows of
    NaN become 0: the certificate then simply fails)."""
    with np.errstate(all="ignore"):
        try:
            X = np.linalg.pinv(mid)
        except np.linalg.LinAlgError:
            X = np.stack([_pinv_or_zero(a) for a in mid])
    return np.where(np.isfinite(X), X, 0.0)


def _pinv_or_zero(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.pinv(a)
    except np.linalg.LinAlgError:
        return np.zeros(a.T.shape)


def box_full_row_rank(mids, rads=None, *, backend=None) -> np.ndarray:
    """For each (k x m) matrix of the stack, a float ``>= max ||I - R A X||_inf``
    over its box (k <= m); an entry below 1 proves that EVERY matrix of that
    box has full row rank k.  ``inf`` where no bound exists (k > m, a float
    range error that the Arb fallback did not settle either).  One-sided:
    an entry >= 1 proves nothing."""
    mids = np.asarray(mids, dtype=np.float64)
    if mids.ndim == 2:
        mids = mids[None]
        rads = None if rads is None else np.asarray(rads)[None]
    B, k, m = mids.shape
    out = np.full(B, np.inf)
    if B == 0 or k > m:
        return out
    if k == 0:
        return np.zeros(B)
    b = get_backend(backend)
    check_ieee(b)
    step = max(1, _CHUNK // max(1, k * m))
    for s in range(0, B, step):
        sl = slice(s, s + step)
        mid, rad, _, _ = equilibrate(mids[sl], None if rads is None else rads[sl])
        X = _right_inverses(mid)
        try:
            C_mid, C_rad = ball_matmul(b, b.asarray(mid), None if rad is None else b.asarray(rad),
                                       b.asarray(X), None)
            out[sl] = inverse_residual_bounds(C_mid, C_rad, backend=b)
        except FloatRangeError:
            out[sl] = [box_full_row_rank_arb(mid[i], None if rad is None else rad[i], X[i])
                       for i in range(mid.shape[0])]
    return out


def box_full_row_rank_arb(mid: np.ndarray, rad: np.ndarray | None, X: np.ndarray | None = None,
                          prec: int = 128) -> float:
    """:func:`box_full_row_rank` for one matrix in Arb balls (no range limit):
    the box as ``arb(mid, rad)`` entries, ``A X`` and ``I - R A X`` in balls,
    and an upper bound of the infinity norm."""
    from flint import arb, arb_mat

    from verifier.arith.balls import float_up, identity
    from verifier.arith.compare import workprec

    k, m = mid.shape
    X = _right_inverses(mid[None])[0] if X is None else X
    with workprec(prec):
        A = arb_mat([[arb(float(mid[i, j]), 0.0 if rad is None else float(rad[i, j])) for j in range(m)]
                     for i in range(k)])
        C = A * arb_mat(X.tolist())
        Cm = np.array([[float(C[i, j].mid()) for j in range(k)] for i in range(k)])
        try:
            R = np.linalg.inv(Cm)
        except np.linalg.LinAlgError:
            return float("inf")
        if not np.all(np.isfinite(R)):
            return float("inf")
        D = identity(k) - arb_mat(R.tolist()) * C
        return max(float_up(sum((abs(D[i, j]) for j in range(k)), arb(0))) for i in range(k))


@dataclass(frozen=True)
class SingularPoint:
    """An explicit point of the box where the rows are dependent: ``c``
    (nonzero exact rationals) with ``c^T P = 0`` for ``P = mid + D``, every
    ``D_ij`` strictly inside its half-gaps.  ``used``: the largest
    ``|r_j| / U_j`` (the fraction of the gaps the point needs, < 1)."""

    c: tuple
    used: float
    verified: bool

    def to_dict(self) -> dict:
        return {"kind": "explicit point of the data's intervals with dependent rows",
                "coefficients": [str(x) for x in self.c], "fraction of the half-gaps used": self.used,
                "claim": "sum_i c_i P_i = 0 at a point P strictly inside every entry's rounding interval "
                         "(Oettli-Prager, column by column, exact rationals)"}


def _fmpq_rows(exact) -> list:
    """The rows as exact rationals (:func:`.exact.to_fmpq`: an fmpq as it is, an integer of any width or a
    Fraction exactly, a float, long doubles included, as the rational it encodes)."""
    return [[to_fmpq(x) for x in row] for row in np.asarray(exact, dtype=object)]


def gap_sides(exact, away, toward, mask):
    """(up, down): the exact half-gaps above and below each entry (lists of
    fmpq rows; 0 where ``mask`` is False) from the exponents of the half-gaps
    away from zero (``2^away``) and toward zero (``2^toward``)."""
    exact_rows = exact if isinstance(exact, list) else _fmpq_rows(exact)
    from flint import fmpq

    k, m = len(exact_rows), len(exact_rows[0])
    up = [[fmpq(0)] * m for _ in range(k)]
    down = [[fmpq(0)] * m for _ in range(k)]
    for i in range(k):
        for j in range(m):
            if not mask[i, j]:
                continue
            ga, gt = fmpq(2) ** int(away[i, j]), fmpq(2) ** int(toward[i, j])
            x = exact_rows[i][j]
            if x > 0:
                up[i][j], down[i][j] = ga, gt
            elif x < 0:
                up[i][j], down[i][j] = gt, ga
            else:
                up[i][j] = down[i][j] = ga
    return up, down


def _point_condition(c, exact_rows, up, down) -> tuple[bool, float]:
    """Is ``-r_j`` strictly inside ``(L_j, U_j)`` for every column j (c exact:
    fmpq, or floats read as the rationals they are)?  And the largest
    fraction of a gap it uses."""
    from flint import fmpq

    k, m = len(exact_rows), len(exact_rows[0])
    cq = [to_fmpq(x) for x in c]
    if all(x == 0 for x in cq):
        return False, float("inf")
    used = 0.0
    for j in range(m):
        r = sum((cq[i] * exact_rows[i][j] for i in range(k)), fmpq(0))
        t = -r
        U = sum(((cq[i] * up[i][j]) if cq[i] > 0 else (-cq[i] * down[i][j]) for i in range(k)), fmpq(0))
        L = -sum(((cq[i] * down[i][j]) if cq[i] > 0 else (-cq[i] * up[i][j]) for i in range(k)), fmpq(0))
        if t == 0:
            continue
        if not (L < t < U):
            return False, float("inf")
        used = max(used, float(t / U) if t > 0 else float(t / L))
    return True, used


def _svd_candidate(mid: np.ndarray) -> np.ndarray | None:
    """The smallest left singular vector of the equilibrated matrix (``eq =
    Dr mid Dc``, so ``v^T eq = 0`` is ``(Dr v)^T mid = 0``)."""
    eq, _, row_exp, _ = equilibrate(mid[None], None)
    try:
        U = np.linalg.svd(eq[0], full_matrices=True)[0]
    except np.linalg.LinAlgError:
        return None
    return np.ldexp(U[:, -1], row_exp[0])


def _weighted_null_vector(rows, c0: np.ndarray, gaps: np.ndarray, prec: int = 320):
    """Exact rational c with c_p = 1 (p: the largest |c0_p|) minimizing
    ``sum_j (c^T M_j / w_j)^2``, ``w_j = sum_i |c0_i| gaps_ij`` (each column's
    residual measured in its own half-gaps, as the witness condition does),
    solved in Arb at ``prec`` bits; its midpoints are the rationals returned
    (only a choice: the exact condition decides)."""
    from flint import arb, arb_mat, fmpq

    from verifier.arith.compare import workprec

    k, m = len(rows), len(rows[0])
    p = int(np.argmax(np.abs(c0)))
    with np.errstate(all="ignore"):
        w = np.abs(c0) @ gaps
        w = w / np.max(w) if w.size and np.max(w) > 0 else w  # relative weights: no overflow at tiny gaps
        scale = 1.0 / w
    if not (np.all(np.isfinite(scale)) and np.all(w > 0)) or k < 2:
        return None
    scale = [float(x) for x in scale]
    others = [i for i in range(k) if i != p]
    with workprec(prec):
        A = arb_mat([[arb(rows[i][j]) * scale[j] for j in range(m)] for i in others])
        b = arb_mat([[arb(rows[p][j]) * scale[j] for j in range(m)]])
        try:
            x = (A * A.transpose()).solve(-(A * b.transpose()))
        except ZeroDivisionError:
            return None
    c = [fmpq(0)] * k
    c[p] = fmpq(c0[p] > 0 and 1 or -1)
    if not all(x[i, 0].is_finite() for i in range(len(others))):
        return None
    for idx, i in enumerate(others):
        man, exp = x[idx, 0].mid().man_exp()
        c[i] = fmpq(int(man)) * (fmpq(2) ** int(exp) if exp >= 0 else fmpq(1, 2 ** int(-exp))) * c[p]
    return c


def singular_point(exact, up, down, *, mid: np.ndarray | None = None) -> SingularPoint | None:
    """An explicit point of the box (each entry x strictly inside ``(x -
    down, x + up)``, the exact half-gaps of :func:`gap_sides`; an entry with
    both 0 is exact) at which the k rows are dependent, or None when none is
    found (which proves nothing).  ``exact``: the stored values (float64 or
    exact rationals); ``mid``: their float64 copy when ``exact`` holds
    rationals.  Candidates: the smallest left singular vector, then two
    rounds of least squares weighted by each column's half-gaps (exact)."""
    rows = _fmpq_rows(exact)
    mid = np.asarray(exact, dtype=np.float64) if mid is None else np.asarray(mid, dtype=np.float64)
    gaps = np.array([[float(max(a, b)) for a, b in zip(ru, rd)] for ru, rd in zip(up, down)])
    c0 = _svd_candidate(mid)
    if c0 is None or not np.all(np.isfinite(c0)) or not np.any(c0):
        return None
    candidates, c = [c0], c0
    for _ in range(2):
        c = _weighted_null_vector(rows, np.asarray([float(x) for x in c]), gaps)
        if c is None:
            break
        candidates.append(c)
    for c in candidates:
        ok, used = _point_condition(c, rows, up, down)
        if ok:
            return SingularPoint(tuple(to_fmpq(x) for x in c), used, True)  # c exact, as the condition read it
    return None
