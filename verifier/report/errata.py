"""Findings rendered: the report's leading "Findings" section (Markdown and
HTML, one entry per fact) and ``mha-verify errata <paper>``, a Markdown
document per paper with what an author needs to accept or dispute each
finding: the printed statement and the reading, the counterexample family
and its certificates, the repair and its verdict, the commands.
"""
from __future__ import annotations

import html
from pathlib import Path

from verifier.report.findings import errata_line, run_findings
from verifier.statements import registry

HEADING = "## Findings"


def _verdict(w: dict) -> str:
    cert = "certified" if w["certified"] else "not certified"
    mark = "as declared" if w["reproduces"] else f"NOT AS DECLARED: {w['why_not']}"
    return f"{w['verdict']} ({cert}; {mark})"


def finding_markdown(e: dict, *, level: str = "###") -> list[str]:
    """One finding, in full."""
    p = e["printed"]
    status = "reproduced" if e["reproduced"] else "**NOT REPRODUCED**"
    out = [f"{level} `{e['statement']}`: {e['title']}", "",
           f"- **Class**: {e['class']} ({status}); declared: {e['declared']}",
           f"- **As printed** ({p['where']}): " + (f"\"{p['text']}\"" if p["retrieved"] else "not retrieved")
           + f" [source: {p['source']}]",
           f"- **Reading**: {e['reading']}",
           f"- **Counterexample family**: {e['family']}"]
    if e.get("report_instances"):
        ri = e["report_instances"]
        fmt = lambda d: ", ".join(f"{n} {v}" for v, n in d.items()) or "none"  # noqa: E731
        out.append(f"- **This report's instances of `{e['statement']}`**: inside the family: {fmt(ri['inside family'])}; "
                   f"outside it: {fmt(ri['outside family'])}")
    if e["repair"]:
        rid = f" (checker `{e['repair_id']}`)" if e["repair_id"] else ""
        out.append(f"- **Repair**{rid}: {e['repair']}")
    out.append("- **Certificates**:")
    for w in e["witnesses"]:
        out.append(f"  - {w['role']}, `{w['statement']}`: {w['what']}: {_verdict(w)}; {w['reason']}")
        out.append(f"    reproduce: `{w['command']}`")
    out += [f"- {n}" for n in e["notes"]]
    return out + [""]


def markdown_section(results: dict) -> str:
    entries = results.get("findings") or []
    out = [HEADING, "", "One entry per fact: each printed statement with its reading, its class, the family of "
           "counterexamples, its certificates (each re-run by this report) and its repair. Refuted instances inside "
           "a declared family are as declared and do not fail the run; `mha-verify errata <paper>` writes the same "
           "as a document per paper.", ""]
    if not entries:
        return "\n".join(out + ["No finding declared for the statements of this run.", "", ""])
    out += ["| statement | class | finding | status | repair |", "|---|---|---|---|---|"]
    for e in entries:
        rep = f"`{e['repair_id']}`: " + next((f"{w['verdict']}" for w in e["witnesses"] if w["role"] == "repair"),
                                              "-") if e["repair_id"] else "-"
        out.append(f"| `{e['statement']}` | {e['class']} | {e['title']} | "
                   f"{'reproduced' if e['reproduced'] else 'NOT REPRODUCED'} | {rep} |")
    out.append("")
    for e in entries:
        out += finding_markdown(e)
    out += [errata_line(entries), "", ""]
    return "\n".join(out)


def insert_markdown(md: str, results: dict) -> str:
    """The Findings section, leading: before "Needs attention"."""
    cut = md.find("## Needs attention")
    section = markdown_section(results)
    return md[:cut] + section + md[cut:] if cut >= 0 else md + "\n" + section


def html_section(results: dict) -> str:
    entries = results.get("findings") or []
    esc = html.escape
    parts = ["<h2>Findings</h2>", "<p>One entry per fact; refuted instances inside a declared family are as "
             "declared. <code>mha-verify errata &lt;paper&gt;</code> writes the same per paper.</p>"]
    for e in entries:
        p = e["printed"]
        parts.append(f"<h3><code>{esc(e['statement'])}</code>: {esc(e['title'])}</h3><ul>"
                     f"<li><b>Class</b>: {esc(e['class'])} ({'reproduced' if e['reproduced'] else 'NOT REPRODUCED'})</li>"
                     f"<li><b>As printed</b> ({esc(p['where'])}): "
                     + (f"&ldquo;{esc(p['text'])}&rdquo;" if p["retrieved"] else "not retrieved")
                     + f" [source: {esc(p['source'])}]</li><li><b>Reading</b>: {esc(e['reading'])}</li>"
                     f"<li><b>Counterexample family</b>: {esc(e['family'])}</li>"
                     + (f"<li><b>Repair</b>: {esc(e['repair'])}</li>" if e["repair"] else "") + "<li><b>Certificates</b><ul>")
        for w in e["witnesses"]:
            parts.append(f"<li>{esc(w['role'])}, <code>{esc(w['statement'])}</code>: {esc(w['what'])}: "
                         f"{esc(_verdict(w))}; {esc(w['reason'])}<br><code>{esc(w['command'])}</code></li>")
        parts.append("</ul></li></ul>")
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
           "Written by `mha-verify errata " + paper + "`. Each finding is one fact: the statement as printed (a "
           "quotation; `[...]` marks a formula our copy of the paper lost), the reading under which it was checked, "
           "its class, the smallest family of counterexamples with the certificates this command just re-ran, the "
           "repair and its verdict, and the commands that reproduce each certificate.", ""]
    if not entries:
        out += ["No finding declared.", ""]
    for k, e in enumerate(entries, 1):
        out += finding_markdown(e, level=f"## {k}.")
    if certificates:
        out += ["## Self-contained certificates", "",
                "Re-checkable without the project (the checker imports only the standard library and mpmath): "
                "`python verifier/recheck.py " + " ".join(str(p) for p in certificates) + "`", ""]
        out += [f"- `{p}`" for p in certificates] + [""]
    out += [errata_line(entries), ""]
    return "\n".join(out)


def write_errata(paper: str, out, *, prec: int = 128, seed: int = 0) -> tuple[Path, int]:
    """Write ``out/ERRATA-<paper>.md`` and the paper's self-contained
    certificates in ``out/certificates-<paper>/`` (:mod:`.certificates`); returns (path, exit code: 0 every
    finding reproduced, 3 some did not, 4 a certificate raised an error)."""
    registry.load_all()
    if paper not in registry.PAPERS:
        raise KeyError(paper)
    from verifier.report.certificates import export_findings

    entries = run_findings(paper=paper, prec=prec, seed=seed)
    path = Path(out) / f"ERRATA-{paper}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    certs = [p.relative_to(Path(out)) for p in export_findings(paper, Path(out) / f"certificates-{paper}")]
    path.write_text(errata_markdown(paper, entries, certs))
    if any(w["verdict"] == "error" for e in entries for w in e["witnesses"]):
        return path, 4
    return path, 0 if all(e["reproduced"] for e in entries) else 3
