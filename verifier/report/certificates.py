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

from fractions import Fraction
from pathlib import Path

import numpy as np

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
from verifier.report.certificates_dana import (  # noqa: E402
    _built,
    dana_lemma2_certificates,
    dana_lemma2_s1_certificates,
    dana_thm1_certificates,
    dana_thm2_certificates,
)
from verifier.statements import registry
from verifier.statements.findings import FINDINGS, Witness, run_witness

# -- Mahdavi et al. ---------------------------------------------------------------------------------------------


def relu_certificate(points, labels, m: int, *, about: str) -> dict:
    points = np.asarray(points, dtype=np.float64)
    return certificate(
        "relu-unreachable-labels",
        {"units": int(m)},
        {
            "T": int(points.shape[0]),
            "d": int(points.shape[1]),
            "points": encode(points),
            "labels": [str(Fraction(x)) for x in labels],
        },
        about=about,
    )


def prop3_certificates() -> dict:
    w = FINDINGS["proposition3.sharpened"].witnesses[0]
    ev = run_witness(w)
    labels = next(c for c in ev.certificates if str(c.get("kind", "")).startswith("labels outside"))["labels"]
    inst = _built("proposition3", **w.opts())
    return {
        "unreachable": relu_certificate(
            inst.queries,
            labels,
            1,
            about=(
                "Mahdavi et al. Prop. 3 sharpened: m = 1, d = 3, T = 6 = m(d+2)+1 > m(d+1)+1: these labels are "
                "unreachable by every 1-unit ReLU net (finding proposition3.sharpened)"
            ),
        )
    }


REMARK2_INEQUALITIES = [
    {"setting": "lean", "kappa": 8, "power": 1},
    {"setting": "square", "kappa": 16, "power": 2},
    {"setting": "lean", "kappa": 1, "power": 0},
    {"setting": "square", "kappa": 1, "power": 0},
    {"setting": "lean", "kappa": 8, "power": 0},
    {"setting": "square", "kappa": 8, "power": 0},
]


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
    viol = [
        [
            i
            for i, r in enumerate(rows)
            if r[3] == q["setting"] and r[1] ** q["power"] * r[8] > q["kappa"] * r[2] ** q["power"] * r[7]
        ]
        for q in REMARK2_INEQUALITIES
    ]
    return {
        "counts": certificate(
            "mha-relu-count-comparison",
            {"rows": rows, "violations": viol},
            {"grid": grid, "inequalities": REMARK2_INEQUALITIES},
            about=(
                "Mahdavi et al. Remark 2: at equal parameter counts n C_R <= 8 d C_A (lean) and n^2 C_R <= 16 d^2 C_A "
                "(square) hold on the grid; the literal C_A >= C_R and C_R <= 8 C_A fail (finding remark2.growth_rates)"
            ),
        )
    }


def first_independent_columns(inst, W_K, W_Q, rows: list, prec: int = 256) -> list:
    """The first columns (in index order) that the Z rows ``rows`` certainly keep independent: column j joins
    when the Gram determinant of the chosen columns with j, in Arb balls from the float weights, excludes 0.
    Arb is the same on every machine, where a float pivoting's choice among equally good columns is not; []
    when fewer than len(rows) columns are certified so (the float choice stands)."""
    from flint import arb_mat

    from verifier.arith.compare import workprec
    from verifier.model.mha_balls import feature_matrix_ball

    with workprec(prec):
        Z = feature_matrix_ball(inst.contexts, inst.queries, W_K, W_Q, rows=list(rows))
        chosen = []
        for j in range(Z.ncols()):
            cols = chosen + [j]
            A = arb_mat([[Z[i, c] for c in cols] for i in range(Z.nrows())])
            det = (A.transpose() * A).det()
            if det > 0:
                chosen.append(j)
            if len(chosen) == len(rows):
                return chosen
    return []


def prop5_certificates() -> dict:
    from verifier.data.instances import make_instance

    out = {}
    cases = (
        ("c0", registry.get_construction("proposition5.zero_sum_instance")(seed=0), 0, "tokens summing to 0"),
        ("c1", make_instance(H=2, n=3, d=4, T=8, context="sumconst", seed=0), 1, "tokens summing to 1"),
    )
    for name, inst, which, words in cases:
        ev = run_witness(FINDINGS["proposition5.zero_sum"].witnesses[which])
        out[f"cap_{name}"] = cap_certificate(
            inst,
            "every token sums to c",
            about=(
                f"Mahdavi et al. Prop. 5 on {words} (H = 2, n = 3, d = 4, T = 8): rank(Z) <= "
                f"{'H(d-1) = 6' if which == 0 else 'H(d-1)+1 = 7'} for ANY weights (finding proposition5.zero_sum)"
            ),
        )
        best = max(
            (c for c in ev.certificates if str(c.get("kind", "")).startswith("weights: ")),
            key=lambda c: c["rank_lower_bound"]["certified_k"],
        )
        label, rb = best["kind"][len("weights: ") :], best["rank_lower_bound"]
        if label == "Prop. 1 construction":
            con = registry.get_construction("proposition1.key_query_weights")(inst, seed=0)
            W_K, W_Q = con.W_K, con.W_Q
        else:
            W_K, W_Q = next(
                (k, q)
                for lab, k, q in registry.get_construction("proposition2.weight_trials")(inst, seed=0)
                if lab == label
            )
        out[f"attained_{name}"] = feature_rank_certificate(
            inst,
            W_K,
            W_Q,
            rb["rows"],
            first_independent_columns(inst, W_K, W_Q, rb["rows"]) or rb["cols"],
            about=(
                f"Mahdavi et al. Prop. 5 on {words}: the {label} weights reach rank(Z) >= {len(rb['rows'])}, so the "
                "cap is attained"
            ),
        )
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
    return {
        "rank_Hd": feature_rank_certificate(
            inst,
            W_K,
            W_Q,
            cert.rows,
            cert.cols,
            about=(
                f"Mahdavi et al. App. I.1: on contexts in general position (Uniform[0,1]) key/query weights with rank Z = "
                f"Hd = {T} > H(d-1)+1 = {H * (d - 1) + 1}: the conjectured count is exceeded (finding "
                "appendixI1.conjecture)"
            ),
        )
    }


EXPORTERS = {
    "dana_thm2.c_below_half": dana_thm2_certificates,
    "dana_lemma2.d_at_least_N_plus_S_minus_1": dana_lemma2_certificates,
    "dana_lemma2.single_token": dana_lemma2_s1_certificates,
    "dana_thm1_eps0.capacity_reading": dana_thm1_certificates,
    "proposition3.sharpened": prop3_certificates,
    "remark2.growth_rates": remark2_certificates,
    "proposition5.zero_sum": prop5_certificates,
    "appendixI1.conjecture": probe_certificates,
}


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
    for stale in sorted(set(out.glob("*.json")) - set(paths)):  # an earlier run's file of a finding of this paper
        if any(stale.name.startswith(f"{key}.") for key in EXPORTERS if FINDINGS[key].paper == paper):
            stale.unlink()
    return paths


__all__ = [
    "FORMAT",
    "digest",
    "exact",
    "encode",
    "certificate",
    "write",
    "round_up",
    "round_down",
    "EXPORTERS",
    "export_findings",
    "Witness",
]
