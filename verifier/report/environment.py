"""The facts of one run: package versions, machine, git commit, date and
durations.  They change from run to run and machine to machine, so the report
writes them to ONE small file, ``run.json``, and keeps them out of
``results.json``, ``REPORT.md`` and ``index.html``, which are the same, byte
for byte, for the same seed (:func:`strip_volatile` removes every timing)."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def _versions() -> dict:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for pkg in ("mha-verify", "numpy", "scipy", "sympy", "mpmath", "python-flint", "hypothesis", "torch", "matplotlib"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _machine() -> dict:
    import platform

    from verifier.data.machine import cpu_model

    cpu = cpu_model()
    try:
        mem = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
    except (ValueError, OSError, AttributeError):
        mem = "unknown"
    return {"platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(), "memory": mem}


def _git_commit() -> str:
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5)
        if sha.returncode:
            return "unknown"
        return sha.stdout.strip()[:12] + (" (uncommitted changes)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


#: the variables that choose the CPU kernels torch, MKL, oneDNN and OpenMP run (verifier/__init__.py
#: pins them before torch loads; a value the user set wins)
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "OMP_WAIT_POLICY")


def _cpu_kernels() -> dict:
    """The kernel variables this process runs with and the kernels torch runs: the experiments'
    numbers are the same bits on machines that run the same."""
    out = {k: os.environ.get(k, "unset") for k in KERNEL_VARIABLES}
    if "torch" in sys.modules:
        out["torch runs"] = sys.modules["torch"].backends.cpu.get_cpu_capability()
    return out


def run_environment() -> dict:
    return {"versions": _versions(), "machine": _machine(), "cpu_kernels": _cpu_kernels(),
            "git_commit": _git_commit()}


#: keys whose values change from run to run (timings): kept out of
#: results.json, REPORT.md and index.html, gathered in run.json
VOLATILE_KEYS = frozenset({"seconds"})


def strip_volatile(x):
    """A copy of ``x`` without the VOLATILE_KEYS, at any depth."""
    if isinstance(x, dict):
        return {k: strip_volatile(v) for k, v in x.items() if k not in VOLATILE_KEYS}
    if isinstance(x, list):
        return [strip_volatile(v) for v in x]
    return x


#: the fields of a nonsingular-minor certificate that float pivoting chooses (which rows and
#: columns, which rung of the precision ladder decided): on a near-degenerate matrix another
#: machine may choose others, with the same certified rank, so they are facts of the run
MINOR_CHOICES = ("rows", "cols", "method", "prec_bits")


def split_machine_choices(x, path: str = ""):
    """``(x without the machine's choices, {path: what was moved})``: the MINOR_CHOICES of
    every minor certificate (a dict with ``certified_k`` or ``residual_norm_upper``), and
    the evidence and reason of every REJECTED negative control (a deliberately degenerate
    instance, where the float path may go another way to the same verdict; results.json
    keeps its description, expectation and verdict, a control not rejected keeps all).
    run.json holds what was moved, under the same path."""
    moved = {}
    if isinstance(x, list):
        out = []
        for i, v in enumerate(x):
            v, m = split_machine_choices(v, f"{path}/{i}")
            out.append(v)
            moved.update(m)
        return out, moved
    if not isinstance(x, dict):
        return x, moved
    drop = ()
    if "certified_k" in x or "residual_norm_upper" in x:
        drop = MINOR_CHOICES
    elif x.get("rejected") is True and "evidence" in x:
        drop = ("evidence", "reason")
    kept = {k: v for k, v in x.items() if k in drop}
    if kept:
        moved[path or "/"] = kept
    out = {}
    for k, v in x.items():
        if k not in drop:
            out[k], m = split_machine_choices(v, f"{path}/{k}")
            moved.update(m)
    return out, moved


def run_facts(*, argv, started: float, phases: dict, statement_seconds: dict, extra: dict | None = None) -> dict:
    """The one small file of facts that differ between runs of the same seed:
    date, duration, command, machine, versions, git commit, timings."""
    import time

    return {"command": " ".join(["mha-verify"] + list(argv)[1:]) if argv else "(called from Python)",
            "argv": list(argv), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "duration_seconds": round(time.time() - started, 3),
            "phase_seconds": {k: round(v, 3) for k, v in phases.items()},
            "statement_seconds": {k: round(v, 3) for k, v in statement_seconds.items()},
            **(extra or {}), **run_environment()}
