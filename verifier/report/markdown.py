"""The report as ``REPORT.md`` (figures beside it in ``figures/``), read from
``results`` alone."""
from __future__ import annotations

import json
import re
import unicodedata

from verifier.report.docstrings import parse_docstring
from verifier.report.summary import (
    NOTES,
    TABLE_COLUMNS,
    attention,
    fmt,
    header_items,
    margin_cell,
    measure_cell,
    outcome_banner,
    paper_map_notes,
    paper_rows,
    shown_status,
    table_rows,
)


def _md(x) -> str:
    return fmt(x).replace("|", "\\|")


def refutation_keys(results) -> dict[str, str | None]:
    """The declared finding of each refuted instance, by its command (None: outside every declared family)."""
    return {r["command"]: r.get("declared") for r in (results.get("summary") or {}).get("refutations", [])}


def _instance_verdict(i, declared: dict) -> str:
    key = declared.get(i["command"]) if i["verdict"] == "refuted" else None
    return f"{i['verdict']} (as declared: finding `{key}`, section Findings)" if key else i["verdict"]


def _md_statement(row, declared: dict | None = None) -> list[str]:
    """One statement's section; ``declared``: :func:`refutation_keys` (a refuted instance inside a declared
    finding's family says so, and so does the heading when every refuted instance is)."""
    sid = row["id"]
    declared = declared or {}
    refuted = [i for i in row.get("instances", []) if i["verdict"] == "refuted"]
    status = shown_status(row["status"], bool(refuted) and all(declared.get(i["command"]) for i in refuted))
    out = [f"### {row['reference']}: `{sid}` ({status})", "", row["summary"] + "."]
    if row["depends"]:
        out[-1] += " Uses: " + ", ".join(f"`{d}`" for d in row["depends"]) + "."
    if not row["implemented"]:
        if row.get("not_checkable"):
            return out + ["", f"**Not checkable**: {row['not_checkable']} (listed, never run, never counted as passing).", ""]
        return out + ["", "No checker yet: **not implemented** (never counted as passing).", ""]
    a = row["audit"] or {}
    parts = parse_docstring(row.get("doc", ""))
    out += ["", f"{parts.title} (checker: `{row['module']}`)"]
    if row.get("requires"):
        out += ["", "Needs: " + "; ".join(f"`{h}`" for h in row["requires"]) + "."]
    for name in ("Statement", "Construction", "Checks", "Not established"):
        if parts.section(name):
            out += ["", f"**{name}.**", "", "```text", parts.section(name), "```"]
    out += ["", f"How it was checked: {fmt(a.get('method'))}, {'certified' if a.get('certified') else 'numerical'}"
            + (f", {a.get('prec_bits')} bits" if a.get("prec_bits") else "")
            + (f", tolerance {fmt(a.get('tolerance'))}" if a.get("tolerance") else "")
            + f"; {row['instances_tried']} instance(s), {row['certified_passes']} certified and "
            f"{row['numerical_passes']} numerical passes"
            + (f", {row['vacuous_passes']} vacuous (nothing to check)" if row.get("vacuous_passes") else "") + ".", ""]
    for h in a.get("hypotheses", []):
        out.append(f"- hypothesis {h['name']}: {h['status']}" + (f" ({h['detail']})" if h["detail"] else ""))
    for c in row["controls"]:
        if c.get("role") == "finding certificate":  # a refutation of something printed: section Findings
            out.append(f"- certificate of finding `{c['finding']}` (section Findings) \"{c['description']}\": "
                       f"{c['verdict']} ({'as declared' if c['rejected'] else 'NOT as declared, expected ' + ', '.join(c['expect'])})")
            continue
        out.append(f"- negative control \"{c['description']}\": {c['verdict']} "
                   f"({'rejected as expected' if c['rejected'] else 'NOT rejected, expected ' + ', '.join(c['expect'])})")
    for i in row["instances"]:
        if i["verdict"] not in ("verified",):
            out.append(f"- {_instance_verdict(i, declared)}: {i['reason']} -- `{i['command']}`")
    out += ["", f"Audit trail (default instance, `{row['instances'][0]['command'] if row['instances'] else ''}`): "
            f"**{a.get('verdict')}**: {a.get('reason')}", ""]
    for k, s in enumerate(a.get("trail", []), 1):
        out.append(f"{k}. {s['title']}" + (f" [{s['uses']}]" if s["uses"] else ""))
        out += [f"   - {key}: `{json.dumps(v, default=str)}`" for key, v in s["data"].items()]
    return out + [""]


def _md_cell(value: str, label: str) -> str:
    return _md(value) + (f" ({_md(label)})" if label else "")


def results_table_md(results, paper: str | None = None) -> list[str]:
    """The results table of one paper (default: the first), shared with the
    later papers' sections."""
    out = ["| " + " | ".join(TABLE_COLUMNS) + " |", "|---|---|---|--:|--:|--:|---|--:|--:|--:|"]
    for sid, r, others, ctrl in table_rows(results, paper):
        why = f": {_md(r['not_checkable'])}" if r.get("not_checkable") else ""
        out.append(f"| `{sid}` | {_md(r['reference'])} | {_md(r['status'])}{why} | {r['instances_tried']} | {r['certified_passes']} "
                   f"| {r['numerical_passes']} | {_md(others)} | {ctrl} | {_md_cell(*margin_cell(r))} "
                   f"| {_md_cell(*measure_cell(r))} |")
    return out


def render_markdown(results: dict) -> str:
    _, outcome = outcome_banner(results)
    out = ["# mha-verify: verification report", "", f"**{outcome}**", "",
           "Open `index.html` for the same report with everything inline.", ""]
    out += [f"- **{k}**: {v}" for k, v in header_items(results)]
    out += ["", "## Needs attention", ""]
    out += [f"- **{k}** `{s}`: {t}" + (f" -- reproduce: `{c}`" if c else "") for k, s, t, c in attention(results)] or ["Nothing outside the declared findings: no new refutation, no error, "
                                                                              "no inconclusive instance, every negative control rejected."]
    figs = results["figures"]
    out += ["", "## Statement map", "", f"![{figs['statement_map']['title']}]({figs['statement_map']['file']})", "",
            figs["statement_map"]["caption"], "", *map_notes_md(results), "## Results by statement", "",
            *results_table_md(results)]
    out += ["", NOTES, "", "## Figures", ""]
    for name, f in figs.items():
        if name != "statement_map":
            out += [f"### {f['title']}", "", f"![{f['title']}]({f['file']})", "", f["caption"], ""]
            if f["error"]:
                out += [f"Figure error: {f['error']}", ""]
    out += ["## Statements", ""]
    declared = refutation_keys(results)
    for row in paper_rows(results):
        out += _md_statement(row, declared)
    return "\n".join(out) + "\n"


def map_notes_md(results, paper: str | None = None) -> list[str]:
    """The notes under a statement map (:func:`verifier.report.summary.paper_map_notes`), numbered as its marks."""
    notes = paper_map_notes(results, paper)
    if not notes:
        return []
    return (["Notes on the map (a numbered mark on a node): a verified statement whose proof uses one this run does "
             "not verify.", ""] + [f"{k}. {n}" for k, n in enumerate(notes, 1)] + [""])


# -- the table of contents -------------------------------------------------------

def github_slug(text: str, seen: dict[str, int]) -> str:
    """The anchor GitHub gives a Markdown heading (github-slugger): its text lower-cased, every character but
    letters, marks, digits, "_", "-" and spaces removed, spaces as "-"; a repeated anchor gets "-1", "-2", ...
    in order.  ``seen`` counts the anchors of the headings above.

    >>> seen = {}
    >>> github_slug("Def. 1: `definition1` (verified)", seen), github_slug("App. B.2: margins", seen)
    ('def-1-definition1-verified', 'app-b2-margins')
    >>> github_slug("Figures", seen), github_slug("Figures", seen), github_slug("Figures-1", seen)
    ('figures', 'figures-1', 'figures-1-1')
    """
    text = text.replace("`", "").replace("\\|", "|").lower()
    keep = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[:1] in "LM"
                   or unicodedata.category(c) in ("Nd", "Nl"))
    base = slug = keep.replace(" ", "-")
    while slug in seen:
        seen[base] += 1
        slug = f"{base}-{seen[base]}"
    seen[slug] = 0
    return slug


def _short(heading: str) -> str:
    """A heading's label in the contents: up to its first ": " (a statement's reference, a finding's number
    and statement), else whole."""
    head, sep, _ = heading.partition(": ")
    return head if sep and len(head) <= 48 else heading


CONTENTS = "## Contents"


def with_contents(md: str) -> str:
    """``md`` with a table of contents after its header (before its first "## " section): every "## "
    section linked, with its "### " subsections on one line; anchors as GitHub makes them
    (:func:`github_slug`; headings inside code fences are not headings)."""
    lines = md.split("\n")
    first = next((k for k, line in enumerate(lines) if line.startswith("## ")), None)
    if first is None:
        return md
    doc = lines[:first] + [CONTENTS, ""] + lines[first:]
    seen: dict[str, int] = {}
    sections: list[tuple[str, str, list]] = []
    fence = False
    for line in doc:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6}) +(.*?)\s*$", line)
        if not m:
            continue
        text, level = m.group(2), len(m.group(1))
        slug = github_slug(text, seen)
        if level == 2 and line != CONTENTS:
            sections.append((text, slug, []))
        elif level == 3 and sections:
            sections[-1][2].append((_short(text), slug))
    esc = lambda t: t.replace("[", "\\[").replace("]", "\\]")  # noqa: E731
    toc = []
    for text, slug, subs in sections:
        toc.append(f"- [{esc(text)}](#{slug})" + (": " + " · ".join(f"[{esc(t)}](#{s})" for t, s in subs)
                                                  if subs else ""))
    return "\n".join(lines[:first] + [CONTENTS, ""] + toc + [""] + lines[first:])
