"""The experiments' figures say what they show: both axes of every panel labelled (read from matplotlib's Axes
objects, not from pixels), and a cap line whose legend says what it caps."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from verifier.experiments import capacity_probe, plots, table1, table3


def unlabelled(fig) -> list[tuple[int, str]]:
    """(panel, "x" or "y") for each axis of a drawn panel that has no label."""
    return [(k, which) for k, ax in enumerate(fig.axes) if ax.axison
            for which, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if not label.strip()]


@pytest.fixture
def figures(monkeypatch):
    """The figure objects themselves, not their PNG bytes: ``plots.png`` and ``table1._fig_png`` return them."""
    monkeypatch.setattr(plots, "png", lambda fig: fig)

    def one_panel(draw):
        fig = Figure()
        draw(fig.subplots())
        return fig

    monkeypatch.setattr(table1, "_fig_png", one_panel)
    monkeypatch.setattr(table3, "_fig_png", one_panel)


def _sweep(context="shared", task="classification", key="H"):
    curve = {"x": [1, 2, 4], "mean": [10.0, 20.0, 30.0], "sem": [1.0, 1.0, 1.0]}
    return {"key": key, "values": [1, 2, 4], "fixed": {"H": 2, "n": 4, "d_h": 8, "d": 8}, "context": context,
            "task": task, "count_curves": {"32": curve}, "curves": {"32": curve},
            "constructive": [{key: v, "count": 3 * v + 1, "certified": True} for v in (1, 2, 4)]}


def _kruskal(n=4):
    return {"n": n, "cap": n, "certified_upper": n - 1,
            "levels": [{"k": k, "independent": 10 - k, "sampled": 10} for k in range(1, n + 2)]}


def test_the_prop2_cap_says_it_caps_fitting_any_labels_not_argmax_counts():
    ax = Figure().subplots()
    plots.draw_panel(ax, _sweep())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    cap = next(t for t in labels if t.startswith("Prop. 2"))
    assert "ANY labels" in cap and "may exceed it" in cap
    assert ax.get_xlabel() and ax.get_ylabel()


def test_sweep_figures_label_every_panel(figures):
    fig = plots.sweep_figure([(_sweep("uniform"), None, "vs H"), (_sweep("uniform", key="n"), None, "vs n"),
                              (_sweep(task="regression", key="d_h"), None, "MSE")], "fig")
    assert len(fig.axes) == 3 and unlabelled(fig) == []


def test_saturation_figure_labels_every_panel(figures):
    """Fig. 3: the right-hand panels (largest softmax weight) too."""
    rng = np.random.default_rng(0)
    stats = [{"H": H, "trained": {"T": 8, "saturated_heads_per_example": rng.integers(0, H + 1, 20).tolist(),
                                  "max_softmax": rng.uniform(0.2, 1.0, 20 * H).tolist()}} for H in (2, 4)]
    fig = plots.saturation_figure(stats, 0.99)
    assert len(fig.axes) == 4 and unlabelled(fig) == []
    right = fig.axes[1]
    assert "density" in right.get_ylabel() and any("0.99" in t.get_text() for t in right.get_legend().get_texts())


def test_probe_and_real_data_figures_label_their_axes(figures):
    rows = [{"construction": 3, "random_weights": 3, "optimized": 3, "caps": {"Hd": 8}, "conjecture_H(d-1)+1": 7,
             "H": 2, "n": 2, "d": 4, "context": c} for c in ("shared", "uniform")]
    rho = {"min_rho": 1e-3, "tolerance": 1e-6}
    layers = {m: {"assumption2": rho, "assumption1": {"precision": rho}, "assumption3": {"precision": rho},
                  "kruskal_curve": _kruskal(), "d": 8} for m in ("embedding", "random ViT layer")}
    res = {"models": {"BERT": {"L1": {"kruskal_curve": _kruskal()}, "d": 8}}, "n": 4, "T": 10}
    for fig in (capacity_probe.probe_figure(rows), table1._margins_figure(layers, "quick").png,
                table1._kruskal_figure(layers, "quick").png, table3._figure(res, "quick").png):
        assert fig.axes and unlabelled(fig) == [], [ax.get_title() for ax in fig.axes]


def test_an_unlabelled_panel_is_found():
    """The check above can fail: a panel without a y label is named."""
    fig = Figure()
    a, b = fig.subplots(1, 2)
    for ax in (a, b):
        ax.set_xlabel("x")
    b.set_ylabel("y")
    assert unlabelled(fig) == [(0, "y")]
