"""Linear independence at the paper's numerical-rank tolerance, for many subsets at once.

The experiments reproduce the paper's own empirical test, which is a
NUMERICAL one: the robustness of a set of k vectors in R^m (rows of A) is
``rho(A) = sigma_min(U) / sigma_max(U)`` with U = A with unit rows, compared
with numpy's and torch's ``matrix_rank`` tolerance ``tau = max(k, m) * eps``
of the data's dtype (float32 ViT tokens, k = 197, m = 768: tau = 768 * 2^-23
~ 9.2e-5), the one the paper's notebook used.  This is the paper's criterion,
not the engine's meaning of a user's number: the statements decide "at the
data's precision" for every point of the data's rounding intervals
(:mod:`verifier.statements.at_precision`); here rho is certified in balls
and compared with tau, and the report says "at numpy's tolerance".

What this module adds for the experiments, where thousands of subsets are
screened: a float64 screen of rho for many subsets from one Gram matrix of
the unit rows (principal submatrices; its error ~1e-7 in rho is far below
tau), and two certificates in Arb balls --

* :func:`certify_rho`: both sides of rho for one subset
  (:func:`verifier.arith.robustness.relative_sigma_bounds`);
* :func:`rho_upper_certificate`: only an upper bound of rho (test vectors
  for sigma_min(U) from above and sigma_max(U) from below): cheap, enough
  to certify a failure;
* :func:`certify_all_square_subsets`: for m >= d vectors in R^d, one test
  vector x bounds rho of EVERY d-subset S: rho(V_S) <= sigma_d(U_S) <=
  ||U_S x|| / ||x|| <= ||U x|| / ||x||, so general position fails at
  precision for all of them at once.

>>> import numpy as np
>>> A = np.array([[1.0, 0.0, 0.0], [1.0, 1e-9, 0.0]])
>>> certify_rho(A, tolerance=3 * 2.0 ** -23)["decision"]
'fails'
>>> certify_rho(np.eye(3)[:2], tolerance=3 * 2.0 ** -23)["decision"]
'holds'
"""
from __future__ import annotations

import numpy as np
import torch
from flint import arb, arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, UpperBound, certainly_less, certainly_less_equal, lower, upper, workprec
from verifier.arith.robustness import relative_sigma_bounds
from verifier.arith.singular_values import sigma_min_upper_bound, spectral_norm_lower_bound

__all__ = ["tolerance_of", "unit_gram", "rho_screen", "certify_rho", "rho_upper_certificate",
           "certify_all_square_subsets"]

_DECISION = {Decision.TRUE: "holds", Decision.FALSE: "fails", Decision.UNDECIDED: "undecided"}


def tolerance_of(sample: np.ndarray, shape: tuple[int, int]) -> float:
    """numpy's numerical-rank tolerance for a k x m matrix of data of
    ``sample``'s dtype: max(k, m) * eps (0 for integers)."""
    a = np.asarray(sample)
    return float(max(shape)) * float(np.finfo(a.dtype).eps) if a.dtype.kind == "f" else 0.0


def unit_gram(V: np.ndarray) -> np.ndarray:
    """Gram matrix of the rows of V scaled to unit length (float64)."""
    V = np.asarray(V, dtype=np.float64)
    U = V / np.maximum(np.linalg.norm(V, axis=1, keepdims=True), np.finfo(float).tiny)
    return U @ U.T


def rho_screen(gram: np.ndarray, subsets: np.ndarray, *, chunk: int = 64) -> np.ndarray:
    """float64 rho = sqrt(lambda_min / lambda_max) of every principal
    submatrix ``gram[S, S]`` (S a row of ``subsets``): a screen, not a bound."""
    G = torch.from_numpy(np.asarray(gram, dtype=np.float64))
    subsets = np.asarray(subsets, dtype=np.intp)
    out = np.empty(len(subsets))
    for s in range(0, len(subsets), chunk):
        idx = torch.from_numpy(subsets[s:s + chunk])
        lam = torch.linalg.eigvalsh(G[idx[:, :, None], idx[:, None, :]])
        out[s:s + chunk] = torch.sqrt(lam[:, 0].clamp(min=0.0) / lam[:, -1]).numpy()
    return out


def certify_rho(A, *, tolerance: float, prec: int = 128) -> dict:
    """Both sides of rho(A), certified, against ``tolerance``."""
    lo, hi = relative_sigma_bounds(np.asarray(A, dtype=np.float64), prec=prec)
    dec = Decision.of(lo > tolerance, hi <= tolerance)
    return {"rho_lower": lo, "rho_upper": hi, "tolerance": tolerance, "decision": _DECISION[dec]}


def _unit_rows(A: np.ndarray) -> arb_mat:
    """A with unit rows, in balls containing the exact normalised rows."""
    M = to_arb_mat(A)
    out = arb_mat(M.nrows(), M.ncols())
    for i in range(M.nrows()):
        s = arb(0)
        for j in range(M.ncols()):
            s += M[i, j] * M[i, j]
        r = s.sqrt()
        for j in range(M.ncols()):
            out[i, j] = M[i, j] / r
    return out


def rho_upper_certificate(A, *, tolerance: float, prec: int = 128) -> dict:
    """Cheap side only: rho(A) <= ||y^T U|| / ||y|| / ||U z|| (y, z test
    vectors: an upper bound of sigma_min(U) over a lower bound of
    sigma_max(U), at least 1 for a unit row).  'fails' when that is <=
    tolerance, else 'undecided' (an upper bound never proves the property)."""
    A = np.asarray(A, dtype=np.float64)
    with workprec(prec):
        U = _unit_rows(A)
        ub = sigma_min_upper_bound(U, prec=prec)
        smax = max(1.0, lower(spectral_norm_lower_bound(U, prec=prec)))
        bound = UpperBound(ub.value / arb(smax))
    fails = certainly_less_equal(bound, arb(tolerance)) is Decision.TRUE
    return {"rho_upper": upper(bound), "tolerance": tolerance, "decision": "fails" if fails else "undecided"}


def certify_all_square_subsets(V, *, tolerance: float, prec: int = 128) -> dict:
    """For m >= d rows in R^d: is rho(V_S) <= tolerance for EVERY d-subset
    S?  x = the float right singular vector of U (unit rows of V) for its
    smallest singular value; ``||U_S x|| <= ||U x||`` for every S (rows
    removed) and sigma_max(U_S) >= 1, so ``||U x|| / ||x|| <= tolerance``
    (enclosed in balls) certifies it for all C(m, d) subsets at once."""
    V = np.asarray(V, dtype=np.float64)
    m, d = V.shape
    if m < d:
        raise ValueError(f"needs m >= d rows, got {m} x {d}")
    Uf = V / np.linalg.norm(V, axis=1, keepdims=True)
    x = np.linalg.svd(Uf, full_matrices=False)[2][-1]
    with workprec(prec):
        Ux = _unit_rows(V) * to_arb_mat(x[:, None])
        s = arb(0)
        for i in range(m):
            s += Ux[i, 0] * Ux[i, 0]
        nx = arb(0)
        for v in x.tolist():
            nx += arb(v) * arb(v)
        ub = UpperBound(s.sqrt() / nx.sqrt())
    holds = certainly_less(ub, arb(tolerance)) is Decision.TRUE
    return {"d": d, "m": m, "rho_upper_all_subsets": upper(ub), "tolerance": tolerance, "all_dependent": holds,
            "certificate": (f"rho(V_S) <= ||U x|| / ||x|| <= {upper(ub):.4g} <= tau = {tolerance:.4g} for every "
                            f"{d}-subset S of the {m} vectors (one test vector x, Arb)") if holds else None}
