"""Table 3 part (a), diagnosed: why BERT with the sinusoidal table fails Assumption 2 at L0 even
scaled to the word embeddings' row norm.

A context's embedding rows are LayerNorm(word + position + segment); at initialisation LayerNorm
only removes each row's mean (one projection for all rows) and rescales the row, so the context's
rank is at most (distinct tokens) + rank(position table) + 2, whatever the table's scale.  The
sinusoid over 128 positions has numerical rank 48 at float32 precision, so a context of fewer
than about 80 distinct tokens of 128 cannot pass.  This script reads, on the cpu scale's 256
contexts (seed 0), each context's number of distinct tokens, its numerical rank at tau and its
rho, for the sinusoidal and the random learned table.

    PYTHONPATH=$PWD python benchmarks/table3_sinusoid_contexts.py
"""
from __future__ import annotations

import numpy as np
import torch

from verifier.experiments.precision import tolerance_of
from verifier.experiments.table3 import SCALE
from verifier.experiments.text_models import _build, stdlib_docstrings, text_examples, train_tokenizers


def main(seed: int = 0) -> None:
    cfg = SCALE["cpu"]
    docs = stdlib_docstrings()
    wp, _ = train_tokenizers(docs)
    ids, types = text_examples(wp, docs, n=cfg["n"], T=cfg["T"], seed=seed, kind="bert")
    u = np.array([len(set(r.tolist())) for r in ids])
    n = ids.shape[1]
    print(f"T = {ids.shape[0]} contexts of n = {n} tokens; distinct tokens per context: min {u.min()}, "
          f"median {np.median(u):g}, max {u.max()}")
    for name in ("BERT random (sinusoidal pos.)", "BERT random (learned pos.)"):
        model = _build(name, wp.get_vocab_size(), seed)
        with torch.no_grad():
            X = torch.cat([model.embeddings(input_ids=ids[s:s + 32], token_type_ids=types[s:s + 32])
                           for s in range(0, ids.shape[0], 32)])
        tau = tolerance_of(X[0, :2].numpy(), tuple(X.shape[1:]))
        E = X.double()
        E = E / E.norm(dim=2, keepdim=True)
        sv = torch.linalg.svdvals(E)
        rank = (sv > sv[:, :1] * tau).sum(1).numpy()
        rho = (sv[:, -1] / sv[:, 0]).numpy()
        ok = rho > tau
        corr = f"{np.corrcoef(rank, u)[0, 1]:.3f}" if rank.std() > 0 else "- (constant rank)"
        print(f"{name}, L0: tau {tau:.3g}; numerical rank min {rank.min()}, median {np.median(rank):g}; "
              f"rank - distinct tokens in [{(rank - u).min()}, {(rank - u).max()}], correlation {corr}; "
              f"{ok.sum()} of {len(ok)} contexts with rho > tau"
              + (f", their distinct tokens >= {u[ok].min()}" if ok.any() else ""))


if __name__ == "__main__":
    main()
