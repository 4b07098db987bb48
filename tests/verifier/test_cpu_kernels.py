"""The CPU kernels torch trains with are pinned before torch loads (verifier/__init__.py), so
that the experiments' numbers do not depend on whether a machine has AVX-512."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

import verifier

X86 = platform.machine().lower() in ("x86_64", "amd64")
pytestmark = pytest.mark.skipif(not X86, reason="the pinned kernels are x86's (MKL, AVX2)")


def _features() -> dict:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as f
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as f
    return f


def _fresh(code: str, **env) -> dict:
    """``code``'s JSON output in a fresh interpreter (nothing imported yet)."""
    base = {k: v for k, v in os.environ.items() if k not in verifier.PINNED_CPU_KERNELS}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout)


def test_importing_verifier_pins_what_the_cpu_supports():
    f = _features()
    avx2 = bool(f.get("AVX2")) and bool(f.get("FMA3"))
    got = _fresh("import json, os, verifier; print(json.dumps(verifier.PINNED_CPU_KERNELS))")
    assert got["ATEN_CPU_CAPABILITY"] == ("avx2" if avx2 else "default")
    assert got["MKL_CBWR"] == "COMPATIBLE"  # MKL's AVX2 branch is AUTO on a non-Intel CPU (vendor dispatch)
    assert got["OMP_WAIT_POLICY"] == "PASSIVE"


def test_torch_runs_the_pinned_kernels_even_when_imported_first():
    """torch reads ATEN_CPU_CAPABILITY at its first dispatch, not at import: importing torch
    before verifier still runs the pinned kernels."""
    f = _features()
    want = "AVX2" if (f.get("AVX2") and f.get("FMA3")) else "DEFAULT"
    for order in ("import torch, verifier", "import verifier, torch"):
        got = _fresh(f"{order}; import json; print(json.dumps(torch.backends.cpu.get_cpu_capability()))")
        assert got == want, order


def test_a_value_the_user_set_wins():
    got = _fresh("import json, verifier; print(json.dumps(verifier.PINNED_CPU_KERNELS))",
                 ATEN_CPU_CAPABILITY="default", MKL_CBWR="COMPATIBLE")
    assert got["ATEN_CPU_CAPABILITY"] == "default" and got["MKL_CBWR"] == "COMPATIBLE"


def test_this_process_records_what_it_pinned():
    assert set(verifier.PINNED_CPU_KERNELS) == {"ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA",
                                                "OMP_WAIT_POLICY"}
    for key, value in verifier.PINNED_CPU_KERNELS.items():
        assert os.environ[key] == value


def test_run_json_records_the_variables_pinned():
    from verifier.report.environment import KERNEL_VARIABLES, run_environment

    assert set(KERNEL_VARIABLES) == set(verifier.PINNED_CPU_KERNELS)
    assert run_environment()["cpu_kernels"].items() >= verifier.PINNED_CPU_KERNELS.items()
