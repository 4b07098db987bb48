"""The facts of one run: package versions, machine, git commit, date and
durations.  They change from run to run and machine to machine, so the report
keeps them apart from the results, which are the same for the same seed."""
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

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
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


def run_environment() -> dict:
    return {"versions": _versions(), "machine": _machine(), "git_commit": _git_commit()}
