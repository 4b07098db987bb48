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
* **fails at a point** (:func:`singular_point`): a nonzero c (floats,
  chosen from an SVD, refined by a linear program) and the exact residual
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
    gets 2^-1074 more).  Returns ``(mid, rad, row_exp, col_exp)`` with
    ``mid = 2^row_exp * mids * 2^col_exp``.  A column of the input already
    scaled by a power of two gives the same result."""
    mid = np.array(mids, dtype=np.float64, copy=True)
    rad = None if rads is None else np.array(rads, dtype=np.float64, copy=True)
    row_exp = np.zeros(mid.shape[:-1], dtype=np.int64)
    col_exp = np.zeros(mid.shape[:-2] + mid.shape[-1:], dtype=np.int64)
    for axis in (1, 2, 1):  # 1: column maxima (over rows), 2: row maxima
        top = np.max(np.abs(mid), axis=axis, keepdims=True)
        s = np.where(top > 0, -_exponent(top), 0)
        mid = np.ldexp(mid, s)
        if rad is not None:
            rad = np.ldexp(rad, s)
        if axis == 1:
            col_exp += s[:, 0, :]
        else:
            row_exp += s[:, :, 0]
    tiny = np.abs(mid) < 2.0**-1021
    if tiny.any():
        rad = (np.zeros(mid.shape) if rad is None else rad) + np.where(tiny, 2.0**-1074, 0.0)
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
        D = arb_mat.eye(k) - arb_mat(R.tolist()) * C
        worst = arb(0)
        for i in range(k):
            row = sum((abs(D[i, j]) for j in range(k)), arb(0))
            worst = max(worst, row, key=lambda x: float(x.mid() + x.rad()))
        return float(worst.mid() + worst.rad()) * (1 + 2.0**-50)


@dataclass(frozen=True)
class SingularPoint:
    """An explicit point of the box where the rows are dependent: ``c``
    (nonzero, exact floats) with ``c^T P = 0`` for ``P = mid + D``, every
    ``D_ij`` strictly inside its half-gaps.  ``used``: the largest
    ``|r_j| / U_j`` (the fraction of the gaps the point needs, < 1)."""

    c: tuple
    used: float
    verified: bool

    def to_dict(self) -> dict:
        return {"kind": "explicit point of the data's intervals with dependent rows",
                "coefficients": [float(x) for x in self.c], "fraction of the half-gaps used": self.used,
                "claim": "sum_i c_i P_i = 0 at a point P strictly inside every entry's rounding interval "
                         "(Oettli-Prager, column by column, exact rationals)"}


def _fmpq_rows(exact) -> list:
    from flint import fmpq

    def q(x):
        if hasattr(x, "p") and hasattr(x, "q"):
            return x
        return fmpq(*float(x).as_integer_ratio())

    return [[q(x) for x in row] for row in np.asarray(exact, dtype=object)]


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
    """Is ``-r_j`` strictly inside ``(L_j, U_j)`` for every column j?  And the
    largest fraction of a gap it uses."""
    from flint import fmpq

    k, m = len(exact_rows), len(exact_rows[0])
    cq = [fmpq(*float(x).as_integer_ratio()) for x in c]
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


def _candidates(mid: np.ndarray, gaps: np.ndarray):
    """Float coefficient vectors c to try: the smallest left singular vector
    of the equilibrated matrix (``eq = Dr mid Dc``, so ``v^T eq = 0`` is
    ``(Dr v)^T mid = 0``), then a linear program's refinement of its sign
    pattern."""
    eq, _, row_exp, _ = equilibrate(mid[None], None)
    try:
        U = np.linalg.svd(eq[0], full_matrices=True)[0]
    except np.linalg.LinAlgError:
        return
    c = np.ldexp(U[:, -1], row_exp[0])
    yield c
    yield _lp_refine(mid, gaps, np.sign(c))


def _lp_refine(mid: np.ndarray, gaps: np.ndarray, sign: np.ndarray):
    """c with the sign pattern ``sign`` maximizing the slack t of
    ``|c^T mid_j| <= sum_i |c_i| gaps_ij - t w_j`` (a linear program; floats:
    it only chooses c, the exact test decides)."""
    from scipy.optimize import linprog

    k, m = mid.shape
    sign = np.where(sign == 0, 1.0, sign)
    colscale = np.max(np.abs(mid), axis=0)
    colscale = np.where(colscale > 0, colscale, 1.0)
    M = mid / colscale
    G = gaps / colscale
    w = np.maximum(G.sum(axis=0) / k, 1e-300)
    # variables y_i = sign_i c_i >= 0, t; maximize t
    A_ub, b_ub = [], []
    for j in range(m):
        a = M[:, j] * sign
        A_ub.append(np.concatenate([a - G[:, j], [w[j]]]))
        A_ub.append(np.concatenate([-a - G[:, j], [w[j]]]))
        b_ub += [0.0, 0.0]
    A_eq = [np.concatenate([np.ones(k), [0.0]])]
    try:
        res = linprog(np.concatenate([np.zeros(k), [-1.0]]), A_ub=np.array(A_ub), b_ub=b_ub, A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0, None)] * k + [(None, 1.0)], method="highs")
    except (ValueError, np.linalg.LinAlgError):  # pragma: no cover - HiGHS refuses ill-posed input
        return None
    if res.status != 0 or res.x[-1] <= 0:
        return None
    return res.x[:k] * sign


def singular_point(exact, up, down, *, mid: np.ndarray | None = None) -> SingularPoint | None:
    """An explicit point of the box (each entry x strictly inside ``(x -
    down, x + up)``, the exact half-gaps of :func:`gap_sides`; an entry with
    both 0 is exact) at which the k rows are dependent, or None when none is
    found (which proves nothing).  ``exact``: the stored values (float64 or
    exact rationals); ``mid``: their float64 copy when ``exact`` holds
    rationals."""
    rows = _fmpq_rows(exact)
    mid = np.asarray(exact, dtype=np.float64) if mid is None else np.asarray(mid, dtype=np.float64)
    gaps = np.array([[float(min(a, b)) for a, b in zip(ru, rd)] for ru, rd in zip(up, down)])
    for c in _candidates(mid, gaps):
        if c is None or not np.all(np.isfinite(c)) or not np.any(c):
            continue
        ok, used = _point_condition(c, rows, up, down)
        if ok:
            return SingularPoint(tuple(float(x) for x in c), used, True)
    return None
