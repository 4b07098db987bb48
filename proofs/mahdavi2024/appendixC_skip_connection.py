"""Appendix C: Theorem 1 with a skip connection.

Statement
---------
With the skip connection, Eq. (5) becomes o = W_O^T [o_1; ...; o_H] + e, so
yhat = W_D^T (W_O^T [...] + e). Memorize the shifted labels
    y'^(t) = y^(t) - W_D^T e^(t)   (= y^(t) minus the first d_out coordinates
                                     of e^(t) for W_D = [I_{d_out}; 0])
with Theorem 1; the same weights then memorize y with the skip connection.

Construction
------------
Theorem 1's construction (Prop. 1 + Step 2) on the labels y', W_D = [I; 0].

Checks
------
rank(Z) = T certified; the exact readout for y' enclosed in balls and the
forward pass WITH the skip connection (yhat = Z M + e W_D) enclosed within
1e-20 of y (T <= 60); the float64 weights' residual reported. Negative
control: without the shift the same forward pass misses y by W_D^T e, which
the residual balls certify.

Not established
---------------
As for Theorem 1: random instances; the readout is linear in the labels.

References
----------
arXiv:2306.02010v3, App. C.

>>> from verifier.data.instances import make_instance
>>> check_appendixC(make_instance(H=3, n=3, d=5, d_out=2, d_v=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

from verifier.data.instances import make_instance
from verifier.statements.evidence import Evidence
from verifier.statements.registry import negative_control, statement

from .theorem1_memorization import FORCED_R, IDENTICAL_INPUTS, UNSHIFTED, memorize


@statement("appendixC", conclusion_over="box",
           requires=("n < d", "d_v >= d_out", "d_out <= d", "T <= H(r-1)+1", "Assumption 1", "Assumption 2"),
           writes_weights=True, exists=True, refutes=(IDENTICAL_INPUTS, FORCED_R, UNSHIFTED),
           margin="1 - ||I - R A||_inf of the rank(Z) = T certificate (the verdict rests on it)",
           measure="max |yhat - y| with the exact readout (ball)", H=3, n=3, d=5, d_out=2, d_v=2)
def check_appendixC(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                    **options) -> Evidence:
    return memorize(instance, prec=prec, seed=seed, skip=True, save=save_weights, statement_id="appendixC")


@negative_control("appendixC", "labels not shifted: weights fitted to y, run WITH the skip, miss y by W_D^T e",
                  expect=("refuted",))
def control_unshifted_labels(*, prec: int = 128, seed: int = 0) -> Evidence:
    """The shift is necessary: yhat = y + W_D^T e != y, decided in balls."""
    return memorize(make_instance(H=3, n=3, d=5, d_out=2, d_v=2, seed=seed), prec=prec, seed=seed, skip=True,
                    shift_labels=False, statement_id="appendixC")
