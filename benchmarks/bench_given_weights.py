"""weights_rank on a transformers layer at ViT-base size, against one SVD of Z, in ONE run.

    nice -n 10 python benchmarks/bench_given_weights.py [--T 757] [--device auto|cpu|cuda]
        [--out reports/benchmarks/given_weights]

A ViT-base (``transformers.ViTConfig()``: d = 768, 12 heads, d_h = 64, n = 197
tokens at 224 x 224) with ONE encoder layer and random weights is built from
its config and saved to a temporary directory (never downloaded); T images of
N(0, 1) pixels (seeded) go through ``--hf-model DIR --layer 0``
(:func:`verifier.data.hf_layer.load_hf_layer`: the tokens of layer 0's
attention, float32, and its W_Q, W_K, b_Q, read at float32's precision).
Then, in this process:

* svd: one float64 SVD of Z's midpoint (T x H d, singular values only): the
  reference (``torch.linalg.svdvals`` on CUDA with ``--device cuda``);
* certificate: the whole ``weights_rank`` checker (Z's midpoint, the pivoted
  QR that chooses the minor's columns, Z's minor enclosed over every value
  the tokens and weights stand for, ||I - R A_minor||_inf < 1, the
  structural caps), and its phases;
* ratio certificate / svd (issue 37: "certificates at about one SVD of Z").

The extraction (the model's forward on T images) is timed apart: it is the
model's own cost, not the verifier's.  The machine is shared: only the ratio
measured in the same run means anything; the load average is recorded.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, ROOT)


def _timed(fn, backend=None):
    from verifier.arith.backend import get_backend

    t = time.perf_counter()
    out = fn()
    if backend is not None:
        get_backend(backend).synchronize()
    return out, time.perf_counter() - t


def build_layer(folder: str, T: int, seed: int, **config) -> tuple[str, str]:
    """A random one-layer ViT saved in ``folder`` and T images beside it."""
    import numpy as np
    import torch
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(seed)
    cfg = ViTConfig(num_hidden_layers=1, **config)
    ViTModel(cfg, add_pooling_layer=False).save_pretrained(os.path.join(folder, "vit"))
    pixels = np.random.default_rng(seed).standard_normal((T, cfg.num_channels, cfg.image_size, cfg.image_size))
    np.savez(os.path.join(folder, "images.npz"), pixel_values=pixels.astype(np.float32))
    return os.path.join(folder, "vit"), os.path.join(folder, "images.npz")


def _svd(Z, backend: str) -> tuple[float, float]:
    import numpy as np

    if backend == "torch-cuda":
        import torch

        Zt = torch.as_tensor(Z, device="cuda")
        s, sec = _timed(lambda: torch.linalg.svdvals(Zt), backend)
        return sec, float(s[-1])
    s, sec = _timed(lambda: np.linalg.svd(Z, compute_uv=False))
    return sec, float(s[-1])


def run(T: int, device: str, seed: int = 0, **config) -> dict:
    import proofs.mahdavi2024.weights_common as common
    import proofs.mahdavi2024.weights_rank_readout_capacity as wr
    from proofs.mahdavi2024.weights_common import feature_midpoint
    from verifier.arith.backend import cuda_available
    from verifier.data.hf_layer import load_hf_layer

    backend = "torch-cuda" if device == "cuda" or (device == "auto" and cuda_available()) else "numpy"
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        (model, images), t_build = _timed(lambda: build_layer(folder, T, seed, **config))
        (inst, w), t_extract = _timed(lambda: load_hf_layer(model, 0, images))
    row = {"T": inst.T, "n": inst.n, "d": inst.d, "H": w.H, "d_h": w.d_h, "device": device, "backend": backend,
           "build_model_s": t_build, "extract_s": t_extract, "reading": inst.precision.describe("contexts", "queries")}
    small = inst.subset(list(range(min(8, inst.T))))  # warm-up: imports, BLAS threads, the first-call costs
    wr.weights_rank(small, weights=w, backend=backend)
    Zmid, t_mid = _timed(lambda: feature_midpoint(inst, w))
    row["Z_shape"] = list(Zmid.shape)
    row["svd_s"], row["sigma_min_float"] = _svd(Zmid, backend)
    del Zmid
    phases = {"Z midpoint": (common, "feature_midpoint"), "choice + enclosure + bound": (common,
              "certify_rank_lower_bound_lazy"), "structural caps": (wr, "structural_rank_cap")}
    spent = dict.fromkeys(phases, 0.0)
    saved = {k: getattr(mod, fn) for k, (mod, fn) in phases.items()}

    def timed(name):
        def call(*a, **kw):
            t = time.perf_counter()
            try:
                return saved[name](*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        return call

    for k, (mod, fn) in phases.items():
        setattr(mod, fn, timed(k))
    try:
        ev, sec = _timed(lambda: wr.weights_rank(inst, weights=w, backend=backend), backend)
    finally:
        for k, (mod, fn) in phases.items():
            setattr(mod, fn, saved[k])
    spent["other"] = max(0.0, sec - sum(spent.values()))
    row.update({"certificate_s": sec, "certificate_over_svd": sec / row["svd_s"], "verdict": ev.verdict,
                "certified_rank": ev.measured["largest T' certified"], "method": ev.method,
                "phases_s": spent, "phases_over_svd": {k: v / row["svd_s"] for k, v in spent.items()},
                "Z midpoint alone_s": t_mid, "load_avg_start": load0, "load_avg_end": os.getloadavg()[0]})
    return row


def markdown(row: dict) -> str:
    ph = ", ".join(f"{k} {v:.2f} s" for k, v in row["phases_s"].items())
    return "\n".join([
        "# weights_rank on a random ViT-base layer (--hf-model), against one SVD of Z",
        "",
        "Generated by `benchmarks/bench_given_weights.py` (one process; only the ratio is meaningful on a shared "
        "machine).",
        "",
        "| T | n | d | H | Z | device | SVD of Z | certificate | ratio | verdict | certified rank |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {row['T']} | {row['n']} | {row['d']} | {row['H']} | {row['Z_shape'][0]} x {row['Z_shape'][1]} | "
        f"{row['backend']} | {row['svd_s']:.2f} s | {row['certificate_s']:.2f} s | "
        f"{row['certificate_over_svd']:.2f}x | {row['verdict']} | {row['certified_rank']} |",
        "",
        f"Phases of the certificate: {ph}.  Extraction (model forward on the images, not the verifier's cost): "
        f"{row['extract_s']:.1f} s.  Reading: {row['reading']}.  Load average {row['load_avg_start']:.1f} -> "
        f"{row['load_avg_end']:.1f}.",
        ""])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=757)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(ROOT, "reports", "benchmarks", "given_weights"))
    ap.add_argument("--small", action="store_true", help="a small ViT (tests: d = 64, 4 heads, 32 x 32 images)")
    args = ap.parse_args()
    config = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, image_size=32, patch_size=8) \
        if args.small else {}
    row = run(args.T, args.device, args.seed, **config)
    print(json.dumps(row))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as fh:
        json.dump(row, fh, indent=1, sort_keys=True)
    with open(args.out + ".md", "w") as fh:
        fh.write(markdown(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
