"""Assumption 3 (Sec. 4.4): the mean-shifted queries have Kruskal rank >= n.

Statement
---------
With ebar^(t) := e^(t) + (1/n) E^(t)^T 1_n (the query plus the mean of its
context tokens), the set {ebar^(t) : t in [T]} has Kruskal rank (Definition
1) at least n.  A property of the data: no hypothesis (with n > d it
fails).  As for Assumption 1, the Kruskal rank of T vectors is at most T, so
T >= n is needed.

Construction
------------
ebar^(t) is formed EXACTLY over Q (flint ``fmpq``): the 1/n and the sum of
n + 1 floats are in general not float64 numbers, and rounding them would
change the set (a planted equality ebar^(2) = ebar^(1) would disappear).
Scaling by n does not change a Kruskal rank, so u^(t) = n ebar^(t) =
n e^(t) + sum_i E^(t)_i is used.  verifier.arith.kruskal reads float64 only, so
the n-subsets are tested here one by one with the engine's exact rank
(:func:`verifier.arith.exact.exact_rank`): all C(T, n) of them when C(T, n) <=
``exhaustive_limit``, else ``samples`` random ones (the paper's test,
evidence only), after an exact search for equal or parallel pairs.

Checks
------
1. Every n-subset of the ebar^(t) independent, exactly: verified.
2. A dependent subset with an exact null combination sum_i c_i ebar^(i) = 0,
   re-checked over Q: refuted (with the witness); or T < n.
3. User data at its dtype's precision: u^(t) carries its own enclosure over
   every value the data stand for (:func:`mean_shifted_ball`: the sum may
   cancel, so its radius is n rad(e) + sum rad(E), never relative to |u|);
   verified when every n-subset is certified at every point, refuted
   ("fails at the data's precision") at an explicit point of the queries'
   and contexts' intervals where a subset of the u^(t) is dependent.
4. Otherwise inconclusive: the sampled fraction, and the subset count that
   exhaustion would need.

Not established
---------------
For large T only sampled evidence or a witness.  Assumption 3 is used by
Proposition 4 (with Assumption 2, a trivial attention layer makes the
queries satisfy Assumption 1); that implication is checked by
``proposition4``, not here.

References
----------
arXiv:2306.02010v3, Sec. 4.4 (Assumption 3, Proposition 4), Sec. 5.1.

>>> from verifier.data.instances import make_instance, rng_for
>>> check_assumption3(make_instance(H=2, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.backend import get_backend
from verifier.arith.exact import exact_nullspace, exact_rank, to_fmpq_mat
from verifier.arith.float_bounds import add_up, gamma, rowsum_up, up_scale
from verifier.arith.kruskal import KruskalRank
from verifier.data.instances import from_arrays, rng_for
from verifier.statements.evidence import Evidence, Step
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import (
    AT_PRECISION,
    DEPENDENT_SUBSET,
    kruskal_at_least_evidence,
    kruskal_box,
)
from .definition1_kruskal_rank import EXHAUSTIVE_LIMIT, SAMPLES

METHOD = "exact rationals (flint fmpq rank per subset)"


def build_mean_shifted_queries(instance) -> np.ndarray:
    """u^(t) = n ebar^(t) = n e^(t) + sum_i E^(t)_i, exactly: a (T, d) object
    array of fmpq (same Kruskal rank as the ebar^(t)), from the values given
    (``Instance.exact_array``: never a float64 rounding of them)."""
    E = np.asarray(instance.exact_array("contexts"))
    T, n, d = E.shape
    U = to_fmpq_mat(np.asarray(instance.exact_array("queries"))) * fmpq(n)
    for i in range(n):
        U += to_fmpq_mat(np.ascontiguousarray(E[:, i, :]))
    out = np.empty((T, d), dtype=object)
    out[:, :] = U.tolist()
    return out


def mean_shifted_ball(instance) -> tuple[np.ndarray, np.ndarray | None]:
    """``(mid, rad)`` enclosing u^(t) = n e^(t) + sum_i E^(t)_i for EVERY value
    the data stand for: the data's own radii carried through the sum
    (``n rad_e + sum_i rad_E``, not a radius relative to |u|: the sum may
    cancel) plus the float sum's rounding, ``gamma_{n+2} (n |e| + sum |E|)``
    for any summation order."""
    n = instance.n
    e, re = instance.ball("queries")
    E, rE = instance.ball("contexts")
    b = get_backend("numpy")
    terms = np.concatenate([np.asarray(e)[:, None, :] * float(n), np.asarray(E)], axis=1)  # (T, n+1, d)
    mid = terms.sum(axis=1)
    absum = rowsum_up(b, np.abs(np.swapaxes(terms, 1, 2)))
    rad = up_scale(b, absum, gamma(n + 2))
    data = np.zeros(mid.shape) if re is None else up_scale(b, np.asarray(re), Fraction(n), Fraction(0))
    if rE is not None:
        data = add_up(b, data, rowsum_up(b, np.swapaxes(np.asarray(rE), 1, 2)))
    return mid, add_up(b, rad, data)


def mean_shifted_gaps(instance, idx):
    """``(up, down)``: the exact half-gaps of u^(t) = n e^(t) + sum_i E^(t)_i
    for rows ``idx`` (Minkowski sums of the open half-gap intervals, so a
    point of u's intervals is the image of points of e's and E's), or None
    when every entry is exact."""
    n = instance.n
    parts = [(fmpq(n), instance.half_gaps("queries", idx))]
    parts += [(fmpq(1), instance.half_gaps("contexts", (idx, i))) for i in range(n)]
    parts = [(w, g) for w, g in parts if g is not None]
    if not parts:
        return None
    k, d = len(idx), instance.d
    up = [[sum((w * g[0][a][j] for w, g in parts), fmpq(0)) for j in range(d)] for a in range(k)]
    down = [[sum((w * g[1][a][j] for w, g in parts), fmpq(0)) for j in range(d)] for a in range(k)]
    return up, down


def _subset_matrix(U: np.ndarray, idx) -> fmpq_mat:
    rows = U[list(idx)]
    return fmpq_mat(len(idx), U.shape[1], rows.ravel().tolist())


def _parallel_pair(U: np.ndarray):
    """An exactly dependent pair, proposed by floats and decided over Q."""
    F = np.array([[float(x) for x in row] for row in U])
    norms = np.linalg.norm(F, axis=1)
    if U.shape[0] < 2 or U.shape[0] > 5000 or np.any(norms == 0):
        return None
    G = np.abs((F / norms[:, None]) @ (F / norms[:, None]).T)
    np.fill_diagonal(G, 0.0)
    for i, j in zip(*np.nonzero(np.triu(G) > 1 - 1e-9)):
        ns = exact_nullspace(_subset_matrix(U, (i, j)).transpose())
        if ns:
            return (int(i), int(j)), ns[0]
    return None


def exact_kruskal_rank_at_least(U: np.ndarray, k: int, *, exhaustive_limit: int, samples: int,
                                seed: int) -> KruskalRank:
    """Every k-subset of the rows of U (exact rationals) independent?  The
    answer is read with ``.at_least(k)`` as for verifier.arith.kruskal."""
    t0 = time.perf_counter()
    m, d = U.shape
    cap = min(m, d)
    log = [f"upper <= min(m, d) = {cap}"]

    def result(lower, upper, witness=None, coeffs=None, exhausted=True, sampled=0, ok=0, size=None):
        w = None if witness is None else tuple(int(i) for i in witness)
        c = None if coeffs is None else tuple(str(x) for x in coeffs)
        return KruskalRank(lower, upper, w, c, exhausted, sampled, ok, "; ".join(log),
                           time.perf_counter() - t0, size)

    zero = [i for i in range(m) if all(x == 0 for x in U[i])]
    if zero:
        log.append(f"u^({zero[0]}) = 0 => Kruskal rank 0")
        return result(0, 0, (zero[0],), (1,))
    if k > cap:
        return result(min(1, cap), cap)
    pair = _parallel_pair(U) if k >= 2 else None
    if pair is not None:
        log.append(f"witness (parallel pair): {list(pair[0])} dependent => upper <= 1")
        return result(1, 1, pair[0], pair[1])
    total = math.comb(m, k)
    if total <= exhaustive_limit:
        subsets, exhaustive = itertools.combinations(range(m), k), True
    else:
        rng = rng_for(seed, "assumption3")
        subsets = (np.sort(rng.choice(m, size=k, replace=False)) for _ in range(samples))
        exhaustive = False
    checked = 0
    for idx in subsets:
        M = _subset_matrix(U, idx)
        checked += 1
        if exact_rank(M) < k:
            c = exact_nullspace(M.transpose())[0]
            log.append(f"witness ({'exhaustion' if exhaustive else 'random subset'}): "
                       f"{k}-subset {list(map(int, idx))} dependent => upper <= {k - 1}")
            return result(min(1, cap), k - 1, idx, c, exhausted=exhaustive,
                          sampled=0 if exhaustive else checked, ok=0 if exhaustive else checked - 1,
                          size=None if exhaustive else k)
    if exhaustive:
        log.append(f"all C({m},{k}) = {total} {k}-subsets independent (exact over Q)")
        return result(k, cap)
    log.append(f"C({m},{k}) = {total} > exhaustive_limit={exhaustive_limit}; evidence: "
               f"{checked}/{checked} random {k}-subsets independent (exact per subset; not a proof)")
    return result(1, cap, exhausted=False, sampled=checked, ok=checked, size=k)


@statement("assumption3", reads_given=True, conclusion_over="box", refutes=(DEPENDENT_SUBSET, AT_PRECISION))
def check_assumption3(instance, *, prec: int = 128, seed: int = 0,
                      exhaustive_limit: int = EXHAUSTIVE_LIMIT, samples: int = SAMPLES,
                      **options) -> Evidence:
    """Kruskal rank of {e^(t) + (1/n) E^(t)^T 1_n} >= n, in exact arithmetic."""
    U = build_mean_shifted_queries(instance)
    res = exact_kruskal_rank_at_least(U, instance.n, exhaustive_limit=exhaustive_limit,
                                      samples=samples, seed=seed)
    built = Step("formed u^(t) = n ebar^(t) = n e^(t) + sum_i E^(t)_i exactly over Q",
                 uses="Assumption 3 (scaling keeps the Kruskal rank)",
                 data={"T": instance.T, "d": instance.d})
    box = None
    if instance.at_precision:
        mid, rad = mean_shifted_ball(instance)
        box = kruskal_box(instance, mid, rad, instance.n, res, arrays=("queries", "contexts"),
                          exact=lambda idx: U[idx], gaps=lambda idx: mean_shifted_gaps(instance, list(idx)),
                          exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
    return kruskal_at_least_evidence(
        "assumption3", U, instance.n, res, instance=instance, what="mean-shifted queries ebar^(t)",
        exhaustive_limit=exhaustive_limit, uses="Assumption 3", method=METHOD,
        extra_steps=[built], box=box, arrays=("queries", "contexts"))


def build_equal_mean_shifted_pair(seed: int = 0, *, n: int = 3, d: int = 5, T: int = 5):
    """An instance meeting Assumptions 1-2 with ebar^(2) = ebar^(1) exactly:
    E^(2) = E^(1) + 1 delta^T + G (the rows of G sum to 0) and e^(2) = e^(1) - delta,
    all on the grid 2^-10 Z so every float64 operation is exact."""
    rng = rng_for(seed, "assumption3")
    grid = lambda *shape: np.round(rng.standard_normal(shape) * 1024) / 1024  # noqa: E731
    E, e = grid(T, n, d), grid(T, d)
    delta, G = grid(d), grid(n, d)
    G[-1] = -G[:-1].sum(axis=0)
    E[1] = E[0] + delta[None, :] + G
    e[1] = e[0] - delta
    return from_arrays(E, e, H=2, d_h=n, seed=seed)


@negative_control("assumption3", "ebar^(2) = ebar^(1) exactly while the queries differ")
def control_assumption3_equal_mean_shifted_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_assumption3(build_equal_mean_shifted_pair(seed), seed=seed)
