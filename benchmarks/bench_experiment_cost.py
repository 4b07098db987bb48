"""What the `paper` scale of the synthetic experiments costs: a measured step of each batched
job, extrapolated to the whole run on one GPU (no GPU here: the extrapolation is stated).

    python benchmarks/bench_experiment_cost.py [--seeds-measured 1] [--gpu-tflops 5,25] [--device auto] [--out DIR]

On a GPU (``--device cuda``, or ``auto`` where torch sees one) the step is measured there and
the estimate is steps x the measured GPU seconds per step (no throughput range assumed); on
the CPU it is extrapolated as below.  The CUDA path is untested on hardware here (no GPU).

Per panel of verifier/experiments/scales.py (SWEEPS["paper"], SATURATION["paper"]): the
runs of one seed as ONE batched job (the GPU layout; every run has T >= 256, so every step
is a full minibatch of 256 and the step does not depend on T: the data pools are cut to
T = 512 for the measurement, the step counts use the real T grid), measured on this CPU:

* floating-point operations of one training step (torch's FlopCounterMode: the matrix
  products, forward and backward; elementwise work such as softmax and Adam is not counted),
* wall and process-CPU seconds per step (after a warm-up step).

Extrapolation, per panel: steps = the largest run budget, max(500 epochs, 50,000) or
300,000 (no early stop assumed: an upper bound); FLOPs x (seeds / seeds measured); GPU
seconds = FLOPs per step x steps / sustained throughput, for the stated range of
throughputs (H100 FP32 peak is ~67 TFLOP/s SXM, ~51 PCIe; small batched products reach a
fraction of it), plus 1 ms per step of kernel launches, plus the elementwise work as
memory traffic: 30 float32 passes over the largest activation (runs x 256 x H x n: the
scores, softmax and their gradients) at 2 TB/s.  Writes experiment_cost.json.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import torch

from verifier.experiments.devices import training_device
from verifier.experiments.engine import Run
from verifier.experiments.job_measures import step_cost
from verifier.experiments.scales import SATURATION, SWEEPS
from verifier.experiments.sweeps import pools_and_runs
from verifier.experiments.synthetic import authors_pool

MEASURE_T = 512
LAUNCH_SECONDS = 1e-3
PASSES, BANDWIDTH = 30, 2.0e12  # passes of float32 over the (runs, 256, H, n) scores per step; bytes/s


def panels():
    for name, cfg in SWEEPS["paper"].items():
        yield name, cfg, len(cfg.seeds)
    yield "fig3", SATURATION["paper"], len(SATURATION["paper"].seeds)


def measure(name, cfg, seeds_measured: int, device="cpu") -> dict:
    seeds = tuple(range(seeds_measured))
    if name == "fig3":
        pools = [authors_pool(MEASURE_T, cfg.n, cfg.d, seed=s, classes=cfg.classes) for s in seeds]
        runs = [Run(i, MEASURE_T, H=H, d_h=cfg.d, seed=s) for H in cfg.H for _ in cfg.T for i, s in enumerate(seeds)]
        real_T, recipe, d_out = cfg.T, cfg.recipe, cfg.classes
    else:
        small = replace(cfg, T=tuple(min(t, MEASURE_T) for t in cfg.T))
        pools, runs, _ = pools_and_runs(small, seeds)
        real_T, recipe, d_out = cfg.T, replace(cfg.recipe, task=cfg.task), cfg.classes if cfg.task == "classification" else 1
    cost = step_cost(pools, runs, d_out=d_out, recipe=recipe, device=device, steps=2)
    steps = max(recipe.steps(t) for t in real_T)
    H_max = max(r.H for r in runs)
    n_max = max(p.n for p in pools)
    return {"scores_elements_measured": cost["runs"] * min(recipe.batch, MEASURE_T) * H_max * n_max,
            "runs_measured": cost["runs"], "flops_per_step_measured": cost["flops_per_step"],
            "cpu_seconds_per_step_measured": cost["cpu_seconds_per_step"],
            "wall_seconds_per_step_measured": cost["seconds_per_step"], "steps": steps, "device": cost["device"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds-measured", type=int, default=1)
    p.add_argument("--gpu-tflops", default="5,25", help="sustained FP32 throughput range on the GPU")
    p.add_argument("--only", help="comma-separated panels")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu", help="where to measure a step: cpu, cuda, or auto")
    p.add_argument("--out", default="reports/experiments")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = training_device(None if args.device == "auto" else args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda: torch sees no CUDA device here")
        return 2
    lo, hi = (float(v) * 1e12 for v in args.gpu_tflops.split(","))
    rows, total = {}, {"gpu_hours_low": 0.0, "gpu_hours_high": 0.0, "cpu_core_days": 0.0}
    for name, cfg, seeds in panels():
        if args.only and name not in args.only.split(","):
            continue
        m = measure(name, cfg, args.seeds_measured, device)
        scale = seeds / args.seeds_measured
        flops = m["flops_per_step_measured"] * scale
        memory = PASSES * 4 * m["scores_elements_measured"] * scale / BANDWIDTH
        if device.type == "cuda":  # measured on the GPU: steps x the measured step
            gpu = [m["steps"] * m["wall_seconds_per_step_measured"] * scale / 3600] * 2
        else:
            gpu = [m["steps"] * (flops / t + LAUNCH_SECONDS + memory) / 3600 for t in (hi, lo)]
        cpu_days = m["steps"] * m["cpu_seconds_per_step_measured"] * scale / 86400
        rows[name] = {**m, "seeds": seeds, "memory_seconds_per_step": memory, "flops_per_step": flops, "gpu_hours": gpu, "cpu_core_days": cpu_days,
                      "cpu_gflops_achieved": m["flops_per_step_measured"] / m["cpu_seconds_per_step_measured"] / 1e9}
        total["gpu_hours_low"] += gpu[0]
        total["gpu_hours_high"] += gpu[1]
        total["cpu_core_days"] += cpu_days
        print(f"{name:7s} {m['runs_measured'] * int(scale):4d} runs, {m['steps']:7d} steps, "
              f"{flops / 1e9:8.1f} GFLOP/step; CPU {m['cpu_seconds_per_step_measured']:.2f} s/step for "
              f"{m['runs_measured']} runs ({rows[name]['cpu_gflops_achieved']:.1f} GFLOP/s) -> {cpu_days:6.1f} "
              f"core-days; one GPU at {args.gpu_tflops} TFLOP/s: {60 * gpu[0]:.0f}-{60 * gpu[1]:.0f} min", flush=True)
    print(f"total: one GPU {total['gpu_hours_low']:.1f}-{total['gpu_hours_high']:.1f} h; this CPU (1 core) "
          f"{total['cpu_core_days']:.0f} core-days")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "experiment_cost.json").write_text(json.dumps({"panels": rows, "total": total, "assumptions": {
        "gpu_tflops_range": args.gpu_tflops, "launch_seconds_per_step": LAUNCH_SECONDS,
        "measured_T": MEASURE_T, "seeds_measured": args.seeds_measured, "early_stop": "not assumed"}},
        indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
