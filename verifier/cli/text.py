"""Values as a person reads them in ``check`` and ``audit``'s text output
(``--json`` has them whole): the report's rounding
(:func:`verifier.statements.display.stable`: a bound rounded outward,
rounding noise as its class), no JSON quotes, a list of records as a small
aligned table, a long exact rational by its value.

>>> value_text({"eta": 0.01, "ok": True, "w": ["< 1e-12", "< 1e-12"]}), value_text("1" * 40 + "/3")
('{eta: 0.01, ok: true, w: [< 1e-12, < 1e-12]}', '~3.704e+38 (exact rational, 42 characters: --json)')
>>> print("\\n".join(table_lines({"T": 7, "per eta": [{"eta": 0.01, "lambda": 10}, {"eta": 0.001, "lambda": 14}]})))
    T        7
    per eta
      eta    lambda
      0.01   10
      0.001  14
"""
from __future__ import annotations

import json
import re
from fractions import Fraction

from verifier.statements.display import significant, stable
from verifier.statements.evidence import jsonable

#: widest list or mapping printed inline (a text is printed whole; the JSON has everything)
WIDE = 100
#: keys up to this long are aligned in a column (a longer key pushes its own value right)
KEY_WIDTH = 56
#: rows of a list of records printed (the rest counted)
MAX_ROWS = 8
#: an exact rational written out longer than this is printed by its value
LONG_RATIONAL = 32
_RATIONAL = re.compile(r"^-?\d+(/\d+)?$")


def _scalar(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        if len(v) > LONG_RATIONAL and _RATIONAL.match(v):
            return f"~{significant(float(Fraction(v))):.4g} (exact rational, {len(v)} characters: --json)"
        return v
    return json.dumps(v, default=str)


def _inline(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_inline(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    return _scalar(v)


def value_text(v, key: str = "") -> str:
    """One value on one line, rounded as the report rounds it; a list or a mapping cut at :data:`WIDE`
    characters (a text is never cut)."""
    v = stable(jsonable(v), key)
    text = _inline(v)
    if isinstance(v, (list, tuple, dict)) and len(text) > WIDE:
        n = len(v)
        count = f"{n} item{'s' * (n != 1)}" if isinstance(v, (list, tuple)) else f"{n} key{'s' * (n != 1)}"
        return text[:WIDE - 3] + f"... ({count}: --json)"
    return text


def _records(v) -> tuple[list[str], list[list]] | None:
    """(columns, rows) when ``v`` is a list of records of plain values (mappings with the same keys, or at
    least two lists of one length), else None."""
    if not isinstance(v, (list, tuple)) or not v:
        return None
    plain = lambda xs: all(not isinstance(x, (dict, list, tuple)) or len(_inline(x)) <= 24 for x in xs)  # noqa: E731
    if all(isinstance(r, dict) for r in v) and len({tuple(r) for r in v}) == 1 and all(plain(r.values()) for r in v):
        cols = list(v[0])
        return cols, [[r[c] for c in cols] for r in v]
    if len(v) > 1 and all(isinstance(r, (list, tuple)) for r in v) and len({len(r) for r in v}) == 1 and len(v[0]) > 1 \
            and all(plain(r) for r in v):
        return [], [list(r) for r in v]
    return None


def _columns(key: str, n: int) -> list[str]:
    """Column names a key gives in brackets ("table [H, n, d]"), else none."""
    m = re.search(r"\[([^\]]+)\]\s*$", key)
    names = [c.strip() for c in m.group(1).split(",")] if m else []
    return names if len(names) == n else []


def records_lines(cols: list[str], rows: list[list], indent: str, limit: int = MAX_ROWS) -> list[str]:
    """A small aligned table: a header when there are column names, at most ``limit`` rows, the rest counted."""
    shown = [[_inline(stable(jsonable(x), c)) for x, c in zip(r, cols or [""] * len(r))] for r in rows[:limit]]
    table = ([cols] if cols else []) + shown
    widths = [max(len(r[j]) for r in table) for j in range(len(table[0]))]
    lines = [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    if len(rows) > limit:
        lines.append(f"{indent}... {len(rows) - limit} more rows (--json)")
    return lines


def table_lines(d, indent: str = "    ", depth: int = 0) -> list[str]:
    """A mapping as aligned ``key  value`` lines: a nested mapping one level deeper (then inline), a list of
    records as a small table under its key; nothing for a value that says nothing (None, "0/0")."""
    if not isinstance(d, dict):
        return [indent + value_text(d)]
    d = {k: v for k, v in d.items() if v is not None and v != "0/0"}  # nothing sampled, nothing to say
    if not d:
        return []
    width = min(max(len(str(k)) for k in d), KEY_WIDTH)
    lines = []
    for k, v in d.items():
        rec = _records(v)
        if isinstance(v, dict) and v and depth < 1:
            lines.append(f"{indent}{k}")
            lines += table_lines(v, indent + "  ", depth + 1)
        elif rec is not None:
            cols, rows = rec
            lines.append(f"{indent}{k}")
            lines += records_lines(cols or _columns(str(k), len(rows[0])), rows, indent + "  ")
        else:
            lines.append(f"{indent}{str(k):<{width}}  {value_text(v, str(k))}")
    return lines


def certificate_lines(c, indent: str = "  ") -> list[str]:
    """One certificate: its kind (or claim) on the first line, the rest as :func:`table_lines` under it."""
    if not isinstance(c, dict):
        return [f"{indent}certificate: {value_text(c)}"]
    head = next((k for k in ("kind", "claim") if isinstance(c.get(k), str)), None)
    rest = {k: v for k, v in c.items() if k != head}
    return [f"{indent}certificate: {c[head] if head else ''}".rstrip()] + table_lines(rest, indent + "    ", 1)
