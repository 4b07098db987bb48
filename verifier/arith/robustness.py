"""How robustly a rank-type property holds: the smallest relative singular
value of the worst matrix examined, certified.

An independence property ("these k vectors are linearly independent", "this
context has rank n") either holds or not for the exact rationals; for data
known only to a precision (:mod:`verifier.data.precision`) the question is
by how much it holds.  Its robustness is

    rho(A) = sigma_min(U) / sigma_max(U),   U = A with each row scaled to unit length

(independence of a set of vectors does not depend on their lengths, and a
relative perturbation of u per entry moves a unit row by at most u, so U by
at most sqrt(k) u in spectral norm).  :func:`relative_sigma_bounds` encloses
rho(A) rigorously: U is formed in Arb balls, sigma_min(U) is bounded below by
:func:`~verifier.arith.singular_values.sigma_min_lower_bound` and above by a
test vector (:func:`~verifier.arith.singular_values.sigma_min_upper_bound`),
sigma_max(U) is bounded below by a test vector (and by 1, a unit row) and
above by the Gram-power bound
(:func:`~verifier.arith.singular_values.spectral_norm_lower_bound`,
:func:`~verifier.arith.singular_values.spectral_norm_upper_bound`).  Against a tolerance ``tau`` the outcome is three-valued
(:class:`Robustness`): TRUE when ``lower > tau`` (holds with a margin above
the tolerance), FALSE when ``upper <= tau`` (a matrix within ``tau`` relative
spectral distance is singular: Eckart-Young), UNDECIDED between.

Which matrix is the worst is chosen by a float64 screen (batched SVD) of
every matrix examined -- all k-subsets when they are few enough, else random
ones, or every distinct context -- and only the worst is certified: the
screen's float error (about k u) matters only for matrices whose rho is
within that of the worst, which are then equally close to the tolerance.

>>> import numpy as np
>>> V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1e-17]])
>>> r = subset_robustness(V, 2, tolerance=0.0)
>>> r.index, r.decision.value, r.lower <= 0.41421356237309503 <= r.upper  # rho = tan(pi/8)
((0, 2), 'true', True)
>>> r = subset_robustness(V, 3, tolerance=3 * 2.0**-52, what="queries")
>>> r.decision.value, r.what, r.upper <= r.tolerance
('false', 'queries [0, 1, 2]', True)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import arb_mat_mid, to_arb_mat
from verifier.arith.compare import Decision, Enclosure, LowerBound, UpperBound, certainly_less, lower, upper, workprec
from verifier.arith.independence import combination_blocks
from verifier.arith.singular_values import (
    sigma_min_lower_bound,
    sigma_min_upper_bound,
    spectral_norm_lower_bound,
    spectral_norm_upper_bound,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["Robustness", "relative_sigma_bounds", "relative_sigma_float", "subset_robustness",
           "stack_robustness", "SCREEN_BUDGET"]

#: float64 work of the screen (sum of k^2 m over the matrices screened); the
#: paper's ViT setting (k = 197, m = 768) screens about 30 subsets within it.
SCREEN_BUDGET = 1e9
_CHUNK = 2_000_000  # entries per batched SVD


@dataclass(frozen=True)
class Robustness:
    """The worst matrix examined and certified bounds on its rho.

    ``lower <= rho <= upper`` (rigorous, for the exact rationals of the
    matrix); ``float_estimate``: the float64 screen's value; ``tolerance``:
    the data's precision (0 under the exact reading); ``screened`` of
    ``population`` matrices were examined (``population`` None when not
    counted).  ``decision``: TRUE lower > tolerance, FALSE upper <= tolerance.
    """

    what: str
    index: tuple
    lower: float
    upper: float
    float_estimate: float
    tolerance: float
    screened: int
    population: int | None
    decision: Decision

    def to_dict(self) -> dict:
        return {"worst": self.what, "index": list(self.index), "relative_sigma_min_lower": self.lower,
                "relative_sigma_min_upper": self.upper, "float64_estimate": self.float_estimate,
                "tolerance": self.tolerance, "screened": self.screened, "population": self.population,
                "decision": self.decision.value}


def _unit_rows_ball(A: np.ndarray) -> arb_mat:
    """A with each row divided by its Euclidean norm, in Arb balls (the
    exact normalised matrix lies in the ball)."""
    M = to_arb_mat(A)
    k, m = M.nrows(), M.ncols()
    out = arb_mat(k, m)
    for i in range(k):
        s = arb(0)
        for j in range(m):
            s += M[i, j] * M[i, j]
        r = s.sqrt()
        for j in range(m):
            out[i, j] = M[i, j] / r
    return out


def relative_sigma_bounds(A, *, prec: int = 128) -> tuple[float, float]:
    """Rigorous ``(lo, hi)`` with ``lo <= rho(A) <= hi`` for a matrix A
    (k x m; float64, or an ``arb_mat`` whose balls contain the exact
    entries): rho = sigma_k / sigma_1 of A with unit rows (0 when k > m or
    a row is zero).  ``lo`` is 0 when the ball bound cannot separate
    sigma_min from 0 (A numerically singular).  Both ends are one-sided
    bounds in the right direction: ``lo`` from sigma_min's lower and
    sigma_max's upper bound, ``hi`` from sigma_min's upper and sigma_max's
    lower bound."""
    mid = arb_mat_mid(A) if isinstance(A, arb_mat) else np.asarray(A, dtype=np.float64)
    k, m = mid.shape
    if k == 0:
        raise InvalidInstance("robustness of an empty set of vectors")
    if k > m or not np.all(np.any(mid != 0, axis=1)):
        return 0.0, 0.0
    with workprec(prec):
        U = _unit_rows_ball(A)
        smax_lo = max(1.0, lower(spectral_norm_lower_bound(U, prec=prec)))  # a unit row: sigma_max >= 1
        hi = upper(arb(upper(sigma_min_upper_bound(U, prec=prec))) / arb(smax_lo))
        try:
            smin_lo = lower(sigma_min_lower_bound(U, prec=prec))
        except InsufficientPrecision:
            return 0.0, min(hi, 1.0)
        smax_hi = upper(spectral_norm_upper_bound(U, prec=prec))
        lo = max(0.0, lower(arb(smin_lo) / arb(smax_hi)))
    return float(lo), float(min(hi, 1.0))


def relative_sigma_float(stack: np.ndarray) -> np.ndarray:
    """float64 rho of each matrix of a (N, k, m) stack (a screen, not a bound)."""
    stack = np.asarray(stack, dtype=np.float64)
    N, k, m = stack.shape
    if k > m:
        return np.zeros(N)
    norms = np.linalg.norm(stack, axis=2, keepdims=True)
    zero = np.any(norms[..., 0] == 0, axis=1)
    U = stack / np.where(norms == 0, 1.0, norms)
    s = np.linalg.svd(U, compute_uv=False)
    rho = s[:, -1] / np.maximum(s[:, 0], np.finfo(float).tiny)
    rho[zero] = 0.0
    return rho


def _decide(lo: float, hi: float, tolerance: float) -> Decision:
    """Is rho > tolerance?  TRUE from the lower end, FALSE from the upper."""
    return certainly_less(tolerance, Enclosure(LowerBound(arb(lo)), UpperBound(arb(hi))))


def _certify(A, index, what, estimate, tolerance, screened, population, prec) -> Robustness:
    """Certified bounds on the worst matrix ``A`` (float64 or arb_mat)."""
    lo, hi = relative_sigma_bounds(A, prec=prec)
    return Robustness(what, tuple(int(i) for i in index), lo, hi, float(estimate), float(tolerance),
                      int(screened), population, _decide(lo, hi, tolerance))


def _subset_chunks(m: int, k: int, *, exhaustive_limit: int, samples: int, seed: int, chunk: int):
    """Index blocks (B, k): every k-subset when C(m, k) <= exhaustive_limit,
    else ``samples`` random k-subsets."""
    if math.comb(m, k) <= exhaustive_limit:
        yield from combination_blocks(m, k, chunk)
        return
    rng = np.random.default_rng([int(seed), 0x6F6275])  # its own stream ("rob")
    left = samples
    while left > 0:
        b = min(left, chunk)
        yield np.sort(rng.random((b, m)).argpartition(k - 1, axis=1)[:, :k], axis=1)
        left -= b


def subset_robustness(V, k: int, *, tolerance: float, exhaustive_limit: int = 20000, samples: int = 5000,
                      seed: int = 0, prec: int = 128, budget: float = SCREEN_BUDGET,
                      what: str = "vectors", rows_ball=None) -> Robustness:
    """Robustness of "every k-subset of the rows of V is independent": the
    worst k-subset screened (all of them when C(m, k) <= exhaustive_limit,
    else random ones, within ``budget``), certified.  V is float64; when
    its rows are roundings of exact values, ``rows_ball(idx)`` returns the
    ``arb_mat`` of the exact rows to certify instead."""
    V = np.asarray(V, dtype=np.float64)
    m, d = V.shape
    k = int(k)
    if not 1 <= k <= m:
        raise InvalidInstance(f"subset size k = {k} must be in [1, {m}]")
    per = float(k) * k * d
    cap = max(1, int(budget // max(per, 1.0)))
    chunk = max(1, min(_CHUNK // max(k * d, 1), cap))
    population = math.comb(m, k) if math.comb(m, k) <= exhaustive_limit else None
    if population is None and int(samples) < 1:
        raise InvalidInstance(f"samples = {samples}: C({m}, {k}) > exhaustive_limit = {exhaustive_limit} subsets "
                              "are sampled, and at least one sample is needed")
    best, best_idx, screened = np.inf, None, 0
    for block in _subset_chunks(m, k, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed,
                                chunk=chunk):
        block = block[: cap - screened]
        rho = relative_sigma_float(V[block])
        j = int(np.argmin(rho))
        if rho[j] < best:
            best, best_idx = float(rho[j]), block[j]
        screened += len(block)
        if screened >= cap:
            break
    idx = tuple(int(i) for i in best_idx)
    A = rows_ball(list(idx)) if rows_ball is not None else V[list(idx)]
    return _certify(A, idx, f"{what} {list(idx)}", best, tolerance, screened, population, prec)


def stack_robustness(stack, *, tolerance: float, prec: int = 128, labels=None, what: str = "matrix") -> Robustness:
    """Robustness of "every matrix of the (N, k, m) stack has full row rank"
    (e.g. Assumption 2 over the distinct contexts): the worst one screened,
    certified.  ``labels[i]`` names matrix i (default its index)."""
    stack = np.asarray(stack, dtype=np.float64)
    N, k, m = stack.shape
    rho = np.concatenate([relative_sigma_float(stack[i:i + max(1, _CHUNK // max(k * m, 1))])
                          for i in range(0, N, max(1, _CHUNK // max(k * m, 1)))])
    j = int(np.argmin(rho))
    label = labels[j] if labels is not None else j
    return _certify(stack[j], (label,), f"{what} {label}", rho[j], tolerance, N, N, prec)
