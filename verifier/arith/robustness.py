"""How robustly a rank-type property holds: the smallest relative singular
value over the matrices examined, certified.

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

Every matrix examined -- all k-subsets when they are few enough, else
random ones, or every distinct context -- is screened in float64
(:mod:`.robustness_screen`): rows scaled by powers of two (no under- or
overflow), an SVD estimate that only orders them, and a lower bound on rho
that is rigorous for any summation order.  A matrix whose bound exceeds the
tolerance is ruled out; every other one is certified in Arb, the smallest
estimates first, at most ``certify_limit`` of them (the first found at or
below the tolerance settles FALSE).  So a TRUE covers every screened matrix
with a rigorous bound, and a float estimate never stands in for a matrix it
did not certify: a wrong estimate can only reorder the work or, past the
limit, leave the verdict UNDECIDED.

>>> import numpy as np
>>> V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1e-17]])
>>> r = subset_robustness(V, 2, tolerance=0.0)
>>> r.index in ((0, 2), (1, 2)), r.decision.value, r.lower <= 0.41421356237309503 <= r.upper  # rho = tan(pi/8)
(True, 'true', True)
>>> r = subset_robustness(V, 3, tolerance=3 * 2.0**-52, what="queries")
>>> r.decision.value, r.what, r.upper <= r.tolerance
('false', 'queries [0, 1, 2]', True)
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, Enclosure, LowerBound, UpperBound, certainly_less, lower, upper, workprec
from verifier.arith.independence import combination_blocks
from verifier.arith.robustness_screen import rho_screen
from verifier.arith.singular_values import (
    sigma_min_lower_bound,
    sigma_min_upper_bound,
    spectral_norm_lower_bound,
    spectral_norm_upper_bound,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

__all__ = ["Robustness", "relative_sigma_bounds", "relative_sigma_float", "subset_robustness",
           "stack_robustness", "SCREEN_BUDGET", "CERTIFY_LIMIT", "ARB_BUDGET"]

#: float64 work of the screen (sum of k^2 m over the matrices screened); the
#: paper's ViT setting (k = 197, m = 768) screens about 30 subsets within it.
SCREEN_BUDGET = 1e9
#: at most this many matrices not ruled out by the float bound are certified
#: in Arb per call (beyond it the verdict cannot be TRUE: ``uncertified``)
CERTIFY_LIMIT = 64
#: largest k^2 m of a (k, m) matrix certified in Arb: the paper's ViT subset
#: (197 x 768, about 3e7) takes about a second at 128 bits, this about 30
#: times its work; above it (e.g. a 7B-class layer's 2048 x 4096 context) no matrix
#: is certified in Arb: the rigorous float bounds stand, ``upper`` is 1
#: (rho <= 1 always) and a matrix they do not rule out is left uncertified
ARB_BUDGET = 1e9
_CHUNK = 2_000_000  # entries per batched SVD


@dataclass(frozen=True)
class Robustness:
    """Certified bounds on the smallest rho over the matrices screened.

    ``lower <= min rho <= upper`` over the ``screened`` matrices (rigorous,
    for their exact rationals): ``lower`` the smallest rigorous lower bound
    (a float bound or Arb), 0 while ``uncertified`` matrices are left;
    ``upper`` the Arb upper bound of ``what`` (the certified matrix with the
    smallest one); ``float_estimate``: the screen's value for it;
    ``tolerance``: the data's precision (0 under the exact reading);
    ``screened`` of ``population`` matrices (``population`` None when
    sampled); ``certified`` in Arb, ``ruled_out`` by the float bound
    (``certified`` 0 and ``upper`` 1, the trivial bound, when the matrices
    exceed :data:`ARB_BUDGET`).
    ``decision``: TRUE lower > tolerance (every screened matrix above it),
    FALSE upper <= tolerance (``what`` at or below it).
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
    certified: int = 1
    ruled_out: int = 0
    uncertified: int = 0

    @property
    def covers_population(self) -> bool:
        """Were all matrices of the population screened (not a sample)?"""
        return self.population is not None and self.screened >= self.population

    def to_dict(self) -> dict:
        return {"worst": self.what, "index": list(self.index), "relative_sigma_min_lower": self.lower,
                "relative_sigma_min_upper": self.upper, "float64_estimate": self.float_estimate,
                "tolerance": self.tolerance, "screened": self.screened, "population": self.population,
                "certified_in_arb": self.certified, "ruled_out_by_float_bound": self.ruled_out,
                "left_uncertified": self.uncertified, "decision": self.decision.value}


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
    if isinstance(A, arb_mat):  # zero rows decided on the balls, never on their float64 midpoints (issue 32)
        k, m = A.nrows(), A.ncols()
        zero = [all(A[i, j].is_zero() for j in range(m)) for i in range(k)]
        maybe = [all(A[i, j].contains(0) for j in range(m)) for i in range(k)]
    else:
        mid = np.asarray(A, dtype=np.float64)
        k, m = mid.shape
        zero = maybe = [not np.any(row != 0) for row in mid]
    if k == 0:
        raise InvalidInstance("robustness of an empty set of vectors")
    if k > m or any(zero):
        return 0.0, 0.0
    if any(maybe):  # a row whose balls all contain 0: rho may be 0, and nothing above 0 is certified
        return 0.0, 1.0
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
    """float64 rho of each matrix of a (N, k, m) stack (a screen, not a
    bound; rows scaled by powers of two first, so tiny or huge entries
    neither under- nor overflow: :func:`~verifier.arith.robustness_screen.rho_screen`)."""
    return rho_screen(stack)[0]


def _decide(lo: float, hi: float, tolerance: float) -> Decision:
    """Is rho > tolerance?  TRUE from the lower end, FALSE from the upper."""
    return certainly_less(tolerance, Enclosure(LowerBound(arb(lo)), UpperBound(arb(hi))))


class _Tally:
    """What the screen found, block by block: the smallest estimate, the
    matrices its rigorous float bound rules out (bound > tolerance) and the
    ``limit`` candidates with the smallest estimates among the others."""

    def __init__(self, tolerance: float, limit: int):
        self.tol, self.limit = float(tolerance), int(limit)
        self.worst: tuple = (math.inf, None, 0.0)  # (estimate, key, rigorous float lower bound)
        self.ruled_out, self.ruled_min, self.candidates, self.pending = 0, math.inf, [], 0

    def add(self, est: np.ndarray, lo: np.ndarray, keys: list) -> None:
        j = int(np.argmin(est))
        if est[j] < self.worst[0]:
            self.worst = (float(est[j]), keys[j], float(lo[j]))
        out = lo > self.tol
        self.ruled_out += int(out.sum())
        if out.any():
            self.ruled_min = min(self.ruled_min, float(np.min(lo[out])))
        left = np.nonzero(~out)[0]
        self.pending += len(left)
        left = left[np.argsort(est[left], kind="stable")[: self.limit]]
        self.candidates = sorted(self.candidates + [(float(est[i]), keys[i]) for i in left],
                                 key=lambda t: t[0])[: self.limit]


def _conclude(tally: _Tally, matrix_of, name_of, screened: int, population, prec: int,
              arb_size: float = 0.0) -> Robustness:
    """Certify in Arb the smallest estimate and every candidate the float
    bound did not rule out (at most ``tally.limit``; the first found at or
    below the tolerance ends it), and combine: ``lower`` is the smallest
    lower bound over all screened matrices (0 while a candidate is left
    uncertified), ``upper`` the smallest certified upper bound.  Matrices
    of ``arb_size`` = k^2 m above :data:`ARB_BUDGET` are not certified in
    Arb: the smallest estimate keeps its float lower bound, ``upper`` is 1
    (rho <= 1 for every matrix) and every candidate stays uncertified."""
    done, pending = [], tally.pending
    if arb_size > ARB_BUDGET:
        est, key, lo = tally.worst
        done.append((1.0, lo, est, key))
    else:
        order = [tally.worst[:2]] + [c for c in tally.candidates if c[1] != tally.worst[1]]
        for est, key in order:  # the smallest estimate and at most ``limit`` candidates
            lo, hi = relative_sigma_bounds(matrix_of(key), prec=prec)
            done.append((hi, lo, est, key))
            pending -= any(key == c[1] for c in tally.candidates)
            if hi <= tally.tol:
                break
    hi, _, est, key = min(done, key=lambda t: t[0])
    lower = 0.0 if pending > 0 else min([tally.ruled_min] + [t[1] for t in done])
    index = key if isinstance(key, tuple) else (key,)
    return Robustness(name_of(key), tuple(int(i) for i in index), float(lower), float(hi), float(est),
                      float(tally.tol), int(screened), population, _decide(lower, hi, tally.tol),
                      certified=0 if arb_size > ARB_BUDGET else len(done), ruled_out=tally.ruled_out,
                      uncertified=max(0, pending))


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
                      what: str = "vectors", rows_ball=None, rad=None,
                      certify_limit: int = CERTIFY_LIMIT) -> Robustness:
    """Robustness of "every k-subset of the rows of V is independent": every
    k-subset when C(m, k) <= exhaustive_limit (screened whatever the
    budget: a verdict for all of them needs all of them), else random ones
    within ``budget``; each screened subset is either ruled out by its
    rigorous float bound or certified in Arb (:func:`_conclude`).  V is
    float64; when its rows are roundings of exact values, ``rad`` bounds
    the rounding entrywise and ``rows_ball(idx)`` returns the ``arb_mat``
    of the exact rows to certify instead."""
    V = np.asarray(V, dtype=np.float64)
    m, d = V.shape
    k = int(k)
    if not 1 <= k <= m:
        raise InvalidInstance(f"subset size k = {k} must be in [1, {m}]")
    per = float(k) * k * d
    population = math.comb(m, k) if math.comb(m, k) <= exhaustive_limit else None
    cap = population if population is not None else max(1, int(budget // max(per, 1.0)))
    chunk = max(1, min(_CHUNK // max(k * d, 1), cap))
    if population is None and int(samples) < 1:
        raise InvalidInstance(f"samples = {samples}: C({m}, {k}) > exhaustive_limit = {exhaustive_limit} subsets "
                              "are sampled, and at least one sample is needed")
    tally, screened = _Tally(tolerance, certify_limit if tolerance > 0 else 1), 0
    for block in _subset_chunks(m, k, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed,
                                chunk=chunk):
        block = block[: cap - screened]
        est, lo = rho_screen(V[block], None if rad is None else rad[block])
        tally.add(est, lo, [tuple(int(i) for i in row) for row in block])
        screened += len(block)
        if screened >= cap:
            break
    matrix_of = (lambda idx: rows_ball(list(idx))) if rows_ball is not None else (lambda idx: V[list(idx)])
    return _conclude(tally, matrix_of, lambda idx: f"{what} {list(idx)}", screened, population, prec,
                     arb_size=float(k) * k * d if k <= d else 0.0)  # k > d: rho = 0, no Arb work


def stack_robustness(stack, *, tolerance: float, prec: int = 128, labels=None, what: str = "matrix",
                     certify_limit: int = CERTIFY_LIMIT, rad=None, matrix_ball=None) -> Robustness:
    """Robustness of "every matrix of the (N, k, m) stack has full row rank"
    (e.g. Assumption 2 over the distinct contexts): each matrix ruled out by
    its rigorous float bound or certified in Arb (:func:`_conclude`).
    ``labels[i]`` names matrix i (default its index).  When the stack's
    entries are roundings of exact values, ``rad`` bounds the rounding
    entrywise and ``matrix_ball(i)`` returns the ``arb_mat`` of matrix i's
    exact values to certify instead (as in :func:`subset_robustness`)."""
    stack = np.asarray(stack, dtype=np.float64)
    N, k, m = stack.shape
    if N == 0:
        raise InvalidInstance("robustness of an empty stack of matrices")
    tally = _Tally(tolerance, certify_limit if tolerance > 0 else 1)
    step = max(1, _CHUNK // max(k * m, 1))
    for i in range(0, N, step):
        est, lo = rho_screen(stack[i:i + step], None if rad is None else rad[i:i + step])
        tally.add(est, lo, list(range(i, min(N, i + step))))
    label = (lambda j: labels[j]) if labels is not None else (lambda j: j)
    matrix_of = matrix_ball if matrix_ball is not None else (lambda j: stack[j])
    rob = _conclude(tally, matrix_of, lambda j: f"{what} {label(j)}", N, N, prec,
                    arb_size=float(k) * k * m if k <= m else 0.0)  # k > m: rho = 0, no Arb work
    return dataclasses.replace(rob, index=(label(rob.index[0]),))
