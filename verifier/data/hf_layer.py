"""One attention layer of a transformers model directory, as the paper's layer
on the tokens it sees: ``--hf-model DIR --layer L``.

The model is read from a LOCAL directory (``from_pretrained(DIR,
local_files_only=True)``: never a download) of type ViT, BERT or GPT-2; the
user's inputs (``--data``: an .npz or .json with ``pixel_values`` (T, C, S,
S) for ViT, ``input_ids`` (T, S) for BERT and GPT-2, and optional
``labels``) are run through the model and the input of layer L's attention
is captured (after ViT's and GPT-2's LayerNorm; BERT's layers take the
hidden state as it is).  Each example's context E^(t) is the n tokens of
that input, its query e^(t) the [CLS] token (ViT, BERT: token 0) or the last
token (GPT-2, whose causal mask lets only the last token see every other).

Layer L's heads, in the paper's notation (Eq. 1, a = E W_K^h (W_Q^h)^T e):

* ``W_Q^h`` (d, d_h) is the query projection's rows of head h, transposed,
  times the attention scale 1/sqrt(d_h) (GPT-2: also 1/(L+1) when
  ``scale_attn_by_inverse_layer_idx``), enclosed in a ball (the scale is
  irrational);
* ``W_K^h`` likewise, without the scale;
* the query bias ``b_Q^h`` is kept (``GivenWeights`` ``b_Q``: the logits
  are E W_K^h (W_Q^h^T e + b_Q^h)); the key bias adds the same number to
  every logit of a context, which softmax ignores: it is dropped, exactly.

Numbers: the parameters are read at their dtype's precision (float32: half
an ulp each side; ``--exact-input``: as stored) and so are the captured
tokens (the model's float32 output: the intervals enclose the tokens torch
computed, not the exact real embedding of the inputs, whose rounding errors
are not bounded here).  Only ``weights_rank`` reads such a layer: the layer
has no readout W_D.
"""
from __future__ import annotations

import importlib.util
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.data.instances import from_arrays
from verifier.data.weights import check_memory, weights_from_arrays
from verifier.errors import InvalidInstance

__all__ = ["MODEL_TYPES", "load_hf_layer", "attention_scale"]

#: model type -> (input array name, query token: "first" or "last")
MODEL_TYPES = {"vit": ("pixel_values", "first"), "bert": ("input_ids", "first"), "gpt2": ("input_ids", "last")}
BATCH = 16


def _fail(msg: str):
    raise InvalidInstance(f"--hf-model: {msg}")


def _config(path: Path):
    if importlib.util.find_spec("transformers") is None:
        _fail("reading a transformers model needs transformers (pip install transformers)")
    if not path.is_dir():
        _fail(f"{path} is not a directory (a model saved with save_pretrained)")
    if not (path / "config.json").is_file():
        _fail(f"{path} has no config.json (a model saved with save_pretrained)")
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # one line per outcome: no config chatter, no progress bars
    hf_logging.disable_progress_bar()
    try:
        cfg = AutoConfig.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - a foreign or broken config: one line
        _fail(f"cannot read {path / 'config.json'}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    if cfg.model_type not in MODEL_TYPES:
        _fail(f"model type {cfg.model_type!r} is not one of {', '.join(MODEL_TYPES)}")
    if getattr(cfg, "position_embedding_type", "absolute") not in ("absolute", None):
        _fail(f"position_embedding_type {cfg.position_embedding_type!r}: only absolute positions are read")
    return cfg


def _sizes(cfg) -> tuple[int, int, int]:
    """(layers, heads, d)."""
    layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer")
    heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head")
    d = getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd")
    return int(layers), int(heads), int(d)


def attention_scale(cfg, layer: int, d_h: int) -> tuple[Fraction, Fraction]:
    """[lo, hi]: exact rationals around the logits' scale 1/sqrt(d_h) (GPT-2:
    ``scale_attn_weights``, ``scale_attn_by_inverse_layer_idx``)."""
    if cfg.model_type == "gpt2" and not getattr(cfg, "scale_attn_weights", True):
        lo = hi = Fraction(1)
    else:
        r = math.isqrt(d_h)
        if r * r == d_h:
            lo = hi = Fraction(1, r)
        else:  # 1/sqrt(d_h) between two rationals 2^-60 apart: s^2 d_h < 1 < (s + 2^-60)^2 d_h
            s = Fraction(math.isqrt((2**120) // d_h), 2**60)
            lo, hi = s, s + Fraction(1, 2**60)
            assert lo * lo * d_h <= 1 <= hi * hi * d_h
    if cfg.model_type == "gpt2" and getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
        lo, hi = lo / (layer + 1), hi / (layer + 1)
    return lo, hi


def _get(obj, path: str):
    for part in path.split("."):
        obj = obj[int(part)] if part.isdigit() else getattr(obj, part, None)
        if obj is None:
            return None
    return obj


#: where layer L's query/key projections live, by transformers version and model
_PLACES = (("layers.{L}.attention.q_proj", "layers.{L}.attention.k_proj"),  # ViT, transformers 5
           ("encoder.layer.{L}.attention.attention.query", "encoder.layer.{L}.attention.attention.key"),  # ViT 4
           ("encoder.layer.{L}.attention.self.query", "encoder.layer.{L}.attention.self.key"),  # BERT
           ("h.{L}.attn.c_attn", None))  # GPT-2 (Conv1D: [q | k | v] columns)


def _projections(model, layer: int, H: int, d: int):
    """(hook module, W_q (d, H d_h), b_q, W_k (d, H d_h), b_k) of layer ``layer``
    as float tensors x -> x W + b (nn.Linear's weight transposed; Conv1D's as it is)."""
    base = getattr(model, "base_model", model)
    for q_path, k_path in _PLACES:
        q = _get(base, q_path.format(L=layer))
        if q is None:
            continue
        if k_path is None:  # Conv1D: weight (d, 3 d)
            W, b = q.weight.detach(), q.bias.detach()
            return q, W[:, :d], b[:d], W[:, d:2 * d], b[d:2 * d]
        k = _get(base, k_path.format(L=layer))
        zero = q.weight.new_zeros(q.weight.shape[0])
        return (q, q.weight.detach().T, zero if q.bias is None else q.bias.detach(), k.weight.detach().T,
                zero if k.bias is None else k.bias.detach())
    _fail(f"cannot find layer {layer}'s attention projections in {type(model).__name__}")


def _inputs(data, cfg, *, exact_input: bool):
    from verifier.data.files import read_data_file

    name, _ = MODEL_TYPES[cfg.model_type]
    if data is None:
        _fail(f"needs --data with the inputs: an .npz with '{name}' (and optional 'labels')")
    f = read_data_file(data, required=(name,), optional=("labels",), exact_input=exact_input)
    x = f.values(name)
    if name == "pixel_values":
        size, ch = int(cfg.image_size), int(cfg.num_channels)
        if x.ndim != 4 or x.shape[1:] != (ch, size, size) or x.dtype.kind != "f":
            _fail(f"pixel_values has shape {x.shape} ({x.dtype.name}); expected floats (T, {ch}, {size}, {size})")
        n = (size // int(cfg.patch_size)) ** 2 + 1
    else:
        top = int(cfg.vocab_size)
        positions = int(getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions"))
        if x.ndim != 2 or x.dtype.kind not in "iu" or x.shape[1] > positions:
            _fail(f"input_ids has shape {x.shape} ({x.dtype.name}); expected integers (T, S) with S <= {positions}")
        if x.size and (int(x.min()) < 0 or int(x.max()) >= top):
            _fail(f"input_ids outside [0, {top}) (the vocabulary)")
        n = x.shape[1]
    if x.shape[0] < 1 or n < 1:
        _fail(f"{name} is empty (shape {x.shape})")
    return f, name, x, n


def _load_model(path: Path):
    import os

    from transformers import AutoModel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for kw in ({"dtype": "auto"}, {"torch_dtype": "auto"}):
        try:
            return AutoModel.from_pretrained(str(path), local_files_only=True, **kw).eval()
        except TypeError:
            continue
        except Exception as exc:  # noqa: BLE001 - missing or corrupt weights: one line
            _fail(f"cannot load {path}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    _fail(f"cannot load {path}")


def _capture(model, hook_module, x: np.ndarray, name: str) -> np.ndarray:
    """The tensor layer L's attention projects, for every example (T, n, d)."""
    import torch

    seen = []
    handle = hook_module.register_forward_pre_hook(lambda mod, args: seen.append(args[0].detach().float().clone()))
    parts = []
    try:
        with torch.no_grad():
            for s in range(0, x.shape[0], BATCH):
                seen.clear()
                batch = torch.from_numpy(np.ascontiguousarray(x[s:s + BATCH]))
                batch = batch.float() if name == "pixel_values" else batch.long()
                model(**{name: batch})
                parts.append(seen[0].numpy())
    finally:
        handle.remove()
    return np.concatenate(parts, axis=0)


def _heads(W, H: int, d_h: int) -> np.ndarray:
    """(d, H d_h) columns -> (H, d, d_h)."""
    return np.ascontiguousarray(W.reshape(W.shape[0], H, d_h).transpose(1, 0, 2))


def _scaled(a: np.ndarray, rad, lo: Fraction, hi: Fraction):
    """A ball around c a for every c in [lo, hi] and every value within ``rad`` of a."""
    from verifier.arith.backend import get_backend
    from verifier.arith.float_bounds import U, add_up, fl_up, up_scale

    if lo == hi and lo.numerator == 1 and lo.denominator & (lo.denominator - 1) == 0:  # a power of two: exact
        return a * float(lo), None if rad is None else rad * float(lo)
    b = get_backend("numpy")
    c = float((lo + hi) / 2)
    mid = a * c
    out = up_scale(b, np.abs(a), (hi - lo) + 2 * U * Fraction(fl_up(hi)))
    if rad is not None:
        out = add_up(b, out, up_scale(b, rad, hi))
    return mid, out


def load_hf_layer(model_dir, layer: int, data, *, exact_input: bool = False):
    """(instance, weights) of attention layer ``layer`` of the model in
    ``model_dir`` on the inputs in ``data`` (see the module docstring)."""
    import torch

    path = Path(model_dir)
    cfg = _config(path)
    layers, H, d = _sizes(cfg)
    if not isinstance(layer, int) or not 0 <= layer < layers:
        _fail(f"--layer {layer}: the model has layers 0..{layers - 1}")
    d_h = d // H
    f, name, x, n = _inputs(data, cfg, exact_input=exact_input)
    check_memory({"W_Q": (H, d, d_h), "W_K": (H, d, d_h)}, T=x.shape[0], n=n, what=f"--hf-model {path.name}")
    model = _load_model(path)
    hook, Wq, bq, Wk, bk = _projections(model, layer, H, d)
    dtype = Wq.dtype
    as_np = (lambda t: t.float().numpy()) if dtype == torch.bfloat16 else (lambda t: t.numpy())
    raw = {"W_Q": _heads(as_np(Wq), H, d_h), "W_K": _heads(as_np(Wk), H, d_h), "b_Q": as_np(bq).reshape(H, d_h)}
    from verifier.data.weights import BFLOAT16

    precision = {k: BFLOAT16 for k in raw} if dtype == torch.bfloat16 else None
    w = weights_from_arrays(raw, precision=precision, exact_input=exact_input, source=f"hf:{path.name}",
                            where=f"--hf-model {path.name}")
    lo, hi = attention_scale(cfg, layer, d_h)
    mids, rads = dict(w.mid), dict(w.rad)
    for k in ("W_Q", "b_Q"):
        mids[k], r = _scaled(w.mid[k], w.rad.get(k), lo, hi)
        if r is None:
            rads.pop(k, None)
        else:
            rads[k] = r
    note = (f"layer {layer} of a {cfg.model_type} model ({H} heads, d = {d}, d_h = {d_h}); W_Q and b_Q carry the "
            f"scale in [{float(lo):.17g}, {float(hi):.17g}] (1/sqrt(d_h)); the key bias is dropped (softmax "
            "ignores a logit shift shared by a context)")
    w = type(w)(mids, rads, w.precision, skip=False, source=f"hf:{path.name}", notes=(note,))
    model.float()
    tokens = _capture(model, hook, x, name)
    q = 0 if MODEL_TYPES[cfg.model_type][1] == "first" else tokens.shape[1] - 1
    labels = f.values("labels")
    inst = from_arrays(tokens, np.ascontiguousarray(tokens[:, q]), labels, H=H, d_h=d_h, d_v=d_h,
                       kind=f"{cfg.model_type} layer {layer}", source=f"hf:{path.name}+{f.path.name}",
                       reading="exact" if exact_input else "dtype",
                       precision_source="--exact-input" if exact_input else "file",
                       readings={"contexts": f"layer {layer}'s attention input computed by torch in float32 "
                                             f"(query: token {q})", **f.reading})
    return inst, w
