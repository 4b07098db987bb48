"""Fig. 4 (contexts in general position, App. I.1) and Fig. 5 (regression, App. A):
the sweeps of Fig. 2 with one thing changed, decided by the rules of
:mod:`verifier.experiments.measures`.
"""
from __future__ import annotations

from verifier.experiments import measures as ms
from verifier.experiments.capacity_sweeps import SIG, jsonable, scale_note
from verifier.experiments.catalogue import Figure, Outcome, experiment
from verifier.experiments.plots import sweep_figure
from verifier.experiments.power import Power
from verifier.experiments.scales import SWEEPS
from verifier.experiments.sweep_power import SWEEP_STATED, decides_sweep, sweep_power
from verifier.experiments.sweeps import run_sweep


def combine(*statuses: str) -> str:
    """Fig. 4's rule as its criterion states it: every part reproduced -> reproduced; no part
    reproduced (a partial part is not a reproduced one) -> not reproduced; else partially."""
    if all(s == "reproduced" for s in statuses):
        return "reproduced"
    if not any(s == "reproduced" for s in statuses):
        return "not reproduced"
    return "partially reproduced"


def decide_fig4(measured: dict) -> tuple[str, str]:
    """Fig. 4's status from its stored parts (their own statuses and fits)."""
    a, b = measured["part_a"], measured["part_b"]
    shared = b["fits_shared"]
    r2 = "; ".join(f"T={T}: R^2 in n {f['r2']:.3f} (random) vs {shared[T]['r2']:.3f} (shared)"
                   for T, f in b["fits_random"].items() if f and shared.get(T))
    wa, wb = (f", {p['why']}" if p.get("why") else "" for p in (a, b))
    return combine(a["status"], b["status"]), (f"(a) linear in H: {a['status']}{wa}; (b) linearity in n weakened: "
                                               f"{b['status']}{wb} ({r2 or 'none'})")


@experiment("fig4", claim="With contexts in general position (one random context per example; App. I.1, "
                          "Fig. 4) linearity in H remains, linearity in n weakens; the authors conjecture "
                          "H(d-1)+1 as the count there.",
            criterion=f"(a) as Fig. 2a with random contexts: at each fixed T the non-saturated part of accuracy "
                      f"vs H has R^2 >= {ms.R2_MIN}; (b) at each fixed T, the linear fit in n of the non-saturated "
                      f"part has R^2 < {ms.R2_MIN} AND below the R^2 of the same fit with a shared context (the "
                      f"Fig. 2b sweep, same grid and seeds). Each part: all informative T -> reproduced, at least "
                      f"half -> partially; the claim: both reproduced -> reproduced, neither -> not reproduced, "
                      f"else partially. The conjecture itself is probed exactly by 'capacity_probe'.",
            power=Power(SWEEP_STATED, sweep_power("sweep_H", "sweep_n"),
                        decides_sweep("fig4", 50_000, "fig4_H", "fig4_n", "fig2b")),
            decide=decide_fig4)
def fig4(scale: str, seed: int) -> Outcome:
    out_h = run_sweep(SWEEPS[scale]["fig4_H"], seed=seed)
    out_n = run_sweep(SWEEPS[scale]["fig4_n"], seed=seed)
    shared_n = run_sweep(SWEEPS[scale]["fig2b"], seed=seed)
    fits_h = {T: ms.linear_part(c) for T, c in out_h["curves"].items()}
    status_a, why_a = ms.decide([f["r2"] >= ms.R2_MIN for f in fits_h.values() if f])
    fits_n = {T: ms.linear_part(c) for T, c in out_n["curves"].items()}
    fits_shared = {T: ms.linear_part(c) for T, c in shared_n["curves"].items()}
    weak = {T: (f["r2"] < ms.R2_MIN and f["r2"] < fits_shared[T]["r2"])
            for T, f in fits_n.items() if f and fits_shared.get(T)}
    status_b, why_b = ms.decide(list(weak.values()), none_why="no T with a non-saturated part in both contexts")
    fh = {T: (f"R^2={f['r2']:.3f}" if f else "saturated") for T, f in fits_h.items()}
    fn = {T: (f"R^2={f['r2']:.3f}" if f else "saturated") for T, f in fits_n.items()}
    png = sweep_figure([(out_h, fh, "vs H, random contexts"), (out_n, fn, "vs n, random contexts")],
                       "Fig. 4: general-position contexts (one Uniform[0,1] context per example)")
    cap = ("As Fig. 2a/2b but every example has its own context (general position). Dashed: Hd (the columns "
           "of Z); dash-dot: App. I.1's conjectured count H(d-1)+1; solid: Prop. 1's count H(r-1)+1. "
           "The exact rank reachable by any weights on such data is measured by 'capacity_probe'. "
           + scale_note(out_h, scale))
    measured = {
        "part_a": {"status": status_a, "why": why_a, "fits": {str(T): f for T, f in fits_h.items()}},
        "part_b": {"status": status_b, "why": why_b, "fits_random": {str(T): f for T, f in fits_n.items()},
                   "fits_shared": {str(T): f for T, f in fits_shared.items()},
                   "weakened": {str(T): w for T, w in weak.items()}},
        "sweep_H": jsonable(out_h), "sweep_n": jsonable(out_n)}
    status, why = decide_fig4(measured)
    return Outcome(status, why, measured=measured,
                   figures=(Figure("fig4", "Fig. 4: general-position contexts", cap, png),))


@experiment("fig5", claim="Regression (labels Uniform[0,1], memorization measured by the MSE) shows the same "
                          "monotonicity in H and in n as classification (App. A, Fig. 5).",
            criterion=f"At each fixed T the training MSE (mean over seeds) is non-increasing in H and in n: no "
                      f"rise larger than {SIG} between consecutive points, and a fall from the first to the last "
                      f"point larger than that; curves with every MSE below {ms.MSE_FLOOR:g} are uninformative. "
                      f"Reproduced: every informative curve of both sweeps passes; partially: at least half.",
            power=Power(SWEEP_STATED, sweep_power("sweep_H", "sweep_n"),
                        decides_sweep("fig5", 50_000, "fig5_H", "fig5_n")))
def fig5(scale: str, seed: int) -> Outcome:
    outs = {"H": run_sweep(SWEEPS[scale]["fig5_H"], seed=seed), "n": run_sweep(SWEEPS[scale]["fig5_n"], seed=seed)}
    tests = {k: {T: ms.monotone(c, increasing=False) for T, c in o["curves"].items()} for k, o in outs.items()}
    passes = [t["passes"] for per in tests.values() for t in per.values() if t["informative"]]
    status, why = ms.decide(passes)
    detail = "; ".join(f"vs {k}, T={T}: MSE {outs[k]['curves'][T]['mean'][0]:.2e} -> {outs[k]['curves'][T]['mean'][-1]:.2e}"
                       f" (fall significant: {t['change_significant']}, no rise beyond noise: {t['no_significant_drop']})"
                       for k, per in tests.items() for T, t in per.items())
    png = sweep_figure([(outs["H"], None, "MSE vs H"), (outs["n"], None, "MSE vs n")],
                       "Fig. 5: regression, shared context (MSE at fixed T, log scale)")
    cap = ("Training MSE at fixed T (mean +- 1 s.e.) against H and n, labels Uniform[0,1]. Exact memorization "
           "of T real labels needs rank(Z) = T, which a shared context caps at H(n-1)+1 (Prop. 2). "
           + scale_note(outs["H"], scale))
    return Outcome(status, f"{why} ({detail})",
                   measured={"tests": {k: {str(T): t for T, t in per.items()} for k, per in tests.items()},
                             "sweep_H": jsonable(outs["H"]), "sweep_n": jsonable(outs["n"])},
                   figures=(Figure("fig5", "Fig. 5: regression", cap, png),))
