"""Proposition 3 (App. A.5): an association table is fitted by L with d = 2.

Statement
---------
Under Assumption 1 (pi_t a point mass at g(t)) with d >= 2,
d_KL(pi, L(N,S,d)) = 0.  Proof (verbatim): W_j = (cos 2 pi j/N, sin 2 pi j/N),
E(t) = W_{g(t)}, f_lambda = lambda W E and

    d_KL(pi, f_lambda) = E_t log(1 + sum_{j != g} e^{-lambda (1 - cos(2 pi (j-g)/N))}) -> 0.

Construction
------------
Any N distinct unit vectors work (u_g^T u_g = 1 > u_j^T u_g); we use rational
points ((1-s^2)/(1+s^2), 2s/(1+s^2)) (s dyadic), so every inner product is an
exact rational and the margin m = min_{j != g} (1 - u_j^T u_g) > 0 is exact.
Bound (reconstructed): d_KL <= log(1 + (N-1) e^{-lambda m}) <= eta once
lambda >= ln((N-1)/eta)/m.

Checks
------
1. Hypotheses: Assumption 1 (exact: integer targets, or exact rows; float
   rows 0/1 as stored are undecided at the data's precision: inconclusive),
   d >= 2.
2. For eta = 1e-2, 1e-6, 1e-12: lambda(eta) and d_KL(pi, f_lambda) in Arb,
   certified <= log(1 + (N-1) e^{-lambda m}) <= eta; sympy: the bound -> 0.
3. Variants: ``rate=True`` checks the claimed rate d_KL <= (N-1) e^{-lambda}
   for the verbatim construction (neg_prop3_rate); ``require_d2=False`` drops
   d >= 2 (neg_prop3_d1: the ordering floor of d = 1 refutes it).

Not established
---------------
d_KL = 0 is an infimum (lambda -> oo): shown by the certified bound for every
eta in the list and the symbolic limit.

References
----------
arXiv:2411.10115, Prop. 3 p. 3, proof App. A.5 p. 17; DANA2025.md.

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_prop3(make_sequence_instance(N=5, S=2, d=2, H=1, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, fmpq

from verifier.arith.compare import Decision, certainly_less, certainly_less_equal, upper, workprec
from verifier.data.sequences import from_sequences
from verifier.model.aot_balls import ball_entry
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .data_hypotheses import METHOD, assumption1, undecided, undecided_reason
from .kl_lower_bounds import ordering_floor

__all__ = ["check_dana_prop3", "rational_circle_points", "circle_dkl"]

ETAS = (1e-2, 1e-6, 1e-12)


@construction("dana_prop3.rational_circle_points")
def rational_circle_points(N: int, den: int = 4096) -> list[tuple[fmpq, fmpq]]:
    """N distinct exact rational unit vectors, near the angles 2 pi (j + 1/4)/N."""
    pts = []
    for j in range(N):
        s = fmpq(int(round(math.tan(math.pi * (j + 0.25) / N) * den)), den)
        pts.append(((1 - s * s) / (1 + s * s), 2 * s / (1 + s * s)))
    if len({(str(a), str(b)) for a, b in pts}) < N:  # pragma: no cover - guard
        raise RuntimeError("circle points coincide")
    return pts


def _gram(pts):
    return [[a1 * a2 + b1 * b2 for (a2, b2) in pts] for (a1, b1) in pts]


def circle_dkl(targets, weights, lam, *, gram=None, N: int | None = None) -> arb:
    """E_t log(1 + sum_{j != g} exp(-lambda (1 - G[j][g]))) in balls (G = Gram of the unit vectors;
    default: the verbatim cos(2 pi (j-g)/N))."""
    lam = arb(lam)
    acc, total = arb(0), arb(0)
    for g, w in zip(np.asarray(targets).tolist(), list(weights)):
        s = arb(1)
        for j in range(N if gram is None else len(gram)):
            if j == g:
                continue
            inner = arb(gram[j][g]) if gram is not None else arb(fmpq(2 * (j - g), N)).cos_pi()
            s += (-lam * (1 - inner)).exp()
        acc += ball_entry(w) * s.log()
        total += ball_entry(w)
    return acc / total


@functools.lru_cache(maxsize=None)
def _limit_proof():
    import sympy as sp

    lam, m, n = sp.symbols("lambda m n", positive=True)
    return sp.limit(sp.log(1 + n * sp.exp(-lam * m)), lam, sp.oo) == 0


#: d = 1: every W leaves one target short of a strict argmax (exact ordering floor)
D1_ORDERING = Refutation("no-choice-works", "d = 1: for EVERY W one of three distinct targets is never a strict argmax, "
                         "d_KL >= an exact positive floor (ordering)")
#: the same with the hypothesis d >= 2 dropped by the caller
D1_DROPPED = Refutation("no-choice-works", "d = 1: for EVERY W one of three distinct targets is never a strict "
                        "argmax (exact ordering)", variant="require_d2=False: Prop. 3 without d >= 2")
#: the verbatim rate bound certainly exceeded
RATE = Refutation("counterexample", "d_KL(pi, f_lambda) of the verbatim circle construction certainly above "
                  "(N-1) e^-lambda (arb balls)", variant="rate=True: the rate (N-1) e^-lambda at one lambda")
#: our rational circle construction missed its reconstructed bound at some eta: SOME f still may do
CIRCLE_MISSED = Refutation("failed-construction", "the rational circle construction's d_KL certainly above its "
                           "reconstructed bound (or the bound above eta) at some eta: d_KL(pi, L) = 0 is an "
                           "infimum that other weights may reach")


@statement("dana_prop3", exists=True, refutes=(D1_ORDERING, D1_DROPPED, RATE, CIRCLE_MISSED), requires=("Assumption 1 (point masses)", "d >= 2"), N=5, S=2, d=2, H=1)
def check_dana_prop3(instance, *, prec: int = 128, seed: int = 0, rate: bool = False, lam: float = 20.0,
                     require_d2: bool = True, **options) -> Evidence:
    inst = instance
    N, d = inst.N, inst.d
    hyps = [assumption1(inst)]
    if require_d2:
        hyps.append(Hypothesis("d >= 2", "certified" if d >= 2 else "refuted", f"d = {d}"))
    g = inst.targets
    if undecided(hyps[0]):  # float rows 0/1 as stored: point masses at some points of their intervals only
        return conclude("dana_prop3", Decision.UNDECIDED, claimed="d_KL(pi, L) = 0", measured={}, hypotheses=hyps,
                        reason=undecided_reason(hyps, "d_KL(pi, L) = 0"), method=METHOD)
    if not inst.is_table:  # the construction fits point masses: nothing to say about other priors
        return conclude("dana_prop3", Decision.UNDECIDED, claimed="d_KL(pi, L) = 0", measured={}, hypotheses=hyps,
                        reason="Assumption 1 fails: the conditionals are not point masses")
    if rate:
        with workprec(prec):
            value = circle_dkl(g, inst.prior_balls(), lam, N=N)
            claim = arb(N - 1) * arb(-lam).exp()
            dec = certainly_less_equal(value, claim)
        return conclude("dana_prop3", dec, claimed=f"rate: d_KL(pi, f_lambda) <= (N-1) e^-lambda at lambda = {lam}",
                        measured={"d_KL(pi, f_lambda) (verbatim cos/sin, ball)": str(value),
                                  "(N-1) e^-lambda": str(claim)}, hypotheses=hyps, certified=dec is not Decision.UNDECIDED,
                        method="arb balls", prec_bits=prec, refutation=RATE,
                        trail=[Step("verbatim W_j = (cos 2 pi j/N, sin 2 pi j/N), E(t) = W_g", "App. A.5", {"N": N})])
    if d < 2:
        fl = ordering_floor(g, inst.prior_balls())
        dec = Decision.FALSE if fl["holds"] and fl["floor"] > 0 else Decision.UNDECIDED
        return conclude("dana_prop3", dec, claimed="d_KL(pi, L) = 0", hypotheses=hyps, certified=True,
                        measured={"d_KL(pi, L) >= (d = 1 ordering floor)": str(fl["floor"])}, method="exact ordering",
                        certificates=[{k: str(v) for k, v in fl.items()}],
                        reason=f"d = 1: every W leaves a target short of a strict argmax, d_KL >= {fl['floor']}",
                        refutation=D1_ORDERING if require_d2 else D1_DROPPED)
    pts = rational_circle_points(N)
    G = _gram(pts)
    m = min(1 - G[j][k] for j in range(N) for k in range(N) if j != k)
    # exact: every exponent lambda (1 - u_j.u_g) >= lambda m, so each sequence's log(1 + sum_{j != g} ...) is at
    # most log(1 + (N-1) e^{-lambda m}) and so is their average (equality when N = 2: the balls cannot tell)
    termwise = all(1 - G[j][k] >= m for j in range(N) for k in range(N) if j != k)
    rows, decisions = [], []
    with workprec(prec):
        for eta in ETAS:
            lam_eta = math.ceil(math.log((N - 1) / eta) / float(m) * 1.0001 + 1)
            value = circle_dkl(g, inst.prior_balls(), lam_eta, gram=G)
            bound = (1 + arb(N - 1) * (-arb(lam_eta) * arb(m)).exp()).log()
            d1, d2 = certainly_less_equal(value, bound), certainly_less(bound, arb(eta))
            how = "balls"
            if d1 is Decision.UNDECIDED and termwise:
                d1, how = Decision.TRUE, "exact term-wise comparison (1 - u_j.u_g >= m)"
            decisions += [d1, d2]
            rows.append({"eta": eta, "lambda": lam_eta, "d_KL upper": upper(value), "bound upper": upper(bound),
                         "d_KL <= bound by": how})
    limit = _limit_proof()
    decision = Decision.all(decisions + [Decision.TRUE if limit else Decision.UNDECIDED])
    return conclude("dana_prop3", decision, claimed="d_KL(pi, L) = 0 (an infimum over lambda)",
                    measured={"margin m = min 1 - u_j.u_g (exact)": str(m), "per eta": rows}, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED, method="exact rationals + arb balls + sympy limit",
                    prec_bits=prec, margin=ETAS[-1] - rows[-1]["bound upper"], refutation=CIRCLE_MISSED,
                    trail=[Step("N rational unit vectors u_j, E(t) = u_g(t), f = lambda W E", "App. A.5 (rational)",
                                {"m": str(m)}),
                           Step("d_KL(pi, f_lambda) <= log(1 + (N-1) e^{-lambda m}) <= eta", "reconstructed bound",
                                {"rows": rows}),
                           Step("lim log(1 + n e^{-lambda m}) = 0", "sympy", {"holds": limit})])


@negative_control("dana_prop3", "neg_prop3_d1: Prop. 3 without d >= 2 (d = 1, targets 1, 2, 3): d_KL >= ln 2 / 3",
                  expect=("refuted",))
def neg_prop3_d1(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0], [0, 1], [0, 2]]), N=3, targets=[0, 1, 2], d=1, H=1, kind="control")
    return check_dana_prop3(inst, prec=prec, seed=seed, require_d2=False)


@negative_control("dana_prop3", "neg_prop3_rate: the rate d_KL <= (N-1) e^-lambda at N = 5, lambda = 20 "
                  "(true value 1.99e-6 > 8.2e-9)", expect=("refuted",))
def neg_prop3_rate(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.arange(5)[:, None], N=5, targets=np.arange(5), d=2, H=1, kind="control")
    return check_dana_prop3(inst, prec=prec, seed=seed, rate=True, lam=20.0)
