"""Lemma 1 (App. D): the rank of a block upper-triangular matrix.

Statement
---------
For any real block matrix M = [[A, B], [0, C]] (A: m1 x n1, B: m1 x n2,
C: m2 x n2, 0: m2 x n1),

    rank M >= rank A + rank C.

(App. B applies it to [[Z'_I, Z_{h,I}], [0, Y]] after the row operations.)

Construction
------------
Proof by a minor: let A[I, K] be a nonsingular rank(A) x rank(A) submatrix
(I a row basis, K a column basis of A) and C[I', K'] one of C.  The
submatrix of M on rows I u (m1 + I') and columns K u (n1 + K') is
[[A[I,K], B[I,K']], [0, C[I',K']]], block triangular, so its determinant is
det A[I,K] det C[I',K'] != 0: M has a nonsingular minor of size
rank A + rank C.

Checks
------
1. sympy: det [[X, Y], [0, Z]] - det X det Z expands to 0 for symbolic
   blocks X (k1 x k1), Y, Z (k2 x k2), k1 + k2 <= 4 (the step of the proof).
2. Exact over Q (flint ``fmpq``), on the instance's contexts as blocks
   (A = E^(1), B = E^(2), C = E^(T), when n d <= 20000) and on ``trials`` random block
   matrices drawn from ``seed``: A and C as products of small integer
   factors (so rank deficient on purpose, rank 0 included), B with rational
   entries.  For each: exact ranks, rank M >= rank A + rank C, and the
   certificate minor above with its exact determinant, re-checked equal to
   det A[I,K] det C[I',K'] and nonzero.
3. Hypothesis: the lower-left block is exactly 0 (exact).

Not established
---------------
Nothing numerical is involved; the random family is finite (the minor
argument is the proof for every M).

References
----------
arXiv:2306.02010v3, App. D (Lemma 1), used in App. B (induction step).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_lemma1(make_instance(H=1, n=3, d=5, T=3, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import time

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.compare import Decision
from verifier.arith.exact import to_fmpq_mat
from verifier.arith.structure import SymbolicIdentity
from verifier.data.instances import rng_for
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

SYMBOLIC_SIZES = ((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (3, 1))


def prove_block_triangular_determinant(sizes=SYMBOLIC_SIZES) -> SymbolicIdentity:
    """sympy: det [[X, Y], [0, Z]] = det X det Z for symbolic square blocks."""
    import sympy as sp

    t0 = time.perf_counter()
    res = []
    for k1, k2 in sizes:
        X = sp.Matrix(k1, k1, sp.symbols(f"x0:{k1 * k1}"))
        Y = sp.Matrix(k1, k2, sp.symbols(f"y0:{k1 * k2}"))
        Z = sp.Matrix(k2, k2, sp.symbols(f"z0:{k2 * k2}"))
        M = sp.BlockMatrix([[X, Y], [sp.zeros(k2, k1), Z]]).as_explicit()
        res.append(sp.expand(M.det(method="berkowitz") - X.det(method="berkowitz") * Z.det(method="berkowitz")))
    return SymbolicIdentity("det [[X, Y], [0, Z]] = det X det Z", {"(k1, k2)": [list(s) for s in sizes]},
                            tuple(str(r) for r in res), all(r == 0 for r in res), len(res),
                            time.perf_counter() - t0, "sympy berkowitz determinant, expanded")


def block_matrix(A: fmpq_mat, B: fmpq_mat, C: fmpq_mat, D: fmpq_mat | None = None) -> fmpq_mat:
    """[[A, B], [D, C]] (D = 0 by default) as an fmpq_mat."""
    m1, n1, m2, n2 = A.nrows(), A.ncols(), C.nrows(), C.ncols()
    rows = [[A[i, j] for j in range(n1)] + [B[i, j] for j in range(n2)] for i in range(m1)]
    rows += [[D[i, j] if D is not None else fmpq(0) for j in range(n1)] + [C[i, j] for j in range(n2)]
             for i in range(m2)]
    return fmpq_mat(m1 + m2, n1 + n2, [x for r in rows for x in r])


def basis_minor(A: fmpq_mat) -> tuple[list[int], list[int]]:
    """(I, K): pivot rows and pivot columns, so A[I, K] is nonsingular, |I| = rank A."""
    if A.nrows() == 0 or A.ncols() == 0:
        return [], []

    def pivots(M: fmpq_mat) -> list[int]:
        R, rank = M.rref()
        out = []
        for i in range(rank):
            out.append(next(j for j in range(M.ncols()) if R[i, j] != 0))
        return out

    return pivots(A.transpose()), pivots(A)


def _sub(M: fmpq_mat, rows, cols) -> fmpq_mat:
    return fmpq_mat(len(rows), len(cols), [M[i, j] for i in rows for j in cols])


def _det(M: fmpq_mat) -> fmpq:
    return M.det() if M.nrows() else fmpq(1)


def block_rank_certificate(A, B, C, D=None) -> dict:
    """Exact ranks of A, C and M = [[A, B], [D, C]], and (for D = 0) the minor of the proof."""
    A, B, C = to_fmpq_mat(A), to_fmpq_mat(B), to_fmpq_mat(C)
    D = to_fmpq_mat(D) if D is not None else None
    M = block_matrix(A, B, C, D)
    rA, rC, rM = A.rank(), C.rank(), M.rank()
    out = {"sizes": [A.nrows(), A.ncols(), C.nrows(), C.ncols()], "rank A": rA, "rank C": rC, "rank M": rM,
           "holds": rM >= rA + rC}
    if D is None:
        (I, K), (I2, K2) = basis_minor(A), basis_minor(C)
        rows = I + [A.nrows() + i for i in I2]
        cols = K + [A.ncols() + j for j in K2]
        det = _det(_sub(M, rows, cols))
        product = _det(_sub(A, I, K)) * _det(_sub(C, I2, K2))
        if det != product or (rA + rC > 0 and det == 0):  # pragma: no cover - would be an engine bug
            raise RuntimeError("block-triangular minor failed its exact re-check")
        out.update({"minor rows": rows, "minor cols": cols, "det minor != 0": det != 0,
                    "det minor = det A[I,K] det C[I',K']": det == product})
    else:
        out["D != 0"] = any(x != 0 for x in D.entries())
    return out


def random_blocks(rng: np.random.Generator, trials: int, max_size: int = 5) -> list[tuple]:
    """Block triples (A, B, C) with rank-deficient A and C (products of integer factors)."""
    out = []
    for _ in range(trials):
        m1, n1, m2, n2 = (int(x) for x in rng.integers(1, max_size + 1, 4))
        k1, k2 = int(rng.integers(0, min(m1, n1) + 1)), int(rng.integers(0, min(m2, n2) + 1))
        A = rng.integers(-3, 4, (m1, k1)) @ rng.integers(-3, 4, (k1, n1))
        C = rng.integers(-3, 4, (m2, k2)) @ rng.integers(-3, 4, (k2, n2))
        B = to_fmpq_mat(rng.integers(-5, 6, (m1, n2)).tolist())
        B = fmpq_mat(m1, n2, [x / int(rng.integers(1, 8)) for x in B.entries()])
        out.append((A.astype(float), B, C.astype(float)))
    return out


#: a block matrix [[A, B], [0, C]] of exact rank below rank A + rank C
BLOCK_RANK_DROP = Refutation("counterexample", "a block matrix whose exact rank (over Q) is below rank A + rank C")
#: the false variant with a nonzero lower-left block D
NONZERO_D = Refutation("counterexample", "a block matrix [[A, B], [D, C]] whose exact rank is below rank A + rank C",
                       variant="zero_block=False: any lower-left block D")


def check_block_rank_inequality(blocks, *, zero_block: bool = True, statement_id: str = "lemma1",
                                instance=None, symbolic: SymbolicIdentity | None = None) -> Evidence:
    """rank [[A, B], [D, C]] >= rank A + rank C on every tuple of ``blocks``
    ((A, B, C) with D = 0, or (A, B, C, D) for the false variant)."""
    certs = [block_rank_certificate(*blk) for blk in blocks]
    holds = all(c["holds"] for c in certs)
    first_bad = next((i for i, c in enumerate(certs) if not c["holds"]), None)
    hyps = []
    if zero_block:
        hyps.append(Hypothesis("lower-left block exactly 0", "certified", f"{len(blocks)} block matrices built with 0"))
    # a block certificate that fails is a counterexample; an unproved symbolic step only leaves it undecided
    decision = Decision.FALSE if not holds else \
        Decision.TRUE if symbolic is None or symbolic.holds else Decision.UNDECIDED
    claim = "rank [[A, B], [0, C]] >= rank A + rank C" if zero_block else \
        "rank [[A, B], [D, C]] >= rank A + rank C for any D (false variant)"
    shown = certs[:4] + ([certs[first_bad]] if first_bad is not None and first_bad >= 4 else [])
    return conclude(
        statement_id, decision, claimed=claim,
        measured={"block matrices": len(blocks), "all hold": all(c["holds"] for c in certs),
                  "rank-deficient A or C": sum(c["rank A"] < min(c["sizes"][:2]) or c["rank C"] < min(c["sizes"][2:])
                                               for c in certs),
                  "first failure": certs[first_bad] if first_bad is not None else None},
        hypotheses=hyps, certified=True, method="exact rationals (flint fmpq)" + (" + sympy" if symbolic else ""),
        certificates=([symbolic.to_dict()] if symbolic else []) + shown,
        instance=instance.summary() if instance is not None else {},
        reason="" if holds else f"block matrix {first_bad}: rank M = {certs[first_bad]['rank M']} < "
                                f"{certs[first_bad]['rank A']} + {certs[first_bad]['rank C']}",
        trail=[Step("sympy: det of a block-triangular matrix = det X det Z", uses="Lemma 1 (proof step)",
                    data={"holds": symbolic.holds}) if symbolic else Step("no symbolic step (variant)"),
               Step(f"exact ranks and certificate minors on {len(blocks)} block matrices", uses="Lemma 1",
                    data={"all hold": holds})],
        refutation=BLOCK_RANK_DROP if zero_block else NONZERO_D)


INSTANCE_ENTRIES = 20000  # n d at most this: the contexts are used as blocks


@statement("lemma1", conclusion_over="any", refutes=(BLOCK_RANK_DROP, NONZERO_D), H=1, n=3, d=5, T=3)
def check_lemma1(instance, *, prec: int = 128, seed: int = 0, trials: int = 24, **options) -> Evidence:
    """Lemma 1 on the instance's contexts as blocks and on ``trials`` random block matrices."""
    E = np.asarray(instance.contexts)
    # the instance's contexts as blocks, when exact rank over Q is affordable
    # (GPT-2's 1024 x 768 contexts are not: the random family still runs)
    blocks = [(E[0], E[min(1, instance.T - 1)], E[-1])] if instance.n * instance.d <= INSTANCE_ENTRIES else []
    blocks += random_blocks(rng_for(seed, "lemma1"), trials)
    return check_block_rank_inequality(blocks, instance=instance, symbolic=prove_block_triangular_determinant())


@negative_control("lemma1", "lower-left block D != 0: A = B = C = D = [1] gives rank 1 < 1 + 1", expect=("refuted",))
def control_lemma1_nonzero_lower_left(*, prec: int = 128, seed: int = 0) -> Evidence:
    one = [[1]]
    return check_block_rank_inequality([(one, one, one, one)], zero_block=False)
