"""Every figure the report draws from the registry's numbers labels both axes of every panel (read from
matplotlib's Axes objects, not from pixels); the statement map, drawn without axes, is
tests/verifier/report/test_statement_map.py's."""
from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from verifier.report import figures as rf
from verifier.statements import registry


def unlabelled(fig) -> list[tuple[int, str]]:
    """(panel, "x" or "y") for each axis of a drawn panel (one with its axes on) that has no label."""
    return [(k, which) for k, ax in enumerate(fig.axes) if ax.axison
            for which, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if not label.strip()]


@pytest.mark.parametrize("name", [n for n in rf.DRAWERS if n != "statement_map"])
def test_every_report_figure_labels_both_axes_of_every_panel(name):
    registry.load_all()
    fig = Figure(figsize=rf.DRAWERS[name][0])
    rf.DRAWERS[name][1](fig, rf.figure_data(name, seed=0, statuses={}))
    assert [ax for ax in fig.axes if ax.axison]
    assert unlabelled(fig) == [], name


def test_an_unlabelled_panel_is_found():
    """The check above can fail: a second panel without a y label is named."""
    fig = Figure()
    a, b = fig.subplots(1, 2, sharey=True)
    for ax in (a, b):
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("x")
    a.set_ylabel("y")
    assert unlabelled(fig) == [(1, "y")]
