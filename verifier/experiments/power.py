"""Power before verdict: the evidence that an experiment's runs could have come out
either way, stated in code before the run and read from its stored results.

A criterion that fails on runs that could not have passed it (training cut short,
the easiest setting not memorized, seed noise larger than the effect) says
nothing about the paper.  Each experiment of :mod:`verifier.experiments.catalogue`
may register a :class:`Power`: its ``stated`` check, an ``evaluate(measured)`` that
reads ONLY the experiment's ``measured`` numbers (so that a status re-derives
identically from stored results on any machine), and ``decides``: what would
decide the claim (steps, width, GPU hours from the project's cost estimate).
:func:`judge` turns a negative verdict of an unpowered run into "inconclusive"
(never "not reproduced"); a positive verdict stands, with its power shown.

Constants (changing them changes what "powered" means):

* :data:`MIN_SEEDS` = 3 seeds per point;
* :data:`SE_ACCURACY` = 0.05: every mean training accuracy has a standard error
  <= 0.05 (regression: :data:`SE_MSE_RELATIVE` = 0.25 of the mean MSE);
* plateau rule (:mod:`verifier.experiments.plateau`): a run trained to a plateau
  stores how it stopped; it converged when it memorized its data or the plateau rule
  stopped it, and did not when it reached its step cap first.  A run of a fixed step
  count (results stored before the plateau schedule) converged when it memorized or,
  between its last evaluation at or before :data:`PLATEAU_AT` = 75% of its steps and
  its end, it gained at most max(1 example, :data:`PLATEAU_GAIN` = 1% of T) of
  accuracy (regression: its MSE fell by at most 5% relative); stored without its
  evaluation trace it is "not measured";
* the easiest setting (smallest T, largest value of the sweep) is memorized by
  every seed (classification).

>>> ok = {"outcome": "passed", "checks": []}
>>> judge("not reproduced", "w", {**ok, "outcome": "not measured"}, "more steps")[0]
'inconclusive'
>>> judge("reproduced", "w", {**ok, "outcome": "failed"}, "more steps")[0]
'reproduced'
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from verifier.experiments.scales import CPU_PLATEAU, CPU_STEP_CAP

MIN_SEEDS = 3
SE_ACCURACY = 0.05
SE_MSE_RELATIVE = 0.25
PLATEAU_AT = 0.75
PLATEAU_GAIN = 0.01
PLATEAU_MSE = 0.05
PLATEAU_RULE = CPU_PLATEAU.stated(CPU_STEP_CAP) + " (the cpu scale's rule; each sweep stores its recipe)"
OUTCOMES = ("passed", "failed", "not measured", "not applicable", "not run")
COST_FILE = Path(__file__).resolve().parents[2] / "reports" / "experiments" / "experiment_cost.json"

SWEEP_STATED = (f"(1) training converged: every run memorized its data or was stopped by the {PLATEAU_RULE}; "
                f"(2) the easiest setting (smallest T, largest sweep value) is memorized "
                f"by every seed (classification only); (3) >= {MIN_SEEDS} seeds per point, each mean accuracy "
                f"within a standard error of {SE_ACCURACY} (regression: {SE_MSE_RELATIVE:.0%} of the mean MSE).")


@dataclass(frozen=True)
class Power:
    stated: str
    evaluate: Callable[[dict], dict]  # measured -> {"outcome", "checks": [{"check", "outcome", "detail"}]}
    decides: str = ""


def _check(name: str, outcome: str, detail: str) -> dict:
    return {"check": name, "outcome": outcome, "detail": detail}


def overall(checks: list[dict]) -> str:
    """failed if any check failed; else not measured if any was; else passed."""
    outs = [c["outcome"] for c in checks if c["outcome"] != "not applicable"]
    return "failed" if "failed" in outs else "not measured" if "not measured" in outs else "passed"


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


def _seeds(sweep: dict) -> dict:
    worst, few, k = 0.0, False, MIN_SEEDS
    for c in sweep["curves"].values():
        few |= min(c["seeds"]) < MIN_SEEDS
        for m, s, n in zip(c["mean"], c["sem"], c["seeds"]):
            worst = max(worst, s / SE_ACCURACY if sweep["task"] == "classification" else
                        (s / (SE_MSE_RELATIVE * m) if m > 0 else 0.0))
            k = max(k, n)
    ok = not few and worst <= 1.0
    need = "" if ok else f"; at this spread about {math.ceil(k * worst ** 2)} seeds per point would meet it"
    return _check("seeds within the standard-error budget", "passed" if ok else "failed",
                  f"{'fewer than ' + str(MIN_SEEDS) + ' seeds at some point; ' if few else ''}"
                  f"largest standard error {worst:.2f} x the budget{need}")


def sweep_power(*keys: str) -> Callable[[dict], dict]:
    """The power evaluation of the sweeps stored under ``measured[key]`` for each key."""

    def evaluate(measured: dict) -> dict:
        checks = []
        for k in keys:
            sw = measured.get(k)
            if not sw or "runs" not in sw:
                checks.append(_check(f"{k}: stored runs", "not measured", "the runs are not stored"))
                continue
            for c in (_converged(sw), _easiest(sw), _seeds(sw)):
                checks.append({**c, "check": f"{k}: {c['check']}" if len(keys) > 1 else c["check"]})
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
    return (f"more seeds where the standard error is over budget (the seeds check says how many), or the "
            f"paper's scale: d = 64 (4x our width), {steps:,} steps at lr 1e-3 (our cpu scale: d = 16, trained to "
            f"a plateau, cap {CPU_STEP_CAP:,} steps), `python benchmarks/run_experiments.py --scale paper --only {eid}` on one GPU, "
            f"{gpu_hours(*panels)}")


def judge(status: str, why: str, power: dict, decides: str) -> tuple[str, str]:
    """A negative verdict (anything but reproduced / skipped / error) of runs whose power
    check did not pass becomes "inconclusive" with what would decide it."""
    if status in ("reproduced", "skipped", "error", "finding") or power["outcome"] in ("passed", "not applicable"):
        return status, why
    failed = "; ".join(f"{c['check']}: {c['outcome']} ({c['detail']})" for c in power["checks"]
                       if c["outcome"] in ("failed", "not measured"))
    return ("inconclusive", f"inconclusive at this scale: the power check {power['outcome']} ({failed}). "
            f"The criterion on these runs said '{status}': {why}. Would decide it: {decides}.")
