"""verifier/experiments/measures.py: each rule passes its claim's shape and fails the alternatives."""
import pytest

from verifier.experiments import measures as ms


def curve(mean, sem=0.01, x=None):
    return {"x": x or list(range(1, len(mean) + 1)), "mean": mean, "sem": [sem] * len(mean)}


def test_linear_part_fits_the_non_saturated_points_only():
    fit = ms.linear_part(curve([0.1, 0.2, 0.3, 0.4, 1.0, 1.0]))
    assert fit["points"] == 4 and fit["r2"] == pytest.approx(1.0) and fit["x"] == [1, 2, 3, 4]
    bent = ms.linear_part(curve([0.05, 0.4, 0.6, 0.7, 0.75]))  # concave: the control that must fail
    assert bent["r2"] < ms.R2_MIN
    assert ms.linear_part(curve([0.5, 0.995, 1.0])) is None  # too few points: no fit


def test_monotone_needs_a_significant_rise_and_no_significant_drop():
    assert ms.monotone(curve([0.1, 0.3, 0.29, 0.6]))["passes"]  # a drop within noise
    assert not ms.monotone(curve([0.1, 0.5, 0.3, 0.6]))["passes"]  # a drop beyond noise
    flat = ms.monotone(curve([0.4, 0.41, 0.4, 0.42], sem=0.05))
    assert not flat["passes"] and not flat["change_significant"]
    assert not ms.monotone(curve([1.0, 1.0, 1.0]))["informative"]
    assert ms.monotone(curve([0.3, 0.2, 0.1]), increasing=False)["passes"]


def test_knee_tells_the_knee_from_flat_and_from_growth():
    x = [2, 4, 8, 12, 16]
    assert ms.knee(curve([0.2, 0.4, 0.8, 0.8, 0.81], x=x), 8)["passes"]
    flat = ms.knee(curve([0.5, 0.5, 0.5, 0.5, 0.5], x=x), 8)
    assert not flat["passes"] and not flat["rise_significant"]
    assert not ms.knee(curve([0.2, 0.4, 0.6, 0.8, 0.95], x=x), 8)["passes"]
    assert not ms.knee(curve([0.2, 0.4], x=[2, 4]), 8)["informative"]


def test_curves_and_decide():
    rows = [{"H": h, "T": 8, "seed": s, "a": h / 10 + s / 100} for h in (1, 2) for s in (0, 1, 2)]
    c = ms.curves(rows, "H", "a")[8]
    assert c["x"] == [1, 2] and c["seeds"] == [3, 3] and c["mean"][0] == pytest.approx(0.11)
    assert c["sem"][0] == pytest.approx(0.01 / 3 ** 0.5)
    assert ms.decide([True, True])[0] == "reproduced"
    assert ms.decide([True, False, False])[0] == "not reproduced"
    assert ms.decide([])[0] == "not reproduced"
