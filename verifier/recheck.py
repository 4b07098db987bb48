"""A standalone re-checker of certificate files (docs/CERTIFICATES.md is the format's specification; this file is
one implementation of it).  It imports only the standard library and mpmath (numpy for the float path of large
certificates, when installed), never the project, so a reader can re-verify a finding without trusting mha-verify.

    python verifier/recheck.py CERT.json [...]        (or: python -m verifier.recheck)
    exit 0: every file accepted; 1: a claim not proved (rejected); 2: a file unreadable or ill-formed (one line
    each, never a traceback)

Each kind recomputes from the data what the claim says and compares.  The ``sha256`` member only detects accidental
edits (it is not a signature); what is printed is the statement proved from ``kind`` and ``claim``, never ``about``.
Trusted: Python's integers and fractions; mpmath's interval arithmetic (outward rounding); for the float path, IEEE
binary64 with rounding to nearest (checked at start) and products summed in any order, with or without FMA, not by
a fast (Strassen-like) algorithm, under the a priori bounds of spec Sec. 6, all implemented here.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import struct
import sys
from contextlib import contextmanager
from fractions import Fraction

from mpmath import iv, mp
from mpmath.libmp import to_rational

FORMAT = "mha-verify-certificate/2"
MAX_FILE_BYTES = 1 << 30  # a file larger than this is not read
MAX_VALUES = 1 << 22  # JSON values in a file (counted before parsing: commas and brackets; base64 arrays are one)
MAX_ABOUT = 4000  # characters of the free text
MAX_DIGITS = 800  # digits of one integer in a number's text
MAX_EXPONENT = 400  # |decimal exponent| of a number's text
MAX_INT_DIGITS = 18  # digits of a JSON integer (sizes, indices)
MAX_ENTRIES = 1 << 27  # entries of one array
MP_WORK = 2_000_000  # interval operations beyond which an MHA certificate takes the float path
MEMORY = 8 << 30  # bytes the float path may use (estimated before any work)
PRECISIONS = (128, 512)  # interval precisions tried, in bits


class IllFormed(Exception):
    """The file cannot be read as a certificate of this format (exit 2)."""


class Rejected(Exception):
    """The certificate does not prove its claim (exit 1)."""


# -- reading ---------------------------------------------------------------------------------------------------
def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise IllFormed(f"duplicate key {key!r}")
        out[key] = value
    return out


def _json_int(text):
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise IllFormed(f"JSON integer of {len(text)} characters (at most {MAX_INT_DIGITS} digits)")
    return int(text)


def _json_float(text):  # also NaN, Infinity and -Infinity
    raise IllFormed(f"JSON number {text[:30]!r}: exact values are strings (\"p/q\", decimals) or integers")


#: an escape (not itself escaped) that decodes to a character outside 0x20-0x7E: \b \f \n \r \t, or \uXXXX
#: outside 0020-007E (JSON strings cannot hold raw control characters, and the file is ASCII)
_UNPRINTABLE_ESCAPE = re.compile(rb'(?<!\\)(?:\\\\)*\\(?:[bfnrt]|u(?!00[2-6][0-9a-fA-F]|007[0-9a-eA-E]))')


def read(path) -> dict:
    """The certificate object of the file at ``path`` (IllFormed: why not)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise IllFormed(f"unreadable: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise IllFormed(f"larger than {MAX_FILE_BYTES} bytes")
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") > MAX_VALUES:
        raise IllFormed(f"more than {MAX_VALUES} JSON values (write large arrays in base64)")
    if not raw.isascii():
        raise IllFormed("not ASCII text")
    if _UNPRINTABLE_ESCAPE.search(raw):
        raise IllFormed("a string is not printable ASCII (an escape of a control or non-ASCII character)")
    try:
        obj = json.loads(raw.decode("ascii"), object_pairs_hook=_no_duplicates, parse_int=_json_int,
                         parse_float=_json_float, parse_constant=_json_float)
    except RecursionError:
        raise IllFormed("nested too deeply") from None
    except ValueError as exc:
        raise IllFormed(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise IllFormed("not a JSON object")
    return obj


def digest(cert: dict) -> str:
    """sha256 of the canonical JSON of every member but ``sha256`` (spec Sec. 2)."""
    body = {k: v for k, v in cert.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=True).encode("ascii")).hexdigest()


# -- fields -------------------------------------------------------------------------------------------------------
def _fields(obj, keys, what: str) -> dict:
    if not isinstance(obj, dict):
        raise IllFormed(f"{what} is not an object")
    missing, extra = sorted(set(keys) - set(obj)), sorted(set(obj) - set(keys))
    if missing or extra:
        raise IllFormed(f"{what}: " + "; ".join(([f"missing {missing}"] if missing else [])
                                                + ([f"unexpected {extra}"] if extra else [])))
    return obj


def _integer(x, what: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise IllFormed(f"{what} = {str(x)[:40]!r} is not an integer")
    if not lo <= x <= hi:
        raise IllFormed(f"{what} = {x} outside [{lo}, {hi}]")
    return x


def _boolean(x, what: str) -> bool:
    if not isinstance(x, bool):
        raise IllFormed(f"{what} is not true or false")
    return x


_RATIONAL = re.compile(r"(-?[0-9]{1,%d})/([0-9]{1,%d})" % (MAX_DIGITS, MAX_DIGITS))
_DECIMAL = re.compile(r"(-?)([0-9]{1,%d})(?:\.([0-9]{1,%d}))?(?:[eE]([+-]?[0-9]{1,4}))?" % (MAX_DIGITS, MAX_DIGITS))


def number(x, what: str = "a number") -> Fraction:
    """An exact rational from a JSON integer, "p/q" or a decimal ("-1.25e-3"), its text limited before arithmetic."""
    if isinstance(x, int) and not isinstance(x, bool):
        return Fraction(x)
    if not isinstance(x, str) or len(x) > 2 * MAX_DIGITS + 8:
        raise IllFormed(f"{what}: {str(x)[:40]!r} is not an exact number")
    m = _RATIONAL.fullmatch(x)
    if m:
        if int(m[2]) == 0:
            raise IllFormed(f"{what}: {x[:40]!r} has denominator 0")
        return Fraction(int(m[1]), int(m[2]))
    m = _DECIMAL.fullmatch(x)
    if not m or len(m[2]) + len(m[3] or "") > MAX_DIGITS or abs(int(m[4] or 0)) > MAX_EXPONENT:
        raise IllFormed(f"{what}: {x[:40]!r} is not \"p/q\" or a decimal within {MAX_DIGITS} digits and "
                        f"exponent {MAX_EXPONENT}")
    num, e = int(m[2] + (m[3] or "")), int(m[4] or 0) - len(m[3] or "")
    value = Fraction(num * 10 ** e) if e >= 0 else Fraction(num, 10 ** -e)
    return -value if m[1] else value


class Exact:
    """Exact rationals (row-major) of a known shape: nested JSON lists, or {"float64": base64 of binary64 LE}."""

    def __init__(self, shape: tuple, values=None, raw: bytes | None = None, boxes=None):
        self.shape, self._values, self._raw, self._floats, self.boxes = shape, values, raw, None, boxes or {}

    def intervals(self) -> list:
        """mpmath intervals of the entries: a point, or [lo, hi] for an interval entry (index -> hi in boxes)."""
        return [iv.mpf([ival(x).a, ival(self.boxes[i]).b]) if i in self.boxes else ival(x)
                for i, x in enumerate(self.fractions())]

    def fractions(self) -> list:
        if self._values is None:
            self._values = [Fraction(v) for v in struct.unpack(f"<{len(self._raw) // 8}d", self._raw)]
        return self._values

    def floats(self):
        """A numpy float64 array of exactly these values (Rejected if one is not a binary64)."""
        if self._floats is None:
            np = _numpy()
            if self._raw is not None:
                a = np.frombuffer(self._raw, dtype="<f8").astype(np.float64)
            else:
                if any(abs(v) > MAG for v in self._values):
                    raise Rejected("an entry is beyond 2^400: not provable on the float path")
                a = np.array([float(v) for v in self._values], dtype=np.float64)
                if any(Fraction(f) != v for f, v in zip(a.tolist(), self._values)):
                    raise Rejected("the float path needs binary64 values; an entry is not one")
            self._floats = a.reshape(self.shape)
        return self._floats


def array(x, shape: tuple, what: str, box: bool = False) -> Exact:
    """The array ``x`` of exactly ``shape`` (IllFormed: a ragged or wrong shape, a bad entry); ``box``: an entry
    may be an interval [lo, hi] (its lower end kept in the values, its upper in ``boxes``)."""
    count = math.prod(shape)
    if count > MAX_ENTRIES:
        raise IllFormed(f"{what}: {count} entries (at most {MAX_ENTRIES})")
    if isinstance(x, dict):
        _fields(x, ("float64",), what)
        text = x["float64"]
        if not isinstance(text, str) or len(text) != 4 * ((8 * count + 2) // 3):
            raise IllFormed(f"{what}: base64 text is not {8 * count} bytes for shape {list(shape)}")
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:
            raise IllFormed(f"{what}: not base64") from None
        if len(raw) != 8 * count:  # the right length with other padding: 1 or 2 bytes fewer or more
            raise IllFormed(f"{what}: base64 text is not {8 * count} bytes for shape {list(shape)}")
        if any(not math.isfinite(v) for v, in struct.iter_unpack("<d", raw)):
            raise IllFormed(f"{what}: a binary64 entry is infinite or NaN")
        return Exact(shape, raw=raw)
    values, boxes = [], {}

    def walk(v, depth, where):
        if depth == len(shape) and box and isinstance(v, list):
            if len(v) != 2 or (lo := number(v[0], f"{what}{where}")) > (hi := number(v[1], f"{what}{where}")):
                raise IllFormed(f"{what}{where}: an interval is [lo, hi] with lo <= hi")
            boxes[len(values)] = hi
            return values.append(lo)
        if depth == len(shape):
            return values.append(number(v, f"{what}{where}"))
        if not isinstance(v, list) or len(v) != shape[depth]:
            raise IllFormed(f"{what}{where}: expected a list of {shape[depth]} (shape {list(shape)})")
        for i, item in enumerate(v):
            walk(item, depth + 1, f"{where}[{i}]")

    walk(x, 0, "")
    return Exact(shape, values=values, boxes=boxes)


def indices(x, count: int, bound: int, what: str) -> list:
    """``count`` distinct integers in [0, bound)."""
    if not isinstance(x, list) or len(x) != count:
        raise IllFormed(f"{what}: expected a list of {count} indices")
    out = [_integer(i, f"{what} entry", 0, bound - 1) for i in x]
    if len(set(out)) != count:
        raise IllFormed(f"{what}: an index is repeated")
    return out


def _list(x, lo: int, hi: int, what: str) -> list:
    if not isinstance(x, list) or not lo <= len(x) <= hi:
        raise IllFormed(f"{what}: expected a list of {lo} to {hi} entries")
    return x


# -- exact arithmetic, within one budget of word operations (spec Sec. 7) ------------------------------------------
EXACT_WORK = 2 * 10**9  # word operations of one file's exact arithmetic, each step estimated before it runs
_spent = [0]


def charge(units: int, what: str) -> None:
    """Count ``units`` word operations against the file's budget before doing them (IllFormed beyond it)."""
    _spent[0] += units
    if _spent[0] > EXACT_WORK:
        raise IllFormed(f"{what}: exact arithmetic of about {show(_spent[0])} word operations, above the "
                        f"{show(EXACT_WORK)} a file may use")


def common(values, what: str) -> tuple:
    """(integers c, D > 0) with values[i] = c[i] / D exactly (values: Fractions or (numerator, denominator > 0)
    pairs). D = 2^s times the distinct odd parts of the denominators: its size is known before any product."""
    pairs = [x if isinstance(x, tuple) else (x.numerator, x.denominator) for x in values]
    twos = {q: (q & -q).bit_length() - 1 for q in {q for _, q in pairs}}  # denominator -> its power of 2
    odd = {q >> s for q, s in twos.items()}
    bits = max(twos.values(), default=0) + sum(o.bit_length() for o in odd)
    big = max((max(abs(p).bit_length(), q.bit_length()) for p, q in pairs), default=0)
    charge((len(odd) + 2 * len(pairs)) * (32 + 4 * (bits // 64 + 1) * (big // 64 + 1)), what)  # 4: 30-bit digits
    D = math.prod(odd) << max(twos.values(), default=0)
    quot = {q: D // q for q in twos}
    return [p * quot[q] for p, q in pairs], D


def exact_sum(values, what: str) -> tuple:
    """(numerator, denominator > 0) of the exact sum, not reduced (no gcd of long integers)."""
    c, D = common(values, what)
    return sum(c), D


def exact_rank(rows, what: str = "an exact rank") -> int:
    """Rank over Q: each row scaled to integers (rank unchanged), then fraction-free elimination (Bareiss):
    every entry is then a minor of at most k (b + log2 k) bits; the work is charged first."""
    rows = [common(r, what)[0] for r in dict.fromkeys(tuple(r) for r in rows)]
    if len(rows) > len(rows[0] if rows else ()):
        rows = [list(c) for c in zip(*rows)]  # rank(A) = rank(A^T): eliminate along the shorter side
    m, n = len(rows), len(rows[0]) if rows else 0
    k, b = min(m, n), max((abs(x).bit_length() for r in rows for x in r), default=0)
    charge(n * k * (2 * m - k - 1) // 2 * (32 + 3 * (k * (b + k.bit_length()) // 64 + 1) ** 2), what)
    prev, r = 1, 0
    for c in range(n):
        p = next((i for i in range(r, m) if rows[i][c]), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        piv, top = rows[r][c], rows[r]
        for i in range(r + 1, m):
            f = rows[i][c]
            rows[i] = [(piv * x - f * y) // prev for x, y in zip(rows[i], top)]  # exact (Bareiss)
        prev, r = piv, r + 1
    return r


def rank_mod2(rows):
    """The rank modulo 2 of rational rows (None when a denominator is even): a lower bound of their rank over
    Q, since an odd k x k minor of the rows scaled by their odd denominators is not 0."""
    basis = {}
    for row in rows:
        if any(not x.denominator & 1 for x in row):
            return None
        v = int("".join("1" if x.numerator & 1 else "0" for x in row) or "0", 2)
        while v and v.bit_length() in basis:
            v ^= basis[v.bit_length()]
        if v:
            basis[v.bit_length()] = v
    return len(basis)


def show(x, digits: int = 6) -> str:
    """A number (int, Fraction, (numerator, denominator) or mpf) in ``digits`` digits, never a long integer in text."""
    def mpf(n):
        return mp.ldexp(mp.mpf(n >> max(n.bit_length() - 64, 0)), max(n.bit_length() - 64, 0))
    with mp.workprec(64):
        if not isinstance(x, mp.mpf):
            num, den = x if isinstance(x, tuple) else (x.numerator, x.denominator)
            x = mpf(num) / mpf(den)
        return f"{float(x):.{digits}g}" if x == 0 or 1e-300 < abs(x) < 1e300 else mp.nstr(x, digits)


# -- interval arithmetic ------------------------------------------------------------------------------------------
@contextmanager
def precision(bits: int):
    old, iv.prec = iv.prec, bits
    try:
        yield
    finally:
        iv.prec = old


def ival(q):
    """The interval of q (a Fraction or (numerator, denominator > 0)): exact, or its ends rounded outward."""
    num, den = q if isinstance(q, tuple) else (q.numerator, q.denominator)
    return iv.mpf(num) / den


def _end(raw):
    """An interval's endpoint as a Fraction; None when it is infinite, NaN (mpmath's raw infinities have mantissa 0:
    to_rational would read them as 0) or beyond 2^65536 or below 2^-65536 in magnitude (unknown: proves nothing)."""
    x = mp.make_mpf(raw)
    return Fraction(*to_rational(raw)) if mp.isfinite(x) and (not x or abs(mp.mag(x)) <= 1 << 16) else None


def upper(x):
    """The upper end of an interval as a Fraction (None when +infinite or NaN)."""
    return _end(x._mpi_[1])


def lower(x):
    return _end(x._mpi_[0])


def below(x, q) -> bool:
    """Every point of the interval x is < q (a Fraction or a pair (numerator, denominator > 0))."""
    hi, (num, den) = upper(x), q if isinstance(q, tuple) else (q.numerator, q.denominator)
    return hi is not None and hi.numerator * den < num * hi.denominator


def meet(x, lo, hi):
    """x narrowed to [the lower end of lo, the upper end of hi]: three enclosures of one number."""
    end = lambda y, i: mp.make_mpf(y._mpi_[i])  # noqa: E731
    return iv.mpf([max(end(x, 0), end(lo, 0)), min(end(x, 1), end(hi, 1))])


def approximate_inverse(A) -> list:
    """Gauss-Jordan with partial pivoting in 53-bit mpf (no overflow): any matrix would do, a
    poor one only fails to prove; an exactly zero pivot means singular."""
    k = len(A)
    with mp.workprec(53):
        M = [[mp.mpf(x) for x in row] + [mp.mpf(int(i == j)) for j in range(k)] for i, row in enumerate(A)]
        for c in range(k):
            p = max(range(c, k), key=lambda i: abs(M[i][c]))
            if M[p][c] == 0:
                raise Rejected("the minor's midpoint is singular")
            M[c], M[p] = M[p], M[c]
            M[c] = [x / M[c][c] for x in M[c]]
            for i in range(k):
                if i != c and (f := M[i][c]) != 0:
                    M[i] = [x - f * y for x, y in zip(M[i], M[c])]
        return [row[k:] for row in M]


def nonsingular_intervals(minor) -> str:
    """Every matrix in the interval matrix A is nonsingular: ||I - X A||_inf < 1, X a float inverse of the midpoint."""
    k = len(minor)
    mids = [[float(x.mid) for x in r] for r in minor]
    if not all(math.isfinite(x) for r in mids for x in r):
        raise Rejected("the minor's enclosure is unbounded")
    X = approximate_inverse(mids)
    worst = Fraction(0)
    for i in range(k):
        row = iv.mpf(0)
        for j in range(k):
            s = iv.mpf(1 if i == j else 0)
            for t in range(k):
                s -= iv.mpf(X[i][t]) * minor[t][j]
            row += abs(s)
        hi = upper(row)
        if hi is None or not hi < 1:
            raise Rejected(f"||I - X A_minor||_inf is not below 1 (row {i}): nonsingularity not shown")
        worst = max(worst, hi)
    return f"||I - X A||_inf <= {float(worst):.3g} < 1"


def positive_definite(G) -> bool:
    """Interval Cholesky of the symmetric interval matrix G, every pivot > 0: every symmetric matrix in G is PD."""
    m = len(G)
    L = [[iv.mpf(0)] * m for _ in range(m)]
    for j in range(m):
        s = G[j][j] - sum((L[j][i] ** 2 for i in range(j)), iv.mpf(0))
        if not (lower(s) or 0) > 0:
            return False
        L[j][j] = iv.sqrt(s)
        for i in range(j + 1, m):
            L[i][j] = (G[i][j] - sum((L[i][c] * L[j][c] for c in range(j)), iv.mpf(0))) / L[j][j]
    return True


# -- the float path: numpy products under a priori bounds (spec Sec. 6) ------------------------------------------
U = Fraction(1, 2**53)  # unit roundoff of binary64
UL = Fraction(1, 2**1022)  # absolute error of one operation near underflow
SLACK = Fraction(1, 2**500)  # added to every upper bound: covers every underflow term here
MAG = 2.0**400  # largest magnitude the float path accepts
TINY = 2.0**-1000  # lower bounds below this are replaced by 0
_NP = None


def _numpy():
    global _NP
    if _NP is None:
        try:
            import numpy
        except ImportError:
            raise Rejected("this certificate needs the float path, and numpy is not installed") from None
        _check_ieee(numpy)
        _NP = numpy
    return _NP


def _matmul(a, b):
    """Every float product of the float path (tests substitute other summation orders)."""
    return a @ b


def _check_ieee(np):
    """Rounding to nearest, ties to even, with gradual underflow, on this machine's numpy (spec Sec. 1)."""
    one = np.array([1.0, 2.0**-1040])
    # a tie rounds to even (1); to nearest both ways; 2^-1041 subnormal (gradual underflow), 2^-1050 in a product
    got = (float((one[:1] + 2.0**-53)[0]), float((one[:1] + 1.5 * 2.0**-53)[0]), float((-one[:1] - 1.5 * 2.0**-53)[0]),
           float((one[1:] * 0.5)[0]), float(_matmul(one[None, 1:], one[1:, None] * 0 + 2.0**-10)[0, 0]))
    if got != (1.0, 1.0 + 2.0**-52, -(1.0 + 2.0**-52), 2.0**-1041, 2.0**-1050):
        raise Rejected("this machine's float64 is not IEEE round-to-nearest with gradual underflow")


def gamma(k: int) -> Fraction:
    return k * U / (1 - k * U)


def fl_up(q: Fraction) -> float:
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def fl_down(q: Fraction) -> float:
    return -fl_up(-q)


def up(x, F: Fraction, A: Fraction = SLACK):
    """Floats >= F x + A for a nonnegative float array x (spec 6.2)."""
    return x * fl_up(F / (1 - U) ** 2) + fl_up(A / (1 - U) + UL)


def up_ops(x, m: int):
    """Floats >= the exact value of a nonnegative expression whose float value x took m roundings."""
    return up(x, 1 / (1 - gamma(m)))


def down_ops(x, m: int):
    """Floats <= that exact value (0 where the result is below 2^-1000)."""
    y = x * fl_down(1 / ((1 + gamma(m)) * (1 + U) * (1 + Fraction(1, 2**50))))
    return _NP.where(y < TINY, 0.0, y)


def add_up(x, y):
    return up(x + y, 1 / (1 - U))


def in_range(*arrays) -> None:
    for a in arrays:
        if a is not None and a.size and not float(_NP.max(_NP.abs(a))) <= MAG:
            raise Rejected("an operand of the float path is infinite or beyond 2^400")


def total(M):
    """Row sums, through the product hook (any summation order)."""
    return _matmul(M, _NP.ones(M.shape[-1]))


def rowsum_up(M):
    return up(total(M), 1 / (1 - gamma(M.shape[-1])))


def mul_up(P, Q):
    """Floats >= P Q (exact product) for nonnegative float arrays."""
    k, g = P.shape[-1], gamma(P.shape[-1])
    in_range(P, Q)
    return up(_matmul(P, Q), 1 / (1 - g), 3 * k * UL / (1 - g) + SLACK)


def ball_mul(Am, Ar, Bm, Br):
    """(C, rad) with |X Y - C| <= rad for every X in Am +/- Ar, Y in Bm +/- Br (a radius None: exact)."""
    np = _NP
    in_range(Am, Ar, Bm, Br)
    k, C, aB = Am.shape[-1], _matmul(Am, Bm), np.abs(Bm)
    g = gamma(k)
    G1 = up(aB, g) if Br is None else add_up(up(aB, g), Br)
    R = mul_up(np.abs(Am), G1)
    if Ar is not None:
        R = add_up(R, mul_up(Ar, aB if Br is None else add_up(aB, Br)))
    return C, up(R, Fraction(1), 3 * k * UL + SLACK)


def _slices(A, e, b: int):
    """A = A_1 + A_2 + A_3 + R exactly, A_s on the grid 2^(e - s b) per row (e: |row| < 2^e)."""
    np = _NP
    out, R = [], A
    for s in (1, 2, 3):
        scale = np.ldexp(1.0, b * s - e)
        q = np.trunc(R * scale) / scale
        out.append(q)
        R = R - q
    return out, R


def accurate_mul(A, B):
    """(mid, rad) with |A B - mid| <= rad for exact float matrices: three slices each way whose nine products
    are exact in any summation order, summed by Sum2 (spec 6.3)."""
    np, k = _NP, A.shape[1]
    in_range(A, B)
    ra, cb = np.max(np.abs(A), axis=1), np.max(np.abs(B), axis=0)
    small = lambda v: bool(np.any((v > 0) & (v < 2.0**-400)))  # noqa: E731
    if k == 0 or small(ra) or small(cb):
        return ball_mul(A, None, B, None)
    b = (53 - (k - 1).bit_length()) // 2  # k 2^(2b) <= 2^53
    ea, eb = np.frexp(ra)[1][:, None], np.frexp(cb)[1][:, None]  # |row| < 2^e (0 for a zero row)
    (As, RA), (Bt, RB) = _slices(A, ea, b), _slices(B.T, eb, b)
    prods = [_matmul(a, bt.T) for a in As for bt in Bt]
    s, c, absum = prods[0], np.zeros_like(prods[0]), np.abs(prods[0])
    for p in prods[1:]:  # Sum2: cascaded TwoSum
        t = s + p
        z = t - s
        c, s, absum = c + ((s - (t - z)) + (p - z)), t, absum + np.abs(p)
    mid, g8 = s + c, gamma(8)
    rad = add_up(up(np.abs(mid), U / (1 - U)), up(absum, g8 * g8 / ((1 - g8) * (1 - U))))
    # the remainders: |R_A B + (A - R_A) R_B| <= max|R_A| colsum|B| + rowsum|A| max|R_B| (|A - R_A| <= |A|)
    rem = add_up(up(np.outer(np.max(np.abs(RA), axis=1), rowsum_up(np.abs(B.T))), 1 / (1 - U)),
                 up(np.outer(rowsum_up(np.abs(A)), np.max(np.abs(RB), axis=1)), 1 / (1 - U)))
    return mid, add_up(rad, rem)


LN2_HI = 0.6931471806019545  # 372130559 / 2^29: k * LN2_HI is exact for |k| < 2^24
_EXP = {}


def _exp_constants():
    """(LN2_LO, Taylor coefficients, UPF, DNF) of spec 6.4, derived in intervals once."""
    if not _EXP:
        with precision(200):
            assert Fraction(LN2_HI).numerator.bit_length() <= 29
            ln2 = iv.log(2)
            lo = float((ln2 - iv.mpf(LN2_HI)).mid)
            assert abs(upper(abs(ln2 - iv.mpf(LN2_HI) - iv.mpf(lo)))) < Fraction(1, 2**80)
            e = iv.exp(iv.mpf("0.35"))
            u, g = ival(U), ival(gamma(28))
            eps = g * (1 + u) * e + u * e + iv.mpf("0.35") ** 15 / math.factorial(15) * e
            rho1, er = eps * e, iv.mpf(2) ** -52
            rho = max(upper(iv.exp(er) / (1 - rho1) - 1), upper(1 - iv.exp(-er) / (1 + rho1)))
        _EXP.update(lo=lo, coeffs=[float(Fraction(1, math.factorial(j))) for j in range(15)],
                    upf=fl_up((1 + rho) / (1 - U)), dnf=fl_down((1 - rho) / (1 + U)))
    return _EXP


def exp_bounds(x):
    """(lo, hi) with lo <= exp(x) <= hi for a float array x <= 1 (spec 6.4)."""
    np, C = _NP, _exp_constants()
    if x.size and not float(np.max(x)) <= 1.0:
        raise Rejected("exp argument above 1 or NaN in the float path")
    deep = x < -690.0
    xc = np.where(deep, 0.0, x)
    k = np.rint(xc * 1.4426950408889634)
    r = (xc - k * LN2_HI) - k * C["lo"]
    if r.size and float(np.max(np.abs(r))) > 0.35:
        raise Rejected("exp range reduction failed in the float path")
    p = np.full_like(r, C["coeffs"][14])
    for j in range(13, -1, -1):
        p = p * r + C["coeffs"][j]
    two_k = np.ldexp(1.0, k.astype(np.int32))
    return np.where(deep, 0.0, (p * C["dnf"]) * two_k), np.where(deep, 2.0**-995, (p * C["upf"]) * two_k)


def softmax_ball(am, ar):
    """(mid, rad) enclosing softmax(a) along the last axis for every a in am +/- ar (spec 6.5)."""
    np, n = _NP, am.shape[-1]
    ref = np.argmax(am, axis=-1)[..., None]
    is_ref = np.arange(n) == ref
    x = np.where(is_ref, 0.0, am - np.take_along_axis(am, ref, -1))
    xr = add_up(up(np.abs(x), U / (1 - U)), add_up(ar, np.take_along_axis(ar, ref, -1) + 0 * ar))
    xr = np.where(is_ref, 0.0, xr)
    if xr.size and not float(np.max(xr)) <= 0.5:
        raise Rejected("logit differences enclosed wider than 1/2: the float softmax cannot decide")
    e_lo, e_hi = exp_bounds(x)
    lo = np.where(is_ref, 1.0, down_ops(e_lo * (1.0 - xr), 2))
    hi = np.where(is_ref, 1.0, up_ops(e_hi * (1.0 + 2.0 * xr), 2))
    s_lo, s_hi = down_ops(total(lo)[..., None], n), up_ops(total(hi)[..., None], n)
    p_lo, p_hi = down_ops(lo / s_hi, 1), np.minimum(up_ops(hi / s_lo, 1), 1.0)
    mid = (p_lo + p_hi) * 0.5
    return mid, up_ops(np.maximum(p_hi - mid, mid - p_lo), 1)


def nonsingular_float(Am, Ar) -> str:
    """Every matrix in Am +/- Ar (k x k) is nonsingular: ||I - R X||_inf < 1 (spec 6.6)."""
    np, k = _NP, Am.shape[0]
    in_range(Am, Ar)
    try:
        R = np.linalg.inv(Am)
    except np.linalg.LinAlgError:
        raise Rejected("the minor's midpoint has no float inverse") from None
    if not np.all(np.isfinite(R)):
        raise Rejected("the minor's float inverse is not finite")
    in_range(R)
    D = -_matmul(R, Am)
    D[np.arange(k), np.arange(k)] += 1.0
    a = up(rowsum_up(np.abs(D)), 1 + U)
    w = add_up(up(rowsum_up(np.abs(Am)), gamma(k)), rowsum_up(Ar))
    t = mul_up(np.abs(R), w[:, None])[:, 0]
    bound = float(np.max(up(add_up(a, t), Fraction(1), 3 * k * k * UL + SLACK)))
    if not bound < 1:
        raise Rejected(f"||I - R A_minor||_inf <= {bound:.3g} is not below 1: nonsingularity not shown")
    return f"||I - R A||_inf <= {bound:.3g} < 1 (float64, a priori bounds)"


# -- the MHA layer (Eqs. 1-8 of Mahdavi et al.), in intervals or in float balls -----------------------------------
LIM = {"T": 1 << 17, "n": 1 << 14, "d": 1 << 15, "H": 1 << 10, "d_h": 1 << 15, "d_v": 1 << 15, "d_out": 1 << 10}
MHA_KEYS = ("T", "n", "d", "H", "d_h", "shared", "contexts", "queries", "W_K", "W_Q", "rows", "cols")
READOUT_KEYS = ("d_v", "d_out", "labels", "W_V", "W_O", "W_D", "skip")
BOXED = ("E", "e", "W_K", "W_Q", "b_Q", "y", "W_V", "W_O", "W_D")  # arrays whose entries may be intervals


def mha_data(data: dict, readout: bool, minor: bool = True) -> dict:
    """Sizes, arrays (intervals allowed: spec 4.2) and the minor's indices, every shape checked against the sizes."""
    o = {k: _integer(data[k], k, 1, LIM[k]) for k in ("T", "n", "d", "H", "d_h") + (("d_v", "d_out") if readout else ())}
    T, n, d, H, dh = o["T"], o["n"], o["d"], o["H"], o["d_h"]
    o["shared"] = _boolean(data["shared"], "shared")
    o["E"] = array(data["contexts"], (1 if o["shared"] else T, n, d), "contexts", True)
    o["e"] = array(data["queries"], (T, d), "queries", True)
    o["W_K"], o["W_Q"] = array(data["W_K"], (H, d, dh), "W_K", True), array(data["W_Q"], (H, d, dh), "W_Q", True)
    o["b_Q"] = array(data["b_Q"], (H, dh), "b_Q", True) if "b_Q" in data else None
    k = len(_list(data["rows"], 1, min(T, H * d), "rows")) if minor else 0
    o["rows"], o["cols"] = (indices(data["rows"], k, T, "rows"), indices(data["cols"], k, H * d, "cols")) if minor \
        else ([], [])
    if readout:
        dv, do = o["d_v"], o["d_out"]
        o["skip"] = _boolean(data["skip"], "skip")
        o["y"] = array(data["labels"], (T, do), "labels", True) if "labels" in data else None
        o["W_V"], o["W_O"] = array(data["W_V"], (H, d, dv), "W_V", True), array(data["W_O"], (H * dv, d), "W_O", True)
        o["W_D"] = array(data["W_D"], (d, do), "W_D", True)
    return o


def _work(o: dict, readout: bool) -> int:
    T, n, d, H, dh, k = o["T"], o["n"], o["d"], o["H"], o["d_h"], len(o["rows"])
    extra = (T * H * d + 2 * H * d * o["d_v"] + T * d) * o["d_out"] if readout else 0
    keys = H * d * dh * (n if o["shared"] else T)  # E W_K^h once per head (shared), else W_K^h p per example
    bias = T * H * dh if o.get("b_Q") is not None else 0
    return T * H * (d * dh + n * dh + 2 * n * d) + bias + keys + k ** 3 + extra


def _memory(o: dict, readout: bool) -> int:
    T, n, d, H, dh, k = o["T"], o["n"], o["d"], o["H"], o["d_h"], len(o["rows"])
    per_example = 0 if o["shared"] else 4 * T * n * d
    readout = 2 * T * H * d + 3 * H * d * o["d_v"] + 2 * T * o["d_out"] if readout else 0
    return 8 * (12 * T * dh + 8 * T * n + 4 * T * d + 3 * H * d * dh + per_example + 6 * k * k + readout)


def _heads_coords(o: dict, everything: bool) -> dict:
    """{head: its coordinates that Z is computed on}: all (the readout needs them) or those of the minor."""
    d, out = o["d"], {}
    for j in range(o["H"] * d) if everything else o["cols"]:
        out.setdefault(j // d, []).append(j % d)
    return out


def features_intervals(o: dict, everything: bool) -> dict:
    """{h: rows (all T) x that head's coordinates} of Z (Eq. 7) in intervals."""
    T, n, d, dh = o["T"], o["n"], o["d"], o["d_h"]
    Ef, ef, WKf, WQf = (o[k].intervals() for k in ("E", "e", "W_K", "W_Q"))
    zero, bQ = iv.mpf(0), o["b_Q"].intervals() if o["b_Q"] is not None else None
    out = {}
    for h, coords in _heads_coords(o, everything).items():
        WK = lambda i, c: WKf[(h * d + i) * dh + c]  # noqa: E731
        WQ = lambda i, c: WQf[(h * d + i) * dh + c]  # noqa: E731
        K = [[sum((Ef[r * d + i] * WK(i, c) for i in range(d)), zero) for c in range(dh)]
             for r in range(n)] if o["shared"] else None
        block = []
        for t in range(T):
            p = [sum((ef[t * d + i] * WQ(i, c) for i in range(d)), bQ[h * dh + c] if bQ else zero) for c in range(dh)]
            base = (0 if o["shared"] else t) * n * d
            if K is not None:
                a = [sum((K[r][c] * p[c] for c in range(dh)), zero) for r in range(n)]
            else:
                u = [sum((WK(i, c) * p[c] for c in range(dh)), zero) for i in range(d)]
                a = [sum((Ef[base + r * d + i] * u[i] for i in range(d)), zero) for r in range(n)]
            m = max((x.mid for x in a), key=lambda y: y.a)  # the first largest midpoint
            ex = [iv.exp(x - m) for x in a]
            tot = sum(ex, zero)
            s = [x / tot for x in ex]
            block.append([sum((s[r] * Ef[base + r * d + j] for r in range(n)), zero) for j in coords])
        out[h] = block
    return out


def features_float(o: dict, everything: bool) -> dict:
    """{h: (mid, rad)} of Z[:, that head's coordinates] in float balls (spec 6.5)."""
    np = _numpy()
    E, e, WK, WQ = o["E"].floats(), o["e"].floats(), o["W_K"].floats(), o["W_Q"].floats()
    in_range(E, e, WK, WQ)
    out = {}
    for h, coords in _heads_coords(o, everything).items():
        P = accurate_mul(e, WQ[h])  # e W_Q^h (T, d_h): cancels on Prop. 1's fitted examples
        if o["b_Q"] is not None:  # + b_Q^h, one rounding: |fl(a + b) - (a + b)| <= u |fl(a + b)|
            s = P[0] + o["b_Q"].floats()[h]
            in_range(s)
            P = (s, add_up(P[1], up(np.abs(s), U)))
        if o["shared"]:
            K = accurate_mul(E[0], WK[h])  # E W_K^h (n, d_h)
            sm, sr = softmax_ball(*ball_mul(P[0], P[1], K[0].T, K[1].T))
            out[h] = ball_mul(sm, sr, np.ascontiguousarray(E[0][:, coords]), None)
        else:
            um, ur = ball_mul(P[0], P[1], WK[h].T, None)  # (W_K^h (W_Q^h)^T e)^T  (T, d)
            am, ar = ball_mul(E, None, um[:, :, None], ur[:, :, None])
            sm, sr = softmax_ball(am[:, :, 0], ar[:, :, 0])
            zm, zr = ball_mul(sm[:, None, :], sr[:, None, :], np.ascontiguousarray(E[:, :, coords]), None)
            out[h] = (zm[:, 0, :], zr[:, 0, :])
    return out


def _minor_where(o: dict, everything: bool) -> list:
    """For each stated column j (Z column j: coordinate j mod d of head floor(j / d), spec 4.2), the
    head and the position of that coordinate in the head's block of the computed Z."""
    d = o["d"]
    pos = {h: {c: i for i, c in enumerate(cs)} for h, cs in _heads_coords(o, everything).items()}
    return [(j // d, pos[j // d][j % d]) for j in o["cols"]]


def yhat_intervals(o, Z) -> list:
    """yhat^(t) (Eq. 8) enclosed: T lists of d_out intervals."""
    T, d, H, dv, do = o["T"], o["d"], o["H"], o["d_v"], o["d_out"]
    WV, WO, WD, e = (o[k].intervals() for k in ("W_V", "W_O", "W_D", "e"))
    zero = iv.mpf(0)
    WOD = [[sum((WO[r * d + i] * WD[i * do + c] for i in range(d)), zero) for c in range(do)] for r in range(H * dv)]
    B = [[[sum((WV[(h * d + j) * dv + v] * WOD[h * dv + v][c] for v in range(dv)), zero) for c in range(do)]
          for j in range(d)] for h in range(H)]
    return [[sum((Z[h][t][j] * B[h][j][c] for h in range(H) for j in range(d)),
                 sum((e[t * d + i] * WD[i * do + c] for i in range(d)), zero) if o["skip"] else zero)
             for c in range(do)] for t in range(T)]


def residual_intervals(o, Z):
    """max_t,j |yhat - y| enclosed: (lower, upper) as Fractions (upper None: unbounded)."""
    y, lo, hi = o["y"].intervals(), Fraction(0), Fraction(0)
    for t, row in enumerate(yhat_intervals(o, Z)):
        for c, yhat in enumerate(row):
            r = abs(yhat - y[t * o["d_out"] + c])
            rl, rh = lower(r), upper(r)
            if rh is None or rl is None:
                return lo, None
            lo, hi = max(lo, rl), max(hi, rh)
    return lo, hi


def yhat_float(o, Z):
    """(mid, rad) of yhat (T, d_out) on the float path."""
    np, H, dv = _NP, o["H"], o["d_v"]
    WV, WO, WD, e = (o[k].floats() for k in ("W_V", "W_O", "W_D", "e"))
    in_range(WV, WO, WD)
    odm, odr = ball_mul(WO, None, WD, None)  # (H d_v, d_out)
    parts = itertools.chain((ball_mul(Z[h][0], Z[h][1], *ball_mul(WV[h], None, odm[h * dv:(h + 1) * dv],
                                                                  odr[h * dv:(h + 1) * dv])) for h in range(H)),
                            [ball_mul(e, None, WD, None)] if o["skip"] else [])  # one head at a time
    ym, yr = next(parts)
    for cm, cr in parts:  # |fl(a + b) - (a + b)| <= u |fl(a + b)|
        s = ym + cm
        yr, ym = add_up(add_up(yr, cr), up(np.abs(s), U)), s
    return ym, yr


def residual_float(o, Z):
    np, (ym, yr), y = _NP, yhat_float(o, Z), o["y"].floats()
    in_range(y)
    rm = ym - y
    rr = add_up(yr, up(np.abs(rm), U))
    hi, lo = float(np.max(add_up(np.abs(rm), rr))), float(np.max(down_ops(np.maximum(np.abs(rm) - rr, 0.0), 1)))
    return Fraction(lo), (Fraction(hi) if math.isfinite(hi) else None)


def mha_check(o: dict, readout: bool, then=None):
    """(how the minor was proved nonsingular, or "" without one; then(o, Z, on the float path) or None): in
    intervals when small, else floats. A Rejected from ``then`` retries at the next precision."""
    where, boxed = _minor_where(o, readout), [k for k in BOXED if o.get(k) is not None and o[k].boxes]
    if _work(o, readout) <= MP_WORK:
        last = None
        for bits in PRECISIONS:
            with precision(bits):
                try:
                    Z = features_intervals(o, everything=readout)
                    how = nonsingular_intervals([[Z[h][t][i] for h, i in where] for t in o["rows"]]) if where else "Z"
                    return how + f" (intervals, {bits} bits)", then(o, Z, False) if then else None
                except Rejected as exc:
                    last = exc
        raise last
    if boxed:
        raise IllFormed(f"interval entries ({', '.join(boxed)}) are checked on the interval path only, up to work "
                        f"{show(MP_WORK)}; this certificate's is {show(_work(o, readout))}")
    if _memory(o, readout) > MEMORY:
        raise IllFormed(f"the float path would need about {_memory(o, readout) >> 20} MiB (at most {MEMORY >> 20})")
    Z = features_float(o, everything=readout)
    rows = _NP.array(o["rows"])
    how = nonsingular_float(*(_NP.stack([Z[h][m][rows, i] for h, i in where], axis=1) for m in (0, 1))) \
        if where else "float64 balls, a priori bounds"
    return how, then(o, Z, True) if then else None


# -- the kinds ----------------------------------------------------------------------------------------------------
def kind_rank_lower_bound(claim, data) -> str:
    m, n = _integer(data["m"], "m", 1, 4096), _integer(data["n"], "n", 1, 4096)
    k = len(_list(data["rows"], 1, min(m, n, 64), "rows"))
    rows, cols = indices(data["rows"], k, m, "rows"), indices(data["cols"], k, n, "cols")
    entries = []
    for i, row in enumerate(_list(data["matrix"], m, m, "matrix")):
        for j, x in enumerate(_list(row, n, n, f"matrix[{i}]")):
            lo, hi = (number(x[0]), number(x[1])) if isinstance(x, list) and len(x) == 2 else (number(x),) * 2
            if lo > hi:
                raise IllFormed(f"matrix[{i}][{j}] is an empty interval")
            entries.append((lo, hi))
    claimed = _integer(claim["rank_at_least"], "rank_at_least", 1, 4096)
    if claimed != k:
        raise Rejected(f"the claim rank >= {claimed} is not what the {k} x {k} minor shows")
    for bits in PRECISIONS:
        with precision(bits):
            try:
                how = nonsingular_intervals([[iv.mpf([ival(entries[i * n + j][0]).a, ival(entries[i * n + j][1]).b])
                                              for j in cols] for i in rows])
                return f"rank(A) >= {k} for every A in the {m} x {n} interval matrix: {how}"
            except Rejected:
                if bits == PRECISIONS[-1]:
                    raise


def kind_mha_feature_rank(claim, data) -> str:
    o = mha_data(data, readout=False)
    k = len(o["rows"])
    claimed = _integer(claim["rank_at_least"], "rank_at_least", 1, LIM["T"])
    if claimed != k:
        raise Rejected(f"the claim rank(Z) >= {claimed} is not what the {k} x {k} minor shows")
    how, _ = mha_check(o, readout=False)
    return (f"rank(Z) >= {k} for Z (T x Hd = {o['T']} x {o['H'] * o['d']}) of Mahdavi et al.'s Eq. (7) on these "
            f"contexts, queries and key/query weights{' (query bias b_Q)' if o['b_Q'] is not None else ''}, at every "
            f"point of their intervals: {how}")


def kind_mha_memorization(claim, data) -> str:
    o = mha_data(data, readout=True)
    T, H, d = o["T"], o["H"], o["d"]
    claimed = _integer(claim["rank_at_least"], "rank_at_least", 1, LIM["T"])
    bounds = _list(claim["max_abs_residual"], 2, 2, "max_abs_residual")
    lo, hi = number(bounds[0], "max_abs_residual lower"), number(bounds[1], "max_abs_residual upper")
    if not 0 <= lo <= hi:
        raise IllFormed("max_abs_residual must be [lower, upper] with 0 <= lower <= upper")
    if claimed != T or len(o["rows"]) != T:
        raise Rejected(f"this kind claims full row rank T = {T} on all T rows; the claim or minor is {claimed} / "
                       f"{len(o['rows'])}")
    if not o["d_out"] <= min(o["d_v"], d):
        raise Rejected(f"d_out = {o['d_out']} > min(d_v, d): Step 2 cannot realize every readout")
    how, (rl, rh) = mha_check(o, readout=True, then=_residual)
    if rh is None or not (lo <= rl and rh <= hi):
        raise Rejected(f"max |yhat - y| is enclosed in [{show(rl)}, {'inf' if rh is None else show(rh)}], not "
                       f"inside the claimed [{show(lo)}, {show(hi)}]")
    return (f"rank(Z) = T = {T} (Z is {T} x {H * d}): {how}; so for every labelling some W_V, W_O, W_D with "
            f"these W_K, W_Q give yhat = y exactly (Step 2, d_out <= min(d_v, d)); the given weights"
            f"{' with the skip connection' if o['skip'] else ''} have max |yhat - y| in "
            f"[{show(lo)}, {show(hi)}]")


def _residual(o, Z, flt: bool):
    return (residual_float if flt else residual_intervals)(o, Z)


def _weights(o) -> str:
    return (f"the given W_K, W_Q{', b_Q' if o['b_Q'] is not None else ''}, W_V, W_O, W_D{' (skip connection)' if o['skip'] else ''}"
            f" at every point of the intervals of the data and weights (T = {o['T']}, Eqs. 1-8)")


def kind_readout_residual(claim, data) -> str:
    o = mha_data(data, readout=True, minor=False)
    rel, tol = claim["relation"], number(claim["tol"], "tol")
    if rel not in ("<=", ">") or tol < 0:
        raise IllFormed('relation must be "<=" or ">", and tol >= 0')

    def decide(o, Z, flt):
        rl, rh = _residual(o, Z, flt)
        if not (rh is not None and rh <= tol if rel == "<=" else rl > tol):
            raise Rejected(f"max |yhat - y| is enclosed in [{show(rl)}, {'inf' if rh is None else show(rh)}]: "
                           f"{rel} {show(tol)} not shown")

    how, _ = mha_check(o, readout=True, then=decide)
    return f"max_t,j |yhat^(t)_j - y^(t)_j| {rel} {show(tol)} for {_weights(o)}: {how}"


def kind_argmax_margins(claim, data) -> str:
    o = mha_data(data, readout=True, minor=False)
    T, C = o["T"], max(o["d_out"], 2)
    cls = [_integer(c, "classes entry", 0, C - 1) for c in _list(data["classes"], T, T, "classes")]
    ok = indices(claim["correct"], len(_list(claim["correct"], 0, T, "correct")), T, "correct")
    bad = indices(claim["wrong"], len(_list(claim["wrong"], 0, T, "wrong")), T, "wrong")
    if set(ok) & set(bad) or not ok + bad:
        raise IllFormed("correct and wrong must be disjoint, not both empty")

    def decide(o, Z, flt):
        if flt:  # scores as exact rational intervals [mid - rad, mid + rad]
            ym, yr = yhat_float(o, Z)
            charge((len(ok) + len(bad)) * C * 200, "argmax margins")
            box = lambda t, j: (Fraction(float(ym[t, j])) - Fraction(float(yr[t, j])),  # noqa: E731
                                Fraction(float(ym[t, j])) + Fraction(float(yr[t, j])))
        else:
            Y = yhat_intervals(o, Z)
            box = lambda t, j: (lower(Y[t][j]), upper(Y[t][j]))  # noqa: E731
        score = (lambda t, j: box(t, j - 1) if j else (0, 0)) if o["d_out"] == 1 else box  # noqa: E731
        beats = lambda t, a, b: None not in (score(t, a)[0], score(t, b)[1]) and score(t, a)[0] > score(t, b)[1]  # noqa: E731
        for t in ok:
            if not all(beats(t, cls[t], j) for j in range(C) if j != cls[t]):
                raise Rejected(f"example {t}: yhat_c > yhat_j for every j != c = {cls[t]} not shown")
        for t in bad:
            if not any(beats(t, j, cls[t]) for j in range(C) if j != cls[t]):
                raise Rejected(f"example {t}: yhat_j > yhat_c for some j != c = {cls[t]} not shown")

    how, _ = mha_check(o, readout=True, then=decide)
    scores = "the scores [0, yhat]" if o["d_out"] == 1 else "yhat"
    return (f"argmax of {scores} is the class, uniquely, on the {len(ok)} examples {ok[:8]}{'...' if len(ok) > 8 else ''}"
            f" and is not on the {len(bad)} examples {bad[:8]}{'...' if len(bad) > 8 else ''}, for {_weights(o)}: {how}")


def _null_vector_rank(V, what: str) -> int:
    """len(V) when the rows are independent: shown modulo 2 (every denominator odd), else by exact rank."""
    if rank_mod2(V) != len(V) and (r := exact_rank(V, what)) != len(V):
        raise Rejected(f"the {len(V)} {what} are not independent (rank {r})")
    return len(V)


def kind_shared_context_cap(claim, data) -> str:
    T, n, d, H = (_integer(data[k], k, 1, LIM[k]) for k in ("T", "n", "d", "H"))
    array(data["context"], (n, d), "context")
    count = len(_list(data["null_vectors"], 0, H, "null_vectors"))
    if count * H * n > 10**7:
        raise IllFormed("null vectors of more than 10^7 entries in all")
    V = array(data["null_vectors"], (count, H * n), "null_vectors").fractions()
    V = [V[i * H * n:(i + 1) * H * n] for i in range(count)]
    blocks = []
    for i, v in enumerate(V):
        a = [v[h * n] for h in range(H)]
        if any(v[h * n + r] != a[h] for h in range(H) for r in range(n)) or exact_sum(a, "null vectors")[0] != 0:
            raise Rejected(f"null vector {i} is not [a_1 1_n; ...; a_H 1_n] with a_1 + ... + a_H = 0")
        blocks.append(a)
    cap = H * n - _null_vector_rank(blocks, "null vectors of S")  # the rank of the v's is that of the a's
    claimed = _integer(claim["rank_at_most"], "rank_at_most", 0, 1 << 30)
    if claimed != cap:
        raise Rejected(f"the claim rank(Z) <= {claimed} is not the proved Hn - {H * n - cap} = {cap}")
    return (f"every example sharing this context (T = {T}, n = {n}, d = {d}, H = {H}) has, for ANY queries and "
            f"key/query weights, rank(Z) <= rank(S) <= {cap}: Z = S (I_H kron E) and S v = 0 for the {H * n - cap} "
            "independent block-constant vectors v with sum_h a_h = 0 (each softmax row sums to 1)")


def kind_token_sum_cap(claim, data) -> str:
    T, n, d, H = (_integer(data[k], k, 1, LIM[k]) for k in ("T", "n", "d", "H"))
    shared = _boolean(data["shared"], "shared")
    if (1 if shared else T) * n * d > 10**7:
        raise IllFormed("contexts of more than 10^7 entries")
    E = array(data["contexts"], (1 if shared else T, n, d), "contexts").fractions()
    count = len(_list(data["null_vectors"], 0, H * d, "null_vectors"))
    if count * count * H * d > 10**8:
        raise IllFormed("null vectors: count^2 x Hd above 10^8")
    V = array(data["null_vectors"], (count, H * d), "null_vectors").fractions()
    V = [V[i * H * d:(i + 1) * H * d] for i in range(count)]
    Ei, DE = common(E, "contexts")  # E = Ei / DE: every token's integers over one denominator
    tokens, bE = [Ei[r * d:(r + 1) * d] for r in range(len(Ei) // d)], max(abs(x).bit_length() for x in Ei)
    products = {}  # a block w = wi / Dw -> (the one value of (token . wi) over all tokens, Dw), or None
    for i, v in enumerate(V):
        consts = []
        for h in range(H):
            w = tuple(v[h * d:(h + 1) * d])
            if w not in products:
                if (len(products) + 1) * len(E) > 10**7:
                    raise IllFormed("distinct null-vector blocks times context entries above 10^7")
                wi, Dw = common(w, "null vectors")
                nz = [(j, x) for j, x in enumerate(wi) if x]
                bw = max((abs(x).bit_length() for _, x in nz), default=0)
                charge(len(tokens) * len(nz) * (32 + 4 * (bE // 64 + 1) * (bw // 64 + 1)), "null vectors")
                vals = {sum(tok[j] * x for j, x in nz) for tok in tokens}
                products[w] = (vals.pop(), Dw) if len(vals) == 1 else None
            if products[w] is None:
                raise Rejected(f"null vector {i}, head {h + 1}: E^(t) v_h is not one constant for every token "
                               "and example")
            consts.append(products[w])  # a_h = value / (DE Dw)
        total = exact_sum(consts, "null vectors")
        if total[0] != 0:
            raise Rejected(f"null vector {i}: the block constants sum to {show((total[0], total[1] * DE))}, not 0")
    cap = H * d - _null_vector_rank(V, "null vectors of Z")
    claimed = _integer(claim["rank_at_most"], "rank_at_most", 0, 1 << 30)
    if claimed != cap:
        raise Rejected(f"the claim rank(Z) <= {claimed} is not the proved Hd - {H * d - cap} = {cap}")
    return (f"for ANY queries and key/query weights, rank(Z) <= Hd - {H * d - cap} = {cap} on these contexts "
            f"(T = {T}, n = {n}, d = {d}, H = {H}): each v has E^(t) v_h = a_h 1_n for every example and "
            "sum_h a_h = 0, so Z v = sum_h a_h = 0 (softmax rows sum to 1)")


def _positive_simplex(P: list, rows: int, N: int, what: str, strict: bool) -> None:
    for t in range(rows):
        row = P[t * N:(t + 1) * N]
        num, den = exact_sum(row, f"{what} row {t}")
        if any(x < 0 or (strict and x == 0) for x in row) or num != den:
            raise Rejected(f"{what} row {t} is not in the {'open ' if strict else ''}simplex exactly")


def kind_thm2_rhs(claim, data) -> str:
    N, d = _integer(data["N"], "N", 2, 10**5), _integer(data["d"], "d", 1, 10**6)
    T0 = _integer(data["T0"], "T0", 1, 10**4)
    if N * T0 > 10**6:
        raise IllFormed("N T0 above 10^6")
    P = array(data["conditionals"], (T0, N), "conditionals").fractions()
    w = array(data["weights"], (T0,), "weights").fractions()
    q = number(claim["rhs_below"], "rhs_below")
    if q > 0:
        raise IllFormed("rhs_below must be <= 0 (the claim is that the bound is negative)")
    _positive_simplex(P, T0, N, "conditional", strict=False)
    if any(x <= 0 for x in w):
        raise Rejected("a prior weight is not positive")
    total, rhs = exact_sum(w, "weights"), None
    for bits in PRECISIONS:  # 512 bits only while the enclosure reaches q (next to a point mass, or a close claim)
        with precision(bits):
            rhs, C = _thm2_rhs(P, w, total, N, d)
            if rhs is not None and below(rhs, q):
                return (f"Dana et al. Thm. 2's right-hand side for N = {N}, d = {d} (C = {show(lower(C), 4)}) and this "
                        f"prior is < {show(q)} <= 0 <= d_KL(pi, L): the printed bound fails")
            if rhs is not None and lower(rhs) is not None and lower(rhs) >= q:
                break  # certainly not below q
    end = "not enclosed" if rhs is None or upper(rhs) is None else f"upper end {show(upper(rhs))}"
    raise Rejected(f"the right-hand side ({end}, intervals at {bits} bits) is not below the claimed {show(q)}")


def _thm2_rhs(P: list, w: list, total: tuple, N: int, d: int):
    """(RHS, C) of Dana et al.'s Thm. 2 in intervals; RHS None when exp(ent) - 1 is not enclosed above 0."""
    C = iv.sqrt(32 * iv.log(iv.mpf(N + 1)) / d)
    acc = iv.mpf(0)
    for t in range(len(w)):
        p = P[t * N:(t + 1) * N]
        g = max(range(N), key=lambda j: p[j])
        if p[g] == 1 or all(x == p[0] for x in p):
            continue  # deterministic or uniform: the term is 0 (its limit)
        pb = [ival(x) for x in p]
        # -x log x is in [x (1 - x), 1 - x] and e^y - 1 in [y, y e^y]: tight where log x and e^y - 1 cancel
        ent = sum((meet(-x * iv.log(x), x * ival(1 - e), ival(1 - e)) for x, e in zip(pb, p) if e > 0), iv.mpf(0))
        em1 = meet(iv.exp(ent) - 1, ent, ent * iv.exp(ent))
        if not (lower(em1) or 0) > 0:
            return None, C
        rest = ival(1 - p[g])
        tv = sum((abs(pb[j] / rest - iv.mpf(1) / (N - 1)) for j in range(N) if j != g), iv.mpf(0)) / 2
        acc += ival(w[t]) * rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * iv.log((N - 1) / em1)
    return acc / ival(total), C


def _sequences(x, N: int, S: int, most: int, what: str = "sequences") -> list:
    seqs = _list(x, 1, most, what)
    out = [tuple(_integer(t, f"{what} token", 0, N - 1) for t in _list(s, S, S, f"{what} entry")) for s in seqs]
    if len(set(out)) != len(out):
        raise IllFormed(f"{what}: a sequence is repeated")
    return out


def kind_lemma2_cap(claim, data) -> str:
    N, S = _integer(data["N"], "N", 1, 32), _integer(data["S"], "S", 1, 8)
    d, H = _integer(data["d"], "d", 1, 10**6), _integer(data["H"], "H", 1, 10**6)
    seqs = _sequences(data["sequences"], N, S, 256)
    stated = {k: _integer(claim[k], k, 0, 10**12) for k in ("T0", "R", "D", "cap", "target")}

    def formal(t, s):  # u_{t_s} + p_s in Z^{N+S}
        return [(j == t[s]) + (j == N + s) for j in range(N + S)]

    T0, R = len(seqs), exact_rank([formal(t, s) for t in seqs for s in range(S)])
    D = exact_rank([[a - b for a, b in zip(formal(t, s), formal(t, S - 1))] for t in seqs for s in range(S - 1)])
    found = {"T0": T0, "R": R, "D": D, "cap": min(d, R) + (H - 1) * min(d, D), "target": min(T0, H * d)}
    if stated != found:
        raise Rejected(f"the claim {stated} differs from the recomputed {found}")
    if not found["cap"] < found["target"]:
        raise Rejected(f"cap {found['cap']} is not below min(T0, Hd) = {found['target']}")
    return (f"on these {T0} sequences (N = {N}, S = {S}, d = {d}, H = {H}) every e, pos and attention weights give "
            f"rank{{A(t)}} <= min(d, R) + (H-1) min(d, D) = {found['cap']} < min(T0, Hd) = {found['target']} "
            f"(R = {R}, D = {D}): Dana et al.'s Lemma 2 fails here")


def kind_thm1_floor(claim, data) -> str:
    N, S = _integer(data["N"], "N", 2, 64), _integer(data["S"], "S", 1, 64)
    d, dh, H = _integer(data["d"], "d", 1, 10**4), _integer(data["d_h"], "d_h", 1, 10**4), _integer(data["H"], "H", 0, 10**4)
    T0 = _integer(data["T0"], "T0", 1, 1024)
    seqs = _sequences(data["sequences"], N, S, 1024)
    if len(seqs) != T0:
        raise IllFormed(f"{len(seqs)} sequences for T0 = {T0}")
    w = array(data["weights"], (T0,), "weights").fractions()
    P = array(data["conditionals"], (T0, N), "conditionals").fractions()
    k, kappa = _integer(claim["k"], "k", 0, 10**8), number(claim["kappa0"], "kappa0")
    groups = _list(data["groups"], 1, T0, "groups")
    if len(groups) * ((k + 2) ** 2 * N + (k + 2) ** 3) + T0 * N > 2 * 10**6:
        raise IllFormed("groups x ((k+2)^2 N + (k+2)^3) + T0 N above 2 10^6 interval operations")
    if kappa <= 0:
        raise IllFormed("kappa0 must be positive")
    if k != min(H * dh, d) or k + 1 > N:
        raise Rejected(f"k = {k} is not min(H d_h, d) = {min(H * dh, d)} below N")
    if T0 > H * dh + d:
        raise Rejected(f"T0 = {T0} > H d_h + d = {H * dh + d}: the capacity reading makes no claim here")
    if d < N - 1:
        raise Rejected(f"d = {d} < N - 1: no exact value of d_KL(pi, L) is known to this checker")
    _positive_simplex(P, T0, N, "conditional", strict=True)
    if any(x <= 0 for x in w):
        raise Rejected("a prior weight is not positive")
    used, members = [], []
    for gi, g in enumerate(groups):
        g = _fields(g, ("last_token", "columns", "alpha"), f"groups[{gi}]")
        q = _integer(g["last_token"], "last_token", 0, N - 1)
        mem = [t for t in range(T0) if seqs[t][-1] == q]
        J = indices(g["columns"], k + 1, len(mem), f"groups[{gi}] columns")
        alpha = number(g["alpha"], "alpha")
        if q in [u[0] for u in used] or alpha <= 0:
            raise IllFormed(f"groups[{gi}]: a repeated last token or alpha <= 0")
        used.append((q, mem, J, alpha))
        members += mem
    with precision(PRECISIONS[0]):
        logs = []
        for t in range(T0):
            lg = [iv.log(ival(x)) for x in P[t * N:(t + 1) * N]]
            mean = sum(lg, iv.mpf(0)) / N
            logs.append([x - mean for x in lg])
        for q, mem, J, alpha in used:
            mean = [sum((logs[t][j] for t in mem), iv.mpf(0)) / len(mem) for j in range(N)]
            cols = [[logs[mem[i]][j] - mean[j] for j in range(N)] for i in J]
            G = [[sum((a[j] * b[j] for j in range(N)), iv.mpf(0)) - (ival(alpha) if a is b else 0) for b in cols]
                 for a in cols]
            if not positive_definite(G):
                raise Rejected(f"last token {q}: sigma_min^2 of the chosen centered columns >= {show(alpha)} "
                               "not shown")
        total = ival(exact_sum(w, "weights"))
        acc = iv.mpf(0)
        for t in members:
            eta = iv.sqrt(ival(kappa) * total / (2 * ival(w[t])))
            gap = ival(min(P[t * N:(t + 1) * N])) - eta
            if not (lower(gap) or 0) > 0:
                raise Rejected(f"sequence {t}: eta = sqrt(kappa0 / (2 pi_t)) is not below its smallest conditional")
            acc += N * (eta / gap) ** 2
        alphas = exact_sum([a for *_, a in used], "alpha")
        if not below(acc, alphas):
            end = "not enclosed" if upper(acc) is None else f"upper {show(upper(acc))}"
            raise Rejected(f"N sum_t delta_t(kappa0)^2 ({end}) is not below sum_g alpha_g = {show(alphas)}")
    return (f"every attention-only transformer with (d, d_h, H) = ({d}, {dh}, {H}) has d_KL(pi, T) > {show(kappa)} "
            f"on this prior (T0 = {T0} <= H d_h + d), while d_KL(pi, L) = 0 (d >= N - 1, positive conditionals): "
            f"Dana et al.'s Thm. 1 read as a capacity statement fails for gamma < {show(kappa)}")


def kind_relu_unreachable(claim, data) -> str:
    T, d = _integer(data["T"], "T", 1, 16), _integer(data["d"], "d", 1, 64)
    m = _integer(claim["units"], "units", 1, 8)
    X = array(data["points"], (T, d), "points").fractions()
    y = array(data["labels"], (T,), "labels").fractions()
    tuples = math.comb(2**T + m - 1, m)
    if tuples > 10**4 or tuples * T * T * (m * (d + 1) + 2) > 10**7:
        raise IllFormed("more than 10^4 activation-pattern tuples, or 10^7 operations")
    cols = [common(X[i::d], "points")[0] for i in range(d)]  # columns scaled to integers: the ranks are unchanged
    X, y = [cols[i][t] for t in range(T) for i in range(d)], common(y, "labels")[0]
    patterns = list(itertools.product((0, 1), repeat=T))
    for tup in itertools.combinations_with_replacement(patterns, m):
        M = [[D[t] * x for D in tup for x in X[t * d:(t + 1) * d] + [1]] + [1] for t in range(T)]
        if exact_rank(M, "pattern ranks") == exact_rank([row + [y[t]] for t, row in enumerate(M)], "pattern ranks"):
            raise Rejected(f"the labels lie in the span of activation patterns {tup}: not shown unreachable")
    return (f"no ReLU net f(x) = v^T ReLU(W x + b) + b0 with {m} hidden units fits these {T} labels on these points "
            f"in R^{d} (every one of the {math.comb(len(patterns) + m - 1, m)} pattern tuples leaves them outside its "
            "span); hence none fits them on App. F's lifted data either (Eq. 29)")


def _counts(H: int, n: int, d: int, setting: str) -> list:
    dh, dv, dout = (n, 1, 1) if setting == "lean" else (d, d, 1)
    budget = H * (2 * d * dh + d * dv) + H * dv * d + d * dout
    m = max(0, (budget - 1) // ((n + 1) * d + 2))
    return [H, n, d, setting, budget, m, m * ((n + 1) * d + 2) + 1, H * (min(n, dh) - 1) + 1, m * (d + 2) + 1]


def kind_count_comparison(claim, data) -> str:
    grid = []
    for i, p in enumerate(_list(data["grid"], 1, 10**4, "grid")):
        p = _list(p, 4, 4, f"grid[{i}]")
        H, n, d = (_integer(x, f"grid[{i}] size", 1, 10**6) for x in p[:3])
        if p[3] not in ("lean", "square") or not 2 <= n < d:
            raise IllFormed(f"grid[{i}]: setting must be lean or square, with 2 <= n < d")
        grid.append(_counts(H, n, d, p[3]))
    ineqs = []
    for i, q in enumerate(_list(data["inequalities"], 1, 64, "inequalities")):
        q = _fields(q, ("setting", "kappa", "power"), f"inequalities[{i}]")
        if q["setting"] not in ("lean", "square"):
            raise IllFormed(f"inequalities[{i}]: setting must be lean or square")
        ineqs.append((q["setting"], _integer(q["kappa"], "kappa", 1, 10**6), _integer(q["power"], "power", 0, 4)))
    violations = [[i for i, r in enumerate(grid) if r[3] == s and r[1] ** p * r[8] > kap * r[2] ** p * r[7]]
                  for s, kap, p in ineqs]
    if json.dumps(claim["rows"]) != json.dumps(grid) or json.dumps(claim["violations"]) != json.dumps(violations):
        raise Rejected("the claimed counts or violations differ from the recomputed ones")
    parts = [f"n^{p} C_R <= {kap} d^{p} C_A ({s}): " + ("holds at all its points" if not v else f"fails at {len(v)}")
             for (s, kap, p), v in zip(ineqs, violations)]
    return (f"at equal parameter counts on {len(grid)} grid points (C_A = H(r-1)+1, C_R = m(d+2)+1, exact "
            "integers): " + "; ".join(parts))


KINDS = {
    "rank-lower-bound": (("rank_at_least",), ("m", "n", "matrix", "rows", "cols"), kind_rank_lower_bound),
    "mha-feature-rank": (("rank_at_least",), MHA_KEYS, kind_mha_feature_rank),
    "mha-memorization": (("rank_at_least", "max_abs_residual"), MHA_KEYS + READOUT_KEYS, kind_mha_memorization),
    "mha-readout-residual": (("relation", "tol"), MHA_KEYS[:-2] + READOUT_KEYS, kind_readout_residual),
    "mha-argmax-margins": (("correct", "wrong"), MHA_KEYS[:-2] + READOUT_KEYS[:2] + ("classes",) + READOUT_KEYS[3:],
                           kind_argmax_margins),
    "mha-shared-context-cap": (("rank_at_most",), ("T", "n", "d", "H", "context", "null_vectors"),
                               kind_shared_context_cap),
    "mha-token-sum-cap": (("rank_at_most",), ("T", "n", "d", "H", "shared", "contexts", "null_vectors"),
                          kind_token_sum_cap),
    "dana-thm2-negative-rhs": (("rhs_below",), ("N", "d", "T0", "conditionals", "weights"), kind_thm2_rhs),
    "dana-lemma2-rank-cap": (("T0", "R", "D", "cap", "target"), ("N", "S", "d", "H", "sequences"), kind_lemma2_cap),
    "dana-thm1-capacity-floor": (("kappa0", "k"), ("N", "S", "d", "d_h", "H", "T0", "sequences", "weights",
                                                   "conditionals", "groups"), kind_thm1_floor),
    "relu-unreachable-labels": (("units",), ("T", "d", "points", "labels"), kind_relu_unreachable),
    "mha-relu-count-comparison": (("rows", "violations"), ("grid", "inequalities"), kind_count_comparison),
}


def check_certificate(cert) -> tuple[int, str]:
    """(exit code, line): 0 accepted with the statement proved, 1 rejected, 2 ill-formed."""
    _spent[0] = 0  # the exact-work budget is per file
    try:
        _fields(cert, ("format", "kind", "claim", "data", "about", "sha256"), "the certificate")
        if cert["format"] != FORMAT:
            raise IllFormed(f"format is not {FORMAT!r}")
        if cert["kind"] not in KINDS:
            raise IllFormed(f"unknown kind {str(cert['kind'])[:60]!r}")
        claim_keys, data_keys, check = KINDS[cert["kind"]]
        _fields(cert["claim"], claim_keys, "claim")
        mha = cert["kind"].startswith("mha-") and "W_Q" in data_keys and isinstance(cert["data"], dict)
        _fields(cert["data"], data_keys + (("b_Q",) if mha and "b_Q" in cert["data"] else ()), "data")
        about = cert["about"]
        if not isinstance(about, str) or len(about) > MAX_ABOUT or not all(" " <= c <= "~" for c in about):
            raise IllFormed(f"about is not printable ASCII text of at most {MAX_ABOUT} characters")
        if not isinstance(cert["sha256"], str) or cert["sha256"] != digest(cert):
            raise IllFormed("sha256 does not match the file: it was changed after it was written")
        return 0, f"{cert['kind']}: {check(cert['claim'], cert['data'])}"
    except Rejected as exc:
        return 1, str(exc)
    except IllFormed as exc:
        return 2, str(exc)
    except (RecursionError, MemoryError, OverflowError, ValueError, ZeroDivisionError, TypeError) as exc:
        return 2, f"not checkable: {type(exc).__name__}: {str(exc)[:200]}"


def main(argv=None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python verifier/recheck.py CERT.json [...]   (exit 0 accepted, 1 rejected, 2 ill-formed)",
              file=sys.stderr)
        return 2
    worst = 0
    for path in paths:
        try:
            code, line = check_certificate(read(path))
        except IllFormed as exc:
            code, line = 2, str(exc)
        print(f"{path}: {('ACCEPTED', 'REJECTED', 'ILL-FORMED')[code]}: {line}", flush=True)
        worst = max(worst, code)
    return worst


if __name__ == "__main__":
    sys.exit(main())
