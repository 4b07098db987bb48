"""Linear independence at the data's precision: the reading of Assumptions 1-3
and general position on float activations.

Float data are known only to their dtype's precision: a float32 activation
is one point of a ball of relative radius ``u = 2^-24``.  Read exactly, the
stored rationals are almost never dependent (rounding breaks every exact
dependence), so the exact checkers see "independent" where the data cannot
tell.  Here a set of k vectors (the rows of a k x m matrix ``A``, k <= m) is

* **independent at precision u** when every matrix within spectral distance
  ``delta = u ||A||_F`` of ``A`` has full row rank, i.e.
  ``sigma_k(A) > delta`` (the entrywise ball ``|dA_ij| <= u |A_ij|`` lies
  inside this one, as ``||dA||_2 <= ||dA||_F <= u ||A||_F``);
* **dependent at precision u** when some matrix within that distance is rank
  deficient, i.e. ``sigma_k(A) <= delta`` (Eckart-Young: for a unit y,
  ``B = A - y y^T A`` has ``y^T B = 0`` and ``||A - B||_2 = ||y^T A||``).

Both are certified in Arb balls on the stored values: "independent" by
:func:`verifier.arith.singular_values.sigma_min_lower_bound` (expensive: a
few arb matrix products), "dependent" by one test vector y (cheap: ``||y^T
A|| / ||y|| <= delta`` enclosed).  Many subsets are screened in float64
(Gram eigenvalues of principal submatrices, refined by a QR where the value
is within a factor 30 of ``delta``): that is evidence, reported as such.

>>> import numpy as np
>>> A = np.array([[1.0, 0.0, 0.0], [1.0, 1e-9, 0.0]])
>>> certify_subset(A, u=2.0 ** -24)["decision"]
'dependent'
>>> certify_subset(np.eye(3)[:2], u=2.0 ** -24)["decision"]
'independent'
"""
from __future__ import annotations

import numpy as np
import torch
from flint import arb

from verifier.arith.balls import float_up, frobenius_upper, matmul, to_arb_mat
from verifier.arith.compare import Decision, certainly_less, workprec
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.errors import InsufficientPrecision

__all__ = ["relative_precision", "relative_sigma_min", "certify_subset", "certify_all_square_subsets",
           "REFINE_FACTOR"]

REFINE_FACTOR = 30.0  # Gram screen values below REFINE_FACTOR * u are recomputed by a QR


def relative_precision(dtype) -> float:
    """Unit roundoff of a float dtype: 2^-24 for float32, 2^-53 for float64."""
    return float(np.finfo(np.dtype(dtype)).eps) / 2


def _rel_sigma_qr(V: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """sigma_k(V_S) / ||V_S||_F by a Householder QR of V_S^T, then the SVD of R
    (backward stable: accurate to ~1e-16 relative to sigma_max)."""
    A = torch.from_numpy(V[idx]).transpose(-1, -2)  # (B, m, k)
    R = torch.linalg.qr(A, mode="r")[1]
    s = torch.linalg.svdvals(R)
    return (s[:, -1] / torch.linalg.matrix_norm(R)).numpy()


def relative_sigma_min(V: np.ndarray, subsets: np.ndarray, *, u: float, gram: np.ndarray | None = None,
                       chunk: int = 64) -> np.ndarray:
    """Float64 screen of ``sigma_k(V_S) / ||V_S||_F`` for every row of
    ``subsets`` (B, k): from the principal submatrices of the Gram matrix
    ``V V^T`` (cheap), recomputed from ``V_S`` by QR where the value is below
    ``REFINE_FACTOR * u`` (where the Gram's squaring would blur it).
    Numerical: evidence, never a certificate."""
    V = np.asarray(V, dtype=np.float64)
    subsets = np.asarray(subsets, dtype=np.intp)
    B, k = subsets.shape
    out = np.empty(B)
    if k > V.shape[1]:
        return np.zeros(B)
    G = torch.from_numpy(V @ V.T if gram is None else gram)
    for s in range(0, B, chunk):
        idx = torch.from_numpy(subsets[s:s + chunk])
        sub = G[idx[:, :, None], idx[:, None, :]]
        lam = torch.linalg.eigvalsh(sub)[:, 0].clamp(min=0.0)
        tr = torch.diagonal(sub, dim1=-2, dim2=-1).sum(-1)
        out[s:s + chunk] = torch.sqrt(lam / tr).numpy()
    low = np.flatnonzero(out < REFINE_FACTOR * u)
    for s in range(0, low.size, chunk):
        out[low[s:s + chunk]] = _rel_sigma_qr(V, subsets[low[s:s + chunk]])
    return out


def _frobenius_enclosure(A) -> tuple[arb, arb]:
    sq = arb(0)
    for x in np.asarray(A, dtype=np.float64).ravel().tolist():
        sq += arb(x) * arb(x)
    f = sq.sqrt()
    return arb(-float_up(-f.lower())), arb(float_up(f.upper()))


def certify_subset(A, *, u: float, prec: int = 128, lower: bool = True) -> dict:
    """Is the row set of ``A`` (k x m, k <= m) independent at precision ``u``?

    Certified in balls: 'independent' when a rigorous lower bound of
    sigma_k(A) exceeds ``u ||A||_F``, 'dependent' when the rigorous upper
    bound ``||y^T A|| / ||y||`` (y the float left singular vector) is at most
    ``u ||A||_F``, else 'undecided'.  ``lower=False`` skips the (costly)
    lower bound: only 'dependent' can then be certified."""
    A = np.asarray(A, dtype=np.float64)
    k, m = A.shape
    f_lo, f_hi = _frobenius_enclosure(A)
    delta_lo, delta_hi = f_lo * arb(u), f_hi * arb(u)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    y = U[:, -1]
    with workprec(prec):
        yA = matmul(to_arb_mat(y[None, :]), to_arb_mat(A))
        ny = arb(0)
        for v in y.tolist():
            ny += arb(v) * arb(v)
        upper = frobenius_upper(yA) / ny.sqrt()
    out = {"k": k, "m": m, "u": u, "float_relative_sigma_min": float(s[-1] / np.linalg.norm(A)),
           "sigma_upper": float_up(upper), "delta_upper": float(delta_hi.upper()),
           "sigma_lower": None, "decision": "undecided"}
    if certainly_less(upper, delta_lo) is Decision.TRUE:
        out["decision"] = "dependent"
        out["certificate"] = (f"||y^T A|| / ||y|| <= {float_up(upper):.4g} < u ||A||_F: the rank-deficient "
                              "A - y y^T A / ||y||^2 lies in the precision ball")
        return out
    if lower:
        try:
            lb = sigma_min_lower_bound(A, prec=prec, squarings=1)
        except InsufficientPrecision:
            return out
        out["sigma_lower"] = float(lb.lower())
        if certainly_less(delta_hi, lb) is Decision.TRUE:
            out["decision"] = "independent"
            out["certificate"] = (f"sigma_min(A) >= {float(lb.lower()):.4g} > u ||A||_F = "
                                  f"{float(delta_hi.upper()):.4g} (arb)")
    return out


def certify_all_square_subsets(V, *, u: float, prec: int = 128) -> dict:
    """For m >= d rows in R^d: are ALL d-subsets dependent at precision u?

    For the float right singular vector x of V (smallest singular value),
    every d-subset S has ``sigma_d(V_S) <= ||V_S x|| / ||x|| <= ||V x|| / ||x||``
    (removing rows shrinks ``||V x||``), and ``||V_S||_F`` is at least the
    root-sum of the d smallest squared row norms.  If the enclosed
    ``||V x|| / ||x||`` is below ``u`` times that, no d-subset is independent
    at precision u: general position fails for every d-subset, certified."""
    V = np.asarray(V, dtype=np.float64)
    m, d = V.shape
    if m < d:
        raise ValueError(f"needs m >= d rows, got {m} x {d}")
    _, _, Vt = np.linalg.svd(V, full_matrices=False)
    x = Vt[-1]
    norms = np.sort(np.einsum("ij,ij->i", V, V))[:d]
    with workprec(prec):
        Vx = matmul(to_arb_mat(V), to_arb_mat(x[:, None]))
        nx = arb(0)
        for v in x.tolist():
            nx += arb(v) * arb(v)
        upper = frobenius_upper(Vx) / nx.sqrt()
        fsq = arb(0)
        for r in norms.tolist():  # float row norms^2: enclose by re-summing exactly below
            fsq += arb(r)
        # the float squared norms carry rounding: shrink by a relative 2^-40 to stay below the truth
        f_lo = (fsq * arb(1 - 2.0 ** -40)).sqrt()
        delta_lo = f_lo * arb(u)
    holds = certainly_less(upper, delta_lo) is Decision.TRUE
    return {"d": d, "m": m, "u": u, "sigma_d_upper": float_up(upper),
            "delta_lower_all_subsets": float(delta_lo.lower()),
            "all_dependent": bool(holds),
            "certificate": (f"sigma_d(V_S) <= ||V x||/||x|| <= {float_up(upper):.4g} < u * min_S ||V_S||_F "
                            f">= {float(delta_lo.lower()):.4g} for every {d}-subset S") if holds else None}
