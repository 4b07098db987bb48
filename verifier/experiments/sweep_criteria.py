"""The sweeps' criteria (Fig. 2a-c, 4, 5) decided by the rule of
:mod:`verifier.experiments.power`: every part an interval over the seeds, compared with its
threshold or margin, three-valued.  Stated before the campaign (issue 35).

A sweep's curve is one fixed T; a point is one sweep value x; each seed gives one number per
point (training accuracy; regression: log10 of the MSE, floored at
:data:`~verifier.experiments.measures.MSE_FLOOR`).  The parts:

* **linear** (Fig. 2a, 4a): R^2 of the best line through the non-saturated part of the mean
  curve (mean accuracy < CEILING, at least MIN_POINTS points), a percentile bootstrap over the
  seeds (curves resampled whole): a threshold part at R2_MIN;
* **no drop** between consecutive points (Fig. 2b, 5): the paired per-seed drop, an
  equivalence test against the margin (MARGIN_ACCURACY; regression MARGIN_LOG_MSE in log10
  units of the MSE, i.e. a rise of the MSE by 25 %);
* **rise** from the first to the last point (Fig. 2b, 5) and up to d_h = n (Fig. 2c): the
  paired per-seed change, a positive part against the same margin;
* **no gain beyond n** (Fig. 2c): the paired gain from d_h = n to each d_h > n, an
  equivalence test;
* **linearity in n weakened** (Fig. 4b): R^2 of the random-context curve below R2_MIN
  (threshold part, read as a failure of "R^2 >= R2_MIN") and below the shared-context R^2
  (positive part on the bootstrap of the difference, seeds paired by index).

A curve passes when all its parts hold, fails when one fails; a curve saturated at every point
is uninformative.  The status over curves is :func:`~verifier.experiments.measures.decide`'s,
with undecided parts read both ways (:func:`~verifier.experiments.power.status_over`).

>>> c = {"x": [1, 2, 3], "values": [[0.2, 0.25, 0.2, 0.22, 0.21], [0.4, 0.45, 0.41, 0.42, 0.4],
...                                 [0.6, 0.65, 0.62, 0.61, 0.6]]}
>>> linear_parts(c)["linear"]["estimate"] > 0.99
True
"""
from __future__ import annotations

import math

from verifier.experiments import measures as ms
from verifier.experiments.power import (
    MARGIN_ACCURACY,
    MARGIN_LOG_MSE,
    bootstrap_interval,
    null_part,
    paired_interval,
    positive_part,
    status_over,
    threshold_part,
)

LOG_MARGIN = MARGIN_LOG_MSE / math.log(10)  # the margin in log10 units of the MSE


def values_of(curve: dict, task: str) -> list[list[float]]:
    """Per point, per seed (in the runs' seed order): accuracy, or log10 of the floored MSE."""
    if task == "classification":
        return [list(v) for v in curve["values"]]
    return [[math.log10(max(x, ms.MSE_FLOOR)) for x in v] for v in curve["values"]]


def _fsum_r2(xs: list[float], ys: list[float]) -> float:
    """R^2 of the least-squares line, with correctly rounded sums (the same on every machine)."""
    k = len(xs)
    mx, my = math.fsum(xs) / k, math.fsum(ys) / k
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = math.fsum((y - my) ** 2 for y in ys)
    if syy <= 0 or sxx <= 0:
        return 0.0
    return (sxy * sxy) / (sxx * syy)


def linear_r2(xs: list, per_seed: list[list[float]]) -> float:
    """R^2 of the non-saturated part of the mean curve of ``per_seed`` (seeds x points); NaN
    with fewer than MIN_POINTS non-saturated points (no fit)."""
    k = len(per_seed)
    means = [math.fsum(s[j] for s in per_seed) / k for j in range(len(xs))]
    pts = [(float(x), m) for x, m in zip(xs, means) if m < ms.CEILING]
    if len(pts) < ms.MIN_POINTS:
        return math.nan
    return _fsum_r2([p[0] for p in pts], [p[1] for p in pts])


def _seeds_major(vals: list[list[float]]) -> list[list[float]]:
    return [list(col) for col in zip(*vals)]


def linear_parts(curve: dict, task: str = "classification") -> dict:
    """{"linear": threshold part of R^2 >= R2_MIN} (undecided when no fit)."""
    per_seed = _seeds_major(values_of(curve, task))
    iv = bootstrap_interval(per_seed, lambda s: linear_r2(curve["x"], s))
    return {"linear": threshold_part(iv, ms.R2_MIN)}


def informative(curve: dict, task: str) -> bool:
    m = curve["mean"] if "mean" in curve else [sum(v) / len(v) for v in curve["values"]]
    return not all((v >= ms.CEILING) if task == "classification" else (v <= ms.MSE_FLOOR) for v in m)


def monotone_parts(curve: dict, task: str) -> dict:
    """Fig. 2b / 5: no drop (classification: accuracy; regression: no rise of log MSE) between
    consecutive points, and a rise (fall) from the first to the last point."""
    vals = values_of(curve, task)
    sign = 1.0 if task == "classification" else -1.0
    margin = MARGIN_ACCURACY if task == "classification" else LOG_MARGIN
    xs, parts = curve["x"], {}
    for i in range(len(xs) - 1):
        drop = paired_interval([sign * v for v in vals[i + 1]], [sign * v for v in vals[i]])
        parts[f"no drop {xs[i]}->{xs[i + 1]}"] = null_part(drop, margin)
    rise = paired_interval([sign * v for v in vals[0]], [sign * v for v in vals[-1]])
    parts[f"rise {xs[0]}->{xs[-1]}"] = positive_part(rise, margin)
    return parts


def knee_parts(curve: dict, at) -> dict:
    """Fig. 2c: a rise from the smallest d_h up to d_h = n, no gain from n to any d_h > n."""
    xs, vals = curve["x"], values_of(curve, "classification")
    if at not in xs or xs[0] >= at or xs[-1] <= at:
        return {}
    k = xs.index(at)
    parts = {f"rise {xs[0]}->{at}": positive_part(paired_interval(vals[0], vals[k]), MARGIN_ACCURACY)}
    for j in range(k + 1, len(xs)):
        parts[f"no gain {at}->{xs[j]}"] = null_part(paired_interval(vals[k], vals[j]), MARGIN_ACCURACY)
    return parts


def weakened_parts(random_curve: dict, shared_curve: dict) -> dict:
    """Fig. 4b: R^2 in n with random contexts below R2_MIN and below the shared-context R^2."""
    r, s = _seeds_major(values_of(random_curve, "classification")), _seeds_major(values_of(shared_curve, "classification"))
    k = min(len(r), len(s))
    pairs = list(zip(r[:k], s[:k]))
    below = bootstrap_interval(pairs, lambda p: ms.R2_MIN - linear_r2(random_curve["x"], [a for a, _ in p]))
    gap = bootstrap_interval(pairs, lambda p: linear_r2(shared_curve["x"], [b for _, b in p])
                             - linear_r2(random_curve["x"], [a for a, _ in p]))
    return {"R^2 (random) below R2_MIN": positive_part(below, 0.0),
            "R^2 (random) below R^2 (shared)": positive_part(gap, 0.0)}


def curve_decision(parts: dict) -> dict:
    """A curve as one part: fails when a part fails, holds when all hold, else undecided (its
    detectable effect the largest of its undecided parts')."""
    ds = [p["decision"] for p in parts.values()]
    det = [p["detectable"] for p in parts.values() if p["decision"] == "undecided" and p.get("detectable") is not None]
    d = "fails" if "fails" in ds else "holds" if all(x == "holds" for x in ds) else "undecided"
    return {"decision": d, "detectable": max(det) if det else None,
            "open": [k for k, p in parts.items() if p["decision"] == "undecided"]}


def curves_status(per_curve: dict[str, dict]) -> tuple[str, dict]:
    """(status or "undecided", info) over curves {name: parts} by measures.decide: each curve
    decided from its parts, every undecided curve read both ways (exact: the rule reads curves);
    a curve without parts is not counted.  ``info["open"]`` names the undecided parts."""
    curves_ = {c: curve_decision(parts) for c, parts in per_curve.items() if parts}
    status, info = status_over(curves_, lambda reading: ms.decide(list(reading.values()))[0])
    info["open"] = [f"{c}: {p}" for c in info["open"] for p in curves_[c]["open"]]
    return status, info


def parts_text(per_curve: dict[str, dict]) -> str:
    """One line per curve: each part's decision and interval."""
    out = []
    for c, parts in per_curve.items():
        bits = [f"{p} {q['decision']} [{q.get('lower', float('nan')):.3g}, {q.get('upper', float('nan')):.3g}]"
                for p, q in parts.items()]
        out.append(f"{c}: " + ("; ".join(bits) if bits else "uninformative"))
    return " | ".join(out)
