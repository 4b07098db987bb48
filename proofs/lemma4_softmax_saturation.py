"""Lemma 4 (App. D): softmax saturation, with an explicit constant.

Statement
---------
If E W' e has a unique maximum at i* with gap g > 0, then for any W,
softmax(E (W + c W') e) -> one-hot(i*) as c -> infinity. Quantitative form
(ours; the paper proves existence only): with R := max_i [(E W e)_i - (E W e)_{i*}],
    || softmax(E (W + c W') e) - one-hot(i*) ||_1 <= 2 (n-1) exp(R - c g),
so c >= c0(eps) := (R + ln(2(n-1)/eps)) / g gives error <= eps.

Why: 1 - s_{i*} <= sum_{i != i*} exp(b_i - b_{i*} + c(a'_i - a'_{i*})) <= (n-1) e^{R - cg}
and the l1 distance to the one-hot vector is 2 (1 - s_{i*}).
"""
from __future__ import annotations

import math

import numpy as np


def saturation_constant(R: float, g: float, eps: float, n: int) -> float:
    """c0(eps) = (R + ln(2(n-1)/eps)) / g (0 when n = 1: softmax is already one-hot)."""
    if n <= 1:
        return 0.0
    return max(0.0, (R + math.log(2 * (n - 1) / eps)) / g)


def saturation_error_bound(R: float, g: float, c: float, n: int) -> float:
    """2 (n-1) exp(R - c g): the l1 distance bound of Lemma 4."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) * math.exp(R - c * g)


def logit_spread(base_logits: np.ndarray, istar: np.ndarray) -> np.ndarray:
    """R(t) = max_i b_i - b_{i*} for base logits b = E W e (shape (k, n))."""
    k = base_logits.shape[0]
    return base_logits.max(axis=1) - base_logits[np.arange(k), istar]
