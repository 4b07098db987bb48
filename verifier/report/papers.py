"""One report section per paper after the first: its statement map, its
results table, the tables its checker modules register (``@table``, e.g. the
comparison of Dana et al. with Mahdavi et al.) and its statements, in the same
words as the first paper's sections.  Read from ``results`` (plus the map
PNGs); the numbers of a table come from the registry, never from ``proofs``.

>>> markdown_sections({"papers": {}})
''
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from verifier.statements import registry


def later_papers() -> list:
    return list(registry.PAPERS.values())[1:]


ORDINALS = ("Second", "Third", "Fourth", "Fifth")


def _ordinal(i: int) -> str:
    """"Second", "Third", ... for the i-th later paper (0-based)."""
    return ORDINALS[i] if i < len(ORDINALS) else f"{i + 2}th"


def _anchor(paper) -> str:
    """The paper's main theorem: the statement most others depend on (its map's left panel)."""
    ids = list(paper.statements)
    deps = {s: set(registry.REGISTRY[s].depends) for s in ids}
    used = {s: sum(s in deps[t] for t in ids) for s in ids}
    return max(ids, key=lambda s: (len(deps[s]) + used[s], -ids.index(s)))


def build_sections(out, *, seed: int, statuses: dict, statements=None, progress=None) -> tuple[dict, dict]:
    """(results entry per later paper, map PNGs base64 by name); tables computed here."""
    from matplotlib.figure import Figure

    from verifier.report import statement_map as rf

    entries, pngs = {}, {}
    (Path(out) / "figures").mkdir(parents=True, exist_ok=True)
    for paper in later_papers():
        ids = [s for s in paper.statements if statements is None or s in statements]
        name = f"statement_map_{paper.key}"
        data = rf.statement_map_data(statuses, paper=paper.key, anchor=_anchor(paper))
        fig = Figure(figsize=(13, 5.2), dpi=100)
        rf.draw_statement_map(fig, data)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        (Path(out) / "figures" / f"{name}.png").write_bytes(buf.getvalue())
        pngs[name] = base64.b64encode(buf.getvalue()).decode("ascii")
        tables = {}
        for tname, t in registry.TABLES.items():
            if t.statement not in paper.statements or (statements is not None and t.statement not in statements):
                continue
            try:
                tables[tname] = {"title": t.title, "caption": t.caption, "error": "", **t.data(seed)}
            except Exception as exc:  # noqa: BLE001 - a failed table is shown, never hidden
                tables[tname] = {"title": t.title, "caption": t.caption, "error": f"{type(exc).__name__}: {exc}",
                                 "columns": [], "rows": [], "notes": []}
            if progress:
                progress.step(tname)
        entries[paper.key] = {"title": paper.title, "citation": paper.citation, "statements": ids,
                              "map": {"file": f"figures/{name}.png", "name": name}, "tables": tables}
    return entries, pngs


def nav_label(i: int, citation: str) -> str:
    """The i-th later paper in the navigation bar: "Second paper (Dana et al.)", "Third paper (Kajitsuka & Sato)".

    >>> nav_label(0, "Dana, Pydi, Chevaleyre, AISTATS 2025, arXiv:2411.10115"), nav_label(1, "Kajitsuka, Sato, ICLR 2025")
    ('Second paper (Dana et al.)', 'Third paper (Kajitsuka & Sato)')
    """
    from verifier.report.summary import authors_short

    who = authors_short(citation)
    return f"{_ordinal(i)} paper ({who})" if who else f"{_ordinal(i)} paper"


def has_error(entries: dict) -> bool:
    return any(t["error"] for e in entries.values() for t in e["tables"].values())


def _md_cell(x) -> str:
    from verifier.report.summary import fmt

    return fmt(x).replace("|", "\\|")


def markdown_sections(results: dict) -> str:
    from verifier.report.markdown import _md_statement, map_notes_md, refutation_keys, results_table_md

    out = []
    declared = refutation_keys(results)
    for i, (key, e) in enumerate(results.get("papers", {}).items()):
        out += ["", f"## {_ordinal(i)} paper: {e['title']} ({e['citation']})", "",
                f"![statement map]({e['map']['file']})", "", *map_notes_md(results, key),
                *results_table_md(results, paper=key)]
        for t in e["tables"].values():
            out += ["", f"### {t['title']}", "", t["caption"], ""]
            if t["error"]:
                out += [f"Table error: {t['error']}", ""]
                continue
            out += ["| " + " | ".join(_md_cell(c) for c in t["columns"]) + " |",
                    "|" + "---|" * len(t["columns"])]
            out += ["| " + " | ".join(_md_cell(x) for x in row) + " |" for row in t["rows"]]
            out += [""] + [f"- {n}" for n in t.get("notes", [])]
        out += ["", f"### Statements of the {_ordinal(i).lower()} paper", ""]
        for sid in e["statements"]:
            out += _md_statement(results["statements"][sid], declared)
    return "\n".join(out) + ("\n" if out else "")


def html_sections(results: dict, pngs: dict) -> str:
    from verifier.report.html import _e, _html_statement, map_notes_html, results_table_html
    from verifier.report.markdown import refutation_keys

    out = []
    declared = refutation_keys(results)
    for i, (key, e) in enumerate(results.get("papers", {}).items()):
        m = e["map"]
        out += [f"<h2 id='paper-{key}' data-nav='{html.escape(nav_label(i, e['citation']))}'>{_ordinal(i)} paper: "
                f"{html.escape(e['title'])} ({html.escape(e['citation'])})</h2>",
                f'<figure id="figure-{m["name"]}"><img id="img-{m["name"]}" alt="statement map" '
                f'src="data:image/png;base64,{pngs.get(m["name"], "")}"><figcaption>Statement map of the '
                f"{_ordinal(i).lower()} paper (colours: verdicts in this run; hatched: no checker; arrow A -> B: B's "
                "proof uses A).</figcaption></figure>", map_notes_html(results, key),
                results_table_html(results, paper=key)]
        for t in e["tables"].values():
            out.append(f"<h3>{html.escape(t['title'])}</h3><p class='note'>{html.escape(t['caption'])}</p>")
            if t["error"]:
                out.append(f"<p style='color:#c62828'>Table error: {html.escape(t['error'])}</p>")
                continue
            out.append("<table><tr>" + "".join(f"<th>{_e(c)}</th>" for c in t["columns"]) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in row) + "</tr>" for row in t["rows"])
                       + "</table><ul>" + "".join(f"<li class='note'>{html.escape(n)}</li>" for n in t.get("notes", []))
                       + "</ul>")
        out.append(f"<h3>Statements of the {_ordinal(i).lower()} paper</h3>")
        out += [_html_statement(results["statements"][sid], declared) for sid in e["statements"]]
    return "\n".join(out)


def insert_html(page: str, results: dict, pngs: dict) -> str:
    """The sections placed before the page's closing body tag."""
    section = html_sections(results, pngs)
    cut = page.rfind("</body>")
    return page[:cut] + section + page[cut:] if cut >= 0 else page + section
