"""Assumptions 1-3 and general position on the tokens of one layer of a real
model, read two ways and kept apart:

* **the registered checkers** (``assumption1``, ``definition2``) on the
  first ``exact_T`` examples under the dtype reading: their exact verdict
  on the stored floats (certified where a witness, e.g. identical queries,
  or exhaustion reaches) and their own verdict at the data's precision
  (the worst of a few sampled subsets, certified); a context with two
  identical tokens is an exact witness against Assumption 2;
* **at the data's precision, over many subsets** (the paper's random-subset
  test): rho = sigma_min / sigma_max of the unit-row matrix against the
  engine's tolerance tau = max(k, m) eps (:mod:`verifier.experiments.precision`).
  Random subsets screened in float64 are evidence; the worst one is
  certified in Arb balls (a subset with rho <= tau is a certified witness
  that the assumption fails at the data's precision); for m >= d vectors one
  test vector certifies that EVERY d-subset fails (general position).

Contexts (T, n, d), queries (T, d); ebar = e + mean of the context tokens.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch

from verifier.data.instances import from_arrays
from verifier.experiments.precision import (
    certify_all_square_subsets,
    certify_rho,
    rho_screen,
    rho_upper_certificate,
    tolerance_of,
    unit_gram,
)
from verifier.statements.registry import get

__all__ = ["Budget", "analyse_layer", "random_subsets", "context_rho", "kruskal_at_precision", "combine"]


@dataclass(frozen=True)
class Budget:
    """How much each reading may cost.  ``samples``: random n-subsets per
    assumption (the paper: 5000); ``exact_samples``: random subsets the
    registered checkers test; ``kr_samples``: subsets per level of the
    Kruskal curve; ``kr_levels``: how many subset sizes it tries;
    ``certify_contexts``: the contexts of smallest rho certified in balls;
    ``certify``: run the (costly) two-sided certificates at all."""

    samples: int = 200
    exact_samples: int = 2
    kr_samples: int = 10
    kr_levels: int = 8
    certify_contexts: int = 1
    certify: bool = True


def random_subsets(rng: np.random.Generator, m: int, k: int, count: int) -> np.ndarray:
    """``count`` uniformly random k-subsets of range(m), sorted rows."""
    return np.sort(rng.random((count, m)).argpartition(k - 1, axis=1)[:, :k], axis=1)


def context_rho(contexts: torch.Tensor, *, chunk: int = 32) -> np.ndarray:
    """float64 rho of every context (Gram of its unit rows): a screen."""
    T, n, d = contexts.shape
    out = np.empty(T)
    for s in range(0, T, chunk):
        E = contexts[s:s + chunk].double()
        E = E / E.norm(dim=2, keepdim=True).clamp(min=np.finfo(float).tiny)
        lam = torch.linalg.eigvalsh(E @ E.transpose(1, 2))
        out[s:s + chunk] = torch.sqrt(lam[:, 0].clamp(min=0.0) / lam[:, -1]).numpy()
    return out if n <= d else np.zeros(T)


def _duplicate_rows(M: np.ndarray) -> tuple[int, int] | None:
    _, first, inverse, counts = np.unique(M, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    dup = np.flatnonzero(counts > 1)
    if dup.size == 0:
        return None
    rows = np.flatnonzero(inverse.ravel() == dup[0])
    return int(rows[0]), int(rows[1])


def _registered(sid: str, contexts: np.ndarray, queries: np.ndarray, *, samples: int, seed: int) -> dict:
    """The registered checker ``sid`` on float32 tokens under the dtype
    reading: its verdict, exact reading and verdict at the data's precision."""
    inst = from_arrays(contexts, queries, H=1, kind="real tokens", source="model tokens", seed=seed,
                       reading="dtype")
    # samples >= 1: subset_robustness refuses 0 when it samples (InvalidInstance: nothing screened, nothing to certify)
    ev = get(sid).check(inst, seed=seed, samples=max(1, samples), exhaustive_limit=1000)
    m = ev.measured if isinstance(ev.measured, dict) else {}
    keep = ("kruskal_lower", "kruskal_upper", "sampled_independent", "on the stored values", "at the data's precision",
            "over the data's intervals")
    return {"verdict": ev.verdict, "certified": ev.certified, "reason": ev.reason, "examples": len(queries),
            **{k: m[k] for k in keep if k in m}}


def combine(reg: dict, screen: dict) -> tuple[str, str]:
    """One cell from the registered checker and the many-subset screen: an
    exact witness first, then a certified failure at the data's precision
    (either reading), else the screen's verdict."""
    at = str(reg.get("at the data's precision", ""))
    if at.startswith("fails (at the stored values)"):
        return "fails", "certified exact (" + reg["reason"] + ")"
    if screen.get("status") == "fails" and screen.get("basis", "").startswith("certified"):
        return "fails", screen["basis"]
    if at == "fails":
        box = reg.get("over the data's intervals", {})
        return "fails", (f"certified at the data's precision (the registered checker, first {reg.get('examples', '?')} "
                         f"examples: {box.get('witness', '?')} dependent at an explicit point of the float32 "
                         "intervals, exact rationals)")
    return screen["status"], screen["basis"]


def kruskal_at_precision(V: np.ndarray, k: int, *, tolerance: float, samples: int, rng, certify: bool,
                         gram: np.ndarray) -> dict:
    """Are all k-subsets of the rows of V independent at the data's
    precision (rho > tolerance)?  Evidence from ``samples`` random k-subsets
    (all of them when there are that few); the worst one certified: a
    failing one by the cheap upper bound, a passing one two-sided."""
    m, d = V.shape
    if k > min(m, d):
        return {"k": k, "status": "fails", "basis": "certified (k > min(m, d): Definition 1)",
                "sampled": 0, "independent": 0, "tolerance": tolerance}
    exhaustive = math.comb(m, k) <= samples
    subsets = (np.array(list(itertools.combinations(range(m), k)), dtype=np.intp) if exhaustive
               else random_subsets(rng, m, k, samples))
    rho = rho_screen(gram, subsets)
    ok = rho > tolerance
    worst = int(np.argmin(rho))
    out = {"k": k, "tolerance": tolerance, "sampled": int(len(rho)), "independent": int(ok.sum()),
           "exhaustive": exhaustive, "min_rho": float(rho.min()), "median_rho": float(np.median(rho))}
    if not ok.all():
        cert = rho_upper_certificate(V[subsets[worst]], tolerance=tolerance)
        out["worst_subset_certificate"] = cert
        if cert["decision"] == "fails":
            out["status"], out["basis"] = "fails", "certified at precision (a subset with rho <= tau)"
            out["witness"] = subsets[worst].tolist()
        else:
            out["status"] = "fails"
            out["basis"] = f"evidence at precision ({int((~ok).sum())}/{len(rho)} subsets with rho <= tau)"
        return out
    cert = certify_rho(V[subsets[worst]], tolerance=tolerance) if certify else {"decision": "not run"}
    out["worst_subset_certificate"] = cert
    out["status"] = "holds"
    what = "all" if exhaustive else "random"
    out["basis"] = (f"evidence at precision ({int(ok.sum())}/{len(rho)} {what} subsets with rho > tau; worst "
                    + ("certified" if cert["decision"] == "holds" else f"certificate {cert['decision']}") + ")")
    return out


def _levels(n: int, cap: int, count: int) -> list[int]:
    """Subset sizes for the Kruskal curve: around n and up to cap = min(m, d)."""
    lv = {max(1, n // 2), n, cap}
    lv.update(int(round(n + (cap - n) * f)) for f in np.linspace(0, 1, max(2, count - 2)))
    return sorted(k for k in lv if 1 <= k <= cap)


def kruskal_curve(V: np.ndarray, n: int, *, sample: np.ndarray, budget: Budget, rng, gram) -> dict:
    """Share of random k-subsets with rho > tau(k) for several k; the largest
    level where every sampled subset passed (evidence) and the smallest level
    with a certified failing subset (Kruskal rank at precision < that level)."""
    m, d = V.shape
    cap = min(m, d)
    rows, upper_ = [], cap
    for k in _levels(n, cap, budget.kr_levels):
        r = kruskal_at_precision(V, k, tolerance=tolerance_of(sample, (k, d)), samples=budget.kr_samples, rng=rng,
                                 certify=False, gram=gram)
        rows.append({kk: r[kk] for kk in ("k", "sampled", "independent", "min_rho", "tolerance", "status") if kk in r}
                    | {"certified_failure": r.get("witness") is not None})
        if r.get("witness") is not None:
            upper_ = min(upper_, k - 1)
    passed = [r["k"] for r in rows if r["sampled"] and r["independent"] == r["sampled"]]
    return {"levels": rows, "evidence_lower": max(passed) if passed else 0, "certified_upper": upper_,
            "cap": cap, "n": n}


def _assumption2(contexts: torch.Tensor, sample, budget: Budget) -> dict:
    T, n, d = contexts.shape
    tau = tolerance_of(sample, (n, d))
    rho = context_rho(contexts)
    order = np.argsort(rho, kind="stable")
    dup = next(((int(t), p) for t in order[:50] for p in [_duplicate_rows(contexts[t].numpy())] if p), None)
    certs = [{"example": int(t), **certify_rho(contexts[t].double().numpy(), tolerance=tau)}
             for t in order[:budget.certify_contexts]] if (n <= d and budget.certify) else []
    a2 = {"contexts": T, "tolerance": tau, "min_rho": float(rho.min()), "median_rho": float(np.median(rho)),
          "above_tolerance": int((rho > tau).sum()), "worst_context_certificates": certs}
    if n > d:
        return a2 | {"status": "fails", "basis": f"certified: n = {n} > d = {d} tokens cannot be independent"}
    if dup is not None:
        return a2 | {"status": "fails", "basis": f"certified exact: context {dup[0]} repeats a token "
                                                  f"(rows {dup[1][0]}, {dup[1][1]})"}
    if any(c["decision"] == "fails" for c in certs):
        return a2 | {"status": "fails", "basis": "certified at precision (a context with rho <= tau)"}
    if (rho > tau).all():
        return a2 | {"status": "holds", "basis": (f"evidence at precision (all {T} contexts rho > tau, float64); "
                                                  f"worst {len(certs)} certified: "
                                                  + (", ".join(c["decision"] for c in certs) or "not run"))}
    return a2 | {"status": "fails", "basis": f"evidence at precision ({int((rho <= tau).sum())} contexts rho <= tau)"}


def analyse_layer(contexts: torch.Tensor, queries: torch.Tensor, *, budget: Budget, seed: int, log=lambda line: None,
                  exact_T: int = 256) -> dict:
    """All readings for one layer's float tokens.  The registered checkers
    read the first ``exact_T`` examples (they hold the contexts in float64)."""
    T, n, d = contexts.shape
    rng = np.random.default_rng([seed, T, n, d])
    sample = queries[:4].numpy()  # dtype and exactness of the data, for the tolerance
    Q = queries.double().numpy()
    Qbar = Q + contexts.mean(dim=1, dtype=torch.float64).numpy()
    out: dict = {"T": T, "n": n, "d": d, "dtype": str(sample.dtype), "tolerance_n": tolerance_of(sample, (n, d))}
    out["assumption2"] = a2 = _assumption2(contexts, sample, budget)
    log(f"    assumption 2: {a2['status']} ({a2['basis']}); min rho {a2['min_rho']:.3g}, tau {a2['tolerance']:.3g}")
    E32, Q32 = contexts[:exact_T].numpy(), queries[:exact_T].numpy()
    G, Gbar = unit_gram(Q), unit_gram(Qbar)
    for sid, V, Gm in (("assumption1", Q, G), ("assumption3", Qbar, Gbar)):
        # the Assumption 3 checker forms ebar in rationals: minutes at n = 197, d = 768; read here at precision
        reg = _registered(sid, E32, Q32, samples=budget.exact_samples, seed=seed) if sid == "assumption1" else \
            {"verdict": "not run", "reason": "ebar in exact rationals is too costly at this size"}
        r = kruskal_at_precision(V, n, tolerance=tolerance_of(sample, (n, d)), samples=budget.samples, rng=rng,
                                 certify=budget.certify, gram=Gm)
        status, basis = combine(reg, r)
        out[sid] = {"status": status, "basis": basis, "registered_checker": reg, "precision": r}
        log(f"    {sid}: {status} ({basis})")
    cap = min(T, d)
    gp: dict = {"k": cap, "registered_checker": _registered("definition2", E32, Q32, samples=budget.exact_samples,
                                                            seed=seed)}
    U = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    s = np.linalg.svd(U, compute_uv=False)
    tau_cap = tolerance_of(sample, (cap, d))
    gp["numerical_rank_of_all_queries"] = int((s > s[0] * tau_cap).sum())
    if T >= d:
        gp["all_subsets_certificate"] = allc = certify_all_square_subsets(Q, tolerance=tau_cap)
        if allc["all_dependent"]:
            gp |= {"status": "fails", "basis": f"certified at precision: every {d}-subset has rho <= tau"}
    if "status" not in gp:
        r = kruskal_at_precision(Q, cap, tolerance=tau_cap, samples=max(2, budget.kr_samples), rng=rng,
                                 certify=False, gram=G)
        gp |= {"status": r["status"], "basis": r["basis"], "precision": r}
    gp["status"], gp["basis"] = combine(gp["registered_checker"], {"status": gp["status"], "basis": gp["basis"]})
    out["general_position"] = gp
    log(f"    general position: {gp['status']} ({gp['basis']})")
    out["kruskal_curve"] = kc = kruskal_curve(Q, n, sample=sample, budget=budget, rng=rng, gram=G)
    if gp.get("all_subsets_certificate", {}).get("all_dependent"):
        kc["certified_upper"] = min(kc["certified_upper"], cap - 1)
    log(f"    Kruskal rank at precision: evidence >= {kc['evidence_lower']}, certified <= {kc['certified_upper']}")
    return out
