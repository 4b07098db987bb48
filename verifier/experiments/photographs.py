"""Real photographs that ship inside a pip package, made into ViT inputs.

The paper (Sec. 5.1) used 2000 ImageNet images; nothing may be downloaded
here, so the photographs are the natural images in scikit-image's data module
(astronaut, camera, cat, coffee, rocket, the Hubble deep field, ...) and the
200 face photographs of its LFW subset.  Distinct inputs come from random
crops (a square of 35-100 % of the shorter side at a random place), random
horizontal flips and the rescaling to 224 x 224 that every crop goes through;
grey images are repeated over the three channels.  Pixels are normalised as
the ViT processor does: (x - 0.5) / 0.5 per channel.  Same seed => same
inputs.  So the inputs are real photographs, but far fewer distinct scenes
than 2000 ImageNet images: nearby crops of one scene are correlated, which
can only make independence harder (a conservative stand-in).

>>> names = photograph_names()
>>> "astronaut" in names and len(names) >= 10
True
"""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["photograph_names", "load_photograph", "photograph_inputs", "photograph_crops"]

#: Photographs of scikit-image's data module that ship with the package (no
#: fetch): natural scenes, not drawings or synthetic test patterns.
PHOTOGRAPHS = ("astronaut", "camera", "chelsea", "coffee", "rocket", "hubble_deep_field",
               "immunohistochemistry", "retina", "brick", "grass", "gravel", "moon", "coins",
               "clock", "motorcycle_left", "motorcycle_right")
LFW = "lfw_subset"  # 200 face photographs, 25 x 25 grey


def photograph_names() -> tuple[str, ...]:
    return PHOTOGRAPHS + (LFW,)


def load_photograph(name: str) -> np.ndarray | list[np.ndarray]:
    """(H, W, 3) floats in [0, 1]; the LFW subset gives a list of 200 faces."""
    import skimage.data as data
    from skimage import img_as_float

    if name == LFW:
        return [np.repeat(img_as_float(f)[:, :, None], 3, axis=2) for f in data.lfw_subset()]
    if name.startswith("motorcycle_"):
        left, right, _ = data.stereo_motorcycle()
        img = left if name.endswith("left") else right
    else:
        img = getattr(data, name)()
    img = img_as_float(img)
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    return img[:, :, :3]


def _crop(img: np.ndarray, rng: np.random.Generator, size: int, min_side: int = 8) -> tuple[torch.Tensor, int]:
    h, w, _ = img.shape
    lo = min(1.0, max(0.35, min_side / min(h, w)))
    side = int(round(min(h, w) * rng.uniform(lo, 1.0)))
    side = max(side, 8)
    top, left = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
    patch = torch.from_numpy(np.ascontiguousarray(img[top:top + side, left:left + side]))
    patch = patch.permute(2, 0, 1)[None].float()
    if rng.random() < 0.5:
        patch = patch.flip(-1)
    out = torch.nn.functional.interpolate(patch, size=(size, size), mode="bilinear",
                                          align_corners=False, antialias=True)
    return out[0].clamp(0.0, 1.0), side


def photograph_inputs(T: int, *, seed: int = 0, size: int = 224) -> tuple[torch.Tensor, list[str]]:
    """T distinct inputs (T, 3, size, size) float32, normalised to [-1, 1],
    and the name of the photograph each one was cropped from.  The scenes are
    used in turn (one LFW face counts as one scene), so every scene appears."""
    x, crops = photograph_crops(T, seed=seed, size=size)
    return x, [c["scene"] for c in crops]


def photograph_crops(T: int, *, seed: int = 0, size: int = 224, upsample: bool = True
                     ) -> tuple[torch.Tensor, list[dict]]:
    """As :func:`photograph_inputs`, with each crop's ``scene`` and ``side``
    (pixels before the rescaling to ``size``).  ``upsample=False``: as
    ImageNet's ViT inputs (photographs of a few hundred pixels resized down
    to 224), no crop is enlarged: every crop's side is at least ``size`` where
    the photograph allows, and the 25 x 25 LFW faces are left out (Table 1's
    diagnosis: enlarged crops lose the high frequencies that keep the queries
    independent at float32 precision)."""
    rng = np.random.default_rng([seed, 224])
    loaded: dict = {}

    def scene(name):
        if name not in loaded:
            loaded[name] = load_photograph(name)
        return loaded[name]

    order = rng.permutation(200)  # the LFW subset's 200 faces
    pixels, crops = [], []
    slots = len(PHOTOGRAPHS) + (1 if upsample else 0)
    for t in range(T):
        slot = t % slots
        if slot < len(PHOTOGRAPHS):
            name = PHOTOGRAPHS[slot]
            img = scene(name)
        else:
            face = int(order[(t // slots) % 200])
            name, img = f"{LFW}[{face}]", scene(LFW)[face]
        px, side = _crop(img, rng, size, min_side=8 if upsample else size)
        pixels.append(px)
        crops.append({"scene": name, "side": side})
    x = torch.stack(pixels)
    return (x - 0.5) / 0.5, crops
