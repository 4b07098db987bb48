"""``mha-verify list``: the statements, in the project's own words.

``list`` prints one line per statement; ``--long`` adds each statement's
hypotheses and the Statement / Checks / Not established sections of its
checker's docstring (:mod:`verifier.report.docstrings`); ``--markdown``
renders the long form as the page ``docs/STATEMENTS.md`` is generated from
(``mha-verify list --long --markdown > docs/STATEMENTS.md``); ``--json``
gives one JSON object.
"""
from __future__ import annotations

from verifier.report.docstrings import parse_docstring, statement_text
from verifier.statements import registry

DOCS_HEADER = """# The statements mha-verify checks

Generated from the checkers' docstrings by `mha-verify list --long --markdown`
(do not edit by hand; `tests/verifier/cli/test_listing.py` fails when this page
is out of date).  Each statement says what it needs (its hypotheses), what the
checker establishes on an instance, and what it does not establish.
`mha-verify check <id> --help` lists the instance options; the verdicts and
exit codes are in the README.
"""


def _mark(st) -> str:
    return "not checkable" if st.not_checkable and not st.implemented else st.status_word


def rows() -> list[dict]:
    reg = registry.load_all()
    out = []
    for paper in registry.PAPERS.values():
        for sid in paper.statements:
            st = reg[sid]
            out.append({"id": sid, "paper": paper.key, "reference": st.reference, "summary": st.summary,
                        "status": _mark(st), "requires": list(st.requires), "writes_weights": st.writes_weights,
                        "defaults": {k: (str(v) if callable(v) else v) for k, v in st.defaults.items()}, "depends": list(st.depends)})
    return out


def short_text() -> str:
    lines = []
    reg = registry.load_all()
    for r in rows():
        why = f"  [{reg[r['id']].status_word}]" if r["status"] == "not checkable" else ""
        lines.append(f"{r['id']:14s} {r['reference']:18s} {r['status']:16s} {r['summary']}{why}")
    return "\n".join(lines)


def long_text() -> str:
    reg = registry.load_all()
    return "\n\n".join(statement_text(reg[r["id"]]) for r in rows())


def markdown() -> str:
    """The docs page: every paper, every statement with its sections."""
    reg = registry.load_all()
    out = [DOCS_HEADER]
    for paper in registry.PAPERS.values():
        out += [f"## {paper.title}", "", f"{paper.citation}.", ""]
        for sid in paper.statements:
            st = reg[sid]
            parts = parse_docstring(st.doc)
            out += [f"### `{sid}`: {st.reference}", "", f"{st.summary}." + (f" {parts.title}" if parts.title else ""), ""]
            if st.requires:
                out += ["Needs: " + "; ".join(f"`{h}`" for h in st.requires) + ".", ""]
            if not st.implemented:
                out += [f"*{st.status_word}*", ""]
            for name in ("Statement", "Checks", "Not established"):
                body = parts.section(name)
                if body:
                    out += [f"**{name}.**", "", "```text", body, "```", ""]
    return "\n".join(out).rstrip() + "\n"
