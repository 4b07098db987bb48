"""The authors' model (Sec. 5.2, App. A), many independent copies in one batched computation.

One copy ("replica") is: a learned linear embedding d_in -> d (with bias) plus
the sinusoidal positional encoding (query at position 0, context token j at
position j); one attention layer with H heads, key/query dimension d_h, value
dimension d_v = 1 per head, scores scaled by 1/sqrt(d), the query attending
only to its n context tokens (never to itself); an output projection H -> d
(with bias), no residual, no LayerNorm; a linear decoder d -> d_out (with bias)
read at the query.  With ``embedding=False`` the raw tokens enter Eq. (1)
directly: the layer of Eqs. (1)-(6) that Prop. 1's construction builds.

Replicas differ in H, n and d_h (and in their data and seed); they are padded
to the largest and masked so that each computes exactly its own model:

* heads h >= H of a replica: their outputs are multiplied by 0 before the
  output projection (zero output rows), so they contribute nothing and get
  zero gradients;
* key/query columns k >= d_h: the queries' projections are multiplied by 0
  (zero-padded d_h), so neither W_Q nor W_K gets gradient there;
* context tokens j >= n: logits set to -inf (masked), so softmax ignores them.

Initialisation is per replica at its OWN sizes, from a private generator of
its seed (float64 on the CPU, then float32 on the device): xavier-uniform for
W_Q, W_K, W_V as in ``torch.nn.MultiheadAttention``; ``torch.nn.Linear``'s
default (U(+-1/sqrt(fan_in))) for the embedding, output projection and
decoder.  Padded entries are zero.

>>> import torch
>>> m = BatchedAttention(d_in=4, d=4, d_out=3, H=[1, 2], n=[2, 3], d_h=[2, 4], seeds=[0, 0])
>>> xq, ctx = torch.rand(2, 5, 4), torch.rand(2, 3, 4)
>>> m(xq, ctx).shape, m.head_mask.tolist()
(torch.Size([2, 5, 3]), [[1.0, 0.0], [1.0, 1.0]])
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch

from verifier.data.instances import sinusoidal_encoding
from verifier.errors import InvalidInstance

PARAMETERS = ("W_E", "b_E", "W_Q", "W_K", "W_V", "W_O", "b_O", "W_D", "b_D")


def _positive(name, values):
    for v in values:
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidInstance(f"{name} = {v!r} must be a positive integer")


class BatchedAttention(torch.nn.Module):
    """M replicas; ``H``, ``n``, ``d_h``, ``seeds``: one entry per replica.

    forward(xq (M, B, d_in), ctx (M, n_max, d_in) shared or (M, B, n_max, d_in))
    -> logits (M, B, d_out); with ``scores=True`` also the softmax (M, B, H_max, n_max).
    """

    def __init__(self, *, d_in: int, d: int, d_out: int, H, n, d_h, seeds, embedding: bool = True,
                 logit_scale: float | None = None, device=None):
        super().__init__()
        M = len(seeds)
        H, n, d_h = list(H), list(n), list(d_h)
        if not (len(H) == len(n) == len(d_h) == M) or M == 0:
            raise InvalidInstance(f"H, n, d_h, seeds need one entry per replica (got {len(H)}, {len(n)}, "
                                  f"{len(d_h)}, {M})")
        _positive("H", H), _positive("n", n), _positive("d_h", d_h), _positive("d", (d, d_in, d_out))
        if not embedding and d_in != d:
            raise InvalidInstance(f"without an embedding d_in = {d_in} must equal d = {d}")
        self.sizes = dict(d_in=d_in, d=d, d_out=d_out, H=H, n=n, d_h=d_h, seeds=[int(s) for s in seeds])
        self.embedding = embedding
        self.scale = 1.0 / math.sqrt(d) if logit_scale is None else float(logit_scale)
        Hm, nm, km = max(H), max(n), max(d_h)
        shapes = {"W_E": (d_in, d), "b_E": (d,), "W_Q": (Hm, d, km), "W_K": (Hm, d, km), "W_V": (Hm, d),
                  "W_O": (Hm, d), "b_O": (d,), "W_D": (d, d_out), "b_D": (d_out,)}
        init = {k: np.zeros((M,) + s) for k, s in shapes.items()}
        for m in range(M):
            for k, v in _init_one(d_in, d, d_out, H[m], d_h[m], seeds[m]).items():
                init[k][(m,) + tuple(slice(0, s) for s in v.shape)] = v
        device = torch.device(device) if device is not None else torch.device("cpu")
        for k in PARAMETERS:
            if k in ("W_E", "b_E") and not embedding:
                continue
            setattr(self, k, torch.nn.Parameter(torch.as_tensor(init[k], dtype=torch.float32, device=device)))
        ar = torch.arange

        def mask(sizes, width):
            return (ar(width)[None, :] < torch.tensor(sizes)[:, None]).to(torch.float32).to(device)

        self.register_buffer("head_mask", mask(H, Hm))
        self.register_buffer("dh_mask", mask(d_h, km))
        self.register_buffer("ctx_bias", torch.where(mask(n, nm) > 0, 0.0, float("-inf")))
        pe = torch.as_tensor(sinusoidal_encoding(nm + 1, d), dtype=torch.float32, device=device)
        self.register_buffer("pe", pe if embedding else torch.zeros_like(pe))

    def embed(self, x, positions):
        """x (M, [B,] P, d_in) at ``positions`` (a slice of the encoding) -> (M, [B,] P, d): one
        batched product per replica over all its tokens (a broadcast product of (1 x d_in) rows
        is ~10x slower on the CPU, forward and backward)."""
        if not self.embedding:
            return x
        M, d_in = x.shape[0], x.shape[-1]
        flat = torch.baddbmm(self.b_E[:, None, :], x.reshape(M, -1, d_in), self.W_E)
        return flat.reshape(x.shape[:-1] + (self.W_E.shape[-1],)) + positions

    def forward(self, xq, ctx, *, scores: bool = False):
        q = self.embed(xq[:, :, None, :], self.pe[:1])[:, :, 0]  # (M, B, d), position 0
        c = self.embed(ctx, self.pe[1:ctx.shape[-2] + 1])  # (M, [B,] n, d), positions 1..n
        W = torch.einsum("mhdk,mhek->mhde", self.W_Q * self.dh_mask[:, None, None, :], self.W_K)  # W_Q W_K^T
        W = W * self.scale
        if c.dim() == 3:  # shared context: a = q^T (W c^T), one product per replica
            a = torch.einsum("mbd,mhdn->mbhn", q, torch.einsum("mhde,mne->mhdn", W, c))  # Eq. (1)
        else:
            a = torch.einsum("mbhe,mbne->mbhn", torch.einsum("mbd,mhde->mbhe", q, W), c)  # Eq. (1)
        s = masked_softmax(a + self.ctx_bias[:, None, None, :])  # Eq. (2), the query masked out
        v = torch.einsum("mnd,mhd->mhn" if c.dim() == 3 else "mbnd,mhd->mbhn", c, self.W_V)  # d_v = 1
        o = (s * (v[:, None] if c.dim() == 3 else v)).sum(-1)  # Eqs. (3)-(4): (M, B, H)
        o = o * self.head_mask[:, None, :]  # padded heads: zero output rows
        y = torch.einsum("mbh,mhd->mbd", o, self.W_O) + self.b_O[:, None, :]  # Eq. (5)
        out = y @ self.W_D + self.b_D[:, None, :]  # Eq. (6), the decoder at the query
        return (out, s) if scores else out

    def subset(self, idx: list[int]) -> "BatchedAttention":
        """A model of the replicas ``idx`` only (in that order), their weights copied; the
        padding widths stay those of this model (a padded head or column computes nothing)."""
        new = copy.copy(self)
        torch.nn.Module.__init__(new)
        new.sizes = {k: [v[i] for i in idx] if isinstance(v, list) else v for k, v in self.sizes.items()}
        new.embedding, new.scale = self.embedding, self.scale
        ix = torch.tensor(idx, device=self.head_mask.device)
        for k, p in self.named_parameters():
            setattr(new, k, torch.nn.Parameter(p.detach()[ix].clone()))
        for k in ("head_mask", "dh_mask", "ctx_bias"):
            new.register_buffer(k, getattr(self, k)[ix])
        new.register_buffer("pe", self.pe)
        return new

    def state(self) -> dict:
        return {k: p.detach().clone() for k, p in self.named_parameters()}

    def export_layer(self, m: int) -> dict:
        """float64 numpy weights of replica ``m`` at its own sizes, for a layer without
        embedding: (W_Q, W_K (H, d, d_h) with the logit scale folded into W_K, W_V (H, d, 1),
        W_O (H, d), W_D, b_O, b_D) in :mod:`verifier.model.mha` order."""
        H, k = self.sizes["H"][m], self.sizes["d_h"][m]

        def g(name):
            return getattr(self, name)[m].detach().cpu().double().numpy()

        return {"W_Q": g("W_Q")[:H, :, :k], "W_K": g("W_K")[:H, :, :k] * self.scale,
                "W_V": g("W_V")[:H, :, None], "W_O": g("W_O")[:H], "W_D": g("W_D"),
                "b_O": g("b_O"), "b_D": g("b_D")}


def masked_softmax(a):
    """softmax over the last axis, written out (torch's CPU kernel is slow for a last
    axis of a few entries); -inf entries get weight 0."""
    e = torch.exp(a - a.amax(-1, keepdim=True).detach())
    return e / e.sum(-1, keepdim=True)


def _init_one(d_in: int, d: int, d_out: int, H: int, d_h: int, seed: int) -> dict:
    """One replica's initial weights at its own sizes (float64, from its own seed)."""
    g = np.random.default_rng([int(seed), H, d_h, d, d_out, 0x1A7])

    def uniform(shape, bound):
        return g.uniform(-bound, bound, shape)

    xav_qk = math.sqrt(6.0 / (d + H * d_h))  # in_proj of torch's MultiheadAttention (q, k rows)
    return {"W_E": uniform((d_in, d), 1 / math.sqrt(d_in)), "b_E": uniform((d,), 1 / math.sqrt(d_in)),
            "W_Q": uniform((H, d, d_h), xav_qk), "W_K": uniform((H, d, d_h), xav_qk),
            "W_V": uniform((H, d), math.sqrt(6.0 / (d + H))),
            "W_O": uniform((H, d), 1 / math.sqrt(H)), "b_O": uniform((d,), 1 / math.sqrt(H)),
            "W_D": uniform((d, d_out), 1 / math.sqrt(d)), "b_D": uniform((d_out,), 1 / math.sqrt(d))}
