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
2. The conclusion, decided on the EXACT objects.  k n d <= ``EXACT_LIMIT``:
   with the float64 logits a = log s (exact dyadic rationals),
   b^(t) = E^T (E E^T)^{-1} a^(t) and P = Q^+ = (Q^T Q)^{-1} Q^T are formed in
   ``fmpq``; P Q = I_k and E^(t) b^(t) = a^(t) are checked as identities over
   Q, so W = B P (rank <= k: inner dimension k) has E^(t) W e^(t) = a^(t) and
   softmax(E^(t) W e^(t)) = softmax(a^(t)) EXACTLY.  Larger: the same B and
   P enclosed in Arb balls (``solve`` certifies E E^T and Q^T Q invertible,
   so the exact W exists and fits by the algebra above) and E W e checked
   to contain a (a ball excluding a would refute the algebra).
3. The float64 construction as shipped (:func:`build_claim1_attention`),
   factored at rank k (W_K W_Q^T with W_K, W_Q in R^{d x k}, so rank <= k is
   structural) and unfactored: its softmax in arb balls, and a CERTIFIED
   bound on max_{t,i} |s_i^(t) - target| for those float weights, reported
   as a precision note beside the exact certificate.  A float miss is never
   a refutation: Claim 1 is about the exact W.  (``perturb`` > 0, a negative
   control, makes the claim about the perturbed float weights themselves:
   then the ball fit within ``tol`` decides.)
A ConstructionFailed from a builder is caught and its step named.

Not established
---------------
The float64 W only approximates the exact W; how well is reported, not
claimed.  Targets are random interior points.

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
from flint import arb, arb_mat, fmpq_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, certainly_less, upper, with_precision_ladder, workprec
from verifier.arith.exact import to_fmpq_mat, to_fmpq_vector
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model import mha as model
from verifier.model.factorisation import factor_attention
from verifier.model.mha_balls import scores_ball
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d
from .data_hypotheses import contexts_full_row_rank, queries_independent

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
    if E.shape[0] > E.shape[1]:  # n > d: no right inverse exists
        raise ConstructionFailed("Claim 1", f"context of example {t} has n = {E.shape[0]} > d = {E.shape[1]} "
                                 "tokens: rank deficient (Assumption 2 fails)")
    Q, R = np.linalg.qr(E.T)
    diag = np.abs(np.diag(R))
    if not diag.min() > 1e-12 * diag.max():  # relative: scale-invariant
        raise ConstructionFailed("Claim 1", f"context of example {t} is rank deficient in float64 (Assumption 2 "
                                 "fails, or holds only below float64's resolution: the float64 construction "
                                 "cannot proceed; the exact checkers decide)")
    pinv = np.ascontiguousarray(scipy.linalg.solve_triangular(R, Q.T, lower=False).T)  # (R^{-1} Q^T)^T
    pinv.setflags(write=False)
    _RIGHT_INVERSES[key] = pinv
    return pinv


def build_claim1_attention(contexts, queries, targets) -> np.ndarray:
    """W (d x d, rank <= k) with softmax(E^(t) W e^(t)) = s^(t) for the k given
    examples (contexts (k, n, d), queries (k, d), targets (k, n)): the product
    B P of :func:`build_claim1_factors`.

    Raises ConstructionFailed("Claim 1", ...) when the queries are dependent
    (Assumption 1 fails) or a context is rank deficient (Assumption 2 fails).
    """
    B, P = build_claim1_factors(contexts, queries, targets)
    return B @ P


def build_claim1_factors(contexts, queries, targets) -> tuple[np.ndarray, np.ndarray]:
    """(B, P) with W = B P: B = [b^(1) ... b^(k)] (d x k, b = E^+ log s) and
    P = Q^+ (k x d).  Prop. 1's construction keeps the factors (rank <= k is
    then structural, and d x d products are never formed)."""
    queries = np.asarray(queries, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    k, n, d = contexts.shape
    if k == 0:
        return np.zeros((d, 0)), np.zeros((0, d))
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
    if k > d or not sq[-1] > 1e-12 * sq[0]:  # relative: scale-invariant
        raise ConstructionFailed("Claim 1", f"the {k} queries are linearly dependent in float64 (Assumption 1 "
                                 "fails, or holds only below float64's resolution): "
                                 "W e^(t) = b^(t) has no solution")
    # W = B Q^+ = B (Q^T Q)^{-1} Q^T
    return B, np.linalg.pinv(Q)


def build_claim1_attention_exact(contexts, queries, logits, *, right_inverse: str = "pinv") -> tuple[fmpq_mat, fmpq_mat]:
    """Claim 1 over Q, as factors W = B P: b^(t) = E^T (E E^T)^{-1} a^(t) (the
    columns of B, d x k) and P = Q^+ = (Q^T Q)^{-1} Q^T (k x d).
    ``right_inverse="transpose"`` (a negative control) takes b = E^T a, which
    is not a right inverse: the identity E b = a then fails.

    Every input is read as an exact rational (float64 entries are dyadic).
    Raises ConstructionFailed when E E^T or Q^T Q is singular over Q.
    """
    k, n, d = contexts.shape
    cols = []
    for t in range(k):
        E = to_fmpq_mat(np.asarray(contexts[t]))
        a = fmpq_mat(n, 1, to_fmpq_vector(np.asarray(logits[t])))
        try:
            cols.append((E.transpose() * (a if right_inverse == "transpose" else (E * E.transpose()).solve(a))).entries())
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


def claim1_weights_ball(contexts, queries, logits) -> tuple[arb_mat, arb_mat]:
    """Claim 1's exact B (d x k) and P = Q^+ (k x d) enclosed in Arb balls at the
    working precision.  Raises InsufficientPrecision when E E^T or Q^T Q is not
    certainly invertible (then the exact objects were not shown to exist)."""
    k, n, d = contexts.shape
    cols = []
    try:
        for t in range(k):
            E = to_arb_mat(np.asarray(contexts[t]))
            a = to_arb_mat(np.asarray(logits[t])[:, None])
            cols.append((E.transpose() * (E * E.transpose()).solve(a)).entries())
        Q = to_arb_mat(np.asarray(queries)[:k]).transpose()
        P = (Q.transpose() * Q).solve(Q.transpose())
    except ZeroDivisionError:
        raise InsufficientPrecision("E E^T or Q^T Q not certainly invertible at this precision") from None
    return arb_mat([[cols[t][i] for t in range(k)] for i in range(d)]), P


def exact_fit_decision(contexts, queries, logits, *, prec: int, right_inverse: str = "pinv") -> tuple[Decision, dict]:
    """Claim 1's conclusion on the exact W = B P: identities over Q (small) or
    the ball enclosure of the exact objects (large), see the module docstring."""
    k, n, d = contexts.shape
    if k * n * d <= EXACT_LIMIT or right_inverse != "pinv":
        B, P = build_claim1_attention_exact(contexts, queries, logits, right_inverse=right_inverse)
        ident = exact_claim1_identities(contexts, queries, logits, B, P)
        return (Decision.TRUE if ident["holds"] else Decision.FALSE), {
            "kind": "exact identity E^(t) W e^(t) = a^(t) over Q, W = B P (so softmax = softmax(a))",
            "examples": k, "inner dimension (rank W <=)": k, **ident}

    def attempt(bits):
        B, P = claim1_weights_ball(contexts, queries, logits)
        W = B * P
        worst, contained = arb(0), True
        for t in range(k):
            got = (to_arb_mat(np.asarray(contexts[t])) * W * to_arb_mat(np.asarray(queries[t])[:, None])).entries()
            for x, a in zip(got, np.asarray(logits[t]).tolist()):
                diff = x - arb(a)
                contained &= diff.contains(0)
                worst = worst.max(abs(diff))
        return (Decision.TRUE if contained else Decision.FALSE), {"max |E W e - a| (ball)": str(worst)}

    dec, info, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, 1024))
    return dec, {"kind": "exact B, P enclosed in balls (E E^T, Q^T Q certainly invertible); E W e contains a",
                 "examples": k, "inner dimension (rank W <=)": k, "prec_bits": bits, **(info or {})}


#: W = B Q^+ misses E W e = a exactly: a flaw of the construction, no counterexample to "some W fits"
EXACT_FIT_FAILED = Refutation("failed-construction", "the construction W = B Q^+ misses E W e = a exactly (or in "
                              "balls of the exact objects)")
WRONG_INVERSE = Refutation("counterexample", "E W e != a exactly over Q for the W built with the caller's right "
                           "inverse", variant="right_inverse != 'pinv': W pinned to another right inverse")
#: the caller's perturbed float weights: their ball fit certainly above tol
PERTURBED = Refutation("counterexample", "the perturbed float64 weights' softmax certainly misses the targets by "
                       "more than tol (arb balls)", variant="perturb > 0: the claim is about those weights")


@statement("claim1",
           requires=("n < d", "Assumption 1", "Assumption 2"), exists=True,
           refutes=(EXACT_FIT_FAILED, WRONG_INVERSE, PERTURBED),
           measure="float64 weights: max fit error (factored, certified upper)", H=1, n=3, d=5)
def check_claim1(instance, *, prec: int = 128, seed: int = 0, tol: float = TOLERANCE,
                 perturb: float = 0.0, right_inverse: str = "pinv", **options) -> Evidence:
    """Claim 1 on the first min(r, T) examples, decided on the exact W.

    ``perturb`` > 0 adds perturb * N(0, 1) to the factor W_K and to the float
    W (a negative control: the claim is then about those float weights, rank
    still <= k, and their ball fit within ``tol`` decides)."""
    E, e = instance.contexts, np.asarray(instance.queries)
    k, n, d = min(instance.r, instance.T), instance.n, instance.d
    rows = list(range(k))
    Ek, ek = model.select(E, rows), e[rows]
    rng = rng_for(seed, "claim1")
    targets = interior_targets(rng, k, n)
    hyps = [n_less_than_d(instance), queries_independent(instance, rows, f"queries e^(1..{k})"),
            contexts_full_row_rank(instance, rows)]
    trail = [Step(f"targets: {k} random interior points of the simplex (seed {seed})", uses="Claim 1"),
             Step("hypotheses checked exactly over Q", uses="Assumptions 1-2",
                  data={h.name: h.status for h in hyps})]
    certs, measured, failed, notes = [], {"k": k, "r": instance.r, "n": n, "d": d}, [], []
    logits = np.log(targets)
    decision = Decision.UNDECIDED
    if perturb == 0.0:
        try:
            decision, cert = exact_fit_decision(Ek, ek, logits, prec=prec, right_inverse=right_inverse)
            certs.append(cert)
            measured["exact identity"] = decision is Decision.TRUE
            trail.append(Step("W = B Q^+ built exactly; P Q = I and E b = a checked", uses="Claim 1", data=cert))
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
            floats = []
            for name, err in (("factored W_K W_Q^T (rank <= k)", err_fact), ("builder's float W", err_full)):
                dec = certainly_less(err, tol)
                floats.append(dec)
                certs.append({"kind": f"float64 weights: ball fit of the {name}", "max |s - target| (ball)": str(err),
                              "upper": upper(err), "tol": tol, "within tol": dec.value, "prec_bits": prec,
                              "decides": bool(perturb)})
        if perturb:
            decision = Decision.all(floats)
        elif any(f is not Decision.TRUE for f in floats):
            notes.append(f"precision note: the float64 weights miss the targets by up to {upper(err_fact):.3g} "
                         f"(certified bound; tol {tol:g}): float rounding of an ill-conditioned construction, "
                         "not the paper -- the exact W fits")
        measured.update({"float64 weights: max fit error (factored, certified upper)": upper(err_fact),
                         "float64 weights: max fit error (builder W, certified upper)": upper(err_full),
                         "inner dimension of W_K W_Q^T": int(W_K.shape[1]), "float numerical rank W": num_rank})
        trail.append(Step(f"float W factored at rank {k}; softmax in arb balls vs targets (a precision note)",
                          uses="Claim 1, Eqs. (1)-(2)", data={"max error upper": upper(err_fact), "tol": tol}))
    except ConstructionFailed as exc:
        failed.append(exc)
    for exc in failed:
        trail.append(Step(f"construction stopped: {exc}", uses=exc.step))
    reason = "; ".join(notes)
    if failed and decision is Decision.TRUE:
        reason = "; ".join([f"verified by the exact construction; the float builder stopped at {failed[0].step}: "
                            f"{failed[0]}"] + notes)
    elif failed:
        reason = f"construction failed at {failed[0].step}: {failed[0]}"
    return conclude(
        "claim1", decision,
        claimed={"softmax(E W e) = s for k examples": k, "rank W <=": k,
                 **({"float weights within tol": tol} if perturb else {"exactly": True})},
        measured=measured, hypotheses=hyps, certified=True,
        method="exact rationals (float64 weights: arb balls, reported)" if not perturb else "arb balls",
        prec_bits=prec, tolerance=tol if perturb else None,
        margin=None if not perturb or "float64 weights: max fit error (factored, certified upper)" not in measured
        else tol - measured["float64 weights: max fit error (factored, certified upper)"],
        certificates=certs, instance=instance.summary(), trail=trail, reason=reason,
        refutation=PERTURBED if perturb else WRONG_INVERSE if right_inverse != "pinv" else EXACT_FIT_FAILED,
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


@negative_control("claim1", "b = E^T a instead of E^+ a (not a right inverse): the exact identity E W e = a fails",
                  expect=("refuted",))
def control_claim1_wrong_right_inverse(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim1(make_instance(H=1, n=3, d=5, seed=seed), prec=prec, seed=seed, right_inverse="transpose")


@negative_control("claim1", "W perturbed by 1e-6 N(0,1): the misfit is detected above tol", expect=("refuted",))
def control_claim1_perturbed_weights(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_claim1(make_instance(H=1, n=3, d=5, seed=seed), prec=prec, seed=seed, perturb=1e-6)
