"""Appendix B.2: a finite saturation scale c suffices, made explicit.

Statement
---------
At an induction step (head h), let Y_inf be the lower-right block of the
row-reduced feature matrix when the saturated examples' softmax is at its
c = infinity limit (a one-hot vector: the row is a token), and Y_c the same
block at the finite c the construction uses. If
    ||Y_c - Y_inf||_2 < sigma_min^+(Y_inf)                                  (19)
then rank(Y_c) >= rank(Y_inf) (Lemma 5), so the head adds rank(Y_inf) rows.

Construction
------------
Row t of Y_c - Y_inf is (z_h^(t)(c) - z^inf_t)[t free] - sum_i A_ti (z_h^(i)(c) - z^inf_i),
and ||z(c) - z^inf|| <= x_max ||s(c) - onehot||_1 <= x_max eps_i with Lemma 4's
eps_i = 2(n-1) exp(R_i - c g_i). Hence the a-priori bound
    ||Y_c - Y_inf||_2 <= ||.||_F <= x_max * max_i eps_i * kappa,
    kappa = sqrt(sum_t (delta_t + sum_i |A_ti|)^2),
with x_max the largest token norm and A the row-operation coefficients.

Checks
------
For every induction step of Prop. 1's construction, all in Arb balls:
W*_eff := W^h - c v w^T (exact in balls, so Lemma 4 applies to the float
weights as built), R_i and g_i enclosed, eps_i enclosed, the a-priori bound
enclosed.  Each other side is an enclosure from TWO one-sided certificates
(:mod:`verifier.arith.singular_values`): ||Y_c - Y_inf||_2 between
||D x||/||x|| and a Gram-power bound; sigma_min(Y_inf) between a Gram-power
lower bound and ||x^T Y_inf||/||x||.  A one-sided bound only proves; a
refutation needs the other side.

* verified at a step: actual <= a-priori < sigma_min(Y_inf), certainly, at
  the construction's c or -- "a finite c suffices" is an existence
  statement -- at a larger c = max_i c0_i(eps*) from Lemma 4 with
  eps* = sigma_min_lower / (2 x_max kappa) (then doubled, at most
  ``C_STEPS`` times);
* refuted: the a-priori bound certainly fails (actual > x_max eps kappa:
  Lemma 4 or its use is wrong), or, for a PINNED c (``c_scale`` given, the
  negative control), (19) certainly fails at that c (actual >= sigma_max
  upper side of sigma_min).  A miss at the construction's own c is no
  refutation of "some finite c".
* undecided at ``prec``: the precision ladder doubles up to ``MAX_PREC``,
  then "inconclusive".  H = 1 (no induction step): nothing to check, said so.

Not established
---------------
Y_inf uses the J rows as actually computed (Claim 1 is exact only up to the
float64 rounding of W*); the statement checked is the perturbation argument
of B.2, not the exactness of Claim 1 (checked by ``claim1``/``claim2``).

References
----------
arXiv:2306.02010v3, App. B.2, Eq. (19); Lemma 4; Lemma 5.

>>> from verifier.data.instances import make_instance
>>> check_appendixB2(make_instance(H=3, n=3, d=5, context="shared", seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import ball_max, to_arb_mat
from verifier.arith.compare import (
    Decision,
    Enclosure,
    certainly_less,
    certainly_less_equal,
    certainly_positive,
    lower,
    upper,
    with_precision_ladder,
    workprec,
)
from verifier.arith.singular_values import sigma_min_lower_bound, sigma_min_upper_bound, spectral_norm_enclosure
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model.mha_balls import feature_matrix_ball, logits_ball
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import figure, negative_control, statement

from .lemma4_softmax_saturation import c0_ball, error_bound_ball, saturation_constants_ball
from .proposition1_construction import build_key_query_weights
from .proposition1_rank_induction import theorem_hypotheses

C_STEPS = 6  # larger c tried after the construction's own (existence of a finite c)
MAX_PREC = 1024


def _token_rows(E, rows, istar) -> arb_mat:
    return to_arb_mat(np.asarray([E[t][i] for t, i in zip(rows, istar)]))


def _rows(M: arb_mat, idx) -> list:
    return [[M[a, k] for k in range(M.ncols())] for a in idx]


def _saturation_constants(E, e, W_eff: arb_mat, W_prime: arb_mat, rows, istar) -> list:
    """(R_i, g_i) of Lemma 4 in balls, for each saturated row."""
    L = logits_ball(E, e, W=[W_eff, W_prime], rows=rows)  # b = E W*_eff e, a' = E W' e
    return [saturation_constants_ball(b, ap, i) for (b, ap), i in zip(L, istar)]


def sigma_min_bounds(Y: arb_mat, *, prec: int, at_least: float | None = None):
    """sigma_min(Y) as an Enclosure, or only its upper side when the lower
    bound is out of reach at this precision (a LowerBound alone never refutes)."""
    hi = sigma_min_upper_bound(Y, prec=prec)
    try:
        return Enclosure(sigma_min_lower_bound(Y, prec=prec, at_least=at_least), hi)
    except InsufficientPrecision:
        return hi


def _at_c(instance, hs, parts: dict, c: arb, prec: int) -> dict:
    """(19) and the a-priori chain at one c, every side enclosed."""
    E, e = instance.contexts, instance.queries
    I, J, F = parts["I"], parts["J"], parts["F"]
    W_run = parts["W_eff"] + c * parts["Wp"]
    Zc = feature_matrix_ball(E, e, W=[W_run], rows=I + J + F)
    Zc_I = arb_mat(_rows(Zc, range(len(I)))) if I else None
    Zc_lower = arb_mat(_rows(Zc, range(len(I), len(I) + len(J) + len(F))))
    A = parts["A"]
    Y_c = Zc_lower - (A * Zc_I if A is not None else 0)
    Y_inf_rows = _rows(Zc_lower, range(len(J)))  # J rows: no saturation, as computed
    if F:
        Y_inf_rows += _rows(_token_rows(E, F, parts["istar"][len(I):]), range(len(F)))
    Y_inf = arb_mat(Y_inf_rows) - (A * parts["Zinf_I"] if A is not None else 0)
    eps_max = ball_max(error_bound_ball(R, g, c, instance.n) for R, g in parts["Rg"])
    apriori = parts["x_max"] * eps_max * parts["kappa"]
    actual = spectral_norm_enclosure(Y_c - Y_inf, prec=prec)
    sigma = sigma_min_bounds(Y_inf, prec=prec, at_least=upper(apriori))
    return {"c": c, "eps": eps_max, "apriori": apriori, "actual": actual, "sigma": sigma,
            "actual<=apriori": certainly_less_equal(actual, apriori),
            "apriori<sigma": certainly_less(apriori, sigma),
            "(19) actual<sigma": certainly_less(actual, sigma)}


def _next_c(instance, parts: dict, res: dict) -> arb | None:
    """A c with x_max eps(c) kappa <= sigma_lower / 2 (Lemma 4's c0), else 2c."""
    sigma = res["sigma"]
    if not isinstance(sigma, Enclosure) or certainly_positive(sigma.lower) is not Decision.TRUE:
        return None
    if any(certainly_positive(g) is not Decision.TRUE for _, g in parts["Rg"]):
        return None
    eps_star = lower(sigma.lower) / (2 * upper(parts["x_max"]) * max(upper(parts["kappa"]), 1e-300))
    if not 0 < eps_star < math.inf:
        return None
    c0 = upper(ball_max(c0_ball(R, g, eps_star, instance.n) for R, g in parts["Rg"]))
    return arb(max(c0, 2 * upper(res["c"])))


def check_head_step(instance, con, hs, *, prec: int, c_scale: float | None = None) -> dict:
    """(19) for one induction step: at the construction's c (times ``c_scale``,
    pinned), else climbing c while undecided; returns decisions and enclosures."""
    E, e = instance.contexts, instance.queries
    c2 = hs.claim2
    I, J, F = list(hs.basis_before), list(hs.new_rows), list(hs.free_rows)
    with workprec(prec):
        Wp = to_arb_mat(c2.v[:, None]) * to_arb_mat(c2.w[None, :])  # W' = v w^T in balls
        W_eff = to_arb_mat(con.W[hs.head - 1]) - arb(c2.c) * Wp  # W^h = W*_eff + c W' exactly
        ist = {t: k for t, k in zip(list(c2.saturated), list(c2.istar))}
        istar = [ist[t] for t in I + F]
        A = to_arb_mat(hs.coefficients) if len(I) else None
        delta = [0] * len(J) + [1] * len(F)
        absA = [[abs(A[a, b]) for b in range(A.ncols())] for a in range(A.nrows())] if A is not None else []
        kappa = sum(((delta[a] + sum(absA[a], arb(0))) ** 2 for a in range(len(delta))), arb(0)).sqrt()
        parts = {"I": I, "J": J, "F": F, "Wp": Wp, "W_eff": W_eff, "A": A, "istar": istar, "kappa": kappa,
                 "Zinf_I": _token_rows(E, I, istar[:len(I)]) if I else None, "x_max": _x_max_ball(E, instance),
                 "Rg": _saturation_constants(E, e, W_eff, Wp, I + F, istar)}
        c = arb(c2.c) * arb(1.0 if c_scale is None else c_scale)
        tried = []
        for _ in range(1 if c_scale is not None else 1 + C_STEPS):
            res = _at_c(instance, hs, parts, c, prec)
            tried.append(upper(c))
            chain = Decision.all([res["actual<=apriori"], res["apriori<sigma"]])
            if chain is Decision.TRUE or res["actual<=apriori"] is Decision.FALSE:
                break
            c = _next_c(instance, parts, res)
            if c is None:
                break
    if res["actual<=apriori"] is Decision.FALSE:
        decision = Decision.FALSE  # the a-priori bound itself fails: Lemma 4 or its use is wrong
    elif c_scale is not None:  # pinned c: the chain proves (19), or (19) fails outright
        decision = Decision.TRUE if chain is Decision.TRUE else \
            Decision.FALSE if res["(19) actual<sigma"] is Decision.FALSE else Decision.UNDECIDED
    else:  # existence of a finite c: only a proof counts
        decision = Decision.TRUE if chain is Decision.TRUE else Decision.UNDECIDED
    sig = res["sigma"]
    return {"head": hs.head, "c": float(res["c"].mid()), "c tried": tried, "c_construction": float(c2.c),
            "eps": upper(res["eps"]), "x_max": upper(parts["x_max"]), "kappa": upper(parts["kappa"]),
            "apriori": upper(res["apriori"]), "actual": upper(res["actual"]), "actual_lower": lower(res["actual"]),
            "sigma_min_lower": lower(sig) if isinstance(sig, Enclosure) else None, "sigma_min_upper": upper(sig),
            "actual<=apriori": res["actual<=apriori"], "apriori<sigma": res["apriori<sigma"],
            "(19) actual<sigma": res["(19) actual<sigma"], "decision": decision, "prec_bits": prec}


def _x_max_ball(E, instance) -> arb:
    """The largest token norm over the dataset, in balls."""
    tokens = E[0] if instance.shared_context else np.asarray(E).reshape(-1, E.shape[2])
    return ball_max(sum((arb(float(x)) ** 2 for x in row), arb(0)).sqrt() for row in tokens)


def _step_with_ladder(instance, con, hs, *, prec: int, c_scale) -> dict:
    def attempt(bits):
        res = check_head_step(instance, con, hs, prec=bits, c_scale=c_scale)
        return res["decision"], res

    decision, res, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, MAX_PREC))
    if res is None:
        res = {"head": hs.head, "decision": Decision.UNDECIDED, "prec_bits": bits}
    return res


#: the a-priori bound of the argument (Lemma 4 + the row operations) certainly below the actual perturbation
A_PRIORI_FAILS = Refutation("counterexample", "an induction step with ||Y_c - Y_inf||_2 certainly above "
                            "x_max eps(c) kappa (both sides enclosed): the bound the argument uses fails")
#: at the caller's c, (19) itself fails: ||Y_c - Y_inf||_2 certainly >= sigma_min(Y_inf)
C_PINNED = Refutation("counterexample", "at the pinned c, ||Y_c - Y_inf||_2 certainly >= sigma_min^+(Y_inf) (both "
                      "sides enclosed)", variant="c_scale: c pinned to a multiple of the construction's c")


@statement("appendixB2",
           requires=("n < d", "Assumption 1", "Assumption 2"), refutes=(A_PRIORI_FAILS, C_PINNED),
           margin="sigma_min^+(Y_inf) lower bound - a-priori bound on ||Y_c - Y_inf||_2 (worst head)",
           measure="worst apriori/sigma_min", H=3, n=3, d=5, context="shared")
def check_appendixB2(instance, *, prec: int = 128, seed: int = 0, c_scale: float | None = None,
                     **options) -> Evidence:
    """``c_scale`` pins c = c_scale x the construction's c (a claim about that c)."""
    hyps = theorem_hypotheses(instance, prec=prec, seed=seed)
    claimed = "at every induction step: actual <= a-priori bound < sigma_min^+(Y_inf)" + \
        (" for a finite c" if c_scale is None else f" at c = {c_scale:g} x the construction's c")
    try:
        con = build_key_query_weights(instance, seed=seed, factor=False)
    except ConstructionFailed as exc:
        return conclude("appendixB2", Decision.UNDECIDED, claimed=claimed, hypotheses=hyps,
                        measured={"construction failed at": exc.step}, reason=str(exc))
    steps, rows = [], []
    for hs in con.heads:
        if hs.claim2 is None or not (hs.new_rows or hs.free_rows):
            continue
        res = _step_with_ladder(instance, con, hs, prec=prec, c_scale=c_scale)
        rows.append(res)
        steps.append(Step(f"Head {hs.head}: ||Y_c - Y_inf||_2 <= x_max eps kappa < sigma_min(Y_inf)",
                          "App. B.2 Eq. (19), Lemma 4, Lemma 5",
                          {k: (v.value if isinstance(v, Decision) else v) for k, v in res.items()}))
    certs = [{k: (v.value if isinstance(v, Decision) else v) for k, v in r.items()} for r in rows]
    if not rows:
        return conclude("appendixB2", Decision.TRUE, claimed=claimed, hypotheses=hyps,
                        measured={"steps": 0}, certified=False, method="vacuous: no induction step",
                        reason="nothing to check: the construction has no induction step (H = 1 or the "
                        "target rank is reached by head 1)", trail=steps)
    decision = Decision.all(r["decision"] for r in rows)
    bits = max(r["prec_bits"] for r in rows)
    done = [r for r in rows if "apriori" in r]
    margin = min((r["sigma_min_lower"] - r["apriori"] for r in done if r["sigma_min_lower"] is not None),
                 default=None)
    climbed = [r["head"] for r in done if len(r["c tried"]) > 1 and r["decision"] is Decision.TRUE]
    reason = ""
    if decision is Decision.TRUE and climbed:
        reason = (f"verified; at heads {climbed} the construction's c was too small for the a-priori "
                  "argument and a larger c (Lemma 4's c0 for the certified sigma_min) was used")
    elif decision is Decision.UNDECIDED:
        reason = (f"undecided up to {bits} bits and {C_STEPS} larger c: sigma_min(Y_inf) or the a-priori "
                  "bound could not be separated; raise --prec (or Y_inf is singular)")
    return conclude("appendixB2", decision, claimed=claimed,
                    measured={"steps": len(rows), "c_scale": c_scale, "max prec_bits": bits,
                              "worst apriori/sigma_min": max((r["apriori"] / max(r["sigma_min_lower"] or 0, 1e-300)
                                                              for r in done), default=None)},
                    hypotheses=hyps, certified=True, method="arb balls (two-sided enclosures)",
                    prec_bits=bits, margin=margin, certificates=certs, trail=steps, reason=reason,
                    refutation=A_PRIORI_FAILS if any(r.get("actual<=apriori") is Decision.FALSE for r in rows)
                    else C_PINNED)


@negative_control("appendixB2", "c pinned far below c0 (c / 1000): (19) fails there, both sides enclosed",
                  expect=("refuted",))
def control_small_c(*, prec: int = 128, seed: int = 0) -> Evidence:
    """Pinned c = c/1000: (19) itself fails there (actual >= sigma_min, both sides enclosed)."""
    return check_appendixB2(make_instance(H=3, n=3, d=5, context="shared", seed=seed), prec=prec, seed=seed,
                            c_scale=1e-3)


# -- figure data (the report draws it) --------------------------------------

@figure("margins", statement="appendixB2", title='App. B.2: margins per head',
        caption=(
            'For each head h >= 2 of the construction: a certified (arb) lower bound of the smallest '
            'singular value of the limit block Y_inf, the a-priori bound on the perturbation at the '
            'finite c chosen by Lemma 4, and the perturbation measured. Bound < sigma_min^+ gives '
            'rank(Y_c) >= rank(Y_inf) by Lemma 5.'))
def margins_data(seed: int = 0, H: int = 5, n: int = 4, d: int = 7) -> dict:
    """Per head h >= 2 of the construction (shared contexts, so every head adds
    r-1 rows): certified lower bound of sigma_min(Y_inf), the a-priori bound
    on ||Y_c - Y_inf||_2 and the perturbation actually measured."""
    inst = make_instance(H=H, n=n, d=d, context="shared", seed=seed)
    con = build_key_query_weights(inst, seed=seed)
    out = {"H": H, "n": n, "d": d, "heads": [], "sigma_min_certified_lower": [], "sigma_min_float": [],
           "perturbation_bound": [], "perturbation_actual": [], "c": [], "eps": []}
    for step in con.heads:
        if step.head == 1 or step.limit_block.shape[0] == 0:
            continue
        out["heads"].append(step.head)
        out["sigma_min_certified_lower"].append(lower(sigma_min_lower_bound(step.limit_block)))
        out["sigma_min_float"].append(float(step.sigma_min_limit))
        out["perturbation_bound"].append(float(step.perturbation_bound))
        out["perturbation_actual"].append(float(step.perturbation_actual))
        out["c"].append(float(step.c))
        out["eps"].append(float(step.eps))
    return out
