"""Sizes of the paper's setting up to those of real models, drawn with a bias
to both ends: H up to 60 (the largest H of the paper's Fig. 2a sweep), n up
to 197 and d up to 768 (ViT-base), d_h, a shared or a random (per-example)
context, and T = H(r-1)+1, the capacity of Theorem 1.

One draw is made of choices (:class:`SizeDraw`); the same code draws them
from a hypothesis ``draw`` (:func:`real_sizes`, a strategy that hypothesis
shrinks and replays) or from a seeded numpy generator
(:func:`seeded_real_sizes`: the same seed, the same draws, on any machine).
Each size is drawn in one of three modes, itself drawn: its smallest value,
its largest, or log-uniform in between (so both ends come up often, and a
shrinking hypothesis goes to the smallest).  ``d_h`` is drawn from
``[1 + ceil((n-1)/H), n]``, where T >= n: below, T < n query vectors cannot
have Kruskal rank n and Assumption 1 fails by counting alone.

A budget keeps a run feasible: ``cost(draw)`` (estimated seconds, from the
sizes alone) above ``cap`` shrinks the draw before anything runs -- d_h
first (T falls), then H, d and n halved in turn, the sizes pinned at
their largest last -- and the draw keeps what was first drawn (``drawn``).

>>> draws = seeded_real_sizes(seed=0, count=4, max_H=3, max_n=4, max_d=6)
>>> all(1 <= s.H <= 3 and 2 <= s.n <= 4 and s.n < s.d <= 6 and s.T == s.H * (s.r - 1) + 1 >= s.n
...     for s in draws)
True
>>> draws == seeded_real_sizes(seed=0, count=4, max_H=3, max_n=4, max_d=6)
True
"""
from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass, replace
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = ["SizeDraw", "REAL_MAX", "MODES", "real_sizes", "seeded_real_sizes", "draw_sizes", "fit_to_budget",
           "smallest_head_dim"]

#: the largest sizes: H of the paper's Fig. 2a sweep, n and d of ViT-base
REAL_MAX = {"H": 60, "n": 197, "d": 768}
CONTEXTS = ("shared", "random")
#: how one size is drawn: its smallest value, its largest, or log-uniform in between
MODES = ("low", "high", "between")
_STEPS = 1000  # resolution of the log-uniform draw


@dataclass(frozen=True)
class SizeDraw:
    """One drawn instance's sizes; ``seed`` draws its data
    (:func:`verifier.data.instances.make_instance`).  ``drawn`` holds the
    sizes first drawn when a budget shrank them (else None)."""

    H: int
    n: int
    d: int
    d_h: int
    context: str
    seed: int
    drawn: tuple | None = None

    @property
    def r(self) -> int:
        return min(self.n, self.d_h)

    @property
    def T(self) -> int:
        return self.H * (self.r - 1) + 1

    def options(self) -> dict:
        """The instance options (:func:`~verifier.data.instances.make_instance`), T = H(r-1)+1."""
        return {"H": self.H, "n": self.n, "d": self.d, "d_h": self.d_h, "context": self.context,
                "seed": self.seed}

    def to_dict(self) -> dict:
        out = asdict(self)
        out["T"] = self.T
        out["drawn"] = None if self.drawn is None else dict(zip(("H", "n", "d", "d_h"), self.drawn))
        return out


def smallest_head_dim(H: int, n: int) -> int:
    """The smallest d_h with T = H(min(n, d_h)-1)+1 >= n."""
    return min(n, 1 + -(-(n - 1) // H))


class _FromHypothesis:
    def __init__(self, draw):
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(st.integers(lo, hi))

    def element(self, options: tuple):
        return self._draw(st.sampled_from(options))


class _FromGenerator:
    def __init__(self, rng: np.random.Generator):
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return int(self._rng.integers(lo, hi + 1))

    def element(self, options: tuple):
        return options[int(self._rng.integers(len(options)))]


def _size(choose, lo: int, hi: int, mode: str | None) -> int:
    mode = mode or choose.element(MODES)
    if mode == "low" or lo == hi:
        return lo
    if mode == "high":
        return hi
    u = choose.integer(0, _STEPS)  # log-uniform: lo (hi/lo)^(u/STEPS), shrinks to lo
    return int(min(hi, max(lo, round(lo * (hi / lo) ** (u / _STEPS)))))


def draw_sizes(choose, *, max_H: int, max_n: int, max_d: int, contexts=CONTEXTS,
               pinned: dict | None = None) -> SizeDraw:
    """One draw from ``choose`` (``integer(lo, hi)``, ``element(options)``);
    ``pinned`` fixes the mode of some sizes (e.g. ``{"H": "high"}``) or the
    context (``{"context": "shared"}``)."""
    pinned = pinned or {}
    H = _size(choose, 1, max_H, pinned.get("H"))
    n = _size(choose, 2, max_n, pinned.get("n"))
    d = _size(choose, n + 1, max_d, pinned.get("d"))
    context = pinned.get("context") or choose.element(tuple(contexts))
    d_h = _size(choose, smallest_head_dim(H, n), n, pinned.get("d_h"))
    return SizeDraw(H, n, d, d_h, context, choose.integer(0, 2**31 - 1))


def _halve(s: SizeDraw, name: str) -> SizeDraw | None:
    """``s`` with one size halved (d_h kept within its range), or None at its smallest."""
    if name == "H" and s.H > 1:
        H = s.H // 2
        return replace(s, H=H, d_h=max(s.d_h, smallest_head_dim(H, s.n)))
    if name == "d" and s.d > s.n + 1:
        return replace(s, d=max(s.n + 1, s.d // 2))
    if name == "n" and s.n > 2:
        n = max(2, s.n // 2)
        return replace(s, n=n, d_h=max(smallest_head_dim(s.H, n), min(s.d_h, n)))
    return None


def fit_to_budget(s: SizeDraw, cost: Callable[[SizeDraw], float], cap: float, *, keep=()) -> SizeDraw:
    """``s`` shrunk until ``cost(s) <= cap``: d_h down to the smallest with
    T >= n, then H, d and n halved in turn (the names in ``keep`` only when
    nothing else is left).  ``cost`` must grow with each size."""
    first, turn = (s.H, s.n, s.d, s.d_h), 0
    for protect in (set(keep), set()):
        while cost(s) > cap:
            if s.d_h > smallest_head_dim(s.H, s.n):
                s = replace(s, d_h=s.d_h - 1)
                continue
            for k in range(3):
                name = ("H", "d", "n")[(turn + k) % 3]
                smaller = None if name in protect else _halve(s, name)
                if smaller is not None:
                    s, turn = smaller, turn + k + 1
                    break
            else:
                break
    return s if (s.H, s.n, s.d, s.d_h) == first else replace(s, drawn=first)


def _check_bounds(max_H: int, max_n: int, max_d: int) -> None:
    for name, v, lo in (("max_H", max_H, 1), ("max_n", max_n, 2), ("max_d", max_d, 3)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
            raise InvalidArgument(f"{name}={v!r} must be an int >= {lo}")
    if max_n >= max_d:
        raise InvalidArgument(f"max_n={max_n} >= max_d={max_d}: every draw needs n < d")


def real_sizes(*, max_H: int = REAL_MAX["H"], max_n: int = REAL_MAX["n"], max_d: int = REAL_MAX["d"],
               contexts=CONTEXTS, cost: Callable[[SizeDraw], float] | None = None,
               cap: float | None = None) -> st.SearchStrategy[SizeDraw]:
    """A hypothesis strategy of :class:`SizeDraw` (shrinks to the smallest
    sizes); with ``cost`` and ``cap``, fitted to the budget
    (:func:`fit_to_budget`)."""
    _check_bounds(max_H, max_n, max_d)
    if (cost is None) != (cap is None):
        raise InvalidArgument("cost and cap go together")

    @st.composite
    def _draw(draw) -> SizeDraw:
        s = draw_sizes(_FromHypothesis(draw), max_H=max_H, max_n=max_n, max_d=max_d, contexts=contexts)
        return s if cost is None else fit_to_budget(s, cost, cap)

    return _draw()


#: the first draws of a seeded profile pin a size at its largest (and one at
#: its smallest), so every axis reaches its end in a handful of draws
PINNED = ({"H": "high"}, {"n": "high", "d": "high", "context": "shared"},
          {"H": "low", "n": "low", "d": "low", "d_h": "low"})


def seeded_real_sizes(*, seed: int, count: int, max_H: int = REAL_MAX["H"], max_n: int = REAL_MAX["n"],
                      max_d: int = REAL_MAX["d"], contexts=CONTEXTS,
                      cost: Callable[[SizeDraw], float] | None = None, cap: float | None = None) -> list[SizeDraw]:
    """``count`` draws, deterministic in ``seed`` (numpy's PCG64, the same on
    every machine): the :data:`PINNED` ones first, then free draws; each
    fitted to ``cap`` (the pinned sizes shrunk last)."""
    _check_bounds(max_H, max_n, max_d)
    rng = np.random.default_rng([int(seed), zlib.crc32(b"real-sizes")])
    out = []
    for i in range(int(count)):
        pin = PINNED[i] if i < len(PINNED) else {}
        s = draw_sizes(_FromGenerator(rng), max_H=max_H, max_n=max_n, max_d=max_d, contexts=contexts, pinned=pin)
        if cost is not None:
            s = fit_to_budget(s, cost, cap, keep=[k for k, m in pin.items() if m == "high"])
        out.append(s)
    return out
