"""verifier/experiments/batched_model.py: padded replicas compute exactly their own model."""
import numpy as np
import pytest
import torch

from verifier.errors import InvalidInstance
from verifier.experiments.batched_model import BatchedAttention
from verifier.model.mha_torch import forward_torch


def data(M=2, B=5, n=5, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(M, B, d, generator=g), torch.rand(M, n, d, generator=g), torch.rand(M, B, n, d, generator=g)


@pytest.mark.parametrize("shared", [True, False])
def test_padded_replica_equals_the_model_alone(shared):
    xq, ctx_s, ctx_r = data()
    ctx = ctx_s if shared else ctx_r
    both = BatchedAttention(d_in=6, d=6, d_out=4, H=[2, 3], n=[3, 5], d_h=[2, 4], seeds=[7, 8])
    alone = BatchedAttention(d_in=6, d=6, d_out=4, H=[2], n=[3], d_h=[2], seeds=[7])
    y_both = both(xq, ctx)[0]
    y_alone = alone(xq[:1], ctx[:1, ..., :3, :])[0]
    assert torch.allclose(y_both, y_alone, atol=1e-6)
    # negative control: the same weights without the masks give another answer
    both.head_mask.fill_(1.0)
    both.dh_mask.fill_(1.0)
    both.ctx_bias.zero_()
    with torch.no_grad():
        both.W_Q[0].normal_()  # padded entries no longer zero
    assert not torch.allclose(both(xq, ctx)[0], y_alone, atol=1e-3)


def test_padding_gets_no_gradient_and_masked_tokens_no_weight():
    xq, ctx, _ = data()
    m = BatchedAttention(d_in=6, d=6, d_out=3, H=[1, 3], n=[2, 5], d_h=[1, 4], seeds=[0, 1])
    out, s = m(xq, ctx, scores=True)
    out.sum().backward()
    assert torch.all(m.W_Q.grad[0, 1:] == 0) and torch.all(m.W_Q.grad[0, :, :, 1:] == 0)
    assert torch.all(m.W_K.grad[0, :, :, 1:] == 0) and torch.all(m.W_O.grad[0, 1:] == 0)
    assert torch.all(s[0, :, :, 2:] == 0) and torch.allclose(s.sum(-1)[1], torch.ones(5, 3))
    assert torch.any(m.W_Q.grad[1, 2] != 0)


def test_layer_without_embedding_is_eqs_1_to_6():
    xq, _, ctx = data(M=1, n=3)
    m = BatchedAttention(d_in=6, d=6, d_out=2, H=[2], n=[3], d_h=[3], seeds=[3], embedding=False)
    w = m.export_layer(0)
    E, e = ctx[0].double().numpy(), xq[0].double().numpy()
    ref = forward_torch(E, e, w["W_Q"], w["W_K"], w["W_V"], w["W_O"], w["W_D"], device="cpu").numpy()
    ref = ref + w["b_O"] @ w["W_D"] + w["b_D"]
    assert np.allclose(m(xq, ctx)[0].detach().double().numpy(), ref, atol=1e-5)


def test_same_seed_same_init_and_bad_sizes():
    a = BatchedAttention(d_in=4, d=4, d_out=2, H=[2], n=[2], d_h=[2], seeds=[5])
    b = BatchedAttention(d_in=4, d=4, d_out=2, H=[2], n=[2], d_h=[2], seeds=[5])
    c = BatchedAttention(d_in=4, d=4, d_out=2, H=[2], n=[2], d_h=[2], seeds=[6])
    assert torch.equal(a.W_Q, b.W_Q) and not torch.equal(a.W_Q, c.W_Q)
    with pytest.raises(InvalidInstance):
        BatchedAttention(d_in=4, d=4, d_out=2, H=[0], n=[2], d_h=[2], seeds=[5])
    with pytest.raises(InvalidInstance):
        BatchedAttention(d_in=4, d=4, d_out=2, H=[1, 2], n=[2], d_h=[2], seeds=[5])
    with pytest.raises(InvalidInstance):
        BatchedAttention(d_in=3, d=4, d_out=2, H=[1], n=[2], d_h=[2], seeds=[5], embedding=False)
