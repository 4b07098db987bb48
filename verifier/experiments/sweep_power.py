"""The power check of a training sweep (Fig. 2a-c, 4, 5), under the rule of
:mod:`verifier.experiments.power`: preconditions (training converged by the plateau rule, the
easiest setting memorized by every seed, at least MIN_SEEDS seeds per point) and the
criterion decided (its intervals clear of their thresholds).  Reads only the stored
``measured`` numbers, so that a status re-derives identically on any machine.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

from verifier.experiments.power import MIN_SEEDS, SEED_BATCH, SEED_CAP, _check, decided_check, overall
from verifier.experiments.scales import CPU_PLATEAU, CPU_STEP_CAP

PLATEAU_AT = 0.75
PLATEAU_GAIN = 0.01
PLATEAU_MSE = 0.05
PLATEAU_RULE = CPU_PLATEAU.stated(CPU_STEP_CAP) + " (the cpu scale's rule; each sweep stores its recipe)"
COST_FILE = Path(__file__).resolve().parents[2] / "reports" / "experiments" / "experiment_cost.json"

SWEEP_STATED = (f"(1) training converged: every run memorized its data or was stopped by the {PLATEAU_RULE}; "
                f"(2) the easiest setting (smallest T, largest sweep value) is memorized "
                f"by every seed (classification only); (3) >= {MIN_SEEDS} seeds per point; (4) the criterion "
                f"decided by the rule of verifier/experiments/power.py: every part's interval over the seeds "
                f"clear of its threshold (a null part - no drop, no gain - by an equivalence test against its "
                f"margin), or the status the same with each undecided part read both ways. Seeds are added in "
                f"batches of {SEED_BATCH} up to {SEED_CAP} per point; at the cap an undecided status is "
                f"inconclusive with the seeds run and the effect they could have detected.")


def run_converged(run: dict, task: str) -> str:
    """The plateau rule on one stored run: passed / failed / not measured."""
    if run.get("reached"):
        return "passed"
    if "stopped" in run:  # trained to a plateau: how it stopped
        return "passed" if run["stopped"] in ("memorized", "plateau") else "failed"
    tr = run.get("trace")
    if not tr or not tr.get("step"):
        return "not measured"
    steps, cut = tr["step"], PLATEAU_AT * run["steps_budget"]
    i = max((k for k, s in enumerate(steps) if s <= cut), default=None)
    if i is None or i == len(steps) - 1:
        return "not measured"
    if task == "classification":
        gain = tr["accuracy"][-1] - tr["accuracy"][i]
        return "passed" if gain <= max(1.0 / run["T"], PLATEAU_GAIN) + 1e-12 else "failed"
    a, b = tr["loss"][i], tr["loss"][-1]
    return "passed" if a - b <= PLATEAU_MSE * a else "failed"


def _converged(sweep: dict) -> dict:
    res = [run_converged(r, sweep["task"]) for r in sweep["runs"]]
    n_fail, n_unk = res.count("failed"), res.count("not measured")
    out = "failed" if n_fail else "not measured" if n_unk else "passed"
    return _check("converged (plateau rule)", out, f"{res.count('passed')} of {len(res)} runs converged, "
                  f"{n_fail} {'stopped at the step cap' if any('stopped' in r for r in sweep['runs']) else 'still improving'}"
                  f", {n_unk} without a stored trace (not memorized)")


def _easiest(sweep: dict) -> dict:
    if sweep["task"] != "classification":
        return _check("easiest setting memorized", "not applicable", "regression")
    key, T, v = sweep["key"], min(sweep["T"]), max(sweep["values"])
    accs = [r["accuracy"] for r in sweep["runs"] if r["T"] == T and r[key] == v]
    ok = bool(accs) and all(a >= 1.0 for a in accs)
    return _check("easiest setting memorized", "passed" if ok else "failed",
                  f"T={T}, {key}={v}: training accuracy {', '.join(f'{a:.3f}' for a in accs)} over the seeds")


def seeds_per_point(sweep: dict) -> int:
    """The fewest seeds at any point of the sweep's curves."""
    return min((min(c["seeds"]) for c in sweep["curves"].values()), default=0)


def _seeds(sweep: dict) -> dict:
    k = seeds_per_point(sweep)
    return _check(f"at least {MIN_SEEDS} seeds per point", "passed" if k >= MIN_SEEDS else "failed",
                  f"{k} seeds at the fewest point")


def sweep_power(*keys: str, decision: Callable[[dict], tuple[str, dict]] | None = None,
                unit: str = "") -> Callable[[dict], dict]:
    """The power evaluation of the sweeps stored under ``measured[key]`` for each key; with
    ``decision(measured) -> (status or "undecided", info)`` (:func:`~.power.status_over`), also
    whether the criterion is decided."""

    def evaluate(measured: dict) -> dict:
        checks, seeds = [], []
        for k in keys:
            sw = measured.get(k)
            if not sw or "runs" not in sw:
                checks.append(_check(f"{k}: stored runs", "not measured", "the runs are not stored"))
                continue
            seeds.append(seeds_per_point(sw))
            for c in (_converged(sw), _easiest(sw), _seeds(sw)):
                checks.append({**c, "check": f"{k}: {c['check']}" if len(keys) > 1 else c["check"]})
        if decision is not None and len(seeds) == len(keys):
            status, info = decision(measured)
            checks.append(decided_check(status, info, seeds=min(seeds), unit=unit))
        return {"outcome": overall(checks), "checks": checks}

    return evaluate


def gpu_hours(*panels: str, path: Path = COST_FILE) -> str:
    """The project's estimate for the paper-scale panels (experiment_cost.json), as text."""
    try:
        cost = json.loads(Path(path).read_text())["panels"]
        lo = sum(cost[p]["gpu_hours"][0] for p in panels)
        hi = sum(cost[p]["gpu_hours"][1] for p in panels)
    except (OSError, KeyError, ValueError, TypeError):
        return "GPU hours: see reports/experiments/experiment_cost.json"
    return f"about {math.floor(lo * 10) / 10:.1f}-{math.ceil(hi * 10) / 10:.1f} GPU hours by experiment_cost.json"


def decides_sweep(eid: str, steps: int, *panels: str) -> str:
    return (f"more seeds where an interval is too wide (the campaign's cap is {SEED_CAP} per point: "
            f"`python benchmarks/run_experiments.py --campaign --only {eid} --seed-cap N`; more seeds cannot pass "
            "'easiest setting memorized', which every seed must pass), or the "
            f"paper's scale: d = 64 (4x our width), {steps:,} steps at lr 1e-3 (our cpu scale: d = 16, trained to "
            f"a plateau, cap {CPU_STEP_CAP:,} steps), `python benchmarks/run_experiments.py --scale paper --only {eid}` on one GPU, "
            f"{gpu_hours(*panels)}")
