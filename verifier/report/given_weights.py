"""The report's section "Given weights": the statements about a user's own
layer (``weights_rank``, ``weights_memorize``, ``weights_classify``) run as a
user runs them, through the files:

* the verifier's own constructions: Theorem 1's weights on two instances
  (regression labels; three class scores), written by ``--save-weights``
  to a temporary file and read back through ``--weights``
  (:func:`verifier.data.weights.read_weights`: float64 weights and data read
  at their precision, every verdict about every value they stand for);
* a random ViT-base layer (``transformers.ViTConfig()``, one encoder layer,
  random weights, built from its config and saved to a temporary directory:
  never downloaded) read through ``--hf-model DIR --layer 0`` on a few
  images of N(0, 1) pixels: ``weights_rank``.  Skipped in quick mode, and
  without transformers.

Every row carries the verdict, the certified numbers (rounded outward by the
report's display rules) and the command that reproduces it.
"""
from __future__ import annotations

import html
import importlib.util
import os
import tempfile

import numpy as np

from verifier.statements import registry

__all__ = ["run_section", "markdown_section", "insert_html", "CONSTRUCTIONS", "VIT_IMAGES"]

#: (name, theorem1's instance options) whose weights are re-read
CONSTRUCTIONS = (("Theorem 1, H=3 n=3 d=5 (labels in R)", dict(H=3, n=3, d=5)),
                 ("Theorem 1, H=2 n=3 d=6, 3 class scores", dict(H=2, n=3, d=6, d_out=3)))
STATEMENTS = ("weights_rank", "weights_memorize", "weights_classify")
VIT_IMAGES = 12


def _summary(ev) -> dict:
    m = ev.measured or {}
    keys = ("largest T' certified", "T", "structural cap rank(Z) <= (ANY weights)", "max |yhat - y| <=", "tol",
            "certified correct", "certified wrong", "undecided")
    return {"statement": ev.statement, "verdict": ev.verdict, "certified": ev.certified,
            **{k: m[k] for k in keys if k in m}}


def _constructions(folder: str, seed: int) -> list[dict]:
    from verifier.data.weights import dataset_instance, read_weights
    from verifier.statements.runner import build_instance, run_check

    rows = []
    for name, opts in CONSTRUCTIONS:
        path = os.path.join(folder, "saved.npz")
        inst = build_instance("theorem1", **opts, seed=seed)
        saved = run_check("theorem1", inst, seed=seed, save_weights=path)
        w = read_weights(path, required=("W_Q", "W_K", "W_V", "W_O", "W_D"))
        data = dataset_instance(w, seed=seed)  # as check --weights reads a weights file's dataset
        flags = " ".join(f"--{'dout' if k == 'd_out' else k} {v}" for k, v in opts.items())
        row = {"name": name, "theorem1": saved.verdict, "reading": data.precision.describe("contexts", "queries"),
               "checks": [], "command": f"mha-verify check theorem1 {flags} --seed {seed} --save-weights saved.npz"
                                        "; mha-verify check <statement> --weights saved.npz"}
        for sid in STATEMENTS:
            row["checks"].append(_summary(run_check(sid, data, seed=seed, weights=w)))
        rows.append(row)
    return rows


def _vit(folder: str, seed: int) -> dict:
    import torch
    from transformers import ViTConfig, ViTModel
    from transformers.utils import logging as hf_logging

    from verifier.data.hf_layer import load_hf_layer
    from verifier.statements.runner import run_check

    hf_logging.set_verbosity_error()  # the report prints one line per phase: no bars
    hf_logging.disable_progress_bar()
    torch.manual_seed(seed)
    cfg = ViTConfig(num_hidden_layers=1)
    ViTModel(cfg, add_pooling_layer=False).save_pretrained(os.path.join(folder, "vit"))
    pixels = np.random.default_rng(seed).standard_normal((VIT_IMAGES, 3, cfg.image_size, cfg.image_size))
    np.savez(os.path.join(folder, "images.npz"), pixel_values=pixels.astype(np.float32))
    inst, w = load_hf_layer(os.path.join(folder, "vit"), 0, os.path.join(folder, "images.npz"))
    ev = run_check("weights_rank", inst, seed=seed, weights=w)
    return {"name": f"random ViT-base layer 0 (H = {w.H}, n = {inst.n}, d = {inst.d}), {VIT_IMAGES} images",
            "reading": inst.precision.describe("contexts", "queries"), "checks": [_summary(ev)],
            "command": "mha-verify check weights_rank --hf-model vit --layer 0 --data images.npz"}


def run_section(mode: str, *, seed: int) -> dict:
    """The section's rows; a failure is shown in its row, never hidden."""
    registry.load_all()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            rows += _constructions(folder, seed)
        except Exception as exc:  # noqa: BLE001 - the report runs to completion; the row says what failed
            rows.append({"name": "the verifier's own weights", "error": f"{type(exc).__name__}: {exc}"})
        if mode == "quick":
            rows.append({"name": "random ViT-base layer", "skipped": "quick mode (a ViT-base forward and save)"})
        elif importlib.util.find_spec("transformers") is None:
            rows.append({"name": "random ViT-base layer", "skipped": "needs transformers (pip install transformers)"})
        else:
            try:
                rows.append(_vit(folder, seed))
            except Exception as exc:  # noqa: BLE001
                rows.append({"name": "random ViT-base layer", "error": f"{type(exc).__name__}: {exc}"})
    bad = any("error" in r or any(c["verdict"] == "error" for c in r.get("checks", ())) for r in rows)
    return {"rows": rows, "error": bad}


def _num(x) -> str:
    """A number as the report prints it (display.stable may have made it a string such as '< 1e-12')."""
    return x if isinstance(x, str) else f"{x:.4g}"


def _cell(c: dict) -> str:
    parts = [c["verdict"] + (" (certified)" if c.get("certified") else "")]
    if "largest T' certified" in c:
        k, cap = c["largest T' certified"], c.get("structural cap rank(Z) <= (ANY weights)")
        parts.append(f"rank(Z) >= {k} of T = {c.get('T')}, cap {cap}")
    if "max |yhat - y| <=" in c:
        parts.append(f"max abs(yhat - y) <= {_num(c['max |yhat - y| <='])} (tol {_num(c.get('tol', 0))})")
    if "certified correct" in c:
        parts.append(f"{c['certified correct']} correct, {c.get('certified wrong')} wrong, "
                     f"{c.get('undecided')} undecided")
    return "; ".join(parts)


def markdown_section(section: dict) -> str:
    lines = ["", "## Given weights: a user's own layer", "",
             "The statements about GIVEN weights, run through the files a user gives: the verifier's own "
             "constructions written by `--save-weights` and read back through `--weights` (float64 weights and data "
             "at their precision: each verdict holds for every value they stand for), and a random ViT-base layer "
             "read through `--hf-model` (float32 weights and tokens at their precision).", "",
             "| weights | reading | weights_rank | weights_memorize | weights_classify |", "|---|---|---|---|---|"]
    for r in section.get("rows", []):
        if "checks" not in r:
            lines.append(f"| {r['name']} | {r.get('skipped') or 'error: ' + r.get('error', '')} | | | |")
            continue
        cells = {c["statement"]: _cell(c) for c in r["checks"]}
        lines.append(f"| {r['name']} | {r['reading']} | " + " | ".join(cells.get(s, "(not applicable: no readout)")
                                                                       for s in STATEMENTS) + " |")
    lines += ["", "Reproduce: " + "; ".join(f"`{r['command']}`" for r in section.get("rows", []) if "command" in r),
              ""]
    return "\n".join(lines) + "\n"


def insert_html(page: str, section: dict) -> str:
    md = markdown_section(section).strip().splitlines()
    rows = [[html.escape(c.strip()) for c in line.strip("|").split("|")] for line in md
            if line.startswith("|") and not line.startswith("|---")]
    body = "".join("<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{c}</{'th' if i == 0 else 'td'}>" for c in r)
                   + "</tr>" for i, r in enumerate(rows))
    text = f"<p>{html.escape(md[2])}</p>" if len(md) > 2 else ""
    title = html.escape(md[0].lstrip("# "))
    block = f"<section id='given-weights'><h2>{title}</h2>{text}<table>{body}</table></section>"
    cut = page.rfind("</body>")
    return page[:cut] + block + page[cut:] if cut >= 0 else page + block
