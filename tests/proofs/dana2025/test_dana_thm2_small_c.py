"""The repaired Thm. 2 (dana_thm2_small_c): verified where it says something,
hypotheses-unmet outside C < 1/2, and the threshold 1/2 is tight."""
from __future__ import annotations

import math

import numpy as np
import pytest

from proofs.dana2025.thm2_small_c import (
    FIRST_NONTRIVIAL_N,
    check_dana_thm2_small_c,
    control_small_c_outside,
    control_small_c_weakened,
    small_c_hypothesis,
)
from verifier.data.sequences import from_sequences, make_sequence_instance


def test_verified_in_the_nontrivial_regime():
    ev = check_dana_thm2_small_c(make_sequence_instance(N=900, S=2, d=880, d_h=1, H=1, T0=4,
                                                        conditionals="positive", seed=0))
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["regime"].startswith("non-trivial")
    assert ev.measured["C"] < 0.5 and ev.measured["d_KL(pi, f) <="] <= ev.measured["RHS"]


def test_first_nontrivial_n_is_where_c_below_half_meets_d_below_n_minus_1():
    ok = lambda N: N - 2 > 128 * math.log(N + 1)  # noqa: E731 - some d <= N-2 has d > 128 ln(N+1)
    assert ok(FIRST_NONTRIVIAL_N) and not ok(FIRST_NONTRIVIAL_N - 1)


@pytest.mark.parametrize("N, d, status", [(3, 177, "refuted"), (3, 178, "certified"), (900, 870, "refuted"),
                                          (900, 871, "certified")])
def test_the_hypothesis_is_decided_in_balls(N, d, status):
    assert small_c_hypothesis(N, d).status == status


def test_controls():
    assert control_small_c_weakened().verdict == "refuted"
    assert control_small_c_outside().verdict == "hypotheses-unmet"


def test_trivial_regime_is_named():
    inst = from_sequences(np.array([[0, 0]]), N=3, conditionals=np.array([[0.5, 0.25, 0.25]]), d=200, H=1,
                          kind="test")
    ev = check_dana_thm2_small_c(inst)
    assert ev.verdict == "verified" and ev.measured["regime"].startswith("trivial")
