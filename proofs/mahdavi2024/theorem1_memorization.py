"""Theorem 1: one multi-head attention layer memorizes H(r-1)+1 labels.

Statement
---------
If d_v >= d_out >= 1 (and d_out <= d), d_h >= 1, n < d, Assumptions 1 and 2
hold and T <= H(r-1)+1 with r = min(n, d_h), then for EVERY label set
{y^(t)} there are parameters W_Q^h, W_K^h (d x d_h), W_V^h (d x d_v), W_O,
W_D with yhat^(t) = y^(t) for all t (Eqs. 1-6), exactly.

Construction
------------
Proposition 1's key/query weights (App. B; :mod:`proofs.mahdavi2024.proposition1_construction`)
make rank(Z) = T; Step 2 solves the readout M = Z^+ Y and assembles W_V, W_O,
W_D (:mod:`proofs.mahdavi2024.step2_linear_readout`).

Checks
------
1. Hypotheses on the instance (sizes, T <= H(r-1)+1, Assumptions 1-2).
2. rank(Z) = T certified (Arb minor), from the factored float64 weights.
   By linear algebra this alone proves that an exact readout exists.
3. T <= 60: the exact readout M = Z^T (Z Z^T)^{-1} Y enclosed in balls and the
   forward pass Eq. (8) run with it: |yhat - y| enclosed below 1e-20.
   Larger T: the float64 readout's residual is reported (numerical).
4. The float64 weights as saved (--save-weights) are run through the forward
   pass (Eqs. 1-6, numpy) and their residual reported: what a reader's own
   code will see.

Not established
---------------
Random instances only exercise the construction; "every label set" is
covered because the readout is linear in Y once rank(Z) = T is certified.

References
----------
arXiv:2306.02010v3, Thm. 1, Sec. 4.1, App. B.

>>> from verifier.data.instances import make_instance
>>> ev = check_theorem1(make_instance(H=3, n=3, d=5, seed=0))
>>> ev.verdict, ev.certified
('verified', True)
"""
from __future__ import annotations

import numpy as np

from verifier.arith.compare import Decision
from verifier.arith.rank import certify_rank_lower_bound
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed
from verifier.model.mha import Weights, forward
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.registry import construction, negative_control, statement

from .proposition1_rank_induction import (
    build_key_query_weights,
    certify_construction_rank,
    construction_trail,
    theorem_hypotheses,
)
from .step2_linear_readout import TOLERANCE, build_readout, exact_readout_residual, solve_readout_float

CERTIFIED_T = 60  # up to this T the exact readout is enclosed in balls


def size_hypotheses(instance) -> list[Hypothesis]:
    def h(name, ok, detail):
        return Hypothesis(name, "certified" if ok else "refuted", detail)

    cap = instance.capacity
    return [h("d_v >= d_out >= 1", instance.d_v >= instance.d_out >= 1, f"d_v = {instance.d_v}, d_out = {instance.d_out}"),
            h("d_out <= d", instance.d_out <= instance.d, f"d_out = {instance.d_out}, d = {instance.d}"),
            h("T <= H(r-1)+1", instance.T <= cap, f"T = {instance.T}, H(r-1)+1 = {cap}")]


def write_weights(path, instance, weights: Weights, labels, *, skip: bool) -> None:
    """The constructed parameters exactly as certified, with the dataset."""
    np.savez(path, contexts=np.array(instance.contexts), queries=np.array(instance.queries),
             labels=np.array(labels), skip_connection=np.array(skip), **weights.as_arrays())


@construction("theorem1.memorize")
def memorize(instance, *, prec: int, seed: int, skip: bool = False, shift_labels: bool = True,
             force_r: int | None = None,
             save: str | None = None, statement_id: str = "theorem1") -> Evidence:
    """The whole proof: Prop. 1, Step 2, forward pass (with or without skip)."""
    hyps = size_hypotheses(instance) + theorem_hypotheses(instance, prec=prec, seed=seed)
    Y = np.asarray(instance.labels)
    shift = skip and shift_labels
    Y_target = Y - (np.asarray(instance.queries)[:, :instance.d_out] if shift else 0.0)  # App. C's shift
    claimed = "yhat = y for every example" + (" (skip connection)" if skip else "")
    try:
        con = build_key_query_weights(instance, seed=seed, r=force_r)
    except ConstructionFailed as exc:
        trail = [Step(f"Construction failed at {exc.step}", exc.step, {"message": str(exc)})]
        decision, certs = Decision.UNDECIDED, []
        if exc.step == "factorisation" and force_r is not None:
            # the variant "rank-r heads fit in d_h < r" is false: certify rank W^h > d_h
            con = build_key_query_weights(instance, seed=seed, r=force_r, factor=False)
            ranks = [certify_rank_lower_bound(W, k=instance.d_h + 1, prec=prec) for W in con.W]
            if any(rb.decision is Decision.TRUE for rb in ranks):
                decision = Decision.FALSE
                certs = [{"kind": "rank W^h >= d_h + 1 (nonsingular minor)", "head": i + 1, **rb.to_dict()}
                         for i, rb in enumerate(ranks) if rb.decision is Decision.TRUE][:3]
        return conclude(statement_id, decision, claimed=claimed, measured={"construction failed at": exc.step},
                        hypotheses=hyps, certified=decision is Decision.FALSE, method="arb balls",
                        prec_bits=prec, certificates=certs, reason=f"{exc}", trail=trail)
    T = instance.T
    trail = construction_trail(instance, con)
    cert = certify_construction_rank(instance, con, T, prec=prec) if len(con.basis) >= T else None
    rank_ok = cert is not None and cert.decision is Decision.TRUE
    trail.append(Step("rank(Z) = T certified: an exact readout exists", "Prop. 1 + Step 2",
                      {"certified rank": cert.certified_k if cert else 0, "T": T}))
    measured = {"certified_rank": cert.certified_k if cert else 0, "T": T}
    certs = [{"kind": "rank(Z) = T: nonsingular minor", **cert.to_dict()}] if cert else []
    method, tol, margin = "arb balls", None, None
    if rank_ok and T <= CERTIFIED_T:
        mem, worst, rad, M, bits = exact_readout_residual(instance, con.W_K, con.W_Q, skip=skip,
                                                          shift_labels=shift_labels, prec=prec)
        if M is None:
            M = solve_readout_float(con.Z, Y_target)
            trail.append(Step("exact readout not enclosed", "Step 2", {"up to bits": bits}))
        measured.update({"max |yhat - y| with the exact readout (ball)": worst, "ball radius": rad,
                         "readout precision bits": bits})
        certs.append({"kind": "residual ball (exact readout)", "max_abs_residual_upper": worst, "radius": rad,
                      "prec_bits": bits})
        decision, tol, margin = mem, TOLERANCE, TOLERANCE - worst
    else:
        M = solve_readout_float(con.Z, Y_target)
        decision = Decision.TRUE if rank_ok else Decision.UNDECIDED
        if rank_ok:
            method = "arb balls (rank) + float64 (readout residual, reported)"
    W_V, W_O, W_D = build_readout(M, instance.H, instance.d, instance.d_v, instance.d_out)
    weights = Weights(con.W_Q, con.W_K, W_V, W_O, W_D)
    yhat = forward(instance.contexts, instance.queries, weights, skip=skip)
    float_res = float(np.abs(yhat - Y).max())
    measured["max |yhat - y| of the float64 weights"] = float_res
    trail.append(Step("Readout: W_V^h = [M_h, 0], W_O, W_D; forward pass (Eqs. 1-6)"
                      + (" with skip: labels shifted by W_D^T e" if skip else ""),
                      "Step 2" + (", App. C" if skip else ""),
                      {"max |yhat - y| (float64 weights)": float_res}))
    if save:
        write_weights(save, instance, weights, Y, skip=skip)
        trail.append(Step("Weights saved", "--save-weights", {"path": str(save)}))
    return conclude(statement_id, decision, claimed=claimed, measured=measured, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED, method=method, prec_bits=prec, tolerance=tol,
                    margin=margin, certificates=certs, trail=trail)


@statement("theorem1", H=3, n=3, d=5)
def check_theorem1(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                   force_r: int | None = None, **options) -> Evidence:
    return memorize(instance, prec=prec, seed=seed, save=save_weights, force_r=force_r)


@negative_control("theorem1", "d_h < r forced (heads of rank n in d_h = n-1): the factorisation is refused",
                  expect=("refuted",))
def control_dh_too_small(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=2, n=3, d=5, d_h=2, seed=seed)
    return check_theorem1(inst, prec=prec, seed=seed, force_r=3)


@negative_control("theorem1", "repeated queries (Assumption 1 fails): hypotheses unmet, Claim 1 breaks",
                  expect=("hypotheses-unmet",))
def control_repeated_queries(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_theorem1(make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=seed),
                          prec=prec, seed=seed)


@negative_control("theorem1", "shared contexts, T = H(n-1)+2 > capacity: hypotheses unmet",
                  expect=("hypotheses-unmet",))
def control_too_many_examples(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=2, n=3, d=5, T=6, context="shared", seed=seed)
    return check_theorem1(inst, prec=prec, seed=seed)
