"""Given weights: how far the layer is from memorizing its labels.

Statement
---------
For GIVEN weights W_Q^h, W_K^h, W_V^h, W_O, W_D (a user's trained layer,
``--weights FILE``; with or without the skip connection) and given contexts,
queries and labels y^(t), the layer of Eqs. (1)-(6) satisfies

    max_t max_j |yhat^(t)_j - y^(t)_j| <= tol

for a tolerance the user states (``--tol``, an exact decimal; default
10^-6 max|y|).

Checks
------
1. Eqs. (1)-(6) in balls for EVERY value the data, the labels and the
   weights stand for (a float stands for the reals that round to it;
   ``--exact-input``: for itself): Z enclosed by the rigorous float64 path
   (any summation order), then o_h = W_V^h^T z_h, o = W_O^T [o_h] (+ e),
   yhat = W_D^T o, each product a ball product with radii on both operands;
   for T <= 60 an undecided comparison is retried in Arb, doubling the
   precision (the saved-weights certificate of Theorem 1, for any weights).
2. A certified enclosure [lower, upper] of max |yhat - y|: verified when
   upper <= tol, refuted when lower > tol (every value the data and
   weights stand for misses the labels by more than tol), inconclusive
   otherwise (the enclosure straddles tol: more precise data, or
   ``--exact-input`` if the stored values are exact).

Not established
---------------
Whether OTHER weights memorize (``weights_rank``: which labels refitting the
readout could fit; ``theorem1``: the paper's construction).  Nothing about
examples outside the data.

References
----------
arXiv:2306.02010v3, Eqs. (1)-(6), Thm. 1, App. C.

>>> from verifier.data.instances import make_instance
>>> ev = check_weights_memorize(make_instance(H=2, n=3, d=5, seed=0))
>>> ev.verdict, ev.certified
('verified', True)
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb

from verifier.arith.backend import get_backend
from verifier.arith.balls import ball_max
from verifier.arith.compare import (
    Decision,
    Enclosure,
    LowerBound,
    UpperBound,
    certainly_less_equal,
    with_precision_ladder,
)
from verifier.arith.compare import lower as arb_lower
from verifier.arith.compare import upper as arb_upper
from verifier.arith.float_bounds import add_up
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed, InvalidInstance
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.readout_balls import ball_sum, output_arb, output_float_ball
from verifier.statements.display import significant, stable
from verifier.statements.evidence import Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .weights_common import feature_enclosure, layer_weights, no_weights

ARB_T = 60  #: up to this T an undecided float enclosure is retried in Arb
DEFAULT_TOL = Fraction(1, 10**6)  #: relative to max|y| when --tol is not given


def require_labels(instance, what: str) -> None:
    """A user's data must carry labels (generated instances draw theirs)."""
    if instance.source != "generated" and instance.reading and "labels" not in instance.reading:
        raise InvalidInstance(f"{what} compares the layer's output with labels: the data have none (add 'labels')")


def tolerance(tol, Y_max: float) -> tuple[Fraction, str]:
    """(tol as an exact rational, how it was set)."""
    if tol is None:
        return DEFAULT_TOL * Fraction(Y_max), f"10^-6 max|y| (max|y| = {Y_max:.6g}; --tol to state one)"
    try:
        q = Fraction(str(tol))
    except (ValueError, ZeroDivisionError):
        raise InvalidInstance(f"--tol {tol!r}: not a number") from None
    if q < 0:
        raise InvalidInstance(f"--tol {tol}: must be >= 0")
    return q, f"--tol {tol} (exact)"


def _float_residual(instance, w, *, backend):
    """(lower, upper) floats around max |yhat - y| over every value of the balls."""
    b = get_backend(backend)
    Z = feature_enclosure(instance, w, backend=b)
    _, e = instance.balls() if w.skip else (None, None)
    balls = {k: w.ball(k) for k in ("W_V", "W_O", "W_D")}
    Ym, Yr = output_float_ball(Z, balls, e if w.skip else None, backend=b)
    ym, yr = instance.ball("labels")
    Rm, Rr = ball_sum(b, Ym, Yr, b.asarray(np.ascontiguousarray(ym)),
                      None if yr is None else b.asarray(np.ascontiguousarray(yr)), -1.0)
    A, R = b.to_numpy(b.abs(Rm)), b.to_numpy(Rr)
    hi = float(np.max(b.to_numpy(add_up(b, b.abs(Rm), Rr))))
    lo = np.nextafter(A - R, -np.inf)  # rounded down
    return max(0.0, float(np.max(lo))), hi, (A, R)


def _arb_residual(instance, w, *, prec: int):
    """Arb enclosure of max |yhat - y| (ladder on the precision until it is
    narrower than 1% of its top)."""
    E, e, WK, WQ = w.key_query(instance)
    balls = {k: w.ball(k) for k in ("W_V", "W_O", "W_D")}
    ym, yr = instance.ball("labels")

    def attempt(bits):
        Z = feature_matrix_ball(E, e, WK, WQ)
        Y = output_arb(Z, balls, instance.balls()[1] if w.skip else None)
        worst = ball_max(abs(Y[i, j] - arb(float(ym[i, j]), 0.0 if yr is None else float(yr[i, j])))
                         for i in range(Y.nrows()) for j in range(Y.ncols()))
        tight = certainly_less_equal(arb(worst.rad()) * 100, worst.abs_upper())
        return (Decision.TRUE if tight is Decision.TRUE else Decision.UNDECIDED), worst

    _, worst, bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, 1024))
    return max(0.0, arb_lower(worst)), arb_upper(worst), bits


def residual_decision(lo: float, hi: float, tol: Fraction) -> Decision:
    """max |yhat - y| <= tol, from its enclosure [lo, hi] (one helper: compare.py)."""
    enc = Enclosure(LowerBound(arb(lo)), UpperBound(arb(hi)))
    return certainly_less_equal(enc, arb(tol.numerator) / tol.denominator)


def weights_memorize(instance, *, prec: int = 128, seed: int = 0, weights=None, tol=None, backend=None,
                     statement_id: str = "weights_memorize"):
    require_labels(instance, statement_id)
    try:
        w, how = layer_weights(instance, weights, seed=seed, readout=True)
    except ConstructionFailed as exc:
        return no_weights(statement_id, "max_t |yhat - y| <= tol", exc)
    if w.d_out != instance.d_out:
        raise InvalidInstance(f"{w.source.removeprefix('file:')}: W_D has d_out = {w.d_out}, the labels d_out = "
                              f"{instance.d_out}")
    Y_max = float(np.max(np.abs(instance.labels)))
    tol_q, tol_how = tolerance(tol, Y_max)
    lo, hi, (A, R) = _float_residual(instance, w, backend=backend)
    method, bits = "rigorous float64 balls (any summation order)", 53
    decision = residual_decision(lo, hi, tol_q)
    if decision is Decision.UNDECIDED and instance.T <= ARB_T:
        lo2, hi2, bits = _arb_residual(instance, w, prec=prec)
        lo, hi, method = max(lo, lo2), min(hi, hi2), f"arb balls ({bits} bits) after the float enclosure"
        decision = residual_decision(lo, hi, tol_q)
    tol_f = float(tol_q)
    within = int(np.sum(np.max(np.nextafter(A + R, np.inf), axis=1) <= tol_f)) if tol_f == tol_q else None
    above = int(np.sum(np.max(np.nextafter(A - R, -np.inf), axis=1) > tol_f)) if tol_f == tol_q else None
    measured = {"max |yhat - y| >=": lo, "max |yhat - y| <=": hi, "tol": tol_f, "tol set by": tol_how,
                "max|y|": Y_max, "weights": how, "weights read": w.describe()["arrays"],
                **({"examples certified within tol (float enclosure)": within,
                    "examples certified above tol (float enclosure)": above} if within is not None else {})}
    cert = {"kind": "max |yhat - y| enclosed: Eqs. 1-6 in balls over every value the data, labels and weights "
                    "stand for", "max |yhat - y| >=": lo, "max |yhat - y| <=": hi, "tol": str(tol_q),
            "method": method, "prec_bits": bits, "skip": w.skip}
    trail = [Step("Weights", "--weights", {"from": how, **w.describe()}),
             Step("Eqs. 1-6 in balls", "Thm. 1's saved-weights certificate, for any weights",
                  {"max |yhat - y| >=": lo, "max |yhat - y| <=": hi, "method": method})]
    # the reason prints the bounds as the report does (display.stable: a bound at rounding level is its class)
    shown = stable({"max |yhat - y| >=": lo, "max |yhat - y| <=": hi, "tol": tol_f})
    lo_s, hi_s, tol_s = shown["max |yhat - y| >="], shown["max |yhat - y| <="], shown["tol"]
    if isinstance(lo_s, str):  # a lower bound at rounding level still bounds: its first digits, rounded down
        lo_s = f"{significant(lo, 3, 'down'):g}"
    if decision is Decision.TRUE:
        reason = f"max |yhat - y| <= {hi_s} <= tol = {tol_s} for every value the data and weights stand for"
    elif decision is Decision.FALSE:
        reason = f"max |yhat - y| >= {lo_s} > tol = {tol_s} for every value the data and weights stand for"
    else:
        reason = (f"max |yhat - y| between {lo_s} and {hi_s} straddles tol = {tol_s}: undecided at the data's "
                  "precision (--exact-input if the stored values are exact; more precise weights otherwise)")
    margin = tol_f - hi if decision is not Decision.FALSE else tol_f - lo
    return conclude(statement_id, decision, claimed=f"max_t |yhat - y| <= tol ({tol_how})", measured=measured,
                    certified=decision is not Decision.UNDECIDED, method=method, prec_bits=bits,
                    tolerance=tol_f, margin=margin if math.isfinite(margin) else None, certificates=[cert],
                    trail=trail, reason=reason, refutation=ABOVE_TOL)


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
construction("weights_memorize.certify")(weights_memorize)


#: the enclosure of max |yhat - y| lies above tol at every value the data and weights stand for
ABOVE_TOL = Refutation("counterexample", "max_t |yhat - y| certainly above tol (Eqs. 1-6 in balls over every value "
                       "the data, labels and weights stand for)")


@statement("weights_memorize", requires=(), conclusion_over="box", refutes=(ABOVE_TOL,), margin="tol - max |yhat - y| (certified side)",
           measure="max |yhat - y| <=", H=2, n=3, d=5)
def check_weights_memorize(instance, *, prec: int = 128, seed: int = 0, weights=None, tol=None, backend=None,
                           **options):
    return weights_memorize(instance, prec=prec, seed=seed, weights=weights, tol=tol, backend=backend)


def _fitted(seed: int):
    """The default instance and Theorem 1's weights fitted to its labels."""
    inst = make_instance(H=2, n=3, d=5, seed=seed)
    return inst, layer_weights(inst, None, seed=seed, readout=True)[0]


@negative_control("weights_memorize", "weights fitted to the labels, one label then moved by 1: max |yhat - y| "
                  ">= 1 - tol", expect=("refuted",))
def control_moved_label(*, prec: int = 128, seed: int = 0):
    inst, w = _fitted(seed)
    y = np.array(inst.labels)
    y[0, 0] += 1.0
    return check_weights_memorize(inst.replace(labels=y), prec=prec, seed=seed, weights=w)


@negative_control("weights_memorize", "weights fitted to the labels with W_D doubled: yhat = 2y misses y",
                  expect=("refuted",))
def control_doubled_readout(*, prec: int = 128, seed: int = 0):
    from verifier.data.weights import weights_from_arrays

    inst, w = _fitted(seed)
    arrays = {k: np.array(v) for k, v in w.mid.items()}
    arrays["W_D"] = arrays["W_D"] * 2.0
    return check_weights_memorize(inst, prec=prec, seed=seed, weights=weights_from_arrays(arrays, exact_input=True))
