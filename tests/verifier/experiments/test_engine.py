"""verifier/experiments/engine.py: many runs as one job, each an independent run (tiny sizes, no timing)."""
import numpy as np
import pytest
import torch

from verifier.errors import InvalidInstance
from verifier.experiments.engine import Dataset, Recipe, Run, lr_factor, train_panel, train_runs
from verifier.experiments.synthetic import authors_pool

FAST = Recipe(lr=1e-2, batch=8, epochs=0, min_steps=40, eval_every=10)


def pools(k=2, T=12, n=3, d=6, **kw):
    return [authors_pool(T, n, d, seed=s, classes=5, **kw) for s in range(k)]


def test_same_seeds_same_numbers_other_seed_other_numbers():
    runs = [Run(0, 12, H=2, d_h=3, seed=0), Run(1, 8, H=1, d_h=2, seed=1)]
    a = train_panel(pools(), runs, d_out=5, recipe=FAST)
    b = train_panel(pools(), runs, d_out=5, recipe=FAST)
    c = train_panel(pools(), [Run(0, 12, H=2, d_h=3, seed=5), runs[1]], d_out=5, recipe=FAST)
    assert [r["train_loss"] for r in a.runs] == [r["train_loss"] for r in b.runs]
    assert a.runs[0]["train_loss"] != c.runs[0]["train_loss"]
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["correct"] <= r["T"] for r in a.runs)


def test_a_run_in_a_panel_is_the_run_alone():
    """Padding (heads, d_h, tokens, examples) and batching leave each run's trajectory alone."""
    ps = pools(n=3) + [authors_pool(12, 5, 6, seed=9, classes=5)]
    runs = [Run(0, 12, H=2, d_h=3, seed=0), Run(2, 7, H=4, d_h=6, seed=1)]
    both = train_panel(ps, runs, d_out=5, recipe=FAST)
    alone = train_panel(ps, runs[:1], d_out=5, recipe=FAST)
    assert both.runs[0]["train_loss"] == pytest.approx(alone.runs[0]["train_loss"], rel=1e-4)
    split = train_runs(ps, runs, d_out=5, recipe=FAST, split="T")
    assert [r["T"] for r in split.runs] == [12, 7]
    assert split.runs[1]["train_loss"] == pytest.approx(both.runs[1]["train_loss"], rel=1e-4)


def test_early_stop_freezes_and_budget_follows_the_recipe():
    rec = Recipe(lr=3e-2, batch=4, epochs=3, min_steps=10, eval_every=5)
    assert rec.steps(12) == 10 and rec.steps(40) == 30 and Recipe(max_steps=7).steps(10) == 7
    out = train_panel(pools(k=1, T=6), [Run(0, 6, H=2, d_h=3, seed=0)], d_out=5,
                      recipe=Recipe(lr=3e-2, batch=8, epochs=0, min_steps=600, eval_every=20))
    r = out.runs[0]
    assert r["reached"] and r["accuracy"] == 1.0 and r["kept_step"] == r["reached_step"] < 600
    assert out.steps == r["reached_step"]  # the job stops when its only run stopped


def test_schedule_warms_up_then_decays():
    total = torch.tensor([100.0])
    f = [float(lr_factor(torch.tensor(float(s)), total)) for s in (0, 4, 5, 50, 99)]
    assert f[0] == pytest.approx(0.01) and f[1] < 1.0 and f[2] == pytest.approx(1.0)
    assert f[2] > f[3] > f[4] > 0.0


def test_regression_and_random_contexts():
    ps = [authors_pool(10, 3, 6, seed=0, context="random", task="regression")]
    out = train_panel(ps, [Run(0, 10, H=2, d_h=3, seed=0)], d_out=1, recipe=Recipe(task="regression", lr=1e-2,
                      epochs=0, min_steps=30, eval_every=10))
    assert out.runs[0]["mse"] >= 0.0 and "accuracy" not in out.runs[0]


def test_bad_input_is_refused():
    with pytest.raises(InvalidInstance):
        train_panel(pools(), [Run(0, 99, H=1, d_h=1, seed=0)], d_out=5, recipe=FAST)  # T beyond the pool
    with pytest.raises(InvalidInstance):
        train_panel(pools() + pools(context="random"), [Run(0, 4, H=1, d_h=1, seed=0)], d_out=5, recipe=FAST)
    with pytest.raises(InvalidInstance):
        train_panel(pools(), [Run(0, 4, H=1, d_h=1, seed=0)], d_out=5, recipe=Recipe(task="ranking"))
    with pytest.raises(InvalidInstance):
        authors_pool(4, 2, 3, seed=0, context="sometimes")
    ds = Dataset(np.zeros((3, 4)), np.zeros((2, 4)), np.zeros(3, int))
    assert ds.T == 3 and ds.n == 2 and ds.shared


def test_device_is_chosen_once_and_cuda_without_a_gpu_is_refused():
    from verifier.experiments.devices import set_device, training_device

    try:
        set_device("cpu")
        assert training_device().type == "cpu" and train_panel(pools(), [Run(0, 4, H=1, d_h=1, seed=0)], d_out=5,
                                                               recipe=FAST).device == "cpu"
        assert training_device("cpu").type == "cpu"
        set_device("auto")
        assert training_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
        if not torch.cuda.is_available():
            with pytest.raises(InvalidInstance):
                set_device("cuda")
    finally:
        set_device(None)


def test_cpu_training_runs_the_fixed_thread_count_whatever_the_caller_set(monkeypatch):
    """The thread count is part of the computation (verifier.experiments.devices): train_panel
    trains with CPU_TRAINING_THREADS whatever the caller set, and restores the caller's count."""
    import numpy as np
    import torch

    from verifier.experiments import devices, engine

    seen = []
    real_step = engine.Job.step

    def step(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(engine.Job, "step", step)
    monkeypatch.setattr(devices, "CPU_TRAINING_THREADS", 1)
    rng = np.random.default_rng(0)
    ds = engine.Dataset(rng.uniform(size=(8, 6)), rng.uniform(size=(3, 6)), rng.integers(0, 4, 8))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        engine.train_panel([ds], [engine.Run(0, 8, H=1, d_h=2, seed=0)], d_out=4, device="cpu",
                           recipe=engine.Recipe(lr=1e-2, min_steps=20, eval_every=10), embedding=False)
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
