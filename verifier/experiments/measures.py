"""The measures and decision rules of the synthetic experiments, fixed before any run.

The paper's measure (Sec. 5.2, App. A) is the training accuracy (regression:
the MSE) at FIXED dataset sizes T, shared by every point of a sweep.  Here a
sweep's runs are grouped into one curve per T, each point the mean over seeds
with its standard error (error bars); the rules below read those curves.

Constants (stated before the run; changing them changes what "reproduced" means):

* :data:`R2_MIN` = 0.99: the paper's "R^2 >= 0.99 in all cases" of the best
  linear fit of the non-saturated part (Sec. 5.2, Fig. 2a);
* :data:`CEILING` = 0.99: a point whose mean accuracy is >= 0.99 is saturated
  (excluded from the fit, as the paper's "non-saturated part");
* :data:`MIN_POINTS` = 3: a curve with fewer non-saturated points has no fit
  and is not counted ("uninformative");
* :data:`SE_FACTOR` = 2: a difference of means counts only when it exceeds
  2 standard errors of the difference (seed-to-seed spread), otherwise it is
  "not significant" - a drop within it does not break monotonicity, a rise
  within it is no rise.

A status over curves: every informative curve passes -> "reproduced"; at
least half -> "partially reproduced"; fewer, or no informative curve -> "not
reproduced" (with the reason).

>>> c = {"x": [1, 2, 3, 4], "mean": [0.2, 0.4, 0.6, 1.0], "sem": [0.01] * 4}
>>> fit = linear_part(c)
>>> fit["points"], round(fit["r2"], 6)
(3, 1.0)
>>> monotone(c)["passes"], decide([True, True, False])[0]
(True, 'partially reproduced')
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

R2_MIN = 0.99
CEILING = 0.99
MIN_POINTS = 3
SE_FACTOR = 2.0
MSE_FLOOR = 1e-6  # regression: a point with MSE below it is memorized (saturated)


def curves(rows: list[dict], x: str, value: str, *, by: str = "T") -> dict:
    """{T: {"x", "mean", "std", "sem", "seeds", "values"}} from per-run rows (one row per
    run with keys ``x``, ``by``, ``value``, "seed"); x sorted; sem = std / sqrt(seeds)."""
    groups: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[r[by]][r[x]].append(float(r[value]))
    out = {}
    for key in sorted(groups):
        xs = sorted(groups[key])
        vals = [groups[key][v] for v in xs]
        std = [float(np.std(v, ddof=1)) if len(v) > 1 else 0.0 for v in vals]
        out[key] = {"x": xs, "mean": [float(np.mean(v)) for v in vals], "std": std,
                    "sem": [s / math.sqrt(len(v)) for s, v in zip(std, vals)],
                    "seeds": [len(v) for v in vals], "values": vals}
    return out


def linear_fit(x, y) -> dict:
    """Least-squares line y = slope x + intercept and its R^2 (1 for an exact line)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope, icpt = np.polyfit(x, y, 1)
    ss = float(np.sum((y - y.mean()) ** 2))
    resid = float(np.sum((y - (slope * x + icpt)) ** 2))
    return {"slope": float(slope), "intercept": float(icpt), "r2": 1.0 - resid / ss if ss > 0 else 0.0,
            "points": int(len(x))}


def linear_part(curve: dict, *, ceiling: float = CEILING) -> dict | None:
    """The best linear fit of the non-saturated part (mean < ceiling); None with fewer
    than MIN_POINTS such points."""
    pts = [(x, m) for x, m in zip(curve["x"], curve["mean"]) if m < ceiling]
    if len(pts) < MIN_POINTS:
        return None
    fit = linear_fit(*zip(*pts))
    fit["x"] = [p[0] for p in pts]
    return fit


def _diff_se(curve, i, j) -> float:
    return math.hypot(curve["sem"][i], curve["sem"][j])


def monotone(curve: dict, *, increasing: bool = True, saturated=None) -> dict:
    """Non-decreasing (or non-increasing) within SE_FACTOR standard errors, AND a
    significant overall change from the first to the last point.  A curve whose
    points are all saturated (``saturated(mean)`` true) is uninformative."""
    sign = 1.0 if increasing else -1.0
    m = curve["mean"]
    sat = saturated or (lambda v: v >= CEILING if increasing else v <= MSE_FLOOR)
    informative = not all(sat(v) for v in m) and len(m) >= 2
    drops = [sign * (m[i] - m[i + 1]) - SE_FACTOR * _diff_se(curve, i, i + 1) for i in range(len(m) - 1)]
    worst = max(drops) if drops else 0.0
    rise = sign * (m[-1] - m[0]) if m else 0.0
    rise_sig = rise > SE_FACTOR * _diff_se(curve, 0, len(m) - 1) if len(m) >= 2 else False
    return {"informative": informative, "no_significant_drop": worst <= 0.0, "worst_excess_drop": worst,
            "overall_change": rise, "change_significant": bool(rise_sig),
            "passes": bool(informative and worst <= 0.0 and rise_sig)}


def knee(curve: dict, at) -> dict:
    """Fig. 2c's claim on one curve: a significant rise from the smallest x up to
    ``at`` (= n) AND no significant rise beyond it (max over x > at vs x = at).
    Flat everywhere ("d_h does not matter") fails the first half."""
    xs, m = curve["x"], curve["mean"]
    if at not in xs or xs[0] >= at or xs[-1] <= at:
        return {"informative": False, "passes": False, "why": f"grid lacks points below, at and above {at}"}
    k = xs.index(at)
    rise = m[k] - m[0]
    rise_sig = rise > SE_FACTOR * _diff_se(curve, 0, k)
    j = max(range(k + 1, len(xs)), key=lambda i: m[i] - SE_FACTOR * _diff_se(curve, k, i))
    beyond = m[j] - m[k]
    beyond_sig = beyond > SE_FACTOR * _diff_se(curve, k, j)
    informative = not all(v >= CEILING for v in m)
    return {"informative": informative, "rise_up_to_n": rise, "rise_significant": bool(rise_sig),
            "gain_beyond_n": beyond, "gain_beyond_significant": bool(beyond_sig), "at_x_beyond": xs[j],
            "passes": bool(informative and rise_sig and not beyond_sig)}


def decide(passes: list[bool], *, none_why: str = "no informative curve at this scale") -> tuple[str, str]:
    """(status, why) from per-curve outcomes of the informative curves."""
    if not passes:
        return "not reproduced", none_why
    k, total = sum(passes), len(passes)
    if k == total:
        return "reproduced", f"all {total} informative curves pass"
    if 2 * k >= total:
        return "partially reproduced", f"{k} of {total} informative curves pass"
    return "not reproduced", f"only {k} of {total} informative curves pass"
