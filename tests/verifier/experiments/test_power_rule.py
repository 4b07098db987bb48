"""The rule of verifier/experiments/power.py on synthetic data where the truth is known:
intervals cover, a null ("no drop") is accepted only by an equivalence test so that low power
cannot make it pass, a positive verdict needs its power as much as a negative one, an
undecided part read both ways decides a status only when both readings agree, and a status
that differs between two machines is inconclusive."""
from __future__ import annotations

import math

import numpy as np
import pytest

from verifier.experiments.power import (
    MARGIN_ACCURACY,
    across_machines,
    bootstrap_interval,
    failing_share_bound,
    judge,
    level,
    mean_interval,
    null_part,
    paired_interval,
    positive_part,
    sampled_part,
    status_over,
    threshold_part,
)

TRIALS = 400


def _rate(decision: str, part, truth: float, sd: float, k: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = sum(part(mean_interval(rng.normal(truth, sd, k)))["decision"] == decision for _ in range(TRIALS))
    return hits / TRIALS


def test_mean_interval_covers_the_truth_at_its_level():
    rng = np.random.default_rng(0)
    miss = 0
    for _ in range(TRIALS):
        iv = mean_interval(rng.normal(0.3, 0.2, 8))
        miss += not iv.lower <= 0.3 <= iv.upper
    assert miss / TRIALS <= 2 * level() + 3 * math.sqrt(2 * level() / TRIALS)  # two-sided, within noise
    assert mean_interval([0.5]).lower == -math.inf  # one seed decides nothing
    assert mean_interval([0.2, 0.2, 0.2]).half_width < 1e-12  # no spread: a point


@pytest.mark.parametrize("sd,k", [(0.05, 5), (0.3, 5), (1.0, 8), (3.0, 32)])
def test_low_power_never_makes_a_null_pass(sd, k):
    """A real drop of twice the margin: "no drop" (an equivalence test) holds at most at the
    interval's level, however noisy and few the seeds (the old rule - no drop beyond 2 s.e. -
    passed MORE often the noisier the seeds)."""
    assert _rate("holds", lambda iv: null_part(iv, MARGIN_ACCURACY), 2 * MARGIN_ACCURACY, sd, k, 1) <= 0.02
    old_rule = np.mean([abs(m := np.mean(x)) <= 2 * np.std(x, ddof=1) / math.sqrt(k) or m < 0
                        for x in np.random.default_rng(1).normal(2 * MARGIN_ACCURACY, sd, (TRIALS, k))])
    if sd >= 0.3:
        assert old_rule > 0.5  # the defect this rule removes: noise let the null pass


def test_null_part_holds_with_enough_seeds_and_fails_on_a_significant_drop():
    assert _rate("holds", lambda iv: null_part(iv, MARGIN_ACCURACY), 0.0, 0.02, 16, 2) >= 0.95
    assert _rate("fails", lambda iv: null_part(iv, MARGIN_ACCURACY), 0.3, 0.05, 8, 3) >= 0.95
    # two one-sided tests: a change either way beyond the margin is not "no change"
    tost = null_part(mean_interval([-0.3, -0.31, -0.29, -0.3, -0.32]), 0.05, lower_margin=-0.05)
    assert tost["decision"] == "fails" and tost["kind"] == "null (TOST)"
    assert null_part(mean_interval([0.01, -0.01, 0.0, 0.01, -0.01]), 0.05, lower_margin=-0.05)["decision"] == "holds"


def test_positive_part_decides_both_ways_and_only_at_its_level():
    pos = lambda iv: positive_part(iv, MARGIN_ACCURACY)  # noqa: E731
    assert _rate("holds", pos, 0.0, 0.2, 5, 4) <= 0.02  # no effect: rarely "holds"
    assert _rate("holds", pos, 0.5, 0.1, 5, 5) >= 0.95
    assert _rate("fails", pos, -0.1, 0.02, 8, 6) >= 0.95  # a decided absence of the effect
    assert _rate("undecided", pos, 0.02, 0.5, 5, 7) >= 0.9  # too noisy to say: neither verdict
    und = pos(mean_interval([0.5, -0.4, 0.1, 0.9, -0.6]))
    assert und["decision"] == "undecided" and und["detectable"] == pytest.approx(und["upper"] - und["estimate"])


def test_threshold_part_and_bootstrap_interval():
    assert threshold_part(mean_interval([0.995, 0.996, 0.997, 0.995, 0.996]), 0.99)["decision"] == "holds"
    assert threshold_part(mean_interval([0.95, 0.96, 0.94, 0.95, 0.96]), 0.99)["decision"] == "fails"
    assert threshold_part(mean_interval([0.9, 1.0, 0.95, 0.99, 1.0]), 0.99)["decision"] == "undecided"
    vals = list(np.random.default_rng(8).normal(1.0, 0.1, 10))
    iv = bootstrap_interval(vals, lambda v: float(np.mean(v)))
    assert iv.lower < 1.0 < iv.upper and iv == bootstrap_interval(vals, lambda v: float(np.mean(v)))  # fixed stream
    nan = bootstrap_interval(vals, lambda v: math.nan)
    assert nan.lower == -math.inf and threshold_part(nan, 0.99)["decision"] == "undecided"


def test_paired_interval_is_the_interval_of_the_differences():
    a, b = [0.1, 0.5, 0.9, 0.3], [0.2, 0.6, 1.0, 0.4]  # every seed rises by 0.1: decided though the points spread
    iv = paired_interval(a, b)
    assert iv.estimate == pytest.approx(0.1) and iv.half_width == pytest.approx(0.0, abs=1e-15)
    assert positive_part(iv, MARGIN_ACCURACY)["decision"] == "holds"
    with pytest.raises(ValueError):
        paired_interval([1.0], [1.0, 2.0])


def test_sampled_evidence_holds_only_when_it_bounds_the_failing_share():
    assert failing_share_bound(100) == pytest.approx(1 - 0.025 ** (1 / 100))
    assert sampled_part(True, 100)["decision"] == "holds"  # failing share < 3.7 % at 97.5 %
    assert sampled_part(True, 20)["decision"] == "undecided"  # < 16.8 %: not enough to stand
    assert sampled_part(True, 3, exhaustive=True)["decision"] == "holds"
    assert sampled_part(False, 1)["decision"] == "fails"


def test_undecided_parts_are_read_both_ways():
    rule = lambda v: "reproduced" if all(v.values()) else "not reproduced"  # noqa: E731
    parts = {"a": {"decision": "holds", "detectable": None}, "b": {"decision": "undecided", "detectable": 0.1}}
    assert status_over(parts, rule) == ("undecided", {"open": ["b"], "detectable": 0.1})
    parts["a"]["decision"] = "fails"  # a decided failure fixes the status whatever b is
    assert status_over(parts, rule)[0] == "not reproduced"
    many = {str(i): {"decision": "undecided", "detectable": 0.01 * i} for i in range(20)}
    assert status_over(many, rule) == ("undecided", {"open": list(many), "detectable": 0.19})  # not enumerated


def test_judge_makes_any_unpowered_verdict_inconclusive_and_machines_must_agree():
    failed = {"outcome": "failed", "checks": [{"check": "c", "outcome": "failed", "detail": "d"}]}
    for status in ("reproduced", "partially reproduced", "not reproduced"):
        assert judge(status, "w", failed, "x")[0] == "inconclusive"
        assert judge(status, "w", {"outcome": "passed", "checks": []}, "x")[0] == status
    assert judge("finding", "w", failed, "x")[0] == "finding"
    assert across_machines(["reproduced", "reproduced"]) == "reproduced"
    assert across_machines(["reproduced", "partially reproduced"]) == "inconclusive"
