"""Certified LOWER bounds on d_KL(pi, .) over whole classes of models: what the
impossibility results of DANA2025.md rest on (Prop. 2(b), the d = 1 witness,
neg_prop1_bias, the capacity reading of Thm. 1).  Each bound holds for every
model in the class; none is a float estimate.

1. d = 1 (:func:`ordering_floor`).  With logits w E (w in R^N, E scalar), a
   token j is the STRICT argmax only if w_j is the unique max (E > 0) or the
   unique min (E < 0); so for any w at most two targets can win, every other
   target g has softmax_g <= 1/2, i.e. KL >= ln 2 on its sequences.  Exhaustive
   over the weak orders of the targets (exact).
2. Identical logits (:func:`shared_logits_floor`).  Sequences forced to share
   their logits (H = 0 and the same last token): for point masses on two
   targets a != b, q_a q_b <= 1/4, so pi_1 KL_1 + pi_2 KL_2 >= min(pi) ln 4;
   for positive conditionals the best shared q is the mixture (Gibbs), the
   floor sum_t pi_t KL(p_t || pbar).
3. Low-dimensional logits (:func:`subspace_floor`).  If, within each group of
   sequences, the centered logits P T(t) lie in one affine (or linear)
   subspace of dimension k, and d_KL <= kappa, then per sequence
   KL_t <= kappa / pi_t, Pinsker gives max_j |q_j - p_j| <= TV <= sqrt(KL_t / 2)
   =: eta_t, so |log q_j - log p_j| <= eta_t / (p_min - eta_t) =: delta_t and
   ||P log q_t - P log p_t||_2 <= sqrt(N) delta_t.  Eckart-Young (affine:
   about the group mean) bounds sum_t dist(P log p_t, F)^2 >= sigma_{k+1}^2,
   and sigma_{k+1} >= sigma_min of any k+1 columns (interlacing), certified
   by :func:`verifier.arith.singular_values.sigma_min_lower_bound`.  So
   N sum_t delta_t(kappa)^2 < sum_groups rho_g^2 forces d_KL > kappa.

>>> from flint import arb
>>> ev = ordering_floor([0, 1, 2], [1, 1, 1])
>>> ev["holds"], ev["orders_checked"], float(ev["floor"].mid()) > 0.23
(True, 13, True)
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from flint import arb, arb_mat

from verifier.arith.compare import Decision, certainly_less, certainly_positive, lower, workprec
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.errors import InsufficientPrecision
from verifier.model.aot_balls import ball_entry, kl_ball

__all__ = ["ordering_floor", "shared_logits_floor", "centered_log_targets", "subspace_floor"]


def _weak_orders(k: int):
    """Every weak order of k items as a rank vector (ties share a rank)."""
    seen = set()
    for ranks in itertools.product(range(k), repeat=k):
        used = sorted(set(ranks))
        norm = tuple(used.index(r) for r in ranks)
        if norm not in seen:
            seen.add(norm)
            yield norm


def ordering_floor(targets, weights) -> dict:
    """d = 1: every W in R^{N x 1} leaves all but two of the distinct targets
    short of a strict argmax, so d_KL >= ln 2 * (sum of the |G| - 2 smallest
    target masses) and at most two distinct targets are memorized."""
    g = np.asarray(targets)
    w = [ball_entry(x) for x in weights]  # exact numbers or the prior's balls (never a float64 copy)
    G = sorted(set(g.tolist()))
    k = len(G)
    holds, checked = True, 0
    if k <= 6:  # the exhaustive check: at most two unique extremes in any weak order
        for ranks in _weak_orders(k):
            checked += 1
            top, bottom = max(ranks), min(ranks)
            winners = sum(1 for r in ranks if (r == top and ranks.count(top) == 1)
                          or (r == bottom and ranks.count(bottom) == 1 and top != bottom))
            holds &= winners <= 2
    masses = sorted((sum((x for x, gg in zip(w, g) if gg == t), arb(0)) for t in G), key=lambda m: float(m.mid()))
    total = sum(w, arb(0))
    short = masses[:max(0, k - 2)]
    floor = arb(2).log() * sum(short, arb(0)) / total
    return {"distinct targets": k, "orders_checked": checked, "holds": bool(holds),
            "at most memorized": min(k, 2), "floor": floor,
            "claim": "for every w in R^N at most 2 tokens are a unique max or min of w"}


def shared_logits_floor(groups, weights, conditionals, *, balls=None) -> arb:
    """A floor of d_KL when the sequences of each group share their logits; ``balls`` = (prior balls,
    conditional balls) of the instance (the values the data stand for; default: the floats, exact).  The
    point-mass floor applies to rows whose balls are exactly 0 and 1 (a float row 0/1 as stored stands for
    rows that are not point masses: it gets the Gibbs floor, in balls)."""
    w = [ball_entry(x) for x in weights] if balls is None else list(balls[0])
    Pb = np.asarray(conditionals) if balls is None else balls[1]
    total = sum(w[1:], w[0])
    acc = arb(0)
    for idx in groups:
        if len(idx) < 2:
            continue
        P = np.asarray(conditionals)[list(idx)]
        exact01 = all(ball_entry(Pb[i, j]).is_zero() or ball_entry(Pb[i, j]) == 1
                      for i in idx for j in range(P.shape[1]))
        if exact01:  # point masses, exactly
            tg = np.argmax(P, axis=1)
            by_target = {}
            for i, t in zip(idx, tg):
                by_target.setdefault(int(t), []).append(w[i])
            if len(by_target) >= 2:
                heavy = sorted((sum(v[1:], v[0]) for v in by_target.values()), key=lambda x: float(x.mid()))
                acc += arb(4).log() * heavy[-2].min(heavy[-1])  # the two heaviest targets, the lighter of them
            continue
        wg = [w[i] for i in idx]
        mass = sum(wg[1:], wg[0])
        B = Pb[list(idx)]
        mix = [sum((wi * ball_entry(B[r, j]) for r, wi in enumerate(wg)), arb(0)) / mass for j in range(P.shape[1])]
        logmix = [m.log() for m in mix]
        acc += sum((wi * kl_ball(list(B[r]), logmix) for r, wi in enumerate(wg)), arb(0))
    return acc / total


def _row_min(row) -> arb:
    out = row[0]
    for x in row[1:]:
        out = out.min(x)
    return out


def centered_log_targets(conditionals) -> arb_mat:
    """C (N x T0): column t is P log pi_t = log pi_t - mean(log pi_t) 1."""
    P = np.asarray(conditionals)
    T0, N = P.shape
    cols = []
    for t in range(T0):
        lg = [ball_entry(x).log() for x in P[t]]
        mean = sum(lg[1:], lg[0]) / N
        cols.append([x - mean for x in lg])
    return arb_mat([[cols[t][j] for t in range(T0)] for j in range(N)])


def _stable_pivots(M: np.ndarray, r: int, rtol: float = 1e-8) -> list[int]:
    """The first ``r`` columns of a column-pivoted Gram-Schmidt of ``M`` (the order
    of a column-pivoted QR), a near tie (residual norms within ``rtol``) going to
    the lowest index: the choice does not flip on the ulp-level differences
    between machines (a float choice only; the bound it steers is certified).

    >>> _stable_pivots(np.array([[1.0, 0.0, 1.0 + 2.0**-52], [0.0, 1.0, 0.0]]), 2)
    [0, 1]
    """
    R = np.array(M, dtype=np.float64, copy=True)
    chosen: list[int] = []
    for _ in range(min(r, R.shape[1])):
        norms = np.sqrt(np.einsum("ij,ij->j", R, R))
        norms[chosen] = -1.0
        j = int(np.flatnonzero(norms >= norms.max() * (1 - rtol))[0])
        chosen.append(j)
        if norms[j] > 0:
            q = R[:, j] / norms[j]
            R = R - np.outer(q, q @ R)
    return chosen


def _rho_squared(C: arb_mat, idx, k: int, affine: bool, prec: int) -> arb:
    """A lower bound of min over k-dim (affine) subspaces F of sum_t dist(c_t, F)^2."""
    m = len(idx)
    N = C.nrows()
    cols = [[C[j, t] for j in range(N)] for t in idx]
    if affine:
        mean = [sum((c[j] for c in cols), arb(0)) / m for j in range(N)]
        cols = [[c[j] - mean[j] for j in range(N)] for c in cols]
    if k + 1 > (m - 1 if affine else m) or k + 1 > N:
        return arb(0)
    mid = np.array([[float(x.mid()) for x in c] for c in cols])
    J = sorted(_stable_pivots(mid.T, k + 1))  # the best-conditioned k+1 columns
    sub = arb_mat([cols[i] for i in J])  # (k+1) x N: rows are the chosen centered columns
    try:
        s = sigma_min_lower_bound(sub, prec=prec).value  # sigma_min >= s (a one-sided bound)
    except InsufficientPrecision:
        return arb(0)
    return s * s if s > 0 else arb(0)  # sigma^2 >= s^2 because sigma >= s > 0


def subspace_floor(weights, conditionals, groups, k: int, *, affine: bool = True, prec: int = 128,
                   balls=None) -> dict:
    """The largest kappa (within a factor 1.05, from a float search) for which
    N sum_t delta_t(kappa)^2 < sum_g rho_g^2 is CERTIFIED: then every model
    whose centered logits lie, group by group, in a k-dim (affine) subspace
    has d_KL > kappa.  Needs positive conditionals.  ``balls``: as in
    :func:`shared_logits_floor` (``balls[1]`` called at the working precision)."""
    P = np.asarray(conditionals, dtype=np.float64)
    T0, N = P.shape
    with workprec(prec):
        wb = [ball_entry(x) for x in weights] if balls is None else list(balls[0]())
        Pb = P if balls is None else balls[1]()
        total = sum(wb[1:], wb[0])
        pi = [x / total for x in wb]
        pmin = [_row_min([ball_entry(x) for x in Pb[t]]) for t in range(T0)]
        C = centered_log_targets(Pb)
        rho2 = sum((_rho_squared(C, g, k, affine, prec) for g in groups), arb(0))
        members = sorted({t for g in groups for t in g})

        def excess(kappa: float) -> arb | None:
            acc = arb(0)
            for t in members:
                eta = (arb(kappa) / (2 * pi[t])).sqrt()
                gap = pmin[t] - eta
                if certainly_positive(gap) is not Decision.TRUE:
                    return None
                delta = eta / gap
                acc += N * delta * delta
            return acc

        def ok(kappa: float) -> bool:
            e = excess(kappa)
            return e is not None and certainly_less(e, rho2) is Decision.TRUE

        if certainly_positive(rho2) is not Decision.TRUE:
            return {"kappa0": None, "rho_squared": lower(rho2), "decision": Decision.UNDECIDED}
        lo, hi = 0.0, 1.0
        while ok(hi) and hi < 1e6:
            lo, hi = hi, hi * 4
        kappa = hi / 4 if lo else hi
        while not ok(kappa) and kappa > 1e-300:
            kappa /= 4
        if not ok(kappa):
            return {"kappa0": None, "rho_squared": lower(rho2), "decision": Decision.UNDECIDED}
        lo = kappa
        while ok(lo * 1.05):
            lo *= 1.05
        return {"kappa0": lo, "rho_squared": lower(rho2), "decision": Decision.TRUE,
                "k": k, "affine": affine, "groups": [list(map(int, g)) for g in groups],
                "chain": "KL_t <= kappa/pi_t; TV <= sqrt(KL/2); |log q - log p| <= eta/(p_min - eta); "
                         "||P(log q - log p)||_2 <= sqrt(N) delta; Eckart-Young + interlacing",
                "log10 kappa0": math.log10(lo)}
