"""Numbers as the report prints them: to the digits they are known to.

Two machines compute a float64 diagnostic (an SVD's sigma_min, a solver's
c, a residual) to within a few ulps of each other, not bit for bit, so its
full ``repr`` is a fact about the CPU, not about the code and the seed.  The
report (``results.json``, ``REPORT.md``, ``index.html``, the figures' data)
therefore passes every float through :func:`stable`, one rule for all:

* **a value** is printed to :data:`DIGITS` significant digits (round half
  even).  An ulp-level change (relative 1e-16; 1e-10 after a cancellation)
  moves it across a rounding boundary of the 4th digit with a probability
  of about 1e-12 (1e-6) per number: the report's numbers come out the same
  on every machine, and the determinism test perturbs them to check;
* **a bound** (its key says ``upper``, ``<=``, ``lower``, ``>=``, ...) is
  rounded OUTWARD to those digits (up for an upper bound, down for a lower
  bound), so the printed number is still a bound of the same kind;
* **rounding noise** (a residual of float64 weights, a ball's radius: keys
  matched by :data:`NOISE`) is printed as its class, ``"< 1e-12"``, when it
  lies below its floor: its digits are the machine's rounding, not a fact;
  (a ball ``"[m +/- r]"`` under such a key likewise, when ``|m| + r`` is);
* **a ball** ``"[m +/- r]"`` (in any text) is printed as the enclosure
  ``[lo, hi]`` rounded outward to those digits, and a long float repr in a
  text (a reason, an outcome) to those digits;
* ``-0.0`` is printed ``0.0``; integers, booleans, strings, NaN and the
  infinities are left as they are.

>>> significant(0.5161816387744848), significant(0.5161816387744846)
(0.5162, 0.5162)
>>> significant(12.891560492489525, direction="up"), significant(-2.00049, direction="down")
(12.9, -2.001)
>>> significant(0.0005, direction="up"), significant(0.0004999999999999999, direction="up")
(0.0005001, 0.0005001)
>>> stable({"sigma_min": 0.5161816387744848, "max |yhat - y| <=": 7.386733393464741e-17, "w": [-0.0, 1.0]})
{'sigma_min': 0.5162, 'max |yhat - y| <=': '< 1e-12', 'w': [0.0, 1.0]}
>>> stable({"max |s - target| (ball)": "[6.909734055208665588837e-16 +/- 4.64e-38]"})
{'max |s - target| (ball)': '< 1e-12'}
>>> show_text("c = 269.4957141427067, det = [2505.88801737670 +/- 4.86e-12], [+/- 1.2e-30], n = 3.5")
'c = 269.5, det = [2505.0, 2506.0], [-1.201e-30, 1.201e-30], n = 3.5'
"""
from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

#: significant digits of a printed float diagnostic
DIGITS = 4
#: relative move before rounding (see :func:`significant`): far above ulp-level differences, far below 10^-DIGITS
NUDGE = Decimal("1e-9")
#: key fragments that mark an upper (resp. lower) bound: rounded outward
UPPER = ("upper", "<=", "<", "bound", "max_abs", "radius", "residual")
LOWER = ("lower", ">=", ">", "margin")
#: key fragments that mark rounding noise, with the floor below which the value is its class "< floor";
#: the first fragment the key contains decides (the specific before the generic): an exact readout in
#: balls (Arb at >= 128 bits on float weights), float64 errors (rounding of weights built in float64),
#: residuals of a float inverse (||I - R A||: a conditioning times eps; the certificates need < 1), and
#: any other ball's radius
NOISE = (("exact readout", 1e-25), ("z m - y", 1e-25), ("max |residual|", 1e-25), ("radius", 1e-25),
         ("max_abs", 1e-25),
         ("s - target", 1e-12), ("float64", 1e-12), ("numpy", 1e-12), ("yhat - y", 1e-12), ("max error", 1e-12),
         ("relative to max|y|", 1e-12), ("fit error", 1e-12), ("w . e^(j)", 1e-12), ("|w^t e^(j)|", 1e-12),
         ("forward - exact", 1e-12), ("rounding", 1e-12), ("t - w e", 1e-12),
         ("residual", 1e-3), ("||i - r", 1e-3),
         ("(ball", 1e-25), ("ball ", 1e-25), ("balls", 1e-25))
#: an Arb ball as it prints, "[m +/- r]" or "[+/- r]" (at any place in a text)
_BALL = re.compile(r"\[(?:([-+]?[0-9.]+(?:e[-+]?[0-9]+)?) )?\+/- ([0-9.]+(?:e[-+]?[0-9]+)?)\]")
#: a float's repr with more digits than it is known to (7 or more after the point), in a text
_LONG_FLOAT = re.compile(r"(?<![\w.])-?[0-9]+\.[0-9]{7,}(?:e[-+]?[0-9]+)?(?![\w.])")
_ROUNDING = {"nearest": ROUND_HALF_EVEN, "up": ROUND_CEILING, "down": ROUND_FLOOR}


def significant(x: float, digits: int = DIGITS, direction: str = "nearest") -> float:
    """``x`` to ``digits`` significant digits, rounded to nearest, ``up`` or ``down``.

    The value is first moved by :data:`NUDGE` (relative) in the rounding's direction
    (up for "nearest"), so that a rounding boundary never lies on a short decimal:
    a bound that is 0.0005 plus or minus a few ulps prints 0.0005001 on every
    machine, where plain outward rounding would print 0.0005 on one and 0.0005001
    on the other.  A bound moved outward is still a bound; "nearest" is idempotent
    (a value already short is its own rounding), "up" and "down" are not (apply
    them once)."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return 0.0 if x == 0 else x
    d = Decimal(repr(x))
    d += abs(d) * NUDGE * (-1 if direction == "down" else 1)
    quantum = Decimal(1).scaleb(d.adjusted() - digits + 1)
    r = float(d.quantize(quantum, rounding=_ROUNDING[direction]))
    return r if math.isfinite(r) else x  # near the largest float: the float itself


def direction_of(key: str) -> str:
    """"up" for an upper bound's key, "down" for a lower bound's, else "nearest"."""
    k = key.lower()
    if any(f in k for f in LOWER):
        return "down"
    if any(f in k for f in UPPER):
        return "up"
    return "nearest"


def noise_floor(key: str) -> float | None:
    """The floor below which the value under ``key`` is rounding noise (that of the
    first fragment of :data:`NOISE` it contains), or None."""
    k = key.lower()
    return next((f for frag, f in NOISE if frag in k), None)


def show(x: float, key: str = "", digits: int = DIGITS):
    """One float as the report prints it (see the module's rules)."""
    x = float(x)
    if not math.isfinite(x):
        return x
    floor = noise_floor(key)
    if floor is not None and abs(x) < floor:
        return f"< {floor:g}"
    return significant(x, digits, direction_of(key))


def stable(x, key: str = ""):
    """A copy of ``x`` (JSON-like: dicts, lists, numbers, strings) with every float
    shown by :func:`show`; a float's key is its dict key, or its list's key."""
    if isinstance(x, dict):  # a certificate's "kind" (e.g. "float64 weights: ...") qualifies its keys
        kind = f"{x['kind']}: " if isinstance(x.get("kind"), str) else ""
        return {k: stable(v, kind + str(k)) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [stable(v, key) for v in x]
    if isinstance(x, float):
        return show(x, key)
    if isinstance(x, str):
        return show_text(x, key)
    return x


def show_ball(m: float, r: float, key: str = "", digits: int = DIGITS) -> str:
    """The ball [m +/- r] as the enclosure ``[lo, hi]``, each end rounded outward to
    ``digits`` significant digits (still an enclosure; the digits beyond those it
    fixes were the machine's); under a noise key, ``"< floor"`` when |m| + r is."""
    floor = noise_floor(key)
    if floor is not None and abs(m) + r < floor:
        return f"< {floor:g}"
    lo, hi = significant(m - r, digits, "down"), significant(m + r, digits, "up")
    return f"[{lo!r}, {hi!r}]" if lo != hi else repr(lo)


def show_text(text: str, key: str = "") -> str:
    """A text with its balls shown by :func:`show_ball` and its long float reprs
    rounded to :data:`DIGITS` significant digits (round half even)."""
    text = _BALL.sub(lambda b: show_ball(float(b[1] or 0), float(b[2]), key), text)
    return _LONG_FLOAT.sub(lambda f: repr(significant(float(f[0]))), text)
