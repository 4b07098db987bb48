"""What both renderings of the report say in the same words: the outcome
banner, the header, the "needs attention" list, the rows of the results table
and the notes under it.  Read from ``results`` alone.

>>> fmt(None), fmt(0.000123456), fmt(3), fmt("x")
('-', '0.000123', '3', 'x')
"""
from __future__ import annotations


def fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def _tally(results) -> dict:
    """What the banner counts, each by its own name."""
    rows = results["statements"].values()
    found = results.get("findings") or []
    return {"statements": len(results["statements"]),
            "statuses": ", ".join(f"{v} {k}" for k, v in results["summary"]["status_counts"].items()),
            "controls": sum(r.get("controls_total", 0) for r in rows),
            "rejected": sum(r.get("controls_rejected", 0) for r in rows),
            "inconclusive": sum(i["verdict"] == "inconclusive" for r in rows for i in r["instances"]),
            "findings": len(found), "refuting": sum(e["refutes"] for e in found),
            "reproduced": sum(e["reproduced"] for e in found)}


def outcome_banner(results) -> tuple[str, str]:
    """The colour and the sentence of the outcome; every number in it counts what it names."""
    code = results["summary"]["exit_code"]
    t = _tally(results)
    tail = (f"{t['rejected']} of {t['controls']} negative controls rejected; {t['statements']} statements: "
            f"{t['statuses']}")
    if code == 0:
        known = (f"; {t['findings']} declared findings reproduced ({t['refuting']} refute something printed: "
                 "section Findings)") if t["findings"] else ""
        open_ = (f"; {t['inconclusive']} instance(s) inconclusive, neither verified nor refuted (Needs attention)"
                 if t["inconclusive"] else "")
        return "#e8f5e9", f"No new refutation, no checker error{known}{open_}. {tail}."
    if code == 1:
        return "#ffebee", f"A refutation outside every declared finding, or a negative control not rejected: see below. {tail}."
    if code == 3:
        return "#fff3e0", (f"A declared finding no longer reproduces ({t['reproduced']} of {t['findings']} do): see "
                           f"Findings. {tail}.")
    return "#f3e5f5", f"A checker or a figure raised an error: see below. {tail}."


#: option keys that are not sizes
_NOT_SIZES = {"seed"}


def instance_sizes(results, paper: str) -> tuple[int, int, str]:
    """(statements with a checker, instances run, "key lo-hi, ...") over the paper's drawn instances."""
    rows = [r for r in results["statements"].values() if r.get("paper") == paper and r["implemented"]]
    spans: dict[str, list[int]] = {}
    for r in rows:
        for i in r["instances"]:
            for k, v in i["options"].items():
                if k not in _NOT_SIZES and isinstance(v, int) and not isinstance(v, bool):
                    spans.setdefault(k, []).append(v)
    text = ", ".join(f"{k} {min(v)}" + (f"-{max(v)}" if max(v) > min(v) else "") for k, v in spans.items())
    return len(rows), sum(len(r["instances"]) for r in rows), text


def verified_over(results) -> str:
    """What was verified, paper by paper: the checkers, the instances and their sizes, and what is ours."""
    parts = []
    for key in results.get("papers_order") or []:
        n, count, sizes = instance_sizes(results, key)
        rows = [r for r in results["statements"].values() if r.get("paper") == key]
        if not rows:
            continue
        recon = next((r["reconstruction"] for r in rows if r.get("reconstruction")), "")
        title = ((results.get("citations") or {}).get(key) or key).split(";")[0]
        parts.append(f"{title}: {len(rows)} statements, {n} with a checker, run on {count} drawn instances ({sizes})"
                     + (f"; OUR RECONSTRUCTION ({recon})" if recon else ""))
    named = len((results.get("named_instances") or {}).get("rows", []))
    return "; ".join(parts) + (f"; plus {named} named instances of Theorem 1 at the paper's scale (section The "
                               "paper's scale)" if named else "")


def header_items(results) -> list[tuple[str, str]]:
    """The header: what, over which instances, how and with which seed.  No
    date, duration, machine, versions or commit: those change between runs of
    the same seed and live in ``run.json`` beside the report."""
    cfg = results["config"]
    return [
        ("Papers", results["paper"]),
        ("What was verified, over which instances", verified_over(results)),
        ("Mode", f"{cfg['mode']} ({cfg['instances_per_statement']} instance(s) per statement, plus every negative "
                 "control and every finding's certificates)"),
        ("Seed", str(cfg["seed"])),
        ("Precision", f"ball arithmetic from {cfg['prec_bits']} bits (a checker may raise it; each instance "
                      "records its prec_bits); exact rationals where stated; float64 for numerical checks"),
        ("Run facts", "run.json beside this report: date, duration, command, machine, package versions, git "
                      "commit and timings (everything else here is the same for the same seed)"),
    ]


MAX_ATTENTION = 5  # instances shown per statement and kind; the rest are counted


def attention(results) -> list[tuple[str, str, str, str]]:
    """(kind, statement, text, command to reproduce) of everything a reviewer
    must look at first: refutations, then errors, failed controls,
    inconclusive instances, warnings.  Identical messages are merged."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def add(kind, sid, text, command=""):
        groups.setdefault((kind, sid), []).append((text, command))

    for r in results["summary"]["refutations"]:
        if not r.get("declared"):  # a declared finding's instance is in section Findings, once
            add("REFUTED", r["statement"], r["reason"], r["command"])
    for sid, row in results["statements"].items():
        for i in row["instances"]:
            if i["verdict"] == "error":
                add("error", sid, i["reason"], i["command"])
        for c in row["controls"]:
            if not c["rejected"]:
                cert = c.get("role") == "finding certificate"
                add("error" if c["verdict"] == "error" else "finding not reproduced" if cert else
                    "control not rejected", sid,
                    f"{'certificate of finding ' + str(c['finding']) if cert else 'negative control'} "
                    f"'{c['description']}' gave {c['verdict']} (expected {', '.join(c['expect'])}): {c['reason']}")
        for i in row["instances"]:
            if i["verdict"] == "inconclusive":
                add("inconclusive", sid, i["reason"], i["command"])
            if i.get("warnings"):
                add("warnings", sid, "; ".join(i["warnings"]), i["command"])
    items = []
    for kind in ("REFUTED", "error", "control not rejected", "finding not reproduced", "inconclusive", "warnings"):
        for (k, sid), entries in groups.items():
            if k != kind:
                continue
            seen: dict[str, list[str]] = {}
            for text, command in entries:
                seen.setdefault(text, []).append(command)
            for n, (text, commands) in enumerate(seen.items()):
                if n == MAX_ATTENTION:
                    items.append((kind, sid, f"... and {len(seen) - n} more (results.json)", ""))
                    break
                times = f" ({len(commands)} instances)" if len(commands) > 1 else ""
                items.append((kind, sid, text + times, commands[0]))
    return items


def paper_rows(results, paper: str | None = None) -> list:
    """The rows of one paper (default: the first; rows without a paper belong to it)."""
    first = next(iter(results.get("papers_order", [])), None)
    key = paper or first
    return [r for r in results["statements"].values() if key is None or r.get("paper", first) == key]


def table_rows(results, paper: str | None = None):
    found = {}
    for e in results.get("findings") or []:
        found[e["statement"]] = found.get(e["statement"], 0) + 1
    for r in paper_rows(results, paper):
        sid = r["id"]
        r = dict(r)
        if r.get("reconstruction") and r["implemented"]:
            r["status"] = f"{r['status']} (our reconstruction)"
        if found.get(sid):
            r["status"] = f"{r['status']}; {found[sid]} finding(s)"
        others = ", ".join(f"{n} {v}" + (" (property fails there)" if v == "refuted" and r["kind"] != "claim of the paper" else "")
                           for v, n in r["verdict_counts"].items() if v != "verified")
        if r.get("vacuous_passes"):
            others = ", ".join(x for x in (others, f"{r['vacuous_passes']} vacuous (nothing to check)") if x)
        others = others or "-"
        ctrl = f"{r['controls_rejected']}/{r['controls_total']}" if r["implemented"] else "-"
        yield sid, r, others, ctrl


#: the results table's columns, in both renderings
TABLE_COLUMNS = ("statement", "paper", "status", "instances", "certified passes", "numerical passes",
                 "other verdicts", "negative controls refuted", "smallest margin (what it measures)",
                 "largest value of the statement's quantity")


def margin_cell(r) -> tuple[str, str]:
    """(value, what it measures) of the smallest Evidence.margin, or ("-", "")
    when the statement declares no margin."""
    if r.get("worst_margin") is None or not r.get("margin_meaning"):
        return "-", ""
    return fmt(r["worst_margin"]), r["margin_meaning"]


def measure_cell(r) -> tuple[str, str]:
    """(value, name) of the largest value of the statement's declared quantity."""
    if r.get("largest_measure") is None or not r.get("measure"):
        return "-", ""
    return fmt(r["largest_measure"]), r["measure"]


NOTES = ("certified: the deciding computation is exact rationals or ball arithmetic whose enclosure "
         "excludes the bad case; numerical: float64 with a stated tolerance; vacuous: nothing to check on that instance (e.g. App. B.2 when "
         "the construction has no induction step), counted neither way. The last two columns are each "
         "statement's own quantities, named in the cell: the smallest margin over the instances (what the "
         "margin measures is declared by the checker, e.g. 1e-20 max|y| - max |yhat - y| for Theorem 1) and "
         "the largest value of the quantity the checker declares (e.g. max |yhat - y| with the exact readout); "
         "'-' where a statement declares none. hypotheses-unmet on a drawn instance is not a failure: the "
         "statement does not apply there. Definitions and assumptions are properties of the data, not claims: "
         "their 'refuted' means the property fails on that instance (e.g. Assumption 1 with fewer than n "
         "queries), not that the paper is wrong. Timings: run.json.")
