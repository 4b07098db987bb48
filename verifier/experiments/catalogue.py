"""The paper's empirical claims as experiments with a criterion stated before
they run.

An experiment module registers one runner per claim id of EXPERIMENTS.md
(``fig2a`` ... ``table3``) with :func:`experiment`, giving the claim in the
paper's words and the success criterion in code terms *before* anything runs.
A runner ``run(scale, seed) -> Outcome`` measures; the criterion decides.  A
measure must be able to come out against the paper: ``criterion`` names the
numbers that decide and the threshold, and ``Outcome.status`` follows from
them, never from how the run looked.

Power before verdict: an experiment may register a ``power`` check
(:mod:`verifier.experiments.power`: converged by a plateau rule, the easiest
setting memorized, seeds within a standard-error budget), also stated before
the run; a negative verdict of runs that fail it is "inconclusive" with what
would decide it, never "not reproduced" (:func:`assess`).  A ``kind="probe"``
experiment probes a conjecture or side result: its status is "finding", never a
reproduction.  :func:`rederive` re-derives a stored result's status.

Scales: ``quick`` (seconds, CI smoke), ``cpu`` (the report's default: minutes
on 2 cores), ``thorough`` (longer CPU runs), ``paper`` (the authors' grid: for
a GPU).  Optional packages (the ``experiments`` extra) are named in
``requires``; a missing one gives the status "skipped" with the command that
enables it, never an error and never a pass.

>>> @experiment("demo", claim="1 + 1 = 2", criterion="measured sum == 2",
...             requires=("numpy",))
... def _demo(scale, seed):
...     return Outcome(status="reproduced" if 1 + 1 == 2 else "not reproduced",
...                    why="the sum is 2", measured={"sum": 2})
>>> run_experiment("demo", scale="quick", seed=0).status
'reproduced'
>>> _ = EXPERIMENTS.pop("demo")
"""
from __future__ import annotations

import importlib
import importlib.util
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from verifier.experiments.power import Power, judge

SCALES = ("quick", "cpu", "thorough", "paper")
STATUSES = ("reproduced", "partially reproduced", "not reproduced", "inconclusive", "finding", "skipped", "error")
#: kinds: a reproduction of a claim of the paper, or a probe of a conjecture / side result
#: (status "finding", never counted among the reproductions)
KINDS = ("reproduction", "probe")
#: report mode -> experiment scale
REPORT_SCALE = {"quick": "quick", "default": "cpu", "thorough": "thorough"}


@dataclass(frozen=True)
class Figure:
    """One figure of an experiment: PNG bytes and a caption that says what was
    measured and how it differs from the paper's scale."""

    name: str
    title: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class Outcome:
    """What one run of an experiment found.  ``measured``: plain JSON numbers
    (deterministic for a seed apart from timings under ``seconds`` keys)."""

    status: str
    why: str
    measured: dict = field(default_factory=dict)
    figures: tuple[Figure, ...] = ()
    scale: str = ""
    seed: int = 0
    seconds: float = 0.0
    power: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} not in {STATUSES}")


@dataclass(frozen=True)
class Experiment:
    id: str
    claim: str
    criterion: str
    run: Callable[[str, int], Outcome]
    requires: tuple[str, ...] = ()
    module: str = ""
    power: Power | None = None
    decide: Callable[[dict], tuple[str, str]] | None = None
    kind: str = "reproduction"


EXPERIMENTS: dict[str, Experiment] = {}

#: The modules of ``verifier.experiments`` that register experiments.
MODULES: tuple[str, ...] = ("capacity_sweeps", "sweep_variants", "saturation", "capacity_probe", "table1",
                            "table3")


#: Per-run memo tables of experiment modules (e.g. a sweep two claims read), emptied by
#: :func:`clear_caches` so that each report computes its runs afresh.
CACHES: list[dict] = []


def clear_caches() -> None:
    for c in CACHES:
        c.clear()


def experiment(eid: str, *, claim: str, criterion: str, requires: tuple[str, ...] = (), power: Power | None = None,
               decide: Callable[[dict], tuple[str, str]] | None = None, kind: str = "reproduction"):
    """Register ``run(scale, seed) -> Outcome`` as the experiment for claim ``eid``; ``power``:
    its power check (:mod:`.power`); ``decide(measured) -> (status, why)``: its criterion on
    stored numbers (for re-deriving a status); ``kind``: one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} not in {KINDS}")

    def register(fn):
        EXPERIMENTS[eid] = Experiment(eid, claim, criterion, fn, tuple(requires), fn.__module__, power, decide, kind)
        return fn

    return register


def load_all() -> dict[str, Experiment]:
    for name in MODULES:
        importlib.import_module(f"verifier.experiments.{name}")
    return EXPERIMENTS


def missing_packages(exp: Experiment) -> list[str]:
    return [p for p in exp.requires if importlib.util.find_spec(p) is None]


def run_experiment(eid: str, *, scale: str, seed: int = 0) -> Outcome:
    """Run one experiment; a missing optional package gives "skipped" (with the
    install command), an exception gives "error" with its message."""
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r} not in {SCALES}")
    exp = load_all()[eid]
    t0 = time.perf_counter()
    missing = missing_packages(exp)
    if missing:
        return assess(exp, "skipped", f"needs {', '.join(missing)}: pip install -e \".[experiments]\"", {},
                      Outcome("skipped", "", scale=scale, seed=seed))
    try:
        out = exp.run(scale, seed)
    except Exception as exc:  # noqa: BLE001 - shown in the report, never hidden
        return assess(exp, "error", f"{type(exc).__name__}: {exc}", {},
                      Outcome("error", "", scale=scale, seed=seed, seconds=time.perf_counter() - t0))
    return replace(assess(exp, out.status, out.why, out.measured, out), scale=scale, seed=seed,
                   seconds=time.perf_counter() - t0)


def assess(exp: Experiment, status: str, why: str, measured: dict, out: Outcome | None = None) -> Outcome:
    """The final status from the criterion's (``status``, ``why``) and the stored numbers:
    a probe's result is a "finding"; a negative verdict of runs that fail the power check
    is "inconclusive".  ``power`` records the check as stated, its outcome, and the status
    the criterion gave (so that a stored result re-derives: :func:`rederive`)."""
    base = out or Outcome(status, why, measured)
    stated = exp.power.stated if exp.power else ("none registered (no training runs: the verdict rests on "
                                                 "certificates and sampled evidence at the stated budget)")
    if status in ("skipped", "error"):
        return replace(base, status=status, why=why, power={"stated": stated, "outcome": "not run", "checks": []})
    if exp.power is None:
        power = {"stated": stated, "outcome": "not applicable", "checks": []}
    else:
        power = {"stated": stated, **exp.power.evaluate(measured), "decides": exp.power.decides}
    power["criterion_status"], power["criterion_why"] = status, why
    if exp.kind == "probe":
        final, text = "finding", why
    else:
        final, text = judge(status, why, power, exp.power.decides if exp.power else "")
    return replace(base, status=final, why=text, power=power)


def rederive(record: dict) -> Outcome:
    """Re-derive the status of a stored result (``{"id", "status", "why", "measured", ...}``,
    as ``benchmarks/run_experiments.py`` writes it) with today's rules: the experiment's
    ``decide`` when it registers one, else the criterion's status as stored; then
    :func:`assess`.  The same stored numbers give the same status on every machine."""
    exp = load_all()[record["id"]]
    measured = record.get("measured", {})
    stored = record.get("power", {}).get("criterion_status", record["status"])
    if stored in ("skipped", "error"):
        return assess(exp, stored, record["why"], measured)
    if exp.decide is not None:
        status, why = exp.decide(measured)
    else:
        status, why = stored, record.get("power", {}).get("criterion_why", record["why"])
    return assess(exp, status, why, measured)
