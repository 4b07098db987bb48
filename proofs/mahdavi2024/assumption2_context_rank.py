"""Assumption 2 (Sec. 4): every context matrix has full row rank n.

Statement
---------
For each example t in [T], the context E^(t) in R^{n x d} (rows = tokens)
has rank n: its n tokens are linearly independent.  A property of the
data, with no hypothesis: for n > d it fails (rank <= d < n), for n = d it
can hold.

Construction
------------
Per distinct context (a shared context is checked once; n > d fails by
the shapes alone); when there are several large ones, first all at once:
:func:`verifier.arith.gram_blocks.stack_certified` proves lambda_min(E E^T) > 0
for each (one batched Gram product and factorisation, float64 with a
priori bounds); the contexts it leaves go one by one:
* small (n d <= ``exact_entries``), or values float64 would round (int64
  beyond 2^53, long double: ``Instance.exact_array``): the exact rank over Q
  of the values given (flint, :func:`verifier.arith.exact.exact_rank`);
* large: :func:`verifier.arith.rank.certify_rank_lower_bound` with k = n, a
  nonsingular n x n minor certified in ball arithmetic
  (||I - R A_minor||_inf < 1); if that cannot decide, the exact rank when
  n d <= ``fallback_entries``.
A rank-deficient context yields an exact null combination c != 0 with
c^T E^(t) = sum_i c_i (token i) = 0 (:func:`verifier.arith.exact.exact_nullspace`),
re-checked here.

At the data's precision (a user's floats): every distinct context is
certified of full row rank at EVERY point of its intervals
(:func:`verifier.arith.box_subsets.stack_over_box`), or an explicit point of
some context's intervals with dependent tokens is exhibited (exact
rationals).

Checks
------
1. Every context certified rank n: verified.
2. Some context with an exact null combination of its tokens (or n > d):
   refuted, with the example index and the null vector.
3. User data read at its dtype's precision: verified only when every point
   of every context's intervals is certified; refuted ("fails at the data's
   precision") at an explicit dependent point; otherwise inconclusive.
4. A large context the balls cannot decide and too large for exact rank:
   inconclusive (raise ``--prec`` or ``fallback_entries``).

Not established
---------------
Under the exact reading (generated instances, ``--exact-input``) tokens
dependent only up to float rounding are, as the exact rationals given,
independent.

References
----------
arXiv:2306.02010v3, Sec. 4 (Assumption 2), Sec. 4.4 (positional encodings
make it hold), Sec. 5.1 (tested on ViT).

>>> from verifier.data.instances import from_arrays, make_instance
>>> check_assumption2(make_instance(H=2, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np

from verifier.arith.box_subsets import stack_over_box
from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero, exact_nullspace, exact_rank
from verifier.arith.gram_blocks import stack_certified
from verifier.arith.rank import certify_rank_lower_bound
from verifier.data.duplicates import first_equal, groups_of
from verifier.data.instances import from_arrays, make_instance
from verifier.statements.at_precision import at_data_precision
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

EXACT_ENTRIES = 1000  # n d at most this: exact rank (about 1 ms at 10 x 20)
FALLBACK_ENTRIES = 6000  # exact rank after an undecided ball test (about 0.1 s at 40 x 150)


def distinct_contexts(contexts: np.ndarray) -> dict[int, list[int]]:
    """First index of each distinct context -> all indices equal to it."""
    return groups_of(first_equal(contexts))  # a shared context: one group, without T copies


def context_rank_certificate(E: np.ndarray, t: int, *, prec: int, exact_entries: int,
                             fallback_entries: int) -> tuple[Decision, dict]:
    """Is rank E = n (its number of rows)?  Returns the decision and its
    certificate: exact rank, a ball-certified minor, or a null combination."""
    n, d = E.shape
    if n > d:
        return Decision.FALSE, {"kind": "shapes", "example": t, "rank": d,
                                "claim": f"rank E^({t}) <= d = {d} < n = {n}: {n} tokens in R^{d} are dependent"}
    if n * d <= exact_entries or E.dtype == object:  # object: the given values, which float64 rounds
        rank, how = exact_rank(E), "exact rank over Q"
    else:
        lb = certify_rank_lower_bound(E, k=n, prec=prec, max_prec=max(prec, 1024))
        if lb.decision is Decision.TRUE:
            return Decision.TRUE, {"kind": "ball minor", "example": t, "rows": list(lb.rows),
                                   "cols": list(lb.cols), "residual_norm_upper": lb.residual_norm_upper,
                                   "prec_bits": lb.prec_bits, "claim": f"rank E^({t}) >= {n}"}
        if n * d > fallback_entries:
            return Decision.UNDECIDED, {"kind": "undecided", "example": t, "method": lb.method}
        rank, how = exact_rank(E), "exact rank over Q (after an undecided ball test)"
    if rank == n:
        return Decision.TRUE, {"kind": "exact rank", "example": t, "rank": n, "method": how}
    c = exact_nullspace(E.T)[0]  # sum_i c_i E_i = 0
    if not exact_matvec_is_zero(E.T, c):
        raise RuntimeError(f"null combination of the tokens of E^({t}) failed the exact re-check")
    return Decision.FALSE, {"kind": "null combination", "example": t, "rank": int(rank),
                            "coefficients": [str(x) for x in c],
                            "claim": f"sum_i c_i E^({t})_i = 0 exactly (re-checked): rank E^({t}) = {rank} < {n}"}


#: how the batched route certifies (float64, a posteriori; verifier.arith.gram_blocks)
GRAM_METHOD = ("float64 verification (a priori bounds, any summation order): fl(E E^T) - c I = L L^T + "
               "residual, c > ||residual||_2 + ||E E^T - fl(E E^T)||_2, all contexts in batches")
#: at least this many distinct large contexts go through the batched Gram route first (fewer: one by one, each
#: with its ball minor; the per-context overhead matters with many, e.g. 757 random ViT-base contexts)
GRAM_FROM = 32


def gram_certified_contexts(E: np.ndarray, firsts: list[int], exact_entries: int) -> set[int]:
    """The distinct contexts (first indices) proved of rank n by ONE batched
    Gram certificate (:func:`verifier.arith.gram_blocks.stack_certified`):
    float64 contexts too large for the exact rank, n <= d, when there are
    at least :data:`GRAM_FROM` of them; the others go context by context."""
    T, n, d = E.shape
    if E.dtype == object or n > d or n * d <= exact_entries or len(firsts) < GRAM_FROM:
        return set()
    ok = stack_certified(E, firsts)
    return {t for t, o in zip(firsts, ok) if o}


def context_method(n_ball: int, n_gram: int, n_contexts: int) -> str:
    """The evidence's method: which routes certified the distinct contexts."""
    method = "exact rationals" if n_ball == 0 else "exact rationals and arb balls"
    if n_gram == n_contexts:
        return "float64 verification (batched Gram)"
    return f"{method} and float64 verification (batched Gram)" if n_gram else method


#: a context of rank < n: an exact null combination of its tokens (or n > d)
RANK_DEFICIENT = Refutation("counterexample", "a context whose tokens have an exact null combination over Q "
                            "(or n > d: rank <= d < n)")
#: full rank as exact rationals, rank deficient within the data's rounding
CONTEXT_AT_PRECISION = Refutation("at-data-precision", "an explicit point of a context's rounding "
                                  "intervals with dependent tokens (verifier.statements.at_precision)")


@statement("assumption2", reads_given=True, conclusion_over="box", refutes=(RANK_DEFICIENT, CONTEXT_AT_PRECISION))
def check_assumption2(instance, *, prec: int = 128, seed: int = 0, exact_entries: int = EXACT_ENTRIES,
                      fallback_entries: int = FALLBACK_ENTRIES, **options) -> Evidence:
    """rank E^(t) = n for every example t (exact or ball-certified)."""
    E = instance.exact_array("contexts")  # exact rationals where float64 rounds the given values
    E = E if E.dtype == object else np.asarray(E, dtype=np.float64)
    T, n, d = E.shape
    groups = distinct_contexts(E)
    decisions, certs, deficient, undecided = [], [], [], []
    worst_ball, n_ball = None, 0
    gram = gram_certified_contexts(E, list(groups), exact_entries)
    for t, members in groups.items():
        if t in gram:
            decisions.append(Decision.TRUE)
            continue
        dec, cert = context_rank_certificate(E[t], t, prec=prec, exact_entries=exact_entries,
                                             fallback_entries=fallback_entries)
        decisions.append(dec)
        if dec is Decision.FALSE:
            deficient.extend(members)
            if len(certs) < 3:
                certs.append({**cert, "same_context_as": members})
        elif dec is Decision.UNDECIDED:
            undecided.extend(members)
        elif cert["kind"] == "ball minor":
            n_ball += 1
            if worst_ball is None or cert["residual_norm_upper"] > worst_ball["residual_norm_upper"]:
                worst_ball = cert
    decision = Decision.all(decisions)
    if decision is Decision.TRUE:
        certs.append({"kind": "summary", "claim": f"rank E^(t) = {n} for all {T} examples",
                      "distinct_contexts": len(groups), "exact_rank": len(groups) - n_ball - len(gram),
                      "ball_minors": n_ball, **({"gram_batched": len(gram)} if gram else {})})
        if gram:
            certs.append({"kind": "gram (batched)", "contexts": len(gram), "method": GRAM_METHOD,
                          "claim": f"lambda_min(E^(t) E^(t)^T) > 0 proved for {len(gram)} contexts at once: "
                                   f"their {n} tokens are independent"})
        if worst_ball is not None:
            certs.append({**worst_ball, "note": "largest residual among the ball-certified minors"})
        reason = f"all {T} contexts have rank n = {n} ({len(groups)} distinct, certified)"
    elif decision is Decision.FALSE and n > d:
        reason = f"n = {n} > d = {d}: every context has rank <= d < n ({T} contexts)"
    elif decision is Decision.FALSE:
        reason = (f"{len(deficient)} of {T} contexts are rank deficient (first: example {deficient[0]}, "
                  f"exact null combination of its tokens)")
    else:
        reason = (f"{len(undecided)} contexts could not be certified rank {n} in balls and are too large "
                  f"for exact rank (n d > {fallback_entries}): raise --prec or fallback_entries")
    box = None
    if decision is not Decision.FALSE and not instance.precision.exact_for("contexts") and n <= d:
        firsts = list(groups)
        mids, rads = instance.ball("contexts", firsts)
        box = stack_over_box(mids, rads, exact=lambda j: E[firsts[j]],
                             gaps=lambda j: instance.half_gaps("contexts", firsts[j]), labels=firsts)
        certs.append(box.to_dict())
    outcome = at_data_precision(decision, box, instance.precision, "contexts", what=f"rank E^(t) = {n} for every t",
                               item="the tokens of context")
    refutation = RANK_DEFICIENT if decision is Decision.FALSE else CONTEXT_AT_PRECISION
    decision, reason = outcome.decision, outcome.reason or reason
    measured = {"examples": T, "distinct_contexts": len(groups), "rank_deficient": deficient[:10],
                "undecided": undecided[:10], **outcome.measured}
    return conclude(
        "assumption2", decision, claimed={"rank E^(t)": n}, measured=measured,
        certified=decision is not Decision.UNDECIDED,
        method=context_method(n_ball, len(gram), len(groups)),
        prec_bits=prec if worst_ball else None, margin=None, certificates=certs,
        instance=instance.summary(), reason=reason,
        trail=[Step(f"checked {len(groups)} distinct contexts of {T}", uses="Assumption 2"),
               Step(reason, uses="Assumption 2", data={"ball_minors": n_ball})],
        refutation=refutation,
    )


@negative_control("assumption2", "token 2 repeats token 1 (degenerate='rank-deficient-context')")
def control_assumption2_rank_deficient(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=2, n=3, d=5, degenerate="rank-deficient-context", seed=seed)
    return check_assumption2(inst, prec=prec, seed=seed)


@negative_control("assumption2", "one large context (40 x 60) with token 7 = token 3 - 2 token 5")
def control_assumption2_large_deficient(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=1, n=40, d=60, d_h=1, T=2, seed=seed)
    E = np.round(inst.contexts * 1024) / 1024  # dyadic grid: the planted combination is exact
    E[1, 7] = E[1, 3] - 2 * E[1, 5]
    return check_assumption2(from_arrays(E, inst.queries, inst.labels, H=1, d_h=1, seed=seed),
                             prec=prec, seed=seed)
