"""Pinned arithmetic and checks of the one-sided bound types of
verifier/arith/compare.py (mutation testing, issue 9)."""
import math

import pytest
from flint import arb

from verifier.arith.compare import Enclosure, LowerBound, UpperBound, lower, upper
from verifier.errors import CertificateConflict


def test_values_are_stored_as_balls():
    assert isinstance(UpperBound(1).value, arb) and isinstance(LowerBound(1.5).value, arb)
    assert UpperBound(1).value == 1 and LowerBound(1.5).value == 1.5


def test_sums_and_negation_keep_the_side():
    s = UpperBound(1) + UpperBound(2)
    assert isinstance(s, UpperBound) and s.value == 3
    t = UpperBound(1) + 2
    assert isinstance(t, UpperBound) and t.value == 3 and (2 + UpperBound(1)).value == 3
    u = LowerBound(1) + LowerBound(2)
    assert isinstance(u, LowerBound) and u.value == 3
    v = LowerBound(1) + 2
    assert isinstance(v, LowerBound) and v.value == 3 and (2 + LowerBound(1)).value == 3
    with pytest.raises(TypeError):
        LowerBound(1) + UpperBound(2)
    with pytest.raises(TypeError):
        UpperBound(1) + LowerBound(2)
    n = -LowerBound(2)
    assert isinstance(n, UpperBound) and n.value == -2
    m = -UpperBound(2)
    assert isinstance(m, LowerBound) and m.value == -2


def test_enclosure_checks_its_sides():
    e = Enclosure(LowerBound(1), UpperBound(1))  # equal sides: a point
    assert e.ball() == 1
    wide = Enclosure(LowerBound(1), UpperBound(3)).ball()
    assert wide.contains(1) and wide.contains(3) and not wide.contains(3.5)
    for bad in [(LowerBound(1), LowerBound(2)), (UpperBound(1), UpperBound(2)), (UpperBound(1), LowerBound(2))]:
        with pytest.raises(TypeError):
            Enclosure(*bad)
    with pytest.raises(CertificateConflict):
        Enclosure(LowerBound(2), UpperBound(1))


def test_strings():
    assert str(UpperBound(1)) == f"<= {math.nextafter(1.0, math.inf)!r}"
    assert str(LowerBound(1)) == f">= {math.nextafter(1.0, -math.inf)!r}"
    assert str(Enclosure(LowerBound(1), UpperBound(2))) == \
        f"[{math.nextafter(1.0, -math.inf)!r}, {math.nextafter(2.0, math.inf)!r}]"
    assert upper(UpperBound(1)) > 1 and lower(LowerBound(1)) < 1
