"""Benchmark: the batched training engine against a per-run torch loop on the SAME runs, as a ratio.

    python benchmarks/bench_training_throughput.py [--panel fig2a] [--T 128] [--seeds 8] [--steps 30] [--reps 3] [--out DIR]

The runs: one dataset size T of a cpu-scale sweep panel (verifier/experiments/scales.py) for
one batch of the campaign's seeds (verifier/experiments/power.py's SEED_BATCH; default Fig. 2a
at T = 128: 6 values of H x 8 seeds = 48 runs, one job of the campaign).  Both sides take the same
training steps of the same runs (full batch, Adam, the engine's model and initialisation;
no early stop, so every run takes every step):

* batched: ONE :class:`~verifier.experiments.engine.Job` holding all runs (what the
  experiments do);
* per-run loop: one Job per run, stepped one after the other (the same model code and
  Adam at M = 1: the difference is the batching alone).

Each side is timed after one warm-up step, ``--reps`` times alternating, in one process
on one torch thread; wall and process-CPU seconds.  Reported: run-steps per second of
each side and the ratio loop / batched (median over reps; CPU time is the robust one on a
shared machine), with the load average before and after.  Writes
training_throughput.json and .md into --out (default reports/benchmarks).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from verifier.experiments.engine import Job, Recipe
from verifier.experiments.power import SEED_BATCH
from verifier.experiments.scales import SWEEPS
from verifier.experiments.sweeps import pools_and_runs


def timed(jobs: list[Job], steps: int, first: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``steps`` training steps of every job, one job after the other."""
    t0, c0 = time.perf_counter(), time.process_time()
    for job in jobs:
        active = torch.ones(job.M, dtype=torch.bool)
        for k in range(steps):
            job.step(first + k, active)
    return time.perf_counter() - t0, time.process_time() - c0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--panel", default="fig2a")
    p.add_argument("--T", type=int, default=128)
    p.add_argument("--seeds", type=int, default=SEED_BATCH, help="seeds in the job (the campaign's batch)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", default="reports/benchmarks")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    cfg = SWEEPS["cpu"][args.panel]
    pools, runs, _ = pools_and_runs(cfg, tuple(range(args.seeds)))
    runs = [r for r in runs if r.T == args.T]
    if not runs:
        print(f"no run of {args.panel} at T = {args.T}; the panel's T: {list(cfg.T)}")
        return 2
    recipe = Recipe(task=cfg.task, lr=cfg.recipe.lr, batch=cfg.recipe.batch, epochs=0, min_steps=10**9,
                    early_stop=False)
    d_out = cfg.classes if cfg.task == "classification" else 1
    kw = dict(d_out=d_out, recipe=replace(recipe), device="cpu")
    batched = [Job(pools, runs, **kw)]
    loop = [Job(pools, [r], **kw) for r in runs]
    load0 = os.getloadavg()[0]
    timed(batched, 1, 1), timed(loop, 1, 1)  # warm-up
    rows = []
    for rep in range(args.reps):
        first = 2 + rep * args.steps
        wb, cb = timed(batched, args.steps, first)
        wl, cl = timed(loop, args.steps, first)
        rows.append({"batched_wall": wb, "batched_cpu": cb, "loop_wall": wl, "loop_cpu": cl,
                     "ratio_wall": wl / wb, "ratio_cpu": cl / cb})
    load1 = os.getloadavg()[0]
    run_steps = len(runs) * args.steps
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    rec = {"panel": args.panel, "T": args.T, "runs": len(runs), "steps_per_rep": args.steps, "reps": args.reps,
           "task": cfg.task, "d": cfg.d, "n": cfg.n, "H": sorted({r.H for r in runs}), "per_rep": rows,
           "batched_run_steps_per_s_cpu": run_steps / med["batched_cpu"],
           "loop_run_steps_per_s_cpu": run_steps / med["loop_cpu"],
           "batched_run_steps_per_s_wall": run_steps / med["batched_wall"],
           "loop_run_steps_per_s_wall": run_steps / med["loop_wall"],
           "ratio_cpu_median": med["ratio_cpu"], "ratio_wall_median": med["ratio_wall"],
           "load_average_1min": [load0, load1], "torch": torch.__version__, "threads": 1,
           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "training_throughput.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    md = (f"# Batched training engine vs a per-run torch loop (same runs, one process)\n\n"
          f"{len(runs)} runs of the cpu-scale {args.panel} panel at T = {args.T} (d = {cfg.d}, n = {cfg.n}, H in "
          f"{rec['H']}, {args.seeds} seeds), {args.steps} full-batch Adam steps each, {args.reps} alternating "
          f"reps, 1 torch thread; {rec['machine']}, torch {torch.__version__}; load average (1 min) "
          f"{load0:.1f} before, {load1:.1f} after.\n\n"
          f"| side | run-steps/s (CPU time) | run-steps/s (wall) |\n|---|---|---|\n"
          f"| batched (one job) | {rec['batched_run_steps_per_s_cpu']:.0f} | {rec['batched_run_steps_per_s_wall']:.0f} |\n"
          f"| per-run loop | {rec['loop_run_steps_per_s_cpu']:.0f} | {rec['loop_run_steps_per_s_wall']:.0f} |\n\n"
          f"Ratio batched / loop (median over reps): {med['ratio_cpu']:.1f}x in CPU time, "
          f"{med['ratio_wall']:.1f}x in wall time.\n")
    (out / "training_throughput.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
