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


#: the status of a refuted statement every refuted instance of which lies in a declared finding's family
AS_DECLARED = "refuted, as declared"


def shown_status(status: str, declared: bool | None) -> str:
    """The status a table shows: "refuted, as declared" where every refuted
    instance lies in a declared finding's family (``declared``), else the
    status itself.

    >>> shown_status("refuted", True), shown_status("refuted", False), shown_status("verified", True)
    ('refuted, as declared', 'refuted', 'verified')
    """
    return AS_DECLARED if status == "refuted" and declared else status


def declared_refutations(results) -> dict[str, bool]:
    """Per statement with a refuted instance: whether every one of them lies
    in a declared finding's family (``summary.refutations[].declared``)."""
    out: dict[str, bool] = {}
    for r in (results.get("summary") or {}).get("refutations", []):
        out[r["statement"]] = out.get(r["statement"], True) and bool(r.get("declared"))
    return out


def shown_statuses(results) -> dict[str, str]:
    """Every statement's status as the tables show it (:func:`shown_status`)."""
    declared = declared_refutations(results)
    return {sid: shown_status(r["status"], declared.get(sid)) for sid, r in results["statements"].items()}


def status_counts(results) -> str:
    """The statuses counted, a refuted count saying how many are as declared."""
    shown = shown_statuses(results)
    parts = []
    for k, v in results["summary"]["status_counts"].items():
        known = sum(s == AS_DECLARED for s in shown.values()) if k == "refuted" else 0
        parts.append(f"{v} {k}" + ("" if not known else " (as declared)" if known == v else f" ({known} as declared)"))
    return ", ".join(parts)


def _tally(results) -> dict:
    """What the banner counts, each by its own name."""
    rows = results["statements"].values()
    found = results.get("findings") or []
    return {"statements": len(results["statements"]),
            "statuses": status_counts(results),
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
    """(id, row, other verdicts, controls) per row of the results table; the
    row's ``shown`` is the status its badge shows (:func:`shown_status`),
    ``status_note`` what follows it (our reconstruction, the findings)."""
    found = {}
    for e in results.get("findings") or []:
        found[e["statement"]] = found.get(e["statement"], 0) + 1
    shown = shown_statuses(results)
    declared = declared_refutations(results)
    for r in paper_rows(results, paper):
        sid = r["id"]
        r = dict(r, shown=shown[sid], status_note="")
        if r.get("reconstruction") and r["implemented"]:
            r["status_note"] += " (our reconstruction)"
        if found.get(sid):
            r["status_note"] += f"; {found[sid]} finding(s)"
        r["status"] = r["shown"] + r["status_note"]
        others = ", ".join(f"{n} {v}" + (" (property fails there)" if v == "refuted" and r["kind"] != "claim of the paper"
                                         else " (as declared)" if v == "refuted" and declared.get(sid) else "")
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


def rests_on_unverified(ids, depends: dict, status: dict) -> dict[str, list[tuple[str, str]]]:
    """Per verified statement of ``ids``: the statements its proof uses, directly
    or through others (within ``ids``), whose status in this run is not
    verified, nearest first, each as (id, the direct dependency it comes
    through; "" when direct).  A verified statement is certified on its own
    instances by its own checker: this says which part of the paper's proof
    the run does not vouch for.

    >>> rests_on_unverified(["a", "b", "c"], {"a": [], "b": ["a"], "c": ["b"]},
    ...                     {"a": "refuted", "b": "verified", "c": "verified"})
    {'b': [('a', '')], 'c': [('a', 'b')]}
    """
    def ok(s):
        return str(status.get(s, "")).startswith("verified")

    out = {}
    for s in ids:
        if not ok(s):
            continue
        seen, found, queue = {s}, [], [(d, "") for d in depends.get(s, ()) if d in ids]
        while queue:
            d, via = queue.pop(0)
            if d in seen:
                continue
            seen.add(d)
            if not ok(d):
                found.append((d, via))
            queue += [(e, via or d) for e in depends.get(d, ()) if e in ids]
        if found:
            out[s] = found
    return out


def short_reference(reference: str) -> str:
    """A statement's reference up to its first comma outside parentheses ("Thm. 1 (eps = 0), App. A.2" ->
    "Thm. 1 (eps = 0)")."""
    depth = 0
    for i, ch in enumerate(reference):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            return reference[:i]
    return reference


def map_notes(ids, depends: dict, status: dict, reference: dict) -> list[tuple[str, str]]:
    """The statement map's notes: (statement, what its proof uses that this
    run does not verify) per verified statement whose proof uses one
    (:func:`rests_on_unverified`), e.g. ("dana_corollary1", "Thm. 1 (eps = 0)
    (inconclusive) and, through it, Lemma 2 (refuted, as declared)")."""
    ref = lambda s: short_reference(reference.get(s, s))  # noqa: E731
    out = []
    for s, weak in rests_on_unverified(ids, depends, status).items():
        clauses = []
        for d in dict.fromkeys(via or d for d, via in weak):  # each direct dependency, nearest first
            below = " and ".join(f"{ref(x)} ({status[x]})" for x, via in weak if via == d)
            clauses.append(f"{ref(d)} ({status[d]})" + (f" and, through it, {below}" if below else ""))
        out.append((s, "; ".join(clauses)))
    return out


def map_note_text(s: str, uses: str, *, reference: dict, status: dict) -> str:
    """One note of :func:`map_notes` as the report's text says it."""
    return (f"{short_reference(reference.get(s, s))} (`{s}`) is {status[s]} on its own instances, by its own checker; "
            f"its proof uses {uses}: the verdict vouches for the statement on those instances, not for that proof.")


def paper_map_notes(results, paper: str | None = None) -> list[str]:
    """The notes under one paper's statement map (:func:`map_notes`), read from ``results``."""
    rows = paper_rows(results, paper)
    ids = [r["id"] for r in rows]
    shown = shown_statuses(results)
    status, reference = {s: shown[s] for s in ids}, {r["id"]: r["reference"] for r in rows}
    return [map_note_text(s, uses, reference=reference, status=status)
            for s, uses in map_notes(ids, {r["id"]: r["depends"] for r in rows}, status, reference)]


def authors_short(citation: str) -> str:
    """The authors of a citation as a label: "Dana et al.", "Kajitsuka & Sato" (the names before the first
    part with a digit).

    >>> authors_short("Mahdavi, Liao, Thrampoulidis, ICLR 2024, arXiv:2306.02010v3"), authors_short("A, B, 2025")
    ('Mahdavi et al.', 'A & B')
    """
    names = []
    for part in citation.split(","):
        if any(ch.isdigit() for ch in part):
            break
        names.append(part.strip())
    return names[0] + " et al." if len(names) > 2 else " & ".join(names)
