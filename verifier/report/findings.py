"""The report's findings: run every declared finding's certificates, place
each refuted instance in a declared family (or call it new), and decide the
exit code a pipeline can gate on.

Exit codes (``mha-verify report``):

* 0: every verdict is verified, or refuted inside a declared finding's
  family, and every declared certificate came out as declared;
* 1: a NEW refutation (a refuted instance outside every declared family) or
  a negative control that was not rejected;
* 3: a declared finding no longer reproduces: a certificate gave another
  verdict, or an inconclusive one where a certificate was declared;
* 4: a checker, figure or section raised an error.

``--strict`` keeps the earlier meaning: 1 on ANY refutation.

Rendering of the findings (the report's leading section, the errata
documents) is :mod:`.errata`.
"""
from __future__ import annotations

import shlex

from verifier.report.plans import reproduce_command
from verifier.report.rows import PREC, is_property
from verifier.report.rows import exit_code as strict_exit_code
from verifier.statements import findings as declared
from verifier.statements.findings import Finding, Witness

NOT_REPRODUCED = 3


def _py(code: str) -> str:
    """A shell line (double quotes when the code allows, as it does with repr's single quotes)."""
    return f'python -c "{code}"' if not set(code) & set('"$`\\!') else "python -c " + shlex.quote(code)


def witness_command(w: Witness) -> str:
    """The command that reproduces one certificate."""
    if w.experiment:
        o = w.opts()
        return _py("from verifier.experiments.capacity_probe import Setting, probe; "
                   f"r = probe(Setting({o['H']}, {o['n']}, {o['d']}, {o['context']!r}), seed={o['seed']}, "
                   f"steps={o['steps']}); print(r['random_weights'], r['optimized'], r['caps'])")
    if w.control:
        mod, _, fn = declared.control_function(w).rpartition(".")
        return _py(f"from {mod} import {fn}; e = {fn}(); print(e.verdict, e.certified, e.reason)")
    if w.kwargs:
        return _py(f"from verifier.statements.findings import Witness, run_witness; e = run_witness(Witness("
                   f"{w.role!r}, {w.statement!r}, options={w.options!r}, kwargs={w.kwargs!r})); "
                   "print(e.verdict, e.certified, e.reason)")
    return reproduce_command(w.statement, w.opts())


def _probe_outcome(w: Witness) -> dict:
    """The capacity probe as a certificate of what it shows: verified when the certified rank of Z (the
    number of examples memorizable for every labelling) reaches Hd, the number of Z's columns."""
    from verifier.experiments.capacity_probe import Setting, probe

    o = w.opts()
    r = probe(Setting(o["H"], o["n"], o["d"], o["context"]), seed=o["seed"], steps=o["steps"])
    best = max(r["construction"], r["random_weights"], r["optimized"])
    full = r["caps"]["Hd"]
    verdict = "verified" if best == full else "inconclusive"
    return {"verdict": verdict, "certified": verdict == "verified", "method": "arb minor of Z (certified rank)",
            "margin": best - r["conjecture_H(d-1)+1"],
            "reason": f"certified rank Z = T = {best} = Hd (our cap reading of the lost formula, H(d-1)+1 = "
                      f"{r['conjecture_H(d-1)+1']}, is exceeded; a lower-bound reading is consistent)"
            if verdict == "verified" else f"largest certified T = {best} < Hd = {full}",
            "measured": {k: r[k] for k in ("construction", "random_weights", "optimized")}}


def witness_outcome(w: Witness, *, prec: int = PREC, seed: int = 0) -> dict:
    """Run one certificate and say whether it is as declared."""
    try:
        if w.experiment:
            out = _probe_outcome(w)
        else:
            ev = declared.run_witness(w, prec=prec, seed=seed)
            out = {"verdict": ev.verdict, "certified": ev.certified, "method": ev.method,
                   "margin": ev.margin, "reason": ev.reason}
    except Exception as exc:  # noqa: BLE001 - a failed certificate is shown, never hidden
        out = {"verdict": "error", "certified": False, "method": "", "margin": None,
               "reason": f"{type(exc).__name__}: {exc}"}
    ok, why = declared.reproduces(w, out["verdict"], out["certified"])
    try:
        command = witness_command(w)
    except Exception as exc:  # noqa: BLE001
        command, ok, why = "", False, f"no command: {type(exc).__name__}: {exc}"
    margin = out.get("margin")
    return {"role": w.role, "statement": w.statement, "what": w.what, "expect": w.expect,
            "verdict": out["verdict"], "certified": bool(out["certified"]), "method": out["method"],
            "margin": margin if isinstance(margin, (int, float)) else None, "reason": out["reason"],
            "reproduces": ok, "why_not": why, "command": command}


def finding_entry(f: Finding, *, prec: int = PREC, seed: int = 0) -> dict:
    """One finding with its certificates run."""
    ws = [witness_outcome(w, prec=prec, seed=seed) for w in f.witnesses]
    return {"key": f.key, "paper": f.paper, "statement": f.statement, "class": f.class_label, "kind": f.kind,
            "claim": f.claim, "title": f.title,
            "printed": {"text": f.printed.text, "where": f.printed.where, "source": f.printed.source,
                        "retrieved": f.printed.retrieved, "lost": f.printed.lost},
            "reading": f.reading, "strongest": f.strongest, "survives": f.survives, "family": f.family,
            "depends_on": list(f.depends_on), "repair": f.repair, "repair_id": f.repair_id,
            "repair_status": f.repair_status, "reason": f.reason, "declared": f.declared, "notes": list(f.notes),
            "refutes": f.refutes, "witnesses": ws, "reproduced": all(w["reproduces"] for w in ws),
            "errata": declared.errata_reference(f), "errata_command": f"mha-verify errata {f.paper}"}


def _wanted(f: Finding, statements) -> bool:
    if statements is None:
        return True
    ids = set(statements)
    return f.statement in ids or f.repair_id in ids


def to_run(*, statements=None, paper: str | None = None) -> list[Finding]:
    """The declared findings (of ``paper``; only those about ``statements`` when given)."""
    return [f for f in declared.findings_of(paper) if _wanted(f, statements)]


def run_findings(*, statements=None, prec: int = PREC, seed: int = 0, paper: str | None = None,
                 progress=None) -> list[dict]:
    """Every declared finding of :func:`to_run`, its certificates run."""
    out = []
    for f in to_run(statements=statements, paper=paper):
        out.append(finding_entry(f, prec=prec, seed=seed))
        if progress:
            progress.step(f.key)
    return out


def declared_key(statement: str, options: dict) -> str | None:
    """The key of the declared finding whose family holds this refuted instance (None: new)."""
    f = declared.covered_by(statement, options)
    return f.key if f else None


def shown_statuses(rows: list[dict]) -> dict[str, str]:
    """Each row's status as the report shows it: "refuted, as declared" where every refuted instance lies in a
    declared finding's family (:func:`declared_key`; :func:`verifier.report.summary.shown_status`)."""
    from verifier.report.summary import shown_status

    out = {}
    for r in rows:
        refuted = [i for i in r["instances"] if i["verdict"] == "refuted"]
        out[r["id"]] = shown_status(r["status"], bool(refuted) and not is_property(r["id"])
                                    and all(declared_key(r["id"], i["options"]) for i in refuted))
    return out


def family_counts(rows: list[dict], entries: list[dict]) -> None:
    """Per finding: how many of its statement's instances fell inside its
    family, and the verdicts of those outside it (e.g. how Lemma 2 fared for
    d < N+S-1).  In place."""
    by_id = {r["id"]: r for r in rows}
    for e in entries:
        f = declared.FINDINGS[e["key"]]
        row = by_id.get(f.statement)
        if row is None or f.covers is None or f.claim:
            continue
        inside = [i for i in row["instances"] if f.in_family(i["options"])]
        outside = [i for i in row["instances"] if not f.in_family(i["options"])]
        count = lambda xs: {v: sum(i["verdict"] == v for i in xs) for v in sorted({i["verdict"] for i in xs})}  # noqa: E731
        e["report_instances"] = {"inside family": count(inside), "outside family": count(outside)}
        e["unreproduced_instances"] = [i["command"] for i in inside if f.refutes
                                       and i["verdict"] in ("inconclusive", "error")]
        if e["unreproduced_instances"]:
            e["reproduced"] = False


def problems(rows: list[dict], entries: list[dict]) -> dict:
    """What makes the default exit code non-zero (empty lists: exit 0)."""
    new = [{"statement": r["id"], "command": i["command"], "reason": i["reason"]}
           for r in rows if not is_property(r["id"]) for i in r["instances"]
           if i["verdict"] == "refuted" and declared_key(r["id"], i["options"]) is None]
    controls = [{"statement": r["id"], "control": c["description"], "verdict": c["verdict"]}
                for r in rows for c in r["controls"] if not c["rejected"] and c.get("role") != "finding certificate"]
    stale = [{"finding": e["key"], "witness": w["what"] or w["statement"], "why": w["why_not"],
              "command": w["command"]} for e in entries for w in e["witnesses"] if not w["reproduces"]]
    stale += [{"finding": e["key"], "witness": "a report instance inside the family", "why": "inconclusive or "
               "error where the family declares a certificate", "command": c}
              for e in entries for c in e.get("unreproduced_instances", [])]
    return {"new_refutations": new, "controls_not_rejected": controls, "not_reproduced": stale}


def exit_code(rows: list[dict], figures: list[dict], entries: list[dict], *, strict: bool = False) -> int:
    """The report's exit code (module docstring); ``strict``: 1 on any refutation."""
    base = strict_exit_code(rows, figures)
    if base == 4 or any(w["verdict"] == "error" for e in entries for w in e["witnesses"]):
        return 4
    if strict and base:
        return base
    p = problems(rows, entries)
    if p["new_refutations"] or p["controls_not_rejected"]:
        return 1
    return NOT_REPRODUCED if p["not_reproduced"] else 0


def errata_line(entries: list[dict]) -> str:
    """The report's last line: the findings, those refuting something printed first."""
    if not entries:
        return "known errata: none declared"
    name = lambda e: f"{e['key']} ({e['class']}{'' if e['reproduced'] else ', NOT REPRODUCED'})"  # noqa: E731
    errata = [name(e) for e in entries if e["refutes"]]
    others = [name(e) for e in entries if not e["refutes"]]
    return (f"known errata: {len(errata)} findings refute something printed: " + ("; ".join(errata) or "none")
            + (f"; {len(others)} other findings: " + "; ".join(others) if others else "")
            + " (section Findings; ERRATA-<paper>.md)")
