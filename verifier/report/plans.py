"""Which instances the report runs: each statement's default instance first,
then distinct draws around it (deterministic in the seed and the statement
id), and the exact ``mha-verify check`` command that reproduces each.

Quick: 1 per statement; default: 30; thorough: 200.  A paper with its own
instance options varies them with its own ``vary``; the first paper's draws
vary H, n, d, d_h, the context kind (random <-> uniform only) and the data
seed in small ranges (n < d kept; a statement's own context / degenerate
kind kept).

>>> plan = instance_plan("assumption2", mode="default", seed=0)
>>> len(plan), plan[0]["seed"], all(p["n"] < p["d"] for p in plan)
(30, 0, True)
>>> reproduce_command("lemma2", {"H": 1, "n": 3, "d": 5, "d_h": None, "T": 4, "seed": 0})
'mha-verify check lemma2 --H 1 --n 3 --d 5 --T 4 --seed 0'
"""
from __future__ import annotations

import itertools
import json
import zlib

import numpy as np

from verifier.statements import registry

MODES = {"quick": 1, "default": 30, "thorough": 200}
_CLI_FLAGS = (("H", "--H"), ("n", "--n"), ("d", "--d"), ("d_h", "--dh"), ("d_v", "--dv"),
              ("d_out", "--dout"), ("T", "--T"), ("context", "--context"),
              ("degenerate", "--degenerate"), ("seed", "--seed"))


def _capacity(o: dict) -> int:
    return o["H"] * (min(o["n"], o["d_h"] or o["n"]) - 1) + 1


def _vary(base: dict, rng: np.random.Generator) -> dict:
    o = dict(base)
    o["H"] = int(max(1, base["H"] + rng.integers(-1, 2)))
    o["n"] = int(max(2, base["n"] + rng.integers(-1, 2)))
    gap = max(1, base["d"] - base["n"])
    o["d"] = o["n"] + int(max(1, gap + rng.integers(-1, 2)))
    if base["d_h"] is None:
        o["d_h"] = [None, None, max(1, o["n"] - 1), o["n"] + 1][int(rng.integers(4))]
    else:
        o["d_h"] = int(max(1, base["d_h"] + rng.integers(-1, 2)))
    if base["context"] == "random":
        o["context"] = ("random", "random", "uniform")[int(rng.integers(3))]
    if base["T"] is not None:  # keep the statement's T relative to the capacity
        o["T"] = int(max(1, base["T"] + _capacity(o) - _capacity(base)))
    o["seed"] = int(rng.integers(1, 2**31 - 1))
    return o


def iter_plans(sid: str, *, seed: int):
    """Instance options for ``sid``, deterministic in ``seed`` and ``sid``:
    the default instance first, then distinct draws around it."""
    st = registry.load_all()[sid]
    own = registry.instance_options(sid)  # a paper's own options (None: the first paper's)
    keys, vary = (own.defaults, own.vary or _vary) if own else (registry.DEFAULT_OPTIONS, _vary)
    base = {k: v for k, v in st.options(seed=seed).items() if k in keys}
    base["seed"] = int(seed)
    yield base
    seen = {json.dumps(base, sort_keys=True)}
    rng = np.random.default_rng([int(seed), zlib.crc32(sid.encode())])
    for _ in range(100_000):
        o = vary(base, rng)
        key = json.dumps(o, sort_keys=True)
        if key not in seen:
            seen.add(key)
            yield o


def instance_plan(sid: str, *, mode: str, seed: int) -> list[dict]:
    """The first ``MODES[mode]`` instances of :func:`iter_plans`."""
    return list(itertools.islice(iter_plans(sid, seed=seed), MODES[mode]))


def reproduce_command(sid: str, options: dict) -> str:
    """The exact ``mha-verify check`` line for an instance (defaults omitted
    only where the value is None)."""
    parts = ["mha-verify", "check", sid]
    own = registry.instance_options(sid) if sid in registry.REGISTRY else None
    flags = tuple((f.key, f.flag) for f in own.flags) if own else _CLI_FLAGS  # each paper's own flags
    for key, flag in flags:
        if options.get(key) is not None:
            parts += [flag, str(options[key])]
    return " ".join(parts)
