"""Measures of a batched training job beyond its runs' accuracy: what one step costs (for a
GPU estimate) and the softmax maxima of trained replicas (App. H's saturation statistic)."""
from __future__ import annotations

import time

import numpy as np
import torch

from verifier.experiments.batched_model import BatchedAttention
from verifier.experiments.engine import Dataset, Job, Recipe, Run, _stack


def step_cost(datasets: list[Dataset], runs: list[Run], *, d_out: int, recipe: Recipe, embedding: bool = True,
              device=None, steps: int = 2) -> dict:
    """What one training step of this batched job costs, measured: floating-point operations
    (torch's FlopCounterMode, matrix products only), wall and process CPU seconds per step
    (after one warm-up step), for a GPU estimate."""
    from torch.utils.flop_counter import FlopCounterMode

    job = Job(datasets, runs, d_out=d_out, recipe=recipe, embedding=embedding, device=device)
    active = torch.ones(job.M, dtype=torch.bool, device=job.device)
    with FlopCounterMode(display=False) as fc:
        job.step(1, active)
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(steps):
        job.step(k + 2, active)
    return {"flops_per_step": int(fc.get_total_flops()), "seconds_per_step": (time.perf_counter() - t0) / steps,
            "cpu_seconds_per_step": (time.process_time() - c0) / steps, "runs": job.M, "device": str(job.device)}


def attention_maxima(model: BatchedAttention, datasets: list[Dataset], runs: list[Run]) -> list[np.ndarray]:
    """max_i s_h^(t)_i of every run's trained model on its T examples: one (T, H) array per
    run (App. H's saturation statistic; padded tokens have weight 0)."""
    device = model.head_mask.device
    Xq, C, _ = _stack(datasets, "regression", device)
    C = C[..., :max(datasets[r.dataset].n for r in runs), :]
    ds = torch.tensor([r.dataset for r in runs], device=device)
    Tm = max(r.T for r in runs)
    idx = torch.arange(Tm, device=device)
    with torch.no_grad():
        rows = (ds[:, None], idx[None, :])
        _, s = model(Xq[rows], C[ds] if C.dim() == 3 else C[rows], scores=True)
    mx = s.amax(-1).double().cpu().numpy()
    return [mx[m, :r.T, :r.H] for m, r in enumerate(runs)]
