"""Eqs. (1)-(6) in torch: an independent forward pass, on CUDA when present.

Used to re-run constructed weights outside numpy (a reader's own code would
look like this) and for the gradient-descent experiments.  Never evidence on
its own: float32/float64 results are numerical.
"""
from __future__ import annotations

import numpy as np


def default_device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def forward_torch(contexts, queries, W_Q, W_K, W_V, W_O, W_D, *, skip: bool = False,
                  dtype=None, device=None):
    """yhat (T, d_out) as a torch tensor.  Arrays may be numpy or torch."""
    import torch

    dtype = dtype or torch.float64
    device = device or default_device()

    def t(x):
        return torch.as_tensor(np.array(x) if not isinstance(x, torch.Tensor) else x,
                               dtype=dtype, device=device)

    E, e = t(contexts), t(queries)
    WQ, WK, WV, WO, WD = t(W_Q), t(W_K), t(W_V), t(W_O), t(W_D)
    p = torch.einsum("td,hdk->thk", e, WQ)
    u = torch.einsum("thk,hdk->thd", p, WK)
    a = torch.einsum("tnd,thd->thn", E, u)  # (1)
    s = torch.softmax(a, dim=-1)  # (2), log-domain inside torch
    z = torch.einsum("thn,tnd->thd", s, E)  # (3)
    o_h = torch.einsum("thd,hdv->thv", z, WV).reshape(E.shape[0], -1)  # (4)
    o = o_h @ WO  # (5)
    if skip:
        o = o + e
    return o @ WD  # (6)


def feature_matrix_torch(contexts, queries, W_K, W_Q, *, dtype=None, device=None):
    """Z (T, H d) in torch."""
    import torch

    dtype = dtype or torch.float64
    device = device or default_device()
    E = torch.as_tensor(np.array(contexts), dtype=dtype, device=device)
    e = torch.as_tensor(np.array(queries), dtype=dtype, device=device)
    WQ = torch.as_tensor(np.array(W_Q), dtype=dtype, device=device)
    WK = torch.as_tensor(np.array(W_K), dtype=dtype, device=device)
    p = torch.einsum("td,hdk->thk", e, WQ)
    u = torch.einsum("thk,hdk->thd", p, WK)
    s = torch.softmax(torch.einsum("tnd,thd->thn", E, u), dim=-1)
    return torch.einsum("thn,tnd->thd", s, E).reshape(E.shape[0], -1)
