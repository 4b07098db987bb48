"""The float path's enclosures from the cheapest to the tightest
(rank._decide_minor with a tuple of builders, as Prop. 1's certificate
passes them): the first that certifies decides; a looser one that fails, or
raises, hands over to the next; all failing is the float path's failure as
before (arb next, for method "auto").  Each tier is an enclosure of the same
minor, so any one certifying proves it."""
from __future__ import annotations

import numpy as np
import pytest

import verifier.arith.rank as rank
from verifier.arith.compare import Decision
from verifier.arith.float_bounds import FloatRangeError
from verifier.arith.float_certificates import FloatBall
from verifier.arith.rank import certify_rank_lower_bound_lazy

A = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])  # nonsingular, well conditioned


def tight(rows, cols):
    return FloatBall(A[np.ix_(rows, cols)], np.zeros((len(rows), len(cols))))


def loose(rows, cols):  # a valid enclosure too wide to certify (it holds singular matrices)
    return FloatBall(A[np.ix_(rows, cols)], np.full((len(rows), len(cols)), 5.0))


def raising(rows, cols):
    raise FloatRangeError("logit differences enclosed wider than 0.5")


def singular_ball(rows, cols):  # a degenerate ball around a singular matrix: never certified
    return FloatBall(np.ones((len(rows), len(cols))), np.zeros((len(rows), len(cols))))


def _cert(tiers, method="float"):
    return certify_rank_lower_bound_lazy(A, 3, lambda r, c: None, method=method, minor_float=tiers,
                                         cols=[0, 1, 2])


@pytest.mark.parametrize("first", [loose, raising, singular_ball])
def test_a_looser_tier_that_fails_hands_over_to_the_next(first):
    calls = []

    def counted(rows, cols):
        calls.append(1)
        return tight(rows, cols)

    cert = _cert((first, counted))
    assert cert.decision is Decision.TRUE and calls == [1]
    assert "enclosure 2 of 2" in cert.method


def test_the_first_tier_that_certifies_decides_and_the_next_is_never_built():
    def never(rows, cols):
        raise AssertionError("the tighter enclosure was built after the first certified")

    cert = _cert((tight, never))
    assert cert.decision is Decision.TRUE and "enclosure" not in cert.method


def test_one_builder_as_before():
    assert _cert(tight).decision is Decision.TRUE
    assert _cert(loose).decision is Decision.UNDECIDED


@pytest.mark.parametrize("tiers", [(loose, singular_ball), (raising, loose), (singular_ball,)])
def test_every_tier_failing_is_not_decided_on_the_float_path(tiers):
    cert = _cert(tiers)
    assert cert.decision is Decision.UNDECIDED and "not decided" in cert.method


def test_every_tier_failing_moves_on_to_arb_under_auto(monkeypatch):
    monkeypatch.setattr(rank, "FLOAT_FROM", 0)  # the float path first at k = 3
    from verifier.arith.balls import to_arb_mat

    cert = certify_rank_lower_bound_lazy(A, 3, lambda r, c: to_arb_mat(A[np.ix_(r, c)]), method="auto",
                                         minor_float=(loose, raising), cols=[0, 1, 2])
    assert cert.decision is Decision.TRUE and "arb" in cert.method and "float path" in cert.method


def test_no_enclosure_at_all_is_bad_input():
    from verifier.errors import InvalidInstance

    with pytest.raises(InvalidInstance, match="no float enclosure"):
        _cert(())
