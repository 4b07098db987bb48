"""Contribution 1 (p. 2): for general d, an AoT memorizes H d_h + d associations.

Statement
---------
Under Assumption 1, for any embedding dimension d (and d_h <= d), some AoT
with H heads of dimension d_h memorizes H d_h + d associations.

Construction
------------
As Cor. 1 (:mod:`.corollary1_associations`, :mod:`.associations`): the exact
route with W_U's rows distinct unit vectors and E(t) = u_{g(t)} + xi_t,
which needs d >= 2; the float64 weights are certified in balls.

Checks
------
Hypotheses: Assumption 1, T0 <= H d_h + d, d_h <= d.  With d = 1 the claim is
false as stated: d = d_h = 1, H = 2 claims 3 associations, and a table with
targets {1, 2, 3} is impossible for every W_U (the ordering argument of
Prop. 2(b), exact; neg_contrib1_d1).

Not established
---------------
Existential: a failed construction is "inconclusive".

References
----------
arXiv:2411.10115, contributions p. 2; DANA2025.md (neg_contrib1_d1).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_contrib1(make_sequence_instance(N=8, S=2, d=3, d_h=2, H=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np

from verifier.data.sequences import from_sequences
from verifier.statements.evidence import Evidence
from verifier.statements.registry import negative_control, statement

from .corollary1_associations import NO_AOT, check_associations

__all__ = ["check_dana_contrib1"]


@statement("dana_contrib1", writes_weights=True, exists=True, refutes=(NO_AOT,),
           requires=("Assumption 1 (point masses)", "T0 <= H d_h + d", "d_h <= d (App. A.1)"),
           N=8, S=2, d=3, d_h=2, H=2)
def check_dana_contrib1(instance, *, prec: int = 128, seed: int = 0, save_weights: str | None = None,
                        **options) -> Evidence:
    return check_associations("dana_contrib1", instance, d_required=None, prec=prec, seed=seed,
                              save_weights=save_weights)


@negative_control("dana_contrib1", "neg_contrib1_d1: d = d_h = 1, H = 2 claims 3 associations; targets {1, 2, 3} "
                  "are impossible for every W_U (ordering, exact)", expect=("refuted",))
def neg_contrib1_d1(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_sequences(np.array([[0, 0], [1, 1], [2, 2]]), N=3, targets=[0, 1, 2], d=1, d_h=1, H=2,
                          kind="control")
    return check_dana_contrib1(inst, prec=prec, seed=seed)
