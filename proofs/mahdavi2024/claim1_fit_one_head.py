"""Claim 1 (App. B.1): one head fits r examples' softmax targets exactly.

Statement
---------
Let r = min(n, d_h) examples satisfy Assumptions 1-2 (contexts E^(t) of rank
n, queries e^(1..r) linearly independent). For ANY targets s^(t) in the open
simplex there is W in R^{d x d} of rank <= r <= d_h with
softmax(E^(t) W e^(t)) = s^(t) for t = 1..r.

Construction
------------
Logits a^(t) = log s^(t) (softmax is shift-invariant, any such logits do);
b^(t) = E^(t)+ a^(t), a right inverse since E^(t) has full row rank, so
E^(t) b^(t) = a^(t); then W e^(t) = b^(t) for the r independent queries:
W = B Q^+ with Q = [e^(1) ... e^(r)], B = [b^(1) ... b^(r)].

Checks
------
On the first k = min(r, T) examples of the instance, targets drawn by
:func:`interior_targets` from ``seed``:

1. Hypotheses, exact over Q: rank [e^(1) ... e^(k)] = k (implied by
   Assumption 1, since k <= n) and rank E^(t) = n (Assumption 2); a failure
   comes with its exact null combination.  n < d from the shapes.
2. Exact construction (k n d <= ``EXACT_LIMIT``): with the float64 logits
   a = log s (exact dyadic rationals), b^(t) = E^T (E E^T)^{-1} a^(t) and
   P = Q^+ = (Q^T Q)^{-1} Q^T are formed in ``fmpq``; P Q = I_k and
   E^(t) b^(t) = a^(t) are checked as identities over Q, so W = B P (rank
   <= k: inner dimension k) has E^(t) W e^(t) = a^(t) and
   softmax(E^(t) W e^(t)) = softmax(a^(t)) EXACTLY.  Since E E^+ = I_n and
   P Q = I_k hold, the same W(a) works for every real logit vector a.
3. The float64 construction as shipped (:func:`build_claim1_attention`),
   factored at rank k (W_K W_Q^T with W_K, W_Q in R^{d x k}, so
   rank <= k <= r is structural, as the model stores it), and the unfactored
   builder W: softmax computed in arb balls (:func:`verifier.model.mha_balls.scores_ball`)
   and max_{t,i} |s_i^(t) - target| certainly below ``tol`` (default 1e-10:
   the float64 construction is accurate to about 1e-15 times the condition
   numbers of E and Q; 1e-10 leaves 10^5 of room on the default instances).
The conclusion is the conjunction of 2 and 3.  A ConstructionFailed from the
builder is caught and its step named in the reason and the trail.

Not established
---------------
The float64 W only approximates the exact W (within ``tol`` on the scores).
Targets are random interior points; targets near the simplex boundary make
the logits, hence W, large, and the float tolerance may then fail while the
exact identity still holds.

References
----------
arXiv:2306.02010v3, App. B.1 (proof of Claim 1), Assumptions 1-2 (Sec. 4).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_claim1(make_instance(H=1, n=3, d=5, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.linalg
from flint import arb, fmpq_mat

from verifier.arith.compare import Decision, certainly_less, upper, workprec
from verifier.arith.exact import exact_nullspace, exact_rank, to_fmpq_mat, to_fmpq_vector
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed
from verifier.model import mha as model
from verifier.model.factorisation import factor_attention
from verifier.model.mha_balls import scores_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d

TOLERANCE = 1e-10  # |softmax - target| allowed to the float64 construction
EXACT_LIMIT = 60000  # k n d above this: skip the exact rational construction (~1 s at 30 x 45)


def interior_targets(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    """k random points of the open simplex in R^n (softmax of Gaussians)."""
    g = rng.standard_normal((k, n))
    g = np.exp(g - g.max(axis=1, keepdims=True))
    return g / g.sum(axis=1, keepdims=True)


_RIGHT_INVERSES: dict = {}  # shared contexts: one SVD per distinct context, reused by every head


def right_inverse(E: np.ndarray, t: int = 0) -> np.ndarray:
    """E^+ (d x n) with E E^+ = I_n; refuses a rank-deficient context."""
    E = np.ascontiguousarray(E, dtype=np.float64)
    key = (E.shape, hashlib.sha1(E.tobytes()).hexdigest())
    if key in _RIGHT_INVERSES:
        return _RIGHT_INVERSES[key]
    if len(_RIGHT_INVERSES) > 64:
        _RIGHT_INVERSES.clear()
    # E^T = Q R (thin QR, d x n): E^+ = Q R^{-T} is the minimum-norm right inverse,
    # E E^+ = R^T Q^T Q R^{-T} = I_n; a tiny |R_ii| means E is rank deficient.
    Q, R = np.linalg.qr(E.T)
    diag = np.abs(np.diag(R))
    if diag.min() <= 1e-12 * max(diag.max(), 1.0):
        raise ConstructionFailed("Claim 1", f"context of example {t} is rank deficient (Assumption 2 fails)")
    pinv = np.ascontiguousarray(scipy.linalg.solve_triangular(R, Q.T, lower=False).T)  # (R^{-1} Q^T)^T
    pinv.setflags(write=False)
    _RIGHT_INVERSES[key] = pinv
    return pinv


def build_claim1_attention(contexts, queries, targets) -> np.ndarray:
    """W (d x d, rank <= k) with softmax(E^(t) W e^(t)) = s^(t) for the k given
    examples (contexts (k, n, d), queries (k, d), targets (k, n)).

    Raises ConstructionFailed("Claim 1", ...) when the queries are dependent
    (Assumption 1 fails) or a context is rank deficient (Assumption 2 fails).
    """
    queries = np.asarray(queries, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    k, n, d = contexts.shape
    if k == 0:
        return np.zeros((d, d))
    if np.any(targets <= 0):
        raise ConstructionFailed("Claim 1", "targets must lie in the open simplex (all entries > 0)")
    a = np.log(targets)  # logits with softmax(a) = s
    B = np.empty((d, k))
    if model.is_shared(contexts) or k == 1:
        B[:] = right_inverse(contexts[0], 0) @ a.T  # b = E^+ a, so E b = a
    else:
        for t in range(k):
            B[:, t] = right_inverse(contexts[t], t) @ a[t]
    Q = queries.T  # d x k
    sq = np.linalg.svd(Q, compute_uv=False)
    if k > d or sq[-1] <= 1e-12 * max(sq[0], 1.0):
        raise ConstructionFailed("Claim 1", f"the {k} queries are linearly dependent (Assumption 1 fails): "
                                 "W e^(t) = b^(t) has no solution")
    # W = B Q^+ = B (Q^T Q)^{-1} Q^T, computed by a least-squares solve.
    return B @ np.linalg.pinv(Q)


def build_claim1_attention_exact(contexts, queries, logits) -> tuple[fmpq_mat, fmpq_mat]:
    """Claim 1 over Q, as factors W = B P: b^(t) = E^T (E E^T)^{-1} a^(t) (the
    columns of B, d x k) and P = Q^+ = (Q^T Q)^{-1} Q^T (k x d).

    Every input is read as an exact rational (float64 entries are dyadic).
    Raises ConstructionFailed when E E^T or Q^T Q is singular over Q.
    """
    k, n, d = contexts.shape
    cols = []
    for t in range(k):
        E = to_fmpq_mat(np.asarray(contexts[t]))
        a = fmpq_mat(n, 1, to_fmpq_vector(np.asarray(logits[t])))
        try:
            cols.append((E.transpose() * (E * E.transpose()).solve(a)).entries())
        except ZeroDivisionError:
            raise ConstructionFailed("Claim 1", f"E^({t}) E^({t})^T is singular over Q (Assumption 2 fails)") from None
    B = fmpq_mat(d, k, [cols[t][i] for i in range(d) for t in range(k)])
    Q = to_fmpq_mat(np.asarray(queries)[:k]).transpose()  # d x k
    try:
        return B, (Q.transpose() * Q).inv() * Q.transpose()
    except ZeroDivisionError:
        raise ConstructionFailed("Claim 1", "Q^T Q is singular over Q (the queries are dependent)") from None


def exact_claim1_identities(contexts, queries, logits, B: fmpq_mat, P: fmpq_mat) -> dict:
    """Check over Q: P Q = I_k (so W e^(t) = B P e^(t) = b^(t)) and
    E^(t) b^(t) = a^(t); together E^(t) W e^(t) = a^(t) exactly."""
    k, n, d = contexts.shape
    Q = to_fmpq_mat(np.asarray(queries)[:k]).transpose()
    PQ = (P * Q).entries()
    left_inverse = all(PQ[i * k + j] == (1 if i == j else 0) for i in range(k) for j in range(k))
    fits = []
    for t in range(k):
        b = fmpq_mat(d, 1, [B[i, t] for i in range(d)])
        diff = to_fmpq_mat(np.asarray(contexts[t])) * b - fmpq_mat(n, 1, to_fmpq_vector(np.asarray(logits[t])))
        fits.append(all(x == 0 for x in diff.entries()))
    return {"P Q = I_k": left_inverse, "E^(t) b^(t) = a^(t) for all t": all(fits),
            "holds": left_inverse and all(fits),
            "max denominator bits": max(x.q.bit_length() for x in B.entries() + P.entries())}


def queries_independent(queries, what: str = "queries") -> Hypothesis:
    """Exact: the rows of ``queries`` are linearly independent (else a null combination)."""
    Q = np.asarray(queries, dtype=np.float64)
    k = Q.shape[0]
    if exact_rank(Q) == k:
        return Hypothesis(f"{what} linearly independent (Assumption 1)", "certified", f"exact rank {k} over Q")
    c = exact_nullspace(Q.T)[0]
    return Hypothesis(f"{what} linearly independent (Assumption 1)", "refuted",
                      f"exact null combination sum_t c_t e^(t) = 0 with c = {[str(x) for x in c]}")


def contexts_full_row_rank(contexts, rows) -> Hypothesis:
    """Exact: rank E^(t) = n for every t in ``rows`` (Assumption 2)."""
    n = contexts.shape[1]
    bad = [int(t) for t in rows if exact_rank(np.asarray(contexts[t])) < n]
    if not bad:
        return Hypothesis("contexts of rank n (Assumption 2)", "certified",
                          f"exact rank n = {n} for {len(list(rows))} contexts")
    c = exact_nullspace(np.asarray(contexts[bad[0]]).T)[0]
    return Hypothesis("contexts of rank n (Assumption 2)", "refuted",
                      f"rank-deficient contexts {bad[:5]}; E^({bad[0]})^T c = 0 with c = {[str(x) for x in c]}")


def ball_fit_error(contexts, queries, targets, *, W=None, W_K=None, W_Q=None) -> arb:
    """max_{t,i} |softmax(E^(t) W e^(t))_i - s_i^(t)| as an arb ball (W, or W = W_K W_Q^T)."""
    if W is not None:
        S = scores_ball(contexts, queries, W=W[None])
    else:
        S = scores_ball(contexts, queries, W_K[None], W_Q[None])
    worst = arb(0)
    for t, row in enumerate(S):
        for i, s in enumerate(row[0]):
            worst = worst.max(abs(s - arb(float(targets[t, i]))))
    return worst


@statement("claim1", H=1, n=3, d=5)
def check_claim1(instance, *, prec: int = 128, seed: int = 0, tol: float = TOLERANCE,
                 perturb: float = 0.0, **options) -> Evidence:
    """Claim 1 on the first min(r, T) examples (exact identity + ball fit).

    ``perturb`` > 0 adds perturb * N(0, 1) to the factor W_K and to the float
    W before the ball check (a sensitivity control: the claim then concerns
    those weights, rank still <= k, and the exact construction is not run)."""
    E, e = instance.contexts, np.asarray(instance.queries)
    k, n, d = min(instance.r, instance.T), instance.n, instance.d
    rows = list(range(k))
    Ek, ek = model.select(E, rows), e[rows]
    rng = rng_for(seed, "claim1")
    targets = interior_targets(rng, k, n)
    hyps = [n_less_than_d(instance), queries_independent(ek, f"queries e^(1..{k})"),
            contexts_full_row_rank(E, rows)]
    trail = [Step(f"targets: {k} random interior points of the simplex (seed {seed})", uses="Claim 1"),
             Step("hypotheses checked exactly over Q", uses="Assumptions 1-2",
                  data={h.name: h.status for h in hyps})]
    decisions, certs, measured, failed = [], [], {"k": k, "r": instance.r, "n": n, "d": d}, []
    logits = np.log(targets)
    if perturb == 0.0 and k * n * d <= EXACT_LIMIT:
        try:
            B, P = build_claim1_attention_exact(Ek, ek, logits)
            ident = exact_claim1_identities(Ek, ek, logits, B, P)
            decisions.append(Decision.TRUE if ident["holds"] else Decision.FALSE)
            certs.append({"kind": "exact identity E^(t) W e^(t) = a^(t) over Q, W = B P (so softmax = softmax(a))",
                          "examples": k, "inner dimension (rank W <=)": k, **ident})
            measured["exact identity"] = ident["holds"]
            trail.append(Step("W = B Q^+ built over Q; P Q = I and E b = a checked as identities",
                              uses="Claim 1", data=ident))
        except ConstructionFailed as exc:
            failed.append(exc)
    try:
        W = build_claim1_attention(Ek, ek, targets)
        W_K, W_Q, num_rank = factor_attention(W, max(k, 1))
        if perturb:  # rank stays <= k: only the factor W_K moves
            W_K = W_K + perturb * rng.standard_normal(W_K.shape)
            W = W + perturb * rng.standard_normal(W.shape)
        with workprec(prec):
            err_fact = ball_fit_error(Ek, ek, targets, W_K=W_K, W_Q=W_Q)
            err_full = ball_fit_error(Ek, ek, targets, W=W)
            for name, err in (("factored W_K W_Q^T (rank <= k)", err_fact), ("builder's float W", err_full)):
                dec = certainly_less(err, tol)
                decisions.append(dec)
                certs.append({"kind": f"ball fit of the {name}", "max |s - target| (ball)": str(err),
                              "upper": upper(err), "tol": tol, "decision": dec.value, "prec_bits": prec})
        measured.update({"max fit error (factored, upper)": upper(err_fact),
                         "max fit error (builder W, upper)": upper(err_full),
                         "inner dimension of W_K W_Q^T": int(W_K.shape[1]), "float numerical rank W": num_rank})
        trail.append(Step(f"float W factored at rank {k}; softmax in arb balls vs targets",
                          uses="Claim 1, Eqs. (1)-(2)",
                          data={"max error upper": upper(err_fact), "tol": tol}))
    except ConstructionFailed as exc:
        failed.append(exc)
    for exc in failed:
        trail.append(Step(f"construction stopped: {exc}", uses=exc.step))
    decision = Decision.all(decisions) if decisions else Decision.UNDECIDED
    if failed and decision is Decision.FALSE:
        decision = Decision.UNDECIDED
    reason = ""
    if failed and decision is Decision.TRUE:
        reason = f"verified by the exact identity; the float builder stopped at {failed[0].step}: {failed[0]}"
    elif failed:
        reason = f"construction failed at {failed[0].step}: {failed[0]}"
    return conclude(
        "claim1", decision,
        claimed={"softmax(E W e) = s for k examples": k, "rank W <=": k, "tol": tol},
        measured=measured, hypotheses=hyps, certified=True, method="exact rationals + arb balls",
        prec_bits=prec, tolerance=tol,
        margin=None if "max fit error (factored, upper)" not in measured
        else tol - measured["max fit error (factored, upper)"],
        certificates=certs, instance=instance.summary(), trail=trail, reason=reason,
    )


@negative_control("claim1", "every query equal (Assumption 1 fails): Claim 1's linear system has no solution",
                  expect=("hypotheses-unmet",))
def control_claim1_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=1, n=3, d=5, degenerate="repeated-queries", seed=seed)
    return check_claim1(inst, prec=prec, seed=seed)


@negative_control("claim1", "token 2 repeats token 1 (Assumption 2 fails): no right inverse E^+",
                  expect=("hypotheses-unmet",))
def control_claim1_rank_deficient_context(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=1, n=3, d=5, degenerate="rank-deficient-context", seed=seed)
    return check_claim1(inst, prec=prec, seed=seed)


@negative_control("claim1", "W perturbed by 1e-6 N(0,1): the misfit is detected above tol", expect=("refuted",))
def control_claim1_perturbed_weights(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim1(make_instance(H=1, n=3, d=5, seed=seed), prec=prec, seed=seed, perturb=1e-6)
