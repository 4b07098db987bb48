"""mha-verify: certified, executable checks of memorization proofs for
attention (Mahdavi, Liao, Thrampoulidis, ICLR 2024; the checkers live in
``proofs/``, one package per paper).

The engine is layered; imports run one way (a test checks it):

* ``errors``: the exceptions, under one root;
* ``arith``: exact rationals, balls, three-valued comparisons and the
  certificates built on them (rank, Kruskal rank, singular values, structural
  null vectors);
* ``model``: the attention layer (Eqs. 1-8) in numpy, balls and torch;
* ``data``: instances, hypothesis strategies, the ``.npz`` reader;
* ``statements``: the evidence type, the registry of papers, statements,
  negative controls and figure data, and the runner;
* ``proofs/`` (outside this package) sits here: it imports the engine above;
* ``experiments``: training and the empirical runs;
* ``report``: tables, HTML, figures;
* ``cli``: the command line.

A layer imports only the layers listed before it; nothing in ``verifier``
imports ``proofs`` (the registry discovers the checker packages by name).
"""
__version__ = "0.1.0"

import os as _os
import platform as _platform

#: The CPU kernels torch and MKL run, pinned before torch loads (``setdefault``: a value the user set
#: wins).  Training in float32 sums in the order of the SIMD width its kernels pick: AVX-512 and
#: AVX2 kernels give other memorized counts on the same seed (measured: the quick Fig. 2a sweep,
#: 152 numbers differ between ATEN_CPU_CAPABILITY=avx2 and this AVX-512 machine's default).  Pinned
#: to AVX2 (``default``/``COMPATIBLE`` on a CPU without it), every x86-64 machine with AVX2 trains
#: the same bits; run.json records the kernels a report actually ran (``cpu_kernels``).
#: MKL's branch is COMPATIBLE (SSE2 without rcpps/rsqrtps), never AVX2: oneMKL documents that
#: MKL_CBWR=AVX2 on a non-Intel CPU runs its AUTO branch instead (vendor dispatch), and measured on
#: this AMD EPYC, AVX2 and AUTO give the same bits while COMPATIBLE gives others - so the committed
#: AMD run and an Intel Xeon's, both "pinned to AVX2", ran different sgemm code (issue 35).
#: COMPATIBLE is the branch that is the same on Intel and non-Intel CPUs (10-30 % slower here).
#: OMP_WAIT_POLICY=PASSIVE: torch's OpenMP threads sleep instead of spinning while they wait (the
#: arithmetic is the same); spinning threads on a loaded machine made the quick Fig. 2a sweep at 2
#: threads take 129 s instead of 5.4 s (measured at load 4 on 2 cores, the same numbers either way).
PINNED_CPU_KERNELS: dict = {}


def _pin_cpu_kernels() -> None:
    PINNED_CPU_KERNELS["OMP_WAIT_POLICY"] = _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if _platform.machine().lower() not in ("x86_64", "amd64"):
        return  # MKL and these capability names are x86's
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    avx2 = bool(features.get("AVX2")) and bool(features.get("FMA3"))
    wanted = {"ATEN_CPU_CAPABILITY": "avx2" if avx2 else "default", "MKL_CBWR": "COMPATIBLE",
              "ONEDNN_MAX_CPU_ISA": "AVX2" if avx2 else "SSE41"}
    for key, value in wanted.items():
        PINNED_CPU_KERNELS[key] = _os.environ.setdefault(key, value)


_pin_cpu_kernels()
