"""The attention-only transformer, Eqs. (1)-(2), in torch: an independent
forward pass (CUDA when present) and the fitting the checkers fall back on
when the paper's construction cannot run (``fit_associations``: L-BFGS on
the cross-entropy of an association table).  Never evidence on its own: the
weights it returns are re-run in balls by the checkers.
"""
from __future__ import annotations

import numpy as np

from verifier.model.aot import AoTWeights

__all__ = ["default_device", "logits_torch", "fit_associations"]


def default_device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _params(w: AoTWeights, *, dtype, device, requires_grad=False):
    import torch

    return {k: torch.tensor(v, dtype=dtype, device=device, requires_grad=requires_grad)
            for k, v in w.as_arrays().items()}


def logits_torch(tokens, params: dict):
    """Eq. (2) on a (T, S) LongTensor with parameters as tensors (dict of
    e, pos, W_Q, W_K, W_V, W_O, W_U)."""
    import torch

    X = params["e"][tokens] + params["pos"][None]  # (T, S, d)
    q = X[:, -1, :]
    r = q
    if params["W_Q"].shape[0]:
        QK = torch.einsum("hki,hkj->hij", params["W_Q"], params["W_K"])
        raw = torch.einsum("ti,hij,tsj->ths", q, QK, X)
        A = torch.einsum("ths,tsd->thd", torch.softmax(raw, dim=-1), X)
        r = r + torch.einsum("hdk,hke,the->td", params["W_O"], params["W_V"], A)
    return r @ params["W_U"].T


def fit_associations(tokens, targets, *, N: int, d: int, d_h: int, H: int, seed: int = 0,
                     steps: int = 300, restarts: int = 3, dtype=None, device=None) -> AoTWeights | None:
    """Minimise the cross-entropy of ``targets`` given ``tokens`` over all
    parameters of Eq. (2) (L-BFGS, a few restarts); return the first weights
    whose float64 forward pass puts every target at the strict argmax, else
    None.  A heuristic: None decides nothing."""
    import torch

    from verifier.model.aot import argmax_memorized, logits

    dtype = dtype or torch.float64
    device = device or default_device()
    tok = torch.as_tensor(np.array(tokens), dtype=torch.long, device=device)
    tgt = torch.as_tensor(np.array(targets), dtype=torch.long, device=device)
    S = tok.shape[1]
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    for _ in range(restarts):
        shapes = {"e": (N, d), "pos": (S, d), "W_Q": (H, d_h, d), "W_K": (H, d_h, d), "W_V": (H, d_h, d),
                  "W_O": (H, d, d_h), "W_U": (N, d)}
        params = {k: torch.randn(s, generator=gen, dtype=dtype).to(device).requires_grad_(True)
                  for k, s in shapes.items()}
        opt = torch.optim.LBFGS(list(params.values()), max_iter=steps, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(logits_torch(tok, params), tgt)
            loss.backward()
            return loss

        try:
            opt.step(closure)
        except RuntimeError:  # pragma: no cover - a diverged restart
            continue
        arrays = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in params.items()}
        if not all(np.all(np.isfinite(a)) for a in arrays.values()):
            continue
        w = AoTWeights(**arrays)
        if bool(np.all(argmax_memorized(logits(np.asarray(tokens), w), targets))):
            return w
    return None
