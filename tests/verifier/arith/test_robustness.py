"""Certified robustness: the bounds enclose the relative smallest singular
value, the worst subset/context is found, and the tolerance decides."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.compare import Decision
from verifier.arith.robustness import relative_sigma_bounds, relative_sigma_float, stack_robustness, subset_robustness

EPS = np.finfo(np.float64).eps


@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_bounds_enclose_the_float_value(k, extra, seed):
    A = np.random.default_rng(seed).standard_normal((k, k + extra))
    lo, hi = relative_sigma_bounds(A)
    rho = relative_sigma_float(A[None])[0]
    assert lo <= rho * (1 + 1e-9) and rho <= hi * (1 + 1e-9)
    assert 0 < lo <= hi <= 1


def test_float_computed_dependence_fails_at_the_tolerance_and_holds_exactly():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((6, 5))
    V[4] = 2 * V[0] - 3 * V[5]  # dependent up to rounding
    rob = subset_robustness(V, 3, tolerance=5 * EPS, what="queries")
    assert rob.decision is Decision.FALSE and set(rob.index) == {0, 4, 5}
    assert rob.upper <= rob.tolerance and rob.screened == rob.population == 20
    exact = subset_robustness(V, 3, tolerance=0.0)  # the exact reading: tolerance 0
    assert exact.upper > 0  # the rationals are independent; the margin is tiny
    assert exact.upper < 1e-14


def test_a_tolerance_above_the_margin_is_a_failure_not_a_pass():
    V = np.eye(3)
    assert subset_robustness(V, 3, tolerance=0.5).decision is Decision.TRUE  # rho = 1
    assert subset_robustness(V, 3, tolerance=1.0).decision is Decision.FALSE


def test_stack_robustness_names_the_worst_context():
    rng = np.random.default_rng(1)
    E = rng.standard_normal((4, 3, 6))
    E[2, 1] = E[2, 0] + 1e-9 * rng.standard_normal(6)  # nearly repeated token in context 2
    rob = stack_robustness(E, tolerance=6 * EPS, labels=[10, 11, 12, 13], what="context")
    assert rob.what == "context 12" and rob.decision is Decision.TRUE
    assert rob.lower < 1e-8
    assert stack_robustness(E, tolerance=1e-6).decision is Decision.FALSE


def test_sampled_subsets_respect_the_budget():
    V = np.random.default_rng(2).standard_normal((40, 8))
    rob = subset_robustness(V, 6, tolerance=0.0, exhaustive_limit=10, samples=500, budget=6 * 6 * 8 * 50)
    assert rob.screened == 50 and rob.population is None and rob.decision is Decision.TRUE


def test_zero_samples_is_a_clear_error_not_a_crash():
    import pytest

    from verifier.errors import InvalidInstance

    V = np.random.default_rng(0).standard_normal((30, 5))
    with pytest.raises(InvalidInstance, match="at least one sample"):
        subset_robustness(V, 4, tolerance=0.0, exhaustive_limit=10, samples=0)
    assert subset_robustness(V, 2, tolerance=0.0, exhaustive_limit=10**6, samples=0).screened == 435  # exhaustive


def _over_arb_budget(monkeypatch):
    import verifier.arith.robustness as R

    monkeypatch.setattr(R, "ARB_BUDGET", 0.0)  # every matrix is "too large" for Arb
    monkeypatch.setattr(R, "relative_sigma_bounds", lambda *a, **k: pytest.fail("Arb ran above its budget"))


def test_above_the_arb_budget_the_float_bound_decides_and_upper_is_trivial(monkeypatch):
    rng = np.random.default_rng(3)
    V = rng.standard_normal((9, 7))
    exact = subset_robustness(V, 4, tolerance=0.0, what="queries")  # within the budget: Arb
    assert exact.certified >= 1 and exact.upper < 1
    _over_arb_budget(monkeypatch)
    rob = subset_robustness(V, 4, tolerance=0.0, what="queries")
    assert rob.decision is Decision.TRUE and rob.certified == 0 and rob.upper == 1.0
    assert rob.ruled_out == rob.screened == 126 and rob.uncertified == 0
    assert 0 < rob.lower <= exact.upper  # a rigorous lower bound of the same smallest rho
    assert rob.index == exact.index and rob.float_estimate == exact.float_estimate
    stack = rng.standard_normal((5, 3, 6))
    srob = stack_robustness(stack, tolerance=1e-3)
    assert srob.decision is Decision.TRUE and srob.certified == 0 and srob.upper == 1.0 and srob.lower > 1e-3


def test_above_the_arb_budget_a_matrix_not_ruled_out_is_left_undecided_never_true(monkeypatch):
    _over_arb_budget(monkeypatch)
    rng = np.random.default_rng(0)
    V = rng.standard_normal((6, 5))
    V[4] = 2 * V[0] - 3 * V[5]  # dependent up to rounding: FALSE at 5 eps within the budget (above)
    rob = subset_robustness(V, 3, tolerance=5 * EPS, what="queries")
    assert rob.decision is Decision.UNDECIDED and rob.lower == 0.0 and rob.uncertified >= 1
    assert stack_robustness(np.eye(3)[None], tolerance=1.0).decision is Decision.FALSE  # rho <= 1: the trivial upper


def test_more_rows_than_columns_is_false_whatever_the_budget(monkeypatch):
    import verifier.arith.robustness as R

    monkeypatch.setattr(R, "ARB_BUDGET", 0.0)
    stack = np.random.default_rng(4).standard_normal((2, 4, 3))  # 4 vectors in R^3: rho = 0
    rob = stack_robustness(stack, tolerance=0.0)
    assert rob.decision is Decision.FALSE and rob.upper == 0.0


# -- issue 32: zero rows decided on the balls, never on their float64 midpoints --------------------------

@pytest.mark.parametrize("e", [-1084, -1074, -1080, -3000])
def test_a_tiny_nonzero_row_is_not_a_zero_row(e):
    """A row (2^e, 0) whose exact value is nonzero but whose float64 midpoint rounds to 0 (below the
    subnormals): its unit row is (1, 0), so with (0, 1) the exact robustness is 1 (exact rationals: the
    rows are orthogonal).  It used to be certified [0, 0] from the midpoints."""
    from flint import arb, arb_mat, fmpq

    A = arb_mat([[arb(fmpq(1, 2 ** -e)), arb(0)], [arb(0), arb(1)]])
    assert float(A[0, 0].mid()) == 0.0 or e > -1075  # what the old test read
    lo, hi = relative_sigma_bounds(A)
    assert 0.99 < lo <= 1.0 <= hi


def test_a_row_of_balls_around_zero_certifies_nothing_above_zero():
    """Balls that contain 0 but are not 0: the row may be zero (rho = 0) or not (rho up to 1): the
    certified bounds cover both, [0, 1]; an exactly zero row is rho = 0, certified."""
    from flint import arb, arb_mat

    assert relative_sigma_bounds(arb_mat([[arb(0, 1e-30), arb(0, 1e-30)], [arb(0), arb(1)]])) == (0.0, 1.0)
    assert relative_sigma_bounds(arb_mat([[arb(0), arb(0)], [arb(0), arb(1)]])) == (0.0, 0.0)
