"""Lemma 2 (App. D): adding the mean to independent vectors keeps them independent.

Statement
---------
If ``x_1, ..., x_n`` in R^d are linearly independent and
``xbar = (1/n) sum_i x_i``, then ``x_1 + xbar, ..., x_n + xbar`` are linearly
independent (Lemma 2; used for Assumption 2 in Prop. 4, App. G).  With
``X = [x_1; ...; x_n]`` (rows) the shifted rows are ``X'_c = M_c X`` with

    M_c = I_n + (c/n) 1 1^T,    det(M_c) = 1 + c        (matrix determinant lemma)

and c = 1 for the lemma.  So the statement holds for every ``c != -1`` and fails
at ``c = -1``: then ``sum_i (x_i - xbar) = 0``, an exact dependence.

Construction
------------
The vectors are the n tokens (rows) of each context ``E^(t)`` of the instance;
``X'_c = X + c 1 xbar^T`` is formed in exact rationals (python-flint ``fmpq``;
every float64 is a dyadic rational).

Checks
------
* sympy: ``det(M_c) - (1 + c)`` expands to 0 for n = 1..6 (symbolic c); for a
  general n: ``M_c 1 = (1 + c) 1`` (the step ``(c/n) n = c`` with a symbolic n)
  and ``M_c u = u`` for ``u`` orthogonal to 1, so det = 1 + c; and the matrix
  determinant lemma ``det(I + u v^T) = 1 + v^T u`` with symbolic u, v (k <= 4).
* Hypothesis, exact: ``rank E^(t) = n`` for every t; a dependent context is
  refuted with its exact null vector.
* Conclusion, exact: ``rank X'_c = n`` for every t; when it drops, the exact
  left null vector (for c = -1: all ones) is produced and ``X'^T v = 0`` is
  re-checked over Q.
* Consistency: the rank drops on the instance iff ``1 + c = 0``, as the
  symbolic determinant predicts (a mismatch would be an engine bug: it raises).

Not established
---------------
Nothing numerical is involved.  The instance checks only its own contexts; the
symbolic identity is what covers every X.

References
----------
arXiv:2306.02010v3, App. D (Lemma 2) and App. G (its use in Prop. 4).

>>> from verifier.data.instances import make_instance
>>> check_lemma2(make_instance(H=1, n=3, d=5, seed=1)).verdict
'verified'
"""
from __future__ import annotations

import time

from flint import fmpq, fmpq_mat

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero, exact_nullspace, exact_rank, to_fmpq, to_fmpq_mat
from verifier.arith.structure import SymbolicIdentity
from verifier.data.instances import make_instance
from verifier.errors import InvalidInstance
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

SYMBOLIC_SIZES = range(1, 7)


def prove_mean_shift_determinant(sizes=SYMBOLIC_SIZES) -> list[SymbolicIdentity]:
    """sympy proofs of ``det(I_n + (c/n) 1 1^T) = 1 + c``: per size, for a
    general n by the eigen-decomposition, and the determinant lemma."""
    import sympy as sp
    from sympy.polys.matrices import DomainMatrix

    c = sp.Symbol("c")
    out = []
    t0 = time.perf_counter()
    res = []
    for k in sizes:  # exact determinant over QQ[c]
        M = DomainMatrix.from_Matrix(sp.eye(k) + (c / k) * sp.ones(k, k))
        res.append(sp.expand(M.domain.to_sympy(M.det()) - (1 + c)))
    out.append(SymbolicIdentity("det(I_n + (c/n) 1 1^T) = 1 + c", {"n": list(sizes)},
                                tuple(str(r) for r in res), all(r == 0 for r in res), len(res),
                                time.perf_counter() - t0, "sympy DomainMatrix.det over QQ[c]"))
    t0 = time.perf_counter()
    n = sp.Symbol("n", positive=True, integer=True)
    on_ones = sp.simplify(1 + (c / n) * n - (1 + c))  # M_c 1 = 1 + (c/n) (1^T 1) 1, 1^T 1 = n
    on_perp = sp.simplify(1 + (c / n) * 0 - 1)  # M_c u = u + (c/n) (1^T u) 1, 1^T u = 0
    out.append(SymbolicIdentity("general n: M_c 1 = (1+c) 1, M_c u = u (u . 1 = 0) => det = 1 + c",
                                {"n": "symbolic"}, (str(on_ones), str(on_perp)),
                                on_ones == 0 and on_perp == 0, 2, time.perf_counter() - t0))
    t0 = time.perf_counter()
    res = []
    for k in range(1, 5):
        u = sp.Matrix(sp.symbols(f"u0:{k}"))
        v = sp.Matrix(sp.symbols(f"v0:{k}"))
        res.append(sp.expand((sp.eye(k) + u * v.T).det(method="berkowitz") - (1 + (v.T * u)[0])))
    out.append(SymbolicIdentity("matrix determinant lemma det(I + u v^T) = 1 + v^T u", {"k": [1, 2, 3, 4]},
                                tuple(str(r) for r in res), all(r == 0 for r in res), len(res),
                                time.perf_counter() - t0))
    return out


def build_shifted_tokens(E, c) -> fmpq_mat:
    """``X'_c = X + c 1 xbar^T`` exactly (X = the rows of E)."""
    X = to_fmpq_mat(E)
    n, d = X.nrows(), X.ncols()
    c = to_fmpq(c)
    mean = [sum((X[i, j] for i in range(n)), fmpq(0)) / n for j in range(d)]
    return fmpq_mat(n, d, [X[i, j] + c * mean[j] for i in range(n) for j in range(d)])


def _left_null_vector(M: fmpq_mat) -> list:
    """An exact v with v^T M = 0, re-checked."""
    v = exact_nullspace(M.transpose())[0]
    if not exact_matvec_is_zero(M.transpose(), v):  # pragma: no cover - engine guard
        raise RuntimeError("exact null vector failed its re-check")
    return v


#: the shifted tokens of a context dependent although its tokens are independent and 1 + c != 0
SHIFT_DROP = Refutation("counterexample", "a context whose shifted tokens x_i + c xbar have an exact null "
                        "combination over Q")
#: c = -1 (1 + c = 0, which the lemma excludes): the shifted tokens sum to 0
C_MINUS_ONE = Refutation("counterexample", "1 + c = 0: the shifted tokens sum to 0 (exact null combination)",
                         variant="c with 1 + c = 0 (the lemma's 'iff')")


@statement("lemma2", reads_given=True, conclusion_over="any", refutes=(SHIFT_DROP, C_MINUS_ONE),
           requires=("Assumption 2",), H=1, n=3, d=5, T=4)
def check_lemma2(instance, *, prec: int = 128, seed: int = 0, c=1, **options) -> Evidence:
    """Lemma 2 on every context of ``instance`` with shift ``c`` (default 1)."""
    try:
        cq = to_fmpq(c)
    except InvalidInstance:
        raise InvalidInstance(f"shift c = {c!r} is not a rational number") from None
    symbolic = prove_mean_shift_determinant()
    det_value = 1 + cq
    n = instance.n
    dependent_before, dropped, ranks_after = [], [], []
    contexts = instance.exact_array("contexts")  # the values given (exact rationals where float64 rounds them)
    for t in range(instance.T):
        E = contexts[t]
        if exact_rank(E) < n:
            dependent_before.append({"t": t, "coefficients": [str(x) for x in _left_null_vector(to_fmpq_mat(E))]})
        Xc = build_shifted_tokens(E, cq)
        rk = exact_rank(Xc)
        ranks_after.append(rk)
        if rk < n and len(dropped) < 3:
            dropped.append({"t": t, "rank": rk, "coefficients": [str(x) for x in _left_null_vector(Xc)]})
    hyp = Hypothesis("x_1..x_n independent (rank E^(t) = n for every t)",
                     "refuted" if dependent_before else "certified",
                     f"exact rank over Q; dependent contexts: {[w['t'] for w in dependent_before][:5]}"
                     if dependent_before else f"exact rank n = {n} for all {instance.T} contexts")
    all_full = all(rk == n for rk in ranks_after)
    if not dependent_before and all_full == (det_value == 0):  # pragma: no cover - engine guard
        raise RuntimeError("instance ranks contradict det(I + (c/n) 1 1^T) = 1 + c")
    proved = all(s.holds for s in symbolic)
    decision = Decision.TRUE if all_full and proved else Decision.FALSE if not all_full else Decision.UNDECIDED
    certs = [s.to_dict() for s in symbolic]
    certs.append({"kind": "exact ranks of X'_c = X + c 1 xbar^T", "c": str(cq), "ranks": ranks_after,
                  "method": "flint fmpz_mat.rank after clearing denominators"})
    for w in dropped:
        certs.append({"kind": "exact dependence of the shifted tokens", "t": w["t"],
                      "coefficients v (v^T X'_c = 0, checked over Q)": w["coefficients"]})
    for w in dependent_before[:3]:
        certs.append({"kind": "exact dependence of the input tokens (hypothesis refuted)", **w})
    trail = [
        Step("det(I_n + (c/n) 1 1^T) = 1 + c proved symbolically (n = 1..6, general n, determinant lemma)",
             uses="Lemma 2, matrix determinant lemma", data={"1 + c": str(det_value)}),
        Step("input tokens: exact rank of every context", uses="Lemma 2 hypothesis",
             data={"dependent contexts": len(dependent_before)}),
        Step("shifted tokens X + c 1 xbar^T: exact rank of every context", uses="Lemma 2 conclusion",
             data={"min rank": min(ranks_after), "n": n, "contexts with a drop": sum(r < n for r in ranks_after)}),
    ]
    return conclude(
        "lemma2", decision,
        claimed=f"x_i + c xbar independent for c = {cq} (holds iff 1 + c != 0)",
        measured={"c": str(cq), "det(I + (c/n) 1 1^T)": str(det_value), "n": n,
                  "min rank after": min(ranks_after), "contexts": instance.T,
                  "symbolic proofs hold": proved},
        hypotheses=[hyp], certified=True, method="exact rationals (flint fmpq) + sympy",
        certificates=certs, trail=trail,
        reason="" if decision is not Decision.FALSE or dependent_before else
        f"c = {cq}: 1 + c = 0, the shifted tokens sum to 0 (exact dependence found)",
        refutation=C_MINUS_ONE if det_value == 0 else SHIFT_DROP,
    )


@negative_control("lemma2", "c = -1: x_i - xbar sum to zero, the shifted tokens are dependent",
                  expect=("refuted",))
def control_lemma2_minus_one(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_lemma2(make_instance(H=1, n=3, d=5, T=4, seed=seed), prec=prec, seed=seed, c=-1)
