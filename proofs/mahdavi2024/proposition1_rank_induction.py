"""Proposition 1 (Sec. 4.1, App. B): rank(Z) >= min(H(r-1)+1, T).

Statement
---------
Let n < d, d_h >= 1, r = min(n, d_h), and let Assumptions 1 and 2 hold. Then
there are key/query weights W_K^h, W_Q^h in R^{d x d_h} (h in [H]) such that
the feature matrix Z in R^{T x Hd} of Eq. (7) has
    rank(Z) >= min(H(r-1)+1, T).

Construction
------------
The induction on heads of App. B, in :mod:`proofs.mahdavi2024.proposition1_construction`:
head 1 fits r examples (Claim 1); head h >= 2 fits r-1 examples that are
dependent on the rows already independent (Claim 2: W* + c W', Lemma 3's
rank-one W', Lemma 4's explicit c), after the row operations that zero their
old blocks (Lemma 1), with c made finite by App. B.2. Each W^h (rank <= r) is
factored as W_K^h (W_Q^h)^T.

Checks
------
1. Hypotheses on the instance: n < d (shapes), Assumption 1 (Kruskal rank of
   the queries >= n: exhaustion, or random subsets as evidence), Assumption 2
   (exact / certified rank of every context).
2. Conclusion, certified: Z is enclosed in Arb balls from the FACTORED float64
   weights (the weights as returned), and a target x target minor of the
   rows the induction made independent is proved nonsingular
   (||I - R A||_inf < 1, verifier.arith.rank): rank(Z) >= min(H(r-1)+1, T).
3. The trail: per head, the rows I and J, the row-operation coefficients, the
   targets, W', c, eps and the rank after the step.

Not established
---------------
The proposition is an existence statement; a random instance shows the
construction works there, not for every instance. A failed random draw (e.g.
targets that make X singular) would make the construction fail without
refuting the paper: that is "inconclusive", naming the step.

References
----------
arXiv:2306.02010v3, Sec. 4.1 (Proposition 1), App. B, B.1, B.2.

>>> from verifier.data.instances import make_instance
>>> ev = check_proposition1(make_instance(H=3, n=3, d=5, context="shared", seed=0))
>>> ev.verdict, ev.certified, ev.measured["certified_rank"]
('verified', True, 7)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from verifier.arith.compare import Decision, workprec
from verifier.arith.float_certificates import inverse_beside
from verifier.arith.rank import certify_rank_lower_bound, certify_rank_lower_bound_lazy, numerical_rank
from verifier.arith.rank_caps import DIMENSIONS, RankCap, check_against_cap, structural_rank_cap
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model import mha as model
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.mha_float import feature_columns_float_ball
from verifier.statements.at_precision import REMEDY, UNDECIDED
from verifier.statements.evidence import Evidence, Hypothesis, Step, brief, conclude, hypothesis_from_evidence
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, figure, negative_control, statement

from .assumption1_query_kruskal_rank import check_assumption1, n_less_than_d, prefetch_assumption1
from .assumption2_context_rank import check_assumption2
from .proposition1_construction import Construction, build_key_query_weights

__all__ = ["check_proposition1", "theorem_hypotheses", "prefetch_theorem_hypotheses", "certify_construction_rank", "construction_trail",
           "build_key_query_weights"]


def theorem_hypotheses(instance, *, prec: int = 128, seed: int = 0, samples: int | None = None,
                       exhaustive_limit: int | None = None) -> list[Hypothesis]:
    """The hypotheses shared by Prop. 1 and Thm. 1: n < d, Assumptions 1-2.
    ``samples``: random n-subsets for Assumption 1's evidence when the
    subsets cannot be exhausted (default: the checker's, the paper's 5000
    within a work budget: :func:`.definition1_kruskal_rank.sample_size`)."""
    a1 = {} if samples is None else {"samples": int(samples)}
    if exhaustive_limit is not None:
        a1["exhaustive_limit"] = int(exhaustive_limit)
    return [
        n_less_than_d(instance),
        Hypothesis("d_h >= 1", "certified", f"d_h = {instance.d_h}"),
        hypothesis_from_evidence("Assumption 1", check_assumption1(instance, prec=prec, seed=seed, **a1)),
        hypothesis_from_evidence("Assumption 2", check_assumption2(instance, prec=prec, seed=seed)),
    ]


def prefetch_theorem_hypotheses(instance, *, seed: int = 0, samples: int | None = None,
                                exhaustive_limit: int | None = None) -> bool:
    """Start the float part of :func:`theorem_hypotheses`' Assumption 1 on a
    second core (:func:`.assumption1_query_kruskal_rank.prefetch_assumption1`),
    so that the caller builds the construction meanwhile and calls
    :func:`theorem_hypotheses` after: the same hypotheses either way."""
    a1 = {} if exhaustive_limit is None else {"exhaustive_limit": int(exhaustive_limit)}
    return prefetch_assumption1(instance, seed=seed, samples=samples, **a1)


#: Largest minor (k x k) whose float enclosure is first tried with plain products in the logits (then accurate
#: ones): Fig. 2's k = 621 and ViT-base's 757 certify with them (25 ms less at Fig. 2); the 7B-class layer's
#: k = 4065 does not (a second enclosure and inverse: 109 s where one takes 34)
PLAIN_FIRST_UP_TO = 1024

#: Largest Z (entries) whose minor may be re-chosen by a column-pivoted QR of
#: the whole matrix when the induction's block columns do not certify
#: (a copy of Z and O(T^2 Hd) work: hours and > 20 GB at the 7B-class layer).
PIVOTED_QR_LIMIT = 2**27


def certify_construction_rank(instance, con: Construction, k: int, *, prec: int = 128, method: str = "auto",
                              backend=None, cap: RankCap | None = None):
    """Certify rank(Z) >= k on the induction's independent rows (then the other
    rows, when k exceeds them), with Z enclosed from the factored weights
    (only the chosen minor: arb balls, or rigorous float balls for the float path; R first from the
    construction's float minor, inverted on a second core).  Columns come from the induction's block
    structure (:meth:`Construction.minor_columns`); if that minor cannot be certified, from a pivoted QR of
    the rows.  Cross-checked against the structural cap of the data (:func:`structural_rank_cap`): a certified
    k above it raises CertificateConflict.  ``rows`` are rows of Z (the certifier works on Z[rows])."""
    basis = list(con.basis)
    in_basis = set(basis)
    rows = (basis + [t for t in range(instance.T) if t not in in_basis])[:k]  # k > T: all rows
    E, e = instance.balls()  # a user's floats: Z enclosed for every value they stand for

    def minor_ball(sub_rows, cols):
        return feature_matrix_ball(E, e, con.W_K, con.W_Q, rows=[rows[i] for i in sub_rows], cols=cols)

    beside = []  # a float inverse of the construction's own minor, on a second core while the ball is built

    def minor_float(sub_rows, cols, accurate=True):
        ball = feature_columns_float_ball(E, e, con.W_K, con.W_Q, rows=[rows[i] for i in sub_rows], cols=cols,
                                          backend=backend, accurate=accurate)
        return replace(ball, R_first=beside.pop().result) if beside else ball  # tried first: any R is valid

    # small minors: the logits' products plain first (enough unless they cancel deeply), then accurate (both
    # rigorous balls); large ones accurate at once, where a failed first try costs a second inverse
    tiers = (lambda r, c: minor_float(r, c, accurate=False), minor_float) if k <= PLAIN_FIRST_UP_TO else minor_float
    opts = dict(prec=prec, max_prec=max(prec, 512), method=method, backend=backend, minor_float=tiers)
    with workprec(prec):
        cols = con.minor_columns(k) if k <= len(basis) else ()
        cert = None
        if cols:  # only the shape of the midpoint is read: no copy of Z (4.3 GB at the 7B-class layer)
            shape_only = np.broadcast_to(np.float64(0.0), (len(rows), con.Z.shape[1]))
            job = inverse_beside(con.Z, rows, cols, backend) if k <= PLAIN_FIRST_UP_TO else None
            beside[:] = [job] if job is not None else []
            cert = certify_rank_lower_bound_lazy(shape_only, k, minor_ball, cols=cols, **opts)
            if job is not None:  # taken, or not needed: it ends within the check
                job.wait()
            if cert.decision is Decision.TRUE:
                cert = replace(cert, method=cert.method + "; columns from the induction's blocks")
        if cert is not None and cert.decision is not Decision.TRUE and con.Z.size > PIVOTED_QR_LIMIT:
            cert = replace(cert, method=cert.method + f"; columns from the induction's blocks; no fallback: a pivoted "
                           f"QR of the whole {con.Z.shape[0]} x {con.Z.shape[1]} Z exceeds {PIVOTED_QR_LIMIT} entries")
        elif cert is None or cert.decision is not Decision.TRUE:
            cert = certify_rank_lower_bound_lazy(con.Z[rows], k, minor_ball, **opts)
    # the certifier saw Z[rows] (the induction's rows first): report the minor's rows as rows of Z
    cert = replace(cert, rows=tuple(int(rows[i]) for i in cert.rows))
    check_against_cap(cert.certified_k, cap or structural_rank_cap(instance.contexts, instance.queries, instance.H))
    return cert


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
construction("proposition1.certify_rank")(certify_construction_rank)


#: the claimed rank above a structural cap that holds for EVERY weights
CAP_BELOW_CLAIM = Refutation("no-choice-works", "rank(Z) <= a structural cap for ANY weights (dimensions, repeated "
                             "examples, a shared context: Prop. 2, constant token sums: Prop. 5) below the claim")


def _cap_reason(instance, cap: RankCap, claimed: int) -> str:
    """What a cap below the claim means under the instance's reading."""
    if cap.why != DIMENSIONS and not instance.precision.exact_for("contexts", "queries"):
        return (f"rank(Z) <= {cap.cap} < {claimed} for ANY weights ({cap.why}): exact equalities of the "
                "stored values, so a counterexample at the stored values (a point of the data's intervals); "
                "other values the data stand for need not share them")
    return f"rank(Z) <= {cap.cap} < {claimed} for ANY weights ({cap.why})"


def rank_cap_hypothesis(instance, cap: RankCap, name: str = "rank(Z) = T attainable") -> Hypothesis | None:
    """rank(Z) = T, which Step 2 (and so Theorem 1, App. C) needs, is impossible for ANY weights when
    the structural cap (:func:`verifier.arith.rank_caps.structural_rank_cap`) is below T: a refuted
    hypothesis, decided before any construction.  The cap rests on exact equalities of the stored
    values; read at the data's precision (a user's floats) they hold as stored only, so the
    hypothesis is then "evidence" (the stored data cannot reach T; the values given might).  None
    when the cap allows T."""
    T = instance.T
    if cap.cap >= T:
        return None
    detail = f"rank(Z) <= {cap.cap} < T = {T} for ANY weights ({cap.why})"
    precision = getattr(instance, "precision", None)
    if cap.why != DIMENSIONS and getattr(instance, "rounded", None):  # the equalities of a float64 rounding
        return Hypothesis(name, "evidence", f"{detail}, read on the float64 rounding of the values given "
                                            f"({'; '.join(instance.rounded.values())}): they may differ")
    if cap.why == DIMENSIONS or precision is None or precision.exact_for("contexts", "queries"):
        return Hypothesis(name, "refuted", detail)
    return Hypothesis(name, "evidence", f"{UNDECIDED}: {detail}, from exact equalities of the stored values "
                                        f"({precision.describe('contexts', 'queries')}); {REMEDY}")


def rank_method(cert) -> str:
    """What certified rank(Z) >= k, in the evidence's words: the float64
    verification or arb balls, as the certificate's own ``method`` says."""
    return cert.certified_by


def rank_claim_decision(cert, claimed: int, cap: int) -> Decision:
    """'rank(Z) >= claimed': TRUE by a certified minor of size >= claimed; FALSE
    when the structural cap (Prop. 2 for shared contexts, Prop. 5, repeated
    examples, dimensions: rank(Z) <= cap for ANY weights) is below the claim."""
    if cert.decision is Decision.TRUE and cert.k >= claimed:
        return Decision.TRUE
    if claimed > cap:
        return Decision.FALSE
    return Decision.UNDECIDED


def construction_trail(instance, con: Construction) -> list[Step]:
    """The proof as it ran, head by head, in the paper's words."""
    steps = [Step("Setting", "Thm. 1 / Prop. 1",
                  {"T": instance.T, "n": instance.n, "d": instance.d, "H": instance.H, "d_h": instance.d_h,
                   "r": con.r, "target rank min(H(r-1)+1, T)": con.target, "backend": con.backend,
                   "seconds": {"construction": round(con.seconds, 3)}})]
    for hs in con.heads:
        if hs.claim2 is None:
            steps.append(Step(f"Head {hs.head}: base of the induction (fit {len(hs.new_rows)} examples)",
                              "Claim 1 (App. B.1): logits log s, b = E^+ a, W = B Q^+",
                              {"J (examples fitted)": brief(hs.new_rows), "targets s^(j)": brief(hs.targets),
                               "rows independent for free (head 1's output on them already independent)": brief(hs.free_rows),
                               "sigma_min of the new rows": hs.sigma_min_limit,
                               "rank after head": hs.rank_after}))
            continue
        c2 = hs.claim2
        steps.append(Step(f"Head {hs.head}: induction step (fit {len(hs.new_rows)} new examples, "
                          f"saturate {len(hs.basis_before)})",
                          "Claim 2 = Claim 1 on J + Lemma 3 (W' = v w^T) + Lemma 4 (c), Lemma 1, App. B.2",
                          {"I (rows already independent)": brief(hs.basis_before),
                           "J (examples this head fits)": brief(hs.new_rows),
                           "row operations: max |A_ji|": float(np.abs(hs.coefficients).max()) if hs.coefficients.size else 0.0,
                           "targets s^(j)": brief(hs.targets),
                           "Lemma 3: w . e^(j) for j in J (should be 0)": brief(np.asarray(instance.queries)[list(hs.new_rows)] @ c2.w),
                           "Lemma 3: saturated argmax tokens i*": brief(c2.istar),
                           "Lemma 3: smallest gap g": float(c2.gap.min()) if c2.gap.size else None,
                           "Lemma 4: largest spread R": float(c2.spread.max()) if c2.spread.size else None,
                           "App. B.2: eps": hs.eps, "App. B.2: c": hs.c,
                           "App. B.2: x_max": hs.x_max, "App. B.2: kappa": hs.kappa,
                           "a-priori bound x_max*eps*kappa": hs.perturbation_bound,
                           "actual ||Y_c - Y_inf||_2": hs.perturbation_actual,
                           "sigma_min(Y_inf)": hs.sigma_min_limit,
                           "rows independent for free": brief(hs.free_rows),
                           "Lemma 1: rank after head >=": hs.rank_after}))
    for h in range(len(con.heads) + 1, instance.H + 1):
        steps.append(Step(f"Head {h}: not needed (rank {len(con.basis)} already reached); W^{h} = 0, uniform attention",
                          "Prop. 1 (heads beyond the target rank are free)", {}))
    steps.append(Step("Factorisation W^h = W_K^h (W_Q^h)^T", "Sec. 2 (rank W^h <= d_h; thin SVD)",
                      {"rank W^h": list(con.attention_ranks), "d_h": instance.d_h,
                       "max relative factorisation error": con.factorisation_error}))
    return steps


def check_proposition1(instance, *, prec: int = 128, seed: int = 0, claimed_rank: int | None = None,
                       r: int | None = None, hypotheses: list | None = None, **options) -> Evidence:
    """``r`` and ``hypotheses`` let Remark 1 run the same proof with r = min(n, k, d_h)
    under its own hypotheses (the Kruskal rank k instead of Assumption 1)."""
    hyps = theorem_hypotheses(instance, prec=prec, seed=seed) if hypotheses is None else list(hypotheses)
    r_used = instance.r if r is None else int(r)
    bound = min(instance.H * (r_used - 1) + 1, instance.T)
    claimed = bound if claimed_rank is None else int(claimed_rank)
    claim_text = f"rank(Z) >= {claimed}" + (" = min(H(r-1)+1, T)" if claimed_rank is None else " (variant)")
    cap = structural_rank_cap(instance.contexts, instance.queries, instance.H)
    try:
        con = build_key_query_weights(instance, seed=seed, r=r_used)
    except ConstructionFailed as exc:
        if claimed > cap.cap:  # the construction failed, but the cap decides for ANY weights
            return conclude("proposition1", Decision.FALSE, claimed=claim_text, hypotheses=hyps, certified=True,
                            measured={"construction failed at": exc.step, "upper_bound (structural, any weights)":
                                      cap.cap}, method="structural cap (exact comparisons of the data)",
                            certificates=[cap.to_dict()], reason=_cap_reason(instance, cap, claimed),
                            refutation=CAP_BELOW_CLAIM,
                            trail=[Step(f"Construction failed at {exc.step}", exc.step, {"message": str(exc)}),
                                   Step(f"rank(Z) <= {cap.cap} < {claimed} for ANY weights ({cap.why})",
                                        "structural caps (dimensions, repeated examples, Prop. 2, Prop. 5)",
                                        {"cap": cap.cap, "claimed": claimed})])
        return conclude("proposition1", Decision.UNDECIDED, claimed=claim_text,
                        measured={"construction failed at": exc.step}, hypotheses=hyps,
                        method="construction (float64) failed: nothing decided",
                        reason=f"the construction broke at {exc.step}: {exc}",
                        trail=[Step(f"Construction failed at {exc.step}", exc.step, {"message": str(exc)})])
    trail = construction_trail(instance, con)
    k = min(claimed, instance.T)  # beyond the induction's rows too: the certificate must refuse what is false
    try:
        cert = certify_construction_rank(instance, con, k, prec=prec, cap=cap)
    except InsufficientPrecision as exc:  # the hypotheses stay in the evidence
        return conclude("proposition1", Decision.UNDECIDED, claimed=claim_text, hypotheses=hyps, prec_bits=prec,
                        measured={"induction_rank": len(con.basis)}, method="arb balls", trail=trail,
                        reason=f"rank(Z) >= {claimed} not decided at --prec {prec} ({exc}): raise --prec")
    measured = {"certified_rank": cert.certified_k, "induction_rank": len(con.basis),
                "numerical_rank_of_rows": int(np.linalg.matrix_rank(con.Z[list(con.basis)])) if len(con.basis) else 0}
    certificates = [{"kind": "rank >= k: nonsingular minor", **cert.to_dict()}]
    decision = rank_claim_decision(cert, claimed, cap.cap)
    reason = ""
    if decision is Decision.FALSE:
        measured["upper_bound (structural, any weights)"] = cap.cap
        certificates.append(cap.to_dict())
        if cap.why != DIMENSIONS and not instance.precision.exact_for("contexts", "queries"):
            reason = _cap_reason(instance, cap, claimed)
    trail.append(Step("Certificate", "rank >= k by a nonsingular minor (Arb balls)",
                      {"k": cert.k, "decision": cert.decision.value, "prec_bits": cert.prec_bits,
                       "||I - R A||_inf <=": cert.residual_norm_upper}))
    return conclude("proposition1", decision, claimed=claim_text, measured=measured, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED, method=rank_method(cert),
                    prec_bits=cert.prec_bits, refutation=CAP_BELOW_CLAIM,
                    margin=1.0 - cert.residual_norm_upper if np.isfinite(cert.residual_norm_upper) else None,
                    certificates=certificates, trail=trail, reason=reason)


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
statement("proposition1", conclusion_over="box",
          requires=("n < d", "Assumption 1", "Assumption 2"), exists=True, refutes=(CAP_BELOW_CLAIM,),
          margin="1 - ||I - R A||_inf of the nonsingular-minor certificate", H=3, n=3, d=5, context="shared")(check_proposition1)


@negative_control("proposition1", "shared contexts, T = Hn + 2: the claim rank(Z) >= H*r (no '-1') is refused by "
                  "the minor and refuted by Prop. 2's cap", expect=("refuted",))
def control_no_minus_one(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=3, n=3, d=5, T=11, context="shared", seed=seed)
    return check_proposition1(inst, prec=prec, seed=seed, claimed_rank=inst.H * inst.r)


@negative_control("proposition1", "repeated queries (Assumption 1 fails): hypotheses unmet",
                  expect=("hypotheses-unmet",))
def control_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_proposition1(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=seed),
                              prec=prec, seed=seed)


# -- figure data (the report draws them) -------------------------------------

def _construction_rank(inst, seed: int, certify: bool = False) -> tuple[int, int | None]:
    Z = build_key_query_weights(inst, seed=seed).Z
    cert = certify_rank_lower_bound(Z).certified_k if certify else None
    return numerical_rank(Z), cert


def _random_weights_rank(inst, seed: int) -> int:
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((inst.H, inst.d, inst.d))
    return numerical_rank(model.feature_matrix(inst.contexts, inst.queries, W=W))


@figure("rank_vs_heads", statement="proposition1", title='rank(Z) vs number of heads',
        caption=(
            'Numerical rank of Z (float64 SVD; black crosses: the rank lower bound certified in arb) reached '
            "by Proposition 1's construction on T = H(n-1)+4 examples (three more than the cap, so that "
            "the rank, not T, is what stops), against Theorem 1's bound H(r-1)+1 and Proposition 2's "
            'cap H(n-1)+1 for shared contexts. With shared contexts and d_h >= n the construction '
            'attains the cap exactly; random weights on random (non-shared) contexts exceed it, so the '
            'cap is specific to shared contexts.'))
def rank_vs_heads_data(seed: int = 0, heads=tuple(range(1, 7)), n: int = 4, d: int = 7) -> dict:
    """Shared contexts, d_h = n, T = H(n-1)+1+3 (more examples than the cap)."""
    out = {"n": n, "d": d, "heads": list(heads), "T": [], "bound_thm1": [], "cap_prop2": [],
           "construction_shared": [], "construction_shared_certified": [],
           "random_weights_shared": [], "random_weights_random_contexts": []}
    for H in heads:
        T = H * (n - 1) + 4
        shared = make_instance(H=H, n=n, d=d, T=T, context="shared", seed=seed + H)
        rk, cert = _construction_rank(shared, seed + H, certify=True)
        rnd = make_instance(H=H, n=n, d=d, T=T, context="random", seed=seed + H)
        out["T"].append(T)
        out["bound_thm1"].append(H * (n - 1) + 1)
        out["cap_prop2"].append(H * (n - 1) + 1)
        out["construction_shared"].append(rk)
        out["construction_shared_certified"].append(cert)
        out["random_weights_shared"].append(_random_weights_rank(shared, seed + H))
        out["random_weights_random_contexts"].append(_random_weights_rank(rnd, seed + H))
    return out


@figure("rank_sweeps", statement="proposition1", title='rank(Z) vs n and vs d_h',
        caption=(
            'Numerical rank of Z reached by the construction with T = H(r-1)+1 examples (random '
            'contexts), against H(min(n, d_h)-1)+1. The bound is flat beyond n = d_h (left) and beyond '
            'd_h = n (right): r = min(n, d_h), so extra key/query dimensions beyond n add nothing.'))
def rank_sweep_data(seed: int = 0, H: int = 3) -> dict:
    """rank vs n (d_h fixed) and vs d_h (n fixed), random contexts, T = H(r-1)+1."""
    dh_fixed, n_fixed, d_n, d_dh = 4, 4, 9, 7
    ns, dhs = list(range(2, 8)), list(range(1, 8))
    out = {"H": H, "n_sweep": {"n": ns, "d_h": dh_fixed, "d": d_n, "rank": [], "bound": []},
           "dh_sweep": {"d_h": dhs, "n": n_fixed, "d": d_dh, "rank": [], "bound": []}}
    for n in ns:
        inst = make_instance(H=H, n=n, d=d_n, d_h=dh_fixed, seed=seed + n)
        out["n_sweep"]["rank"].append(_construction_rank(inst, seed + n)[0])
        out["n_sweep"]["bound"].append(inst.capacity)
    for dh in dhs:
        inst = make_instance(H=H, n=n_fixed, d=d_dh, d_h=dh, seed=seed + dh)
        out["dh_sweep"]["rank"].append(_construction_rank(inst, seed + dh)[0])
        out["dh_sweep"]["bound"].append(inst.capacity)
    return out
