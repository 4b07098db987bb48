"""Structural rank bounds: null vectors that hold for EVERY choice of weights.

Propositions 2 and 5 bound rank(Z) for any key/query weights.  The reason is
a structure, not a number: each softmax block of scores is row-stochastic, so

* shared contexts (Prop. 2): ``Z = S (I_H kron E)`` with
  ``S = [S_1 ... S_H]`` (T x Hn) and ``S_h 1_n = 1_T``; the H-1 vectors
  ``[1_n; 0; ...; -1_n (block h); ...]`` are null vectors of ``S``, so
  ``rank(Z) <= rank(S) <= Hn - (H-1) = H(n-1)+1``;
* tokens with ``1_d^T x = c`` (Prop. 5): each ``z_h = E^T s_h`` sums to
  ``c``, so ``[1_d; ...; -1_d (block h); ...]`` are null vectors of ``Z``
  (H-1 of them), and when ``c = 0`` every ``e_h kron 1_d`` is (H of them).

Floats cannot certify ``S v = 0`` (``S`` involves exp).  What this module
offers, and what each is worth:

* the null vectors themselves, as exact integers, and their independence
  (exact rank over Q);
* :func:`ball_annihilation`: ``M v`` in ball arithmetic contains 0 for every
  vector -- *consistency* of the model with the structure (a ball of positive
  radius never proves ``= 0``; a ball excluding 0 would refute it);
* sympy identities with symbolic logits / scores / tokens: ``S V = 0`` and
  ``Z = S (I kron E)`` after simplification, and, at small sizes, every
  (bound+1)-minor of a fully symbolic ``Z`` is the zero polynomial.  These are
  the proofs; they run in well under a second.

>>> stochastic_block_null_vectors(3, 2)
[[1, 1, -1, -1, 0, 0], [1, 1, 0, 0, -1, -1]]
>>> prove_stochastic_blocks_annihilated(2, 3).holds
True
"""
from __future__ import annotations

import functools
import itertools
import time
from dataclasses import dataclass, field

import numpy as np
from flint import arb, arb_mat, fmpq, fmpz

from verifier.arith.compare import Decision, certainly_nonzero, upper
from verifier.arith.exact import exact_rank
from verifier.errors import InvalidInstance

__all__ = [
    "SymbolicIdentity",
    "BallAnnihilation",
    "stochastic_block_null_vectors",
    "block_sum_null_vectors",
    "null_vectors_independent",
    "stack_scores",
    "kron_identity",
    "ball_annihilation",
    "ball_contains_rational",
    "simplex_point",
    "prove_stochastic_blocks_annihilated",
    "prove_softmax_sums_to_one",
    "prove_shared_factorisation",
    "prove_block_sums_constant",
    "prove_minors_vanish",
    "symbolic_feature_matrix",
]


@dataclass(frozen=True)
class SymbolicIdentity:
    """A sympy identity: ``holds`` iff every residual simplified to 0."""

    claim: str
    sizes: dict
    residuals: tuple = ()
    holds: bool = False
    checked: int = 0
    seconds: float = 0.0
    method: str = "sympy"

    def to_dict(self) -> dict:
        nonzero = [r for r in self.residuals if r != "0"]
        return {"claim": self.claim, "sizes": dict(self.sizes), "holds": self.holds,
                "expressions_checked": self.checked, "nonzero_residuals": nonzero[:3],
                "method": self.method, "seconds": round(self.seconds, 4)}


@dataclass(frozen=True)
class BallAnnihilation:
    """``M v`` for each vector, in balls.  ``decision``: TRUE if every entry
    contains 0 (consistent with ``M v = 0``; not a proof), FALSE if some entry
    excludes 0 (``M v != 0`` is certain), UNDECIDED never (a ball either
    contains 0 or not)."""

    decision: Decision
    max_abs_upper: float
    max_radius: float
    vectors: int
    excluded: tuple = field(default_factory=tuple)  # (vector, row) pairs excluding 0

    def to_dict(self) -> dict:
        return {"decision": self.decision.value, "max_abs_upper": self.max_abs_upper,
                "max_radius": self.max_radius, "vectors": self.vectors,
                "entries_excluding_zero": [list(p) for p in self.excluded[:5]]}


# ------------------------------------------------------------- null vectors

def stochastic_block_null_vectors(H: int, n: int) -> list[list[int]]:
    """The H-1 vectors ``[1_n; 0; ...; -1_n (block h); ...]``, h = 2..H."""
    if H < 1 or n < 1:
        raise InvalidInstance(f"H = {H} and n = {n} must be positive")
    out = []
    for h in range(1, H):
        v = [0] * (H * n)
        for i in range(n):
            v[i] = 1
            v[h * n + i] = -1
        out.append(v)
    return out


def block_sum_null_vectors(H: int, d: int, *, zero_sum: bool) -> list[list[int]]:
    """Null vectors of Z when every block of every row sums to one constant c:
    the H-1 differences ``[1_d; ...; -1_d (block h)]`` (c != 0), or the H
    block indicators ``e_h kron 1_d`` (c = 0, a larger null space)."""
    if not zero_sum:
        return stochastic_block_null_vectors(H, d)
    out = []
    for h in range(H):
        v = [0] * (H * d)
        for i in range(d):
            v[h * d + i] = 1
        out.append(v)
    return out


def null_vectors_independent(vectors) -> bool:
    """Exact: the vectors are linearly independent over Q."""
    return not vectors or exact_rank(vectors) == len(vectors)


# ------------------------------------------------------------- ball checks

def stack_scores(S) -> arb_mat:
    """Nested ball scores ``S[t][h] -> n arb`` as the T x Hn matrix [S_1 ... S_H]."""
    return arb_mat([[x for blk in row for x in blk] for row in S])


def kron_identity(H: int, E) -> np.ndarray:
    """``I_H kron E`` (Hn x Hd), exact in float64 (entries copied)."""
    E = np.asarray(E, dtype=np.float64)
    return np.kron(np.eye(H), E)


def ball_annihilation(M: arb_mat, vectors) -> BallAnnihilation:
    """Evaluate ``M v`` in balls for every integer vector ``v``."""
    if not vectors:
        return BallAnnihilation(Decision.TRUE, 0.0, 0.0, 0)
    V = arb_mat([[int(v[i]) for v in vectors] for i in range(len(vectors[0]))])
    R = M * V
    worst, rad, bad = 0.0, 0.0, []
    for i in range(R.nrows()):
        for j in range(R.ncols()):
            x = R[i, j]
            worst = max(worst, upper(abs(x)))
            rad = max(rad, float(x.rad()))
            if certainly_nonzero(x) is Decision.TRUE:
                bad.append((j, i))
    return BallAnnihilation(Decision.FALSE if bad else Decision.TRUE, worst, rad, len(vectors), tuple(bad))


def _dyadic(x: arb) -> fmpq:
    """An exact arb (a midpoint or a radius) as a rational."""
    m, e = x.man_exp()
    return fmpq(m) * (fmpq(2) ** int(e)) if e >= 0 else fmpq(m, fmpz(2) ** int(-e))


def ball_contains_rational(x: arb, q) -> bool:
    """Exact test ``|mid(x) - q| <= rad(x)`` over Q.  (``arb.contains(fmpq)``
    first rounds q to a ball at the working precision, and then asks for the
    WHOLE rounded ball to lie inside x, which fails spuriously.)"""
    q = q if isinstance(q, fmpq) else fmpq(*float(q).as_integer_ratio())
    diff = _dyadic(x.mid()) - q
    return (diff if diff >= 0 else -diff) <= _dyadic(x.rad())


# ------------------------------------------------------------- sympy proofs

def _sympy():
    import sympy

    return sympy


def simplex_point(prefix: str, n: int) -> list:
    """A generic point of the (closed) simplex: ``(q_1..q_{n-1}, 1 - sum q)``.
    Every score vector, for every weights, is such a point."""
    sp = _sympy()
    q = [sp.Symbol(f"{prefix}_{i}") for i in range(n - 1)]
    return q + [1 - sum(q, sp.Integer(0))]


def _identity(claim: str, sizes: dict, residuals, t0: float, method: str = "sympy") -> SymbolicIdentity:
    res = tuple(str(r) for r in residuals)
    return SymbolicIdentity(claim, sizes, res, all(r == "0" for r in res), len(res),
                            time.perf_counter() - t0, method)


def prove_stochastic_blocks_annihilated(H: int, n: int) -> SymbolicIdentity:
    """sympy: with symbolic logits ``a_{h,i}`` and ``s_h = softmax(a_h)``
    (Eq. 2), the row ``[s_1 ... s_H]`` times each null vector of
    :func:`stochastic_block_null_vectors` simplifies to 0.  One symbolic row
    covers every row of S: rows differ only in their logits."""
    sp = _sympy()
    t0 = time.perf_counter()
    row = []
    for h in range(H):
        a = [sp.Symbol(f"a_{h}_{i}", real=True) for i in range(n)]
        den = sum((sp.exp(x) for x in a), sp.Integer(0))
        row.extend(sp.exp(x) / den for x in a)
    residuals = [sp.cancel(sp.together(sum((c * s for c, s in zip(v, row)), sp.Integer(0))))
                 for v in stochastic_block_null_vectors(H, n)]
    return _identity("softmax rows: [s_1..s_H] v = 0 for the H-1 null vectors (symbolic logits)",
                     {"H": H, "n": n}, residuals, t0)


@functools.lru_cache(maxsize=1)
def prove_softmax_sums_to_one() -> SymbolicIdentity:
    """sympy, for EVERY n (a symbol): ``sum_i exp(a_i) / sum_j exp(a_j) = 1``.
    Hence each null vector of :func:`stochastic_block_null_vectors` gives
    ``[s_1 .. s_H] v = 1 - 1 = 0`` for every H and n: no size is sampled.
    (The bound index of the numerator's sum is renamed to the denominator's:
    alpha-renaming, so the ratio is one sum over itself.)"""
    sp = _sympy()
    t0 = time.perf_counter()
    n = sp.Symbol("n", integer=True, positive=True)
    i, j = sp.symbols("i j", integer=True)
    a = sp.IndexedBase("a", real=True)
    total = sp.Sum(sp.exp(a[j]), (j, 1, n))
    ratio = sp.factor_terms(sp.Sum(sp.exp(a[i]) / total, (i, 1, n)))  # 1/total leaves the sum
    residual = sp.simplify(ratio.xreplace({i: j}) - 1)
    return _identity("sum_i softmax(a)_i = 1 for every n (symbolic n, symbolic logits)", {"n": "any"},
                     [residual], t0)


def prove_shared_factorisation(H: int, n: int, d: int) -> SymbolicIdentity:
    """sympy: ``[E^T s_1; ...; E^T s_H]^T = [s_1 .. s_H] (I_H kron E)`` with
    symbolic E (n x d) and symbolic scores: Eqs. (3), (7) for a shared
    context factor through S."""
    sp = _sympy()
    t0 = time.perf_counter()
    E = sp.Matrix(n, d, lambda i, j: sp.Symbol(f"E_{i}_{j}"))
    s = [sp.Matrix([[sp.Symbol(f"s_{h}_{i}") for i in range(n)]]) for h in range(H)]
    z = sp.Matrix.hstack(*[s[h] * E for h in range(H)])  # Eq. (3) per head, concatenated (7)
    K = sp.diag(*[E] * H)  # I_H kron E
    S = sp.Matrix.hstack(*s)
    residuals = list(sp.expand(z - S * K))
    return _identity("Z row = S row (I_H kron E) (symbolic E, scores)", {"H": H, "n": n, "d": d},
                     residuals, t0)


def prove_block_sums_constant(H: int, n: int, d: int) -> SymbolicIdentity:
    """sympy: tokens with last coordinate ``c - sum(others)`` (so
    ``1^T x = c``), scores a generic simplex point: each ``1^T z_h - c``
    expands to 0, hence ``Z v = 0`` for :func:`block_sum_null_vectors` (both
    for c != 0 and, with c = 0, for the block indicators)."""
    sp = _sympy()
    t0 = time.perf_counter()
    c = sp.Symbol("c")
    E = sp.zeros(n, d)
    for i in range(n):
        for j in range(d - 1):
            E[i, j] = sp.Symbol(f"x_{i}_{j}")
        E[i, d - 1] = c - sum((E[i, j] for j in range(d - 1)), sp.Integer(0))
    residuals = []
    for h in range(H):
        s = sp.Matrix([simplex_point(f"s_{h}", n)])
        z = s * E
        residuals.append(sp.expand(sum(z, sp.Integer(0)) - c))
    return _identity("1^T z_h = c for every head (symbolic tokens summing to c, symbolic scores)",
                     {"H": H, "n": n, "d": d}, residuals, t0)


def symbolic_feature_matrix(contexts, H: int) -> list[list]:
    """Eq. (7) with symbolic scores: row t is ``[E^(t)^T s_1; ...; E^(t)^T s_H]``
    where every ``s_h^(t)`` is a fresh generic simplex point
    (:func:`simplex_point`).  ``contexts``: sympy matrices (n x d), symbolic or
    exact rationals.  Every weight choice gives a specialisation of it."""
    sp = _sympy()
    rows = []
    for t, E in enumerate(contexts):
        E = sp.Matrix(E)
        row = []
        for h in range(H):
            s = sp.Matrix([simplex_point(f"s_{t}_{h}", E.rows)])
            row.extend(s * E)
        rows.append(row)
    return rows


def prove_minors_vanish(rows, k: int, *, max_minors: int = 4000) -> SymbolicIdentity:
    """sympy (DomainMatrix over a polynomial ring): every k x k minor of the
    symbolic matrix ``rows`` is the zero polynomial, i.e. rank <= k-1 for every
    specialisation of the symbols.  Refuses (holds=False, no residuals) when
    there are more than ``max_minors`` minors."""
    sp = _sympy()
    from sympy.polys.matrices import DomainMatrix

    t0 = time.perf_counter()
    M = sp.Matrix(rows)
    m, n = M.shape
    sizes = {"rows": m, "cols": n, "k": k}
    if k > min(m, n):
        return _identity(f"rank <= {k - 1}: trivially (matrix is {m} x {n})", sizes, [], t0)
    count = _binom(m, k) * _binom(n, k)
    if count > max_minors:
        return SymbolicIdentity(f"all {k}-minors vanish: not attempted ({count} minors)", sizes,
                                ("not attempted",), False, 0, time.perf_counter() - t0)
    residuals = []
    for rs in itertools.combinations(range(m), k):
        for cs in itertools.combinations(range(n), k):
            det = DomainMatrix.from_Matrix(M.extract(list(rs), list(cs))).det()
            residuals.append(det)
    return _identity(f"every {k} x {k} minor is the zero polynomial (rank <= {k - 1})", sizes,
                     residuals, t0, method="sympy DomainMatrix.det over a polynomial ring")


def _binom(a: int, b: int) -> int:
    from math import comb

    return comb(a, b)
