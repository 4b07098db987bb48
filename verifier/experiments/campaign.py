"""The campaign: seeds until decided (issue 35), stored so that the report reads it instead of
retraining.

Each cpu-scale sweep experiment (Fig. 2a-c, 4, 5) trains its panels in batches of
:data:`~verifier.experiments.power.SEED_BATCH` seeds (batch b: seeds 8b .. 8b+7), one batched
job per panel and dataset size T (:func:`~verifier.experiments.sweeps.run_sweep`).  Each
batch's runs are stored as they complete (``<out>/runs/<panel>_b<b>.json``, written whole, with
their provenance: code commit, package versions, the pinned CPU kernels, threads, machine,
seconds), so that an interrupted campaign resumes where it stopped.  After each batch the
experiment's record is re-derived from ALL its stored batches (``<out>/<id>_cpu.json`` and its
figures, as :mod:`benchmarks.run_experiments` writes them) and its power check read: the
stopping rule of :mod:`verifier.experiments.power` (decided, or the cap of seeds, or the
campaign's wall-time cap) says whether it gets another batch.  Batches are added to every panel
of an undecided experiment in turn, so the batch plan - and with it every job's composition,
hence its bits - is a function of the code and the stored results only.

The same seeds of a panel are the same runs in every experiment that reads it (Fig. 4 reads
Fig. 2b's shared-context sweep).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from verifier.experiments.power import SEED_BATCH, SEED_CAP

#: experiment -> the sweep panels it reads (verifier/experiments/scales.py)
PANELS = {"fig2a": ("fig2a",), "fig2b": ("fig2b",), "fig2c": ("fig2c",), "fig4": ("fig4_H", "fig4_n", "fig2b"),
          "fig5": ("fig5_H", "fig5_n"), "fig3": ("fig3",)}
CAMPAIGN_DIR = Path(__file__).resolve().parents[2] / "reports" / "experiments" / "campaign"
#: the CPU kernel variables importing verifier pins (verifier/__init__.py), as each batch ran them
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "OMP_WAIT_POLICY")


def provenance() -> dict:
    """What computed a batch: code commit, package versions, pinned kernels, threads, machine."""
    import numpy
    import torch

    from verifier.data.machine import cpu_model

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                                cwd=Path(__file__).parent).stdout.strip()[:12]
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    cpu = cpu_model()
    return {"commit": commit, "versions": {"torch": torch.__version__, "numpy": numpy.__version__,
                                           "python": platform.python_version()},
            "cpu_kernels": {**{k: os.environ.get(k, "unset") for k in KERNEL_VARIABLES},
                            "torch_runs": torch.backends.cpu.get_cpu_capability()},
            "threads": torch.get_num_threads(), "machine": f"{cpu}, {os.cpu_count()} cores",
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def batch_path(out: Path, panel: str, b: int) -> Path:
    return Path(out) / "runs" / f"{panel}_b{b}.json"


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, sort_keys=True, separators=(",", ":"))
    os.replace(tmp, path)


def train_batch(out: Path, panel: str, b: int, *, scale: str = "cpu") -> dict:
    """Train batch ``b`` of ``panel`` (seeds SEED_BATCH*b ...) and store it (runs without their
    evaluation traces: how each run stopped is kept); the constructions only in batch 0."""
    from verifier.experiments.devices import training_threads
    from verifier.experiments.scales import SWEEPS
    from verifier.experiments.sweeps import run_sweep

    seeds = tuple(range(b * SEED_BATCH, (b + 1) * SEED_BATCH))
    t0 = time.perf_counter()
    if panel == "fig3":
        from verifier.experiments.saturation import fig3_batch
        from verifier.experiments.scales import SATURATION

        with training_threads("cpu"):
            res = fig3_batch(SATURATION[scale], seeds)
    else:
        base = SWEEPS[scale][panel]
        cfg = replace(base, seeds=seeds, construct_up_to=base.construct_up_to if b == 0 else 0)
        res = run_sweep(cfg, seed=0, device="cpu")
        res = dict(res, runs=[{k: v for k, v in r.items() if k != "trace"} for r in res["runs"]],
                   curves=None, count_curves=None)
    with training_threads("cpu"):
        prov = provenance()
    res = dict(res, panel=panel, batch=b, provenance=dict(prov, wall_seconds=round(time.perf_counter() - t0, 1)))
    _write_json(batch_path(out, panel, b), res)
    return res


def stored_batches(out: Path, panel: str) -> list[dict]:
    """The stored batches of ``panel``, in order, up to the first missing one."""
    got, b = [], 0
    while (p := batch_path(out, panel, b)).exists():
        got.append(json.loads(p.read_text()))
        b += 1
    return got


def record(out: Path, eid: str, *, write, unit) -> dict:
    """Experiment ``eid``'s record from all its panels' stored batches (no training): ``unit(eid,
    scale=, seed=)`` (the report's experiment_unit) computes it, ``write(out, scale, row)`` stores
    it; returns the row."""
    from verifier.experiments.saturation import merge_fig3
    from verifier.experiments.sweeps import STORED, merge

    STORED.clear()
    batches = {p: stored_batches(out, p) for p in PANELS[eid]}
    k = min(len(v) for v in batches.values())
    if k == 0:
        raise FileNotFoundError(f"{eid}: no stored batch of {', '.join(p for p, v in batches.items() if not v)}")
    STORED.update({p: (merge_fig3 if p == "fig3" else merge)(v[:k]) for p, v in batches.items()})
    try:
        row = unit(eid, scale="cpu", seed=0)
    finally:
        STORED.clear()
    row["provenance"] = campaign_provenance(batches, k)
    write(out, "cpu", row)
    return row


def campaign_provenance(batches: dict, k: int) -> str:
    """One line: seeds, batches and where and with what they were trained."""
    provs = [b["provenance"] for v in batches.values() for b in v[:k]]
    machines = sorted({p["machine"] for p in provs})
    commits = sorted({p["commit"] for p in provs})
    kernels = sorted({json.dumps(p["cpu_kernels"], sort_keys=True) for p in provs})
    versions = sorted({json.dumps(p["versions"], sort_keys=True) for p in provs})
    hours = sum(p.get("wall_seconds", 0.0) for p in provs) / 3600
    return (f"the stored campaign (reports/experiments/campaign/runs): {k} batch(es) of {SEED_BATCH} seeds per "
            f"panel ({k * SEED_BATCH} seeds per point, cap {SEED_CAP}), trained at commit(s) {', '.join(commits)} "
            f"on {'; '.join(machines)} with {'; '.join(versions)}, kernels {'; '.join(kernels)}, "
            f"{provs[0]['threads'] if provs else '?'} thread(s), {hours:.2f} h of wall time in all")


def run_campaign(ids, out: Path = CAMPAIGN_DIR, *, seed_cap: int = SEED_CAP, hours: float = 3.0, write, unit,
                 log=print) -> dict:
    """Seeds until decided for the sweep experiments ``ids``: batch after batch, each experiment
    until its power check passes or ``seed_cap`` seeds or the ``hours`` wall-time cap (no batch is
    started after it).  Returns {id: "decided" / "cap of seeds" / "time cap"}."""
    deadline = time.monotonic() + hours * 3600
    state = {eid: "open" for eid in ids}
    for b in range(max(1, seed_cap // SEED_BATCH)):
        for eid in ids:
            if state[eid] != "open":
                continue
            for panel in PANELS[eid]:
                if batch_path(out, panel, b).exists():
                    continue
                if time.monotonic() > deadline:
                    state = {k: ("time cap" if v == "open" else v) for k, v in state.items()}
                    log(f"campaign: wall-time cap of {hours:g} h reached before {panel} batch {b}")
                    return state
                t0 = time.perf_counter()
                train_batch(out, panel, b)
                log(f"campaign: {panel} batch {b} (seeds {b * SEED_BATCH}-{(b + 1) * SEED_BATCH - 1}) "
                    f"in {time.perf_counter() - t0:.0f} s")
            row = record(out, eid, write=write, unit=unit)
            if row["power"].get("outcome") == "passed":
                state[eid] = "decided"
            elif (b + 1) * SEED_BATCH >= seed_cap:
                state[eid] = "cap of seeds"
            log(f"campaign: {eid} after {(b + 1) * SEED_BATCH} seeds: {row['status']} ({state[eid]})")
    return state
