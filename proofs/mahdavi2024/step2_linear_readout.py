"""Step 2 (Sec. 4.1): with rank(Z) = T the readout solves a linear system.

Statement
---------
If Z in R^{T x Hd} has full row rank T, then for every Y in R^{T x d_out}
(d_out <= d, d_v >= d_out) there are W_V^h, W_O, W_D with
Yhat = Z blockdiag(W_V^h) W_O W_D = Y (Eq. 8). Take M = Z^+ Y = Z^T (Z Z^T)^{-1} Y,
split M into H blocks M_h in R^{d x d_out}, and set (reconstructed)
    W_V^h = [M_h, 0] in R^{d x d_v},
    W_O   = the stack of H blocks [[I_{d_out}, 0], [0, 0]] in R^{d_v x d},
    W_D   = [I_{d_out}; 0] in R^{d x d_out},
so that blockdiag(W_V^h) W_O W_D = M exactly and Yhat = Z M = Y.

Construction
------------
:func:`build_readout` assembles the three matrices from any M;
:func:`solve_readout_ball` encloses the exact M = Z^T (Z Z^T)^{-1} Y in Arb
balls (Z itself a ball matrix) and :func:`check_step2` runs Eq. (8) with it.

Checks
------
1. rank(Z) = T certified (nonsingular T x T minor, Arb balls).
2. blockdiag(W_V) W_O W_D = M: checked exactly (entries are M's, 0 and 1).
3. The residual Z M - Y enclosed in a ball of radius <= 1e-20 max|y|
   (relative: the statements are scale-invariant); the rounded float64
   readout's residual reported.

Not established
---------------
Z here is Prop. 1's construction on a random instance; Step 2 itself is
plain linear algebra and holds for any full-row-rank Z.

References
----------
arXiv:2306.02010v3, Sec. 4.1 (Step 2), Eq. (8).

>>> from verifier.data.instances import make_instance
>>> check_step2(make_instance(H=2, n=3, d=5, d_out=2, d_v=3, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from flint import arb, arb_mat

from verifier.arith import second_process
from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, certainly_less_equal, upper, with_precision_ladder
from verifier.arith.rank_caps import structural_rank_cap
from verifier.arith.second_thread import FloatJob
from verifier.data.instances import make_instance
from verifier.errors import CertificateConflict, ConstructionFailed, InsufficientPrecision
from verifier.model.mha import Weights, forward, is_shared, readout_matrix
from verifier.model.mha_balls import feature_matrix_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .proposition1_rank_induction import (
    build_key_query_weights,
    certify_construction_rank,
    rank_cap_hypothesis,
    rank_method,
    theorem_hypotheses,
)

TOLERANCE = 1e-20  # residual ball bound, relative to max |y| (at >= 128 bits)


@construction("step2.readout")
def build_readout(M: np.ndarray, H: int, d: int, d_v: int, d_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W_V (H,d,d_v), W_O (H d_v, d), W_D (d, d_out)) with blockdiag(W_V) W_O W_D = M."""
    if d_v < d_out or d_out > d:
        raise ConstructionFailed("Step 2", f"needs d_v >= d_out and d_out <= d (d_v={d_v}, d_out={d_out}, d={d})")
    W_V = np.zeros((H, d, d_v))
    W_V[:, :, :d_out] = np.asarray(M).reshape(H, d, d_out)
    block = np.zeros((d_v, d))
    block[:d_out, :d_out] = np.eye(d_out)
    W_O = np.tile(block, (H, 1))
    W_D = np.zeros((d, d_out))
    W_D[:d_out, :d_out] = np.eye(d_out)
    return W_V, W_O, W_D


@construction("step2.solve_readout_float")
def solve_readout_float(Z: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """M = Z^+ Y in float64 (least squares, minimum norm), a candidate: what
    memorizes is decided on M itself (balls, or the float residual reported).

    For a wide Z of full row rank (numerically), M = Z^T (Z Z^T)^{-1} Y, first
    from a Cholesky factor of the Gram Z Z^T (a third of a thin QR's work: the
    Gram is one symmetric product), refined on the residual Y - Z M (at most
    :data:`GRAM_REFINEMENTS` steps; it converges while u cond(Z)^2 < 1) and
    accepted when the residual is at the rounding level of Z M (:func:`_at_rounding_level`).
    Otherwise the corrected semi-normal equations with R of the thin QR
    Z^T = Q R, Q never formed (M = Z^T R^{-1} R^{-T} Y, then one correction;
    Bjorck, "Numerical Methods for Least Squares Problems", 1996, Sec. 6.6.5:
    as accurate as the QR solution for the minimum-norm problem); else lstsq."""
    T, m = Z.shape
    if 0 < T <= m:
        M = _gram_solution(Z, Y)
        if M is not None:
            return M
        R = np.linalg.qr(Z.T, mode="r")
        diag = np.abs(np.diag(R))
        if diag.min() > 1e-12 * diag.max():
            def semi_normal(B):
                return Z.T @ scipy.linalg.solve_triangular(R, scipy.linalg.solve_triangular(R, B, trans="T"))

            M = semi_normal(Y)
            return M + semi_normal(Y - Z @ M)
    return np.linalg.lstsq(Z, Y, rcond=None)[0]


def readout_and_forward(instance, con, M, skip: bool):
    """(weights, yhat): Step 2's weights from M and the forward pass (Eqs. 1-6), floats only; or the
    ConstructionFailed of a size hypothesis (d_v < d_out or d_out > d)."""
    return _weights_and_forward(M, con.W_K, con.W_Q, instance.contexts, instance.queries,
                                (instance.H, instance.d, instance.d_v, instance.d_out), skip)


def _weights_and_forward(M, W_K, W_Q, contexts, queries, dims, skip: bool):
    try:
        W_V, W_O, W_D = build_readout(M, *dims)
    except ConstructionFailed as exc:
        return exc
    weights = Weights(W_Q, W_K, W_V, W_O, W_D)
    return weights, forward(contexts, queries, weights, skip=skip)


def float_readout(instance, con, Y_target, skip: bool):
    """(M, :func:`readout_and_forward`), M the float readout of Z: floats only (a second core may run it)."""
    M = solve_readout_float(con.Z, Y_target)
    return M, readout_and_forward(instance, con, M, skip)


def float_readout_of_arrays(Z, W_K, W_Q, E, shared_T: int, queries, dims, Y_target, skip: bool):
    """:func:`float_readout` from arrays alone (the helper process's job: the same values): a shared context
    sent once (``E`` (n, d), ``shared_T`` examples) or every context (``shared_T`` 0)."""
    contexts = np.broadcast_to(E, (shared_T,) + E.shape) if shared_T else E
    M = solve_readout_float(Z, Y_target)
    return M, _weights_and_forward(M, W_K, W_Q, contexts, queries, dims, skip)


second_process.PRELOAD.append(__name__)  # the helper imports this module before it says it is ready
#: the helper process takes the readout when Z and the contexts sent are at most this many bytes
HELPER_BYTES = 2**28


class _HelperReadout:
    """The helper's readout, or (None from it: it failed or the helper did) this process's own."""

    def __init__(self, job, own):
        self.job, self.own = job, own

    def result(self):
        got = self.job.result()
        return got if got is not None else self.own()

    def wait(self) -> None:
        self.job.wait()


def float_readout_beside(instance, con, Y_target, skip: bool, *, thread: bool):
    """A job whose ``result()`` is :func:`float_readout`: in the running helper process (thread allowed, a
    shared context or contexts and Z within :data:`HELPER_BYTES`), else on a second thread (``thread``),
    else computed at once."""
    E = np.asarray(instance.contexts)
    shared = is_shared(E)
    proc = second_process.running() if thread else None
    if proc is not None and con.Z.nbytes + (0 if shared else E.nbytes) <= HELPER_BYTES:
        dims = (instance.H, instance.d, instance.d_v, instance.d_out)
        job = proc.submit(float_readout_of_arrays, con.Z, con.W_K, con.W_Q, np.ascontiguousarray(E[0]) if shared
                          else E, instance.T if shared else 0, np.asarray(instance.queries), dims, Y_target, skip)
        if job is not None:
            return _HelperReadout(job, lambda: float_readout(instance, con, Y_target, skip))
    return FloatJob(float_readout, instance, con, Y_target, skip, thread=thread)


GRAM_REFINEMENTS = 3


def _gram_solution(Z: np.ndarray, Y: np.ndarray) -> np.ndarray | None:
    """M = Z^T (Z Z^T)^{-1} Y by a Cholesky factor of Z Z^T and refinement on
    the residual, or None when Z Z^T is not numerically positive definite or the
    residual does not reach the rounding level."""
    with np.errstate(all="ignore"):
        G = Z @ Z.T
        try:
            factor = scipy.linalg.cho_factor(G, lower=True, check_finite=True)
        except (np.linalg.LinAlgError, ValueError):
            return None
        M = np.zeros((Z.shape[1],) + np.shape(Y)[1:])
        for _ in range(1 + GRAM_REFINEMENTS):
            M = M + Z.T @ scipy.linalg.cho_solve(factor, Y - Z @ M, check_finite=False)
            if _at_rounding_level(Z, M, Y):
                return M
    return None


def _at_rounding_level(Z: np.ndarray, M: np.ndarray, Y: np.ndarray) -> bool:
    """max |Y - Z M| within 1024 u of max (|Z| |M| + |Y|): the accuracy the QR
    route reaches (a float choice of a candidate, never a certificate)."""
    r = np.abs(np.asarray(Y) - Z @ M)
    scale = np.abs(Z) @ np.abs(M) + np.abs(np.asarray(Y))
    return bool(np.all(np.isfinite(r)) and np.all(np.isfinite(scale))
                and r.max(initial=0.0) <= 1024 * np.finfo(np.float64).eps * scale.max(initial=0.0))


def solve_readout_ball(Zb: arb_mat, Y) -> arb_mat:
    """An arb enclosure of M = Z^T (Z Z^T)^{-1} Y for the true Z in ``Zb``.
    Raises InsufficientPrecision when Z Z^T is not certainly invertible."""
    G = Zb * Zb.transpose()
    try:
        X = G.solve(Y if isinstance(Y, arb_mat) else to_arb_mat(Y))
    except ZeroDivisionError:
        raise InsufficientPrecision("Z Z^T not certainly invertible at this precision: raise --prec") from None
    return Zb.transpose() * X


def label_scale(Y) -> float:
    """max |y|: the residual tolerance is relative to it (scale-invariant)."""
    Y = np.asarray(Y, dtype=np.float64)
    return float(np.abs(Y).max()) if Y.size else 0.0


def residual_enclosure(Yhat: arb_mat, Y, *, tol: float | None = None) -> tuple[Decision, float, float]:
    """Decide max |yhat - y| <= tol entrywise in balls (default TOLERANCE max|y|,
    relative to the labels): TRUE when every entry certainly is, FALSE when one
    certainly is not, else UNDECIDED.
    Returns (decision, upper bound of max |yhat - y|, largest radius)."""
    Yb = Y if isinstance(Y, arb_mat) else to_arb_mat(np.asarray(Y, dtype=np.float64))
    if tol is None:
        tol = TOLERANCE * max(abs(float(x.mid())) for x in Yb.entries()) if Yb.nrows() * Yb.ncols() else 0.0
    worst, rad, decisions = 0.0, 0.0, []
    for i in range(Yhat.nrows()):
        for j in range(Yhat.ncols()):
            diff = abs(Yhat[i, j] - Yb[i, j])
            decisions.append(certainly_less_equal(diff, arb(tol)))
            worst = max(worst, upper(diff))
            rad = max(rad, float(diff.rad()))
    return Decision.all(decisions), worst, rad


def residual_note(mem: Decision, worst: float, tol: float, bits: int) -> str:
    """The exact readout's residual ball, reported beside the rank certificate
    (it decides nothing: the exact residual is 0).  A ball certainly above the
    tolerance would contradict the algebra: CertificateConflict."""
    if mem is Decision.FALSE:
        raise CertificateConflict(f"rank(Z) = T certified, but the exact readout's residual ball is certainly above "
                                  f"{tol:.3g} (<= {worst:.3g}): one certificate is wrong")
    if mem is Decision.TRUE:
        return ""
    return (f"the exact readout's residual ball (<= {worst:.3g}, {bits} bits) is not below the tolerance "
            f"{tol:.3g}{' (it underflows: the labels are tiny or zero)' if tol == 0 else ''}; the verdict rests on "
            "the rank certificate, which proves that an exact readout exists")


def exact_readout_residual(instance, W_K, W_Q, *, skip: bool = False, shift_labels: bool = True,
                           prec: int = 128, max_prec: int = 1024, readout_perturbation: float = 0.0):
    """Enclose the exact readout M = Z^T (Z Z^T)^{-1} Y' (Y' = Y - W_D^T e with the
    skip connection, App. C) and the residual of Eq. (8) with it, doubling the
    precision while undecided.  ``shift_labels=False`` (a negative control)
    fits Y itself and still runs the skip connection.
    Returns (decision, worst, radius, M_mid, bits)."""
    Y = np.asarray(instance.labels)
    shift_np = np.asarray(instance.queries)[:, :instance.d_out]

    def attempt(bits):
        Zb = feature_matrix_ball(instance.contexts, instance.queries, W_K, W_Q)
        Yb = to_arb_mat(Y)
        shift = to_arb_mat(shift_np)
        Mb = solve_readout_ball(Zb, Yb - shift if skip and shift_labels else Yb)
        if readout_perturbation:  # sensitivity control: a wrong readout must be caught
            Mb = Mb + arb(readout_perturbation) * to_arb_mat(np.ones((Mb.nrows(), Mb.ncols())))
        Yhat = Zb * Mb + shift if skip else Zb * Mb  # Eq. (8); blockdiag(W_V) W_O W_D = M
        decision, worst, rad = residual_enclosure(Yhat, Yb)
        M = np.asarray([[float(Mb[i, j].mid()) for j in range(Mb.ncols())] for i in range(Mb.nrows())])
        return decision, (worst, rad, M)

    decision, payload, bits = with_precision_ladder(attempt, prec=prec, max_prec=max_prec)
    if payload is None:
        return Decision.UNDECIDED, float("inf"), float("inf"), None, bits
    worst, rad, M = payload
    return decision, worst, rad, M, bits


#: our assembly W_V^h = [M_h, 0], W_O, W_D needs d_v >= d_out and d_out <= d (a size hypothesis fails there)
ASSEMBLY_FAILED = Refutation("failed-construction", "the readout's assembly W_V^h = [M_h, 0], W_O = stacked "
                             "[[I, 0], [0, 0]], W_D = [I; 0] needs d_v >= d_out and d_out <= d, or its exact "
                             "identity blockdiag(W_V) W_O W_D = M failed")
#: a readout moved off M by the caller: its residual certainly above the tolerance
PERTURBED_READOUT = Refutation("counterexample", "the perturbed readout's residual |Z M - Y| certainly above "
                               "1e-20 max|y| (arb balls)", variant="readout_perturbation: the readout pinned off "
                               "Z^T (Z Z^T)^{-1} Y")


@statement("step2",
           requires=("d_v >= d_out", "d_out <= d", "rank(Z) = T", "n < d", "Assumption 1", "Assumption 2"),
           exists=True, refutes=(ASSEMBLY_FAILED, PERTURBED_READOUT),
           margin="1 - ||I - R A||_inf of the rank(Z) = T certificate (the verdict rests on it)",
           measure="max |Z M - Y| (ball upper bound)", H=2, n=3, d=5, d_out=2, d_v=3)
def check_step2(instance, *, prec: int = 128, seed: int = 0, readout_perturbation: float = 0.0,
                **options) -> Evidence:
    T = instance.T
    hyps = [Hypothesis("d_v >= d_out", "certified" if instance.d_v >= instance.d_out else "refuted",
                       f"d_v = {instance.d_v}, d_out = {instance.d_out}"),
            Hypothesis("d_out <= d", "certified" if instance.d_out <= instance.d else "refuted",
                       f"d_out = {instance.d_out}, d = {instance.d}")]
    hyps += [h for h in theorem_hypotheses(instance, prec=prec, seed=seed) if h.name != "d_h >= 1"]
    claimed = f"Yhat = Z M = Y with |residual| <= {TOLERANCE:g} max|y|"
    cap = structural_rank_cap(instance.contexts, instance.queries, instance.H)
    capped = rank_cap_hypothesis(instance, cap, "rank(Z) = T")
    if capped is not None:  # the caps first (Theorem 1's helper): rank(Z) = T is impossible for ANY weights
        return conclude("step2", Decision.UNDECIDED, claimed=claimed, hypotheses=hyps + [capped],
                        measured={"T": T, "structural cap rank(Z) <=": cap.cap}, certificates=[cap.to_dict()],
                        method="exact comparisons of the data (structural cap)",
                        reason="no readout fits generic labels for ANY weights: the solve is not attempted")
    try:
        con = build_key_query_weights(instance, seed=seed)
    except ConstructionFailed as exc:
        return conclude("step2", Decision.UNDECIDED, claimed=claimed, measured={"failed at": exc.step},
                        hypotheses=hyps, reason=str(exc))
    try:
        cert = certify_construction_rank(instance, con, T, prec=prec, cap=cap) if len(con.basis) >= T else None
    except InsufficientPrecision as exc:  # the hypotheses stay in the evidence
        cert, why = None, f" ({exc})"
    else:
        why = ""
    full = cert is not None and cert.decision is Decision.TRUE
    hyps.append(Hypothesis("rank(Z) = T", "certified" if full else "evidence",
                           f"certified rank {cert.certified_k if cert else 0} of T = {T}{why}"))
    try:
        W_V, W_O, W_D = build_readout(np.zeros((instance.H * instance.d, instance.d_out)), instance.H,
                                      instance.d, instance.d_v, instance.d_out)
    except ConstructionFailed as exc:
        return conclude("step2", Decision.FALSE, claimed=claimed, measured={"failed at": exc.step},
                        hypotheses=hyps, method="shapes", reason=str(exc), refutation=ASSEMBLY_FAILED)
    mem, worst, rad, M, bits = exact_readout_residual(instance, con.W_K, con.W_Q, prec=prec,
                                                      readout_perturbation=readout_perturbation)
    tol = TOLERANCE * label_scale(instance.labels)
    rank_cert = {"kind": "rank(Z) = T", **(cert.to_dict() if cert else {})}
    if M is None:
        if not full:
            return conclude("step2", Decision.UNDECIDED, claimed=claimed, measured={}, hypotheses=hyps,
                            certificates=[rank_cert],
                            reason=f"Z Z^T not certainly invertible up to {bits} bits and rank(Z) = T not "
                                   "certified: raise --prec")
        M = solve_readout_float(con.Z, instance.labels)  # the readout exists exactly; its enclosure did not
    W_V, W_O, W_D = build_readout(M, instance.H, instance.d, instance.d_v, instance.d_out)
    weights = Weights(con.W_Q, con.W_K, W_V, W_O, W_D)
    identity_exact = bool(np.array_equal(readout_matrix(weights), M))
    identity = Decision.TRUE if identity_exact else Decision.FALSE
    notes, refutation = [], ASSEMBLY_FAILED
    if readout_perturbation:  # the readout pinned off M: its residual decides (a variant)
        decision, refutation = Decision.all([mem, identity]), PERTURBED_READOUT
        margin = tol - worst
    else:  # rank(Z) = T (a certified minor, or Z Z^T certainly invertible in the solve) makes M exist exactly
        decision = identity
        margin = 1.0 - cert.residual_norm_upper if full and np.isfinite(cert.residual_norm_upper) else None
        if bits and np.isfinite(worst):
            notes.append(residual_note(mem, worst, tol, bits))
        else:
            notes.append(f"the exact readout was not enclosed up to {bits} bits (rank(Z) = T is certified: it exists)")
    return conclude("step2", decision, claimed=claimed,
                    measured={"max |Z M - Y| (ball upper bound)": worst, "largest radius": rad,
                              "blockdiag(W_V) W_O W_D == M exactly": identity_exact,
                              "residual certainly <= 1e-20 max|y|": mem.value},
                    hypotheses=hyps, certified=decision is not Decision.UNDECIDED,
                    method=("rank(Z) = T: " + rank_method(cert) if full else "Z Z^T certainly invertible: arb balls")
                    + "; readout residual: arb balls", prec_bits=bits, tolerance=tol, margin=margin,
                    certificates=[{"kind": "residual ball", "max_abs_residual_upper": worst, "radius": rad},
                                  rank_cert],
                    reason="; ".join(n for n in notes if n), refutation=refutation,
                    trail=[Step("Solve Z M = Y in balls: M = Z^T (Z Z^T)^{-1} Y", "Step 2, Eq. (8)",
                                {"T": T, "Hd": instance.H * instance.d}),
                           Step("Assemble W_V^h = [M_h, 0], W_O = stacked [[I, 0], [0, 0]], W_D = [I; 0]",
                                "Step 2 (reconstructed)", {"d_v": instance.d_v, "d_out": instance.d_out}),
                           Step("Residual of Eq. (8) in balls", "Eq. (8)", {"max |residual| <=": worst})])


@negative_control("step2", "d_v < d_out: the readout cannot be assembled (hypothesis unmet)",
                  expect=("hypotheses-unmet",))
def control_dv_too_small(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_step2(make_instance(H=2, n=3, d=5, d_out=2, d_v=1, seed=seed), prec=prec, seed=seed)


@negative_control("step2", "a readout off by 1e-9 per entry: the residual check fails", expect=("refuted",))
def control_perturbed_readout(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_step2(make_instance(H=2, n=3, d=5, d_out=2, d_v=3, seed=seed), prec=prec, seed=seed,
                       readout_perturbation=1e-9)
