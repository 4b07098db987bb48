"""Power before verdict, both ways: the rule that decides every experiment's status,
stated here before any run (issue 35) and read from the stored results.

**The rule.**  Every number a criterion compares with a threshold is measured over seeds
(or over sampled subsets), so it is an interval, not a point.  A criterion's part is decided
only when its interval lies on one side of the part's threshold:

* a *positive* part ("grows", "a rise from the first to the last point") holds when its
  interval lies above 0, and fails when it lies below the stated margin of a meaningful
  effect (:func:`positive_part`);
* a part that *accepts a null* ("no drop", "no gain beyond n", "no change") is an
  equivalence test: two one-sided tests against the stated margin (TOST; one side for
  "no drop").  It holds when the interval lies inside the margin and fails when the
  interval lies wholly beyond 0 on the forbidden side (:func:`null_part`).  Low power
  widens the interval, so it can never make such a part pass;
* a *threshold* part ("R^2 >= 0.99") holds when its interval lies at or above the
  threshold and fails when it lies below it (:func:`threshold_part`);
* a part claimed for EVERY subset, read on N sampled subsets of which none fails, bounds the
  failing share by 1 - alpha^(1/N) (the one-sided exact binomial bound); it holds only when
  that bound is at most :data:`SUBSET_MARGIN` (:func:`sampled_part`); a certified part
  (an exact or ball certificate) is decided as it stands.

Otherwise the part is *undecided*.  A status is decided when it comes out the same with every
undecided part read both ways (:func:`status_over`); else it is "inconclusive", with the
number of seeds run and the effect it could have detected (the widest undecided interval's
half-width: an effect at least that far from the threshold would have been decided).
So a positive verdict needs its power as much as a negative one: :func:`judge` turns ANY
criterion status of runs whose power check did not pass into "inconclusive".

**Two machines.**  float32 training on another CPU follows other rounding and so, over
thousands of steps, other trajectories: another machine's runs are another sample of the same
seeds.  A decided status is one whose intervals clear their thresholds, so another sample
contradicts it only with probability about alpha; and where the runs of two machines are both
at hand, a status that differs between them was not decided: :func:`across_machines` makes it
"inconclusive".

**Intervals.**  A mean over k seeds: Student's t interval at one-sided level
:data:`ALPHA` / :data:`LOOKS` each side (Bonferroni over the stopping rule's looks, so that
adding seeds until decided does not inflate the error); a difference between two points of a
sweep: the same interval of the per-seed differences (paired: each seed's runs share its data).
A statistic of a whole curve (R^2): a percentile bootstrap over seeds (curves resampled whole,
:data:`BOOTSTRAP` resamples from a fixed generator).  Sums are ``math.fsum`` (correctly
rounded), so an interval is the same on every machine for the same stored numbers.

**Stopping rule** (the campaign, :mod:`verifier.experiments.campaign`): seeds are run in
batches of :data:`SEED_BATCH` (the batched engine, a batch per job); after each batch the
status is re-derived; the campaign stops adding seeds to an experiment when its power check
passes (status decided, at least :data:`MIN_SEEDS` seeds), at :data:`SEED_CAP` seeds, or at
the campaign's wall-time cap; at a cap an undecided status is "inconclusive" with its seeds and
detectable effect.

Constants (changing them changes what "decided" means):

* :data:`ALPHA` = 0.025 one-sided per part, spread over :data:`LOOKS` = SEED_CAP / SEED_BATCH;
* :data:`MIN_SEEDS` = 5, :data:`SEED_BATCH` = 8, :data:`SEED_CAP` = 32 seeds per point;
* margins of a meaningful effect: :data:`MARGIN_ACCURACY` = 0.05 of training accuracy;
  regression: :data:`MARGIN_LOG_MSE` = log(1.25) of the MSE's logarithm (a 25 % change);
* :data:`SUBSET_MARGIN` = 0.05: a property claimed for every subset holds on sampled evidence
  when the failing share is bounded below 5 % at level ALPHA;
* the plateau rule (:mod:`verifier.experiments.plateau`) and the easiest setting memorized by
  every seed (classification) are preconditions: without them neither verdict is powered.

>>> iv = mean_interval([0.30, 0.32, 0.31, 0.29, 0.33, 0.30, 0.31, 0.32])
>>> positive_part(iv, MARGIN_ACCURACY)["decision"], null_part(iv, MARGIN_ACCURACY)["decision"]
('holds', 'fails')
>>> null_part(mean_interval([0.01, -0.01, 0.0, 0.02, -0.02]), MARGIN_ACCURACY)["decision"]
'holds'
>>> null_part(mean_interval([0.9, -0.9, 0.0, 0.5, -0.5]), MARGIN_ACCURACY)["decision"]  # noisy: never passes
'undecided'
>>> ok = {"outcome": "passed", "checks": []}
>>> judge("not reproduced", "w", {**ok, "outcome": "not measured"}, "more steps")[0]
'inconclusive'
>>> judge("reproduced", "w", {**ok, "outcome": "failed"}, "more steps")[0]
'inconclusive'
>>> across_machines(["reproduced", "not reproduced"])
'inconclusive'
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

from scipy import stats

ALPHA = 0.025
MIN_SEEDS = 5
SEED_BATCH = 8
SEED_CAP = 32
LOOKS = SEED_CAP // SEED_BATCH
MARGIN_ACCURACY = 0.05
MARGIN_LOG_MSE = math.log(1.25)
SUBSET_MARGIN = 0.05
BOOTSTRAP = 2000
DECISIONS = ("holds", "fails", "undecided")


@dataclass(frozen=True)
class Interval:
    """An estimate and its two-sided interval at one-sided level ``alpha`` each side, over ``n``
    independent draws (seeds); ``lower <= estimate <= upper`` for a mean."""

    estimate: float
    lower: float
    upper: float
    n: int
    alpha: float

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "lower": self.lower, "upper": self.upper, "seeds": self.n,
                "alpha": self.alpha}


def level(looks: int = LOOKS) -> float:
    """The one-sided level of one interval: ALPHA spread over the stopping rule's looks."""
    return ALPHA / max(1, looks)


def mean_interval(values: Sequence[float], *, alpha: float | None = None) -> Interval:
    """Student's t interval of the mean of ``values`` (one draw per seed); fewer than 2 values
    give the whole real line (nothing decided)."""
    a = level() if alpha is None else alpha
    v = [float(x) for x in values]
    k = len(v)
    if k == 0:
        return Interval(math.nan, -math.inf, math.inf, 0, a)
    m = math.fsum(v) / k
    if k < 2:
        return Interval(m, -math.inf, math.inf, k, a)
    sd = math.sqrt(math.fsum((x - m) ** 2 for x in v) / (k - 1))
    w = float(stats.t.ppf(1 - a, k - 1)) * sd / math.sqrt(k)
    return Interval(m, m - w, m + w, k, a)


def paired_interval(before: Sequence[float], after: Sequence[float], *, alpha: float | None = None) -> Interval:
    """The interval of the mean of ``after - before`` over seeds (one pair per seed, same order)."""
    if len(before) != len(after):
        raise ValueError(f"paired values need one pair per seed ({len(before)} vs {len(after)})")
    return mean_interval([b - a for a, b in zip(before, after)], alpha=alpha)


def bootstrap_interval(per_seed: Sequence, statistic: Callable[[list], float], *, alpha: float | None = None,
                       resamples: int = BOOTSTRAP, seed: int = 35) -> Interval:
    """Percentile bootstrap of ``statistic(list of per-seed items)``: the seeds resampled whole
    (with replacement) from a fixed generator; NaN statistics (e.g. no fit) are dropped, and
    when more than ``alpha`` of them are NaN the interval is the whole line."""
    import numpy as np

    a = level() if alpha is None else alpha
    items = list(per_seed)
    k = len(items)
    est = statistic(items)
    if k < 2:
        return Interval(est, -math.inf, math.inf, k, a)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(resamples, k))
    vals = sorted(x for x in (statistic([items[i] for i in row]) for row in draws.tolist()) if not math.isnan(x))
    if len(vals) < (1 - a) * resamples:
        return Interval(est, -math.inf, math.inf, k, a)
    lo = vals[max(0, math.floor(a * resamples) - (resamples - len(vals)))]
    hi = vals[min(len(vals) - 1, math.ceil((1 - a) * resamples) - 1)]
    return Interval(est, min(lo, est) if not math.isnan(est) else lo, max(hi, est) if not math.isnan(est) else hi,
                    k, a)


def _part(decision: str, iv: Interval, threshold: float, kind: str) -> dict:
    detectable = iv.half_width if decision == "undecided" else None
    return {"decision": decision, "kind": kind, "threshold": threshold, **iv.as_dict(), "detectable": detectable}


def positive_part(iv: Interval, margin: float) -> dict:
    """A claimed effect (> 0): holds when the interval lies above 0; fails when it lies below
    ``margin`` (no meaningful effect) and not above 0; else undecided."""
    holds = iv.lower > 0
    fails = not holds and iv.upper < margin
    return _part("holds" if holds else "fails" if fails else "undecided", iv, margin, "positive")


def null_part(iv: Interval, margin: float, *, lower_margin: float | None = None) -> dict:
    """A claimed absence of an effect ("no drop": the drop is below ``margin``): an
    equivalence test.  One-sided (``lower_margin`` None): holds when the interval's upper end
    is below ``margin``; two one-sided tests (TOST, ``lower_margin`` given, e.g. -margin):
    holds when the interval lies within (lower_margin, margin).  Fails when the interval lies
    wholly beyond 0 on a forbidden side (and the part does not hold); else undecided."""
    inside = iv.upper < margin and (lower_margin is None or iv.lower > lower_margin)
    beyond = iv.lower > 0 or (lower_margin is not None and iv.upper < 0)
    return _part("holds" if inside else "fails" if beyond else "undecided", iv, margin,
                 "null (one-sided)" if lower_margin is None else "null (TOST)")


def threshold_part(iv: Interval, threshold: float) -> dict:
    """A claimed value at or above ``threshold`` (e.g. R^2 >= 0.99)."""
    holds, fails = iv.lower >= threshold, iv.upper < threshold
    return _part("holds" if holds else "fails" if fails else "undecided", iv, threshold, "threshold")


def failing_share_bound(sampled: int, failed: int = 0, *, alpha: float = ALPHA) -> float:
    """One-sided upper bound at level ``alpha`` of the share of failing subsets, from ``failed``
    of ``sampled`` random subsets (exact binomial: 1 - alpha^(1/N) when none failed)."""
    if sampled <= 0:
        return 1.0
    if failed >= sampled:
        return 1.0
    return float(stats.beta.ppf(1 - alpha, failed + 1, sampled - failed))


def sampled_part(holds_on_sample: bool, sampled: int, *, exhaustive: bool = False, certified_fail: bool = False,
                 margin: float = SUBSET_MARGIN) -> dict:
    """A property claimed for every subset, read on ``sampled`` random subsets: a failure is
    decided by its certificate (``certified_fail``) or by a failing sample; a hold needs the
    failing share bounded below ``margin`` (or every subset examined: ``exhaustive``)."""
    bound = 0.0 if exhaustive else failing_share_bound(sampled)
    if not holds_on_sample:
        decision = "fails"
    else:
        decision = "holds" if bound <= margin else "undecided"
    return {"decision": decision, "kind": "sampled", "sampled": sampled, "exhaustive": exhaustive,
            "failing_share_bound": bound, "margin": margin, "certified_fail": certified_fail,
            "detectable": bound if decision == "undecided" else None}


def status_over(parts: dict, rule: Callable[[dict], str], *, max_open: int = 12) -> tuple[str, dict]:
    """``rule({name: bool}) -> status`` applied to decided parts, every undecided part read both
    ways: (the status, or "undecided" when the readings differ; {"open": the undecided parts,
    "detectable": the largest of their detectable effects}).  More than ``max_open`` undecided
    parts are not enumerated: the status is then "undecided" (never a guess from some readings)."""
    open_ = [k for k, p in parts.items() if p["decision"] == "undecided"]
    base = {k: p["decision"] == "holds" for k, p in parts.items()}
    det = [parts[k]["detectable"] for k in open_ if parts[k].get("detectable") is not None]
    info = {"open": open_, "detectable": max(det) if det else None}
    if len(open_) > max_open:
        return "undecided", info
    outcomes = {rule(base | dict(zip(open_, r))) for r in itertools.product((True, False), repeat=len(open_))}
    return (outcomes.pop() if len(outcomes) == 1 else "undecided"), info


def across_machines(statuses: Sequence[str]) -> str:
    """The status of one experiment from the runs of several machines: the common status, else
    "inconclusive" (a status that changes between machines was not decided)."""
    got = set(statuses)
    return got.pop() if len(got) == 1 else "inconclusive"


OUTCOMES = ("passed", "failed", "not measured", "not applicable", "not run")


@dataclass(frozen=True)
class Power:
    stated: str
    evaluate: Callable[[dict], dict]  # measured -> {"outcome", "checks": [{"check", "outcome", "detail"}]}
    decides: str = ""


def _check(name: str, outcome: str, detail: str) -> dict:
    return {"check": name, "outcome": outcome, "detail": detail}


def overall(checks: list[dict]) -> str:
    """failed if any check failed; else not measured if any was; else passed."""
    outs = [c["outcome"] for c in checks if c["outcome"] != "not applicable"]
    return "failed" if "failed" in outs else "not measured" if "not measured" in outs else "passed"


def decided_check(status: str, info: dict, *, seeds: int | None = None, unit: str = "") -> dict:
    """The power check "the criterion is decided" from :func:`status_over`'s result: failed when
    the status is undecided, with the open parts, the seeds run and the effect they could have
    detected."""
    if status not in ("undecided", "inconclusive"):
        return _check("criterion decided (every interval clear of its threshold, or the status the same "
                      "read both ways)", "passed", f"status '{status}'" + (f" on {seeds} seeds" if seeds else ""))
    det = info.get("detectable")
    return _check("criterion decided (every interval clear of its threshold, or the status the same read both "
                  "ways)", "failed",
                  ("the criterion itself is inconclusive (a premise unmet); " if status == "inconclusive" else "")
                  + f"{len(info.get('open', []))} parts undecided ({'; '.join(info.get('open', [])[:6])}"
                  f"{'; ...' if len(info.get('open', [])) > 6 else ''})"
                  + (f" on {seeds} seeds per point (cap {SEED_CAP})" if seeds else "")
                  + (f"; an effect of {det:.3g}{unit} or more from its threshold would have been decided"
                     if det is not None and math.isfinite(det) else ""))


def judge(status: str, why: str, power: dict, decides: str) -> tuple[str, str]:
    """Any verdict, positive or negative (all but skipped / error / finding), of runs whose
    power check did not pass becomes "inconclusive" with what would decide it."""
    if status in ("skipped", "error", "finding") or power["outcome"] in ("passed", "not applicable"):
        return status, why
    failed = "; ".join(f"{c['check']}: {c['outcome']} ({c['detail']})" for c in power["checks"]
                       if c["outcome"] in ("failed", "not measured"))
    return ("inconclusive", f"inconclusive at this scale: the power check {power['outcome']} ({failed}). "
            f"The criterion on these runs said '{status}': {why}. Would decide it: {decides}.")
