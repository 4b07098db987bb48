"""Run the paper's experiments (every id registered in verifier/experiments/catalogue.py) at a scale.

    python benchmarks/run_experiments.py --scale cpu                  # the report's default scale
    python benchmarks/run_experiments.py --scale paper --only fig2a --device cuda  # the authors' grid: one GPU
    python benchmarks/run_experiments.py --scale quick --out /tmp/x
    python benchmarks/run_experiments.py --scale cpu --rederive        # statuses from the stored runs
    python benchmarks/run_experiments.py --campaign [--only fig2a,fig4] [--seed-cap 32] [--hours 3]
                                             # seeds until decided, stored in reports/experiments/campaign;
                                             # resumable: stored batches are never retrained
    python benchmarks/run_experiments.py --campaign --record-only      # the records from the stored batches
    python benchmarks/run_experiments.py --compare DIR                 # a retrained campaign (DIR, e.g. another
                                             # machine's) beside the stored one: statuses, differences, and the
                                             # status over both machines (a status that differs is inconclusive)
    python benchmarks/run_experiments.py --scale paper --executor ray --address auto --cache /tmp/c
                                             # each experiment a Ray task with one GPU of the cluster; resumable

Writes <out>/<id>_<scale>.json (claim, criterion, status, why, power check, measured numbers) and the
figures as <out>/<id>_<scale>_<figure>.png; prints one line per experiment.  ``--executor ray``
runs each experiment as a Ray task (asking for a GPU when the cluster has one; ``--device`` is then
Ray's choice) and ``--cache DIR`` keeps each result, keyed as the report keys it
(``verifier.report.experiments.experiment_key``): a rerun computes only what is missing.  ``--rederive``
runs nothing: it re-derives every stored <out>/<id>_<scale>.json's status with today's rules
(``catalogue.rederive``) and prints old -> new (``--write`` stores the new status, why, power).  The logic lives
in verifier/experiments/ (engine.py, sweeps.py, ...); this script only drives it.
"""
from __future__ import annotations

import argparse
import base64
import functools
import json
import time
from pathlib import Path

import torch

from verifier.errors import InvalidInstance
from verifier.experiments import catalogue
from verifier.experiments.devices import set_device
from verifier.report import experiments as report_experiments
from verifier.report.cache import UnitCache, cached_map
from verifier.report.executor import EXECUTORS, ExecutorUnavailable, make_executor


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
    p.add_argument("--executor", choices=EXECUTORS, default="local", help="where each experiment runs: this "
                   "process or a Ray task (a GPU asked for when the cluster has one)")
    p.add_argument("--address", help="with --executor ray: the cluster to join (default: a local Ray)")
    p.add_argument("--cache", metavar="DIR", help="one JSON file per experiment: a rerun computes only what is missing")
    p.add_argument("--campaign", action="store_true", help="the sweep experiments (fig2a-c, fig4, fig5): seeds in "
                   "batches until decided (verifier/experiments/campaign.py), into --out (default "
                   "reports/experiments/campaign)")
    p.add_argument("--seed-cap", type=int, help="with --campaign: the cap of seeds per point (default power.SEED_CAP)")
    p.add_argument("--hours", type=float, default=3.0, help="with --campaign: no batch starts after this wall time")
    p.add_argument("--train-batch", metavar="PANEL:B", help="with --campaign: train and store batch B of one panel "
                   "only (e.g. fig4_H:0), so that panels train side by side in separate processes")
    p.add_argument("--record-only", action="store_true", help="with --campaign: re-derive the records from the "
                   "stored batches, train nothing")
    p.add_argument("--compare", metavar="DIR", help="a retrained campaign's records beside the stored ones; writes "
                   "DIR/COMPARISON.md")
    args = p.parse_args(argv)
    if args.compare:
        return compare(Path(args.compare), args.scale)
    if args.campaign:
        return campaign(args)
    if args.rederive:
        return rederive(Path(args.out), args.scale, write=args.write)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.executor == "ray" and args.device != "auto":
        print("error: --device is Ray's choice with --executor ray (a GPU when the cluster has one)")
        return 2
    try:
        set_device(args.device)
    except (InvalidInstance, RuntimeError) as exc:
        print(f"error: {exc}")
        return 2
    exps = catalogue.load_all()
    ids = args.only.split(",") if args.only else list(exps)
    unknown = [i for i in ids if i not in exps]
    if unknown:
        print(f"error: no experiment {', '.join(unknown)} (known: {', '.join(exps)})")
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        ex = make_executor(args.executor, address=args.address)
    except ExecutorUnavailable as exc:
        print(f"error: {exc}")
        return 2
    with ex:
        placement, resources = ex.training_placement()
        inputs = [report_experiments.experiment_inputs(i, scale=args.scale, seed=args.seed, placement=placement)
                  for i in ids]
        unit = functools.partial(report_experiments.experiment_unit, scale=args.scale, seed=args.seed)
        cached_map(ex, unit, ids, inputs, None if args.cache is None else UnitCache(args.cache),
                   on_result=lambda i, row: write(out, args.scale, row), resources=resources,
                   keep=report_experiments.lasting, check=report_experiments.belongs, backend=False)
    print(f"wrote {out} in {time.perf_counter() - t0:.0f}s")
    return 0


def campaign(args) -> int:
    from verifier.experiments import campaign as cp
    from verifier.experiments.power import SEED_CAP

    out = Path(args.out) if args.out != "reports/experiments" else cp.CAMPAIGN_DIR
    ids = args.only.split(",") if args.only else list(cp.PANELS)
    unknown = [i for i in ids if i not in cp.PANELS]
    if unknown:
        print(f"error: --campaign runs the sweep experiments {', '.join(cp.PANELS)} (not {', '.join(unknown)})")
        return 2
    t0 = time.perf_counter()
    if args.train_batch:
        panel, _, b = args.train_batch.partition(":")
        if not cp.batch_path(out, panel, int(b or 0)).exists():
            cp.train_batch(out, panel, int(b or 0))
        print(f"stored {cp.batch_path(out, panel, int(b or 0))} in {time.perf_counter() - t0:.0f}s")
        return 0
    if args.record_only:
        for eid in ids:
            try:
                cp.record(out, eid, write=write, unit=report_experiments.experiment_unit)
            except FileNotFoundError as exc:
                print(f"{eid}: not recorded ({exc})")
    else:
        state = cp.run_campaign(ids, out, seed_cap=args.seed_cap or SEED_CAP, hours=args.hours, write=write,
                                unit=report_experiments.experiment_unit, log=lambda line: print(line, flush=True))
        print("campaign:", ", ".join(f"{k} {v}" for k, v in state.items()))
    print(f"wrote {out} in {time.perf_counter() - t0:.0f}s")
    return 0


def compare(other: Path, scale: str) -> int:
    """The records of ``other`` beside the stored campaign's: each experiment's two statuses,
    re-derived with today's rules, the status over both machines (power.across_machines) and
    what differs; nothing replaces the stored records."""
    from verifier.experiments.campaign import CAMPAIGN_DIR
    from verifier.experiments.power import across_machines

    rows = ["| id | stored | retrained | over both machines | differences |", "|---|---|---|---|---|"]
    found = False
    for f in sorted(other.glob(f"*_{scale}.json")):
        mine = CAMPAIGN_DIR / f.name
        if not mine.exists():
            continue
        a, b = (json.loads(x.read_text()) for x in (mine, f))
        if a.get("id") not in catalogue.load_all():
            continue
        found = True
        oa, ob = catalogue.rederive(a), catalogue.rederive(b)
        diff = [] if oa.status == ob.status else [f"status {oa.status} -> {ob.status}"]
        if oa.power.get("outcome") != ob.power.get("outcome"):
            diff.append(f"power {oa.power.get('outcome')} -> {ob.power.get('outcome')}")
        ca, cb = (o.power.get("criterion_why", "") for o in (oa, ob))
        if ca != cb:
            diff.append(f"criterion reading: stored '{ca[:300]}' / retrained '{cb[:300]}'")
        rows.append(f"| `{a['id']}` | {oa.status} | {ob.status} | {across_machines([oa.status, ob.status])} | "
                    f"{'; '.join(diff).replace('|', '/') or 'none'} |")
    if not found:
        print(f"no record *_{scale}.json in {other} matches the stored campaign")
        return 2
    text = "# A retrained campaign beside the stored one\n\n" + "\n".join(rows) + "\n"
    (other / "COMPARISON.md").write_text(text)
    print(text)
    return 0


def write(out: Path, scale: str, row: dict) -> None:
    """One experiment's record and figures, as each completes (one line printed)."""
    figures = [{"name": f["name"].removeprefix("experiment_"), "title": f["title"], "caption": f["caption"]}
               for f in row["figures"]]
    rec = {k: row[k] for k in ("id", "claim", "criterion", "status", "why", "scale", "seed", "seconds", "measured",
                               "kind", "power")}
    if row.get("provenance"):
        rec["provenance"] = row["provenance"]
    (out / f"{row['id']}_{scale}.json").write_text(json.dumps(dict(rec, figures=figures), indent=1, sort_keys=True,
                                                              default=str) + "\n")
    for f, png in zip(figures, row["png_base64"]):
        (out / f"{row['id']}_{scale}_{f['name']}.png").write_bytes(base64.b64decode(png))
    print(f"{row['id']:15s} {row['status']:21s} {row['seconds']:7.1f}s  {row['why']}", flush=True)


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
