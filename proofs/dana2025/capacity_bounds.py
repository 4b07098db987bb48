"""Thm. 1 read as a capacity statement (DANA2025.md D2): for given (d, d_h, H)
and every pi with T0 <= H d_h + d, every gamma > 0, some AoT has
d_KL(pi, T) <= d_KL(pi, L) + gamma.  Refuted on an instance by

* an UPPER bound of d_KL(pi, L) (:func:`linear_class_upper`): 0 exactly when
  the conditionals are positive and d >= N - 1 (Prop. 2(a): softmax(P log
  pi_t) = pi_t), 0 as an infimum for a table with d >= 2 (Prop. 3); and
* a LOWER bound kappa0 > that upper bound over EVERY AoT of the given sizes
  (:func:`aot_class_floor`).  Structure used: r(t) = x_{t_S} + U sigma(t)
  with U = [W_O^h W_V^h]_h of rank <= k = min(H d_h, d); so within a group of
  sequences sharing their last token, the centered logits P W_U r(t) lie in
  one affine subspace of dimension <= k (H = 0: one point, i.e. identical
  logits).  The floors are those of :mod:`.kl_lower_bounds`.
"""
from __future__ import annotations

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less, lower, upper, workprec

from .kl_lower_bounds import shared_logits_floor, subspace_floor

__all__ = ["last_token_groups", "linear_class_upper", "aot_class_floor", "capacity_impossibility"]


def last_token_groups(sequences) -> list[list[int]]:
    last = np.asarray(sequences)[:, -1]
    return [np.flatnonzero(last == q).tolist() for q in np.unique(last)]


def linear_class_upper(inst) -> dict | None:
    """A certified upper bound of d_KL(pi, L(N, S, d)), when one is known."""
    if inst.is_positive and inst.d >= inst.N - 1:
        return {"value": 0.0, "why": "Prop. 2(a): E(t) = coordinates of P log pi_t, softmax(P log pi_t) = pi_t "
                "exactly (sympy, dana_prop2)", "attained": True}
    if inst.is_table and inst.d >= 2:
        return {"value": 0.0, "why": "Prop. 3: lambda W E on distinct unit vectors, d_KL <= "
                "log(1 + (N-1) e^{-lambda m}) -> 0 (dana_prop3)", "attained": False}
    return None


def aot_class_floor(inst, *, prec: int = 128) -> dict:
    """kappa0 with d_KL(pi, T) >= kappa0 for EVERY AoT with the instance's (d, d_h, H)."""
    groups = last_token_groups(inst.sequences)
    k = min(inst.H * inst.d_h, inst.d)
    with workprec(prec):
        if k == 0:  # identical logits per group: the exact (Gibbs) floor is the sharpest
            floor = shared_logits_floor(groups, inst.weights, inst.conditionals,
                                        balls=(inst.prior_balls(), inst.conditional_balls()))
            if floor > 0:
                return {"kappa0": lower(floor), "k": 0, "method": "identical logits per last token (H = 0): "
                        "Gibbs / q_a q_b <= 1/4", "certificate": {"floor ball": str(floor)}}
        if inst.is_positive and k < inst.N - 1:
            res = subspace_floor(inst.weights, inst.conditionals, [g for g in groups if len(g) >= k + 2], k,
                                 affine=True, prec=prec, balls=(inst.prior_balls, inst.conditional_balls))
            if res["decision"] is Decision.TRUE:
                return {"kappa0": res["kappa0"], "k": k, "method": "affine subspace floor (Pinsker + "
                        "Eckart-Young, per last-token group)", "certificate": res}
    return {"kappa0": None, "k": k, "method": "no floor applies (groups too small for k, or a table with H >= 1)"}


def capacity_impossibility(inst, *, prec: int = 128) -> dict:
    """FALSE (certified) when every AoT stays kappa0 above an upper bound of d_KL(pi, L)."""
    up = linear_class_upper(inst)
    floor = aot_class_floor(inst, prec=prec)
    out = {"d_KL(pi,L) upper": up, "AoT floor": floor, "decision": Decision.UNDECIDED}
    if up is not None and floor["kappa0"] is not None:
        with workprec(prec):
            gap = certainly_less(arb(up["value"]), arb(floor["kappa0"]))
        if gap is Decision.TRUE:
            out["decision"] = Decision.FALSE
            out["gamma refuted"] = f"any gamma < {floor['kappa0']:.3g}"
            out["margin"] = floor["kappa0"] - upper(arb(up["value"]))
    return out
