"""Exact rational linear algebra (python-flint ``fmpq_mat`` / ``fmpz_mat``).

Every float64 is a dyadic rational ``p / 2^k``, so a float array has an exact
rational meaning and everything here is exact: no tolerance anywhere.  Rank,
null spaces and the test ``A v = 0`` are decided over Q.

Cost grows with the bit size of the entries (fraction-free elimination):
meant for the small matrices met in certificates (subsets of vectors,
witnesses, test instances), not for 600 x 1200 float matrices.

>>> A = [[1, 2, 3], [2, 4, 6.0]]
>>> exact_rank(A)
1
>>> [str(x) for x in exact_nullspace([[1, 1]])[0]]
['1', '-1']
>>> exact_matvec_is_zero(A, [1, 1, -1])
True
"""
from __future__ import annotations

from fractions import Fraction
from numbers import Integral, Rational
from typing import Sequence

import numpy as np
from flint import fmpq, fmpq_mat, fmpz, fmpz_mat

from verifier.errors import InvalidInstance

__all__ = [
    "to_fmpq",
    "to_fmpq_mat",
    "to_fmpq_vector",
    "exact_rank",
    "exact_nullspace",
    "exact_matvec_is_zero",
    "exact_matvec",
]


def to_fmpq(x) -> fmpq:
    """One number as an exact rational.

    Accepts python/numpy ints and floats (a float is its exact binary value,
    e.g. ``0.1 = 3602879701896397/36028797018963968``), ``Fraction``, ``fmpz``,
    ``fmpq``, sympy ``Rational``/``Integer`` and strings such as ``"-3/4"``.
    """
    if isinstance(x, fmpq):
        return x
    if isinstance(x, (bool, np.bool_)):
        return fmpq(int(x))
    if isinstance(x, (int, np.integer, fmpz)):
        return fmpq(int(x))
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise InvalidInstance(f"non-finite entry {float(x)!r} has no rational value")
        p, q = x.as_integer_ratio()  # its own: a long double is not rounded to float64 first
        return fmpq(int(p), int(q))
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    if isinstance(x, str):
        try:
            f = Fraction(x.strip())
        except (ValueError, ZeroDivisionError) as exc:
            raise InvalidInstance(f"not a rational number: {x!r} ({exc})") from None
        return fmpq(f.numerator, f.denominator)
    # sympy Rational/Integer (and any numbers.Rational) expose p/q or numerator.
    p, q = getattr(x, "p", None), getattr(x, "q", None)
    if isinstance(p, int) and isinstance(q, int):
        return fmpq(p, q)
    if isinstance(x, Rational) or isinstance(x, Integral):
        return fmpq(int(x.numerator), int(x.denominator))
    raise InvalidInstance(f"cannot read {x!r} (type {type(x).__name__}) as an exact rational")


def _rows_of(A) -> list[list]:
    if isinstance(A, fmpq_mat):
        return A.tolist()
    if isinstance(A, fmpz_mat):
        return [[fmpq(v) for v in row] for row in A.tolist()]
    if isinstance(A, np.ndarray):
        if A.ndim != 2:
            raise InvalidInstance(f"expected a 2-D matrix, got shape {A.shape}")
        return A.tolist()
    rows = [list(r) for r in A]
    if rows and any(len(r) != len(rows[0]) for r in rows):
        raise InvalidInstance("ragged matrix: rows have different lengths")
    return rows


def to_fmpq_mat(A) -> fmpq_mat:
    """A matrix of exact numbers (see :func:`to_fmpq`) as an ``fmpq_mat``.

    A float64 array converts exactly, entry by entry.
    """
    if isinstance(A, fmpq_mat):
        return A
    if isinstance(A, fmpz_mat):
        return fmpq_mat(A)
    rows = _rows_of(A)
    m = len(rows)
    n = A.shape[1] if isinstance(A, np.ndarray) else len(rows[0]) if m else 0  # an empty array keeps its shape
    if isinstance(A, np.ndarray) and A.dtype.kind == "f":
        if not np.all(np.isfinite(A)):
            raise InvalidInstance("matrix has NaN or infinite entries")
        flat = [fmpq(*v.as_integer_ratio()) for v in A.ravel().tolist()]
    else:
        flat = [to_fmpq(v) for row in rows for v in row]
    return fmpq_mat(m, n, flat)


def to_fmpq_vector(v) -> list[fmpq]:
    """A 1-D sequence of exact numbers as a list of ``fmpq``."""
    if isinstance(v, np.ndarray) and v.ndim != 1:
        raise InvalidInstance(f"expected a vector, got shape {v.shape}")
    return [to_fmpq(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]


def _integer_rows(Q: fmpq_mat) -> fmpz_mat:
    """Scale each row by the lcm of its denominators: same row space, same
    right null space, integer entries."""
    m, n = Q.nrows(), Q.ncols()
    out = []
    for row in Q.tolist():
        den = fmpz(1)
        for x in row:
            q = x.q
            if q != 1:
                den = den * q // den.gcd(q)
        out.extend([x.p * (den // x.q) for x in row])
    return fmpz_mat(m, n, out)


def _integer_matrix(A) -> fmpz_mat | None:
    """``A`` as an ``fmpz_mat`` when every entry is an integer given as such (an
    integer ndarray, or rows of Python ints): no rationals formed; else None."""
    if isinstance(A, np.ndarray):
        if A.ndim != 2 or A.dtype.kind not in "iu":
            return None
        return fmpz_mat(A.shape[0], A.shape[1], [int(v) for v in A.ravel().tolist()])
    if not isinstance(A, (list, tuple)) or not A or not all(isinstance(r, (list, tuple)) for r in A):
        return None
    n = len(A[0])
    if any(len(r) != n for r in A):
        return None
    flat = [v for r in A for v in r]
    if set(map(type, flat)) - {int}:  # a float, a bool, a rational: not read as an integer here
        return None
    return fmpz_mat(len(A), n, flat)


def exact_rank(A) -> int:
    """The rank of ``A`` over Q (exact); integer entries go to flint's integer
    rank directly."""
    Z = _integer_matrix(A)
    if Z is not None:
        return int(Z.rank()) if Z.nrows() and Z.ncols() else 0
    Q = to_fmpq_mat(A)
    if Q.nrows() == 0 or Q.ncols() == 0:
        return 0
    return int(_integer_rows(Q).rank())


def exact_nullspace(A) -> list[list[fmpq]]:
    """A basis of ``{v in Q^n : A v = 0}``, exact; each basis vector is
    primitive integral (gcd of entries 1, first nonzero entry positive).
    Empty list when ``A`` has full column rank.
    """
    Q = to_fmpq_mat(A)
    m, n = Q.nrows(), Q.ncols()
    if n == 0:
        return []
    if m == 0:
        return [[fmpq(int(i == j)) for i in range(n)] for j in range(n)]
    X, nullity = _integer_rows(Q).nullspace()
    basis = []
    cols = X.tolist()
    for j in range(int(nullity)):
        v = [cols[i][j] for i in range(n)]
        g = fmpz(0)
        for x in v:
            g = g.gcd(x)
        lead = next(x for x in v if x != 0)  # a basis vector is nonzero
        if lead < 0:
            g = -g
        basis.append([fmpq(x // g) for x in v])
    return basis


def exact_matvec(A, v: Sequence) -> list[fmpq]:
    """``A v`` computed exactly."""
    Q = to_fmpq_mat(A)
    vec = to_fmpq_vector(v)
    if len(vec) != Q.ncols():
        raise InvalidInstance(f"vector of length {len(vec)} for a matrix with {Q.ncols()} columns")
    if Q.ncols() == 0:
        return [fmpq(0)] * Q.nrows()
    col = fmpq_mat(len(vec), 1, vec)
    return (Q * col).entries()


def exact_matvec_is_zero(A, v: Sequence) -> bool:
    """True iff ``A v = 0`` exactly (every entry of the product is 0 in Q)."""
    return all(x == 0 for x in exact_matvec(A, v))
