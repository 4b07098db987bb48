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


def outcome_banner(results) -> tuple[str, str]:
    code = results["summary"]["exit_code"]
    counts = ", ".join(f"{v} {k}" for k, v in results["summary"]["status_counts"].items())
    known = len(results.get("findings") or [])
    if code == 0 and known:
        return "#e8f5e9", (f"Every verdict verified or as declared: {known} known finding(s) reproduced (section "
                           f"Findings); no new refutation, no checker error, every negative control rejected ({counts}).")
    if code == 0:
        return "#e8f5e9", f"No refutation, no checker error, every negative control rejected ({counts})."
    if code == 1:
        return "#ffebee", (f"A refutation outside every declared finding, or a negative control not rejected: see "
                           f"below ({counts}).")
    if code == 3:
        return "#fff3e0", f"A declared finding no longer reproduces: see Findings ({counts})."
    return "#f3e5f5", f"A checker or a figure raised an error: see below ({counts})."


def header_items(results) -> list[tuple[str, str]]:
    """The header: what, how and with which seed.  No date, duration, machine,
    versions or commit: those change between runs of the same seed and live
    in ``run.json`` beside the report."""
    cfg = results["config"]
    return [
        ("What was verified", f"{results['paper']}: {len(results['statements'])} statements, "
                              f"{sum(r['implemented'] for r in results['statements'].values())} with a checker"),
        ("Mode", f"{cfg['mode']} ({cfg['instances_per_statement']} instance(s) per statement, plus every negative control)"),
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
    for r in paper_rows(results, paper):
        sid = r["id"]
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
