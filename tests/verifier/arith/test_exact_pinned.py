"""Pinned behaviour of verifier/arith/exact.py (mutation testing, issue 9)."""
from types import SimpleNamespace

import pytest
from flint import fmpq

from verifier.arith.exact import exact_matvec, to_fmpq
from verifier.errors import InvalidInstance


def test_matvec_with_one_column():
    assert exact_matvec([[2.0], [3.0]], [0.5]) == [fmpq(1), fmpq(3, 2)]
    assert exact_matvec([[], []], []) == [fmpq(0), fmpq(0)]


def test_objects_with_integer_p_and_q_are_rationals():
    assert to_fmpq(SimpleNamespace(p=3, q=4)) == fmpq(3, 4)
    with pytest.raises(InvalidInstance, match="cannot read"):
        to_fmpq(SimpleNamespace(p=3, q=None))
    with pytest.raises(InvalidInstance, match="cannot read"):
        to_fmpq(SimpleNamespace(p=None, q=4))
