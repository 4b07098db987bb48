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
    control_small_c_zero_encoder,
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
    assert ev.method.startswith("vacuous")  # d_KL(pi, L) = 0 <= RHS: counted neither way by the report


def _peaked(**kw):
    return make_sequence_instance(**{**dict(N=900, S=2, d=880, d_h=1, H=1, T0=4, conditionals="peaked", seed=0),
                                     **kw})


def test_the_repair_is_checked_where_it_can_fail():
    """Peaked rows (mass 1 - 2^-10 on the mode): the RHS lies below the zero encoder's d_KL, so a construction
    without its scaling fails the bound (the control), and the proof's construction meets it."""
    ev = check_dana_thm2_small_c(_peaked())
    assert ev.verdict == "verified" and ev.certified and not ev.method.startswith("vacuous")
    assert ev.measured["RHS < d_KL(pi, 0)"] == "true" and ev.measured["RHS"] < math.log(900)
    assert ev.measured["d_KL(pi, 0) >="] > ev.measured["RHS"] > ev.measured["d_KL(pi, f) <="]
    assert ev.measured["T0 <= d (d_KL(pi, L) = 0)"] is True  # said: the L-level bound is implied there
    zero = control_small_c_zero_encoder()
    assert zero.verdict == "refuted" and zero.certified


def test_with_flat_rows_the_bound_is_implied_and_the_control_cannot_fail_it():
    """The committed instances before issue 34: RHS above log N >= d_KL(pi, 0): nothing there can fail."""
    inst = _peaked(conditionals="positive")
    ev = check_dana_thm2_small_c(inst)
    assert ev.verdict == "verified" and ev.measured["RHS < d_KL(pi, 0)"] == "false" and ev.measured["RHS"] > math.log(900)
    assert check_dana_thm2_small_c(inst, construction="zero").verdict == "inconclusive"
