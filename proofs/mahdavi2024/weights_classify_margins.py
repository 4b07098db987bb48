"""Given weights as a classifier: which examples provably get their label.

Statement
---------
For GIVEN weights (``--weights FILE``) with d_out = C >= 2 outputs read as
class scores, example t with class c^(t) is classified correctly when

    yhat^(t)_c > yhat^(t)_j   for every j != c = c^(t)     (argmax yhat = c, uniquely)

and wrongly when yhat^(t)_j > yhat^(t)_c for some j.  Claimed: every example
is classified correctly.  The class of an example is its label: an integer
id in [0, C) (labels of one column, of an integer dtype or read exactly), or
the argmax of its label row (C columns; the largest entry must exceed the
others for every value the labels stand for).  One output (C = 1) is a
binary classifier by the sign: the scores are [0, yhat], the class of y its
sign (y must be nonzero for every value it stands for).

Checks
------
1. The margins m_tj = yhat_j - yhat_c = o^(t) (W_D[:, j] - W_D[:, c]) in
   balls over EVERY value the data and the weights stand for (Z by the
   rigorous float64 path, then Eqs. 4-6 as ball products; for T <= 60 the
   undecided examples are retried in Arb at a doubling precision).
2. Per example: certified correct when every margin ball lies below 0,
   certified wrong when one lies above 0, undecided otherwise.  Verified
   when every example is certified correct; refuted when one is certified
   wrong (it is wrong for every value the data and weights stand for);
   inconclusive otherwise.  ``measured`` lists the three sets.

Not established
---------------
Anything about examples outside the data (accuracy on a test set is a
number, not a certificate), or about other weights.

References
----------
arXiv:2306.02010v3, Eqs. (1)-(6) (the layer); the margin test as in
verified-robustness practice.

>>> from verifier.data.instances import make_instance
>>> ev = check_weights_classify(make_instance(H=2, n=3, d=5, d_out=3, seed=0))
>>> ev.verdict, ev.measured["certified correct"]
('verified', 5)
"""
from __future__ import annotations

import numpy as np

from verifier.arith.backend import get_backend
from verifier.arith.balls import BallArray
from verifier.arith.compare import Decision, certainly_positive, workprec
from verifier.errors import ConstructionFailed, InvalidInstance
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.readout_balls import margins_float_ball, output_arb
from verifier.statements.evidence import Step, brief, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .weights_common import feature_enclosure, layer_weights, no_weights
from .weights_memorize_residual import ARB_T, require_labels


def label_classes(instance, C: int) -> tuple[np.ndarray, str]:
    """(class of each example, how it was read); bad input when undecidable."""
    Y = np.asarray(instance.labels)
    exact = instance.precision.exact_for("labels")
    if Y.shape[1] == 1 and C == 1:  # one output: binary, by the sign
        mid, rad = instance.ball("labels")
        rad = np.zeros_like(mid) if rad is None else rad
        zero = np.flatnonzero(~(np.nextafter(np.abs(mid[:, 0]), -np.inf) > rad[:, 0]))
        if zero.size:
            raise InvalidInstance(f"label {int(zero[0])} has no sign for every value it stands for: its class "
                                  "(one output: the sign) is undefined")
        return (mid[:, 0] > 0).astype(np.int64), "sign of the one label (one output read as scores [0, yhat])"
    if Y.shape[1] == 1 and C >= 2:
        if not exact or np.any(Y != np.round(Y)) or np.any((Y < 0) | (Y >= C)):
            raise InvalidInstance(f"class ids must be integers in [0, {C}) read exactly (an integer dtype or "
                                  "--exact-input)")
        return Y[:, 0].astype(np.int64), "class ids (one label column)"
    if Y.shape[1] != C:
        raise InvalidInstance(f"labels have {Y.shape[1]} columns; expected {C} (one score per class) or 1 (class ids)")
    mid, rad = instance.ball("labels")
    rad = np.zeros_like(mid) if rad is None else rad
    top = np.argmax(mid, axis=1)
    lo = mid[np.arange(len(top)), top] - rad[np.arange(len(top)), top]
    others = np.where(np.arange(C)[None, :] == top[:, None], -np.inf, mid + rad)
    bad = np.flatnonzero(~(np.nextafter(lo, -np.inf) > np.max(others, axis=1)))
    if bad.size:
        raise InvalidInstance(f"label row {int(bad[0])} has no largest entry for every value it stands for: its "
                              "class is undefined")
    return top.astype(np.int64), "argmax of each label row"


def readout_balls(w) -> dict:
    """W_V, W_O, W_D as balls; one output is read as the two scores [0, yhat]
    (W_D' = [0 | W_D]: class 1 when yhat > 0, class 0 when yhat < 0)."""
    balls = {k: w.ball(k) for k in ("W_V", "W_O", "W_D")}
    if w.d_out == 1:
        D = balls["W_D"]
        balls["W_D"] = BallArray(np.hstack([np.zeros_like(D.mid), D.mid]),
                                 None if D.rad is None else np.hstack([np.zeros_like(D.rad), D.rad]))
    return balls


def _arb_retry(instance, w, classes, rows, prec: int) -> dict:
    """{example: Decision of 'correct'} for ``rows``, in Arb at ``prec`` bits."""
    E, e, WK, WQ = w.key_query(instance)
    balls = readout_balls(w)
    out = {}
    with workprec(prec):
        Z = feature_matrix_ball(E, e, WK, WQ, rows=list(rows))
        q = instance.balls()[1] if w.skip else None
        Y = output_arb(Z, balls, None if q is None else q[np.asarray(rows)])
        for i, t in enumerate(rows):
            c = int(classes[t])
            gaps = [Y[i, c] - Y[i, j] for j in range(Y.ncols()) if j != c]
            if all(certainly_positive(g) is Decision.TRUE for g in gaps):
                out[t] = Decision.TRUE
            elif any(certainly_positive(-g) is Decision.TRUE for g in gaps):
                out[t] = Decision.FALSE
    return out


def weights_classify(instance, *, prec: int = 128, seed: int = 0, weights=None, backend=None,
                     statement_id: str = "weights_classify"):
    require_labels(instance, statement_id)
    try:
        w, how = layer_weights(instance, weights, seed=seed, readout=True)
    except ConstructionFailed as exc:
        return no_weights(statement_id, "argmax yhat^(t) = class of y^(t) for every example", exc)
    classes, read = label_classes(instance, w.d_out)
    b = get_backend(backend)
    Z = feature_enclosure(instance, w, backend=b)
    q = instance.balls()[1] if w.skip else None
    balls = readout_balls(w)
    mid, rad = margins_float_ball(Z, balls, classes, q, backend=b)
    up = np.nextafter(mid + rad, np.inf)  # margins yhat_j - yhat_c, rounded outward
    lo = np.nextafter(mid - rad, -np.inf)
    others = np.arange(mid.shape[1])[None, :] != classes[:, None]
    correct = np.all(np.where(others, up < 0, True), axis=1)
    wrong = np.any(np.where(others, lo > 0, False), axis=1)
    method = "rigorous float64 balls (any summation order)"
    undecided = np.flatnonzero(~correct & ~wrong)
    if undecided.size and instance.T <= ARB_T:
        for bits in (prec, 2 * prec, 4 * prec):
            for t, dec in _arb_retry(instance, w, classes, undecided.tolist(), bits).items():
                correct[t], wrong[t] = dec is Decision.TRUE, dec is Decision.FALSE
            undecided = np.flatnonzero(~correct & ~wrong)
            method = f"rigorous float64 balls, then arb up to {bits} bits for the undecided examples"
            if not undecided.size:
                break
    ok, bad = np.flatnonzero(correct), np.flatnonzero(wrong)
    decision = Decision.FALSE if bad.size else Decision.TRUE if ok.size == instance.T else Decision.UNDECIDED
    worst = float(np.max(np.where(others, up, -np.inf)))
    measured = {"certified correct": int(ok.size), "certified wrong": int(bad.size), "undecided": int(undecided.size),
                "T": instance.T, "examples certified wrong": brief(bad), "examples undecided": brief(undecided),
                "classes read as": read, "largest margin yhat_j - yhat_c (upper bound)": worst, "weights": how,
                "weights read": w.describe()["arrays"]}
    cert = {"kind": "argmax margins yhat_j - yhat_c enclosed over every value the data and weights stand for",
            "correct": ok.tolist(), "wrong": bad.tolist(), "undecided": undecided.tolist(), "method": method}
    trail = [Step("Weights", "--weights", {"from": how, **w.describe()}),
             Step("Margins o (W_D[:, j] - W_D[:, c]) in balls", "Eqs. 1-6",
                  {"correct": int(ok.size), "wrong": int(bad.size), "undecided": int(undecided.size)})]
    reason = {Decision.TRUE: f"all {instance.T} examples certified correct (argmax yhat = label, uniquely)",
              Decision.FALSE: f"{bad.size} example(s) certified wrong (first: {int(bad[0]) if bad.size else -1}) for "
                              "every value the data and weights stand for",
              Decision.UNDECIDED: f"{ok.size} certified correct, {undecided.size} undecided at the data's precision "
                                  "(a margin ball contains 0)"}[decision]
    return conclude(statement_id, decision, claimed="argmax yhat^(t) = class of y^(t) for every example",
                    measured=measured, certified=decision is not Decision.UNDECIDED, method=method, prec_bits=prec,
                    margin=-worst if np.isfinite(worst) else None, certificates=[cert], trail=trail, reason=reason,
                    refutation=CERTAINLY_WRONG)


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
construction("weights_classify.certify")(weights_classify)


#: an example whose argmax is certainly another class at every value the data and weights stand for
CERTAINLY_WRONG = Refutation("counterexample", "an example whose margin ball yhat_j - yhat_c excludes 0 on the wrong "
                             "side (arb / rigorous float balls over every value the data and weights stand for)")


@statement("weights_classify", requires=(), conclusion_over="box", refutes=(CERTAINLY_WRONG,),
           margin="-(largest margin yhat_j - yhat_c): > 0 when every example is certified correct",
           measure="certified correct", H=2, n=3, d=5, d_out=3)
def check_weights_classify(instance, *, prec: int = 128, seed: int = 0, weights=None, backend=None, **options):
    return weights_classify(instance, prec=prec, seed=seed, weights=weights, backend=backend)


@negative_control("weights_classify", "weights fitted to one-hot labels, the classes then shifted by one: every "
                  "example certified wrong", expect=("refuted",))
def control_shifted_classes(*, prec: int = 128, seed: int = 0):
    from verifier.data.instances import make_instance

    inst = make_instance(H=2, n=3, d=5, d_out=3, seed=seed)
    w, _ = layer_weights(inst, None, seed=seed, readout=True)
    y = np.roll(np.eye(3)[np.argmax(inst.labels, axis=1)], 1, axis=1)
    return check_weights_classify(inst.replace(labels=y), prec=prec, seed=seed, weights=w)
