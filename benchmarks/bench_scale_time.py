"""What the cpu scale's synthetic sweeps cost, from their stored runs, and what the thorough scale would.

    python benchmarks/bench_scale_time.py [--dir reports/experiments] [--out reports/benchmarks]

Reads the stored cpu-scale results of Fig. 2a-c, 4 and 5 (<dir>/<id>_cpu.json, as
benchmarks/run_experiments.py writes them).  Per sweep panel: the training steps its
batched jobs took (global steps; run-steps: summed over runs, a stopped run takes none),
the measured process-CPU seconds per global step (``seconds.per_step_cpu``: this process's
CPU time only, so a busy machine inflates it less than wall time; still an upper bound of a
quiet core) and the wall seconds.  The cpu estimate is steps x measured CPU seconds per
step, over 2 cores (the report runs the panels in 2 processes).

Thorough (not run: projected): the same panels with 5/3 the seeds, 7/6 the sweep points and
a plateau window twice as long (1,000 steps, so at most twice the steps per run), i.e. the
cpu CPU seconds x 5/3 x 7/6 x 2, over 2 cores; its cap (40,000 steps) bounds a run, not a
panel's typical cost.  Writes scale_time.json and .md into --out.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from verifier.experiments.scales import SWEEPS

IDS = ("fig2a", "fig2b", "fig2c", "fig4", "fig5")
CORES = 2


def panels(rec: dict):
    for key in ("sweep", "sweep_H", "sweep_n"):
        sw = rec["measured"].get(key)
        if sw and "runs" in sw:
            yield key, sw


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="reports/experiments")
    p.add_argument("--out", default="reports/benchmarks")
    args = p.parse_args(argv)
    rows, missing = [], []
    for eid in IDS:
        f = Path(args.dir) / f"{eid}_cpu.json"
        if not f.exists():
            missing.append(eid)
            continue
        rec = json.loads(f.read_text())
        if not all(sw["recipe"].get("plateau") for _, sw in panels(rec)):
            missing.append(eid)  # stored from a fixed-count run: not this scale's recipe
            continue
        for key, sw in panels(rec):
            sec = sw["seconds"]
            rows.append({"experiment": eid, "panel": key, "runs": len(sw["runs"]), "global_steps": sw["global_steps"],
                         "run_steps": sum(r.get("steps", r.get("steps_budget", 0)) for r in sw["runs"]),
                         "cpu_seconds": sec["per_step_cpu"] * sw["global_steps"], "wall_seconds": sec["panel"],
                         "converged": sum(r.get("stopped") in ("memorized", "plateau") for r in sw["runs"]),
                         "experiment_wall_seconds": rec["seconds"]})
    cpu = sum(r["cpu_seconds"] for r in rows)
    th, cp = SWEEPS["thorough"]["fig2a"], SWEEPS["cpu"]["fig2a"]
    factor = (len(th.seeds) / len(cp.seeds)) * (len(th.values) / len(cp.values)) * \
        (th.recipe.plateau.window / cp.recipe.plateau.window)
    rec = {"panels": rows, "missing": missing, "cpu_core_seconds": cpu, "cpu_estimate_minutes_2_cores":
           cpu / CORES / 60, "thorough_factor": factor, "thorough_estimate_minutes_2_cores": cpu * factor / CORES / 60,
           "wall_seconds_measured": sum({r["experiment"]: r["experiment_wall_seconds"] for r in rows}.values()),
           "load_average_now": os.getloadavg()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale_time.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    lines = ["# The cpu scale's sweeps: steps x measured step time", "",
             "| experiment | panel | runs | converged | global steps | run-steps | CPU s | wall s |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['experiment']} | {r['panel']} | {r['runs']} | {r['converged']} | {r['global_steps']:,} | "
              f"{r['run_steps']:,} | {r['cpu_seconds']:.0f} | {r['wall_seconds']:.0f} |" for r in rows]
    lines += ["", f"CPU time of training, all panels: {cpu:.0f} core-seconds = {cpu / CORES / 60:.1f} min on "
              f"{CORES} cores (measured on a shared machine: an upper bound of quiet cores). Wall time as run: "
              f"{rec['wall_seconds_measured']:.0f} s." + (f" Not stored with the plateau schedule: {', '.join(missing)}." if missing else ""),
              f"Thorough (projected, not run): x {factor:.2f} (seeds x points x plateau window) = "
              f"{cpu * factor / CORES / 60:.0f} min on {CORES} cores."]
    (out / "scale_time.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
