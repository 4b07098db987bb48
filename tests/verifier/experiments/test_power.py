"""The status rules on small synthetic stored results: a verdict of underpowered runs, positive
or negative, is "inconclusive" (and of powered runs stands; issues 19 and 35), Fig. 4 combines its
parts as its criterion states, Fig. 3 checks its premise and decides (i) with (ii), and a probe is
a "finding", never counted among the reproductions.  The rule itself (intervals, equivalence
tests, both ways) is tested on synthetic data where the truth is known: test_power_rule.py."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from verifier.experiments import catalogue  # noqa: E402
from verifier.experiments.measures import curves  # noqa: E402
from verifier.experiments.power import MIN_SEEDS, judge  # noqa: E402
from verifier.experiments.saturation import decide_fig3  # noqa: E402
from verifier.experiments.sweep_power import run_converged, sweep_power  # noqa: E402
from verifier.experiments.sweep_variants import combine  # noqa: E402
from verifier.report import experiments as rx  # noqa: E402


def _run(T, H, seed, acc, *, trace=True, late_gain=0.0):
    row = {"T": T, "H": H, "seed": seed, "accuracy": acc, "reached": acc >= 1.0, "steps_budget": 500}
    if trace:
        row["trace"] = {"step": [100, 200, 300, 400, 500], "loss": [2.0, 1.5, 1.2, 1.1, 1.0],
                        "accuracy": [acc - 0.3, acc - 0.2, acc - late_gain, acc - late_gain / 2, acc]}
    return row


def _sweep(*, trace=True, late_gain=0.0, easiest=1.0, noise=0.0, seeds=MIN_SEEDS):
    """A Fig. 2a-like panel: H in (1, 2, 4), T in (8, 16), ``seeds`` seeds."""
    runs = []
    for T in (8, 16):
        for H in (1, 2, 4):
            for s in range(seeds):
                acc = easiest if (T, H) == (8, 4) else min(0.99, 0.2 * H + 0.1) - (noise if s == 0 else 0.0)
                runs.append(_run(T, H, s, acc, trace=trace, late_gain=late_gain))
    return {"task": "classification", "key": "H", "values": [1, 2, 4], "T": [8, 16], "runs": runs,
            "curves": {str(T): c for T, c in curves(runs, "H", "accuracy").items()}}


def _record(sweep, status="not reproduced"):
    return {"id": "fig2a", "status": status, "why": "only 0 of 2 informative curves pass",
            "measured": {"sweep": sweep, "fits": {}}}


def test_plateau_rule_on_one_run():
    assert run_converged(_run(8, 1, 0, 1.0, trace=False), "classification") == "passed"  # memorized
    assert run_converged(_run(8, 1, 0, 0.5, trace=False), "classification") == "not measured"
    assert run_converged(_run(8, 1, 0, 0.5), "classification") == "passed"  # flat over the last quarter
    assert run_converged(_run(8, 1, 0, 0.5, late_gain=0.25), "classification") == "failed"  # still rising
    assert run_converged({**_run(8, 1, 0, 0.5), "stopped": "plateau"}, "classification") == "passed"
    assert run_converged({**_run(8, 1, 0, 0.5), "stopped": "cap"}, "classification") == "failed"  # at the cap


def test_underpowered_negative_verdict_is_inconclusive_powered_one_stands():
    for bad in (_sweep(trace=False), _sweep(late_gain=0.25), _sweep(easiest=0.875), _sweep(seeds=3)):
        o = catalogue.rederive(_record(bad))
        assert o.status == "inconclusive" and o.power["outcome"] != "passed"
        assert "Would decide it" in o.why and "GPU" in o.why and o.power["criterion_status"] in catalogue.STATUSES
    o = catalogue.rederive(_record(_sweep()))  # negative control: powered runs keep their (re-derived) verdict
    assert o.status == o.power["criterion_status"] == "reproduced" and o.power["outcome"] == "passed"
    assert sweep_power("sweep")({})["outcome"] == "not measured"  # nothing stored: never "passed"


def test_rederive_is_idempotent_and_positive_verdicts_need_power_too():
    o = catalogue.rederive(_record(_sweep(trace=False)))
    again = catalogue.rederive({"id": "fig2a", "status": o.status, "why": o.why, "measured": o.measured,
                                "power": o.power})
    assert (again.status, again.why) == (o.status, o.why)
    assert catalogue.rederive(_record(_sweep(trace=False), status="reproduced")).status == "inconclusive"
    assert catalogue.rederive(_record(_sweep(seeds=3), status="reproduced")).status == "inconclusive"
    assert judge("skipped", "w", {"outcome": "failed", "checks": []}, "x") == ("skipped", "w")
    skipped = catalogue.run_experiment("table1", scale="quick")  # skipped at quick scale, extra or not
    assert skipped.status == "skipped" and skipped.power["outcome"] == "not run" and skipped.power["stated"]


def test_fig4_combines_its_parts_as_its_criterion_states():
    assert combine("not reproduced", "partially reproduced") == "not reproduced"  # neither reproduced
    assert combine("partially reproduced", "partially reproduced") == "not reproduced"
    assert combine("reproduced", "partially reproduced") == "partially reproduced"
    assert combine("reproduced", "reproduced") == "reproduced"


def _H(grid, memorized, hist=None, seeds=MIN_SEEDS, H=4, T=64):
    """Fig. 3's stored runs at one H: every seed memorizes the Ts in ``memorized``; at each of them
    a run's histogram of examples by number of saturated heads is ``hist`` (default: all mostly
    saturated, each with a non-saturated head)."""
    hist = hist or [0, 0, 0, T, 0]
    runs = [{"T": t, "seed": s, "reached": t in memorized, "accuracy": 1.0 if t in memorized else 0.5,
             "stats": {"hist": hist, "maxima_hist": [0] * 40}} for t in grid for s in range(seeds)]
    return {"T_grid": grid, "runs": runs}


def test_fig3_premise_and_joint_checks():
    grid = [32, 64, 96, 128]
    good, top = _H(grid, [32, 64]), _H(grid, grid)
    assert decide_fig3({"per_H": {"4": good, "8": good}})[0] == "reproduced"
    assert decide_fig3({"per_H": {"4": good, "8": top}})[0] == "inconclusive"  # H=8 memorized the grid's top
    assert "premise unmet" in decide_fig3({"per_H": {"4": good, "8": top}})[1]
    only_ii = _H(grid, [32, 64], hist=[20, 40, 4, 0, 0])  # (ii) holds, (i) fails: never a partial reproduction
    assert decide_fig3({"per_H": {"4": only_ii, "8": top}})[0] == "not reproduced"
    assert decide_fig3({"per_H": {"4": _H(grid, []), "8": top}})[0] == "inconclusive"
    few = _H(grid, [32, 64], seeds=2)  # two seeds: an interval that decides nothing, power failed
    o = catalogue.rederive({"id": "fig3", "status": "reproduced", "why": "", "measured": {"per_H": {"4": few}}})
    assert o.status == "inconclusive" and o.power["outcome"] == "failed"


def test_fig3_reports_the_vague_phrases_across_readings_and_the_construction_s_score():
    from verifier.experiments.saturation import readings

    grid = [32, 64, 96, 128]
    mixed = _H(grid, [32, 64], hist=[0, 10, 30, 24, 0])  # 37.5 % with > 2 of 4 heads, 84 % with > 1
    m = {"per_H": {"4": {**mixed, "constructed": {"T": 29, "hist": [0, 0, 21, 8, 0]}}}}
    r = readings(m)
    at = {(g["q"], g["p"]): g["status"] for g in r["grid"]}
    assert at[(0.5, 0.5)] == "not reproduced" and at[(0.5, 0.25)] == "reproduced"
    assert at[(0.25, 0.5)] == "reproduced"  # "most heads" read as more than a quarter of them
    assert r["construction"]["4"] == [1.0, 8 / 29, 0.0]
    assert "readings of 'most heads'" in decide_fig3(m)[1]


def test_probe_is_a_finding_and_not_counted():
    rec = {"id": "capacity_probe", "status": "reproduced", "why": "T = Hd certified", "measured": {}}
    o = catalogue.rederive(rec)
    assert o.status == "finding"
    rows = {"capacity_probe": {"id": "capacity_probe", "kind": "probe", "status": "finding", "why": o.why,
                               "claim": "App. I.1", "criterion": "", "measured": {}, "figures": [], "power": o.power},
            "fig5": {"id": "fig5", "kind": "reproduction", "status": "reproduced", "why": "w", "claim": "c",
                     "criterion": "k", "measured": {}, "figures": [], "power": {}}}
    md = rx.markdown_section({"scale": "cpu", "experiments": rows, "pngs": {}})
    assert "Statuses: 1 reproduced." in md and "### Probes of conjectures and side results" in md
    assert "| `capacity_probe` |" not in md.split("### Probes")[0]
    assert "Probes of conjectures" in rx.html_section({"scale": "cpu", "experiments": rows, "pngs": {}})
