"""One sweep panel (Fig. 2a/b/c, 4, 5): trained accuracy (MSE) at a fixed T grid, and the
construction's count on the same data.

For every seed s and every n of the sweep, one pool of the authors' data
(:func:`~verifier.experiments.synthetic.authors_pool`) of size max(T); every
(sweep value, T, seed) is one run on the pool's first T examples; the whole
panel is ONE batched job (:func:`~verifier.experiments.engine.train_panel`).

Beside it, on the first pool's data, Prop. 1's construction (through the
registry: ``proposition1.key_query_weights``, certified by
``proposition1.certify_rank``) at its count H(r-1)+1, r = min(n, d_h), on the
raw tokens plus positions (the layer of Eqs. (1)-(6), no learned embedding):
the count is certified on this data (arb minor), not just the formula.  Caps:
Prop. 2's H(n-1)+1 (shared context) or Hd (the columns of Z).

>>> from verifier.experiments.scales import SWEEPS
>>> out = run_sweep(SWEEPS["quick"]["fig2a"], seed=0)
>>> sorted(out["curves"]) == [12, 24], out["constructive"][0]["certified"]
(True, True)
"""
from __future__ import annotations

import time
from dataclasses import replace

from verifier.arith.compare import Decision
from verifier.errors import ConstructionFailed, InvalidInstance
from verifier.experiments.catalogue import CACHES
from verifier.experiments.devices import training_device
from verifier.experiments.engine import Run, train_runs
from verifier.experiments.measures import curves
from verifier.experiments.scales import Sweep
from verifier.experiments.synthetic import authors_pool, layer_instance
from verifier.statements.registry import get_construction

_CACHE: dict = {}
CACHES.append(_CACHE)
#: panel name -> the merged stored runs of the campaign (verifier/experiments/campaign.py sets it
#: while it records an experiment from its stored batches); empty: experiments train their sweeps
STORED: dict = {}


def constructive_count(ds, *, H: int, d_h: int, seed: int, limit: int) -> dict:
    """Prop. 1's count H(r-1)+1 on the first examples of ``ds``, built and certified
    (rank(Z) >= count by an arb minor) when count <= ``limit``."""
    n, d = ds.n, ds.queries.shape[1]
    r = min(n, d_h)
    count = H * (r - 1) + 1
    cap = H * (n - 1) + 1 if ds.shared else H * d
    row = {"H": H, "n": n, "d_h": d_h, "r": r, "count": count, "cap": min(cap, H * d),
           "cap_kind": "Prop. 2: H(n-1)+1" if ds.shared else "Hd (columns of Z)", "certified": None}
    if count > limit or count > ds.T:
        row["why"] = f"not built at this scale (count {count} > {min(limit, ds.T)})"
        return row
    t0 = time.perf_counter()
    try:
        inst = layer_instance(ds, count, H=H, d_h=d_h)
        con = get_construction("proposition1.key_query_weights")(inst, seed=seed)
        cert = get_construction("proposition1.certify_rank")(inst, con, count)
        row.update(certified=cert.decision is Decision.TRUE, certified_rank=cert.certified_k,
                   residual_norm_upper=cert.residual_norm_upper)
    except (ConstructionFailed, InvalidInstance) as exc:
        row.update(certified=False, why=f"{type(exc).__name__}: {exc}")
    row["seconds"] = time.perf_counter() - t0
    return row


def pools_and_runs(cfg: Sweep, seeds) -> tuple[list, list, dict]:
    pools, index = [], {}
    for s in seeds:
        for H, n, d_h in cfg.points():
            if (s, n) not in index:
                index[(s, n)] = len(pools)
                pools.append(authors_pool(max(cfg.T), n, cfg.d, seed=s, context=cfg.context, task=cfg.task,
                                          classes=cfg.classes or 100))
    runs = [Run(index[(s, n)], T, H=H, d_h=d_h, seed=s, tags={cfg.key: v})
            for s in seeds for v, (H, n, d_h) in zip(cfg.values, cfg.points()) for T in cfg.T]
    return pools, runs, index


def run_sweep(cfg: Sweep, *, seed: int = 0, device=None) -> dict:
    """Train the panel, measure, build the constructions; memoised per (cfg, seed, device)."""
    key = (cfg, seed, str(training_device(device)))
    if key in _CACHE:
        return _CACHE[key]
    seeds = tuple(seed + s for s in cfg.seeds)
    pools, runs, index = pools_and_runs(cfg, seeds)
    panel = train_runs(pools, runs, d_out=cfg.classes if cfg.task == "classification" else 1,
                        recipe=replace(cfg.recipe, task=cfg.task), device=device)
    value = "accuracy" if cfg.task == "classification" else "mse"
    rows = panel.runs
    if cfg.task == "classification":
        for r in rows:
            r["memorized"] = r["accuracy"] * r["T"]
    cons = [constructive_count(pools[index[(seeds[0], n)]], H=H, d_h=d_h, seed=seeds[0],
                               limit=cfg.construct_up_to) for H, n, d_h in cfg.points()]
    for v, c in zip(cfg.values, cons):
        c[cfg.key] = v
    out = {"key": cfg.key, "values": list(cfg.values), "T": list(cfg.T), "seeds": list(seeds),
           "fixed": {k: v for k, v in (("H", cfg.H), ("n", cfg.n), ("d_h", cfg.d if cfg.d_h is None else cfg.d_h),
                                       ("d", cfg.d)) if k != cfg.key},
           "context": cfg.context, "task": cfg.task, "classes": cfg.classes, "recipe": panel.recipe,
           "curves": curves(rows, cfg.key, value),
           "count_curves": curves(rows, cfg.key, "memorized") if cfg.task == "classification" else None,
           "constructive": cons, "runs": [{k: r[k] for k in sorted(r) if k != "seconds"} for r in rows],
           "replicas": len(runs), "device": panel.device, "global_steps": panel.steps,
           "run_steps": panel.run_steps,
           "seconds": {"panel": panel.seconds, "per_step": panel.seconds_per_step,
                       "per_step_cpu": panel.cpu_seconds_per_step,
                       "construction": sum(c.get("seconds", 0.0) for c in cons)}}
    _CACHE[key] = out
    return out


def sweep_of(panel: str, scale: str, seed: int, *, device=None) -> dict:
    """Panel ``panel`` of :data:`~verifier.experiments.scales.SWEEPS` at ``scale``: the campaign's
    merged stored batches when :data:`STORED` holds them, else trained now (:func:`run_sweep`)."""
    from verifier.experiments.scales import SWEEPS

    if panel in STORED:
        return STORED[panel]
    return run_sweep(SWEEPS[scale][panel], seed=seed, device=device)


def merge(batches: list[dict]) -> dict:
    """One sweep's output from the outputs of its seed batches (the same grid): runs concatenated
    and ordered by seed, curves recomputed, the constructions of the first batch, costs summed."""
    first = batches[0]
    rows = sorted((r for b in batches for r in b["runs"]), key=lambda r: (r["seed"], r["T"], r[first["key"]]))
    value = "accuracy" if first["task"] == "classification" else "mse"
    out = dict(first)
    out.update(seeds=sorted({s for b in batches for s in b["seeds"]}), runs=rows,
               curves=curves(rows, first["key"], value),
               count_curves=curves(rows, first["key"], "memorized") if first["task"] == "classification" else None,
               replicas=sum(b["replicas"] for b in batches), global_steps=sum(b["global_steps"] for b in batches),
               run_steps=sum(b["run_steps"] for b in batches),
               seconds={k: sum(b["seconds"].get(k, 0.0) for b in batches) for k in first["seconds"]},
               batches=len(batches))
    return out
