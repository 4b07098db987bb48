"""The transformers layer reader's arithmetic, against exact rationals: the
attention scale 1/sqrt(d_h) enclosed, and the scaled query weights' balls
containing c W for every scale c and every weight W of the inputs' balls.
(The end-to-end reading of ViT, BERT and GPT-2 directories built from configs:
tests/verifier/cli/test_given_weights.py.)"""
from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from verifier.data.hf_layer import _scaled, attention_scale


@pytest.mark.parametrize("d_h", [1, 2, 3, 8, 64, 80, 96, 128])
def test_the_scale_is_enclosed(d_h):
    lo, hi = attention_scale(SimpleNamespace(model_type="vit"), 0, d_h)
    assert lo * lo * d_h <= 1 <= hi * hi * d_h and hi - lo <= Fraction(1, 2**59)


def test_gpt2_scales():
    cfg = SimpleNamespace(model_type="gpt2", scale_attn_weights=True, scale_attn_by_inverse_layer_idx=True)
    lo, hi = attention_scale(cfg, 3, 64)
    assert lo == hi == Fraction(1, 32)
    assert attention_scale(SimpleNamespace(model_type="gpt2", scale_attn_weights=False), 0, 64) == (1, 1)


@pytest.mark.parametrize("d_h", [8, 64, 96])
def test_scaled_weights_contain_every_scaled_weight(d_h):
    rng = np.random.default_rng(d_h)
    W = (rng.standard_normal((3, 7)) * np.exp2(rng.integers(-30, 30, (3, 7)))).astype(np.float32).astype(np.float64)
    rad = np.abs(W) * 2.0**-24
    lo, hi = attention_scale(SimpleNamespace(model_type="bert"), 0, d_h)
    mid, r = _scaled(W, rad, lo, hi)
    for c in (lo, hi):
        for sign in (-1, 1):
            for m, q, x, y in zip(W.ravel(), rad.ravel(), mid.ravel(), np.asarray(r).ravel()):
                exact = c * (Fraction(float(m)) + sign * Fraction(float(q)))
                assert abs(exact - Fraction(float(x))) <= Fraction(float(y))
    m2, r2 = _scaled(W, None, Fraction(1, 8), Fraction(1, 8))  # a power of two: exact, no radius added
    assert np.array_equal(m2, W / 8) and r2 is None
