"""The statement maps: a note (and a numbered mark) where a verified statement's proof uses one not verified
in the run, node labels that fit their boxes, panel titles that fit their panels."""
from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from verifier.report import statement_map as rf
from verifier.report.papers import _anchor, later_papers
from verifier.statements import registry


def _draw(data, size=(13, 5.2)):
    fig = Figure(figsize=size, dpi=100)
    rf.draw_statement_map(fig, data)
    fig.savefig(__import__("io").BytesIO(), format="png")
    return fig


def _dana(statuses):
    registry.load_all()
    paper = next(p for p in later_papers() if p.key == "dana2025")
    return rf.statement_map_data(statuses, paper="dana2025", anchor=_anchor(paper))


def test_a_verified_statement_on_a_refuted_lemma_gets_a_note_and_a_mark():
    registry.load_all()
    ids = registry.PAPERS["dana2025"].statements
    statuses = {s: "verified" for s in ids}
    statuses.update(dana_lemma2="refuted, as declared", dana_thm1_eps0="inconclusive")
    data = _dana(statuses)
    notes = dict(data["notes"])
    assert "dana_corollary1" in notes and "dana_contrib1" in notes  # through Cor. 1
    assert "Lemma 2 (refuted, as declared)" in notes["dana_corollary1"] and "inconclusive" in notes["dana_corollary1"]
    assert "dana_prop2" not in notes and "dana_lemma2" not in notes  # verified on verified; not verified itself
    fig = _draw(data)
    assert fig.get_figheight() == pytest.approx(5.2 + len(notes) * rf.NOTE_LINE)
    texts = [t.get_text() for t in fig.texts]
    assert any(t.startswith("1. ") and "its proof uses" in t for t in texts)
    marks = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() != "node-label"]
    assert sorted(marks) == [str(k) for k in range(1, len(notes) + 1)]


def test_no_note_when_everything_is_verified():
    registry.load_all()
    data = _dana({s: "verified" for s in registry.PAPERS["dana2025"].statements})
    assert data["notes"] == []
    assert _draw(data).get_figheight() == pytest.approx(5.2)


@pytest.mark.parametrize("paper", ["mahdavi2024", "dana2025", "kajitsuka2025"])
def test_node_labels_fit_their_boxes(paper):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    registry.load_all()
    p = registry.PAPERS[paper]
    first = paper == next(iter(registry.PAPERS))
    data = rf.statement_map_data({s: "verified" for s in p.statements}, paper=paper,
                                 anchor="theorem1" if first else _anchor(p))
    fig = _draw(data, (15, 6.0) if first else (13, 5.2))
    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:
        box = abs(ax.transData.transform((rf.NODE_W, 0))[0] - ax.transData.transform((0, 0))[0])
        for t in ax.texts:
            if t.get_gid() == "node-label":
                assert t.get_window_extent(renderer).width <= box, (paper, t.get_text())
                assert t.get_fontsize() >= 4.5


@pytest.mark.parametrize("paper", ["mahdavi2024", "dana2025", "kajitsuka2025"])
def test_panel_titles_fit_their_panels(paper):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    registry.load_all()
    p = registry.PAPERS[paper]
    first = paper == next(iter(registry.PAPERS))
    statuses = {s: "verified" for s in p.statements}
    fig = _draw(rf.statement_map_data(statuses, paper=paper, anchor="theorem1" if first else _anchor(p)),
                (15, 6.0) if first else (13, 5.2))
    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:
        box = ax.title.get_window_extent(renderer)
        assert box.width <= ax.bbox.width and box.x0 >= 0 and box.x1 <= fig.bbox.width, ax.title.get_text()
