"""Running the statements for the report: one row per statement from its
instances and negative controls, with the status the table shows.

A statement without a checker is a "not implemented" row, never a pass; a
checker that raises is an "error" row.  Definitions and assumptions are
properties of the data: their "refuted" (the property fails on a drawn
instance) is counted and shown, but is not a refutation of the paper.  The
two number columns are each statement's own: the smallest Evidence.margin
(``@statement(margin=...)`` says what it measures) and the largest value of
its declared quantity (``@statement(measure=...)``, a key of
Evidence.measured).
"""
from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

from verifier.errors import InvalidInstance
from verifier.report.plans import reproduce_command
from verifier.report.progress import Progress
from verifier.statements import registry
from verifier.statements.display import show
from verifier.statements.evidence import error_evidence
from verifier.statements.runner import build_instance, run_check, run_control

PREC = 128
#: Statements that are properties of the data (a definition, an assumption),
#: not claims of the paper: "refuted" there means "the property fails on this
#: instance" (e.g. Assumption 1 with fewer than n queries), never that the
#: paper is wrong, so it is counted but neither red nor a failing exit code.
PROPERTY_PREFIXES = ("definition", "assumption")
STATUS_ORDER = ("error", "refuted", "control failed", "inconclusive", "hypotheses-unmet",
                "verified (numerical)", "verified", "not checkable", "not implemented")


def measure_value(sid: str, ev: dict) -> float | None:
    """The statement's declared quantity (``@statement(measure=...)``) on one
    instance: a finite number from Evidence.measured, else None."""
    key = registry.REGISTRY[sid].measure if sid in registry.REGISTRY else ""
    v = (ev.get("measured") or {}).get(key) if key and isinstance(ev.get("measured"), dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return None
    return float(v)


def _record(sid: str, options: dict, ev: dict, caught=()) -> dict:
    """One instance's row: options, the command that reproduces it, verdict,
    margin, the statement's declared quantity, and the warnings the checker
    raised (shown, not printed)."""
    margin = ev.get("margin")
    warned = sorted({f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})" for w in caught})
    return {"options": options, "command": reproduce_command(sid, options), "verdict": ev["verdict"],
            "certified": ev["certified"], "method": ev["method"],
            "margin": margin if isinstance(margin, (int, float)) else None,
            "measure": measure_value(sid, ev), "reason": ev["reason"],
            "fingerprint": (ev.get("instance") or {}).get("sha256_16"), "warnings": warned,
            "seconds": ev["seconds"]}


def run_statement(sid: str, plans, count: int, *, prec: int = PREC, progress: Progress | None = None) -> dict:
    """Run ``sid`` on ``count`` instances taken from ``plans`` (an iterable of
    options; a drawn instance the statement refuses as invalid is skipped and
    replaced, up to ``3 count`` draws).  The first (default) instance's full
    evidence, trail included, is kept as the audit."""
    instances, audit, skipped, details = [], None, [], []
    for i, opts in enumerate(itertools.islice(plans, 3 * count)):
        if len(instances) >= count:
            break
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ev = run_check(sid, build_instance(sid, **opts), prec=prec, seed=opts["seed"])
        except InvalidInstance as exc:
            if i > 0:  # a drawn variant the statement does not accept: not a verdict
                skipped.append({"options": opts, "command": reproduce_command(sid, opts), "reason": str(exc)})
                continue
            ev = error_evidence(sid, f"InvalidInstance on the default instance: {exc}")
        d = ev.to_dict(with_trail=True)
        if i == 0:
            audit = d
        elif d["verdict"] in ("refuted", "error", "inconclusive"):
            details.append(d)  # keep what someone will want to reproduce
        instances.append(_record(sid, opts, d, caught))
        if progress:
            progress.step(sid)
    return {"instances": instances, "skipped": skipped, "audit": audit, "details": details}


def run_controls(sid: str, *, seed: int, prec: int = PREC, progress: Progress | None = None) -> list[dict]:
    """Every registered control of ``sid``, each with what it is (docs/FINDINGS.md): a "negative control" (a
    deliberately wrong variant our checker must reject) or a "finding certificate" (a refutation of something
    printed, shown in section Findings and re-run there as the finding's witness)."""
    from verifier.statements.findings import classify_control

    out = []
    for c in registry.REGISTRY[sid].controls:
        kind, what = classify_control(sid, c.description)
        with warnings.catch_warnings(record=True):  # a false variant may warn: expected, not shown
            warnings.simplefilter("always")
            ev, ok = run_control(sid, c, prec=prec, seed=seed)
        d = ev.to_dict(with_trail=False)
        out.append({"description": c.description, "expect": list(c.expect), "rejected": bool(ok),
                    "role": "finding certificate" if kind == "finding" else "negative control",
                    "finding": what if kind == "finding" else None,
                    "function": f"{getattr(c.run, '__module__', '?')}.{getattr(c.run, '__qualname__', '?')}",
                    "verdict": d["verdict"], "reason": d["reason"], "seconds": d["seconds"],
                    "evidence": d})
        if progress:
            progress.step(f"{sid} control")
    return out


def is_property(sid: str) -> bool:
    return sid.startswith(PROPERTY_PREFIXES)


def row_status(row: dict) -> str:
    if not row["implemented"]:
        return "not checkable" if row.get("not_checkable") else "not implemented"
    verdicts = [r["verdict"] for r in row["instances"]]
    if is_property(row["id"]):  # the property failing on an instance is not a refutation
        verdicts = ["hypotheses-unmet" if v == "refuted" else v for v in verdicts]
    controls = row["controls"]
    if "error" in verdicts or any(c["verdict"] == "error" and not c["rejected"] for c in controls):
        return "error"
    if "refuted" in verdicts:
        return "refuted"
    if any(not c["rejected"] for c in controls if c.get("role") != "finding certificate"):
        return "control failed"  # a finding certificate that fails is a finding not reproduced (section Findings)
    if "inconclusive" in verdicts:
        return "inconclusive"
    if "verified" not in verdicts:
        return "hypotheses-unmet"
    passes = [r for r in row["instances"] if r["verdict"] == "verified" and not is_vacuous(r)]
    if not passes or any(not r["certified"] for r in passes):  # a vacuous pass proves nothing either way
        return "verified (numerical)"
    return "verified"


def is_vacuous(result: dict) -> bool:
    """A pass with nothing to check (e.g. App. B.2 without an induction step):
    neither a certified nor a numerical pass."""
    return str(result.get("method", "")).startswith("vacuous")


def summarise(sid: str, run: dict | None, controls: list[dict]) -> dict:
    st = registry.REGISTRY[sid]
    row = {"id": sid, "kind": "property of the data" if is_property(sid) else "claim of the paper",
           "reference": st.reference, "summary": st.summary, "depends": list(st.depends),
           "implemented": st.implemented, "not_checkable": st.not_checkable, "paper": st.paper,
           "reconstruction": registry.PAPERS[st.paper].reconstruction if st.paper in registry.PAPERS else "",
           "module": st.module, "doc": st.doc,
           "instances": [], "skipped": [], "audit": None, "details": [], "controls": controls}
    if run:
        row.update(run)
    inst = row["instances"]
    variants = [c for c in controls if c.get("role") != "finding certificate"]
    margins = [r["margin"] for r in inst if r["margin"] is not None and math.isfinite(r["margin"])]
    measures = [r["measure"] for r in inst if r.get("measure") is not None]
    counts = {v: sum(r["verdict"] == v for r in inst) for v in sorted({r["verdict"] for r in inst})}
    row.update({
        "instances_tried": len(inst),
        "certified_passes": sum(r["verdict"] == "verified" and r["certified"] for r in inst),
        "numerical_passes": sum(r["verdict"] == "verified" and not r["certified"] and not is_vacuous(r) for r in inst),
        "vacuous_passes": sum(r["verdict"] == "verified" and is_vacuous(r) for r in inst),
        "verdict_counts": counts,
        "controls_total": len(variants), "controls_rejected": sum(c["rejected"] for c in variants),
        "finding_certificates": sorted({c["finding"] for c in controls if c.get("role") == "finding certificate"}),
        "worst_margin": min(margins) if margins else None, "margin_meaning": st.margin,
        "largest_measure": max(measures) if measures else None, "measure": st.measure,
        "requires": list(st.requires),
        "seconds": round(sum(r["seconds"] for r in inst) + sum(c["seconds"] for c in controls), 6),
        "errors": [r["reason"] for r in inst if r["verdict"] == "error"]
        + [f"control '{c['description']}': {c['reason']}" for c in controls if c["verdict"] == "error" and not c["rejected"]],
    })
    row["status"] = row_status(row)
    # the declared quantity is named by the statement, not by its key: shown under its name (display.show)
    row["largest_measure"] = None if row["largest_measure"] is None else show(row["largest_measure"], st.measure)
    for r in inst:
        r["measure"] = None if r.get("measure") is None else show(r["measure"], st.measure)
    return row


def exit_code(rows: list[dict], figures: list[dict]) -> int:
    statuses = {r["status"] for r in rows}
    if "error" in statuses or any(f["error"] for f in figures):
        return 4
    if statuses & {"refuted", "control failed"}:
        return 1
    return 0
