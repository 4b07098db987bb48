"""ks_s2s_memorization: sequence-to-sequence memorization with O~(sqrt(nN))
parameters (Kajitsuka & Sato ICLR 2025, abstract [R]: "sufficient").  A
**reconstruction of the abstract's claim**: the theorem, its architecture
(and whether it uses hardmax [R2] or softmax) and its constants were not
retrieved; the model is ours, the one of :mod:`.ntp_memorization` with an ID
for EVERY (sequence, position): the rank-1 softmax attention output at that
position (a contextual mapping, :mod:`.contextual_mapping`), and the robust
bit-extraction FFN on the U <= nN distinct context IDs:

    P = V d + n + 4 D + 16 ceil(U/K) + 5 + K (56 (w + beta) + 139) + (2B - 1)(D - 1),

D = d + 2 the residual stream's width and B = ceil(U/K) (the project's
parameter-count convention, :mod:`.ntp_memorization`):
O(sqrt(nN (w + beta))) beyond the embedding: the FFN is the bottleneck, as
the abstract says ("the feed-forward network becomes a bottleneck").

Checks
------
As ks_ntp_memorization, with the token labels (``token_labels`` (N, n)):
hypotheses token-wise separated and no (sequence, position) with two labels;
context IDs certified apart in Arb balls; the FFN certified constant (= the
label) on [o - 1, o + 1] in exact integers; ``budget=b``: P <= b.

Not established
---------------
The necessity for hardmax (ks_s2s_lower_hardmax, not checkable); the
paper's constants and log factors.

>>> from verifier.data.token_sequences import make_token_instance
>>> check_ks_s2s_memorization(make_token_instance(N=12, S=3, V=6, d=2, C=3, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np

from verifier.data.token_sequences import from_arrays, make_token_instance
from verifier.statements.evidence import Evidence
from verifier.statements.registry import negative_control, statement

from .ntp_memorization import DRAWS, MODEL_MISSED, NO_POSITIONS, OVER_BUDGET, memorize

__all__ = ["check_ks_s2s_memorization"]


@statement("ks_s2s_memorization", N=12, S=3, V=6, d=2, C=3, margin="smallest certified gap between context IDs",
           exists=True, refutes=(NO_POSITIONS, OVER_BUDGET, MODEL_MISSED), measure="parameters P")
def check_ks_s2s_memorization(instance, *, prec: int = 128, seed: int = 0, positions: bool = True,
                              budget: int | None = None, draws: int = DRAWS, **options) -> Evidence:
    return memorize(instance, "ks_s2s_memorization", s2s=True, prec=prec, seed=seed, positions=positions,
                    budget=budget, draws=draws)


@negative_control("ks_s2s_memorization", "neg_ks_s2s_no_positions: without positional encodings, the two 0s of "
                  "(0, 0, 1) with token labels (0, 1, 2)", expect=("refuted",))
def neg_ks_s2s_no_positions(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_arrays(np.array([[0, 0, 1]]), np.array([0]), token_labels=np.array([[0, 1, 2]]), V=2, d=2,
                       kind="control")
    return check_ks_s2s_memorization(inst, prec=prec, seed=seed, positions=False)


@negative_control("ks_s2s_memorization", "neg_ks_s2s_budget: our model for 12 sequences of length 3 fits P - 1 "
                  "parameters (refutes only our construction's count)", expect=("refuted",))
def neg_ks_s2s_budget(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_token_instance(N=12, S=3, V=6, d=2, C=3, seed=seed)
    P = check_ks_s2s_memorization(inst, prec=prec, seed=seed).measured["parameters P"]
    return check_ks_s2s_memorization(inst, prec=prec, seed=seed, budget=P - 1)


@negative_control("ks_s2s_memorization", "neg_ks_s2s_conflict: the sequence (0, 1) listed twice with token labels "
                  "(0, 1) and (0, 2)", expect=("hypotheses-unmet",))
def neg_ks_s2s_conflict(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_arrays(np.array([[0, 1], [0, 1]]), np.array([0, 0]), token_labels=np.array([[0, 1], [0, 2]]),
                       V=2, d=2, kind="control")
    return check_ks_s2s_memorization(inst, prec=prec, seed=seed)
