"""Figures of the synthetic experiments (matplotlib, Agg): PNG bytes for the report.

A sweep panel shows the paper's measure at each fixed T (one colour per T,
mean over seeds with +-1 standard error bars): classification as memorized
examples (training accuracy x T, the dotted line at T is 100%), regression as
the MSE on a log axis.  On the same axes: the construction's count H(r-1)+1
(filled markers: certified on this data by an arb minor; hollow: the formula,
not built at this scale) and the rank caps (Prop. 2's H(n-1)+1 for a shared
context; Hd and App. I.1's conjectured H(d-1)+1 for contexts in general position).
"""
from __future__ import annotations

import io

import numpy as np

LABEL = {"H": "heads H", "n": "context size n", "d_h": "key/query dimension d_h"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    _pyplot().close(fig)
    return buf.getvalue()


def _caps(ax, out, xs):
    fixed, key = out["fixed"], out["key"]

    def at(x, name):
        v = dict(fixed, **{key: x})
        return v[name]

    if out["task"] != "classification":
        return
    cons = out["constructive"]
    if out["context"] == "shared":  # a cap on rank Z, i.e. on fitting ANY labels: argmax accuracy may pass it
        ax.plot(xs, [at(x, "H") * (at(x, "n") - 1) + 1 for x in xs], color="0.6", lw=4, alpha=0.6, zorder=0,
                label="Prop. 2: rank Z <= H(n-1)+1, a cap on fitting\nANY labels; trained argmax counts may exceed it")
    cx = [c[key] for c in cons]
    cy = [c["count"] for c in cons]
    ax.plot(cx, cy, "k-", lw=1.2, label="construction H(r-1)+1")
    done = [(x, y) for x, y, c in zip(cx, cy, cons) if c["certified"]]
    if done:
        ax.plot(*zip(*done), "ko", ms=5, label="  certified on this data (arb)")
    if out["context"] != "shared":
        d = fixed["d"]
        ax.plot(xs, [at(x, "H") * d for x in xs], "k--", lw=0.9, label="Hd (columns of Z)")
        ax.plot(xs, [at(x, "H") * (d - 1) + 1 for x in xs], "k-.", lw=0.9, label="App. I.1 conjecture H(d-1)+1")


def draw_panel(ax, out, *, fits=None, title=""):
    """One sweep on ``ax``; ``fits``: {T: text} appended to the legend entries."""
    key = out["key"]
    clf = out["task"] == "classification"
    data = out["count_curves"] if clf else out["curves"]
    colours = _pyplot().cm.viridis(np.linspace(0.1, 0.85, max(len(data), 1)))
    xs = out["values"]
    for (T, c), col in zip(sorted(data.items(), key=lambda kv: int(kv[0])), colours):
        label = f"T = {T}" + (f" ({fits[T]})" if fits and T in fits else "")
        ax.errorbar(c["x"], c["mean"], yerr=c["sem"], color=col, marker="s", ms=3.5, capsize=2.5, lw=1.2,
                    label=label)
        if clf:
            ax.axhline(int(T), color=col, ls=":", lw=0.8)
    _caps(ax, out, xs)
    if key == "d_h":
        ax.axvline(out["fixed"]["n"], color="grey", lw=0.8, ls="-", alpha=0.5)
    if not clf:
        ax.set_yscale("log")
    ax.set_xlabel(LABEL[key])
    ax.set_ylabel("memorized examples (train acc. x T)" if clf else "training MSE")
    fixed = ", ".join(f"{k}={v}" for k, v in out["fixed"].items())
    ax.set_title(title or f"{fixed}, {out['context']} context", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, loc="best")


def sweep_figure(panels: list[tuple[dict, dict | None, str]], suptitle: str) -> bytes:
    """panels: (sweep output, fits-by-T text or None, panel title)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False)
    for ax, (out, fits, title) in zip(axes[0], panels):
        draw_panel(ax, out, fits=fits, title=title)
    fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    return png(fig)


def saturation_figure(stats: list[dict], threshold: float) -> bytes:
    """Fig. 3: per H, trained (left) and constructed (right): histogram of the number of
    saturated heads per example, and of the largest softmax weight per (example, head)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(stats), 2, figsize=(10, 3.2 * len(stats)), squeeze=False)
    for row, st in zip(axes, stats):
        H = st["H"]
        bins = np.arange(H + 2) - 0.5
        for who, colour in (("trained", "C0"), ("constructed", "C3")):
            s = st.get(who)
            if not s:
                continue
            row[0].hist(s["saturated_heads_per_example"], bins=bins, alpha=0.55, color=colour, density=True,
                        label=f"{who} (T={s['T']})")
            row[1].hist(s["max_softmax"], bins=np.linspace(0, 1, 41), alpha=0.55, color=colour, density=True,
                        label=who)
        row[0].set_xlabel(f"saturated heads per example (of H = {H})")
        row[0].set_ylabel("share of examples")
        row[1].axvline(threshold, color="k", ls="--", lw=0.8, label=f"saturated: >= {threshold:g}")
        row[1].set_xlabel("largest softmax weight per (example, head)")
        row[1].set_ylabel("density (log scale)")
        row[1].set_yscale("log")
        for ax in row:
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
    fig.tight_layout()
    return png(fig)
