"""The stand-ins of Tables 1 and 3, diagnosed and fixed: each diagnosis as a property that
can fail (a negative control beside it), on inputs small enough for seconds."""
import importlib.util

import numpy as np
import pytest
import torch

from verifier.data.instances import sinusoidal_encoding
from verifier.experiments.precision import tolerance_of
from verifier.experiments.real_assumptions import Budget, _assumption2
from verifier.experiments.standin_parts import part, table_status
from verifier.experiments.table1 import SCALE as SCALE1
from verifier.experiments.table1 import table1_status

needs_images = pytest.mark.skipif(importlib.util.find_spec("skimage") is None, reason="needs scikit-image")
needs_text = pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")


def rank_at_precision(V: np.ndarray) -> int:
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    s = np.linalg.svd(U, compute_uv=False)
    return int((s > s[0] * tolerance_of(V[1:2].astype(np.float32), V.shape)).sum())


def rho(V: np.ndarray) -> float:
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    s = np.linalg.svd(U, compute_uv=False)
    return float(s[-1] / s[0])


def test_the_sinusoid_over_128_positions_is_rank_deficient_at_float32_precision():
    """Table 3 (a)'s diagnosis: the table's low frequencies barely change over 128 positions (rank 48
    of 128, measured); scaling cannot change a rank, so the fix is that the table no longer dominates."""
    S = sinusoidal_encoding(128, 768)
    assert rank_at_precision(S) < 64
    assert rank_at_precision(0.02 * S) == rank_at_precision(S)


def test_the_scaled_sinusoid_no_longer_dominates_the_contexts():
    """Word embeddings of std 0.02 plus the unit-amplitude sinusoid: the context is the sinusoid's up to
    a 35x smaller perturbation; scaled to the words' row norm, distinct words carry the context's rank
    (repeated words do not: the next test).
    Negative control: the same words under the unit table give a context of far smaller rho."""
    rng = np.random.default_rng(0)
    n, d = 128, 768
    S = sinusoidal_encoding(n, d)
    W = 0.02 * rng.standard_normal((n, d))
    scale = np.sqrt((W ** 2).sum(1).mean()) / np.sqrt((S ** 2).sum(1).mean())
    assert 0.02 < scale < 0.04  # sqrt(2) * 0.02: the rows of S have norm sqrt(d / 2)
    tau = tolerance_of(W[:1].astype(np.float32), (n, d))
    assert rho(W + scale * S) > 100 * tau
    assert rho(W + S) < rho(W + scale * S) / 10


def test_scaled_or_not_the_sinusoid_bounds_a_context_by_its_distinct_tokens():
    """Table 3 (a) after the fix: a context's rows are word + position, so its rank is at most its
    distinct tokens plus the table's rank, whatever the table's scale.  40 distinct words over 128
    positions under the scaled sinusoid (rank 48 at float32 precision): dependent at the data's
    precision.  Negative control: the same words under a random learned table of the same row norm."""
    rng = np.random.default_rng(0)
    n, d = 128, 768
    S = sinusoidal_encoding(n, d)
    words = 0.02 * rng.standard_normal((40, d))
    W = words[rng.integers(0, 40, size=n)]
    scale = np.sqrt((W ** 2).sum(1).mean()) / np.sqrt((S ** 2).sum(1).mean())
    tau = tolerance_of(W[:1].astype(np.float32), (n, d))
    assert rank_at_precision(W + scale * S) <= 40 + rank_at_precision(S) < n
    assert rho(W + scale * S) < tau / 100
    learned = 0.02 * rng.standard_normal((n, d))
    assert rank_at_precision(W + learned) == n and rho(W + learned) > 100 * tau


def test_a_rank_deficient_stand_in_fails_part_a():
    """Negative control: contexts whose tokens lie in a 3-dimensional subspace fail Assumption 2
    (certified), and Table 1's part (a), powered (n <= d), makes the table 'not reproduced'."""
    g = torch.Generator().manual_seed(0)
    basis = torch.randn(3, 8, generator=g)
    contexts = torch.randn(5, 4, 3, generator=g) @ basis  # n = 4 tokens in R^8, rank 3
    a2 = _assumption2(contexts.float(), contexts[:1, 0].float().numpy(), Budget(certify_contexts=1))
    assert a2["status"] == "fails" and a2["basis"].startswith("certified")
    good = torch.randn(5, 4, 8, generator=g)
    assert _assumption2(good.float(), good[:1, 0].float().numpy(), Budget(certify_contexts=1))["status"] == "holds"
    names = ("embedding", "random attention", "random ViT layer", "trained ViT layer")
    c = {m: {"assumption1": {"status": "holds", "basis": "evidence"}, "assumption2": {"status": "holds", "basis": "e"},
             "assumption3": {"status": "holds", "basis": "evidence"},
             "general_position": {"status": "fails", "basis": "certified"}} for m in names}
    c["embedding"]["assumption1"] = {"status": "fails", "basis": "certified exact"}
    c["random attention"]["assumption2"] = {"status": a2["status"], "basis": a2["basis"]}
    measured = {"cells": c, "layers": {m: {"n": 4, "d": 8} for m in names},
                "data": {"distinct_scenes": 16, "enlarged_crops": 0}}
    status, why = table1_status(measured)
    assert status == "not reproduced" and "(a) A2 every layer: no" in why


def test_an_inconclusive_part_read_both_ways():
    rule = {"reproduced": lambda v: "reproduced" if all(v.values()) else "not reproduced",
            "partial": lambda v: "reproduced" if all(v.values()) else "partially reproduced" if v["a"]
            else "not reproduced"}
    open_ = {"a": part(True, True, ""), "b": part(False, False, "T < d", "T >= d")}
    assert table_status(open_, rule["reproduced"])[0] == "inconclusive"
    assert table_status(open_, rule["partial"])[0] == "inconclusive"  # reproduced or partial
    closed = {"a": part(False, True, ""), "b": part(False, False, "T < d", "T >= d")}
    assert table_status(closed, rule["partial"])[0] == "not reproduced"  # (a) decides
    assert table_status({"a": part(True, False, "")}, rule["reproduced"])[0] == "reproduced"  # a pass stands


def test_the_cpu_scale_does_not_enlarge_crops():
    assert SCALE1["cpu"]["upsample"] is False and SCALE1["thorough"]["upsample"] is False


@needs_images
def test_crops_are_never_enlarged_and_the_old_stand_in_is_kept():
    from verifier.experiments.photographs import LFW, photograph_crops, photograph_inputs

    x, crops = photograph_crops(20, seed=0, size=224, upsample=False)
    assert all(c["side"] >= 224 for c in crops) and not any(c["scene"].startswith(LFW) for c in crops)
    assert x.shape == (20, 3, 224, 224)
    old, src = photograph_inputs(18, seed=0, size=32)  # the previous stand-in, draw for draw
    x2, crops2 = photograph_crops(18, seed=0, size=32)
    assert torch.equal(old, x2) and src == [c["scene"] for c in crops2]
    assert any(c["scene"].startswith(LFW) for c in crops2)


@needs_text
def test_the_sinusoidal_bert_table_has_the_word_embeddings_row_norm():
    from verifier.experiments.text_models import _build, rms_row_norm

    emb = _build("BERT random (sinusoidal pos.)", 100, 0).embeddings
    ratio = rms_row_norm(emb.position_embeddings.weight.detach()) / rms_row_norm(emb.word_embeddings.weight.detach())
    assert abs(ratio - 1) < 1e-5
    unit = _build("BERT random (unit sinusoidal pos.)", 100, 0).embeddings.position_embeddings.weight
    assert rms_row_norm(unit.detach()) > 10 * rms_row_norm(emb.word_embeddings.weight.detach())
