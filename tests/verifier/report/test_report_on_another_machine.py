"""The committed report depends on the code and the seed, not the CPU: its
numbers are printed to the digits they are known to (verifier/statements/
display.py), the machine's choices go to run.json, and a report without the
experiments extra keeps the committed experiment results with their provenance."""
from __future__ import annotations

import json
import math

import numpy as np
from another_machine import on_another_machine  # tests/ is on pytest's path
from hypothesis import given
from hypothesis import strategies as st

from verifier.experiments import catalogue
from verifier.report import build as report
from verifier.report import experiments as report_experiments
from verifier.statements.display import show, show_text, significant, stable

#: statements whose trails and certificates print float diagnostics (SVDs, solves, float64
#: weights' residuals, balls around float data, minors chosen by float pivoting, worst subsets)
FLOAT_HEAVY = ["assumption1", "claim1", "lemma4", "appendixB2", "proposition1", "proposition2", "step2", "theorem1",
               "dana_corollary1"]


def test_the_perturbation_moves_the_callers_float_results_by_a_few_ulps():
    """A control of the control: on another machine the float results of numpy.linalg
    called from ``callers`` differ from the plain ones, by little; calls from elsewhere
    do not move, and after the block nothing does."""
    a = np.random.default_rng(0).standard_normal((6, 5))
    plain = np.linalg.svd(a, compute_uv=False)
    elsewhere = {"__name__": "elsewhere", "np": np, "a": a}  # a module that is not a caller
    moved, outside = [], []
    for seed in (1, 2):
        with on_another_machine(ulps=4, seed=seed, callers=(__name__,)):
            moved.append(np.linalg.svd(a, compute_uv=False))
            assert np.linalg.matrix_rank(a) == 5  # an integer result is not moved
            outside.append(eval("np.linalg.svd(a, compute_uv=False)", elsewhere))
    assert not np.array_equal(moved[0], moved[1]) and not np.array_equal(moved[0], plain)  # machines differ
    assert np.allclose(moved[0], plain, rtol=1e-13, atol=0)  # by a few ulps
    assert np.array_equal(outside[0], outside[1])  # not a caller: not moved
    assert np.array_equal(np.linalg.svd(a, compute_uv=False), plain)  # restored


def test_report_regenerated_on_another_machine_is_the_same_bytes(tmp_path):
    """The float-heavy statements' report, plainly and on another machine (LAPACK results
    a few ulps off, products and sums in other orders): REPORT.md, results.json, index.html and the figures are
    the same bytes; the machine's choices (minors, rejected controls' evidence) are in
    run.json."""
    outs = []
    for i, machine in enumerate((None, on_another_machine(ulps=4, seed=3))):
        out = tmp_path / f"machine{i}"
        if machine is None:
            report.write_report(out=out, mode="quick", seed=0, statements=FLOAT_HEAVY, quiet=True)
        else:
            with machine:
                report.write_report(out=out, mode="quick", seed=0, statements=FLOAT_HEAVY, quiet=True)
        outs.append(out)
    a, b = outs
    names = ["REPORT.md", "results.json", "index.html"] + [f"figures/{p.name}" for p in (a / "figures").glob("*.png")]
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    facts = json.loads((a / "run.json").read_text())
    assert facts["machine_choices"]  # the minors' rows and columns live there
    assert all(set(v) <= {"rows", "cols", "method", "prec_bits", "evidence", "reason"}
               for v in facts["machine_choices"].values())


def test_the_issues_examples_print_the_same_on_both_machines():
    """Issue 17's numbers, committed vs another machine."""
    key = "sigma_min of the new rows"
    assert show(0.5161816387744846, key) == show(0.5161816387744848, key) == 0.5162
    assert show(12.891560492489525, "App. B.2: c") == show(12.891560492489509, "App. B.2: c")
    key = "float64 weights: max fit error (factored, certified upper)"
    assert show(8.17e-15, key) == show(4.14e-15, key) == "< 1e-12"
    assert stable({"w": [-0.0, 0.0]}) == {"w": [0.0, 0.0]}
    # a bound that is a short decimal plus or minus ulps: one rounding on every machine
    assert len({show(0.0005 + k * 1e-19, "bound upper") for k in range(-3, 4)}) == 1
    assert show_text("[0.000999999999999999 +/- 2.74e-19]") == show_text("[0.000999999999999998 +/- 2.72e-19]")


@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.sampled_from(["up", "down"]))
def test_a_bound_is_rounded_outward(x, direction):
    """An upper bound printed is >= the bound computed, a lower bound <= (exactly, as rationals)."""
    from fractions import Fraction

    r = significant(x, direction=direction)
    if math.isinf(r):
        return
    assert (Fraction(r) >= Fraction(x)) if direction == "up" else (Fraction(r) <= Fraction(x))


def test_a_ball_is_printed_as_an_enclosure():
    from fractions import Fraction

    lo, hi = json.loads(show_text("[2505.88801737670 +/- 4.86e-12]"))
    assert Fraction(lo) <= Fraction("2505.88801737670") - Fraction("4.86e-12")
    assert Fraction(hi) >= Fraction("2505.88801737670") + Fraction("4.86e-12")


def _demo_experiment(monkeypatch, requires):
    monkeypatch.setitem(catalogue.EXPERIMENTS, "demo_extra", catalogue.Experiment(
        "demo_extra", "claim", "criterion", lambda scale, seed: catalogue.Outcome("reproduced", "ran", {"x": 1}),
        requires, "tests"))


def test_without_the_extra_the_earlier_results_are_kept_with_their_provenance(tmp_path, monkeypatch):
    _demo_experiment(monkeypatch, ("no_such_package_mha",))
    monkeypatch.setattr(report_experiments, "COMMITTED", tmp_path / "absent")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "experiment_demo.png").write_bytes(b"png bytes")
    entry = {"id": "demo_extra", "claim": "claim", "criterion": "criterion", "status": "not reproduced",
             "why": "measured 0.5", "seed": 0, "scale": "quick",
             "figures": [{"name": "experiment_demo", "file": "figures/experiment_demo.png", "title": "t",
                          "caption": "c"}], "measured": {"x": 0.1234}, "provenance": "computed with pkg 1.0"}
    (tmp_path / "results.json").write_text(json.dumps({"experiments": {"scale": "quick", "demo_extra": entry}}))
    sec = report_experiments.run_experiments(tmp_path, mode="quick", seed=0, only=("demo_extra",))
    kept = sec["experiments"]["demo_extra"]  # kept as it was, its status re-derived with today's rules
    assert {k: v for k, v in kept.items() if k not in ("power", "kind")} == entry
    assert kept["power"]["criterion_status"] == entry["status"]
    assert sec["carried_over"] == {"demo_extra": str(tmp_path)}
    assert "**Provenance.** computed with pkg 1.0." in report_experiments.markdown_section(sec)
    # another seed or scale: nothing to keep, the honest "skipped"
    assert report_experiments.run_experiments(tmp_path, mode="quick", seed=1, only=("demo_extra",)
                                              )["experiments"]["demo_extra"]["status"] == "skipped"


def test_a_fresh_run_with_the_packages_records_their_versions(tmp_path, monkeypatch):
    _demo_experiment(monkeypatch, ("numpy",))
    sec = report_experiments.run_experiments(tmp_path, mode="quick", seed=0, only=("demo_extra",))
    row = sec["experiments"]["demo_extra"]
    assert row["status"] == "reproduced" and row["provenance"] == f"computed with numpy {np.__version__}"
