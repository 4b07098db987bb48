"""Three-valued comparisons: the only place where balls are compared.

python-flint's ball predicates return True only when the relation holds for
EVERY point of the balls, so ``False`` means "false or undecided".  Here each
predicate is decided in both directions and returns a :class:`Decision`:
TRUE (certain), FALSE (certainly not) or UNDECIDED (the balls overlap the
boundary).  Checkers in ``proofs/`` must go through these helpers, never use a
raw ``<`` on balls.

Operands are of two kinds, and the comparisons know which:

* an ENCLOSURE (an ``arb`` ball, a float, an :class:`Enclosure`): the true
  number lies in it, so a comparison may come out TRUE or FALSE;
* a ONE-SIDED bound, :class:`UpperBound` (the true number is <= it, e.g. a
  norm bounded by Frobenius) or :class:`LowerBound` (>= it, e.g. a smallest
  singular value).  It knows nothing on its other side, so it can prove the
  inequality it bounds and never refute it: ``certainly_less(UpperBound(u), b)``
  is TRUE or UNDECIDED, never FALSE.  A refutation needs a bound on the
  other side (an :class:`Enclosure` of both).

One-sided values are deliberately not ``arb``: ``arb(UpperBound(...))``,
``float(...)`` and arithmetic beyond the few monotone operations below raise
``TypeError``, so a bound cannot be passed off as an enclosure by accident.

>>> from flint import arb
>>> certainly_positive(arb(1, 0.5))
<Decision.TRUE: 'true'>
>>> certainly_positive(arb(0, 1))
<Decision.UNDECIDED: 'undecided'>
>>> certainly_less(arb(2), arb(1))
<Decision.FALSE: 'false'>
>>> certainly_less(UpperBound(arb(2)), 1)       # ||M|| <= 2 says nothing against ||M|| < 1
<Decision.UNDECIDED: 'undecided'>
>>> certainly_less(UpperBound(arb(0.5)), 1)
<Decision.TRUE: 'true'>
>>> certainly_less(1, Enclosure(LowerBound(arb(0.5)), UpperBound(arb(0.9))))
<Decision.FALSE: 'false'>
"""
from __future__ import annotations

import enum
import math
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Real
from typing import Callable, Iterator, TypeVar, Union

from flint import arb, ctx, fmpq, fmpz

from verifier.errors import CertificateConflict, InsufficientPrecision

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
        """``holds``/``fails``: the relation and its negation, each certain-only.
        Both at once means two certificates contradict each other: a bug, raised
        as :class:`~verifier.errors.CertificateConflict`, never a verdict."""
        if holds and fails:
            raise CertificateConflict("a relation was certified both true and false: inconsistent bounds")
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
    """An exact number or a ball as an ``arb`` enclosure; one-sided bounds are refused."""
    if isinstance(x, arb):
        return x
    if isinstance(x, (UpperBound, LowerBound, Enclosure)):
        raise TypeError(f"{type(x).__name__} is not a ball: compare it with the certainly_* helpers")
    if isinstance(x, bool):
        raise TypeError("a bool is not a number to compare")
    if isinstance(x, (fmpq, fmpz, int)):
        return arb(x)
    if isinstance(x, Real):  # python / numpy floats: exact dyadic rationals
        return arb(float(x))
    raise TypeError(f"cannot compare a {type(x).__name__}: give an arb, a number or a one-sided bound")


def _as_arb(value) -> arb:
    if isinstance(value, (UpperBound, LowerBound, Enclosure)):
        raise TypeError(f"a {type(value).__name__} cannot be the value of another bound")
    return _ball(value)


def _nonnegative(c) -> arb:
    c = _ball(c)
    if not c >= 0:
        raise ValueError("a one-sided bound can only be scaled by a factor certainly >= 0")
    return c


@dataclass(frozen=True)
class UpperBound:
    """A quantity ``q`` known only from above: ``q <= value`` (``value`` a ball,
    so ``q <= value.upper()`` is certain).  It proves ``q < b`` / ``q <= b``
    and can never refute them.  Monotone arithmetic: ``+`` another upper bound
    or an enclosure, ``*`` a factor certainly >= 0 (for q >= 0), ``-x`` is a
    :class:`LowerBound` of ``-q``."""

    value: arb

    def __post_init__(self):
        object.__setattr__(self, "value", _as_arb(self.value))

    def __add__(self, other) -> "UpperBound":
        if isinstance(other, LowerBound):
            raise TypeError("an upper bound plus a lower bound bounds nothing")
        return UpperBound(self.value + (other.value if isinstance(other, UpperBound) else _ball(other)))

    __radd__ = __add__

    def __mul__(self, c) -> "UpperBound":
        if isinstance(c, (UpperBound, LowerBound, Enclosure)):
            raise TypeError("multiply one-sided bounds through their values, with a stated reason")
        return UpperBound(self.value * _nonnegative(c))

    __rmul__ = __mul__

    def __neg__(self) -> "LowerBound":
        return LowerBound(-self.value)

    def sqrt(self) -> "UpperBound":
        """sqrt is increasing: an upper bound of ``sqrt(q)`` (q >= 0)."""
        return UpperBound(self.value.nonnegative_part().sqrt())

    def __str__(self) -> str:
        return f"<= {upper(self)!r}"


@dataclass(frozen=True)
class LowerBound:
    """A quantity ``q`` known only from below: ``q >= value``.  It proves
    ``q > b`` / ``q >= b`` and can never refute them (the mirror of
    :class:`UpperBound`)."""

    value: arb

    def __post_init__(self):
        object.__setattr__(self, "value", _as_arb(self.value))

    def __add__(self, other) -> "LowerBound":
        if isinstance(other, UpperBound):
            raise TypeError("a lower bound plus an upper bound bounds nothing")
        return LowerBound(self.value + (other.value if isinstance(other, LowerBound) else _ball(other)))

    __radd__ = __add__

    def __mul__(self, c) -> "LowerBound":
        if isinstance(c, (UpperBound, LowerBound, Enclosure)):
            raise TypeError("multiply one-sided bounds through their values, with a stated reason")
        return LowerBound(self.value * _nonnegative(c))

    __rmul__ = __mul__

    def __neg__(self) -> UpperBound:
        return UpperBound(-self.value)

    def __str__(self) -> str:
        return f">= {lower(self)!r}"


@dataclass(frozen=True)
class Enclosure:
    """Both sides of a quantity, from two separate certificates:
    ``lower.value <= q <= upper.value``.  Compares like a ball (TRUE or FALSE)."""

    lower: LowerBound
    upper: UpperBound

    def __post_init__(self):
        if not isinstance(self.lower, LowerBound) or not isinstance(self.upper, UpperBound):
            raise TypeError("Enclosure(lower: LowerBound, upper: UpperBound)")
        if self.lower.value > self.upper.value:
            raise CertificateConflict("lower bound above upper bound: the two certificates contradict")

    def ball(self) -> arb:
        """The smallest ball holding [lower, upper]."""
        return self.lower.value.union(self.upper.value)

    def __str__(self) -> str:
        return f"[{lower(self)!r}, {upper(self)!r}]"


Comparable = Union[arb, float, int, UpperBound, LowerBound, Enclosure]


def _ends(x) -> tuple[arb | None, arb | None]:
    """(ball below which q cannot be, ball above which q cannot be); None = unknown."""
    if isinstance(x, UpperBound):
        return None, x.value
    if isinstance(x, LowerBound):
        return x.value, None
    if isinstance(x, Enclosure):
        return x.lower.value, x.upper.value
    b = _ball(x)
    return b, b


def certainly_less(a: Comparable, b: Comparable) -> Decision:
    """``a < b``: TRUE when a's upper side is certainly below b's lower side,
    FALSE when a's lower side is certainly >= b's upper side."""
    alo, ahi = _ends(a)
    blo, bhi = _ends(b)
    holds = ahi is not None and blo is not None and bool(ahi < blo)
    fails = alo is not None and bhi is not None and bool(alo >= bhi)
    return Decision.of(holds, fails)


def certainly_less_equal(a: Comparable, b: Comparable) -> Decision:
    """``a <= b`` (see :func:`certainly_less`)."""
    alo, ahi = _ends(a)
    blo, bhi = _ends(b)
    holds = ahi is not None and blo is not None and bool(ahi <= blo)
    fails = alo is not None and bhi is not None and bool(alo > bhi)
    return Decision.of(holds, fails)


def certainly_positive(x: Comparable) -> Decision:
    return certainly_less(0, x)


def certainly_nonzero(x: Comparable) -> Decision:
    """TRUE if the value certainly excludes 0; FALSE only if it is exactly 0
    (a one-sided bound is never exactly 0: it can only answer TRUE or UNDECIDED)."""
    lo, hi = _ends(x)
    holds = (lo is not None and bool(lo > 0)) or (hi is not None and bool(hi < 0))
    fails = lo is not None and hi is not None and bool(lo == 0) and bool(hi == 0)
    return Decision.of(holds, fails)


def upper(x) -> float:
    """A float >= the quantity (an enclosure's every point, an
    :class:`UpperBound`'s bound).  ``float(arb)`` rounds to nearest, so one
    step up makes it rigorous.  A :class:`LowerBound` has no upper side: TypeError."""
    _, hi = _ends(x)
    if hi is None:
        raise TypeError("a LowerBound has no upper side")
    return math.nextafter(float(hi.upper()), math.inf)


def lower(x) -> float:
    """A float <= the quantity (one step down after rounding); an
    :class:`UpperBound` has no lower side: TypeError."""
    lo, _ = _ends(x)
    if lo is None:
        raise TypeError("an UpperBound has no lower side")
    return math.nextafter(float(lo.lower()), -math.inf)


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
