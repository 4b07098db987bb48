"""Same-process A/B of ``theorem_hypotheses`` at T = 2353 (vit-tight, seed 0;
issue 20): robustness_screen._cholesky_defect as it was (loaded from git at
``--before``) against the current one without and with ``overwrite`` (the
Gram route's gathered blocks reused in place), variants interleaved in a
rotating order, one BLAS thread.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_cholesky_overwrite_ab.py \
        [--repeats 3] [--before de4d11c] [--out reports/benchmarks/hypotheses_ab_cholesky_overwrite.json]

Only the ratios of one process compare (the machine is shared): the JSON
keeps every time (the whole step, and the seconds spent inside
_cholesky_defect during it: the part the change touches, less exposed to the
other jobs' noise), the statuses of each run, the load average before and
after each run, and the medians (one stalled run does not move them).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, ROOT)


def _old_defect(rev: str):
    """_cholesky_defect of robustness_screen.py at ``rev`` (exec'd from git show)."""
    src = subprocess.check_output(["git", "show", f"{rev}:verifier/arith/robustness_screen.py"], cwd=ROOT, text=True)
    mod = types.ModuleType("robustness_screen_before")
    exec(compile(src, f"{rev}:robustness_screen.py", "exec"), mod.__dict__)
    return mod._cholesky_defect


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", default="de4d11c")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import verifier.arith.robustness_screen as rs
    from proofs.mahdavi2024.proposition1_rank_induction import theorem_hypotheses
    from verifier.data.instances import make_instance

    new = rs._cholesky_defect
    old = _old_defect(args.before)
    spent = [0.0]  # seconds inside _cholesky_defect during the current run

    def timed(fn):
        def call(b, G, c, overwrite=False):
            t = time.perf_counter()
            try:
                return fn(b, G, c, overwrite)
            finally:
                spent[0] += time.perf_counter() - t
        return call

    variants = {
        f"before ({args.before})": timed(lambda b, G, c, overwrite: old(b, G, c)),
        "copy (overwrite=False)": timed(lambda b, G, c, overwrite: new(b, G, c)),
        "in place (overwrite=True)": timed(lambda b, G, c, overwrite: new(b, G, c, overwrite=overwrite)),
    }
    inst = make_instance(seed=0, H=12, n=197, d=768, d_h=197, context="shared")
    rs._cholesky_defect = new
    theorem_hypotheses(inst, seed=0)  # warm-up: imports, caches of constants
    names = list(variants)
    out = {"what": __doc__.split("\n\n")[0], "T": inst.T, "python": sys.version.split()[0],
           "threads": os.environ.get("OPENBLAS_NUM_THREADS"), "seconds": {n: [] for n in names},
           "defect_seconds": {n: [] for n in names},
           "statuses": {n: [] for n in names}, "load": []}
    try:
        for r in range(args.repeats):
            for j in range(len(names)):
                name = names[(r + j) % len(names)]
                rs._cholesky_defect = variants[name]
                load0 = os.getloadavg()[0]
                spent[0] = 0.0
                t = time.perf_counter()
                hyps = theorem_hypotheses(inst, seed=0)
                sec = time.perf_counter() - t
                out["seconds"][name].append(sec)
                out["defect_seconds"][name].append(spent[0])
                out["statuses"][name].append([f"{h.name}: {h.status}" for h in hyps])
                out["load"].append([name, load0, os.getloadavg()[0]])
                print(f"{name}: {sec:.2f} s, in _cholesky_defect {spent[0]:.2f} s (load {load0:.2f})", flush=True)
    finally:
        rs._cholesky_defect = new
    for key in ("seconds", "defect_seconds"):
        med = {n: statistics.median(v) for n, v in out[key].items()}
        out[f"median_{key}"] = med
        out[f"median_{key}_ratio_to_before"] = {n: v / med[names[0]] for n, v in med.items()}
    print(json.dumps({k: v for k, v in out.items() if k.startswith("median")}, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
