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
   forward pass Eq. (8) run with it: |yhat - y| enclosed below 1e-20 max|y|.
   Larger T: the float64 readout's residual is reported (numerical).
4. Whatever the data, rank(Z) <= a structural cap for ANY weights
   (:mod:`verifier.arith.rank_caps`: dimensions, repeated examples, a shared
   context, constant token sums); the rank certificate is asked for T on all
   T rows (even above capacity) and must agree with the cap; identical
   inputs with different labels refute memorization for any weights.
5. The saved weights get their own certificate: the float64 parameters
   exactly as written by --save-weights (W_Q, W_K, W_V, W_O, W_D) run
   through Eqs. 1-6 in Arb balls, giving a certified enclosure of
   max |yhat - y| for THOSE weights (beside the existence certificate of 2-3;
   float64 may be unable to represent the exact weights, e.g. queries of
   size 1e50 with the skip connection).

Not established
---------------
Random instances only exercise the construction; "every label set" is
covered because the readout is linear in Y once rank(Z) = T is certified.

References
----------
arXiv:2306.02010v3, Thm. 1, Sec. 4.1, App. B.

>>> from verifier.data.instances import from_arrays, make_instance
>>> ev = check_theorem1(make_instance(H=3, n=3, d=5, seed=0))
>>> ev.verdict, ev.certified
('verified', True)
"""
from __future__ import annotations

import functools

import numpy as np
from flint import arb

from verifier.arith.balls import ball_max
from verifier.arith.compare import Decision, certainly_less_equal, lower, upper, with_precision_ladder
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.rank_caps import structural_rank_cap
from verifier.arith.second_thread import ONE_BLAS_THREAD_UP_TO, FloatJob, second_core
from verifier.data.duplicates import first_equal_all
from verifier.data.instances import from_arrays, make_instance
from verifier.errors import ConstructionFailed, InsufficientPrecision
from verifier.model.mha import Weights
from verifier.model.mha_balls import forward_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .proposition1_rank_induction import (
    build_key_query_weights,
    certify_construction_rank,
    construction_trail,
    prefetch_theorem_hypotheses,
    rank_cap_hypothesis,
    rank_method,
    theorem_hypotheses,
)
from .step2_linear_readout import (
    TOLERANCE,
    exact_readout_residual,
    float_readout,
    float_readout_beside,
    label_scale,
    readout_and_forward,
    residual_note,
    solve_readout_float,
)

CERTIFIED_T = 60  # up to this T the exact readout (and the float weights' residual) are enclosed in balls
FAR = 1e-6  # saved weights whose certified residual exceeds FAR max|y| are "far from the labels"


def size_hypotheses(instance) -> list[Hypothesis]:
    def h(name, ok, detail):
        return Hypothesis(name, "certified" if ok else "refuted", detail)

    cap = instance.capacity
    return [h("d_v >= d_out >= 1", instance.d_v >= instance.d_out >= 1, f"d_v = {instance.d_v}, d_out = {instance.d_out}"
              + ("" if instance.d_v >= instance.d_out else f"; --dv {instance.d_out} or more would meet it")),
            h("d_out <= d", instance.d_out <= instance.d, f"d_out = {instance.d_out}, d = {instance.d}"),
            h("T <= H(r-1)+1", instance.T <= cap, f"T = {instance.T}, H(r-1)+1 = {cap}"
              + ("" if instance.T <= cap else "; " + capacity_remedy(instance)))]


def capacity_remedy(instance) -> str:
    """What would meet T <= H(r-1)+1 with the data as they are: the H used and the smallest H that would
    (the heads are the layer's, not the data's), or what caps r.

    >>> from verifier.data.instances import make_instance
    >>> capacity_remedy(make_instance(H=3, n=3, d=5, T=20))
    'H = 3 was used (r = min(n, d_h) = 3): --H 10 or more would meet it'
    """
    r, T = instance.r, instance.T
    if r <= 1:
        return (f"r = min(n, d_h) = {r} caps H(r-1)+1 at 1 for every H: a larger d_h (--dh {instance.n}) or more "
                "tokens per context would")
    need = -(-(T - 1) // (r - 1))
    return f"H = {instance.H} was used (r = min(n, d_h) = {r}): --H {need} or more would meet it"


def write_weights(path, instance, weights: Weights, labels, *, skip: bool) -> None:
    """The constructed float64 parameters (their residual is certified separately:
    :func:`saved_weights_certificate`), with the dataset."""
    np.savez(path, contexts=np.array(instance.contexts), queries=np.array(instance.queries),
             labels=np.array(labels), skip_connection=np.array(skip), **weights.as_arrays())


def saved_weights_certificate(instance, weights: Weights, *, skip: bool, prec: int,
                              max_prec: int = 1024) -> dict:
    """Eqs. 1-6 of the float64 ``weights`` (exact dyadic rationals) in balls:
    a certified enclosure [lower, upper] of max_t,j |yhat - y|, tightened by
    doubling the precision while the enclosure is wider than 1% of its top."""
    Y = np.asarray(instance.labels, dtype=np.float64)
    scale = label_scale(Y)

    def attempt(bits):
        Yhat = forward_ball(instance.contexts, instance.queries, weights, skip=skip)
        worst = ball_max(abs(Yhat[i, j] - arb(float(Y[i, j]))) for i in range(Y.shape[0]) for j in range(Y.shape[1]))
        tight = certainly_less_equal(arb(worst.rad()) * 100, worst.abs_upper())
        return (Decision.TRUE if tight is Decision.TRUE else Decision.UNDECIDED), worst  # wide: climb

    dec, worst, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, max_prec))
    lo, hi = lower(worst), upper(worst)
    rel = hi / scale if scale > 0 else hi
    return {"kind": "saved float64 weights: Eqs. 1-6 in Arb balls, max |yhat - y| enclosed",
            "max |yhat - y| >=": max(lo, 0.0), "max |yhat - y| <=": hi, "relative to max|y| <=": rel,
            "max|y|": scale, "prec_bits": bits, "skip": skip,
            "far from the labels": bool(max(lo, 0.0) > FAR * scale)}


#: identical inputs with different labels: every weights give them the same output
IDENTICAL_INPUTS = Refutation("no-choice-works", "two examples with identical context and query and different "
                              "labels (exact comparison of the values given): yhat(t) = yhat(t') for ANY weights")
#: heads of rank r > d_h forced (a variant): rank W^h >= d_h + 1 certified, no factorisation W_K W_Q^T exists
FORCED_R = Refutation("counterexample", "rank W^h >= d_h + 1 certified by a nonsingular minor: no W_K, W_Q in "
                      "R^{d x d_h} factor it", variant="force_r > d_h: heads of rank r forced into d_h")
#: App. C without the label shift (a variant): the forward pass with the skip misses y by W_D^T e
UNSHIFTED = Refutation("counterexample", "the exact readout fitted to y (not y - W_D^T e) and run with the skip "
                       "connection: |yhat - y| certainly above 1e-20 max|y| (arb balls)",
                       variant="shift_labels=False: the readout pinned to the unshifted labels")


def memorization_decision(rank: Decision, clash) -> Decision:
    """yhat = y for every example: rank(Z) = T certified makes an exact
    readout exist (by linear algebra: Step 2), whatever the residual of its
    enclosure shows; identical inputs with different labels make
    memorization impossible for ANY weights."""
    if rank is Decision.TRUE:
        return Decision.TRUE
    if clash is not None:
        return Decision.FALSE
    return Decision.UNDECIDED


def conflicting_duplicates(instance) -> tuple[int, int] | None:
    """Two examples with identical context and query but different labels
    (exact comparison of the values given, ``Instance.exact_array``): no
    weights can memorize both.  For floats read at their precision the
    inputs are identical as stored (:func:`duplicates_reading`)."""
    E, e, Y = (np.asarray(instance.exact_array(a)) for a in ("contexts", "queries", "labels"))
    first = first_equal_all(E, e)  # a shared context is read once, never as T copies
    for t in np.flatnonzero(first != np.arange(instance.T)).tolist():
        if not np.array_equal(Y[first[t]], Y[t]):
            return int(first[t]), t
    return None


def duplicates_reading(instance) -> str:
    """What identical inputs mean under the instance's reading: exact, or
    identical as stored only ("holds at the data's precision")."""
    if instance.precision.exact_for("contexts", "queries"):
        return "identical values given (exact)"
    return (f"identical as stored ({instance.precision.describe('contexts', 'queries')}): a counterexample at the "
            "stored values, a point of the data's intervals; other values they stand for may differ")


def memorize(instance, *, prec: int, seed: int, skip: bool = False, shift_labels: bool = True,
             force_r: int | None = None, save: str | None = None, statement_id: str = "theorem1",
             assumption_samples: int | None = None, exhaustive_limit: int | None = None) -> Evidence:
    """The whole proof: Prop. 1, Step 2, forward pass (with or without skip).
    ``assumption_samples``: Assumption 1's random-subset evidence size."""
    a1 = dict(seed=seed, samples=assumption_samples, exhaustive_limit=exhaustive_limit)
    prefetched = prefetch_theorem_hypotheses(instance, **a1)  # Assumption 1's sample screened on a second core

    @functools.cache  # once: first, or after the certificate when the sample is prefetched (they overlap it)
    def hypotheses():
        return size_hypotheses(instance) + theorem_hypotheses(instance, prec=prec, **a1)

    if not prefetched:
        hypotheses()
    Y = np.asarray(instance.labels)
    shift = skip and shift_labels
    Y_target = Y - (np.asarray(instance.queries)[:, :instance.d_out] if shift else 0.0)  # App. C's shift
    claimed = "yhat = y for every example" + (" (skip connection)" if skip else "")
    cap = structural_rank_cap(instance.contexts, instance.queries, instance.H)
    clash = conflicting_duplicates(instance)
    clash_cert = [{"kind": "identical inputs, different labels: yhat(t) = yhat(t') for ANY weights",
                   "examples": list(clash), "reading": duplicates_reading(instance)}, cap.to_dict()] if clash else []
    capped = rank_cap_hypothesis(instance, cap, "T <= the structural cap of rank(Z) (implied by Assumptions 1-2 "
                                                "and T <= H(r-1)+1)")
    if capped is not None:  # the caps first: no weights reach rank(Z) = T, the construction is not attempted
        hyps = hypotheses() + [capped]
        decision = Decision.FALSE if clash is not None else Decision.UNDECIDED
        return conclude(statement_id, decision, claimed=claimed, hypotheses=hyps, certified=clash is not None,
                        measured={"T": instance.T, "structural cap rank(Z) <=": cap.cap},
                        method="exact comparisons of the data (structural cap)", certificates=clash_cert or
                        [cap.to_dict()], reason="no weights reach rank(Z) = T: the construction is not attempted",
                        refutation=IDENTICAL_INPUTS,
                        trail=[Step(f"rank(Z) <= {cap.cap} < T for any weights: the construction is not attempted",
                                    "structural caps (Prop. 2, Prop. 5, dimensions, repeated examples)",
                                    {"cap": cap.cap, "why": cap.why})])
    try:
        con = build_key_query_weights(instance, seed=seed, r=force_r)
    except ConstructionFailed as exc:
        hyps = hypotheses()
        trail = [Step(f"Construction failed at {exc.step}", exc.step, {"message": str(exc)})]
        decision, certs, refutation = Decision.UNDECIDED, [], None
        if clash is not None:
            decision, certs, refutation = Decision.FALSE, clash_cert, IDENTICAL_INPUTS
        elif exc.step == "factorisation" and force_r is not None:
            # the variant "rank-r heads fit in d_h < r" is false: certify rank W^h > d_h
            con = build_key_query_weights(instance, seed=seed, r=force_r, factor=False)
            ranks = [certify_rank_lower_bound(W, k=instance.d_h + 1, prec=prec) for W in con.W]
            if any(rb.decision is Decision.TRUE for rb in ranks):
                decision, refutation = Decision.FALSE, FORCED_R
                certs = [{"kind": "rank W^h >= d_h + 1 (nonsingular minor)", "head": i + 1, **rb.to_dict()}
                         for i, rb in enumerate(ranks) if rb.decision is Decision.TRUE][:3]
        return conclude(statement_id, decision, claimed=claimed, measured={"construction failed at": exc.step},
                        hypotheses=hyps, certified=decision is Decision.FALSE, method="arb balls",
                        prec_bits=prec, certificates=certs, reason=f"{exc}", trail=trail, refutation=refutation)
    except Exception:  # the hypotheses' own errors (bad data) first, as when they ran before the construction
        hypotheses()
        raise
    T = instance.T
    trail = construction_trail(instance, con)
    # above CERTIFIED_T the readout is the float one whatever the certificate says: on a second core meanwhile,
    # unless Z is large (its temporaries, |Z| among them, would add to the certificate's peak memory)
    readout = float_readout_beside(instance, con, Y_target, skip, thread=second_core() and
                                   con.Z.size <= ONE_BLAS_THREAD_UP_TO) if T > CERTIFIED_T else None
    try:
        cert = certify_construction_rank(instance, con, T, prec=prec, cap=cap)  # all T rows, even above capacity
    except InsufficientPrecision as exc:  # the hypotheses stay in the evidence
        if readout is not None:
            readout.wait()
        trail.append(Step(f"rank(Z) = T not decided: {exc}", "Prop. 1 + Step 2"))
        return conclude(statement_id, Decision.UNDECIDED, claimed=claimed,
                        hypotheses=hypotheses(), prec_bits=prec,
                        measured={"T": T, "structural cap rank(Z) <=": cap.cap}, method="arb balls",
                        reason=f"rank(Z) = T not decided at --prec {prec} ({exc}): raise --prec", trail=trail)
    except Exception:  # the hypotheses' own errors first, as when they ran before
        if readout is not None:
            readout.wait()
        hypotheses()
        raise
    hyps = hypotheses()  # after the certificate: the prefetched sample is done by now
    rank_ok = cert.decision is Decision.TRUE
    trail.append(Step("rank(Z) = T certified: an exact readout exists" if rank_ok else
                      f"rank(Z) = T not certified (structural cap {cap.cap}: {cap.why})", "Prop. 1 + Step 2",
                      {"certified rank": cert.certified_k, "T": T, "structural cap": cap.cap}))
    measured = {"certified_rank": cert.certified_k, "T": T, "structural cap rank(Z) <=": cap.cap}
    certs = [{"kind": "rank(Z) = T: nonsingular minor", **cert.to_dict()}, cap.to_dict()]
    method = f"rank(Z) = T: {rank_method(cert)}"
    tol, notes, refutation = None, [], IDENTICAL_INPUTS
    margin = 1.0 - cert.residual_norm_upper if rank_ok and np.isfinite(cert.residual_norm_upper) else None
    decision = memorization_decision(cert.decision, clash)
    if clash is not None:
        certs += clash_cert[:1]
    if rank_ok and T <= CERTIFIED_T:
        mem, worst, rad, M, bits = exact_readout_residual(instance, con.W_K, con.W_Q, skip=skip,
                                                          shift_labels=shift_labels, prec=prec)
        if M is None:
            M = solve_readout_float(con.Z, Y_target)
            trail.append(Step("exact readout not enclosed", "Step 2", {"up to bits": bits}))
        measured.update({"max |yhat - y| with the exact readout (ball)": worst, "ball radius": rad,
                         "readout precision bits": bits})
        certs.append({"kind": "residual ball (exact readout), reported beside the rank certificate",
                      "max_abs_residual_upper": worst, "radius": rad, "prec_bits": bits,
                      "certainly <= 1e-20 max|y|": mem.value})
        tol = TOLERANCE * label_scale(Y)
        method += "; readout residual: arb balls (reported)"
        if skip and not shift_labels:  # the readout pinned to labels it does not fit (App. C's variant)
            decision, margin, refutation = mem, tol - worst, UNSHIFTED
        else:
            notes.append(residual_note(mem, worst, tol, bits))
    else:
        readout = readout or FloatJob(float_readout, instance, con, Y_target, skip, thread=False)
        if rank_ok:
            method += "; readout residual: float64 (reported)"
    M, built = readout.result() if readout is not None else (M, readout_and_forward(instance, con, M, skip))
    if isinstance(built, ConstructionFailed):  # d_v < d_out or d_out > d: a size hypothesis fails
        trail.append(Step(f"Readout not assembled: {built}", "Step 2", {}))
        return conclude(statement_id, Decision.UNDECIDED, claimed=claimed, measured=measured, hypotheses=hyps,
                        method=method, prec_bits=cert.prec_bits, certificates=certs, reason=str(built), trail=trail)
    weights, yhat = built
    float_res = float(np.abs(yhat - Y).max())
    measured["max |yhat - y| of the float64 weights (numpy)"] = float_res
    trail.append(Step("Readout: W_V^h = [M_h, 0], W_O, W_D; forward pass (Eqs. 1-6)"
                      + (" with skip: labels shifted by W_D^T e" if skip else ""),
                      "Step 2" + (", App. C" if skip else ""),
                      {"max |yhat - y| (float64 weights, numpy)": float_res}))
    if save or T <= CERTIFIED_T:
        saved = saved_weights_certificate(instance, weights, skip=skip, prec=prec)
        certs.append(saved)
        measured["saved float64 weights: max |yhat - y| (certified)"] = [saved["max |yhat - y| >="],
                                                                         saved["max |yhat - y| <="]]
        trail.append(Step("The float64 weights as saved, Eqs. 1-6 in balls", "--save-weights",
                          {k: v for k, v in saved.items() if k != "kind"}))
        if saved["far from the labels"]:
            notes.append((f"exact weights exist (rank(Z) = T certified), but the float64 weights"
                          f"{' saved' if save else ''} do NOT memorize the labels: certified max |yhat - y| >= "
                          f"{saved['max |yhat - y| >=']:.3g} (max|y| = {saved['max|y|']:.3g}); float64 cannot "
                          "represent the exact weights here") if decision is Decision.TRUE else
                         f"the float64 weights miss the labels: certified max |yhat - y| >= "
                         f"{saved['max |yhat - y| >=']:.3g}")
    if save:
        write_weights(save, instance, weights, Y, skip=skip)
        trail.append(Step("Weights saved", "--save-weights", {"path": str(save)}))
    return conclude(statement_id, decision, claimed=claimed, measured=measured, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED, method=method, prec_bits=cert.prec_bits,
                    tolerance=tol, margin=margin, certificates=certs, trail=trail,
                    reason="; ".join(n for n in notes if n), refutation=refutation)


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
construction("theorem1.memorize")(memorize)


@statement("theorem1",
           requires=("n < d", "d_v >= d_out", "d_out <= d", "T <= H(r-1)+1", "Assumption 1", "Assumption 2"),
           writes_weights=True, conclusion_over="box", exists=True, refutes=(IDENTICAL_INPUTS, FORCED_R),
           margin="1 - ||I - R A||_inf of the rank(Z) = T certificate (the verdict rests on it)",
           measure="max |yhat - y| with the exact readout (ball)", H=3, n=3, d=5)
def check_theorem1(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                   force_r: int | None = None, assumption_samples: int | None = None,
                   exhaustive_limit: int | None = None, **options) -> Evidence:
    return memorize(instance, prec=prec, seed=seed, save=save_weights, force_r=force_r,
                    assumption_samples=assumption_samples, exhaustive_limit=exhaustive_limit)


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


@negative_control("theorem1", "shared contexts, T = H(n-1)+2 > capacity: rank(Z) = T refused by the minor "
                  "(Prop. 2's cap), hypotheses unmet", expect=("hypotheses-unmet",))
def control_too_many_examples(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=2, n=3, d=5, T=6, context="shared", seed=seed)
    return check_theorem1(inst, prec=prec, seed=seed)


@negative_control("theorem1", "two examples with identical context and query and different labels: no weights "
                  "memorize both (certified for any weights)", expect=("hypotheses-unmet",))
def control_duplicate_example(*, prec: int = 128, seed: int = 0) -> Evidence:
    base = make_instance(H=3, n=3, d=5, seed=seed)
    E, e, y = np.array(base.contexts), np.array(base.queries), np.array(base.labels)
    E[-1], e[-1], y[-1] = E[0], e[0], y[0] + 1.0
    return check_theorem1(from_arrays(E, e, y, H=3, kind="generated", seed=seed, source="control"), prec=prec,
                          seed=seed)
