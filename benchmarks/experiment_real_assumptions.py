"""Table 1, Fig. 1 and Table 3 (Sec. 5.1, App. J) at a chosen scale, written to reports/experiments/.

    python benchmarks/experiment_real_assumptions.py                      # table1 fig1 table3, cpu scale
    python benchmarks/experiment_real_assumptions.py table3 --scale thorough

A thin driver over the experiments catalogue (``verifier/experiments/table1.py``
and ``table3.py``: the claim and the criterion are stated there, before the
run).  Writes ``<id>_<scale>.json`` (status, why, claim, criterion, measured)
and the figures as ``<figure name>_<scale>.png``.  Needs the ``experiments``
extra: ``pip install -e ".[experiments]"``.  Supersedes the digits stand-in
(experiment_digits_assumptions.py), whose general-position failure was built
in by its dimensions.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from verifier.experiments.catalogue import EXPERIMENTS, SCALES, load_all, run_experiment  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ids", nargs="*", default=["table1", "fig1", "table3"])
    p.add_argument("--scale", choices=SCALES, default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="reports/experiments")
    args = p.parse_args(argv)
    load_all()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for eid in args.ids:
        t0 = time.perf_counter()
        o = run_experiment(eid, scale=args.scale, seed=args.seed)
        exp = EXPERIMENTS[eid]
        doc = {"id": eid, "claim": exp.claim, "criterion": exp.criterion, "status": o.status, "why": o.why,
               "scale": o.scale, "seed": o.seed, "seconds": o.seconds, "measured": o.measured,
               "figures": [f"{f.name}_{args.scale}.png" for f in o.figures]}
        (out / f"{eid}_{args.scale}.json").write_text(json.dumps(doc, indent=1, sort_keys=True, default=str))
        for f in o.figures:
            (out / f"{f.name}_{args.scale}.png").write_bytes(f.png)
        print(f"{eid}: {o.status} -- {o.why} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
