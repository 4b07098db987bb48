"""verifier/experiments/plateau.py and the engine's plateau schedule: the rule, the decays,
the stops (memorized / plateau / cap), and stopped runs leaving the job unchanged for the others."""
import pytest

pytest.importorskip("torch")

from verifier.errors import InvalidInstance  # noqa: E402
from verifier.experiments.engine import Recipe, Run, train_panel  # noqa: E402
from verifier.experiments.plateau import Plateau, PlateauState  # noqa: E402
from verifier.experiments.synthetic import authors_pool  # noqa: E402


def test_flat_windows_decay_then_stop_and_a_rising_run_never_stops():
    rule = Plateau(window=10, patience=3, decay=0.5)
    assert rule.flat(0.5, 0.5 + 1 / 64, T=64, task="classification")  # one example: flat
    assert not rule.flat(0.5, 0.5 + 2 / 64, T=64, task="classification")
    assert rule.flat(1.0, 0.96, T=8, task="regression") and not rule.flat(1.0, 0.9, T=8, task="regression")
    s = PlateauState(rule, [64, 64], "classification")
    assert [s.check(0, 0.3, 1.0) for _ in range(4)] == ["", "", "", "plateau"]  # first check: reference only
    assert s.lr_scale[0] == 0.25 and s.flats[0] == 3
    assert all(s.check(1, 0.1 * k, 1.0) == "" for k in range(10)) and s.lr_scale[1] == 1.0  # rising
    assert s.memorized(1.0, 5.0) and not s.memorized(0.99, 0.0)
    assert PlateauState(rule, [4], "regression").memorized(None, 1e-7)


def _pools():
    return [authors_pool(40, 3, 6, seed=s, classes=20) for s in range(2)]


def test_engine_stops_each_run_by_its_rule():
    easy, hard = Run(0, 4, H=4, d_h=6, seed=0), Run(1, 40, H=1, d_h=1, seed=1)
    rec = Recipe(lr=2e-2, batch=64, max_steps=2000, eval_every=10, plateau=Plateau(window=50, patience=2))
    out = train_panel(_pools(), [easy, hard], d_out=20, recipe=rec)
    a, b = out.runs
    assert a["stopped"] == "memorized" and a["accuracy"] == 1.0 and a["reached"]
    assert b["stopped"] == "plateau" and b["accuracy"] < 1.0 and b["steps"] >= 3 * 50 and b["steps"] % 50 == 0
    capped = train_panel(_pools(), [hard], d_out=20, recipe=Recipe(lr=2e-2, batch=64, max_steps=60, eval_every=10,
                                                                   plateau=Plateau(window=50, patience=2)))
    assert capped.runs[0]["stopped"] == "cap" and capped.runs[0]["steps"] == 60
    alone = train_panel(_pools(), [hard], d_out=20, recipe=rec)  # the other run stopping early leaves it alone
    assert alone.runs[0]["train_loss"] == pytest.approx(b["train_loss"], rel=1e-3)
    assert out.run_steps < 2 * out.steps  # a stopped run takes no steps


def test_plateau_needs_a_cap():
    with pytest.raises(InvalidInstance):
        Recipe(plateau=Plateau()).steps(10)
