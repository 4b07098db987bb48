"""Proposition 2: when the linear sequence encoder L(N, S, d) fits every prior.

Statement
---------
(a) If d >= N - 1, d_KL(pi, L(N,S,d)) = 0 for every pi.
(b) If d < N - 1, some pi has d_KL(pi, L(N,S,d)) > 0.
(Definition 1: L = {f_{W,E}(t) = W E(t)}, W in R^{N x d}; no proof is given.)

Construction
------------
(a) (reconstructed) W = [e_j - e_N]_{j<N} spans 1^perp; E(t) = the coordinates
    of P log pi_t on the support and -lambda off it (P = I - 11^T/N):
    softmax(P log pi_t) = pi_t exactly when pi_t > 0, and otherwise
    KL = log(1 + m_t e^{-lambda}) (m_t zeros of pi_t) -> 0.
(b) d = 1, N >= 3: a table with targets 1, 2, 3 (the ordering argument of
    :func:`.kl_lower_bounds.ordering_floor`: d_KL >= ln 2 / 3).  d >= 2:
    pi_t = (a on t, b elsewhere), t = 1..N, dyadic a > b: the centered log
    targets are log(a/b) P (rank N - 1); the linear floor of
    :func:`.kl_lower_bounds.subspace_floor` (Pinsker, Eckart-Young) gives a
    certified kappa0 > 0.

Checks
------
(a) sympy: softmax(P log p) = p for symbolic positive p (N = 2..4), and
    lim log(1 + m e^{-lambda}) = 0; the instance's d_KL(pi, f) enclosed in
    balls (radius only: consistency).  (b) the witness's floor, certified.

Not established
---------------
(b) is existential: the witness is ours, not the instance's pi.

References
----------
arXiv:2411.10115, Prop. 2 p. 3, Definition 1 pp. 2-3; DANA2025.md.

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_prop2(make_sequence_instance(N=3, S=2, d=2, H=1, conditionals="positive", seed=0)).verdict
'verified'
"""
from __future__ import annotations

import functools
import time

import numpy as np
from flint import arb

from verifier.arith.compare import Decision, certainly_less_equal, lower, upper, workprec
from verifier.arith.structure import SymbolicIdentity
from verifier.data.sequences import from_sequences, make_sequence_instance
from verifier.model.aot_balls import kl_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .kl_lower_bounds import ordering_floor, subspace_floor

__all__ = ["check_dana_prop2", "prove_softmax_of_centered_log", "witness_positive_floor"]


@functools.lru_cache(maxsize=None)
def prove_softmax_of_centered_log(sizes=(2, 3, 4)) -> SymbolicIdentity:
    """sympy: softmax(log p - mean(log p)) = p for positive p summing to 1, and
    log(1 + m e^{-lambda}) -> 0."""
    import sympy as sp

    t0 = time.perf_counter()
    res = []
    for N in sizes:
        p = sp.symbols(f"p0:{N}", positive=True)
        last = 1 - sum(p[:-1])
        ps = list(p[:-1]) + [last]
        logs = [sp.log(x) for x in ps]
        mean = sum(logs) / N
        z = [sp.exp(lg - mean) for lg in logs]
        res += [sp.simplify(zi / sum(z) - pi) for zi, pi in zip(z, ps)]
    lam, m = sp.symbols("lambda m", positive=True)
    res.append(sp.limit(sp.log(1 + m * sp.exp(-lam)), lam, sp.oo))
    return SymbolicIdentity("softmax(P log p) = p (p > 0); lim_{lambda->oo} log(1 + m e^-lambda) = 0",
                            {"N": list(sizes)}, tuple(str(r) for r in res), all(r == 0 for r in res), len(res),
                            time.perf_counter() - t0)


def part_a_dkl(inst, lam: float = 40.0, *, prec: int = 128) -> arb:
    """d_KL(pi, f) for the construction (a), in balls: f(t)_j = log pi_t,j or -lambda."""
    with workprec(prec):
        acc, total = arb(0), arb(0)
        # the claim is for EVERY pi (sympy: softmax(P log p) = p); the balls check one genuine pi of the data:
        # the stored values, rows normalized exactly (read at precision, the box's independent entries would
        # blur a KL of exactly 0)
        exact = inst.exact_reading()
        P, W = exact.conditional_balls(), exact.prior_balls()
        Q = exact.cond_numbers.rationals
        for t in range(inst.T0):
            logits = [P[t, j].log() if x > 0 else arb(-lam) for j, x in enumerate(Q[t].tolist())]
            w = W[t]
            acc += w * kl_ball(list(P[t]), logits)
            total += w
        return acc / total


@construction("dana_prop2.witness")
def witness_positive_floor(N: int, d: int, *, prec: int = 128) -> tuple[object, dict]:
    """(b) for d >= 2: N sequences (t, t), pi_t = a on t, b = 2^-m elsewhere; its linear floor."""
    m = int(np.ceil(np.log2(N))) + 1
    b = 2.0 ** -m
    P = np.full((N, N), b)
    np.fill_diagonal(P, 1 - (N - 1) * b)
    inst = from_sequences(np.column_stack([np.arange(N), np.arange(N)]), N=N, conditionals=P, d=d, H=0,
                          kind="Prop. 2(b) witness")
    return inst, subspace_floor(inst.weights, P, [list(range(N))], d, affine=False, prec=prec)


def _part_b(N: int, d: int, prec: int) -> tuple[Decision, dict]:
    if d == 1:
        fl = ordering_floor([0, 1, 2], [1, 1, 1])
        ok = fl["holds"] and fl["floor"] > 0
        return (Decision.TRUE if ok else Decision.UNDECIDED,
                {"witness": "table with targets 1, 2, 3 (uniform)", "d_KL(pi, L) >=": lower(fl["floor"]),
                 "certificate": {k: str(v) for k, v in fl.items()}})
    inst, fl = witness_positive_floor(N, d, prec=prec)
    return (fl["decision"], {"witness": "pi_t = (a on t, b elsewhere), t = 1..N", "d_KL(pi, L) >=": fl.get("kappa0"),
                             "certificate": fl})


#: (a) at d < N - 1: the witness pi of (b) has a certified positive floor
PART_A_WITNESS = Refutation("counterexample", "a distribution pi (the witness of (b)) with d_KL(pi, L) >= a certified "
                            "positive floor (exact ordering, or Pinsker + Eckart-Young in balls)")
#: the same with the hypothesis d >= N - 1 dropped by the caller
PART_A_DROPPED = Refutation("counterexample", "a distribution pi with d_KL(pi, L) >= a certified positive floor at "
                            "d < N - 1", variant="drop_hypothesis: (a) without d >= N - 1")


@statement("dana_prop2", refutes=(PART_A_WITNESS, PART_A_DROPPED), N=3, S=2, d=2, H=1, conditionals="positive")
def check_dana_prop2(instance, *, prec: int = 128, seed: int = 0, part: str | None = None,
                     drop_hypothesis: bool = False, **options) -> Evidence:
    inst = instance
    N, d = inst.N, inst.d
    part = part or ("a" if d >= N - 1 else "b")
    if part == "a":
        claimed = "(a) d_KL(pi, L) = 0 for every pi"
        hyps = [] if drop_hypothesis else [Hypothesis("d >= N - 1", "certified" if d >= N - 1 else "refuted",
                                                      f"d = {d}, N = {N}")]
        if d < N - 1:  # the claim fails for the witness of (b)
            decision, data = _part_b(N, d, prec)
            decision = Decision.FALSE if decision is Decision.TRUE else Decision.UNDECIDED
            return conclude("dana_prop2", decision, claimed=claimed, measured=data, hypotheses=hyps,
                            certified=decision is Decision.FALSE, method="exact / arb balls", prec_bits=prec,
                            refutation=PART_A_DROPPED if drop_hypothesis else PART_A_WITNESS,
                            certificates=[data["certificate"]], reason=f"d = {d} < N - 1: the witness pi has "
                            f"d_KL(pi, L) >= {data['d_KL(pi, L) >=']:.3g} > 0",
                            trail=[Step("witness of (b)", "Prop. 2(b)", {k: v for k, v in data.items()
                                                                         if k != "certificate"})])
        proof = prove_softmax_of_centered_log()
        value = part_a_dkl(inst, prec=prec)
        bound = np.log1p((N - 1) * np.exp(-40.0)) * 1.01
        consistent = certainly_less_equal(value, arb(bound))
        holds = Decision.TRUE if proof.holds and consistent is Decision.TRUE else Decision.UNDECIDED
        return conclude("dana_prop2", holds, claimed=claimed,
                        measured={"d_KL(pi, f) at lambda = 40 (ball upper bound)": upper(value),
                                  "zeros in the conditionals": int(sum(x == 0 for x in
                                                                       inst.cond_numbers.rationals.reshape(-1)))},
                        hypotheses=hyps, certified=holds is Decision.TRUE, method="sympy + arb balls",
                        prec_bits=prec, certificates=[proof.to_dict()],
                        trail=[Step("W = [e_j - e_N] spans 1^perp; E(t) = coordinates of P log pi_t (-lambda off "
                                    "the support)", "Prop. 2(a), reconstructed", {"d": d, "N - 1": N - 1}),
                               Step("softmax(P log p) = p symbolically; the instance's d_KL in balls", "sympy, arb",
                                    {"d_KL upper": upper(value)})])
    hyps = [Hypothesis("d < N - 1", "certified" if d < N - 1 else "refuted", f"d = {d}, N = {N}")]
    witness, data = _part_b(N, d, prec)  # a witness pi certified (TRUE) or not: never a proof that none exists
    found = Decision.TRUE if witness is Decision.TRUE else Decision.UNDECIDED
    return conclude("dana_prop2", found, claimed="(b) some pi has d_KL(pi, L) > 0", measured=data, hypotheses=hyps,
                    certified=found is Decision.TRUE, method="exact ordering / arb (Pinsker + Eckart-Young)",
                    prec_bits=prec, certificates=[data["certificate"]],
                    trail=[Step("The witness and its certified floor", "Prop. 2(b)",
                                {k: v for k, v in data.items() if k != "certificate"})])


@negative_control("dana_prop2", "(a) without d >= N - 1 (N = 5, d = 2): the witness pi_t = (a on t, b elsewhere) "
                  "has d_KL(pi, L) >= kappa0 > 0", expect=("refuted",))
def control_part_a_small_d(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_sequence_instance(N=5, S=2, d=2, H=1, conditionals="positive", seed=seed)
    return check_dana_prop2(inst, prec=prec, seed=seed, part="a", drop_hypothesis=True)
