"""Step 2: the readout solves Z M = Y in balls; wrong readouts are caught."""
import numpy as np
import pytest
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


@pytest.mark.parametrize("route", ["gram", "qr", "lstsq"])
def test_float_readout_is_the_minimum_norm_solution_by_every_route(route, monkeypatch):
    """Each route of solve_readout_float (the Gram's Cholesky with refinement, the QR's
    corrected semi-normal equations, lstsq) gives M = Z^+ Y on a well-conditioned wide Z:
    Z M = Y and M in the row space of Z, to a tolerance far above rounding, any BLAS."""
    from proofs.mahdavi2024 import step2_linear_readout as s2

    if route != "gram":
        monkeypatch.setattr(s2, "_gram_solution", lambda Z, Y: None)
    if route == "lstsq":
        monkeypatch.setattr(np.linalg, "qr", lambda A, mode="r": np.zeros((A.shape[1], A.shape[1])))
    rng = np.random.default_rng(5)
    Z, Y = rng.standard_normal((30, 70)), rng.standard_normal((30, 2))
    M = s2.solve_readout_float(Z, Y)
    assert M.shape == (70, 2) and np.abs(Z @ M - Y).max() < 1e-9
    P = Z.T @ np.linalg.solve(Z @ Z.T, Z)  # the projector on the row space
    assert np.abs(P @ M - M).max() < 1e-9


def test_gram_route_refuses_what_it_cannot_solve():
    """Rows dependent to 1e-12: the Gram is not numerically positive definite or its
    refinement stalls; the route declines (None) rather than return a poor M."""
    from proofs.mahdavi2024 import step2_linear_readout as s2

    rng = np.random.default_rng(6)
    Z = rng.standard_normal((20, 40))
    Z[1] = Z[0] + 1e-12 * Z[1]
    assert s2._gram_solution(Z, rng.standard_normal((20, 1))) is None
    assert s2._gram_solution(np.full((3, 5), np.nan), np.ones((3, 1))) is None
    assert not s2._at_rounding_level(np.eye(2), np.ones((2, 1)), np.zeros((2, 1)))
    assert s2._at_rounding_level(np.eye(2), np.ones((2, 1)), np.ones((2, 1)))
