"""Cost of a certified full-row-rank check against one float SVD.

    python benchmarks/bench_certified_rank.py [--rows 621] [--cols 1280] [--seed 0] [--sigma]

Builds a Gaussian rows x cols matrix, times ``np.linalg.svd`` (singular values
only) and :func:`verifier.arith.rank.certify_full_row_rank` in the same run, and
prints one JSON line.  Target on a 2-core machine: certified <= 10 s at
621 x 1280.  ``--sigma`` also times :func:`verifier.arith.singular_values.sigma_min_lower_bound`.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from verifier.arith.compare import lower  # noqa: E402
from verifier.arith.rank import certify_full_row_rank
from verifier.arith.singular_values import sigma_min_lower_bound


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=621)
    ap.add_argument("--cols", type=int, default=1280)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sigma", action="store_true", help="also time sigma_min_lower_bound")
    args = ap.parse_args(argv)

    A = np.random.default_rng(args.seed).standard_normal((args.rows, args.cols))

    t = time.perf_counter()
    s = np.linalg.svd(A, compute_uv=False)
    svd_s = time.perf_counter() - t

    t = time.perf_counter()
    res = certify_full_row_rank(A)
    cert_s = time.perf_counter() - t

    row = {
        "bench": "certified_rank",
        "shape": [args.rows, args.cols],
        "seed": args.seed,
        "svd_seconds": round(svd_s, 4),
        "certified_seconds": round(cert_s, 4),
        "ratio": round(cert_s / svd_s, 2) if svd_s > 0 else None,
        "decision": res.decision.value,
        "k": res.k,
        "residual_norm_upper": res.residual_norm_upper,
        "prec_bits": res.prec_bits,
        "sigma_min_float": float(s[-1]),
        "target_met": cert_s <= 10.0,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    if args.sigma:
        t = time.perf_counter()
        lo = sigma_min_lower_bound(A)
        row["sigma_min_lower_bound"] = lower(lo)
        row["sigma_seconds"] = round(time.perf_counter() - t, 4)
    print(json.dumps(row))
    return 0 if res.decision.value == "true" else 1


if __name__ == "__main__":
    raise SystemExit(main())
