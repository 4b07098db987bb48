"""Findings rendered: the report's leading "Findings" section (Markdown and
HTML: a summary table, then one entry per fact) and the errata documents,
``ERRATA-<paper>.md`` with the paper's self-contained certificates, written
by ``mha-verify errata <paper>`` and beside every report (byte-identical on
any machine: every number passes through :func:`verifier.statements.display.stable`).

An entry gives what an author needs to accept or dispute a finding: the
statement as printed (public version, section, equation, page; a lost
formula said so), the reading checked, the strongest reading an author could
hold and whether the finding survives it, the family with every size it
depends on, the certificates re-run with their commands, and the repair with
its status.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

from verifier.report.findings import errata_line, run_findings
from verifier.statements import display, registry

HEADING = "## Findings"
RULE = ("A finding is a certified refutation of something a paper printed (a statement, a proof step, a constant, "
        "a number in its text), or, where nothing printed is refuted, a certified fact about a printed statement "
        "(sharpened, confirmed, our reading of a lost formula); a negative control is a deliberately wrong variant "
        "that tests our checker (docs/FINDINGS.md).")


def _verdict(w: dict) -> str:
    cert = "certified" if w["certified"] else "not certified"
    mark = "as declared" if w["reproduces"] else f"NOT AS DECLARED: {w['why_not']}"
    return f"{w['verdict']} ({cert}; {mark})"


def _status(e: dict) -> str:
    return "reproduced" if e["reproduced"] else "NOT REPRODUCED"


def _survives(e: dict) -> str:
    return "yes" if e["survives"] else "no"


def _repair_cell(e: dict) -> str:
    if not e["repair"]:
        return "-"
    w = next((w for w in e["witnesses"] if w["role"] == "repair"), None)
    checker = f" (`{e['repair_id']}`: {w['verdict']})" if e["repair_id"] and w else ""
    return e["repair_status"] + checker


def finding_markdown(e: dict, *, level: str = "###") -> list[str]:
    """One finding, in full."""
    p = e["printed"]
    out = [f"{level} `{e['statement']}`: {e['title']}", "",
           f"- **Class**: {e['class']} ({_status(e) if e['reproduced'] else '**NOT REPRODUCED**'}); "
           f"declared: {e['declared']}",
           f"- **As printed** ({p['where']}): " + (f"\"{p['text']}\"" if p["retrieved"] else "not retrieved")
           + f" [source: {p['source']}]"]
    if p.get("lost"):
        out.append(f"- **Lost formula**: {p['lost']}")
    out += [f"- **Reading checked**: {e['reading']}",
            f"- **Strongest reading an author could hold**: {e['strongest']}",
            f"- **The finding survives it**: {_survives(e)}",
            f"- **Family** (depends on: {', '.join(e['depends_on']) or '-'}): {e['family']}"]
    if e.get("report_instances"):
        ri = e["report_instances"]
        fmt = lambda d: ", ".join(f"{n} {v}" for v, n in d.items()) or "none"  # noqa: E731
        out.append(f"- **This report's instances of `{e['statement']}`**: inside the family: {fmt(ri['inside family'])}; "
                   f"outside it: {fmt(ri['outside family'])}")
    if e["repair"]:
        rid = f", checker `{e['repair_id']}`" if e["repair_id"] else ""
        out.append(f"- **Repair** ({e['repair_status']}{rid}): {e['repair']}")
    out.append("- **Certificates**:")
    for w in e["witnesses"]:
        out.append(f"  - {w['role']}, `{w['statement']}`: {w['what']}: {_verdict(w)}; {w['reason']}")
        out.append(f"    reproduce: `{w['command']}`")
    out += [f"- {n}" for n in e["notes"]]
    return out + [""]


def summary_rows(entries: list[dict]) -> list[list[str]]:
    """The summary table's rows (both renderings): one per finding."""
    return [[str(k), e["statement"], e["class"], e["title"], _survives(e), _status(e), _repair_cell(e)]
            for k, e in enumerate(entries, 1)]


SUMMARY_COLUMNS = ("#", "statement", "class", "finding", "survives the strongest reading", "status", "repair")


def _counts(entries: list[dict]) -> str:
    refuting = sum(e["refutes"] for e in entries)
    return (f"{len(entries)} findings: {refuting} refute something printed, {len(entries) - refuting} add to a "
            "statement that holds or bear on our reading of a lost formula")


def markdown_section(results: dict) -> str:
    entries = results.get("findings") or []
    out = [HEADING, "", RULE + " Refuted instances inside a declared family are as declared and do not fail the run; "
           "the same entries, per paper, are in ERRATA-<paper>.md beside this report.", ""]
    if not entries:
        return "\n".join(out + ["No finding declared for the statements of this run.", "", ""])
    out += [_counts(entries) + ".", "", "| " + " | ".join(SUMMARY_COLUMNS) + " |", "|--:|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") if i != 1 else f"`{c}`" for i, c in enumerate(row)) + " |"
            for row in summary_rows(entries)]
    out.append("")
    for k, e in enumerate(entries, 1):  # numbered as the summary table (and the contents) count them
        out += finding_markdown(e, level=f"### {k}.")
    out += [errata_line(entries), "", ""]
    return "\n".join(out)


def insert_markdown(md: str, results: dict) -> str:
    """The Findings section, leading: before "Needs attention"."""
    cut = md.find("## Needs attention")
    section = markdown_section(results)
    return md[:cut] + section + md[cut:] if cut >= 0 else md + "\n" + section


def _li(label: str, text: str) -> str:
    return f"<li><b>{html.escape(label)}</b>: {html.escape(text)}</li>"


def _code_spans(text: str) -> str:
    """Markdown's `code` spans as <code>, the rest escaped (the cells are written once for both pages)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))


def html_section(results: dict) -> str:
    entries = results.get("findings") or []
    esc = html.escape
    parts = ["<h2>Findings</h2>", f"<p>{esc(RULE)} Refuted instances inside a declared family are as declared; the "
             "same entries, per paper, are in ERRATA-&lt;paper&gt;.md beside this report.</p>"]
    if entries:
        parts.append(f"<p>{esc(_counts(entries))}.</p><table><tr>"
                     + "".join(f"<th>{esc(c)}</th>" for c in SUMMARY_COLUMNS) + "</tr>")
        cell = lambda i, c, e: (f"<td><a href=\"#{esc(c)}\"><code>{esc(c)}</code></a></td>" if i == 1 else  # noqa: E731
                                f"<td class='num'><a href=\"#finding-{esc(e['key'])}\">{esc(c)}</a></td>" if i == 0
                                else f"<td>{_code_spans(c)}</td>")
        parts += ["<tr>" + "".join(cell(i, c, e) for i, c in enumerate(row)) + "</tr>"
                  for row, e in zip(summary_rows(entries), entries)]
        parts.append("</table>")
    for k, e in enumerate(entries, 1):
        p = e["printed"]
        items = [_li("Class", f"{e['class']} ({_status(e)})"),
                 f"<li><b>As printed</b> ({esc(p['where'])}): "
                 + (f"&ldquo;{esc(p['text'])}&rdquo;" if p["retrieved"] else "not retrieved")
                 + f" [source: {esc(p['source'])}]</li>"]
        items += [_li("Lost formula", p["lost"])] if p.get("lost") else []
        items += [_li("Reading checked", e["reading"]), _li("Strongest reading an author could hold", e["strongest"]),
                  _li("The finding survives it", _survives(e)),
                  _li(f"Family (depends on: {', '.join(e['depends_on']) or '-'})", e["family"])]
        items += [_li(f"Repair ({e['repair_status']})", e["repair"])] if e["repair"] else []
        parts.append(f"<h3 id=\"finding-{esc(e['key'])}\">{k}. <code>{esc(e['statement'])}</code>: "
                     f"{esc(e['title'])}</h3><ul>" + "".join(items)
                     + "<li><b>Certificates</b><ul>")
        for w in e["witnesses"]:
            parts.append(f"<li>{esc(w['role'])}, <code>{esc(w['statement'])}</code>: {esc(w['what'])}: "
                         f"{esc(_verdict(w))}; {esc(w['reason'])}<br><code>{esc(w['command'])}</code></li>")
        parts.append("</ul></li>" + "".join(f"<li>{esc(n)}</li>" for n in e["notes"]) + "</ul>")
    parts.append(f"<p>{esc(errata_line(entries))}</p>")
    return "".join(parts)


def insert_html(page: str, results: dict) -> str:
    cut = page.find("<h2>Needs attention</h2>")
    section = html_section(results)
    return page[:cut] + section + page[cut:] if cut >= 0 else page + section


def errata_markdown(paper: str, entries: list[dict], certificates=()) -> str:
    """The errata document of one paper."""
    p = registry.PAPERS[paper]
    out = [f"# Errata and findings: {p.title}", "", f"{p.citation}.", "",
           "Written by `mha-verify errata " + paper + "` and beside every `mha-verify report`. " + RULE + " Each entry "
           "gives the statement as printed (a quotation; `[...]` marks a formula our copy of the paper lost), the "
           "reading under which it was checked, the strongest reading an author could hold and whether the finding "
           "survives it, its class, the family with every size it depends on, the certificates (re-run when this "
           "document was written), the repair with its status, and the commands that reproduce each certificate.", ""]
    if not entries:
        out += ["No finding declared.", ""]
    else:
        out += [_counts(entries) + ".", ""]
    for k, e in enumerate(entries, 1):
        out += finding_markdown(e, level=f"## {k}.")
    if certificates:
        out += ["## Self-contained certificates", "",
                "Re-checkable without the project (the checker imports only the standard library and mpmath), from "
                "the folder of this document: `python <mha-verify>/verifier/recheck.py "
                + " ".join(str(c) for c in certificates) + "`", ""]
        out += [f"- `{c}`" for c in certificates] + [""]
    out += [errata_line(entries), ""]
    return "\n".join(out)


def write_paper_errata(paper: str, entries: list[dict], out, *, shown: bool = False) -> Path:
    """``out/ERRATA-<paper>.md`` from already-run ``entries`` (their numbers passed through display.stable
    here, once, unless ``shown``: the report's are already) and the paper's certificates in
    ``out/certificates-<paper>/`` (:mod:`.certificates`)."""
    from verifier.report.certificates import export_findings

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    certs = [c.relative_to(out) for c in export_findings(paper, out / f"certificates-{paper}")]
    path = out / f"ERRATA-{paper}.md"
    mine = [e for e in entries if e["paper"] == paper]
    path.write_text(errata_markdown(paper, mine if shown else display.stable(mine), certs))
    return path


def write_report_errata(results: dict, out) -> list[Path]:
    """The errata of every paper with a finding in the report's ``results`` (its entries, counted on its rows)."""
    entries = results.get("findings") or []
    return [write_paper_errata(paper, entries, out, shown=True) for paper in registry.PAPERS
            if any(e["paper"] == paper for e in entries)]


def write_errata(paper: str, out, *, prec: int = 128, seed: int = 0) -> tuple[Path, int]:
    """Write ``out/ERRATA-<paper>.md`` and the paper's self-contained certificates in
    ``out/certificates-<paper>/``; returns (path, exit code: 0 every finding reproduced, 3 some did not, 4 a
    certificate raised an error)."""
    registry.load_all()
    if paper not in registry.PAPERS:
        raise KeyError(paper)
    entries = run_findings(paper=paper, prec=prec, seed=seed)
    path = write_paper_errata(paper, entries, out)
    if any(w["verdict"] == "error" for e in entries for w in e["witnesses"]):
        return path, 4
    return path, 0 if all(e["reproduced"] for e in entries) else 3
