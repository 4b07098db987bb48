"""The terms of Theorem 2's bound (Dana et al., App. A.3), in balls: the
construction's exact Gram (T2), the entropies, the limits, the modes a row
of conditionals can have over every distribution it stands for, lambda(t)
and d_KL(pi, f) of the construction.  The statement, its checks and its
proof steps are :mod:`.thm2_entropy_bound`'s.

>>> S, den, how = gram_construction(3, 4, 0)
>>> bool((S @ S.T == den * np.eye(3)).all()), how.startswith("orthonormal")
(True, True)
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, certainly_less_equal, workprec
from verifier.data.instances import rng_for
from verifier.model.aot_balls import kl_ball, xlogx_ball


def gram_construction(N: int, d: int, seed: int, tries: int = 20) -> tuple[np.ndarray, int, str]:
    """(integer matrix S, denominator den, how) with W W^T = S S^T / den exactly."""
    if d >= N:
        S = np.zeros((N, d))
        S[:, :N] = np.eye(N)
        return S, 1, "orthonormal rows"
    rng = rng_for(seed, "dana_thm2.signs")
    best = None
    for _ in range(tries):
        S = rng.choice([-1.0, 1.0], (N, d))
        G = S @ S.T  # integers below 2^53: exact in float64
        off = np.abs(G - np.diag(np.diag(G))).max()
        if best is None or off < best[1]:
            best = (S, off)
    return best[0], d, "+-1/sqrt(d) signs"


def _b(ent: arb, N: int) -> arb:
    """b = log((N-1)/(e^{-H} - 1)) with -H = entropy <= log N, so b >= 0: the ball is cut at 0 (an entropy
    ball read at the data's precision also holds non-distributions, whose "entropy" exceeds log N)."""
    return (arb(N - 1) / ent.expm1()).log().nonnegative_part()


def _rest(pb, g: int) -> arb:
    """1 - q_g as the sum of the other entries (accurate when q_g is within 1e-170 of 1)."""
    return sum((x for j, x in enumerate(pb) if j != g), arb(0))


def _entropy(pb, g: int | None = None) -> arb:
    """-sum q log q over a row of balls (exact zeros contribute 0, a ball touching 0 its range: float zeros
    read at their precision); the mode's log q_g as log1p(-(1 - q_g))."""
    g = max(range(len(pb)), key=lambda j: float(pb[j].mid())) if g is None else g
    rest = _rest(pb, g)
    ent = -sum((xlogx_ball(x) for j, x in enumerate(pb) if j != g), arb(0))
    return ent - pb[g] * (-rest).log1p()


def _limit_zero(inst, t: int) -> bool:
    """Deterministic (one nonzero entry: [1e-170, 1.0] is not) or exactly uniform, in an exact reading: the
    term's limit is 0.  A row read at the data's precision stands for rows that are neither (a float 0 for
    small positive values, equal floats for unequal values): its term is computed in balls."""
    numbers = inst.cond_numbers
    if not numbers.exact:
        return False
    p = numbers.rationals[t].tolist()
    return sum(1 for x in p if x != 0) == 1 or all(x == p[0] for x in p)


def entropy_bound(inst, C: arb) -> tuple[arb, list]:
    """The RHS of Thm. 2 in balls, and per sequence (pi_g, entropy, term).  The conditionals and the prior
    are the instance's balls: the RHS encloses its value for every distribution the data stand for."""
    N = inst.N
    ws = inst.prior_balls()
    P = inst.conditional_balls()
    total = sum(ws[1:], ws[0])
    acc, rows, parts = arb(0), [], []
    modes = inst.targets
    for t, w in enumerate(ws):
        p = inst.conditionals[t]
        g = int(modes[t])
        if _limit_zero(inst, t):
            rows.append((float(p[g]), None, 0.0))
            continue
        pb = list(P[t])
        term = ent = None
        for m in mode_candidates(inst, pb, g):  # the mode of every distribution the row stands for is one of them
            e = _entropy(pb, m)
            rest = _rest(pb, m)
            tv = sum((abs(pb[j] / rest - arb(1) / (N - 1)) for j in range(N) if j != m), arb(0)) / 2
            x = rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * _b(e, N)
            term, ent = (x, e) if term is None else (term.union(x), ent.union(e))
        acc += w * term
        parts.append(w * term)
        rows.append((float(p[g]), float(ent.mid()), float(term.mid())))
    return _signed(acc / total, 1 - 2 * C), rows, _negative_by_terms(parts, total, 1 - 2 * C)


def mode_candidates(inst, pb, g: int) -> list[int]:
    """The tokens that can be the mode g(t) of a distribution the row stands for: the stored argmax ``g``
    (an exact row: the first of ties, the paper's g), and for a row read at the data's precision every j
    whose ball is not certainly below q_g's."""
    if inst.cond_numbers.exact:
        return [g]
    return [g] + [j for j in range(len(pb)) if j != g and not pb[j] < pb[g]]


def _shown(rhs: arb) -> str:
    if certainly_less(rhs, arb(0)) is Decision.TRUE:
        return f"{float(rhs.mid()):.3g}" if float(rhs.mid()) != 0 else rhs.str(3)  # below float64's range
    return f"in {rhs.str(3, radius=True)} (every term <= 0, one certainly < 0)"


def _negative_by_terms(parts, total: arb, scale: arb) -> bool:
    """1 - 2C < 0 makes every term <= 0 for every distribution, so the RHS is at most its most negative term:
    certainly < 0 when one term is (a ball of the sum cannot show it when the terms' sizes differ by 1e150)."""
    return bool(scale < 0 and any(certainly_less(x / total, arb(0)) is Decision.TRUE for x in parts))


def _signed(rhs: arb, scale: arb) -> arb:
    """Every term is (1 - pi_g)(positive)/(1 - 2C) b with b >= 0: the RHS has the sign of 1 - 2C (or is 0)
    for every distribution; cut the ball there (rounding and the precision box may straddle 0)."""
    if scale > 0:
        return rhs.nonnegative_part()
    if scale < 0:
        return -(-rhs).nonnegative_part()
    return rhs


def _data_precision_is_the_cause(inst, C: arb, prec: int) -> bool:
    """Whether the same RHS on the floats read as exact rationals (p / sum p) has a decided sign."""
    if not inst.at_precision:
        return False
    with workprec(prec):
        exact, _, negative = entropy_bound(inst.exact_reading(), C)
        return negative or certainly_less_equal(arb(0), exact) is Decision.TRUE or \
            certainly_less(exact, arb(0)) is Decision.TRUE


def _solve_lambda(G_col: np.ndarray, den: int, g: int, ent: float) -> float:
    """lambda with log sum_j exp(lambda (G_jg - G_gg)/den) = entropy (float bisection)."""
    diff = (G_col - G_col[g]) / den
    F = lambda lam: float(np.log(np.sum(np.exp(lam * diff))))  # noqa: E731
    lo, hi = 0.0, 1.0
    while F(hi) > ent and hi < 1e6:
        lo, hi = hi, 2 * hi
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if F(mid) > ent else (lo, mid)
    return (lo + hi) / 2


def construction_dkl(inst, S: np.ndarray, den: int) -> tuple[arb, list]:
    """d_KL(pi, f) with E(t) = lambda(t) W_g: logits lambda (S S^T)_{j g} / den, exact up to lambda."""
    ws = inst.prior_balls()
    P = inst.conditional_balls()
    total = sum(ws[1:], ws[0])
    acc, lams = arb(0), []
    modes = inst.targets
    for t, w in enumerate(ws):
        p = inst.conditionals[t]
        g = int(modes[t])
        col = S @ S[g]
        ent = float(-np.sum(p[p > 0] * np.log(p[p > 0])))
        # a point mass (entropy 0) wants lambda -> infinity; a uniform row lambda = 0 (uniform logits: KL 0)
        lam = _solve_lambda(col, den, g, ent) if 0 < ent < math.log(inst.N) - 1e-12 else (0.0 if ent > 0 else 60.0)
        lams.append(lam)
        logits = [arb(lam) * arb(float(c)) / den for c in col]
        acc += w * kl_ball(list(P[t]), logits)
    return acc / total, lams
