"""Memorizing an association table with the AoT of Eq. (2), certified: the
shared construction of Cor. 1, Contribution 1 and Cor. 2.

Construction (reconstructed, DANA2025.md): the exact route of Thm. 1
(:mod:`.exact_route`) with W_U's rows u_j distinct rational unit vectors (in
the first two coordinates) and targets E(t) = u_{g(t)} + xi_t, xi_t a small
dyadic perturbation (||xi_t||_2 < m/2, m = min_{j != g} (1 - u_j^T u_g)): it
keeps every target the strict argmax of W_U E(t) and makes E of full rank, so
that G is invertible (D6: at T0 = H d_h + d the solve is unique and a rank
deficient E forces det G = 0).  When the route is impossible (D1) the weights
are optimized (L-BFGS, :func:`verifier.model.aot_torch.fit_associations`).

Certificate: the float64 weights (exact dyadics, what --save-weights writes)
are run through Eq. (2) in balls; memorized iff every margin
T(t)_g - max_{j != g} T(t)_j is certainly positive.

Impossibility (exact): d = 1 and three distinct targets (at most two tokens
are a unique max or min of W_U, :func:`.kl_lower_bounds.ordering_floor`);
H = 0 and two sequences with the same last token and different targets
(identical logits).
"""
from __future__ import annotations

import math

import numpy as np

from verifier.arith.compare import Decision, certainly_positive, lower, workprec
from verifier.data.instances import rng_for
from verifier.model.aot import AoTWeights
from verifier.model.aot_balls import BallAoT, logits_ball, margins_ball

from .capacity_bounds import last_token_groups
from .exact_route import build_route
from .kl_lower_bounds import ordering_floor
from .prop3_circle_construction import rational_circle_points

__all__ = ["impossible_table", "certified_margins", "memorize_table", "unembedding_circle"]


def impossible_table(inst) -> dict | None:
    """An exact reason why no AoT of these sizes memorizes the table, if one applies."""
    g = inst.targets
    if inst.d == 1 and len(set(g.tolist())) >= 3:
        fl = ordering_floor(g, inst.prior_balls())
        if fl["holds"]:
            return {"why": "d = 1: for every W_U at most two tokens are a unique max or min, so one of three "
                           "distinct targets is never a strict argmax", "certificate": {k: str(v) for k, v in fl.items()}}
    if inst.H == 0:
        for idx in last_token_groups(inst.sequences):
            if len(set(g[idx].tolist())) >= 2:
                seqs = inst.sequences[idx].tolist()
                return {"why": "H = 0: sequences with the same last token have identical logits "
                               "T(t) = W_U (e(t_S) + pos_S), so two different targets cannot both be the strict argmax",
                        "certificate": {"sequences": seqs[:4], "targets": g[idx][:4].tolist()}}
    return None


def certified_margins(sequences, targets, weights: AoTWeights, *, prec: int = 128) -> tuple[Decision, float, list]:
    """Eq. (2) in balls for float64 weights: (all margins > 0?, smallest lower bound, per-sequence lower bounds)."""
    with workprec(prec):
        L = logits_ball(sequences, BallAoT.from_weights(weights))
        ms = margins_ball(L, targets)
        decision = Decision.all(certainly_positive(m) for m in ms)
        lows = [lower(m) for m in ms]
    return decision, min(lows), lows


def unembedding_circle(N: int, d: int) -> tuple[np.ndarray, float]:
    """W_U rows: N distinct unit vectors (rational circle points, first two coordinates;
    float64 roundings, distinct) and their margin m (float, a guide only)."""
    pts = rational_circle_points(N)
    W = np.zeros((N, d))
    W[:, 0] = [float(a) for a, _ in pts]
    if d >= 2:
        W[:, 1] = [float(b) for _, b in pts]
    G = W @ W.T
    gaps = np.diag(G)[:, None] - G
    np.fill_diagonal(gaps, np.inf)
    return W, float(gaps.min())


def memorize_table(inst, *, seed: int = 0, prec: int = 128, attempts: int = 3, optimize: bool = True,
                   rows=None) -> dict:
    """Route (or optimization) + ball forward; ``rows`` restricts the route's fit to a subset
    (Cor. 2), the margins are certified on every sequence."""
    rows = np.arange(inst.T0) if rows is None else np.asarray(rows)
    sub = inst.subset(rows)
    W, m = unembedding_circle(inst.N, inst.d)
    out = {"method": None, "route": None, "decision": Decision.UNDECIDED, "weights": None, "notes": []}
    for a in range(attempts):
        rng = rng_for(seed + 104729 * a, "dana.associations.xi")
        xi = rng.integers(-64, 65, (inst.d, sub.T0)) / 64 * (m / (4 * math.sqrt(inst.d)))
        E = W[sub.targets].T + xi
        route = build_route(sub, W, E, seed=seed + a, prec=prec)
        out["route"] = route
        if route.ceilings["ceiling"] < sub.T0:
            out["notes"].append(f"route impossible: ceiling {route.ceilings['ceiling']} < {sub.T0} (D1)")
            break
        if route.weights is None:
            out["notes"].append(f"attempt {a + 1}: " + "; ".join(route.notes))
            continue
        dec, low, lows = certified_margins(inst.sequences, inst.targets, route.weights, prec=prec)
        out.update({"method": "exact route (float64 weights re-run in balls)", "weights": route.weights,
                    "decision": dec, "min margin": low, "margins": lows})
        if dec is Decision.TRUE or rows.size < inst.T0:
            return out
    if optimize and rows.size == inst.T0 and inst.T0 <= 64:
        from verifier.model.aot_torch import fit_associations

        w = fit_associations(inst.sequences, inst.targets, N=inst.N, d=inst.d, d_h=inst.d_h, H=inst.H, seed=seed)
        if w is not None:
            dec, low, lows = certified_margins(inst.sequences, inst.targets, w, prec=prec)
            out.update({"method": "L-BFGS then certified in balls", "weights": w, "decision": dec,
                        "min margin": low, "margins": lows})
            return out
        out["notes"].append("optimization found no memorizing weights (decides nothing)")
    return out
