"""Run the paper's experiments (every id registered in verifier/experiments/catalogue.py) at a scale.

    python benchmarks/run_experiments.py --scale cpu                  # the report's default scale
    python benchmarks/run_experiments.py --scale paper --only fig2a --device cuda  # the authors' grid: one GPU
    python benchmarks/run_experiments.py --scale quick --out /tmp/x
    python benchmarks/run_experiments.py --scale cpu --rederive        # statuses from the stored runs

Writes <out>/<id>_<scale>.json (claim, criterion, status, why, power check, measured numbers) and the
figures as <out>/<id>_<scale>_<figure>.png; prints one line per experiment.  ``--rederive``
runs nothing: it re-derives every stored <out>/<id>_<scale>.json's status with today's rules
(``catalogue.rederive``) and prints old -> new (``--write`` stores the new status, why, power).  The logic lives
in verifier/experiments/ (engine.py, sweeps.py, ...); this script only drives it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from verifier.errors import InvalidInstance
from verifier.experiments import catalogue
from verifier.experiments.devices import set_device


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", choices=catalogue.SCALES, default="cpu")
    p.add_argument("--only", help="comma-separated experiment ids (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="reports/experiments")
    p.add_argument("--threads", type=int, help="torch CPU threads (the machine may be shared)")
    p.add_argument("--device", default="auto", help="training device: auto (CUDA when torch sees one, else the "
                   "CPU), cpu or cuda")
    p.add_argument("--rederive", action="store_true", help="re-derive the stored results' statuses; run nothing")
    p.add_argument("--write", action="store_true", help="with --rederive: store the re-derived statuses")
    args = p.parse_args(argv)
    if args.rederive:
        return rederive(Path(args.out), args.scale, write=args.write)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        set_device(args.device)
    except (InvalidInstance, RuntimeError) as exc:
        print(f"error: {exc}")
        return 2
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
               "kind": exp.kind, "power": o.power,
               "figures": [{"name": f.name, "title": f.title, "caption": f.caption} for f in o.figures]}
        (out / f"{eid}_{args.scale}.json").write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
        for f in o.figures:
            (out / f"{eid}_{args.scale}_{f.name}.png").write_bytes(f.png)
        print(f"{eid:15s} {o.status:21s} {o.seconds:7.1f}s  {o.why}", flush=True)
    print(f"wrote {out} in {time.perf_counter() - t0:.0f}s")
    return 0


def rederive(out: Path, scale: str, *, write: bool) -> int:
    files = sorted(out.glob(f"*_{scale}.json"))
    exps = catalogue.load_all()
    for f in files:
        rec = json.loads(f.read_text())
        if rec.get("id") not in exps:
            continue
        o = catalogue.rederive(rec)
        print(f"{rec['id']:15s} {rec['status']:21s} -> {o.status:15s} power: {o.power.get('outcome', '-')}")
        if write:
            rec.update(status=o.status, why=o.why, power=o.power, kind=exps[rec["id"]].kind)
            f.write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
    if not files:
        print(f"no stored results *_{scale}.json in {out}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
