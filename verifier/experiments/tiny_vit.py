"""Table 1's "trained ViT layer": a small ViT trained here, on real images.

The paper read the first layer of a ViT-Base pre-trained on ImageNet; those
weights would need a download.  Instead a ViT of the transformers library
(``ViTForImageClassification``: [CLS] token, learned positions, pre-LN
encoder layers, a linear head on [CLS]) is trained from scratch on
scikit-learn's 1,797 handwritten digits (8 x 8 grey, all distinct): patch
2 x 2, so n = 16 patches + [CLS] = 17 tokens, width d = 64, 4 heads, 2
layers; Adam, full passes in minibatches, until the training accuracy
reaches ``target`` or ``steps`` run out.  The tokens after its first layer
are the "trained" column; so this column has n = 17, d = 64 and T = 1,797
(not ViT-Base's 197 and 768).

>>> (TINY["image_size"] // TINY["patch_size"]) ** 2 + 1, TINY["hidden_size"]  # n, d
(17, 64)
"""
from __future__ import annotations

import torch

__all__ = ["digit_images", "train_tiny_vit", "trained_vit_tokens"]

TINY = dict(image_size=8, patch_size=2, num_channels=1, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=128)


def digit_images() -> tuple[torch.Tensor, torch.Tensor]:
    """(1797, 1, 8, 8) pixels normalised to [-1, 1], and the labels."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = torch.tensor(data.images, dtype=torch.float32)[:, None] / 16.0
    return (x - 0.5) / 0.5, torch.tensor(data.target)


def train_tiny_vit(x: torch.Tensor, y: torch.Tensor, *, seed: int = 0, steps: int = 600, batch: int = 128,
                   lr: float = 3e-3, target: float = 0.99, log=None):
    """Train the small ViT; returns (model, training accuracy, steps run)."""
    from transformers import ViTConfig, ViTForImageClassification

    torch.manual_seed(seed)
    model = ViTForImageClassification(ViTConfig(**TINY, num_labels=int(y.max()) + 1))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    acc, step = 0.0, 0
    while step < steps:
        model.train()
        for idx in torch.randperm(len(x), generator=g).split(batch):
            loss = torch.nn.functional.cross_entropy(model(pixel_values=x[idx]).logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step >= steps:
                break
        model.eval()
        with torch.no_grad():
            acc = float((model(pixel_values=x).logits.argmax(-1) == y).float().mean())
        if log is not None:
            log(f"  tiny ViT: step {step}, training accuracy {acc:.4f}")
        if acc >= target:
            break
    return model.eval(), acc, step


def trained_vit_tokens(model, x: torch.Tensor) -> torch.Tensor:
    """(T, 17, 64) tokens after the first encoder layer."""
    with torch.no_grad():
        return model.vit(pixel_values=x, output_hidden_states=True).hidden_states[1]
