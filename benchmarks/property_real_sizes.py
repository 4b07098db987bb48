"""The real-size property profile (issue 20, item 5) on its own: the draws
``mha-verify report --thorough`` makes (verifier/report/real_sizes.py) --
H up to 60, n up to 197, d up to 768, shared and random contexts, T =
H(r-1)+1 -- with Theorem 1, Prop. 1 and Prop. 2 on each draw, and what it
cost: per draw the cost estimated from the sizes before running, and the
measured wall and CPU seconds, with the load average.

Budget (stated before the run): ``COUNT`` draws, each estimated at most
``CAP_SECONDS`` CPU seconds (the profile's constants).  Run (not in CI):

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/property_real_sizes.py \\
        --out reports/experiments/property_real_sizes.json

(one BLAS thread: on a loaded 2-core machine a multi-threaded OpenBLAS SVD
of a 141 x 1280 matrix took 7 s of wall time instead of 0.15 s).
``--executor ray [--address ADDR]`` runs the units as Ray tasks; ``--cache
DIR`` keeps each unit, so a rerun resumes where an interrupted one stopped.
Exit 1 when a draw is refuted or a checker errs.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from verifier.report import real_sizes  # noqa: E402
from verifier.report.cache import UnitCache  # noqa: E402
from verifier.report.environment import strip_volatile  # noqa: E402
from verifier.report.executor import EXECUTORS, make_executor  # noqa: E402


class _Lines:
    """One line per finished unit, with the load average."""

    def step(self, label: str) -> None:
        print(f"{label}  load {os.getloadavg()[0]:.1f}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--executor", choices=EXECUTORS, default="local")
    ap.add_argument("--address", help="with --executor ray: the cluster to join (default: a local Ray)")
    ap.add_argument("--cache", metavar="DIR", help="one JSON file per unit: a rerun resumes")
    args = ap.parse_args(argv)
    draws = real_sizes.profile_draws(seed=args.seed)
    estimate = sum(real_sizes.estimated_seconds(s) for s in draws)
    print(f"{len(draws)} draws, estimated {estimate:.0f} CPU s in all (cap {real_sizes.CAP_SECONDS:g} s a draw)",
          flush=True)
    load0, t0 = os.getloadavg(), time.perf_counter()
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])  # Ray
    with make_executor(args.executor, address=args.address) as ex:
        section = real_sizes.run_profile("thorough", seed=args.seed, executor=ex, draws=draws, progress=_Lines(),
                                         cache=UnitCache(args.cache) if args.cache else None)
    wall = time.perf_counter() - t0
    rows = []
    for row in section["draws"]:
        rows.append({**strip_volatile(row), "measured_seconds": {k: r["seconds"] for k, r in row["results"].items()},
                     "measured_cpu_seconds": round(sum(r["seconds"]["cpu"] for r in row["results"].values()), 1)})
    out = {"what": "issue 20 item 5: Theorem 1, Prop. 1, Prop. 2 on instances drawn up to real sizes",
           "seed": args.seed, "count": section["count"], "statements": section["statements"],
           "budget": {"draws": len(draws), "cap_cpu_seconds_per_draw": real_sizes.CAP_SECONDS,
                      "estimated_cpu_seconds": round(estimate, 1)},
           "assumption1_samples": section["assumption1_samples"],
           "largest_drawn": {k: max(r["sizes"][k] for r in rows) for k in ("H", "n", "d", "d_h", "T")},
           "verdicts": section["verdicts"], "refuted": section["refuted"], "error": section["error"],
           "draws": rows, "units": section["units"], "executor": args.executor,
           "measured": {"wall_seconds": round(wall, 1),
                        "cpu_seconds": round(sum(r["measured_cpu_seconds"] for r in rows), 1),
                        "load_average_before": [round(x, 2) for x in load0],
                        "load_average_after": [round(x, 2) for x in os.getloadavg()],
                        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
                        "nproc": os.cpu_count()}}
    text = json.dumps(out, indent=1, sort_keys=True)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text if len(text) < 20000 else text[:20000])
    return 1 if section["refuted"] or section["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
