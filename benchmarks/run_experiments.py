"""Run the paper's experiments (every id registered in verifier/experiments/catalogue.py) at a scale.

    python benchmarks/run_experiments.py --scale cpu                  # the report's default scale
    python benchmarks/run_experiments.py --scale paper --only fig2a   # the authors' grid: for a GPU
    python benchmarks/run_experiments.py --scale quick --out /tmp/x

Writes <out>/<id>_<scale>.json (claim, criterion, status, why, measured numbers) and the
figures as <out>/<id>_<scale>_<figure>.png; prints one line per experiment.  The logic lives
in verifier/experiments/ (engine.py, sweeps.py, ...); this script only drives it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from verifier.experiments import catalogue


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", choices=catalogue.SCALES, default="cpu")
    p.add_argument("--only", help="comma-separated experiment ids (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="reports/experiments")
    p.add_argument("--threads", type=int, help="torch CPU threads (the machine may be shared)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    exps = catalogue.load_all()
    ids = args.only.split(",") if args.only else list(exps)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for eid in ids:
        o = catalogue.run_experiment(eid, scale=args.scale, seed=args.seed)
        exp = exps[eid]
        rec = {"id": eid, "claim": exp.claim, "criterion": exp.criterion, "status": o.status, "why": o.why,
               "scale": o.scale, "seed": o.seed, "seconds": o.seconds, "measured": o.measured,
               "figures": [{"name": f.name, "title": f.title, "caption": f.caption} for f in o.figures]}
        (out / f"{eid}_{args.scale}.json").write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
        for f in o.figures:
            (out / f"{eid}_{args.scale}_{f.name}.png").write_bytes(f.png)
        print(f"{eid:15s} {o.status:21s} {o.seconds:7.1f}s  {o.why}", flush=True)
    print(f"wrote {out} in {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
