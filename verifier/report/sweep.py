"""The report's sweep (every statement on its instances) as independent
units of work, run on an executor (:mod:`.executor`: in-process or Ray) and
cached on disk (:mod:`.cache`): resumable, and the same result wherever it
runs.

A unit is one statement on one instance (:func:`run_unit`); its result is
plain JSON (the instance's row, its full evidence, or the reason the
statement refused a drawn instance).  :func:`run_statements` gives exactly
what :func:`.rows.run_statement` gives, statement by statement: the
instances are drawn in plan order, a drawn instance the statement refuses
is replaced by the next draw (up to ``3 count`` draws), and the rows are
assembled in plan order, never in order of completion.  It draws in rounds:
round one runs the first ``count`` plans of every statement at once; each
later round only as many further plans as were refused, so no plan is run
that the sequential loop would not have run.
"""
from __future__ import annotations

import itertools
import json
import warnings

import mpmath

from verifier.arith.compare import workprec
from verifier.errors import InvalidInstance
from verifier.report.cache import UnitCache, cached_map
from verifier.report.executor import LocalExecutor
from verifier.report.plans import iter_plans, reproduce_command
from verifier.report.rows import PREC, _record
from verifier.statements import registry
from verifier.statements.evidence import VERDICTS, error_evidence
from verifier.statements.runner import build_instance, run_check

UNIT_KIND = "statement-instance"
#: flint's and mpmath's default working precision (bits), what a fresh
#: process and the CLI run under: each unit runs under it wherever it runs.
AMBIENT_PREC = 53


def _plain(obj):
    """``obj`` as JSON gives it back (tuples -> lists; key order kept): a
    computed result equals its cached copy."""
    return json.loads(json.dumps(obj))


def unit_inputs(sid: str, options: dict, prec: int) -> dict:
    """What a unit's result depends on, besides the code (:mod:`.cache`)."""
    return {"kind": UNIT_KIND, "statement": sid, "options": options, "prec": prec}


def run_unit(unit: dict) -> dict:
    """One statement on one instance: ``{"record", "evidence"}`` (the row of
    :func:`.rows._record` and the evidence with its trail) and, when the
    statement refuses the instance as invalid, ``"invalid"`` (the reason;
    the record is then the error row the default instance would show)."""
    registry.load_all()  # a fresh worker process has not loaded the statements yet
    sid, opts, prec = unit["statement"], unit["options"], unit["prec"]
    invalid = None
    try:  # the same ambient precisions in every process (a checker may read them outside its workprec)
        with workprec(AMBIENT_PREC), mpmath.workprec(AMBIENT_PREC), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ev = run_check(sid, build_instance(sid, **opts), prec=prec, seed=opts["seed"])
    except InvalidInstance as exc:
        invalid = str(exc)
        ev = error_evidence(sid, f"InvalidInstance on the default instance: {exc}")
    d = ev.to_dict(with_trail=True)
    out = {"record": _record(sid, opts, d, caught), "evidence": d}
    if invalid is not None:
        out["invalid"] = invalid
    return _plain(out)


def lasting(result: dict) -> bool:
    """A unit's result worth keeping: not a checker error (a transient failure, memory
    running out); a drawn instance the statement refuses is kept (the refusal depends on
    the inputs and the environment, both in the key)."""
    return "invalid" in result or result["evidence"]["verdict"] != "error"


def belongs(result: dict, unit: dict) -> str | None:
    """Why a cached result is not ``unit``'s (None: it is): the statement, the
    instance (options, fingerprint, seed) and a verdict that agrees with its row."""
    ev, rec = result["evidence"], result["record"]
    if set(result) - {"record", "evidence", "invalid"}:
        return f"unexpected fields {sorted(set(result) - {'record', 'evidence', 'invalid'})}"
    if ev["statement"] != unit["statement"]:
        return f"the evidence is {ev['statement']!r}'s, not {unit['statement']!r}'s"
    if rec["options"] != unit["options"]:
        return "the row is another instance's"
    inst = ev.get("instance") or {}
    if "seed" in inst and "seed" in unit["options"] and inst["seed"] != unit["options"]["seed"]:
        return f"the instance has seed {inst['seed']}, the unit {unit['options']['seed']}"
    if rec["fingerprint"] != inst.get("sha256_16"):
        return "the row's instance fingerprint is not the evidence's"
    if ev["verdict"] not in VERDICTS or (rec["verdict"], rec["certified"]) != (ev["verdict"], ev["certified"]):
        return f"the row says {rec['verdict']!r}, the evidence {ev['verdict']!r}"
    if "invalid" in result and not isinstance(result["invalid"], str):
        return "a refusal without its reason"
    return None


def assemble(sid: str, tried: list[tuple[dict, dict]]) -> dict:
    """The statement's run (as :func:`.rows.run_statement`) from its units'
    results in plan order: the first is the audit; a later refused draw is
    a skipped one; a later refuted, error or inconclusive one is kept in
    full as a detail."""
    instances, audit, skipped, details = [], None, [], []
    for i, (opts, r) in enumerate(tried):
        if i > 0 and "invalid" in r:
            skipped.append({"options": opts, "command": reproduce_command(sid, opts), "reason": r["invalid"]})
            continue
        d = r["evidence"]
        if i == 0:
            audit = d
        elif d["verdict"] in ("refuted", "error", "inconclusive"):
            details.append(d)
        instances.append(r["record"])
    return {"instances": instances, "skipped": skipped, "audit": audit, "details": details}


def run_statements(sids, *, seed: int, count: int, prec: int = PREC, executor=None, cache: UnitCache | None = None,
                   progress=None, unit_fn=run_unit) -> tuple[dict, dict]:
    """Every statement of ``sids`` on ``count`` instances, the units run on
    ``executor`` (default: this process) and read from / written to
    ``cache``.  Returns ({sid: run}, {"cached": n, "computed": m, "units": u}).
    ``unit_fn`` runs one unit (default :func:`run_unit`)."""
    executor = executor or LocalExecutor()
    plans = {sid: iter_plans(sid, seed=seed) for sid in sids}
    tried: dict[str, list] = {sid: [] for sid in sids}
    accepted = {sid: 0 for sid in sids}
    stats = {"cached": 0, "computed": 0, "units": 0}
    while True:
        batch = []
        for sid in sids:
            room = min(count - accepted[sid], 3 * count - len(tried[sid]))
            batch += [(sid, opts) for opts in itertools.islice(plans[sid], max(room, 0))]
        if not batch:
            break
        units = [unit_inputs(sid, opts, prec) for sid, opts in batch]
        def step(i: int, r: dict, batch=batch) -> None:
            if progress and "invalid" not in r:
                progress.step(batch[i][0])

        results, st = cached_map(executor, unit_fn, units, units, cache, on_result=step, keep=lasting, check=belongs)
        for (sid, opts), r in zip(batch, results):
            first = not tried[sid]
            tried[sid].append((opts, r))
            accepted[sid] += first or "invalid" not in r
        stats = {"cached": stats["cached"] + st["cached"], "computed": stats["computed"] + st["computed"],
                 "units": stats["units"] + len(units)}
    return {sid: assemble(sid, tried[sid]) for sid in sids}, stats
