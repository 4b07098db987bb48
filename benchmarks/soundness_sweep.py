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

``--executor ray [--address ADDR]`` runs the instances as Ray tasks (the same
result: it is assembled in draw order); ``--cache DIR`` keeps each checked
instance, so a rerun resumes where an interrupted one stopped.  Its entries are
keyed by the code of every folder the units run (:data:`CODE_ROOTS`: this
script and tests/summation_orders.py too), verified as the report's
(:mod:`verifier.report.cache`), and a checker error is never kept.

``--orders`` (issue 17, item 1): each instance is checked again once per
summation order of tests/summation_orders.py (``--orders all``, or a comma
list), every numpy backend product, ``batched_matmul`` and the float modules'
``np.sum`` computed in that order, with the float certificates FORCED where
the default would use Arb (rank minors of every size, independence subsets
of every size: the float path decides first, Arb only where it cannot).  A
certified verdict under an order must equal the default run's certified
verdict (a flip fails the criterion); a certified verdict that becomes
uncertified under an order is allowed and counted.  The committed run
(reports/experiments/soundness_sweep_orders.json; load average in its
``load_average``):

    nice -n 10 python benchmarks/soundness_sweep.py --count 126 --orders all --precision-every 0 \
        --out reports/experiments/soundness_sweep_orders.json
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from verifier.data.near_degenerate import NEAR_KINDS, near_degenerate_instance  # noqa: E402
from verifier.errors import InvalidInstance  # noqa: E402
from verifier.report.cache import UnitCache, cached_map  # noqa: E402
from verifier.report.executor import EXECUTORS, make_executor  # noqa: E402
from verifier.statements import registry  # noqa: E402
from verifier.statements.evidence import VERDICTS  # noqa: E402
from verifier.statements.runner import run_check  # noqa: E402

TESTS = os.path.join(ROOT, "tests")  # tests/summation_orders.py: the order adversary
STATEMENTS = ("claim1", "claim2", "lemma3", "lemma4", "appendixB2", "proposition1", "theorem1")
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)
#: the folders whose code computes a unit (the cache key's fingerprint): the checkers, this
#: script (the criterion, the unit) and tests/ (the summation-order adversary)
CODE_ROOTS = ("verifier", "proofs", "benchmarks", "tests")


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


def check_unit(unit: dict) -> dict:
    """One drawn instance (a unit of the sweep, run in any process): its
    verdict, whether its hypotheses are certified, and (every
    ``precision_every``-th) the certified verdicts that changed at 2x / 4x
    the precision.  Plain JSON."""
    registry.load_all()
    sid, opts, prec = unit["statement"], dict(unit["options"]), unit["prec"]
    o = dict(opts)
    kind = o.pop("kind")
    if "scale" in o:
        o["scale"] = tuple(o["scale"])
    try:
        inst = near_degenerate_instance(kind, **o)
        ev = run_check(sid, inst, prec=prec, seed=opts["seed"] % 1000)
    except InvalidInstance:  # an invalid draw (bad sizes): not counted
        return {"statement": sid, "seed": opts["seed"], "invalid": True}
    out = {"statement": sid, "seed": opts["seed"], "verdict": ev.verdict, "certified": bool(ev.certified), "valid": hypotheses_certified(ev),
           "reason": ev.reason, "rechecked": False, "mismatches": []}
    if unit.get("orders"):
        out["orders"] = {o: check_in_order(sid, inst, prec, opts["seed"] % 1000, o) for o in unit["orders"]}
    if unit["recheck"] and ev.certified:
        out["rechecked"] = True
        for mult in (2, 4):
            ev2 = run_check(sid, inst, prec=prec * mult, seed=opts["seed"] % 1000)
            if ev2.certified and ev2.verdict != ev.verdict:
                out["mismatches"].append({"prec": prec * mult, "verdicts": [ev.verdict, ev2.verdict]})
    return out


def lasting(r: dict) -> bool:
    """A result worth keeping: not a checker error (it may be transient)."""
    return bool(r.get("invalid")) or r["verdict"] != "error"


def belongs(r: dict, unit: dict) -> str | None:
    """Why a cached result is not ``unit``'s (None: it is)."""
    if (r["statement"], r["seed"]) != (unit["statement"], unit["options"]["seed"]):
        return f"it is {r['statement']} at seed {r['seed']}, the unit {unit['statement']} at {unit['options']['seed']}"
    if r.get("invalid"):
        return None
    if r["verdict"] not in VERDICTS or not isinstance(r["certified"], bool) or not isinstance(r["valid"], bool):
        return f"verdict {r['verdict']!r}"
    if sorted(r.get("orders", {})) != sorted(unit.get("orders", [])) or not isinstance(r["mismatches"], list):
        return "its summation orders are not the unit's"
    return None


def check_in_order(sid: str, inst, prec: int, seed: int, order: str) -> dict:
    """The check again with every float product and float_bounds sum in
    ``order``, the float certificates forced (rank minors and independence
    subsets of every size); its verdict, certification and how many products
    went through the order."""
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    from summation_orders import summation_order

    from verifier.arith import independence, rank

    saved = rank.FLOAT_FROM, independence.FLOAT_FROM_K
    rank.FLOAT_FROM, independence.FLOAT_FROM_K = 0, 1
    try:
        with summation_order(order) as shim:
            ev = run_check(sid, inst, prec=prec, seed=seed)
        return {"verdict": ev.verdict, "certified": bool(ev.certified), "products": shim.products,
                "callers": shim.callers, "reason": "" if ev.certified else ev.reason[:160]}
    finally:
        rank.FLOAT_FROM, independence.FLOAT_FROM_K = saved


def order_outcome(base: dict, other: dict) -> str:
    """How a check under another order compares with the default run: "same",
    "flip" (both certified, different verdicts: unsound), "uncertified" (the
    default was certified, this one is not: allowed), "newly certified"."""
    if base["certified"] and other["certified"]:
        return "same" if base["verdict"] == other["verdict"] else "flip"
    if base["certified"]:
        return "uncertified"
    return "newly certified" if other["certified"] else "same"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prec", type=int, default=128)
    ap.add_argument("--precision-every", type=int, default=10, help="re-check every k-th at 2x, 4x prec")
    ap.add_argument("--out", default=None)
    ap.add_argument("--executor", choices=EXECUTORS, default="local", help="where the instances run (ray: Ray tasks)")
    ap.add_argument("--address", help="with --executor ray: the cluster to join (default: a local Ray)")
    ap.add_argument("--cache", metavar="DIR", help="one JSON file per checked instance: a rerun resumes")
    ap.add_argument("--orders", default="", help="recheck each instance under these summation orders "
                    "(comma list of tests/summation_orders.py's ALL_ORDERS, or 'all')")
    args = ap.parse_args(argv)
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    from summation_orders import ALL_ORDERS

    orders = list(ALL_ORDERS) if args.orders == "all" else [o for o in args.orders.split(",") if o]
    unknown = [o for o in orders if o not in ALL_ORDERS]
    if unknown:
        print(f"unknown summation order(s) {', '.join(unknown)}; choose from {', '.join(ALL_ORDERS)}", file=sys.stderr)
        return 2
    registry.load_all()
    rng = np.random.default_rng(args.seed)
    draws = [draw(i, rng) for i in range(args.count)]  # the draws never depend on the verdicts
    units = [{"kind": "soundness-sweep", "statement": sid, "options": json.loads(json.dumps(opts)), "prec": args.prec,
              "recheck": bool(args.precision_every and i % args.precision_every == 0),
              **({"orders": orders} if orders else {})}
             for i, (sid, opts) in enumerate(draws)]
    counts = collections.Counter()
    bad, precision_mismatch, errors = [], [], []
    per_statement = collections.defaultdict(collections.Counter)
    inconclusive = collections.Counter()
    order_counts = {o: collections.Counter() for o in orders}
    flips, order_products, order_callers = [], collections.Counter(), collections.Counter()
    t0, done = time.perf_counter(), [0]

    def tick(i: int, r: dict) -> None:
        done[0] += 1
        if done[0] % 100 == 0:
            print(f"{done[0]}/{args.count}  {time.perf_counter() - t0:.0f} s", flush=True)

    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])  # Ray workers
    with make_executor(args.executor, address=args.address) as ex:
        results, _ = cached_map(ex, check_unit, units, units,
                                UnitCache(args.cache, CODE_ROOTS) if args.cache else None, on_result=tick,
                                keep=lasting, check=belongs, roots=CODE_ROOTS)
    for (sid, opts), r in zip(draws, results):  # in draw order, whatever the order of completion
        if r.get("invalid"):
            counts["invalid draw"] += 1
            continue
        valid = r["valid"]
        per_statement[sid][(r["verdict"], "certified" if r["certified"] else "-", "hyp ok" if valid else "hyp -")] += 1
        counts["instances"] += 1
        counts["valid (hypotheses certified)"] += valid
        if r["verdict"] == "inconclusive":
            inconclusive[f"{sid}: {r['reason'][:90]}"] += 1
        if r["verdict"] == "error":
            errors.append({"statement": sid, **opts, "reason": r["reason"]})
        if r["verdict"] == "refuted" and valid:
            bad.append({"statement": sid, **opts, "reason": r["reason"]})
        counts["precision re-checks"] += r["rechecked"]
        for o, ro in r.get("orders", {}).items():
            outcome = order_outcome(r, ro)
            order_counts[o][outcome] += 1
            order_products[o] += ro["products"]
            order_callers.update(ro.get("callers", {}))
            if outcome == "flip":
                flips.append({"statement": sid, **opts, "order": o, "verdicts": [r["verdict"], ro["verdict"]]})
            if outcome == "uncertified":
                inconclusive[f"{sid} under {o}: {ro['reason'][:90]}"] += 1
        precision_mismatch += [{"statement": sid, **opts, **m} for m in r["mismatches"]]
    ok = not bad and not errors and not precision_mismatch and not flips
    extra = {}
    if orders:
        extra = {"orders": orders, "order_outcomes": {o: dict(c) for o, c in order_counts.items()},
                 "order_products": dict(order_products), "order_flips": flips,
                 "order_products_by_caller": dict(order_callers.most_common()),
                 "load_average": [round(x, 2) for x in os.getloadavg()],
                 "order_note": "each instance rechecked per order with rank.FLOAT_FROM = 0 and "
                               "independence.FLOAT_FROM_K = 1 (float certificates forced); 'products' counts "
                               "the backend products computed in the order"}
    result = {**extra,"count": args.count, "seed": args.seed, "prec": args.prec, "counts": dict(counts),
              "per_statement": {s: {" / ".join(k): v for k, v in c.items()} for s, c in per_statement.items()},
              "inconclusive_reasons": dict(inconclusive.most_common()),
              "refuted_with_certified_hypotheses": bad, "errors": errors, "precision_mismatches": precision_mismatch,
              "criterion": "zero refutations on valid instances, zero errors, zero precision mismatches"
                           + (", zero certified verdicts flipped by a summation order" if orders else ""),
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
