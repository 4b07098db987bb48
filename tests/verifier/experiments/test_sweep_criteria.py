"""The sweeps' criteria decided by intervals over the seeds (issue 35), on synthetic stored runs
where the truth is known: a monotone curve with seed noise is reproduced once the seeds suffice and
inconclusive before, a real drop is not reproduced, a flat curve never passes "no gain beyond n" by
noise, and the campaign's batches merge into the runs of all their seeds."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from verifier.experiments import catalogue  # noqa: E402
from verifier.experiments import sweep_criteria as sc  # noqa: E402
from verifier.experiments.measures import curves  # noqa: E402
from verifier.experiments.sweeps import merge  # noqa: E402


def _sweep(means, *, seeds, sd, key="n", seed=0, task="classification"):
    """Runs at T = 64 over x = 1..len(means) whose accuracy is mean + N(0, sd) per seed."""
    rng = np.random.default_rng(seed)
    xs = list(range(1, len(means) + 1))
    runs = []
    for s in range(seeds):
        noise = rng.normal(0, sd, len(xs))
        for x, m, e in zip(xs, means, noise):
            runs.append({"T": 64, key: x, "seed": s, "accuracy": float(np.clip(m + e, 0, 0.985)), "reached": False,
                         "stopped": "plateau", "memorized": 0.0})
    cv = {str(T): c for T, c in curves(runs, key, "accuracy").items()}
    return {"task": task, "key": key, "values": xs, "T": [64], "runs": runs, "curves": cv, "fixed": {"n": 3}}


def _fig2b(sw):
    return catalogue.rederive({"id": "fig2b", "status": "reproduced", "why": "", "measured": {"sweep": sw}})


def test_monotone_curve_is_reproduced_with_enough_seeds_and_inconclusive_before():
    rising = [0.2, 0.4, 0.6, 0.8]
    few = _fig2b(_sweep(rising, seeds=3, sd=0.1))
    assert few.status == "inconclusive"
    many = _fig2b(_sweep(rising, seeds=32, sd=0.02))
    assert many.power["criterion_status"] == "reproduced"


def test_a_real_drop_is_not_reproduced_and_noise_never_makes_no_drop_pass():
    dropping = [0.2, 0.6, 0.3, 0.8]
    assert _fig2b(_sweep(dropping, seeds=16, sd=0.02)).power["criterion_status"] == "not reproduced"
    noisy = _sweep(dropping, seeds=5, sd=0.4, seed=3)
    parts = sc.monotone_parts(noisy["curves"]["64"], "classification")
    assert parts["no drop 2->3"]["decision"] != "holds"  # low power cannot accept the null


def test_knee_needs_an_equivalence_test_beyond_n():
    flat_then_gain = {"x": [1, 2, 3, 4], "values": [[0.2] * 8, [0.4] * 8, [0.6] * 8, [0.9, 0.1] * 4]}
    parts = sc.knee_parts(flat_then_gain, 3)
    assert parts["rise 1->3"]["decision"] == "holds" and parts["no gain 3->4"]["decision"] == "undecided"
    knee = {"x": [1, 2, 3, 4], "values": [[0.2] * 8, [0.4] * 8, [0.6] * 8, [0.6, 0.61] * 4]}
    assert sc.knee_parts(knee, 3)["no gain 3->4"]["decision"] == "holds"


def test_batches_merge_into_the_runs_of_all_their_seeds():
    a, b = _sweep([0.2, 0.4], seeds=2, sd=0.0), _sweep([0.2, 0.4], seeds=2, sd=0.0)
    for r in b["runs"]:
        r["seed"] += 2
    for x, s in ((a, [0, 1]), (b, [2, 3])):
        x.update(seeds=s, replicas=4, global_steps=10, run_steps=40, seconds={"panel": 1.0}, constructive=[])
    m = merge([b, a])
    assert m["seeds"] == [0, 1, 2, 3] and m["replicas"] == 8 and m["batches"] == 2
    assert m["curves"][64]["seeds"] == [4, 4] and [r["seed"] for r in m["runs"]][:2] == [0, 0]
