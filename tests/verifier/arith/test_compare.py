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
