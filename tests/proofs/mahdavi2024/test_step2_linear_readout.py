"""Step 2: the readout solves Z M = Y in balls; wrong readouts are caught."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.step2_linear_readout import (
    build_readout,
    check_step2,
    control_dv_too_small,
    control_perturbed_readout,
)
from verifier.data.strategies import attention_instances
from verifier.model.mha import Weights, readout_matrix


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 3), d_out=st.integers(1, 3)))
def test_readout_memorizes(inst):
    ev = check_step2(inst)
    # T < n breaks Assumption 1 (Kruskal rank >= n): the readout still fits, said but not counted
    unmet = any(h.status in ("refuted", "fails-at-precision") for h in ev.hypotheses)
    assert ev.verdict == ("hypotheses-unmet" if unmet else "verified"), ev.reason
    assert ev.measured["max |Z M - Y| (ball upper bound)"] <= 1e-20


def test_assembly_is_exactly_M():
    rng = np.random.default_rng(0)
    H, d, d_v, d_out = 3, 5, 4, 2
    M = rng.standard_normal((H * d, d_out))
    W_V, W_O, W_D = build_readout(M, H, d, d_v, d_out)
    w = Weights(np.zeros((H, d, 2)), np.zeros((H, d, 2)), W_V, W_O, W_D)
    assert np.array_equal(readout_matrix(w), M)


def test_negative_controls():
    assert control_dv_too_small().verdict == "hypotheses-unmet"
    assert control_perturbed_readout().verdict == "refuted"
