"""table1 / fig1 / table3: the criteria decide (and can decide against the paper); the loaders on tiny inputs."""
import importlib.util

import pytest
import torch

from verifier.experiments.catalogue import EXPERIMENTS, load_all, run_experiment
from verifier.experiments.table1 import table1_status
from verifier.experiments.table3 import table3_status

needs = pytest.mark.skipif(any(importlib.util.find_spec(p) is None for p in ("transformers", "skimage", "sklearn")),
                           reason="needs the experiments extra")


def cell(status, basis="certified at precision"):
    return {"status": status, "basis": basis}


def layers(over=None):
    """A table as the paper reports it; ``over`` replaces cells: {(layer, key): (status, basis)}."""
    names = ("embedding", "random attention", "random ViT layer", "trained ViT layer")
    t = {m: {"assumption1": cell("holds", "evidence"), "assumption2": cell("holds", "evidence"),
             "assumption3": cell("holds", "evidence"), "general_position": cell("fails")} for m in names}
    t["embedding"]["assumption1"] = cell("fails", "certified exact")
    for (m, k), (s, b) in (over or {}).items():
        t[m][k] = cell(s, b)
    return t


def test_table1_criterion_reproduced_on_the_papers_table():
    assert table1_status(layers())[0] == "reproduced"


def test_table1_criterion_partial_when_general_position_holds():
    """The digits stand-in's flaw: general position must fail while Assumption 1 holds."""
    status, why = table1_status(layers({("random attention", "general_position"): ("holds", "evidence")}))
    assert status == "partially reproduced" and "(c) GP fails while A1 holds: no" in why


def test_table1_criterion_not_reproduced_when_assumption1_holds_at_the_embedding():
    assert table1_status(layers({("embedding", "assumption1"): ("holds", "evidence")}))[0] == "not reproduced"
    assert table1_status(layers({("random ViT layer", "assumption2"): ("fails", "certified")}))[0] \
        == "not reproduced"


def text_result(a2_trained="fails", gpt_a1="holds", kr=(80, 100)):
    models = {}
    for m in ("BERT random (learned pos.)", "BERT random (sinusoidal pos.)", "GPT-2 random (learned pos.)",
              "MiniLM trained (learned pos.)"):
        models[m] = {L: {"assumption1": cell("holds"), "assumption2": cell("holds"),
                         "kruskal_curve": {"evidence_lower": kr[0], "certified_upper": kr[1]}} for L in ("L0", "L1")}
    models["MiniLM trained (learned pos.)"]["L0"]["assumption2"] = cell(a2_trained)
    models["GPT-2 random (learned pos.)"]["L1"]["assumption1"] = cell(gpt_a1)
    return {"n": 128, "models": models, "gpt2_full_context": {"assumption2": "fails"}}


def test_table3_criterion():
    assert table3_status(text_result())[0] == "reproduced"
    assert table3_status(text_result(kr=(128, 128)))[0] == "partially reproduced"  # kr >= n: not Remark 1's regime
    status, why = table3_status(text_result(a2_trained="holds"))
    assert status == "reproduced" and "only by GPT-2's n > d" in why
    assert table3_status(text_result(gpt_a1="fails"))[0] == "not reproduced"


def test_registered_and_skipped_in_quick_mode():
    load_all()
    for eid in ("table1", "fig1", "table3"):
        assert EXPERIMENTS[eid].criterion and EXPERIMENTS[eid].claim
        assert run_experiment(eid, scale="quick").status == "skipped"


@needs
def test_photographs_and_a_small_vit():
    from verifier.experiments.photographs import photograph_inputs
    from verifier.experiments.vit_layers import vit_base_tokens

    x, src = photograph_inputs(3, seed=0, size=32)
    assert x.shape == (3, 3, 32, 32) and float(x.min()) >= -1 and float(x.max()) <= 1 and len(set(src)) == 3
    tok = vit_base_tokens(x, seed=0, hidden_size=32, image_size=32, patch_size=16, num_attention_heads=2,
                          intermediate_size=32)
    assert tok["embedding"].shape == (3, 5, 32)
    q = tok["embedding"][:, 0]
    assert torch.equal(q[0], q[1])  # [CLS] + position 0: the same query for every image
    assert not torch.equal(tok["random attention"][0, 0], tok["random attention"][1, 0])
