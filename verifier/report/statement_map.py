"""The statement map of a paper: every statement a node coloured by its status in the run, an arrow
A -> B where B's proof uses A, the main theorem's component left, the rest right, and a numbered note
under the map wherever a verified statement's proof uses one the run does not verify
(:func:`verifier.report.summary.map_notes`).  Drawn with matplotlib's object API (no pyplot state, no
graphviz); :mod:`verifier.report.figures` draws it with the report's other figures.
"""
from __future__ import annotations

import numpy as np

from verifier.report.summary import AS_DECLARED, map_notes, short_reference
from verifier.statements import registry

STATUS_COLOURS = {
    "verified": ("#2e7d32", "white"),
    "verified (numerical)": ("#9ccc65", "black"),
    "hypotheses-unmet": ("#90a4ae", "black"),
    "inconclusive": ("#ffca28", "black"),
    "control failed": ("#ef6c00", "white"),
    "refuted": ("#c62828", "white"),
    AS_DECLARED: ("#c62828", "white"),  # the same red: a declared refutation is still the paper's statement failing
    "error": ("#6a1b9a", "white"),
    "not implemented": ("#eeeeee", "#555555"),
    "not checkable": ("#f5f5f5", "#555555"),
    "not run": ("#ffffff", "#9e9e9e"),
}


# -- statement map --------------------------------------------------------------

def _components(ids: list[str], deps: dict[str, tuple]) -> dict[str, int]:
    parent = {s: s for s in ids}

    def find(s):
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for s in ids:
        for t in deps[s]:
            if t in parent:
                parent[find(s)] = find(t)
    return {s: find(s) for s in ids}


def _layers(ids: list[str], deps: dict[str, tuple]) -> dict[str, tuple[float, float]]:
    """Hand-style layered layout: a node sits one layer below its lowest user
    (leaves with no user at the bottom); within a layer, nodes are ordered by
    the mean position of their neighbours."""
    depth: dict[str, int] = {}

    def d(s):
        if s not in depth:
            below = [t for t in deps[s] if t in ids]
            depth[s] = 1 + max(map(d, below)) if below else 0
        return depth[s]

    for s in ids:
        d(s)
    users = {s: [u for u in ids if s in deps[u]] for s in ids}
    for s in sorted(ids, key=lambda s: -depth[s]):  # lift each node under its lowest user
        if users[s]:
            depth[s] = min(depth[u] for u in users[s]) - 1
    layers: dict[int, list[str]] = {}
    for s in ids:  # CATALOGUE order within a layer to start
        layers.setdefault(depth[s], []).append(s)
    x: dict[str, float] = {}

    def place(row):
        for i, s in enumerate(row):
            x[s] = i - (len(row) - 1) / 2

    for k in sorted(layers):  # upward: users follow their dependencies
        if k > min(layers):
            layers[k].sort(key=lambda s: np.mean([x[t] for t in deps[s] if t in x] or [0.0]))
        place(layers[k])
    for k in sorted(layers, reverse=True)[1:]:  # downward: dependencies under their users
        layers[k].sort(key=lambda s: np.mean([x[u] for u in users[s]] or [x[s]]))
        place(layers[k])
    return {s: (x[s], float(depth[s])) for s in ids}


def statement_map_data(statuses: dict[str, str], paper: str | None = None, anchor: str = "theorem1") -> dict:
    """The map of one paper (default: the first registered); the left panel is
    the component of ``anchor`` (its main theorem)."""
    key = paper or next(iter(registry.PAPERS))
    ids = list(registry.PAPERS[key].statements)
    deps = {s: tuple(registry.REGISTRY[s].depends) for s in ids}
    comp = _components(ids, deps)
    main = [s for s in ids if comp[s] == comp.get(anchor)]
    aside = [s for s in ids if s not in main]
    status = {s: statuses.get(s, "not run") for s in ids}
    reference = {s: registry.REGISTRY[s].reference for s in ids}
    return {"main": main, "aside": aside, "depends": {s: list(deps[s]) for s in ids}, "status": status,
            "reference": reference,
            "notes": [list(n) for n in map_notes(ids, {s: list(deps[s]) for s in ids}, status, reference)]}


NODE_W, NODE_H, NODE_DX = 1.0, 0.46, 1.12


def _verified(status: str) -> bool:
    return status.startswith("verified")


def _draw_graph(ax, ids, data, title, pos, ylim, marks=None):
    """One panel of the map; ``marks``: {statement: note number} drawn at the node's corner.  An arrow
    out of a statement not verified in this run is dashed, in that statement's colour."""
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

    w, h = NODE_W, NODE_H
    marks = marks or {}
    for s in ids:
        for t in data["depends"][s]:
            if t in pos:
                (x0, y0), (x1, y1) = pos[t], pos[s]
                weak = not _verified(data["status"][t]) and data["status"][t] not in ("not implemented", "not checkable")
                ax.add_patch(FancyArrowPatch((x0, y0 + h / 2), (x1, y1 - h / 2), arrowstyle="-|>",
                                             mutation_scale=11, lw=1.3 if weak else 1.0,
                                             color=STATUS_COLOURS[data["status"][t]][0] if weak else "#607d8b",
                                             linestyle=(0, (4, 2)) if weak else "-", shrinkA=1, shrinkB=1))
    for s in ids:
        x, y = pos[s]
        status = data["status"][s]
        face, ink = STATUS_COLOURS.get(status, ("#ffffff", "black"))
        box = dict(boxstyle="round,pad=0.02,rounding_size=0.08")
        if status in ("not implemented", "not checkable"):  # light hatch under a dark outline: legible
            ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, facecolor=face, edgecolor="#c8c8c8",
                                        lw=0.0, hatch="//", **box))
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, edgecolor="#37474f", lw=1.0,
                                    facecolor="none" if status in ("not implemented", "not checkable")
                                    else face, **box))
        ref = short_reference(data["reference"][s])
        ax.text(x, y + 0.07, ref, ha="center", va="center", fontsize=8 if len(ref) < 13 else 7,
                color=ink, weight="bold", gid="node-label")
        ax.text(x, y - 0.11, s, ha="center", va="center", fontsize=7, color=ink, family="monospace",
                gid="node-label")
        if s in marks:  # a note under the map: verified, but its proof uses a statement not verified here
            cx, cy = x + w / 2 - 0.02, y + h / 2 - 0.02
            ax.add_patch(Circle((cx, cy), 0.085, facecolor=STATUS_COLOURS["inconclusive"][0], edgecolor="#37474f",
                                lw=0.8, zorder=4))
            ax.text(cx, cy, str(marks[s]), ha="center", va="center", fontsize=7, weight="bold", zorder=5)
    xs = [p[0] for p in pos.values()] or [0.0]
    ax.set_xlim(min(xs) - 0.65, max(xs) + 0.65)
    ax.set_ylim(*ylim)
    ax.set_title(title, fontsize=10)
    ax.axis("off")


#: inches per note line under a statement map; inches kept for the legend
NOTE_LINE, LEGEND_SPACE = 0.2, 0.36  # 0.06 of the first paper's map (6 in.)


def draw_statement_map(fig, data):
    """The map on ``fig`` (laid out here): the main theorem's component left, the rest right, the legend
    under them, then one line per note (:func:`verifier.report.summary.map_notes`; the figure grows by a
    line each)."""
    from matplotlib.patches import Patch

    notes = data.get("notes") or []
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + len(notes) * NOTE_LINE)
    total = height + len(notes) * NOTE_LINE
    pos = {}
    for key in ("main", "aside"):
        ids = data[key]
        p = _layers(ids, {s: tuple(data["depends"][s]) for s in ids}) if ids else {}
        pos[key] = {s: (x * NODE_DX, y) for s, (x, y) in p.items()}
    top = max([y for p in pos.values() for _, y in p.values()] or [0.0])
    aside_top = max([y for _, y in pos["aside"].values()] or [0.0])
    shift = (top - aside_top) / 2  # centre the side panel vertically
    pos["aside"] = {s: (x, y + shift) for s, (x, y) in pos["aside"].items()}
    spans = [max(x for x, _ in p.values()) - min(x for x, _ in p.values()) + 1.3 if p else 1.0
             for p in pos.values()]
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": spans})
    ylim = (-0.45, top + 0.45)
    marks = {s: k for k, (s, _) in enumerate(notes, 1)}
    main = "Theorem 1 and its proof" if "theorem1" in data["main"] else "The main results and their proofs"
    _draw_graph(axes[0], data["main"], data, f"{main} (arrow A -> B: B's proof uses A)", pos["main"], ylim, marks)
    _draw_graph(axes[1], data["aside"], data, "Definitions, assumptions and side results", pos["aside"], ylim, marks)
    present = [s for s in STATUS_COLOURS if s in set(data["status"].values())]
    handles = [Patch(facecolor=STATUS_COLOURS[s][0], edgecolor="#37474f",
                     hatch="//" if s in ("not implemented", "not checkable") else None, label=s) for s in present]
    if notes:
        from matplotlib.lines import Line2D

        handles += [Line2D([], [], color="#607d8b", lw=1.3, ls=(0, (4, 2)),
                           label="dashed: from a statement not verified in this run"),
                    Line2D([], [], ls="", marker="o", ms=9, mfc=STATUS_COLOURS["inconclusive"][0], mec="#37474f",
                           label="k: verified, its proof uses one not verified (note k)")]
    notes_h = (len(notes) * NOTE_LINE + (0.08 if notes else 0.0)) / total
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False,
               **({"bbox_to_anchor": (0.5, notes_h)} if notes else {}))
    for k, (s, uses) in enumerate(notes, 1):  # the figure says what a mark means
        fig.text(0.012, notes_h - (k * NOTE_LINE) / total,
                 f"{k}. {short_reference(data['reference'][s])} ({s}) is {data['status'][s]} on its own instances; "
                 f"its proof uses {uses}.", fontsize=8, ha="left", va="bottom", color="#263238")
    rect = (0, notes_h + LEGEND_SPACE / total if notes else LEGEND_SPACE / height, 1, 1)
    fig.tight_layout(rect=rect)
    if _fit_titles(fig, axes):  # a title on two lines is taller: lay out again
        fig.tight_layout(rect=rect)
    _fit_node_labels(fig, axes)


def _two_lines(text: str) -> str:
    """``text`` on two lines: before its parenthesis when it has one, else at the space nearest its middle.

    >>> _two_lines("Eqs. 1-6 (given weights)"), _two_lines("ICLR 2025 abstract (seq-to-seq necessity, hardmax)")
    ('Eqs. 1-6\\n(given weights)', 'ICLR 2025 abstract\\n(seq-to-seq necessity, hardmax)')
    """
    cut = text.find(" (")
    if cut <= 0:
        spaces = [i for i, ch in enumerate(text) if ch == " "]
        cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return text[:cut] + "\n" + text[cut + 1:]


def _fit_titles(fig, axes) -> bool:
    """A panel's title wider than its panel on two lines (:func:`_two_lines`); whether one was."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    wide = [ax.title for ax in axes if ax.title.get_window_extent(renderer).width > ax.bbox.width
            and " " in ax.title.get_text()]
    for t in wide:
        t.set_text(_two_lines(t.get_text()))
    return bool(wide)


def _fit_node_labels(fig, axes, smallest: float = 6.0) -> None:
    """Fit each node's label to its box (after the layout: the box's width in pixels is known): smaller, down
    to ``smallest`` points, then on two lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in axes:
        box = abs(ax.transData.transform((NODE_W, 0))[0] - ax.transData.transform((0, 0))[0])
        for t in ax.texts:
            if t.get_gid() != "node-label":
                continue
            size = t.get_fontsize()
            while t.get_window_extent(renderer).width > 0.94 * box and t.get_fontsize() > smallest:
                t.set_fontsize(t.get_fontsize() - 0.5)
            if t.get_window_extent(renderer).width > 0.94 * box and " " in t.get_text():
                t.set_text(_two_lines(t.get_text()))
                t.set_fontsize(size)
                t.set_linespacing(1.0)
                while t.get_window_extent(renderer).width > 0.94 * box and t.get_fontsize() > 4.5:
                    t.set_fontsize(t.get_fontsize() - 0.5)
