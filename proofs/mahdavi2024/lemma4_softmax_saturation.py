"""Lemma 4 (App. D): softmax saturation, with an explicit constant.

Statement
---------
If E W' e has a unique maximum at i* with gap g > 0, then for any W,
softmax(E (W + c W') e) -> one-hot(i*) as c -> infinity. Quantitative form
(ours; the paper proves existence only): with R := max_i [(E W e)_i - (E W e)_{i*}],
    || softmax(E (W + c W') e) - one-hot(i*) ||_1 <= 2 (n-1) exp(R - c g),
so c >= c0(eps) := (R + ln(2(n-1)/eps)) / g gives error <= eps.

Why: 1 - s_{i*} <= sum_{i != i*} exp(b_i - b_{i*} + c(a'_i - a'_{i*})) <= (n-1) e^{R - cg}
and the l1 distance to the one-hot vector is 2 (1 - s_{i*}).

Construction
------------
The setting of Claim 2: J = the first min(r-1, T-1) examples, W' = v w^T
from :func:`~proofs.lemma3_rank_one_saturation.build_saturation_vectors`,
the saturated examples are the others; the base W is Claim 1's W* on J
(``base="claim1"``) or a Gaussian matrix (``base="gaussian"``, scale
``base_scale``: "for any W").

Checks
------
For every saturated example, in arb balls (logits b = E W e and
a' = (w^T e) E v from the exact float64 data, softmax by
:func:`verifier.model.mha_balls.softmax_ball`):

1. Hypothesis: the gap g = a'_{i*} - max_{i != i*} a'_i is certainly > 0.
2. c0(eps) as a ball; c0_up = a float >= it (so c = c0_up is certainly >= c0).
3. For c = m c0_up, m in ``multipliers`` (default 1/4, 1, 10, 1000; at
   1000 c0 the logits are in the thousands: no overflow, arb exponents are
   unbounded): err(c) <= 2(n-1) exp(R - c g), with
   err = ||s - one-hot||_1 = 2 sum_{i != i*} s_i (exact since sum s = 1;
   this avoids the cancellation in 1 - s_{i*}).
4. For m >= ``eps_from`` (default 1, i.e. c >= c0): err(c) <= eps.
The inequality is tight up to a factor 1/(1 + S), S = e^{R - cg}, when
n = 2 and the base logits favour the other token: err and the bound then
agree to about (cg - R) log10(e) digits (83,000 at c = 1000 c0 on some
instances), beyond any ball precision.  Step 3 is therefore decided on the
EXACT logits (rationals: the float64 data, W and W' = v w^T are dyadic):
with delta_i = z_i - z_{i*} and y_i = delta_i - (R - c g) exact rationals,
err <= factor (n-1) e^{U - cg} is equivalent to
    D := 2 sum_i expm1(y_i) + (2 - factor)(n-1) - factor (n-1) sum_i e^{delta_i} <= 0
(:func:`saturation_margin_ball`), where every y_i <= 0 for Lemma 4's bound
and a y_i = 0 exactly gives expm1 = 0 exactly: no cancellation is left to
the arithmetic.  The balls of err and of the bound are still reported.

Not established
---------------
The bound is a theorem with a three-line proof (above); the instance check
guards the constants and the implementation.  Only the listed c are checked.

References
----------
arXiv:2306.02010v3, App. D (Lemma 4, Eq. 28), used in App. B.1 (Claim 2)
and App. B.2 (a finite c).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_lemma4(make_instance(H=2, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb, fmpq

from verifier.arith.balls import ball_max, to_arb_mat
from verifier.arith.compare import (
    Decision,
    certainly_less_equal,
    certainly_positive,
    upper,
    with_precision_ladder,
    workprec,
)
from verifier.arith.exact import to_fmpq, to_fmpq_mat
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed, InsufficientPrecision, InvalidInstance
from verifier.model import mha as model
from verifier.model.mha_balls import logits_ball, softmax_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import figure, negative_control, statement

from .claim1_fit_one_head import build_claim1_attention, build_claim1_attention_exact, interior_targets
from .data_hypotheses import queries_independent
from .lemma3_rank_one_saturation import build_saturation_vectors, saturation_profile

MULTIPLIERS = (0.25, 1.0, 10.0, 1000.0)
MAX_BITS = 1 << 18  # precision cap for the nearly tight n = 2 case
BOUNDS = {  # name -> (text, factor, uses R)
    "lemma4": ("2(n-1) exp(R - c g)", 2, True),
    "no-R": ("2(n-1) exp(-c g) (R dropped: wrong)", 2, False),
    "no-2": ("(n-1) exp(R - c g) (factor 2 dropped: wrong)", 1, True),
}


#: Lemma 4's bound (or err <= eps at c >= c0) certainly exceeded on a saturated example
ERR_ABOVE = Refutation("counterexample", "a saturated example and a c at which ||softmax - one-hot||_1 certainly "
                       "exceeds 2(n-1) exp(R - c g) (decided on the exact logits), or eps at c >= c0(eps)")
#: a bound without its factor 2 or without R (a wrong constant)
WRONG_BOUND = Refutation("counterexample", "a saturated example at which the error certainly exceeds the altered "
                         "bound", variant="bound='no-2' or 'no-R': a wrong constant")
#: err <= eps claimed below c0(eps)
BELOW_C0 = Refutation("counterexample", "a saturated example at c < c0(eps) with error certainly above eps",
                      variant="eps_from < 1: 'err <= eps' claimed below c0(eps)")


def saturation_constant(R: float, g: float, eps: float, n: int) -> float:
    """c0(eps) = (R + ln(2(n-1)/eps)) / g (0 when n = 1: softmax is already one-hot)."""
    if n <= 1:
        return 0.0
    return max(0.0, (R + math.log(2 * (n - 1) / eps)) / g)


def largest_saturation_constant(R, g, eps: float, n: int) -> float:
    """max_t c0(eps) over the examples (R, g arrays): the same floats as
    :func:`saturation_constant` one by one (the same IEEE operations,
    elementwise), in one pass."""
    if n <= 1:
        return 0.0
    c = (np.asarray(R, dtype=np.float64) + math.log(2 * (n - 1) / eps)) / np.asarray(g, dtype=np.float64)
    return float(np.max(np.where(c > 0.0, c, 0.0)))  # max(0.0, c) as Python's max reads it (NaN -> 0.0)


def saturation_error_bound(R: float, g: float, c: float, n: int) -> float:
    """2 (n-1) exp(R - c g): the l1 distance bound of Lemma 4."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) * math.exp(R - c * g)


def logit_spread(base_logits: np.ndarray, istar: np.ndarray) -> np.ndarray:
    """R(t) = max_i b_i - b_{i*} for base logits b = E W e (shape (k, n))."""
    k = base_logits.shape[0]
    return base_logits.max(axis=1) - base_logits[np.arange(k), istar]


def build_saturation_setting(instance, *, seed: int = 0, base: str = "claim1", base_scale: float = 1.0) -> dict:
    """(W, v, w, J, saturated) as Claim 2 uses them (see the module docstring)."""
    E, e = instance.contexts, np.asarray(instance.queries)
    T, n, d = E.shape
    J = list(range(min(instance.r - 1, T - 1)))
    rng = rng_for(seed, "lemma4")
    if base == "claim1":
        targets = interior_targets(rng, len(J), n)
        try:
            W = build_claim1_attention(model.select(E, J), e[J], targets) if J else np.zeros((d, d))
        except ConstructionFailed:  # float64 gave up (near-degenerate data): any W serves Lemma 4
            try:  # the exact Claim 1 W, rounded
                B, P = build_claim1_attention_exact(model.select(E, J), e[J], np.log(targets))
                W = np.array([[float(x) for x in row] for row in (B * P).tolist()])
            except ConstructionFailed:  # exactly singular data: a Gaussian base
                W = rng.standard_normal((d, d)) / np.sqrt(d)
    elif base == "gaussian":
        W = base_scale * rng.standard_normal((d, d)) / np.sqrt(d)
    else:
        raise InvalidInstance(f"base = {base!r} must be 'claim1' or 'gaussian'")
    v, w = build_saturation_vectors(e, J, rng)
    return {"W": W, "v": v, "w": w, "J": J, "saturated": list(range(len(J), T))}


def saturation_logits(E, e, W, v, w) -> tuple[list, list]:
    """Eq. (1) in balls (verifier.model.mha_balls) for one example: b = E W e and
    a' = E W' e with W' = v w^T formed in balls."""
    E1, e1 = np.asarray(E)[None], np.asarray(e)[None]
    b = logits_ball(E1, e1, W=[W])[0][0]
    W_prime = to_arb_mat(np.asarray(v)[:, None]) * to_arb_mat(np.asarray(w)[None, :])
    return b, logits_ball(E1, e1, W=[W_prime])[0][0]


def saturation_constants_ball(b, ap, istar: int) -> tuple[arb, arb]:
    """Lemma 4's R = max_i b_i - b_{i*} and gap g = a'_{i*} - max_{i != i*} a'_i, in balls."""
    n = len(ap)
    return ball_max(b) - b[istar], ap[istar] - ball_max([ap[i] for i in range(n) if i != istar])


def c0_ball(R: arb, g: arb, eps: float, n: int) -> arb:
    """c0(eps) = (R + ln(2(n-1)/eps)) / g, in balls."""
    return (R + (arb(2 * (n - 1)) / arb(eps)).log()) / g  # eps read exactly (a float), not 2(n-1)/eps rounded


def error_bound_ball(R: arb, g: arb, c, n: int, *, factor: int = 2, uses_R: bool = True) -> arb:
    """factor (n-1) exp(R - c g): Lemma 4's l1 bound (factor 2, with R) in balls."""
    return factor * (n - 1) * ((R if uses_R else arb(0)) - arb(c) * g).exp()


def exact_saturation_logits(E, e, W, v, w) -> tuple[list, list]:
    """b = E W e and a' = (E v)(w . e) as exact rationals (the float64 entries
    are dyadic rationals)."""
    Eq, Wq, eq = to_fmpq_mat(E), to_fmpq_mat(W), to_fmpq_mat(np.asarray(e)[:, None])
    b = Eq * (Wq * eq)
    Ev = Eq * to_fmpq_mat(np.asarray(v)[:, None])
    we = (to_fmpq_mat(np.asarray(w)[None, :]) * eq)[0, 0]
    return [b[i, 0] for i in range(b.nrows())], [Ev[i, 0] * we for i in range(Ev.nrows())]


def saturation_margin_ball(bq, aq, istar: int, c: float, *, factor: int = 2, uses_R: bool = True) -> arb:
    """D with err(c) <= factor (n-1) exp(U - c g) iff D <= 0 (module docstring),
    from the exact logits; U = R (Lemma 4) or 0 (the wrong bound without R)."""
    n, cq = len(bq), to_fmpq(c)
    others = [i for i in range(n) if i != istar]
    R = max(bq) - bq[istar]
    g = aq[istar] - max(aq[i] for i in others)
    shift = (R if uses_R else fmpq(0)) - cq * g
    delta = [(bq[i] - bq[istar]) + cq * (aq[i] - aq[istar]) for i in others]
    expm1 = sum((arb(d - shift).expm1() for d in delta), arb(0))
    tail = sum((arb(d).exp() for d in delta), arb(0))
    return 2 * expm1 + (2 - factor) * (n - 1) - factor * (n - 1) * tail


def saturation_at(b, ap, istar: int, c: float, eps: float, bound: str, claim_eps: bool,
                  exact) -> tuple[Decision, dict]:
    """err(c) <= bound(c) (and <= eps when ``claim_eps``) at the current precision:
    the first decided by D <= 0 on ``exact`` = (b, a') as rationals; the balls
    of err and of the bound (from the balls b, a') are reported."""
    n = len(b)
    _, factor, uses_R = BOUNDS[bound]
    R, g = saturation_constants_ball(b, ap, istar)
    s = softmax_ball([bi + arb(c) * ai for bi, ai in zip(b, ap)])
    err = 2 * sum((s[i] for i in range(n) if i != istar), arb(0))  # = ||s - one-hot||_1 since sum s = 1
    bnd = error_bound_ball(R, g, c, n, factor=factor, uses_R=uses_R)
    decs = {"err <= bound": certainly_less_equal(
        saturation_margin_ball(*exact, istar, c, factor=factor, uses_R=uses_R), arb(0))}
    if claim_eps:
        decs["err <= eps"] = certainly_less_equal(err, arb(eps))
    return Decision.all(decs.values()), {"err": err, "bound": bnd, "decisions": decs}


@statement("lemma4", refutes=(ERR_ABOVE, WRONG_BOUND, BELOW_C0),
           requires=("E W' e has a unique maximum (gap g > 0)", "Assumption 2"), H=2, n=3, d=5)
def check_lemma4(instance, *, prec: int = 128, seed: int = 0, eps: float = 1e-3, multipliers=MULTIPLIERS,
                 eps_from: float = 1.0, bound: str = "lemma4", base: str = "claim1", base_scale: float = 1.0,
                 **options) -> Evidence:
    """Lemma 4's bound on every saturated example, c = m c0(eps) for m in ``multipliers``."""
    if not 0 < eps < 2 or bound not in BOUNDS:
        raise InvalidInstance(f"need 0 < eps < 2 (got {eps}) and bound in {sorted(BOUNDS)} (got {bound!r})")
    try:
        st = build_saturation_setting(instance, seed=seed, base=base, base_scale=base_scale)
    except ConstructionFailed as exc:
        if exc.step != "Lemma 3":
            raise
        return lemma3_unavailable(instance, exc, eps=eps, multipliers=multipliers)
    E, e, n = instance.contexts, np.asarray(instance.queries), instance.n
    rows, gap_status, certs, decisions, worst = [], [], [], [], {}
    for t in st["saturated"] if n > 1 else []:
        with workprec(prec):
            b, ap = saturation_logits(E[t], e[t], st["W"], st["v"], st["w"])
            exact = exact_saturation_logits(E[t], e[t], st["W"], st["v"], st["w"])
            istar = max(range(n), key=lambda i: exact[1][i])  # the exact argmax of a
            R, g = saturation_constants_ball(b, ap, istar)
            if exact[1][istar] == max(exact[1][i] for i in range(n) if i != istar):  # a tie: g = 0 exactly
                gap_status.append(Decision.FALSE)
                rows.append({"example": t, "i*": istar, "g": "0 (exact tie)", "checks": []})
                continue
            gap_status.append(certainly_positive(g))
            if gap_status[-1] is not Decision.TRUE:  # no certified gap: c0(eps) = (R + log(...)) / g is undefined
                rows.append({"example": t, "i*": istar, "g": str(g), "R": str(R), "checks": [],
                             "skipped": "the gap g is not certainly positive: c0(eps) undefined"})
                continue
            c0 = c0_ball(R, g, eps, n)
            c0_up = upper(c0)
        if not math.isfinite(c0_up):  # g > 0 is certified (above), on the ball: never on its float64 midpoint
            raise InsufficientPrecision(f"Lemma 4: c0(eps) = {c0} of example {t} (gap g = {g}) exceeds the float64 "
                                        "range of the multipliers c = m c0")
        c0_float = saturation_constant(float(R.mid()), float(g.mid()), eps, n)
        row = {"example": t, "i*": istar, "g": str(g), "R": str(R), "c0 (ball)": str(c0), "c0_up": c0_up,
               "c0 float (saturation_constant)": c0_float, "checks": []}
        for m in multipliers:
            c = float(m) * c0_up
            need = 64 + 1.5 * math.log2(math.e) * max(0.0, c * float(g.mid()) - float(R.mid()))
            cap = int(min(MAX_BITS, max(4096, 2 ** math.ceil(math.log2(need)))))

            def attempt(bits, t=t, c=c, m=m, exact=exact):
                bb, aa = saturation_logits(E[t], e[t], st["W"], st["v"], st["w"])
                return saturation_at(bb, aa, istar, c, eps, bound, m >= eps_from, exact=exact)

            dec, pay, bits = with_precision_ladder(attempt, prec=prec, max_prec=cap)
            decisions.append(dec)
            entry = {"c/c0": m, "c": c, "decision": dec.value, "prec_bits": bits}
            if pay is not None:
                entry.update({"err (l1)": str(pay["err"]), "bound": str(pay["bound"]),
                              **{k: v.value for k, v in pay["decisions"].items()}})
                if dec is Decision.FALSE and not worst:
                    worst = {"example": t, "c/c0": m, **{k: v.value for k, v in pay["decisions"].items()}}
            row["checks"].append(entry)
        rows.append(row)
    gap = Decision.all(gap_status) if gap_status else Decision.TRUE
    hyps = [Hypothesis("E W' e has a unique maximum, gap g > 0 (Eq. 21)",
                       {Decision.TRUE: "certified", Decision.FALSE: "refuted", Decision.UNDECIDED: "evidence"}[gap],
                       f"{len(gap_status)} saturated examples, gaps certified in arb balls")]
    decision = Decision.all(decisions) if decisions else Decision.TRUE
    certs = rows[:6]
    text = BOUNDS[bound][0]
    trail = [Step(f"W' = v w^T from Lemma 3 (J = first {len(st['J'])} examples); base W: {base}",
                  uses="Lemma 3, Claim 2"),
             Step("per saturated example: i*, gap g, spread R and c0(eps) as balls", uses="Lemma 4"),
             Step(f"err(c) <= {text} at c/c0 in {list(multipliers)}; err <= eps for c/c0 >= {eps_from}",
                  uses="Lemma 4", data={"decision": decision.value, "first failure": worst or None})]
    return conclude(
        "lemma4", decision,
        claimed={"bound": text, "eps": eps, "err <= eps for c/c0 >=": eps_from, "c/c0": list(multipliers)},
        measured={"saturated examples": len(rows), "checks": len(decisions), "n": n,
                  "max prec_bits": max((c["prec_bits"] for r in rows for c in r["checks"]), default=prec),
                  "first failure": worst or None},
        hypotheses=hyps, certified=True, method="arb balls", prec_bits=prec, certificates=certs,
        instance=instance.summary(), trail=trail,
        reason="" if decision is not Decision.FALSE else
        f"fails at example {worst['example']}, c = {worst['c/c0']} c0: {worst}",
        refutation=WRONG_BOUND if bound != "lemma4" else BELOW_C0 if eps_from < 1 else ERR_ABOVE)


def lemma3_unavailable(instance, exc: ConstructionFailed, *, eps: float, multipliers) -> Evidence:
    """Lemma 3's W' needs the queries of J independent (Assumption 1 on
    them); the float construction found them dependent.  Decided exactly
    (rank over Q) and at the data's precision (certified robustness):
    dependent -> refuted, dependent at an explicit point of the data's
    intervals -> fails-at-precision (both hypotheses-unmet); independent ->
    the float construction could not proceed (inconclusive)."""
    J = list(range(min(instance.r - 1, instance.T - 1)))
    hyp = queries_independent(instance, J, f"the queries e^(j), j in J = {J} (Lemma 3's W' = v w^T)")
    return conclude("lemma4", Decision.UNDECIDED, claimed={"bound": BOUNDS["lemma4"][0], "eps": eps,
                                                           "c/c0": list(multipliers)},
                    measured={"construction failed at": exc.step}, hypotheses=[hyp], method="exact rationals",
                    instance=instance.summary(), reason=str(exc),
                    trail=[Step(f"Construction failed at {exc.step}: {exc}", uses="Lemma 3")])


# n = 2 instance on which the saturated token is not the base logits' argmax
# (the nearly tight case): both wrong bounds fail there.
CONTROL_INSTANCE = dict(H=2, n=2, d=3, T=5, seed=1)  # pinned: example 2 is nearly tight


@negative_control("lemma4", "c = c0(eps)/4 < c0: the claim 'error <= eps' fails (eps = 1e-6)", expect=("refuted",))
def control_lemma4_c_below_c0(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_lemma4(make_instance(H=2, n=3, d=5, seed=seed), prec=prec, seed=seed, eps=1e-6,
                        multipliers=(0.25,), eps_from=0.25)


@negative_control("lemma4", "bound without the factor 2: (n-1) exp(R - c g)", expect=("refuted",))
def control_lemma4_missing_factor_two(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_lemma4(make_instance(**CONTROL_INSTANCE), prec=prec, seed=0, bound="no-2")


@negative_control("lemma4", "bound without R: 2(n-1) exp(-c g)", expect=("refuted",))
def control_lemma4_missing_spread(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_lemma4(make_instance(**CONTROL_INSTANCE), prec=prec, seed=0, bound="no-R")


# -- figure data (the report draws it) --------------------------------------

@figure("saturation", statement="lemma4", title='Lemma 4: c0(eps) vs eps',
        caption=(
            "Left: c0(eps) = (R + ln(2(n-1)/eps))/g for three examples off J, with W' = v w^T from "
            "Lemma 3 and a random base W (R: logit spread of W, g: gap of W'). Right: the l1 distance "
            'of the softmax to its one-hot limit actually reached at c = c0(eps) (float64), under the '
            'promise eps.'))
def saturation_data(seed: int = 0, n: int = 4, d: int = 7, examples: int = 3) -> dict:
    """c0(eps) for real (R, g) from a Lemma 3 direction W' and a random base W,
    and the l1 error actually reached at c = c0(eps)."""
    rng = np.random.default_rng(seed)
    inst = make_instance(H=1, n=n, d=d, T=n - 1 + examples, seed=seed)
    E, e = np.asarray(inst.contexts), np.asarray(inst.queries)
    J, rest = list(range(n - 1)), list(range(n - 1, inst.T))
    v, w = build_saturation_vectors(e, J, rng)
    istar, gap, _ = saturation_profile(E, e, v, w, rest)
    W = rng.standard_normal((d, d))
    Wp = np.outer(v, w)
    base = model.logits_from_attention_matrices(E[rest], e[rest], W[None])[:, 0]
    R = logit_spread(base, istar)
    eps = [float(x) for x in np.logspace(-12, math.log10(0.5), 23)]
    out = {"n": n, "eps": eps, "examples": []}
    for k, t in enumerate(rest):
        c0 = [saturation_constant(float(R[k]), float(gap[k]), x, n) for x in eps]
        err = []
        for c in c0:
            a = model.logits_from_attention_matrices(E[t:t + 1], e[t:t + 1], (W + c * Wp)[None])[0, 0]
            s = model.softmax(a)  # ||s - one-hot||_1 = 2 (1 - s_i*) = 2 sum_{j != i*} s_j: the sum, relatively accurate
            err.append(float(2 * np.delete(s, istar[k]).sum()))
        out["examples"].append({"t": t, "R": float(R[k]), "g": float(gap[k]), "c0": c0, "error_at_c0": err})
    return out
