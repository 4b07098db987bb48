"""Proposition 1: a Transformer is never better than the linear encoder of its width.

Statement
---------
Every Transformer T with embedding dimension d, dictionary size N and
context S has d_KL(pi, T) >= d_KL(pi, L(N,S,d)), for every pi.  No proof is
given; the reason (reconstructed) is that the logits are W_U times a vector
of R^d: T(t) = W_U r(t) (Eq. (2)), so T is one of the f_{W,E} of
Definition 1, and d_KL(pi, L) is their infimum.

Construction
------------
An AoT of Eq. (2) with random dyadic weights of the instance's sizes; its
logits and residual stream enclosed in balls.

Checks
------
1. Membership T in L: the logits are computed as W_U r(t); the N - d exact left
   null vectors of W_U annihilate every logit ball (consistency: each ball
   contains 0).  Membership is the proof of the inequality.
2. Where a certified lower bound of d_KL(pi, L) is known (d = 1 and three
   distinct targets: the ordering floor ln 2 * (lightest target mass)),
   d_KL(pi, T) >= that bound is certified in balls as well.
3. Variant ``bias=b`` (a Transformer with an unembedding bias, outside Eq. (2)):
   T_b = W_U r + b is not in L, and when d_KL(pi, T_b) is certainly below the
   lower bound of d_KL(pi, L) the inequality is refuted (neg_prop1_bias).

Not established
---------------
Only AoTs are built; the statement covers every Transformer whose logits are
W_U times a d-vector, which is what membership uses.

References
----------
arXiv:2411.10115, Prop. 1 p. 3; DANA2025.md (neg_prop1_bias).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_prop1(make_sequence_instance(N=5, S=2, d=2, H=1, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, certainly_less, lower, upper, workprec
from verifier.arith.exact import exact_nullspace
from verifier.data.instances import rng_for
from verifier.data.sequences import from_sequences
from verifier.model.aot import AoTWeights
from verifier.model.aot_balls import BallAoT, dkl_ball, logits_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .capacity_bounds import linear_class_upper
from .kl_lower_bounds import ordering_floor

__all__ = ["check_dana_prop1", "random_aot_weights", "linear_class_lower"]


def random_aot_weights(N: int, S: int, d: int, d_h: int, H: int, seed: int) -> AoTWeights:
    rng = rng_for(seed, "dana_prop1.weights")
    g = lambda *shape: rng.integers(-16, 17, shape) / 16  # noqa: E731
    return AoTWeights(g(N, d), g(S, d), g(H, d_h, d), g(H, d_h, d), g(H, d_h, d), g(H, d, d_h), g(N, d))


def linear_class_lower(inst) -> tuple[arb, str]:
    """A certified lower bound of d_KL(pi, L(N, S, d)) (0 unless d = 1 and >= 3 distinct targets)."""
    if inst.d == 1 and inst.is_table and len(set(inst.targets.tolist())) >= 3:
        fl = ordering_floor(inst.targets, inst.prior_balls())
        if fl["holds"]:
            return fl["floor"], "d = 1 ordering floor: ln 2 * (mass of the lightest of all but two targets)"
    return arb(0), "KL >= 0"


#: an unembedding bias takes the logits out of L: d_KL(pi, T_b) certainly below the floor of d_KL(pi, L)
BIAS = Refutation("counterexample", "logits with an unembedding bias: d_KL(pi, T_b) certainly below a lower bound of "
                  "d_KL(pi, L) (arb balls, exact ordering)", variant="bias: an unembedding bias, outside Eq. (2)")


@statement("dana_prop1", refutes=(BIAS,), N=5, S=2, d=2, H=1)
def check_dana_prop1(instance, *, prec: int = 128, seed: int = 0, weights: AoTWeights | None = None,
                     bias=None, **options) -> Evidence:
    inst = instance
    w = weights or random_aot_weights(inst.N, inst.S, inst.d, inst.d_h, inst.H, seed)
    claimed = "d_KL(pi, T) >= d_KL(pi, L(N,S,d))" + (" (T with an unembedding bias)" if bias is not None else "")
    with workprec(prec):
        L = logits_ball(inst.sequences, BallAoT.from_weights(w))
        if bias is not None:
            L = L + to_arb_mat(np.asarray(bias, dtype=np.float64)[None, :].repeat(inst.T0, 0))
        value = dkl_ball(inst.prior_balls(), inst.conditional_balls(), L)
        low, why = linear_class_lower(inst)
        nulls = exact_nullspace(np.asarray(w.W_U).T)  # v with v^T W_U = 0
        annihilated = all((arb_mat([[x for x in v]]) * L.transpose())[0, t].contains(0)
                          for v in nulls for t in range(inst.T0))
        # read the balls at prec bits, whatever the caller's ambient precision (53 in a fresh process)
        value_text, low_text = str(value), str(low)
        v_up, v_low, low_up, low_low = upper(value), lower(value), upper(low), lower(low)
    margin = v_low - low_up
    trail = [Step("AoT of Eq. (2), random dyadic weights; logits and d_KL in balls", "Eq. (2)",
                  {"d_KL(pi, T)": value_text, "sizes": w.sizes}),
             Step("Lower bound of d_KL(pi, L)", "Def. 1", {"bound": low_text, "why": why})]
    if bias is None:
        trail.append(Step("T = W_U r(t): the N - d left null vectors of W_U annihilate every logit ball", "Prop. 1",
                          {"null vectors": len(nulls), "all balls contain 0": annihilated}))
        above = certainly_less(low, value) if low > 0 else Decision.TRUE
        holds = Decision.TRUE if annihilated and above is Decision.TRUE else Decision.UNDECIDED
        return conclude("dana_prop1", holds, claimed=claimed,
                        measured={"d_KL(pi, T)": v_up, "d_KL(pi, L) >=": max(0.0, low_low),
                                  "T in L": annihilated},
                        hypotheses=[Hypothesis("logits = W_U r(t), r(t) in R^d (Eq. (2))", "certified",
                                               "the model computes W_U times the residual stream")],
                        certified=holds is Decision.TRUE, method="structure + arb balls", prec_bits=prec,
                        margin=margin, trail=trail)
    up = linear_class_upper(inst)
    if certainly_less(value, low) is Decision.TRUE:
        decision = Decision.FALSE
    elif up is not None and v_low >= up["value"]:
        decision = Decision.TRUE
    else:
        decision = Decision.UNDECIDED
    return conclude("dana_prop1", decision, claimed=claimed,
                    measured={"d_KL(pi, T_b) <=": v_up, "d_KL(pi, L) >=": max(0.0, low_low)},
                    hypotheses=[Hypothesis("embedding dimension d", "certified", f"d = {inst.d}")],
                    certified=decision is not Decision.UNDECIDED, method="arb balls + exact ordering", prec_bits=prec,
                    margin=margin, trail=trail,
                    reason=f"with a bias the logits leave L: d_KL(pi, T_b) <= {v_up:.3g} < {low_low:.3g} "
                    "<= d_KL(pi, L)" if decision is Decision.FALSE else "", refutation=BIAS)


@negative_control("dana_prop1", "neg_prop1_bias: N = 3, d = 1, targets 1, 2, 3, logits lambda (w r + b) with a bias "
                  "b not in im W_U: d_KL -> 0 < ln 2 / 3 <= d_KL(pi, L(3,S,1))", expect=("refuted",))
def neg_prop1_bias(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0], [0, 1], [0, 2]]), N=3, targets=[0, 1, 2], d=1, d_h=1, H=0,
                          kind="control")
    lam = 20.0
    z = np.zeros
    w = AoTWeights(np.array([[-1.0], [0.0], [1.0]]), z((2, 1)), z((0, 1, 1)), z((0, 1, 1)), z((0, 1, 1)),
                   z((0, 1, 1)), lam * np.array([[-1.0], [0.0], [1.0]]))
    return check_dana_prop1(inst, prec=prec, seed=seed, weights=w, bias=lam * np.array([0.0, 0.5, 0.0]))
