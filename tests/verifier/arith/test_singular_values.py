"""Singular-value bounds (verifier/arith/singular_values.py): one-sided, typed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.compare import Decision, Enclosure, LowerBound, UpperBound, certainly_less, lower, upper
from verifier.arith.singular_values import (
    sigma_min_enclosure,
    sigma_min_lower_bound,
    sigma_min_upper_bound,
    spectral_norm_enclosure,
    spectral_norm_lower_bound,
    spectral_norm_upper_bound,
)
from verifier.errors import InsufficientPrecision, InvalidInstance

# --- sigma_min -------------------------------------------------------------------

@settings(deadline=None, max_examples=30)
@given(st.integers(1, 12), st.integers(0, 10), st.integers(0, 2**32 - 1))
def test_sigma_min_enclosure_brackets_numpy_and_is_tight(T, extra, seed):
    A = np.random.default_rng(seed).standard_normal((T, T + extra))
    s = np.linalg.svd(A, compute_uv=False)[-1]
    if s < 1e-6 * np.linalg.norm(A, 2):
        return  # not well conditioned
    enc = sigma_min_enclosure(A)
    assert isinstance(enc, Enclosure)
    assert 0 < lower(enc) <= s * (1 + 1e-9)
    assert upper(enc) >= s * (1 - 1e-9)
    assert lower(enc) >= s * (1 - 1e-6)  # small matrices: squarings until converged


def test_sigma_min_bounds_are_one_sided_types():
    A = np.diag([3.0, 2.0])
    lo, hi = sigma_min_lower_bound(A), sigma_min_upper_bound(A)
    assert isinstance(lo, LowerBound) and isinstance(hi, UpperBound)
    # a lower bound proves sigma > 1.5, never refutes sigma > 2.5 ...
    assert certainly_less(1.5, lo) is Decision.TRUE
    assert certainly_less(2.5, lo) is Decision.UNDECIDED
    # ... which needs the upper side
    assert certainly_less(2.5, hi) is Decision.FALSE
    with pytest.raises(TypeError):
        upper(lo)
    with pytest.raises(TypeError):
        lower(hi)


def test_sigma_min_near_singular_is_tight():
    """Tight to ~1e-6 relative even at sigma_min = 1e-12 (the App. B.2 cases)."""
    A = np.array([[1.0, 0.0, 0.0], [0.0, 1e-12, 0.0], [0.3, 0.2, 1.0]])
    s = np.linalg.svd(A, compute_uv=False)[-1]
    enc = sigma_min_enclosure(A)
    assert s * (1 - 1e-6) <= lower(enc) and upper(enc) <= s * (1 + 1e-6)


def test_sigma_min_of_singular_matrix_raises():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    with pytest.raises(InsufficientPrecision):
        sigma_min_lower_bound(A)
    with pytest.raises(InvalidInstance):
        sigma_min_lower_bound(A.T)
    # the upper bound of an exactly singular matrix is (nearly) zero, never negative
    assert 0 <= upper(sigma_min_upper_bound(A)) < 1e-14


# --- spectral norm ----------------------------------------------------------------

@settings(deadline=None, max_examples=20)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**32 - 1), st.integers(-200, 200))
def test_spectral_norm_enclosure_brackets_numpy(m, n, seed, k):
    A = np.random.default_rng(seed).standard_normal((m, n)) * 2.0 ** k  # any scale
    s = np.linalg.norm(A, 2)
    enc = spectral_norm_enclosure(A)
    assert lower(enc) <= s * (1 + 1e-12) and upper(enc) >= s * (1 - 1e-12)
    assert lower(enc) >= s * (1 - 1e-9) and upper(enc) <= s * (1 + 1e-6)


def test_spectral_norm_lower_bound_refutes_a_small_norm():
    A = np.array([[3.0, 0.0], [0.0, 1.0]])
    assert certainly_less(spectral_norm_lower_bound(A), 2.0) is Decision.FALSE
    assert certainly_less(spectral_norm_upper_bound(A), 3.5) is Decision.TRUE
    assert upper(spectral_norm_upper_bound(np.zeros((2, 3)))) <= 1e-300
