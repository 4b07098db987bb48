"""The layers of Table 1 (Sec. 5.1): a ViT-Base built from its configuration.

No weights are downloaded: ``transformers.ViTConfig()`` is ViT-Base/16 at
224 x 224 (d = 768, 196 patches + [CLS] = n = 197 tokens, 12 heads), and
``ViTModel(config)`` initialises it randomly (truncated normal, std 0.02, as
the library does).  The tokens of every image at four places, as in the
authors' notebook:

* ``embedding``: patch embedding + learned positions, [CLS] at position 0;
* ``random attention``: ``x + MHA(LN(x))`` with one randomly initialised
  attention head of width 768 (``torch.nn.MultiheadAttention``, PyTorch's
  initialisation) and a LayerNorm without affine parameters;
* ``random ViT layer``: the output of the first encoder layer of the random
  ViT-Base (attention, MLP, LayerNorms, residuals);
* ``trained ViT layer``: the first layer of a small ViT trained here, see
  :mod:`verifier.experiments.tiny_vit` (the paper took ImageNet-trained
  ViT-Base weights, which would need a download).

The query of an image is its [CLS] token (row 0), its context all n = 197
tokens, [CLS] included (the notebook tested the full 197 x 768 matrix).
Forward passes run in float32, in batches, under ``torch.no_grad``.
"""
from __future__ import annotations

import torch

__all__ = ["VIT_LAYERS", "vit_base_tokens", "random_vit"]

VIT_LAYERS = ("embedding", "random attention", "random ViT layer")


def random_vit(seed: int, *, layers: int = 1, **config):
    """A randomly initialised ViT (ViT-Base by default) with ``layers``
    encoder layers (only the first is read)."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(seed)
    cfg = ViTConfig(num_hidden_layers=layers, **config)
    return ViTModel(cfg, add_pooling_layer=False).eval()


def _random_attention(d: int, seed: int):
    g = torch.Generator().manual_seed(seed + 7919)
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
    att = torch.nn.MultiheadAttention(d, num_heads=1, batch_first=True).eval()
    norm = torch.nn.LayerNorm(d, elementwise_affine=False)
    return att, norm


def vit_base_tokens(pixels: torch.Tensor, *, seed: int = 0, batch: int = 16,
                    layers=VIT_LAYERS, log=None, **config) -> dict[str, torch.Tensor]:
    """layer name -> (T, n, d) float32 tokens of every image, for the layers
    asked.  ``config``: ViTConfig overrides (tests use a small ViT)."""
    model = random_vit(seed, **config)
    att, norm = _random_attention(model.config.hidden_size, seed)
    out: dict[str, list[torch.Tensor]] = {name: [] for name in layers}
    with torch.no_grad():
        for s in range(0, pixels.shape[0], batch):
            x = pixels[s:s + batch]
            hidden = model(pixel_values=x, output_hidden_states=True).hidden_states
            emb = hidden[0]
            if "embedding" in out:
                out["embedding"].append(emb.clone())
            if "random attention" in out:
                h = norm(emb)
                out["random attention"].append(emb + att(h, h, h, need_weights=False)[0])
            if "random ViT layer" in out:
                out["random ViT layer"].append(hidden[1])
            if log is not None:
                log(f"  ViT forward: {min(s + batch, pixels.shape[0])}/{pixels.shape[0]} images")
    return {name: torch.cat(parts) for name, parts in out.items()}
