"""The construction of Proposition 1's proof (App. B): key/query weights by
induction on heads.  Shared by the checkers of ``proposition1``,
``appendixB2``, ``step2``, ``theorem1``, ``remark1`` and ``appendixC``.

Construction (one head at a time, rows kept in block row-echelon form)
-----------------------------------------------------------------------
State before head h: a basis I of rows of Z' (the previous heads' blocks,
finite c, as actually computed) and, for every other working row t, the
coefficients A_t with Z'_t = A_t Z'_I (the row operations of App. B).

* Head 1 (base, Claim 1): r examples J, interior targets s^(j) drawn so that
  the rows s^(j)^T E^(j) are independent; W^1 fits them exactly.
* Head h >= 2 (step, Claim 2): J = r-1 rows dependent on I.  Lemma 3 gives
  W' = v w^T killing J's queries; at c = infinity each saturated row i has
  z_h^(i) = E^(i)[i*(i)] (a token).  The targets on J are drawn so that the
  rows X = s^(j)^T E^(j) - (A_J Z^inf_{h,I})_j are independent (App. B, the
  affine set of achievable rows has dimension n-1: that is the "-1").
* Rows of D \\ J whose limit rows y_t = z^inf_h(t) - A_t Z^inf_{h,I} fall
  outside span(X) are independent for free; they join the lower block.
* Lemma 1 on [[Z'_I, Z_{h,I}], [0, Y]] gives rank >= |I| + rank(Y).  App. B.2:
  with kappa = sqrt(sum_t (delta_t + sum_i |A_ti|)^2) and the largest token
  norm x_max, ||Y_c - Y_inf||_F <= x_max * eps * kappa when every saturated
  softmax is eps-close to its one-hot limit (Lemma 4), so eps is chosen with
  x_max eps kappa = margin * sigma_min(Y_inf) and c = max c0(eps) (Lemma 4).
* Every W^h is built and kept FACTORED, W^h = L_h R_h^T with L_h, R_h in
  R^{d x r}: Claim 1 gives W* = B P (B = E^+ log s, P = Q^+), Claim 2 appends
  the column pair (v, c w).  Since r <= d_h the factors, padded with zero
  columns, ARE the key/query weights W_K^h, W_Q^h (rank <= r is structural;
  no d x d matrix is ever formed, so d = 4096 costs T d r, not T d^2); with
  r > d_h (a negative control) the product is compressed by a thin SVD when
  its rank allows, else refused.  Z is computed from these weights: the
  certificate is about the weights as returned.

Numerics (issue 11: torch for the dense linear algebra at scale)
----------------------------------------------------------------
What costs T-sized work runs on an array backend (:mod:`verifier.arith.backend`:
torch on CUDA when present, numpy/OpenBLAS on the CPU, where it was measured
faster than torch's CPU MKL): the logits (T x n per head, from the factors),
the head outputs ``S E`` (T x d per head; at the 7B-class layer these and
the row operations are the whole cost), the row operations ``A_t Z_{h,I}``
and the projections ``Q^T Y`` of the least-squares coefficients.  Left on
numpy/scipy, all on r-ish x d blocks (r <= d_h: latency-bound, a device
round trip would cost more than the work):

* column-pivoted QR (scipy ``qr(pivoting=True)``): the free rows of each
  head and the head's columns of the minor.  torch has no pivoted QR
  (``torch.linalg.qr`` and ``torch.geqrf`` do not pivot);
* thin QR + triangular solve of the basis (least squares), the SVD of
  Y_inf (sigma_min, resolved to eps * sigma_max), eigvalsh of the r x r
  Gram matrices, Claim 1's right inverses and Lemma 3's vectors.

The minor's columns come from the induction's own blocks (each head's
new rows take that head's best columns: :meth:`Construction.minor_columns`),
not from a pivoted QR of the whole T x Hd Z.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from verifier.arith.backend import get_backend
from verifier.data.instances import rng_for
from verifier.errors import ConstructionFailed
from verifier.model import mha as model
from verifier.model.factorisation import factor_product
from verifier.statements.registry import construction

from .claim1_fit_one_head import build_claim1_factors, interior_targets
from .claim2_fit_and_saturate import Claim2Construction, build_claim2_attention
from .lemma3_rank_one_saturation import build_saturation_vectors, saturation_profile

FREE_ROW_RTOL = 1e-7  # a limit row counts as independent above this relative residual


@dataclass
class HeadStep:
    """What one head did (the audit reads these)."""

    head: int
    basis_before: tuple  # I: rows already independent
    new_rows: tuple  # J: rows this head is responsible for (Claim 1 / Claim 2)
    free_rows: tuple  # rows that became independent without being targeted
    coefficients: np.ndarray  # A_{J u F}: row-operation coefficients over I
    targets: np.ndarray  # s^(j) for j in J
    claim2: Claim2Construction | None
    limit_block: np.ndarray  # Y_inf (|J|+|F|) x d
    sigma_min_limit: float  # float estimate; certified in appendixB2
    kappa: float
    x_max: float
    eps: float
    perturbation_bound: float  # x_max * eps * kappa (a priori)
    perturbation_actual: float  # ||Y_c - Y_inf||_2 (float)
    rank_after: int
    columns: tuple = ()  # head h's columns of Z (pivoted QR of Y_c, best first): this head's block of the minor

    @property
    def c(self) -> float:
        return 0.0 if self.claim2 is None else self.claim2.c


@dataclass
class Construction:
    rows: tuple  # the working rows (first min(T, target) examples ... see build)
    r: int
    target: int
    factors: list  # per head (L_h, R_h) with W^h = L_h R_h^T, each d x (rank bound)
    W_K: np.ndarray  # (H, d, d_h)
    W_Q: np.ndarray
    Z: np.ndarray  # (T, H d) float64, from the returned weights
    basis: tuple  # rows proved independent by the induction (in order)
    heads: list = field(default_factory=list)
    factorisation_error: float = 0.0
    attention_ranks: tuple = ()
    backend: str = "numpy"
    seconds: float = 0.0  # wall time of the construction

    @property
    def W(self) -> np.ndarray:
        """The attention matrices W^h = L_h R_h^T as (H, d, d) float64 (formed on demand)."""
        return np.stack([L @ R.T for L, R in self.factors])

    def minor_columns(self, k: int) -> tuple:
        """Columns of Z for a k x k minor on the rows ``basis[:k]``, from the
        induction's own block structure: each head's new rows take that
        head's best columns (pivoted QR of its row-reduced block Y_c), so the
        minor is, up to the row operations of App. B, block triangular with
        the blocks Y_c on its diagonal.  () when the heads did not record any."""
        cols: list = []
        for hs in self.heads:
            need = min(k - len(cols), len(hs.columns))
            if need <= 0:
                break
            cols.extend(hs.columns[:need])
        return tuple(cols) if len(cols) == k else ()


def _limit_rows(contexts, rows, istar) -> np.ndarray:
    """z^inf = E^(t)[i*(t)]: the token a saturated head picks."""
    rows = np.asarray(rows, dtype=int)
    if not len(rows):
        return np.zeros((0, contexts.shape[2]))
    return contexts[0][istar] if model.is_shared(contexts) else contexts[rows, istar, :]


#: Free rows picked one at a time (pivoted Gram-Schmidt) before a full pivoted QR takes over.
GREEDY_FREE_ROWS = 8


def _greedy_free(res: np.ndarray, tol: float, limit: int) -> list | None:
    """Column-pivoted QR of ``res^T`` run step by step (the row of largest
    residual norm, then project it out), stopped at the first residual norm
    <= tol or at ``limit`` rows: O(picks x |res|) instead of a full QR when
    few rows are free (later heads).  None after GREEDY_FREE_ROWS picks
    (many free rows: the caller's full pivoted QR is faster)."""
    Rr = np.array(res, dtype=np.float64, copy=True)
    norms = np.einsum("ij,ij->i", Rr, Rr)
    picks: list = []
    while len(picks) < limit:
        j = int(np.argmax(norms))
        if not norms[j] > 0 or not np.sqrt(norms[j]) > tol:
            break
        if len(picks) == GREEDY_FREE_ROWS:
            return None
        picks.append(j)
        q = Rr[j] / np.linalg.norm(Rr[j])
        for _ in range(2):  # twice is enough (Giraud et al.): the picked direction leaves every row
            Rr -= np.outer(Rr @ q, q)
        norms = np.einsum("ij,ij->i", Rr, Rr)
        norms[picks] = -1.0
    return picks


def _split_free(res: np.ndarray, scale: float, limit: int) -> list:
    """Indices of rows of ``res`` chosen independent by pivoted QR (at most ``limit``)."""
    if limit <= 0 or res.shape[0] == 0:
        return []
    tol = FREE_ROW_RTOL * max(scale, 1e-300)
    if np.linalg.norm(res, axis=1).max() <= tol:
        return []  # every row dependent (e.g. shared contexts): no QR needed
    picks = _greedy_free(res, tol, limit)
    if picks is not None:
        return picks
    _, Rm, piv = scipy.linalg.qr(res.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rm))
    k = int(np.sum(diag > FREE_ROW_RTOL * max(scale, 1e-300)))
    return [int(i) for i in piv[:min(k, limit)]]


def _pivot_columns(Y: np.ndarray) -> np.ndarray:
    """Column order of a column-pivoted QR of Y (largest first)."""
    if Y.shape[0] == 0:
        return np.zeros(0, dtype=int)
    return scipy.linalg.qr(Y, mode="r", pivoting=True)[1]


def _lstsq_coeffs(Y: np.ndarray, basis: np.ndarray, mm=np.matmul) -> np.ndarray:
    """b with Y ~ b @ basis (rows), least squares."""
    if basis.shape[0] == 0 or Y.shape[0] == 0:
        return np.zeros((Y.shape[0], basis.shape[0]))
    Q, R = np.linalg.qr(basis.T)  # basis rows are independent by construction
    return scipy.linalg.solve_triangular(R, mm(Q.T, Y.T)).T


def _row_operation_coeffs(Zh, A_left, left, basis, Y_c, mm=np.matmul) -> np.ndarray:
    """:func:`_lstsq_coeffs` of the row-reduced rows ``y = Zh[left] - A_left Zh[basis]``
    on ``Y_c`` (``A_left``: the rows ``left`` of the coefficients), without forming y: with
    ``Y_c^T = Q R``, the coefficients are ``(Zh[left] Q - A_left (Zh[basis] Q)) R^-T`` (the same
    least squares, |left| x |basis| x |lower| work instead of |left| x |basis| x d)."""
    if Y_c.shape[0] == 0:
        return np.zeros((len(left), 0))
    Q, R = np.linalg.qr(Y_c.T)  # Y_c's rows are independent by construction
    ZQ = mm(np.ascontiguousarray(Zh), Q)  # (T, |lower|)
    yQ = ZQ[left] - (mm(A_left, ZQ[basis]) if basis else 0.0)
    return scipy.linalg.solve_triangular(R, yQ.T).T


def _sigma_min(X: np.ndarray) -> float:
    """Smallest singular value of a short-wide X (float estimate, via X X^T)."""
    if X.shape[0] == 0:
        return float("inf")
    ev = np.linalg.eigvalsh(X @ X.T)
    return float(np.sqrt(max(ev[0], 0.0)))


def _best_targets(rng, contexts, J, offset, n, draws: int):
    """Interior targets for J maximising sigma_min of X = s^T E - offset."""
    best = None
    EJ = model.select(contexts, J)
    for _ in range(draws):
        s = interior_targets(rng, len(J), n)
        X = model.head_outputs(EJ, s[:, None, :])[:, 0] - offset
        sig = _sigma_min(X)
        if best is None or sig > best[0]:
            best = (sig, s, X)
    return best[1], best[2]


def _head_block(E, e, L, R, rows=None, mm=np.matmul) -> np.ndarray:
    """z_h^(t) = E^(t)^T softmax(E^(t) L R^T e^(t)) for the given rows (T', d)."""
    rows = np.arange(E.shape[0]) if rows is None else np.asarray(rows, dtype=int)
    if not len(rows):
        return np.zeros((0, E.shape[2]))
    S = model.softmax(model.logits_from_factors(E, e, L, R, rows=rows, mm=mm))
    if model.is_shared(E) or E.shape[0] == 1:
        return mm(S, E[0])
    return model.head_outputs(E[rows], S[:, None, :])[:, 0]


def _x_max(E) -> float:
    """The largest token norm (one context when they are shared)."""
    X = E[0] if model.is_shared(E) else E
    return float(np.sqrt(np.max(np.sum(X * X, axis=-1))))


@construction("proposition1.key_query_weights")
def build_key_query_weights(instance, *, seed: int = 0, r: int | None = None, margin: float = 0.25,
                            target_draws: int = 4, factor: bool = True, backend=None) -> Construction:
    """Proposition 1's key/query weights for ``instance`` (App. B).

    ``r`` overrides min(n, d_h) (Remark 1 passes min(n, k, d_h)); the target rank
    is min(H(r-1)+1, T) on the first ``target`` rows.  ``backend`` runs the
    large products (default: torch on CUDA when present, else numpy).
    """
    t0 = time.perf_counter()
    b = get_backend(backend)
    mm = b.mm
    E = np.asarray(instance.contexts)
    e = np.asarray(instance.queries)
    T, n, d = E.shape
    H = instance.H
    r = instance.r if r is None else int(r)
    if r < 1:
        raise ConstructionFailed("Proposition 1", "r must be >= 1")
    target = min(H * (r - 1) + 1, T)
    rng = rng_for(seed, "proposition1")  # not the data's stream (see rng_for)
    x_max = _x_max(E)
    rows = list(range(T))
    factors = []
    blocks = np.zeros((T, H, d))
    basis: list[int] = []
    pending = list(rows)  # rows not in the basis, in order
    A = np.zeros((T, 0))  # A[i]: the coefficients of row pending[i] over the basis
    heads: list[HeadStep] = []
    uniform = None  # the block of a head with W^h = 0 (uniform attention): the same for every such head
    for h in range(H):
        if len(basis) >= target:
            factors.append((np.zeros((d, 0)), np.zeros((d, 0))))
            if uniform is None:
                uniform = model.head_outputs(E, model.softmax(np.zeros((T, 1, n))))[:, 0]
            blocks[:, h] = uniform
            continue
        first = h == 0
        k = min(r if first else r - 1, target - len(basis), len(pending))
        J = pending[:k]
        rest = pending[k:]
        A_J, A_rest = A[:k], A[k:]
        if first:
            claim2, vw, istar_I, istar_rest = None, None, None, None
            offset = np.zeros((k, d))
        else:
            vw = build_saturation_vectors(e, J, rng)
            prof = saturation_profile(E, e, *vw, basis + rest)  # once for I and the rest (Claim 2 reuses it)
            istar_I, istar_rest = prof[0][:len(basis)], prof[0][len(basis):]
            Zinf_I = _limit_rows(E, basis, istar_I)
            offset = A_J @ Zinf_I
        targets, X_inf = _best_targets(rng, E, J, offset, n, target_draws)
        # Rows of `rest` that are independent of the lower block for free.
        room = target - len(basis) - k
        if first:
            Bf, Pf = build_claim1_factors(model.select(E, J), e[J], targets)
            L, R = Bf, Pf.T
            z_rest_limit = _head_block(E, e, L, R, rest, mm)
            y_rest = z_rest_limit
        else:
            y_rest = _limit_rows(E, rest, istar_rest) - mm(A_rest, Zinf_I)
        res = y_rest - _lstsq_coeffs(y_rest, X_inf, mm) @ X_inf if len(rest) else y_rest
        free_idx = _split_free(res, x_max, room)  # relative to the tokens' scale
        F = [rest[i] for i in free_idx]
        Y_inf = np.vstack([X_inf, y_rest[free_idx]]) if F else X_inf
        sigma = float(np.linalg.svd(Y_inf, compute_uv=False)[-1]) if Y_inf.shape[0] else float("inf")
        if not sigma > 0:  # SVD, not the Gram matrix: sigma_min is resolved down to eps * sigma_max
            raise ConstructionFailed("App. B.2", f"head {h + 1}: the limit block Y_inf is numerically singular "
                                     "in float64 (no finite c can be chosen from it)")
        A_lower = np.vstack([A_J, A_rest[free_idx]]) if F else A_J
        if not first:
            delta = np.concatenate([np.zeros(k), np.ones(len(F))])
            kappa = float(np.sqrt(np.sum((delta + np.abs(A_lower).sum(axis=1)) ** 2)))
            eps = min(0.5, margin * sigma / max(x_max * kappa, 1e-300))
            sat = np.concatenate([np.arange(len(basis)), len(basis) + np.asarray(free_idx, dtype=int)])
            claim2 = build_claim2_attention(E, e, J, targets, basis + F, eps, rng, vw=vw,
                                            profile=tuple(x[sat] for x in prof))
            L = np.hstack([claim2.B, (claim2.c * claim2.v)[:, None]])  # W = W* + c v w^T
            R = np.hstack([claim2.P.T, claim2.w[:, None]])
            bound = x_max * eps * kappa
        else:
            kappa, eps, bound = 0.0, 0.0, 0.0
        factors.append((L, R))
        blocks[:, h] = _head_block(E, e, L, R, None, mm)
        Zh = blocks[:, h]
        lower = J + F
        Y_c = Zh[lower] - mm(A_lower, Zh[basis]) if basis else Zh[lower]
        columns = tuple(int(h * d + j) for j in _pivot_columns(Y_c)[:len(lower)])
        actual = float(np.sqrt(max(np.linalg.eigvalsh((Y_c - Y_inf) @ (Y_c - Y_inf).T)[-1], 0.0))) if len(lower) else 0.0
        # Update the row-echelon representation (App. B's row operations).
        free = set(free_idx)
        at = [i for i in range(len(rest)) if i not in free]  # the rows left, as places in rest
        left = [rest[i] for i in at]
        A = np.zeros((0, len(basis) + len(lower)))
        if left:
            A_left = A_rest[at]
            coef = _row_operation_coeffs(Zh, A_left, left, basis, Y_c, mm)
            A = np.hstack([A_left - coef @ A_lower, coef])
        heads.append(HeadStep(h + 1, tuple(basis), tuple(J), tuple(F), A_lower.copy(), targets,
                              claim2, Y_inf, sigma, kappa, x_max, eps, bound, actual,
                              len(basis) + len(lower), columns))
        basis = basis + lower
        pending = left
    for _ in range(len(factors), H):
        factors.append((np.zeros((d, 0)), np.zeros((d, 0))))
    Z = blocks.reshape(T, H * d)
    if not factor:
        return Construction(tuple(rows), r, target, factors, None, None, Z, tuple(basis), heads, backend=b.name,
                            seconds=time.perf_counter() - t0)
    W_K = np.zeros((H, d, instance.d_h))
    W_Q = np.zeros((H, d, instance.d_h))
    ranks, errors = [], []
    for h, (L, R) in enumerate(factors):
        W_K[h], W_Q[h], rk, err = factor_product(L, R, instance.d_h, h)
        ranks.append(rk)
        errors.append(err)
    if any(errors):  # compressed by an SVD: Z from the weights as returned
        Z = model.feature_matrix(E, e, W_K, W_Q)
    return Construction(tuple(rows), r, target, factors, W_K, W_Q, Z, tuple(basis), heads,
                        max(errors), tuple(ranks), backend=b.name, seconds=time.perf_counter() - t0)
