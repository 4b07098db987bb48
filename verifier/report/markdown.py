"""The report as ``REPORT.md`` (figures beside it in ``figures/``), read from
``results`` alone."""
from __future__ import annotations

import json

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
    paper_rows,
    table_rows,
)


def _md(x) -> str:
    return fmt(x).replace("|", "\\|")


def _md_statement(row) -> list[str]:
    sid = row["id"]
    out = [f"### {row['reference']}: `{sid}` ({row['status']})", "", row["summary"] + "."]
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
            out.append(f"- {i['verdict']}: {i['reason']} -- `{i['command']}`")
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
        out.append(f"| `{sid}` | {_md(r['reference'])} | {r['status']}{why} | {r['instances_tried']} | {r['certified_passes']} "
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
            figs["statement_map"]["caption"], "", "## Results by statement", "",
            *results_table_md(results)]
    out += ["", NOTES, "", "## Figures", ""]
    for name, f in figs.items():
        if name != "statement_map":
            out += [f"### {f['title']}", "", f"![{f['title']}]({f['file']})", "", f["caption"], ""]
            if f["error"]:
                out += [f"Figure error: {f['error']}", ""]
    out += ["## Statements", ""]
    for row in paper_rows(results):
        out += _md_statement(row)
    return "\n".join(out) + "\n"
