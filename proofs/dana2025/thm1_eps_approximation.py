"""Theorem 1 with eps > 0 (App. A.3, eqs. (13)-(14), footnote 8).

Statement
---------
Under Assumption 2, with T_eps the least number of sequences whose prior
mass exceeds 1 - eps and d_h H + d >= T_eps, some AoT has
d_KL(pi, T) <= d_KL(pi, L) + C eps ||W E||_2 + gamma.  The proof fits the
T_eps heaviest sequences exactly (the eps = 0 route) and bounds the rest by
the first step of (13), true in general:

    |d_KL(pi, f) - d_KL(pi, T)| <= E_t || delta_t - (pi_t . delta_t) 1 ||_inf,   delta = T - f,

because lse(b + delta) - lse(b) - pi.delta lies between the min and the max
of delta - (pi.delta) 1.  (14) builds W_O = E P1^T (P1 V P1^T)^{-1} I_Sigma^{-1} U^T
and footnote 8 says "P1 V P1^T invertible since V is orthogonal".

Construction
------------
A random dyadic f = (W, E); the exact route fitted on the T_eps heaviest
sequences (:mod:`.exact_route`); T evaluated on every sequence in balls.

Checks
------
1. Hypotheses: Assumption 2, T_eps <= H d_h + d, d_h <= d.
2. (13), certified in balls for the route's T (a random AoT if the route
   fails): |d_KL(pi,f) - d_KL(pi,T)| <= sum_t pi_t ||delta_t - (pi_t.delta_t)1||_inf.
   The measured constant max_{t not fitted} ||.||_inf / ||W E||_2 is reported
   (C is not stated as a number in the paper: (4) alone is not refutable).
3. Footnote 8 on a random rational orthogonal V (Cayley transform) with
   P1 = [I_{d_h} 0]: det(P1 V P1^T) exact; variant ``claim="footnote8"`` with
   V = [[0,1],[1,0]], P1 = [1 0]: det = 0, refuted (neg_p1vp1).

Not established
---------------
The constant C of (4) is not a number in the paper; the check is (13) and
the route on the instance.

References
----------
arXiv:2411.10115, Thm. 1 p. 3, App. A.3 p. 14 eqs. (13)-(14), footnote 8; DANA2025.md.

>>> from verifier.data.sequences import make_sequence_instance
>>> inst = make_sequence_instance(N=4, S=2, d=3, H=2, T0=8, conditionals="positive", seed=0)
>>> check_dana_thm1_eps(inst).verdict
'verified'
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, fmpq_mat

from verifier.arith.balls import ball_max, to_arb_mat
from verifier.arith.compare import Decision, certainly_less_equal, upper, workprec
from verifier.arith.exact import to_fmpq_mat
from verifier.data.instances import rng_for
from verifier.data.sequence_reading import probability_bounds
from verifier.model.aot_balls import BallAoT, ball_entry, dkl_ball, logits_ball
from verifier.statements.at_precision import UNDECIDED
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .data_hypotheses import assumption2
from .exact_route import build_route
from .prop1_linear_encoder_bound import random_aot_weights

__all__ = ["check_dana_thm1_eps", "heaviest_sequences", "t_eps_hypothesis", "footnote8", "rational_orthogonal"]

DEFAULT_EPS = 0.25


def _q(x) -> Fraction:
    return Fraction(int(x.p), int(x.q)) if hasattr(x, "q") else Fraction(x)


def heaviest_sequences(weights, eps: float) -> np.ndarray:
    """The T_eps heaviest sequences: the shortest prefix (by weight) with mass > 1 - eps, in exact
    rationals (weights as given: integers of any width, decimals, floats; no overflow at weights near 1e308,
    no rounding at a mass of exactly 1 - eps)."""
    exact = [_q(x) for x in weights]
    order = sorted(range(len(exact)), key=lambda i: (-exact[i], i))
    total, need = sum(exact, Fraction(0)), 1 - Fraction(eps)
    mass = Fraction(0)
    for k, i in enumerate(order, 1):
        mass += exact[i]
        if mass > need * total:
            return np.sort(np.array(order[:k], dtype=np.int64))
    return np.arange(len(exact))


def t_eps_hypothesis(inst, eps: float, X: int) -> Hypothesis:
    """"T_eps <= H d_h + d" over every prior the weights stand for: certified when the stored order's X
    heaviest carry mass > 1 - eps at every point (min: their lower ends against the others' upper ends),
    refuted when no X of them can (max: the X largest upper ends against the others' smallest lower ends)."""
    name = "T_eps <= H d_h + d"
    stored = heaviest_sequences(inst.prior_rationals(), eps)
    detail = f"T_eps = {len(stored)} (eps = {eps}), H d_h + d = {X}"
    numbers = inst.prior_numbers
    if numbers.exact or X >= inst.T0:
        return Hypothesis(name, "certified" if len(stored) <= X else "refuted", detail)
    lo, hi, _, _ = probability_bounds(numbers)
    lo, hi = [_q(x) for x in lo.tolist()], [_q(x) for x in hi.tolist()]
    need = 1 - Fraction(eps)
    top = sorted(range(inst.T0), key=lambda i: (-_q(inst.prior_rationals()[i]), i))[:X]
    low_mass = sum(lo[i] for i in top)
    if low_mass > need * (low_mass + sum(hi[i] for i in range(inst.T0) if i not in set(top))):
        return Hypothesis(name, "certified", f"{detail} as stored; T_eps <= {X} at every point of the weights' "
                                             "intervals")
    H_X, L_X = sum(sorted(hi)[-X:]), sum(sorted(lo)[-X:])
    if H_X <= need * (H_X + sum(lo) - L_X):
        return Hypothesis(name, "refuted", f"{detail} as stored; T_eps > {X} at every point of the weights' "
                                           "intervals")
    return Hypothesis(name, "evidence", f"{UNDECIDED}: {detail} as stored; other points of the weights' "
                                        "intervals give other T_eps")


def rational_orthogonal(n: int, seed: int) -> fmpq_mat:
    """V = (I - K)(I + K)^{-1}, K skew-symmetric dyadic: an exactly orthogonal rational matrix."""
    rng = rng_for(seed, "dana_thm1_eps.orthogonal")
    A = rng.integers(-4, 5, (n, n)) / 4
    K = to_fmpq_mat(np.triu(A, 1) - np.triu(A, 1).T)
    I = to_fmpq_mat(np.eye(n))
    return (I - K) * (I + K).inv()


def footnote8(V: fmpq_mat, k: int) -> dict:
    """det(P1 V P1^T) exactly, P1 = [I_k 0]; V^T V = I checked exactly."""
    n = V.nrows()
    P1 = to_fmpq_mat(np.eye(n)[:k])
    orth = V.transpose() * V == to_fmpq_mat(np.eye(n))
    det = (P1 * V * P1.transpose()).det()
    return {"decision": Decision.TRUE if det != 0 else Decision.FALSE, "V orthogonal (exact)": bool(orth),
            "det(P1 V P1^T)": str(det), "k": k, "n": n}


def eq13_bound(weights, conditionals, Lf, LT) -> tuple[arb, list]:
    """sum_t pi_t ||delta_t - (pi_t . delta_t) 1||_inf (balls) and the per-sequence norms."""
    ws = [ball_entry(x) for x in weights]
    total = sum(ws[1:], ws[0])
    acc, per = arb(0), []
    for t, w in enumerate(ws):
        delta = [LT[t, j] - Lf[t, j] for j in range(Lf.ncols())]
        mean = sum((ball_entry(p) * dj for p, dj in zip(conditionals[t], delta)), arb(0))
        norm = ball_max([abs(dj - mean) for dj in delta])
        per.append(norm)
        acc += w * norm
    return acc / total, per


#: (13) certainly violated for the route's T and the instance's f
EQ13 = Refutation("counterexample", "|d_KL(pi, f) - d_KL(pi, T)| certainly above E_t ||delta_t - (pi_t . delta_t) 1||_inf "
                  "(arb balls over every distribution the data stand for)")
#: footnote 8 on the caller's orthogonal V: det(P1 V P1^T) = 0 exactly
FOOTNOTE8 = Refutation("counterexample", "an orthogonal V (checked exactly) with det(P1 V P1^T) = 0 exactly",
                       variant="claim='footnote8': footnote 8 on the caller's V")
#: (13) with half its bound (a wrong constant), certainly violated
HALVED = Refutation("counterexample", "|d_KL(pi, f) - d_KL(pi, T)| certainly above half the bound of (13)",
                    variant="(13) with its bound halved")


@statement("dana_thm1_eps", refutes=(EQ13, FOOTNOTE8, HALVED), requires=("Assumption 2 (positive conditionals)", "T_eps <= H d_h + d", "d_h <= d"),
           N=4, S=2, d=3, H=2, T0=8, conditionals="positive")
def check_dana_thm1_eps(instance, *, prec: int = 128, seed: int = 0, claim: str = "eq13", V=None, k=None,
                        **options) -> Evidence:
    inst = instance
    if claim == "footnote8":
        res = footnote8(V, k)
        return conclude("dana_thm1_eps", res["decision"], claimed="footnote 8: P1 V P1^T invertible since V is "
                        "orthogonal", measured=res, hypotheses=[Hypothesis("V orthogonal", "certified" if
                                                                           res["V orthogonal (exact)"] else "refuted")],
                        certified=True, method="exact rationals", refutation=FOOTNOTE8,
                        reason=f"det(P1 V P1^T) = {res['det(P1 V P1^T)']}" if res["decision"] is Decision.FALSE else "")
    eps = DEFAULT_EPS if inst.eps is None else inst.eps  # the exact decimal written (a Fraction), never float64
    rows = heaviest_sequences(inst.prior_rationals(), eps)
    X = inst.H * inst.d_h + inst.d
    hyps = [assumption2(inst), t_eps_hypothesis(inst, eps, X),
            Hypothesis("d_h <= d", "certified" if inst.d_h <= inst.d else "refuted", f"d_h = {inst.d_h}")]
    rng = rng_for(seed, "dana_thm1_eps.f")
    W, E = rng.integers(-8, 9, (inst.N, inst.d)) / 8, rng.integers(-8, 9, (inst.d, inst.T0)) / 8
    route = build_route(inst.subset(rows), W, E[:, rows], seed=seed, prec=prec) if len(rows) <= X else None
    model = route.ball_model if route is not None and route.ball_model is not None else None
    how = "exact route on the T_eps heaviest sequences"
    if model is None:
        model, how = BallAoT.from_weights(random_aot_weights(inst.N, inst.S, inst.d, inst.d_h, inst.H, seed)), \
            "a random AoT (the route did not certify)"
    with workprec(prec):
        LT = logits_ball(inst.sequences, model)
        Lf = to_arb_mat((W @ E).T)
        ws, P = inst.prior_balls(), inst.conditional_balls()  # every distribution the data stand for
        dT = dkl_ball(ws, P, LT)
        df = dkl_ball(ws, P, Lf)
        B, per = eq13_bound(ws, P, Lf, LT)
        decision = certainly_less_equal(abs(dT - df), B)
    if decision is Decision.UNDECIDED and len(rows) == inst.T0 and how.startswith("exact route"):
        decision = Decision.TRUE  # T = f exactly on every sequence (route certificate): both sides are 0
        how += " (every sequence fitted: T = f exactly, both sides of (13) are 0)"
    outside = [t for t in range(inst.T0) if t not in set(rows.tolist())]
    WE_norm = float(np.linalg.norm(W @ E, 2))
    C_meas = max((upper(per[t]) for t in outside), default=0.0) / WE_norm if WE_norm else None
    fn8 = footnote8(rational_orthogonal(inst.d, seed), inst.d_h)
    trail = [Step("T_eps heaviest sequences", "Thm. 1", {"eps": eps, "T_eps": len(rows), "H d_h + d": X}),
             Step(f"T: {how}; f = W E random dyadic", "App. A.3",
                  {"route certified": route is not None and route.ball_model is not None}),
             Step("(13) first step in balls", "eq. (13)", {"|d_KL(f) - d_KL(T)| <=": upper(abs(dT - df)),
                                                          "bound <=": upper(B)}),
             Step("measured C = max_{t not fitted} ||delta - (pi.delta)1||_inf / ||W E||_2", "(4)", {"C": C_meas}),
             Step("footnote 8 on a random rational orthogonal V, P1 = [I_{d_h} 0]", "footnote 8",
                  {k_: v for k_, v in fn8.items() if k_ != "decision"})]
    return conclude("dana_thm1_eps", decision, claimed="(13): |d_KL(pi,f) - d_KL(pi,T)| <= E_t ||delta_t - "
                    "(pi_t.delta_t) 1||_inf for the route's T",
                    measured={"d_KL(pi,T)": upper(dT), "d_KL(pi,f)": upper(df), "bound": upper(B),
                              "T_eps": len(rows), "measured C": C_meas, "footnote 8 on this V": fn8["decision"].value},
                    hypotheses=hyps, certified=decision is not Decision.UNDECIDED, method="arb balls", prec_bits=prec,
                    margin=upper(B) - upper(abs(dT - df)), trail=trail, refutation=EQ13)


@negative_control("dana_thm1_eps", "neg_p1vp1: footnote 8 with V = [[0,1],[1,0]] (orthogonal), P1 = [1 0]: "
                  "P1 V P1^T = 0", expect=("refuted",))
def neg_p1vp1(*, prec: int = 128, seed: int = 0) -> Evidence:
    from verifier.data.sequences import make_sequence_instance

    inst = make_sequence_instance(N=4, S=2, d=2, H=1, conditionals="positive", seed=seed)
    return check_dana_thm1_eps(inst, prec=prec, seed=seed, claim="footnote8",
                               V=to_fmpq_mat(np.array([[0.0, 1.0], [1.0, 0.0]])), k=1)


@negative_control("dana_thm1_eps", "(13) with the bound halved (a wrong constant): refuted on an instance where "
                  "the bound is tight", expect=("refuted",))
def control_eq13_halved(*, prec: int = 128, seed: int = 0) -> Evidence:
    from verifier.data.sequences import from_sequences

    # one sequence, p = (1/2, 1/2), f = 0, T = (c, 0): |KL change| = log cosh-like, bound = c/2 exactly attained
    # in the limit; with c = 8: |dKL| = log((1 + e^8)/2) - 4 = 3.307 > bound/2 = 2
    inst = from_sequences(np.array([[0, 0]]), N=2, conditionals=np.array([[0.5, 0.5]]), d=1, H=0, kind="control")
    with workprec(prec):
        Lf, LT = to_arb_mat(np.zeros((1, 2))), to_arb_mat(np.array([[8.0, 0.0]]))
        dT, df = dkl_ball([1], inst.conditionals, LT), dkl_ball([1], inst.conditionals, Lf)
        B, _ = eq13_bound([1], inst.conditionals, Lf, LT)
        decision = certainly_less_equal(abs(dT - df), B / 2)
    return conclude("dana_thm1_eps", decision, claimed="(13) with half the bound", measured={"|dKL diff|": upper(abs(dT - df)),
                    "bound/2": upper(B / 2)}, certified=True, method="arb balls", prec_bits=prec, refutation=HALVED)
