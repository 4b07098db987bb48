"""Self-contained certificate files for the certified findings, re-checkable
by :mod:`verifier.recheck` (standard library + mpmath, never the project).

Every number is written exactly: a float64 value as the rational it is
("p/q" with q a power of two), an Arb ball as [lower, upper] of such
rationals.  :func:`export_findings` writes one JSON file per exportable
certificate of a paper's declared findings:

* Dana et al. Thm. 2 (C >= 1/2): the instance of ``neg_thm2_C``, whose
  right-hand side the re-checker recomputes in intervals;
* Dana et al. Lemma 2 (d >= N+S-1): the support, whose formal ranks the
  re-checker recomputes exactly;
* Mahdavi et al. App. I.1: the general-position data and the key/query
  weights of the capacity probe, from which the re-checker recomputes Z of
  Eq. (7) in intervals and certifies rank Z = Hd > H(d-1)+1.
"""
from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.arith.compare import Decision
from verifier.data.instances import make_instance
from verifier.statements import registry
from verifier.statements.findings import FINDINGS, Witness, run_witness

#: the file format :mod:`verifier.recheck` reads (it imports nothing from here: the two are kept equal by tests)
FORMAT = "mha-verify-certificate/1"


def digest(cert: dict) -> str:
    """sha256 of the canonical JSON of kind, claim and data (as verifier.recheck.digest)."""
    body = {k: cert[k] for k in ("kind", "claim", "data")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def exact(x) -> str:
    """A float64 (or int) as the exact rational it is."""
    return str(Fraction(float(x)) if not isinstance(x, (int, np.integer)) else Fraction(int(x)))


def exact_array(a) -> list:
    a = np.asarray(a)
    return [exact_array(x) for x in a] if a.ndim else exact(a.item())


def certificate(kind: str, claim: dict, data: dict, *, about: str) -> dict:
    cert = {"format": FORMAT, "kind": kind, "claim": claim, "data": data, "about": about}
    cert["sha256"] = digest(cert)
    return cert


def thm2_certificate(N: int = 3, d: int = 2, conditionals=((0.5, 0.25, 0.25),), weights=(1.0,)) -> dict:
    """Dana et al. Thm. 2 with C >= 1/2: the right-hand side is negative (neg_thm2_C by default)."""
    return certificate("dana-thm2-negative-rhs", {"rhs_below": "0"},
                       {"N": N, "d": d, "conditionals": exact_array(conditionals), "weights": exact_array(weights)},
                       about="Dana et al. Thm. 2 (p. 7) as printed: C = sqrt(32 log(N+1)/d) >= 1/2 makes the "
                             "right-hand side negative, below d_KL(pi, L) >= 0 (finding dana_thm2.c_below_half)")


def lemma2_certificate(N: int = 4, S: int = 2, d: int = 5, H: int = 3) -> dict:
    """Dana et al. Lemma 2 on all N^S sequences, the numbers taken from the checker's own evidence."""
    import itertools

    seqs = [list(s) for s in itertools.product(range(N), repeat=S)]
    w = Witness("counterexample", "dana_lemma2", options=(("N", N), ("S", S), ("d", d), ("H", H),
                                                          ("T0", len(seqs)), ("seed", 0)))
    m = run_witness(w).measured
    claim = {"T0": len(seqs), "R": m["R"], "D": m["D"], "cap": m["head_difference_cap"], "target": m["claimed"]}
    return certificate("dana-lemma2-rank-cap", claim, {"N": N, "S": S, "d": d, "H": H, "sequences": seqs},
                       about="Dana et al. Lemma 2 (p. 4) as printed: every e, pos, W_QK give rank{A(t)} <= "
                             "min(d, R) + (H-1) min(d, D) < min(T0, Hd) (finding dana_lemma2.d_at_least_N_plus_S_minus_1)")


def probe_certificate(H: int = 2, n: int = 2, d: int = 4, seed: int = 0) -> dict:
    """Mahdavi et al. App. I.1: rank Z = Hd on general-position data, with the probe's random weights."""
    from verifier.experiments.capacity_probe import certify_rank

    T = H * d
    pool = make_instance(H=H, n=n, d=d, d_h=d, T=T + 2, context="uniform", seed=seed)
    E, e = np.asarray(pool.contexts)[:T], np.asarray(pool.queries)[:T]
    rng = np.random.default_rng([seed, H, n, d, 7])
    W_K, W_Q = rng.standard_normal((H, d, d)), rng.standard_normal((H, d, d))
    cert = certify_rank(E, e, W_K, W_Q, T)
    if cert.decision is not Decision.TRUE:
        raise RuntimeError(f"the probe's rank certificate did not come out (H={H}, n={n}, d={d})")
    return certificate("mha-feature-rank", {"shape": [T, H * d], "k": T, "exceeds": H * (d - 1) + 1},
                       {"contexts": exact_array(E), "queries": exact_array(e), "W_K": exact_array(W_K),
                        "W_Q": exact_array(W_Q), "rows": [int(i) for i in cert.rows],
                        "cols": [int(j) for j in cert.cols]},
                       about=f"Mahdavi et al. App. I.1: on contexts in general position (Uniform[0,1]), key/query "
                             f"weights with rank Z = Hd = {T} > H(d-1)+1 = {H * (d - 1) + 1}: T = {T} examples are "
                             "memorizable for every real labelling (finding appendixI1.conjecture)")


EXPORTERS = {"dana_thm2.c_below_half": thm2_certificate,
             "dana_lemma2.d_at_least_N_plus_S_minus_1": lemma2_certificate,
             "appendixI1.conjecture": probe_certificate}


def export_findings(paper: str, out) -> list[Path]:
    """Write ``out/<finding key>.json`` for each exportable certificate of ``paper``."""
    registry.load_all()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, make in EXPORTERS.items():
        if FINDINGS[key].paper != paper:
            continue
        path = out / f"{key}.json"
        path.write_text(json.dumps(make(), sort_keys=True, indent=1) + "\n")
        paths.append(path)
    return paths

