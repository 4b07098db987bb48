"""Soundness sweep (issue 9): drawn near-degenerate instances across the
induction's statements; a certified verdict must never be a refutation on an
instance whose hypotheses are certified, and must not change at 2x / 4x the
precision.

Success criterion (stated before the run, checked at the end; exit 1 if not met):

* ZERO "refuted" verdicts on instances whose hypotheses are all certified
  (the paper's statements hold on every valid instance);
* ZERO checker errors (a CertificateConflict is an error);
* on the precision subsample, every certified verdict at ``prec`` is the same
  at 2 prec and 4 prec.

Run (not in CI; a few minutes per 1000 instances on one core):

    nice -n 10 python benchmarks/soundness_sweep.py --count 2000 --out reports/experiments/soundness_sweep.json
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from verifier.data.near_degenerate import NEAR_KINDS, near_degenerate_instance  # noqa: E402
from verifier.errors import InvalidInstance  # noqa: E402
from verifier.statements import registry  # noqa: E402
from verifier.statements.runner import run_check  # noqa: E402

STATEMENTS = ("claim1", "claim2", "lemma3", "lemma4", "appendixB2", "proposition1", "theorem1")
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)


def draw(i: int, rng: np.random.Generator) -> tuple[str, dict]:
    """The i-th (statement, instance options): sizes small enough for seconds per check."""
    sid = STATEMENTS[i % len(STATEMENTS)]
    kind = NEAR_KINDS[int(rng.integers(len(NEAR_KINDS)))]
    n = int(rng.integers(2, 5))
    opts = {"kind": kind, "H": int(rng.integers(1, 4)), "n": n, "d": n + int(rng.integers(1, 4)),
            "delta": float(DELTAS[int(rng.integers(len(DELTAS)))]), "seed": int(rng.integers(0, 2**31)),
            "context": str(rng.choice(["random", "uniform", "shared", "pe"])), "d_out": int(rng.integers(1, 3))}
    if sid in ("lemma3",):
        opts["T"] = opts["n"] + 3
    if sid == "appendixB2":  # shared contexts: every head adds exactly r-1 rows, so every step is checked
        opts["H"] = int(rng.integers(2, 5))
        opts["context"] = "shared"
    if kind == "scaled":
        opts["scale"] = tuple(int(x) for x in rng.integers(-200, 201, 3))
    return sid, opts


def hypotheses_certified(ev) -> bool:
    return all(h.status == "certified" for h in ev.hypotheses)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prec", type=int, default=128)
    ap.add_argument("--precision-every", type=int, default=10, help="re-check every k-th at 2x, 4x prec")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    registry.load_all()
    rng = np.random.default_rng(args.seed)
    counts = collections.Counter()
    bad, precision_mismatch, errors = [], [], []
    per_statement = collections.defaultdict(collections.Counter)
    inconclusive = collections.Counter()
    t0 = time.perf_counter()
    for i in range(args.count):
        sid, opts = draw(i, rng)
        o = dict(opts)
        kind = o.pop("kind")
        try:
            inst = near_degenerate_instance(kind, **o)
        except InvalidInstance:  # an invalid draw (bad sizes): not counted
            counts["invalid draw"] += 1
            continue
        try:
            ev = run_check(sid, inst, prec=args.prec, seed=opts["seed"] % 1000)
        except InvalidInstance:
            counts["invalid draw"] += 1
            continue
        valid = hypotheses_certified(ev)
        per_statement[sid][(ev.verdict, "certified" if ev.certified else "-", "hyp ok" if valid else "hyp -")] += 1
        counts["instances"] += 1
        counts["valid (hypotheses certified)"] += valid
        if ev.verdict == "inconclusive":
            inconclusive[f"{sid}: {ev.reason[:90]}"] += 1
        if ev.verdict == "error":
            errors.append({"statement": sid, **opts, "reason": ev.reason})
        if ev.verdict == "refuted" and valid:
            bad.append({"statement": sid, **opts, "reason": ev.reason})
        if args.precision_every and i % args.precision_every == 0 and ev.certified:
            counts["precision re-checks"] += 1
            for mult in (2, 4):
                ev2 = run_check(sid, inst, prec=args.prec * mult, seed=opts["seed"] % 1000)
                if ev2.certified and ev2.verdict != ev.verdict:
                    precision_mismatch.append({"statement": sid, **opts, "prec": args.prec * mult,
                                               "verdicts": [ev.verdict, ev2.verdict]})
        if (i + 1) % 100 == 0:
            print(f"{i + 1}/{args.count}  {time.perf_counter() - t0:.0f} s  refuted-valid {len(bad)}  "
                  f"errors {len(errors)}  precision mismatches {len(precision_mismatch)}", flush=True)
    ok = not bad and not errors and not precision_mismatch
    result = {"count": args.count, "seed": args.seed, "prec": args.prec, "counts": dict(counts),
              "per_statement": {s: {" / ".join(k): v for k, v in c.items()} for s, c in per_statement.items()},
              "inconclusive_reasons": dict(inconclusive.most_common()),
              "refuted_with_certified_hypotheses": bad, "errors": errors, "precision_mismatches": precision_mismatch,
              "criterion": "zero refutations on valid instances, zero errors, zero precision mismatches",
              "criterion_met": ok, "seconds": round(time.perf_counter() - t0, 1)}
    text = json.dumps(result, indent=1, sort_keys=True, default=str)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text if len(text) < 20000 else text[:20000])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
