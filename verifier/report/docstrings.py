"""A checker module's docstring as the reader should meet it: the title and
the sections (Statement, Construction, Checks, Not established, References)
as plain text, without Sphinx roles (``:func:`x``` -> ``x``) and without the
doctest that closes it.  Used by the report's statement pages,
``mha-verify list --long`` and the docs page (``mha-verify docs``).

>>> doc = '''Lemma 9: a thing.
...
... Statement
... ---------
... For every x, :func:`f` holds (see :mod:`a.b`).
...
... Checks
... ------
... 1. one.
...
... >>> f(1)
... True
... '''
>>> parts = parse_docstring(doc)
>>> parts.title, parts.sections["Statement"], list(parts.sections)
('Lemma 9: a thing.', 'For every x, f holds (see a.b).', ['Statement', 'Checks'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
LITERAL = re.compile(r"``([^`]+)``")
HEADING = re.compile(r"^([A-Z][A-Za-z ,/-]+)\n(-{3,}|={3,})$", re.M)
ORDER = ("Statement", "Construction", "Checks", "Not established", "References")


@dataclass(frozen=True)
class DocParts:
    title: str
    sections: dict = field(default_factory=dict)  # heading -> plain text, in the docstring's order

    def section(self, name: str) -> str:
        return self.sections.get(name, "")


def plain(text: str) -> str:
    """Roles and double backquotes removed; doctest blocks dropped."""
    text = ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = LITERAL.sub(r"\1", text)
    out, in_doctest = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(">>>"):
            in_doctest = True
            continue
        if in_doctest:
            if not line.strip():
                in_doctest = False
            continue  # doctest continuation (...) and expected output
        out.append(line)
    return "\n".join(out).strip()


def parse_docstring(doc: str) -> DocParts:
    """Title (the first paragraph) and the underlined sections, as plain text."""
    doc = (doc or "").strip()
    heads = list(HEADING.finditer(doc))
    first = doc[: heads[0].start()] if heads else doc
    title = " ".join(plain(first).split("\n\n")[0].split())
    sections = {}
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        body = plain(doc[h.end():end])
        if body:
            sections[h.group(1).strip()] = body
    return DocParts(title, sections)


def statement_text(st) -> str:
    """A statement for ``list --long`` and the docs page: its summary,
    hypotheses and the Statement / Checks / Not established sections."""
    parts = parse_docstring(st.doc)
    lines = [f"{st.id} ({st.reference}): {st.summary}"]
    if st.requires:
        lines.append("  needs: " + "; ".join(st.requires))
    for name in ("Statement", "Checks", "Not established"):
        body = parts.section(name)
        if body:
            lines.append(f"  {name}:")
            lines += ["    " + line if line else "" for line in body.splitlines()]
    if not st.implemented:
        lines.append("  " + st.status_word)
    return "\n".join(lines)
