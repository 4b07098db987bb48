"""The report's figures: the statement map (:mod:`verifier.report.statement_map`) and what the
constructions reach.

Each figure is computed first (:func:`figure_data`: plain numbers, stored in
``results.json`` and deterministic for a seed) and drawn second
(:func:`draw`: a PNG made with matplotlib's object API, no pyplot state, no
graphviz).  The numbers of every figure but the statement map come from the
checker modules through the registry (``@figure``): they illustrate the
constructions, while the verdicts come from the checkers alone.
"""
from __future__ import annotations

import io

import numpy as np

from verifier.report.statement_map import draw_statement_map, statement_map_data
from verifier.statements import registry

# -- rank of Z reached by the construction --------------------------------------

def draw_rank_vs_heads(fig, data):
    ax = fig.subplots()
    H = np.array(data["heads"])
    n = data["n"]
    ax.plot(H, data["T"], ":", color="#9e9e9e", lw=1.2, label="T (examples)")
    ax.plot(H, data["cap_prop2"], "k--", lw=1.2, label="Prop. 2 cap H(n-1)+1 (shared contexts) = Thm. 1 bound H(r-1)+1")
    ax.plot(H, data["construction_shared"], "o", mfc="none", mec="#2e7d32", mew=1.6, ms=13,
            label="construction, shared contexts, d_h = n (numerical rank)")
    ax.plot(H + 0.12, data["random_weights_shared"], "^", color="#ef6c00", ms=6,
            label="random weights, shared contexts (drawn beside)")
    ax.plot(H, data["construction_shared_certified"], "x", color="black", ms=8, mew=2, zorder=5,
            label="construction: rank(Z) >= this, certified (arb minor)")
    ax.plot(H, data["random_weights_random_contexts"], "v", color="#8e24aa", ms=6,
            label="random weights, random contexts (no cap)")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("heads H")
    ax.set_ylabel("rank(Z) (numerical)")
    ax.set_title(f"rank(Z) reached vs H  (n = d_h = {n}, d = {data['d']}; T = H(n-1)+4 examples, "
                 "3 more than the cap)", fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left")
    ax.grid(alpha=0.3)


def draw_rank_sweeps(fig, data):
    axes = fig.subplots(1, 2, sharey=True)
    for ax, key, xname, fixed in ((axes[0], "n_sweep", "n", "d_h"), (axes[1], "dh_sweep", "d_h", "n")):
        s = data[key]
        ax.plot(s[xname], s["bound"], "k--", lw=1.2, label="H(min(n, d_h)-1)+1")
        ax.plot(s[xname], s["rank"], "o", color="#2e7d32", ms=8, label="construction (numerical rank)")
        ax.axvline(s[fixed], color="#9e9e9e", lw=0.8)
        ax.set_xlabel(xname)
        ax.set_ylabel("rank(Z) (numerical)")
        ax.tick_params(labelleft=True)  # the same scale, read on each panel
        ax.set_title(f"H = {data['H']}, {fixed} = {s[fixed]}, d = {s['d']}", fontsize=9.5)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")


# -- Lemma 4: c0(eps) -----------------------------------------------------------

def draw_saturation(fig, data):
    axes = fig.subplots(1, 2)
    eps = np.array(data["eps"])
    for ex in data["examples"]:
        lab = f"t = {ex['t']}: R = {ex['R']:.2f}, g = {ex['g']:.2f}"
        axes[0].semilogx(eps, ex["c0"], "-o", ms=3, label=lab)
        axes[1].loglog(eps, np.maximum(ex["error_at_c0"], 1e-300), "o", ms=4, label=lab)
    axes[0].set_xlabel("eps")
    axes[0].set_ylabel("c0(eps) = (R + ln(2(n-1)/eps)) / g")
    axes[0].set_title("Lemma 4: the saturation constant", fontsize=9.5)
    axes[1].loglog(eps, eps, "k--", lw=1, label="eps (the promise)")
    axes[1].set_xlabel("eps")
    axes[1].set_ylabel("||softmax - one-hot||_1 at c = c0(eps)")
    axes[1].set_title("error reached (float64) stays below eps", fontsize=9.5)
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)


# -- App. B.2: certified margins per head --------------------------------------

def draw_margins(fig, data):
    ax = fig.subplots()
    h = np.array(data["heads"], dtype=float)
    wdt = 0.26
    ax.bar(h - wdt, data["sigma_min_certified_lower"], wdt, color="#2e7d32", label="sigma_min^+(Y_inf), certified lower bound")
    ax.bar(h, data["perturbation_bound"], wdt, color="#1565c0", label="a-priori bound x_max eps kappa on ||Y_c - Y_inf||_2")
    ax.bar(h + wdt, np.maximum(data["perturbation_actual"], 1e-300), wdt, color="#ef6c00",
           label="||Y_c - Y_inf||_2 measured (float64)")
    ax.set_yscale("log")
    ax.set_xticks(h, [f"head {int(x)}\nc = {c:.3g}" for x, c in zip(h, data["c"])], fontsize=8)
    ax.set_xlabel("head h (with the saturation constant c Lemma 4 chose for it)")
    ax.set_ylabel("spectral norm")
    ax.set_title(f"App. B.2: perturbation < sigma_min^+ per head (Lemma 5)  (H = {data['H']}, "
                 f"n = {data['n']}, d = {data['d']}, shared contexts)", fontsize=9.5)
    ax.legend(fontsize=7.5, loc="upper center", ncol=2, bbox_to_anchor=(0.5, -0.13), frameon=False)  # below: no bar hidden
    ax.grid(alpha=0.3, axis="y", which="both")


def draw_ks_ffn_parameters(fig, data):
    """Kajitsuka & Sato reconstruction: exact P against N (log-log), c sqrt(N log N), P = N."""
    ax = fig.add_subplot(1, 1, 1)
    N, P = data["N"], data["P"]
    ok = [v == "verified" for v in data["verdict"]]
    ax.loglog(N, P, "o-", color="#1565c0", label="P of our construction (exact; each point: memorization certified)")
    if not all(ok):
        ax.loglog([n for n, k in zip(N, ok) if not k], [p for p, k in zip(P, ok) if not k], "x", color="#c62828",
                  label="not certified")
    ax.loglog(N, data["reference"], "--", color="#616161", label="c sqrt(N log2 N)")
    ax.loglog(N, N, ":", color="#9e9e9e", label="P = N")
    ax.set_xlabel("N (ids memorized)")
    ax.set_ylabel("parameters")
    ax.legend(fontsize=7.5, frameon=False)
    ax.grid(alpha=0.3, which="both")


# -- the list the report draws ---------------------------------------------------

#: What the report draws, in order: name -> (figure size in inches, drawer).
#: The numbers come from the registry (``@figure`` in a checker module); the
#: statement map alone is the report's own (it draws the registry itself).
DRAWERS = {
    "statement_map": ((15, 6.0), draw_statement_map),
    "rank_vs_heads": ((8.5, 5.2), draw_rank_vs_heads),
    "rank_sweeps": ((10.5, 4.3), draw_rank_sweeps),
    "saturation": ((10.5, 4.3), draw_saturation),
    "margins": ((8.5, 4.8), draw_margins),
    "ks_ffn_parameters": ((7.5, 4.6), draw_ks_ffn_parameters),
}

STATEMENT_MAP_TITLE = 'Statement map'
STATEMENT_MAP_CAPTION = (
    'Every statement of the paper as a node, coloured by its verdict in this run; an arrow A ->'
    " B means B's proof uses A. Hatched: no checker yet (never counted as passing).")


def figure_spec(name: str) -> tuple[str, str]:
    """(title, caption) of figure ``name``: the statement map's are the
    report's own, the others come with their data from the registry."""
    if name == "statement_map":
        return STATEMENT_MAP_TITLE, STATEMENT_MAP_CAPTION
    entry = registry.figure_data(name)
    return entry.title, entry.caption


def figure_data(name: str, *, seed: int, statuses: dict[str, str]) -> dict:
    """The figure's numbers: the statement map from the registry, the others
    from the checker module that registered them."""
    if name == "statement_map":
        return statement_map_data(statuses)
    return registry.figure_data(name).data(seed)


def draw(name: str, data: dict | None, *, error: str = "") -> bytes:
    """PNG bytes of figure ``name``; a figure whose data failed becomes a
    placeholder PNG that says so (the report never loses an image slot)."""
    from matplotlib.figure import Figure

    size, drawer = DRAWERS[name]
    fig = Figure(figsize=size, dpi=100)
    if error or data is None:
        title = STATEMENT_MAP_TITLE if name == "statement_map" else name
        try:
            title = figure_spec(name)[0]
        except KeyError:
            pass
        fig.text(0.5, 0.5, f"{title}: figure failed\n{error}"[:400], ha="center", va="center",
                 color="#c62828", wrap=True)
    else:
        drawer(fig, data)
        if name != "statement_map":  # the map lays itself out (its notes under the legend)
            fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
