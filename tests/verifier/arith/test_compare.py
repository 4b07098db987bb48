"""Three-valued ball comparisons: TRUE only when certain, UNDECIDED named."""
import math

import pytest
from flint import arb, ctx
from hypothesis import assume, given
from hypothesis import strategies as st

from verifier.arith.compare import (
    Decision,
    certainly_less,
    certainly_less_equal,
    certainly_nonzero,
    certainly_positive,
    lower,
    upper,
    with_precision_ladder,
    workprec,
)
from verifier.errors import InsufficientPrecision


@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(0, 1e3, allow_nan=False))
def test_positive_is_three_valued(m, r):
    assume(abs(abs(m) - r) > 1e-6 * max(1.0, r))  # arb rounds radii up: the boundary is undecided
    d = certainly_positive(arb(m, r))
    if m - r > 0:
        assert d is Decision.TRUE
    elif m + r <= 0:
        assert d is Decision.FALSE
    else:
        assert d is Decision.UNDECIDED


def test_decision_refuses_truthiness():
    with pytest.raises(TypeError):
        bool(Decision.TRUE)


def test_nonzero_false_only_for_exact_zero():
    assert certainly_nonzero(arb(0)) is Decision.FALSE
    assert certainly_nonzero(arb(0, 1e-30)) is Decision.UNDECIDED
    assert certainly_nonzero(arb(1e-300)) is Decision.TRUE


def test_less_and_less_equal():
    assert certainly_less(arb(1), arb(2)) is Decision.TRUE
    assert certainly_less(arb(2), arb(2)) is Decision.FALSE
    assert certainly_less_equal(arb(2), arb(2)) is Decision.TRUE
    assert certainly_less_equal(arb(2, 1), arb(2)) is Decision.UNDECIDED


def test_upper_lower_are_rigorous():
    x = arb(1) + arb(2) ** -60
    assert upper(x) > 1.0 and lower(x) <= 1.0 + 2 ** -60
    assert upper(arb(-3.5)) >= -3.5 >= lower(arb(-3.5))
    assert math.isfinite(upper(arb(1e300)))


def test_workprec_restores():
    old = ctx.prec
    with workprec(300):
        assert ctx.prec == 300
    assert ctx.prec == old


def test_ladder_raises_precision_until_decided():
    target = arb(2) ** -200  # needs more than 128 bits to separate 1 + t from 1

    def attempt(bits):
        return certainly_less(arb(1), arb(1) + target), bits

    decision, bits_seen, bits = with_precision_ladder(attempt, prec=64, max_prec=1024)
    assert decision is Decision.TRUE and bits >= 256


def test_ladder_stops_undecided_at_max_prec():
    def attempt(bits):
        raise InsufficientPrecision("never decidable")

    decision, payload, bits = with_precision_ladder(attempt, prec=64, max_prec=256)
    assert decision is Decision.UNDECIDED and bits == 256


# --- one-sided bounds: they prove in their direction and never refute -------------

from verifier.arith.compare import Enclosure, LowerBound, UpperBound  # noqa: E402
from verifier.errors import CertificateConflict  # noqa: E402


@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(-1e6, 1e6, allow_nan=False))
def test_upper_bound_never_refutes(u, b):
    """q <= u: 'q < b' and 'q <= b' are TRUE or UNDECIDED, never FALSE; and
    'b < q' is FALSE or UNDECIDED, never TRUE."""
    ub = UpperBound(arb(u))
    assert certainly_less(ub, b) is not Decision.FALSE
    assert certainly_less_equal(ub, b) is not Decision.FALSE
    assert certainly_less(b, ub) is not Decision.TRUE
    assert (certainly_less(ub, b) is Decision.TRUE) == (u < b)


@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(-1e6, 1e6, allow_nan=False))
def test_lower_bound_never_refutes(l, b):
    lb = LowerBound(arb(l))
    assert certainly_less(b, lb) is not Decision.FALSE
    assert certainly_less(lb, b) is not Decision.TRUE
    assert certainly_positive(lb) is not Decision.FALSE
    assert (certainly_less(b, lb) is Decision.TRUE) == (b < l)


def test_enclosure_decides_both_ways_and_refuses_contradictions():
    enc = Enclosure(LowerBound(arb(1)), UpperBound(arb(2)))
    assert certainly_less(enc, 3) is Decision.TRUE and certainly_less(enc, 0.5) is Decision.FALSE
    assert certainly_less(enc, 1.5) is Decision.UNDECIDED
    assert lower(enc) <= 1 and upper(enc) >= 2
    with pytest.raises(CertificateConflict):
        Enclosure(LowerBound(arb(3)), UpperBound(arb(2)))


def test_one_sided_values_are_not_balls():
    ub = UpperBound(arb(1))
    with pytest.raises(TypeError):
        arb(ub)
    with pytest.raises(TypeError):
        float(ub)
    with pytest.raises(TypeError):
        ub * LowerBound(arb(2))
    with pytest.raises(TypeError):
        ub + LowerBound(arb(2))
    with pytest.raises(ValueError):
        ub * -1.0  # scaling by a negative factor flips the side
    with pytest.raises(TypeError):
        lower(ub)
    assert isinstance(-ub, LowerBound) and isinstance(ub * 2 + 1, UpperBound)
    assert upper(ub.sqrt()) >= 1.0
    assert certainly_nonzero(UpperBound(arb(-1))) is Decision.TRUE
    assert certainly_nonzero(UpperBound(arb(0))) is Decision.UNDECIDED


def test_conflicting_certificates_raise():
    with pytest.raises(CertificateConflict):
        Decision.of(True, True)


def test_ladder_doubles_the_precision():
    seen = []

    def attempt(bits):
        seen.append(bits)
        return Decision.UNDECIDED, bits

    with_precision_ladder(attempt, prec=64, max_prec=1000)
    assert seen == [64, 128, 256, 512, 1000]


def test_upper_and_lower_read_the_right_end_of_a_wide_ball():
    x = arb(1, 0.5)
    assert lower(x) <= 0.5 + 1e-9 and upper(x) >= 1.5 - 1e-9
    assert lower(LowerBound(x)) <= 0.5 + 1e-9 and upper(UpperBound(x)) >= 1.5 - 1e-9


def test_scaling_one_sided_bounds_by_zero_or_a_fraction():
    assert upper(UpperBound(arb(2)) * 0) == pytest.approx(0, abs=1e-300)
    assert upper(UpperBound(arb(2)) * 0.5) >= 1.0
    assert lower(LowerBound(arb(2)) * 0.5) <= 1.0


def test_only_numbers_balls_and_bounds_compare():
    for bad in (None, "1.5", [1.0], True):
        with pytest.raises(TypeError):
            certainly_positive(bad)
