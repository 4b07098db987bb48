"""Three-valued comparisons: the only place where balls are compared.

python-flint's ball predicates return True only when the relation holds for
EVERY point of the balls, so ``False`` means "false or undecided".  Here each
predicate is decided in both directions and returns a :class:`Decision`:
TRUE (certain), FALSE (certainly not) or UNDECIDED (the balls overlap the
boundary).  Checkers in ``proofs/`` must go through these helpers, never use a
raw ``<`` on balls.

>>> from flint import arb
>>> certainly_positive(arb(1, 0.5))
<Decision.TRUE: 'true'>
>>> certainly_positive(arb(0, 1))
<Decision.UNDECIDED: 'undecided'>
>>> certainly_less(arb(2), arb(1))
<Decision.FALSE: 'false'>
"""
from __future__ import annotations

import enum
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from flint import arb, ctx

from verifier.errors import InsufficientPrecision

DEFAULT_PREC = 128
MAX_PREC = 4096

T = TypeVar("T")


class Decision(enum.Enum):
    TRUE = "true"
    FALSE = "false"
    UNDECIDED = "undecided"

    def __bool__(self) -> bool:  # pragma: no cover - guard
        raise TypeError("a Decision is three-valued: compare with Decision.TRUE explicitly")

    @staticmethod
    def of(holds: bool, fails: bool) -> "Decision":
        """``holds``/``fails``: the relation and its negation, each certain-only."""
        if holds:
            return Decision.TRUE
        if fails:
            return Decision.FALSE
        return Decision.UNDECIDED

    @staticmethod
    def all(decisions) -> "Decision":
        """Conjunction: FALSE if any is FALSE, TRUE if all TRUE, else UNDECIDED."""
        ds = list(decisions)
        if any(d is Decision.FALSE for d in ds):
            return Decision.FALSE
        if all(d is Decision.TRUE for d in ds):
            return Decision.TRUE
        return Decision.UNDECIDED


def _ball(x) -> arb:
    return x if isinstance(x, arb) else arb(x)


def certainly_positive(x) -> Decision:
    x = _ball(x)
    return Decision.of(x > 0, x <= 0)


def certainly_nonzero(x) -> Decision:
    """TRUE if the ball excludes 0; FALSE only if it is exactly 0."""
    x = _ball(x)
    return Decision.of(x != 0, x == 0)


def certainly_less(a, b) -> Decision:
    a, b = _ball(a), _ball(b)
    return Decision.of(a < b, a >= b)


def certainly_less_equal(a, b) -> Decision:
    a, b = _ball(a), _ball(b)
    return Decision.of(a <= b, a > b)


def upper(x) -> float:
    """A float >= every point of the ball (``float(arb)`` rounds to nearest,
    so one step up makes it rigorous)."""
    import math

    return math.nextafter(float(_ball(x).upper()), math.inf)


def lower(x) -> float:
    """A float <= every point of the ball (one step down after rounding)."""
    import math

    return math.nextafter(float(_ball(x).lower()), -math.inf)


@contextmanager
def workprec(bits: int) -> Iterator[int]:
    """Scope flint's working precision (flint's ``ctx.prec`` is global)."""
    old = ctx.prec
    ctx.prec = int(bits)
    try:
        yield int(bits)
    finally:
        ctx.prec = old


def with_precision_ladder(
    attempt: Callable[[int], tuple[Decision, T]],
    *,
    prec: int = DEFAULT_PREC,
    max_prec: int = MAX_PREC,
) -> tuple[Decision, T, int]:
    """Run ``attempt(bits)`` at ``prec``, doubling while it is UNDECIDED (or
    raises :class:`InsufficientPrecision`/``ZeroDivisionError``) up to
    ``max_prec``.  Returns ``(decision, payload, bits_used)``; a final
    UNDECIDED is returned, not raised, so the caller can say "inconclusive".
    """
    bits = int(prec)
    while True:
        try:
            with workprec(bits):
                decision, payload = attempt(bits)
            if decision is not Decision.UNDECIDED or bits >= max_prec:
                return decision, payload, bits
        except (InsufficientPrecision, ZeroDivisionError):  # flint solve
            if bits >= max_prec:
                return Decision.UNDECIDED, None, bits  # type: ignore[return-value]
        bits = min(2 * bits, max_prec)
