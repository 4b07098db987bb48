"""Smallest-singular-value bounds (verifier/arith/singular_values.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.compare import upper
from verifier.arith.singular_values import sigma_min_enclosure, sigma_min_lower_bound
from verifier.errors import InsufficientPrecision, InvalidInstance

# --- sigma_min -------------------------------------------------------------------

@settings(deadline=None, max_examples=30)
@given(st.integers(1, 12), st.integers(0, 10), st.integers(0, 2**32 - 1))
def test_sigma_min_lower_bound_is_below_numpy_and_positive(T, extra, seed):
    A = np.random.default_rng(seed).standard_normal((T, T + extra))
    s = np.linalg.svd(A, compute_uv=False)[-1]
    if s < 1e-6 * np.linalg.norm(A, 2):
        return  # not well conditioned
    lo, hi = sigma_min_enclosure(A)
    assert 0 < upper(lo) <= s * (1 + 1e-9)
    assert hi >= s * (1 - 1e-9)
    if s > 1e-3 * np.linalg.norm(A, 2):
        assert upper(lo) >= 0.3 * s  # not vacuous


def test_sigma_min_of_singular_matrix_raises():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    with pytest.raises(InsufficientPrecision):
        sigma_min_lower_bound(A)
    with pytest.raises(InvalidInstance):
        sigma_min_lower_bound(A.T)
