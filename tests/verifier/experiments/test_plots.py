"""The experiments' figures say what they show: labelled axes, and a cap line whose legend says what it caps."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from verifier.experiments import plots


def _sweep(context="shared"):
    curve = {"x": [1, 2, 4], "mean": [10.0, 20.0, 30.0], "sem": [1.0, 1.0, 1.0]}
    return {"key": "H", "values": [1, 2, 4], "fixed": {"n": 4, "d_h": 8, "d": 8}, "context": context,
            "task": "classification", "count_curves": {"32": curve}, "curves": {"32": curve},
            "constructive": [{"H": h, "count": 3 * h + 1, "certified": True} for h in (1, 2, 4)]}


def test_the_prop2_cap_says_it_caps_fitting_any_labels_not_argmax_counts():
    ax = Figure().subplots()
    plots.draw_panel(ax, _sweep())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    cap = next(t for t in labels if t.startswith("Prop. 2"))
    assert "ANY labels" in cap and "may exceed it" in cap
    assert ax.get_xlabel() and ax.get_ylabel()


def test_saturation_figure_labels_every_axes(monkeypatch):
    monkeypatch.setattr(plots, "png", lambda fig: fig)  # the figure itself, not its bytes
    rng = np.random.default_rng(0)
    stats = [{"H": H, "trained": {"T": 8, "saturated_heads_per_example": rng.integers(0, H + 1, 20).tolist(),
                                  "max_softmax": rng.uniform(0.2, 1.0, 20 * H).tolist()}} for H in (2, 4)]
    fig = plots.saturation_figure(stats, 0.99)
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel(), ax.get_title()
    right = fig.axes[1]
    assert "density" in right.get_ylabel() and any("0.99" in t.get_text() for t in right.get_legend().get_texts())
