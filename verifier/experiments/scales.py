"""The grids of the synthetic experiments at each scale, fixed in code before any run.

``paper`` is the authors' setting (App. A and their public code), a fixed step count: d = 64,
H in {1, 5, 10, 20, ..., 60} at n = 32; n in {1, 5, 10, 20, ..., 60} at H = 20;
d_h in 10..64 at H = 30, n = 32; Adam lr 1e-3, batch 256, max(500 epochs,
50,000) steps (300,000 for the d_h sweep and the saturation runs).  Their
dataset sizes are not in the paper; ours are a fixed grid of T (powers of two
times 500 up to 16,000), the same for every sweep value: it is meant for a GPU.

``cpu`` (the report's default) keeps the model's shape at d = 16, n = 8, 3 seeds,
T in {64, 128, 256} and trains every run of Fig. 2a-c, 4 and 5 TO A PLATEAU, not for a
fixed count: full batch (batch 256 >= T), Adam at lr 1e-2 (10x the paper's), the
rule of :data:`CPU_PLATEAU` (:mod:`verifier.experiments.plateau`: checked every 500
steps; a window that gains at most max(1 example, 1% of T) multiplies the learning
rate by 0.3, the third such window stops the run, converged), memorized runs stop at
once, a cap of 20,000 steps (a run stopped there did not converge: its claim is
inconclusive).  Fig. 3 keeps a fixed count (2,000 steps at lr 1e-2) and picks its T
by memorization.  ``quick`` is a smoke test (seconds; plateau window 50, cap 300);
``thorough`` is ``cpu`` with 5 seeds, 7 points per sweep, a plateau window of 1,000
steps and a cap of 40,000 (Fig. 3: 8,000 steps at lr 5e-3).  The dataset sizes never
depend on a constructive count: a T grid is shared by every point of a sweep (the
paper's measure: accuracy at fixed T).

>>> c = SWEEPS["cpu"]["fig2a"]
>>> c.key, c.points()[0], len(c.seeds) >= 3
('H', (1, 8, 16), True)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from verifier.experiments.engine import Recipe
from verifier.experiments.plateau import Plateau


@dataclass(frozen=True)
class Sweep:
    """One panel: ``key`` in ("H", "n", "d_h") takes ``values``; the other two are
    fixed (``d_h=None``: d_h = d, the authors' default)."""

    key: str
    values: tuple
    T: tuple
    seeds: tuple
    d: int
    H: int
    n: int
    d_h: int | None = None
    context: str = "shared"
    task: str = "classification"
    classes: int = 100
    recipe: Recipe = field(default_factory=Recipe)
    construct_up_to: int = 200  # run + certify Prop. 1's construction when H(r-1)+1 <= this

    def points(self) -> list[tuple[int, int, int]]:
        """(H, n, d_h) for every sweep value."""
        out = []
        for v in self.values:
            p = {"H": self.H, "n": self.n, "d_h": self.d if self.d_h is None else self.d_h, self.key: v}
            out.append((p["H"], p["n"], p["d_h"]))
        return out


@dataclass(frozen=True)
class Saturation:
    """Fig. 3: trained models at ``H`` heads on a shared context; the T used per H is the
    largest of ``T`` that every seed memorizes perfectly (App. H's procedure)."""

    H: tuple
    T: tuple
    seeds: tuple
    d: int
    n: int
    classes: int = 100
    recipe: Recipe = field(default_factory=Recipe)
    threshold: float = 0.99


CPU_PLATEAU = Plateau(window=500, patience=3, decay=0.3)
CPU_STEP_CAP = 20_000
THOROUGH_PLATEAU = Plateau(window=1000, patience=3, decay=0.3)
THOROUGH_STEP_CAP = 40_000
_QUICK = Recipe(lr=1e-2, batch=256, epochs=0, min_steps=0, max_steps=300, eval_every=25,
                plateau=Plateau(window=50, patience=2, decay=0.3))
_CPU = Recipe(lr=1e-2, batch=256, epochs=0, min_steps=0, max_steps=CPU_STEP_CAP, eval_every=100,
              plateau=CPU_PLATEAU)
_THOROUGH = replace(_CPU, max_steps=THOROUGH_STEP_CAP, plateau=THOROUGH_PLATEAU)
_FIXED_QUICK = Recipe(lr=1e-2, batch=256, epochs=0, min_steps=100, eval_every=50)  # Fig. 3: a fixed count
_FIXED_CPU = Recipe(lr=1e-2, batch=256, epochs=500, min_steps=500, eval_every=100)
_FIXED_THOROUGH = replace(_FIXED_CPU, min_steps=4000, lr=5e-3, eval_every=250)
_PAPER = Recipe(lr=1e-3, batch=256, epochs=500, min_steps=50_000, eval_every=500)
_PAPER_LONG = replace(_PAPER, min_steps=300_000)


def _family(*, d, n, d_h, H_values, n_values, H_for_n, dh_values, H_for_dh, T, seeds, recipe, long_recipe,
            construct_up_to):
    base = dict(T=T, seeds=seeds, d=d, construct_up_to=construct_up_to)
    out = {
        "fig2a": Sweep("H", H_values, H=1, n=n, d_h=d_h, recipe=recipe, **base),
        "fig2b": Sweep("n", n_values, H=H_for_n, n=n, d_h=d_h, recipe=recipe, **base),
        "fig2c": Sweep("d_h", dh_values, H=H_for_dh, n=n, d_h=d_h, recipe=long_recipe, **base),
    }
    out["fig4_H"] = replace(out["fig2a"], context="random")
    out["fig4_n"] = replace(out["fig2b"], context="random")
    out["fig5_H"] = replace(out["fig2a"], task="regression", classes=0)
    out["fig5_n"] = replace(out["fig2b"], task="regression", classes=0)
    return out


SWEEPS = {
    "quick": _family(d=8, n=4, d_h=None, H_values=(1, 2, 4), n_values=(1, 2, 4), H_for_n=2,
                     dh_values=(1, 4, 8), H_for_dh=2, T=(12, 24), seeds=(0, 1, 2), recipe=_QUICK,
                     long_recipe=_QUICK, construct_up_to=40),
    "cpu": _family(d=16, n=8, d_h=None, H_values=(1, 2, 3, 4, 6, 8), n_values=(1, 2, 4, 6, 8, 12), H_for_n=3,
                   dh_values=(2, 4, 6, 8, 12, 16), H_for_dh=3, T=(64, 128, 256), seeds=(0, 1, 2), recipe=_CPU,
                   long_recipe=_CPU, construct_up_to=60),
    "thorough": _family(d=16, n=8, d_h=None, H_values=(1, 2, 3, 4, 5, 6, 8), n_values=(1, 2, 4, 6, 8, 10, 12),
                        H_for_n=3, dh_values=(2, 4, 6, 8, 10, 12, 16), H_for_dh=3, T=(64, 128, 256),
                        seeds=(0, 1, 2, 3, 4), recipe=_THOROUGH, long_recipe=_THOROUGH, construct_up_to=60),
    "paper": _family(d=64, n=32, d_h=None, H_values=(1, 5, 10, 20, 30, 40, 50, 60),
                     n_values=(1, 5, 10, 20, 30, 40, 50, 60), H_for_n=20,
                     dh_values=(10, 16, 24, 32, 40, 48, 56, 64), H_for_dh=30,
                     T=(500, 1000, 2000, 4000, 8000, 16000), seeds=(0, 1, 2), recipe=_PAPER,
                     long_recipe=_PAPER_LONG, construct_up_to=0),
}

SATURATION = {
    "quick": Saturation(H=(2, 4), T=(8, 16), seeds=(0, 1, 2), d=8, n=4,
                        recipe=replace(_FIXED_QUICK, min_steps=150)),
    "cpu": Saturation(H=(4, 8), T=(32, 64, 96, 128), seeds=(0, 1, 2), d=16, n=8,
                      recipe=replace(_FIXED_CPU, min_steps=2000)),
    "thorough": Saturation(H=(4, 8), T=(32, 64, 96, 128, 160, 192), seeds=(0, 1, 2, 3, 4), d=16, n=8,
                           recipe=replace(_FIXED_THOROUGH, min_steps=8000)),
    "paper": Saturation(H=(4, 8), T=(550, 1300), seeds=(0, 1, 2), d=64, n=32, recipe=_PAPER_LONG),
}
