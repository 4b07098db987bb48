"""Self-contained certificate files for the certified findings, re-checkable
by ``python verifier/recheck.py`` (standard library + mpmath, never the
project); the format is docs/CERTIFICATES.md.

Every number is written exactly: a float64 as the rational it is ("p/q",
q a power of two), or, for arrays of more than :data:`TEXT_ENTRIES` entries,
as base64 of its little-endian binary64 bytes.  Floats only choose what to
claim (a column subset, a kappa0, a rounded enclosure); the re-checker proves
the claim from the data.  :func:`export_findings` writes one file per
certificate of a paper's declared findings (:data:`EXPORTERS`):

* Dana et al.: Thm. 2 (a negative right-hand side: the control, a drawn
  instance, C in [1/2, 1)); Lemma 2 (the head-difference cap, N + S - 1 < d,
  S = 1); Thm. 1's capacity reading (the Pinsker + Eckart-Young floor of every
  AoT against d_KL(pi, L) = 0);
* Mahdavi et al.: Prop. 3 (labels no m-unit ReLU net fits), Remark 2 (the
  exact parameter counts), Prop. 5 with c = 0 and c = 1 (the caps' null
  vectors and the minors that attain them), App. I.1 (rank Z = Hd).
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.data.sequences import from_sequences
from verifier.report.certificate_format import (
    FORMAT,
    cap_certificate,
    certificate,
    digest,
    encode,
    exact,
    feature_rank_certificate,
    round_down,
    round_up,
    write,
)
from verifier.statements import registry
from verifier.statements.findings import FINDINGS, Witness, run_witness

# -- Dana et al. ------------------------------------------------------------------------------------------------

def thm2_certificate(inst, rhs: float, *, about: str) -> dict:
    """The right-hand side of Thm. 2 on a sequence instance is < a claimed q <= 0 (``rhs``: the checker's value)."""
    return certificate("dana-thm2-negative-rhs", {"rhs_below": round_up(rhs)},
                       {"N": int(inst.N), "d": int(inst.d), "T0": int(inst.T0),
                        "conditionals": encode(inst.conditionals), "weights": encode(inst.weights)}, about=about)


def lemma2_certificate(N: int, S: int, d: int, H: int, seqs=None, *, about: str) -> dict:
    """Lemma 2's cap on the support ``seqs`` (default: all N^S sequences), formal ranks computed exactly."""
    seqs = [list(s) for s in itertools.product(range(N), repeat=S)] if seqs is None else [list(s) for s in seqs]

    def formal(t, s):
        v = [0] * (N + S)
        v[t[s]] += 1
        v[N + s] += 1
        return v

    R = exact_rank(to_fmpq_mat(np.array([formal(t, s) for t in seqs for s in range(S)])))
    diffs = [[a - b for a, b in zip(formal(t, s), formal(t, S - 1))] for t in seqs for s in range(S - 1)]
    D = exact_rank(to_fmpq_mat(np.array(diffs))) if diffs else 0
    claim = {"T0": len(seqs), "R": R, "D": D, "cap": min(d, R) + (H - 1) * min(d, D), "target": min(len(seqs), H * d)}
    return certificate("dana-lemma2-rank-cap", claim, {"N": N, "S": S, "d": d, "H": H, "sequences": seqs}, about=about)


def _centered_logs(P: np.ndarray) -> np.ndarray:
    L = np.log(P)
    return L - L.mean(axis=1, keepdims=True)


def thm1_floor_certificate(inst, *, about: str, conditionals=None) -> dict:
    """Every AoT of the instance's sizes stays above kappa0 > 0 = d_KL(pi, L): per last-token group, k+1
    centered log-target columns (pivoted Gram-Schmidt) and alpha = 0.9 lambda_min of their Gram (floats choose;
    the re-checker proves); kappa0 the largest 1.05-step with N sum delta^2 < 0.9 sum alpha (floats)."""
    import scipy.linalg

    N, T0 = int(inst.N), int(inst.T0)
    k = min(int(inst.H) * int(inst.d_h), int(inst.d))
    P = np.asarray(inst.conditionals, dtype=np.float64)
    C = _centered_logs(P)
    last = np.asarray(inst.sequences)[:, -1]
    groups, members = [], []
    for q in np.unique(last):
        mem = np.flatnonzero(last == q)
        if len(mem) < k + 2:
            continue
        X = (C[mem] - C[mem].mean(axis=0)).T  # N x |group|
        J = sorted(scipy.linalg.qr(X, pivoting=True)[2][:k + 1].tolist())
        G = X[:, J].T @ X[:, J]
        lam = float(np.linalg.eigvalsh(G)[0])
        if lam <= 0:
            continue
        alpha = Fraction(lam * 0.9).limit_denominator(2**40)
        groups.append({"last_token": int(q), "columns": J, "alpha": str(alpha)})
        members += mem.tolist()
    if not groups:
        raise ValueError("no last-token group large enough for a floor")
    w = np.asarray(inst.weights, dtype=np.float64)
    pi, pmin = w / w.sum(), P.min(axis=1)
    budget = 0.9 * sum(float(Fraction(g["alpha"])) for g in groups)

    def ok(kappa):
        eta = np.sqrt(kappa / (2 * pi[members]))
        gap = pmin[members] - eta
        return bool(np.all(gap > 0)) and N * float(np.sum((eta / gap) ** 2)) < budget

    kappa = 1.0
    exact_P = encode(P) if conditionals is None else [[str(Fraction(x)) for x in row] for row in conditionals]
    while not ok(kappa) and kappa > 1e-300:
        kappa /= 4
    while ok(kappa * 1.05):
        kappa *= 1.05
    data = {"N": N, "S": int(inst.S), "d": int(inst.d), "d_h": int(inst.d_h), "H": int(inst.H), "T0": T0,
            "sequences": np.asarray(inst.sequences).tolist(), "weights": encode(w), "conditionals": exact_P,
            "groups": groups}
    return certificate("dana-thm1-capacity-floor", {"kappa0": round_down(kappa), "k": k}, data, about=about)


def _seq(seqs, N, d, d_h, H, conditionals):
    return from_sequences(np.array(seqs), N=N, conditionals=np.array(conditionals, dtype=float), d=d, d_h=d_h, H=H,
                          kind="control")


def _witness_value(key: str, index: int, measure: str) -> float:
    return float(run_witness(FINDINGS[key].witnesses[index]).measured[measure])


def _built(sid: str, **options):
    from verifier.statements.runner import build_instance

    return build_instance(sid, **options)


def dana_thm2_certificates() -> dict:
    key, P = "dana_thm2.c_below_half", [[0.5, 0.25, 0.25]]
    drawn = _built("dana_thm2", N=3, S=2, d=2, H=1, conditionals="positive", seed=0)
    return {
        "neg_thm2_C": thm2_certificate(_seq([[0, 0]], 3, 2, None, 1, P), _witness_value(key, 0, "RHS"), about=(
            "Dana et al. Thm. 2 (p. 7) as printed: N = 3, d = 2, pi = (1/2, 1/4, 1/4) gives C = 4.71 >= 1/2 and a "
            "negative right-hand side, below d_KL(pi, L) >= 0 (finding dana_thm2.c_below_half, control neg_thm2_C)")),
        "drawn": thm2_certificate(drawn, _witness_value(key, 1, "RHS"), about=(
            "Dana et al. Thm. 2: a drawn instance of the family (N = 3, S = 2, d = 2, positive conditionals, seed 0)")),
        "c_below_one": thm2_certificate(_seq([[0, 0]], 3, 90, None, 0, P), _witness_value(key, 3, "RHS"), about=(
            "Dana et al. Thm. 2 with C = 0.702 in [1/2, 1) (N = 3, d = 90): still negative, so the threshold 1/2 "
            "cannot be raised (tightness witness)")),
    }


def dana_lemma2_certificates() -> dict:
    return {
        "head_differences": lemma2_certificate(4, 2, 5, 3, about=(
            "Dana et al. Lemma 2 (p. 4) as printed: all 16 bigrams, d = N+S-1 = 5, H = 3: every e, pos, W_QK give "
            "rank <= 13 < 15 (finding dana_lemma2.d_at_least_N_plus_S_minus_1)")),
        "neg_lemma2_smallN": lemma2_certificate(2, 3, 6, 1, about=(
            "Dana et al. Lemma 2: N + S - 1 = 4 < d = 6, H = 1, all 8 sequences: rank <= 4 < 6 (control "
            "neg_lemma2_smallN)")),
    }


def dana_lemma2_s1_certificates() -> dict:
    return {"neg_lemma2_S1": lemma2_certificate(5, 1, 2, 2, about=(
        "Dana et al. Lemma 2 at S = 1 (N = 5, d = 2, H = 2): every head outputs x(t,1), rank <= 2 < 4 "
        "(finding dana_lemma2.single_token, control neg_lemma2_S1)"))}


def dana_thm1_certificates() -> dict:
    P = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    third = [[1 / 3, 2 / 3], [2 / 3, 1 / 3]]
    drawn = _built("dana_thm1_eps0", N=3, S=2, d=2, d_h=1, H=1, T0=3, dataset="shared-last",
                   conditionals="positive", seed=0)
    return {
        "neg_thm1_shared": thm1_floor_certificate(_seq([[0, 2], [1, 2], [2, 2]], 3, 2, 1, 1, P), about=(
            "Dana et al. Thm. 1 read as a capacity statement: N = 3, S = 2, (d, d_h, H) = (2, 1, 1), support "
            "{(1,3), (2,3), (3,3)}: every AoT stays above kappa0 > 0 = d_KL(pi, L) (finding "
            "dana_thm1_eps0.capacity_reading, control neg_thm1_shared; Pinsker + Eckart-Young)")),
        "drawn": thm1_floor_certificate(drawn, about=(
            "Dana et al. Thm. 1's capacity reading: a drawn shared-last-token instance (N = 3, S = 2, d = 2, "
            "d_h = 1, H = 1, T0 = 3, seed 0)")),
        "neg_thm1_H0": thm1_floor_certificate(_seq([[0, 1], [1, 1]], 2, 2, 1, 0, third), conditionals=[
            [Fraction(1, 3), Fraction(2, 3)], [Fraction(2, 3), Fraction(1, 3)]], about=(
            "Dana et al. Thm. 1's capacity reading with H = 0: two sequences with one last token share their "
            "logits, conditionals (1/3, 2/3) and (2/3, 1/3) exactly (control neg_thm1_H0; here the Pinsker floor, "
            "weaker than the exact Gibbs one)")),
    }


# -- Mahdavi et al. ---------------------------------------------------------------------------------------------

def relu_certificate(points, labels, m: int, *, about: str) -> dict:
    points = np.asarray(points, dtype=np.float64)
    return certificate("relu-unreachable-labels", {"units": int(m)},
                       {"T": int(points.shape[0]), "d": int(points.shape[1]), "points": encode(points),
                        "labels": [str(Fraction(x)) for x in labels]}, about=about)


def prop3_certificates() -> dict:
    w = FINDINGS["proposition3.sharpened"].witnesses[0]
    ev = run_witness(w)
    labels = next(c for c in ev.certificates if str(c.get("kind", "")).startswith("labels outside"))["labels"]
    inst = _built("proposition3", **w.opts())
    return {"unreachable": relu_certificate(inst.queries, labels, 1, about=(
        "Mahdavi et al. Prop. 3 sharpened: m = 1, d = 3, T = 6 = m(d+2)+1 > m(d+1)+1: these labels are "
        "unreachable by every 1-unit ReLU net (finding proposition3.sharpened)"))}


REMARK2_INEQUALITIES = [{"setting": "lean", "kappa": 8, "power": 1}, {"setting": "square", "kappa": 16, "power": 2},
                        {"setting": "lean", "kappa": 1, "power": 0}, {"setting": "square", "kappa": 1, "power": 0},
                        {"setting": "lean", "kappa": 8, "power": 0}, {"setting": "square", "kappa": 8, "power": 0}]


def count_row(H: int, n: int, d: int, setting: str) -> list:
    from verifier.model.mha import parameter_count

    dh, dv, dout = (n, 1, 1) if setting == "lean" else (d, d, 1)
    budget = parameter_count(H, d, dh, dv, dout)
    m = max(0, (budget - 1) // ((n + 1) * d + 2))
    return [H, n, d, setting, budget, m, m * ((n + 1) * d + 2) + 1, H * (min(n, dh) - 1) + 1, m * (d + 2) + 1]


def remark2_certificates() -> dict:
    points = {(H, n, d) for H in (1, 4, 16) for d in (4, 16, 64) for n in sorted({2, d // 2, d - 1})} | {(2, 3, 5)}
    grid = [[H, n, d, s] for (H, n, d) in sorted(points) for s in ("lean", "square")]
    rows = [count_row(*g) for g in grid]
    viol = [[i for i, r in enumerate(rows) if r[3] == q["setting"]
             and r[1] ** q["power"] * r[8] > q["kappa"] * r[2] ** q["power"] * r[7]] for q in REMARK2_INEQUALITIES]
    return {"counts": certificate("mha-relu-count-comparison", {"rows": rows, "violations": viol},
                                  {"grid": grid, "inequalities": REMARK2_INEQUALITIES}, about=(
        "Mahdavi et al. Remark 2: at equal parameter counts n C_R <= 8 d C_A (lean) and n^2 C_R <= 16 d^2 C_A "
        "(square) hold on the grid; the literal C_A >= C_R and C_R <= 8 C_A fail (finding remark2.growth_rates)"))}


def prop5_certificates() -> dict:
    from verifier.data.instances import make_instance
    out = {}
    cases = (("c0", registry.get_construction("proposition5.zero_sum_instance")(seed=0), 0, "tokens summing to 0"),
             ("c1", make_instance(H=2, n=3, d=4, T=8, context="sumconst", seed=0), 1, "tokens summing to 1"))
    for name, inst, which, words in cases:
        ev = run_witness(FINDINGS["proposition5.zero_sum"].witnesses[which])
        out[f"cap_{name}"] = cap_certificate(inst, "every token sums to c", about=(
            f"Mahdavi et al. Prop. 5 on {words} (H = 2, n = 3, d = 4, T = 8): rank(Z) <= "
            f"{'H(d-1) = 6' if which == 0 else 'H(d-1)+1 = 7'} for ANY weights (finding proposition5.zero_sum)"))
        best = max((c for c in ev.certificates if str(c.get("kind", "")).startswith("weights: ")),
                   key=lambda c: c["rank_lower_bound"]["certified_k"])
        label, rb = best["kind"][len("weights: "):], best["rank_lower_bound"]
        if label == "Prop. 1 construction":
            con = registry.get_construction("proposition1.key_query_weights")(inst, seed=0)
            W_K, W_Q = con.W_K, con.W_Q
        else:
            W_K, W_Q = next((k, q) for lab, k, q in registry.get_construction("proposition2.weight_trials")(inst, seed=0)
                            if lab == label)
        out[f"attained_{name}"] = feature_rank_certificate(inst, W_K, W_Q, rb["rows"], rb["cols"], about=(
            f"Mahdavi et al. Prop. 5 on {words}: the {label} weights reach rank(Z) >= {len(rb['rows'])}, so the "
            "cap is attained"))
    return out


def probe_certificates(H: int = 2, n: int = 2, d: int = 4, seed: int = 0) -> dict:
    """App. I.1: rank Z = Hd on general-position data, with the probe's random weights."""
    from verifier.arith.compare import Decision
    from verifier.data.instances import make_instance
    from verifier.experiments.capacity_probe import certify_rank

    T = H * d
    pool = make_instance(H=H, n=n, d=d, d_h=d, T=T + 2, context="uniform", seed=seed)
    E, e = np.asarray(pool.contexts)[:T], np.asarray(pool.queries)[:T]
    rng = np.random.default_rng([seed, H, n, d, 7])
    W_K, W_Q = rng.standard_normal((H, d, d)), rng.standard_normal((H, d, d))
    cert = certify_rank(E, e, W_K, W_Q, T)
    if cert.decision is not Decision.TRUE:
        raise RuntimeError(f"the probe's rank certificate did not come out (H={H}, n={n}, d={d})")
    from verifier.data.instances import from_arrays

    inst = from_arrays(E, e, H=H, d_h=d, kind="probe")
    return {"rank_Hd": feature_rank_certificate(inst, W_K, W_Q, cert.rows, cert.cols, about=(
        f"Mahdavi et al. App. I.1: on contexts in general position (Uniform[0,1]) key/query weights with rank Z = "
        f"Hd = {T} > H(d-1)+1 = {H * (d - 1) + 1}: the conjectured count is exceeded (finding "
        "appendixI1.conjecture)"))}


EXPORTERS = {"dana_thm2.c_below_half": dana_thm2_certificates,
             "dana_lemma2.d_at_least_N_plus_S_minus_1": dana_lemma2_certificates,
             "dana_lemma2.single_token": dana_lemma2_s1_certificates,
             "dana_thm1_eps0.capacity_reading": dana_thm1_certificates,
             "proposition3.sharpened": prop3_certificates,
             "remark2.growth_rates": remark2_certificates,
             "proposition5.zero_sum": prop5_certificates,
             "appendixI1.conjecture": probe_certificates}


def export_findings(paper: str, out) -> list[Path]:
    """Write ``out/<finding key>.<name>.json`` for every certificate of ``paper``'s findings."""
    registry.load_all()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, make in EXPORTERS.items():
        if FINDINGS[key].paper != paper:
            continue
        for name, cert in make().items():
            paths.append(write(cert, out / f"{key}.{name}.json"))
    return paths


__all__ = ["FORMAT", "digest", "exact", "encode", "certificate", "write", "round_up", "round_down", "EXPORTERS",
           "export_findings", "Witness"]
