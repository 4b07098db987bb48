"""Training to a plateau: the rule that stops a run and the learning-rate decay it drives,
stated here before any run (and quoted in each experiment's ``power`` field).

A run under a :class:`Plateau` schedule trains with Adam at ``lr`` (after a linear warm-up
over the first ``warmup`` of a window) and is checked every ``window`` steps.  At a
check its measure is compared with the measure at its previous check:

* classification: the training accuracy (at the kept checkpoint) gained at most
  max(1 example, ``gain`` of T);
* regression: the training MSE (at the kept checkpoint) fell by at most ``mse_fall``
  of its previous value.

Such a window is *flat*: the run's learning rate is multiplied by ``decay``; at its
``patience``-th flat window the run stops: **converged (plateau)**.  A run also stops,
converged, when it memorizes its data (100% training accuracy; regression: MSE below
``mse_memorized``).  A run that reaches ``max_steps`` first stops **at the cap: not
converged** (its claim is inconclusive at this scale).  The first check only records
the measure (there is no previous one), so a run that never memorizes trains at least
(``patience`` + 1) windows.

>>> p = Plateau(window=100, patience=2)
>>> p.flat(0.50, 0.505, T=64, task="classification"), p.flat(0.50, 0.53, T=64, task="classification")
(True, False)
>>> s = PlateauState(p, [64], "classification")
>>> [s.check(0, 0.5, 0.5) for _ in range(3)], s.lr_scale[0]
(['', '', 'plateau'], 0.3)
"""
from __future__ import annotations

from dataclasses import dataclass

STOPS = ("memorized", "plateau", "cap")


@dataclass(frozen=True)
class Plateau:
    window: int = 500
    gain: float = 0.01
    mse_fall: float = 0.05
    decay: float = 0.3
    patience: int = 3
    mse_memorized: float = 1e-6
    warmup: float = 0.05

    def flat(self, before: float, now: float, *, T: int, task: str) -> bool:
        """Whether a window from measure ``before`` to ``now`` is flat (see the module docstring)."""
        if task == "classification":
            return now - before <= max(1.0 / T, self.gain) + 1e-12
        return before - now <= self.mse_fall * before

    def stated(self, max_steps: int | None = None) -> str:
        cap = f"{max_steps:,}" if max_steps else "max_steps"
        return (f"plateau rule: every {self.window:,} steps a run's training accuracy (at its kept checkpoint) "
                f"must have gained more than max(1 example, {self.gain:.0%} of T) since the previous check "
                f"(regression: its MSE fallen by more than {self.mse_fall:.0%}); a flat window multiplies its "
                f"Adam learning rate by {self.decay:g}, flat window number {self.patience} stops it: converged. "
                f"Memorized (100% accuracy; regression MSE < {self.mse_memorized:g}) also counts as converged; "
                f"a run stopped at the cap of {cap} steps did not converge")


class PlateauState:
    """The per-run bookkeeping of :class:`Plateau` for runs with sizes ``T``."""

    def __init__(self, rule: Plateau, T: list[int], task: str):
        self.rule, self.T, self.task = rule, list(T), task
        self.ref: list[float | None] = [None] * len(T)
        self.flats = [0] * len(T)
        self.lr_scale = [1.0] * len(T)

    def check(self, m: int, accuracy: float | None, loss: float) -> str:
        """Run ``m``'s check with its kept measure: 'plateau' when it stops, else ''."""
        now = accuracy if self.task == "classification" else loss
        before, self.ref[m] = self.ref[m], now
        if before is None or not self.rule.flat(before, now, T=self.T[m], task=self.task):
            return ""
        self.flats[m] += 1
        if self.flats[m] >= self.rule.patience:
            return "plateau"
        self.lr_scale[m] *= self.rule.decay
        return ""

    def memorized(self, accuracy: float | None, loss: float) -> bool:
        if self.task == "classification":
            return accuracy is not None and accuracy >= 1.0
        return loss < self.rule.mse_memorized
