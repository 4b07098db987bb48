"""The report as a self-contained ``index.html`` (figures as ``data:`` URIs,
inline CSS, no network), read from ``results`` alone, never from what was
printed."""
from __future__ import annotations

import html
import json
import re

from verifier.report.docstrings import parse_docstring
from verifier.report.summary import (
    NOTES,
    TABLE_COLUMNS,
    attention,
    authors_short,
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

MAX_LISTED = 25  # instances listed per statement (all non-verified ones are always listed)
MAX_JSON = 6000  # characters of certificates shown per statement

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1180px;padding:1em 2em;
color:#212121;line-height:1.45}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #cfd8dc;padding-bottom:.2em;margin-top:2em}
h3{margin-top:2em} code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.86em}
pre{background:#f5f7f8;border:1px solid #e0e0e0;padding:.7em;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;font-size:.86em;margin:.6em 0} th,td{border:1px solid #cfd8dc;padding:.25em .5em;
text-align:left;vertical-align:top} th{background:#eceff1} td.num{text-align:right;font-variant-numeric:tabular-nums}
dl.hdr{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;font-size:.9em} dl.hdr dt{font-weight:600}
dl.hdr dd{margin:0} .badge{display:inline-block;padding:.05em .5em;border-radius:.6em;font-size:.85em;white-space:nowrap}
.banner{padding:.6em 1em;border-radius:.4em;margin:1em 0;font-weight:600}
figure{margin:1.2em 0} figure img{max-width:100%;border:1px solid #e0e0e0} figcaption{font-size:.88em;color:#455a64}
.alert{border-left:5px solid #c62828;background:#ffebee;padding:.5em 1em;margin:.5em 0}
.note{color:#546e7a;font-size:.88em}
.doc{white-space:pre-wrap;font-size:.92em;margin:.3em 0 .8em 0}
details{margin:.6em 0} summary{cursor:pointer;color:#37474f}
nav.toc{position:sticky;top:0;z-index:10;background:#fff;border-bottom:1px solid #cfd8dc;padding:.35em 0;
font-size:.86em;display:flex;flex-wrap:wrap;gap:.15em .25em} nav.toc a{padding:.1em .45em;border-radius:.3em;
text-decoration:none;color:#1565c0;white-space:nowrap} nav.toc a:hover{background:#e3f2fd}
nav.toc .group{padding:.1em 0 .1em .6em;color:#546e7a;white-space:nowrap}
h2,h3{scroll-margin-top:4.5em} ol.notes{font-size:.9em;color:#37474f}
"""

# the page reports its own figures: each <img> must have decoded by the load event
CHECK_SCRIPT = """<script>
window.addEventListener("load", function () {
  var im = document.images, ok = 0;
  for (var i = 0; i < im.length; i++) {
    if (im[i].complete && im[i].naturalWidth > 0) { ok++; }
    else { console.error("report: figure did not decode: " + im[i].id); }
  }
  document.body.setAttribute("data-figures-decoded", ok + "/" + im.length);
});
</script>"""


def _e(x) -> str:
    return html.escape(fmt(x))


def _badge(status: str) -> str:
    from verifier.report.statement_map import STATUS_COLOURS

    face, ink = STATUS_COLOURS.get(status, ("#ffffff", "black"))
    return f'<span class="badge" style="background:{face};color:{ink}">{html.escape(status)}</span>'


def _json(x, limit: int = MAX_JSON) -> str:
    s = json.dumps(x, sort_keys=True, indent=1, default=str)
    return s if len(s) <= limit else s[:limit] + f"\n... ({len(s) - limit} more characters in results.json)"


def _listed(row) -> list[dict]:
    inst = row["instances"]
    keep = inst[:MAX_LISTED] + [i for i in inst[MAX_LISTED:] if i["verdict"] != "verified"]
    return keep


# -- HTML ----------------------------------------------------------------------

def statement_text_html(row) -> str:
    """The statement, its construction, checks and limits as text (from the
    checker's docstring, without roles or doctests)."""
    parts = parse_docstring(row.get("doc", ""))
    out = [f"<p class='note'>{html.escape(parts.title)} (checker: <code>{html.escape(row['module'])}</code>)</p>"]
    if row.get("requires"):
        out.append("<p><b>Needs:</b> " + "; ".join(html.escape(h) for h in row["requires"]) + ".</p>")
    for name in ("Statement", "Construction", "Checks", "Not established"):
        body = parts.section(name)
        if body:
            out.append(f"<h4>{name}</h4><div class='doc'>{html.escape(body)}</div>")
    return "\n".join(out)


def instances_html(row, declared: dict | None = None) -> str:
    """The per-instance table, folded: every instance's verdict (a refuted one inside a declared finding's
    family says so), margin, quantity and the command that reproduces it."""
    declared = declared or {}
    quantity = row.get("measure") or "quantity"
    listed = _listed(row)
    bad = sum(i["verdict"] != "verified" for i in row["instances"])
    out = [f"<details><summary>{len(row['instances'])} instance(s) ({bad} not verified): verdict, margin, "
           "reproduce</summary>",
           f"<table><tr><th>#</th><th>verdict</th><th>certified</th><th>margin</th><th>{html.escape(quantity)}</th>"
           "<th>reproduce</th></tr>"]
    for k, i in enumerate(listed):
        key = declared.get(i["command"]) if i["verdict"] == "refuted" else None
        verdict = _e(i["verdict"]) + (f"<br><span class='note'>as declared: <a href='#finding-{html.escape(key)}'>"
                                      f"<code>{html.escape(key)}</code></a></span>" if key else "")
        out.append(f"<tr><td class='num'>{k + 1}</td><td>{verdict}</td><td>{_e(i['certified'])}</td>"
                   f"<td class='num'>{_e(i['margin'])}</td><td class='num'>{_e(i.get('measure'))}</td>"
                   f"<td><code>{_e(i['command'])}</code></td></tr>")
    out.append("</table>")
    if len(row["instances"]) > len(listed):
        out.append(f"<p class='note'>{len(row['instances']) - len(listed)} more verified instances in results.json.</p>")
    return "\n".join(out) + "</details>"


def _cell(value: str, label: str) -> str:
    return f"<td class='num'>{html.escape(value)}" + (f"<br><span class='note'>{html.escape(label)}</span>"
                                                       if label else "") + "</td>"


def results_table_html(results, paper: str | None = None) -> str:
    """The results table of one paper (default: the first), shared with the
    later papers' sections."""
    rows = ["<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in TABLE_COLUMNS) + "</tr>"]
    for sid, r, others, ctrl in table_rows(results, paper):
        why = f"<br><span class='note'>{_e(r['not_checkable'])}</span>" if r.get("not_checkable") else ""
        rows.append(f'<tr><td><a href="#{sid}"><code>{sid}</code></a></td><td>{_e(r["reference"])}</td>'
                    f"<td>{_badge(r['shown'])}{_e(r['status_note'])}{why}</td><td class='num'>{r['instances_tried']}</td>"
                    f"<td class='num'>{r['certified_passes']}</td><td class='num'>{r['numerical_passes']}</td>"
                    f"<td>{_e(others)}</td><td class='num'>{ctrl}</td>{_cell(*margin_cell(r))}"
                    f"{_cell(*measure_cell(r))}</tr>")
    return "\n".join(rows) + "</table>"


def _control_kind(c) -> str:
    """What a registered control is: a negative control (ours), or the certificate of a finding."""
    if c.get("role") == "finding certificate":
        return f"<b>certificate of finding <code>{html.escape(str(c['finding']))}</code></b> (section Findings): "
    return "negative control: "


def _html_statement(row, declared: dict | None = None) -> str:
    """One statement's section; ``declared``: :func:`verifier.report.markdown.refutation_keys`."""
    sid = row["id"]
    declared = declared or {}
    refuted = [i for i in row.get("instances", []) if i["verdict"] == "refuted"]
    status = shown_status(row["status"], bool(refuted) and all(declared.get(i["command"]) for i in refuted))
    out = [f'<h3 id="{sid}">{html.escape(row["reference"])}: <code>{sid}</code> {_badge(status)}</h3>',
           f"<p>{html.escape(row['summary'])}.",
           (" Uses: " + ", ".join(f'<a href="#{d}"><code>{d}</code></a>' for d in row["depends"]) + ".")
           if row["depends"] else "", "</p>"]
    if not row["implemented"] and row.get("not_checkable"):
        out.append(f'<p class="note">Not checkable: {html.escape(row["not_checkable"])} '
                   '(listed, never run, never counted as passing).</p>')
        return "\n".join(out)
    elif not row["implemented"]:
        out.append('<p class="note">No checker yet: not implemented (never counted as passing).</p>')
        return "\n".join(out)
    out.append(statement_text_html(row))
    a = row["audit"] or {}
    out.append("<h4>How it was checked</h4><ul>"
               f"<li>method: {_e(a.get('method'))}; {'certified' if a.get('certified') else 'numerical'}"
               f"{'; ' + _e(a.get('prec_bits')) + ' bits' if a.get('prec_bits') else ''}"
               f"{'; tolerance ' + _e(a.get('tolerance')) if a.get('tolerance') else ''}</li>"
               f"<li>{row['instances_tried']} instance(s): {row['certified_passes']} certified pass(es), "
               f"{row['numerical_passes']} numerical"
               f"{'; ' + str(row['vacuous_passes']) + ' vacuous (nothing to check)' if row.get('vacuous_passes') else ''}; skipped (instance not accepted): {len(row['skipped'])}</li></ul>")
    if a.get("hypotheses"):
        out.append("<table><tr><th>hypothesis (default instance)</th><th>status</th><th>detail</th></tr>"
                   + "".join(f"<tr><td>{_e(h['name'])}</td><td>{_e(h['status'])}</td><td>{_e(h['detail'])}</td></tr>"
                             for h in a["hypotheses"]) + "</table>")
    out.append(instances_html(row, declared))
    if row["controls"]:
        out.append("<table><tr><th>negative control, or certificate of a finding</th><th>expected</th><th>got</th>"
                   "<th>as expected</th></tr>"
                   + "".join(f"<tr><td>{_control_kind(c)}{_e(c['description'])}<br><span class='note'>"
                             f"{_e(c['function'])}</span></td><td>{_e(', '.join(c['expect']))}</td>"
                             f"<td>{_e(c['verdict'])}</td><td>{_e(c['rejected'])}</td></tr>" for c in row["controls"])
                   + "</table>")
    out.append("<h4>Audit trail (default instance)</h4>")
    out.append(f"<p><code>{_e(row['instances'][0]['command'] if row['instances'] else '')}</code><br>"
               f"verdict <b>{_e(a.get('verdict'))}</b>: {_e(a.get('reason'))}</p>")
    out.append(f"<p>claimed: <code>{html.escape(json.dumps(a.get('claimed'), sort_keys=True))}</code><br>"
               f"measured: <code>{html.escape(json.dumps(a.get('measured'), sort_keys=True))}</code></p><ol>")
    for s in a.get("trail", []):
        data = "".join(f"<li><code>{html.escape(str(k))}</code>: {html.escape(json.dumps(v, default=str))}</li>"
                       for k, v in s["data"].items())
        out.append(f"<li>{html.escape(s['title'])}" + (f" <i>[{html.escape(s['uses'])}]</i>" if s["uses"] else "")
                   + (f"<ul>{data}</ul>" if data else "") + "</li>")
    out.append("</ol>")
    out.append(f"<details><summary>certificates and instance</summary><pre>"
               f"{html.escape(_json({'certificates': a.get('certificates'), 'instance': a.get('instance')}))}"
               "</pre></details>")
    return "\n".join(out)


def render_html(results: dict, figures: list[dict]) -> str:
    colour, outcome = outcome_banner(results)
    fig = {f["name"]: f for f in figures}

    def img(name):
        f = fig[name]
        return (f'<figure id="figure-{name}"><img id="img-{name}" alt="{html.escape(f["title"])}" '
                f'src="data:image/png;base64,{f["png_base64"]}">'
                f'<figcaption><b>{html.escape(f["title"])}.</b> {html.escape(f["caption"])}'
                + (f' <span style="color:#c62828">Figure error: {html.escape(f["error"])}</span>' if f["error"] else "")
                + "</figcaption></figure>")

    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>mha-verify: verification report</title>", f"<style>{CSS}</style></head><body>",
             "<h1>mha-verify: verification report</h1>",
             f'<div class="banner" style="background:{colour}">{html.escape(outcome)}</div><dl class="hdr">']
    parts += [f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in header_items(results)]
    parts.append("</dl><h2>Needs attention</h2>")
    items = attention(results)
    parts += [f'<div class="alert"><b>{html.escape(k)}</b> <a href="#{s}"><code>{s}</code></a>: {html.escape(t)}'
              + (f"<br>reproduce: <code>{html.escape(c)}</code>" if c else "") + "</div>"
              for k, s, t, c in items] or ["<p>Nothing outside the declared findings: no new refutation, no error, no inconclusive instance, "
                                        "every negative control rejected.</p>"]
    first = next(iter(results.get("papers_order") or []), None)
    who = authors_short((results.get("citations") or {}).get(first, "")) if first else ""
    group = f' data-group="First paper ({html.escape(who)})"' if who else ""
    parts += [f"<h2{group}>Statement map</h2>", img("statement_map"), map_notes_html(results),
              "<h2>Results by statement</h2>", results_table_html(results)]
    parts.append(NOTES_HTML)
    parts.append("<h2>Figures</h2>")
    parts += [img(f["name"]) for f in figures if f["name"] != "statement_map"]
    parts.append("<h2>Statements</h2>")
    from verifier.report.markdown import refutation_keys

    declared = refutation_keys(results)
    parts += [_html_statement(r, declared) for r in paper_rows(results)]
    parts += [CHECK_SCRIPT, "</body></html>"]
    return "\n".join(parts) + "\n"


def map_notes_html(results, paper: str | None = None) -> str:
    """The notes under a statement map (:func:`verifier.report.summary.paper_map_notes`), numbered as its marks."""
    notes = paper_map_notes(results, paper)
    if not notes:
        return ""
    code = lambda t: re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(t))  # noqa: E731
    return ("<p class='note'>Notes on the map (a numbered mark on a node): a verified statement whose proof uses one "
            "this run does not verify.</p><ol class='notes'>" + "".join(f"<li>{code(n)}</li>" for n in notes)
            + "</ol>")


# -- the navigation bar ------------------------------------------------------------

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def with_navigation(page: str) -> str:
    """``page`` with a navigation bar under its title, kept at the top of the window while scrolling: one
    link per section (``<h2>``; one without an id gets one from its text).  A link says the heading up to its
    first ":" or a heading's ``data-nav``; a heading's ``data-group`` names the sections from it on."""
    ids: set[str] = set(re.findall(r"""\bid=["']([^"']+)["']""", page))
    links = []

    def visit(m):
        attrs, text = m.group(1), m.group(2)
        plain = html.unescape(re.sub(r"<[^>]+>", "", text))
        found = re.search(r"""\bid=["']([^"']+)["']""", attrs)
        if found:
            anchor = found.group(1)
        else:
            anchor = base = _slug(plain.split(":")[0])
            n = 1
            while anchor in ids:
                n += 1
                anchor = f"{base}-{n}"
            ids.add(anchor)
            attrs = f' id="{anchor}"' + attrs
        nav = re.search(r"""\bdata-nav=["']([^"']+)["']""", attrs)
        group = re.search(r"""\bdata-group=["']([^"']+)["']""", attrs)
        label = html.unescape(nav.group(1)) if nav else plain.split(":")[0]
        if group:  # the sections that follow belong to it (the first paper's, before the later papers')
            links.append(f'<span class="group">{group.group(1)}:</span>')
        links.append(f'<a href="#{html.escape(anchor)}" title="{html.escape(plain)}">{html.escape(label)}</a>')
        return f"<h2{attrs}>{text}</h2>"

    page = re.sub(r"<h2((?:\s[^>]*)?)>(.*?)</h2>", visit, page, flags=re.S)
    bar = '<nav class="toc" id="contents" aria-label="sections">' + "".join(links) + "</nav>"
    cut = page.find("</h1>")
    return page[:cut + 5] + bar + page[cut + 5:] if cut >= 0 else bar + page


NOTES_HTML = f'<p class="note">{html.escape(NOTES)}</p>'
