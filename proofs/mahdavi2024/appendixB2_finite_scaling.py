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
enclosed; the actual ||Y_c - Y_inf||_2 bounded above; sigma_min(Y_inf)
bounded below (verifier.arith.singular_values.sigma_min_lower_bound). Verified when, at every
step, actual <= a-priori bound < sigma_min(Y_inf) certainly.

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

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import ball_max, spectral_norm_upper, to_arb_mat
from verifier.arith.compare import Decision, certainly_less, certainly_less_equal, upper, workprec
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model.mha_balls import feature_matrix_ball, logits_ball
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.registry import figure, negative_control, statement

from .lemma4_softmax_saturation import error_bound_ball, saturation_constants_ball
from .proposition1_construction import build_key_query_weights
from .proposition1_rank_induction import theorem_hypotheses


def _token_rows(E, rows, istar) -> arb_mat:
    return to_arb_mat(np.asarray([E[t][i] for t, i in zip(rows, istar)]))


def _lemma4_eps_ball(E, e, W_eff: arb_mat, W_prime: arb_mat, c: arb, rows, istar) -> list:
    """eps_i = 2(n-1) exp(R_i - c g_i) (Lemma 4) in balls, for each saturated row."""
    L = logits_ball(E, e, W=[W_eff, W_prime], rows=rows)  # b = E W*_eff e, a' = E W' e
    out = []
    for (b, ap), i in zip(L, istar):
        R, g = saturation_constants_ball(b, ap, i)
        out.append(error_bound_ball(R, g, c, E.shape[1]))
    return out


def check_head_step(instance, con, hs, *, prec: int, c_scale: float = 1.0) -> dict:
    """Certify (19) for one induction step; returns decisions and enclosures."""
    E, e = instance.contexts, instance.queries
    c2 = hs.claim2
    I, J, F = list(hs.basis_before), list(hs.new_rows), list(hs.free_rows)
    W_h = con.W[hs.head - 1]
    with workprec(prec):
        Wp = to_arb_mat(c2.v[:, None]) * to_arb_mat(c2.w[None, :])  # W' = v w^T in balls
        c_used = arb(c2.c) * arb(c_scale)
        W_eff = to_arb_mat(W_h) - arb(c2.c) * Wp  # W^h = W*_eff + c W' exactly
        W_run = W_eff + c_used * Wp
        rows_sat = I + F
        ist = {t: k for t, k in zip(list(c2.saturated), list(c2.istar))}
        istar = [ist[t] for t in rows_sat]
        Zc = feature_matrix_ball(E, e, W=[W_run], rows=I + J + F)  # Z_h(c) in balls, rows I, J, F
        Zc_I = arb_mat([[Zc[a, k] for k in range(Zc.ncols())] for a in range(len(I))])
        Zc_lower = arb_mat([[Zc[len(I) + a, k] for k in range(Zc.ncols())] for a in range(len(J) + len(F))])
        Zinf_I = _token_rows(E, I, istar[:len(I)])
        A = to_arb_mat(hs.coefficients) if len(I) else None
        Y_c = Zc_lower - (A * Zc_I if A is not None else 0)
        Y_inf_rows = [[Zc_lower[a, k] for k in range(Zc.ncols())] for a in range(len(J))]
        if F:
            Zinf_F = _token_rows(E, F, istar[len(I):])
            Y_inf_rows += [[Zinf_F[a, k] for k in range(Zc.ncols())] for a in range(len(F))]
        Y_inf = arb_mat(Y_inf_rows) - (A * Zinf_I if A is not None else 0)
        actual = spectral_norm_upper(Y_c - Y_inf)
        eps_max = ball_max(_lemma4_eps_ball(E, e, W_eff, Wp, c_used, rows_sat, istar))
        x_max = _x_max_ball(E, instance)
        delta = [0] * len(J) + [1] * len(F)
        absA = [[abs(A[a, b]) for b in range(A.ncols())] for a in range(A.nrows())] if A is not None else []
        kappa = sum(((delta[a] + sum(absA[a], arb(0))) ** 2 for a in range(len(delta))), arb(0)).sqrt()
        apriori = x_max * eps_max * kappa
        try:
            sig = sigma_min_lower_bound(Y_inf, prec=prec)
            sig_dec = Decision.TRUE
        except InsufficientPrecision:
            sig, sig_dec = arb(0), Decision.UNDECIDED
        d1 = certainly_less_equal(actual, apriori)
        d2 = certainly_less(apriori, sig) if sig_dec is Decision.TRUE else Decision.UNDECIDED
        sig_up = _sigma_min_upper(Y_inf)
        if d2 is not Decision.TRUE and certainly_less(sig_up, apriori) is Decision.TRUE:
            d2 = Decision.FALSE  # the a-priori bound certainly exceeds sigma_min(Y_inf)
        return {"head": hs.head, "c": float(c_used.mid()), "eps": upper(eps_max), "x_max": upper(x_max),
                "kappa": upper(kappa), "apriori": upper(apriori), "actual": upper(actual),
                "sigma_min_lower": float(sig.mid()), "sigma_min_upper": upper(sig_up),
                "actual<=apriori": d1, "apriori<sigma": d2}


def _sigma_min_upper(Y: arb_mat) -> arb:
    """sigma_min(Y) <= ||x^T Y|| / ||x|| for any x (x: the float left singular
    vector of the smallest singular value), evaluated in balls."""
    mid = np.asarray([[float(Y[a, k].mid()) for k in range(Y.ncols())] for a in range(Y.nrows())])
    U, _, _ = np.linalg.svd(mid, full_matrices=False)
    x = to_arb_mat(U[:, -1][None, :])
    xy = x * Y
    return ((xy * xy.transpose())[0, 0] / (x * x.transpose())[0, 0]).sqrt()


def _x_max_ball(E, instance) -> arb:
    """The largest token norm over the dataset, in balls."""
    tokens = E[0] if instance.shared_context else np.asarray(E).reshape(-1, E.shape[2])
    return ball_max(sum((arb(float(x)) ** 2 for x in row), arb(0)).sqrt() for row in tokens)


@statement("appendixB2", H=3, n=3, d=5, context="shared")
def check_appendixB2(instance, *, prec: int = 128, seed: int = 0, c_scale: float = 1.0, **options) -> Evidence:
    hyps = theorem_hypotheses(instance, prec=prec, seed=seed)
    try:
        con = build_key_query_weights(instance, seed=seed, factor=False)
    except ConstructionFailed as exc:
        return conclude("appendixB2", Decision.UNDECIDED, claimed="(19) at every step", hypotheses=hyps,
                        measured={"construction failed at": exc.step}, reason=str(exc))
    steps, rows = [], []
    for hs in con.heads:
        if hs.claim2 is None or not (hs.new_rows or hs.free_rows):
            continue
        res = check_head_step(instance, con, hs, prec=prec, c_scale=c_scale)
        rows.append(res)
        steps.append(Step(f"Head {hs.head}: ||Y_c - Y_inf||_2 <= x_max eps kappa < sigma_min(Y_inf)",
                          "App. B.2 Eq. (19), Lemma 4, Lemma 5",
                          {k: (v.value if isinstance(v, Decision) else v) for k, v in res.items()}))
    decision = Decision.all([r["actual<=apriori"] for r in rows] + [r["apriori<sigma"] for r in rows]) \
        if rows else Decision.TRUE
    margin = min((r["sigma_min_lower"] - r["apriori"] for r in rows), default=None)
    return conclude("appendixB2", decision,
                    claimed="at every induction step: actual <= a-priori bound < sigma_min^+(Y_inf)",
                    measured={"steps": len(rows), "c_scale": c_scale,
                              "worst apriori/sigma_min": max((r["apriori"] / max(r["sigma_min_lower"], 1e-300)
                                                              for r in rows), default=0.0)},
                    hypotheses=hyps, certified=decision is not Decision.UNDECIDED, method="arb balls",
                    prec_bits=prec, margin=margin,
                    certificates=[{k: (v.value if isinstance(v, Decision) else v) for k, v in r.items()} for r in rows],
                    trail=steps)


@negative_control("appendixB2", "c far below c0 (c / 1000): the a-priori bound exceeds sigma_min",
                  expect=("refuted",))
def control_small_c(*, prec: int = 128, seed: int = 0) -> Evidence:
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
        out["sigma_min_certified_lower"].append(float(sigma_min_lower_bound(step.limit_block).mid()))
        out["sigma_min_float"].append(float(step.sigma_min_limit))
        out["perturbation_bound"].append(float(step.perturbation_bound))
        out["perturbation_actual"].append(float(step.perturbation_actual))
        out["c"].append(float(step.c))
        out["eps"].append(float(step.eps))
    return out
