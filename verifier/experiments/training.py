"""Gradient-descent memorization: one multi-head attention layer, Eqs. (1)-(6), trained by Adam.

The paper measured memorization by training (Sec. 5.2, App. A); this module
re-measures it at a small scale, beside the constructive counts.  The layer
is Eqs. (1)-(6) with the conventions of :mod:`verifier.model.mha_torch`: W_Q, W_K
(H, d, d_h), W_V (H, d, d_v), W_O (H d_v, d), W_D (d, d_out), no skip
connection.  As in the authors' code the logits carry a factor ``logit_scale``
(default 1/sqrt(d)), which :meth:`AttentionLayer.export_weights` folds into
W_K, and the decoder may carry a bias (``bias=True``; Eq. (6) has none).

Classification: cross-entropy over d_out = ``n_classes`` classes, memorization
= training accuracy (the argmax at every example).  Regression: MSE; an example
counts as memorized when its residual is at most ``tol``.

Training is full batch.  Several dataset sizes (and restarts) train at once as
independent replicas (:func:`train_memorization_grid`): a replica sees the
first T_m examples and starts from the initialisation of seed ``seed + restart``;
Adam is elementwise, so replicas do not interact.  Same seed => same numbers on
the CPU (initialisation from a private ``torch.Generator`` on the CPU, no
sampling, full batch); CUDA kernels may differ in the last bits.

Numerical, never a certificate: a success exhibits float32 weights that
memorize the examples; a failure says only what Adam did not find in the
budget, nothing about what the layer cannot do.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> E, e = rng.uniform(size=(6, 3, 8)), rng.uniform(size=(6, 8))
>>> out = train_memorization((E, e, np.arange(6) % 3), H=2, d_h=4, steps=300, lr=1e-2)
>>> out["accuracy"], 0.0 <= saturation_profile(out["model"], (E, e)) <= 1.0
(1.0, True)
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from verifier.errors import InvalidInstance
from verifier.model.mha import is_shared
from verifier.model.mha_torch import default_device

TASKS = ("classification", "regression")


def training_arrays(data, *, task: str = "classification"):
    """(contexts (T,n,d), queries (T,d), labels) as numpy from an
    :class:`~verifier.data.instances.Instance` or a tuple (contexts, queries[, labels]).
    Classification labels: integers (T,) or (T, 1); regression: floats (T, d_out)."""
    if task not in TASKS:
        raise InvalidInstance(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    if hasattr(data, "contexts"):
        E, e, y = data.contexts, data.queries, data.labels
    else:
        E, e, y = (tuple(data) + (None,))[:3]
    E, e = np.asarray(E, dtype=np.float64), np.asarray(e, dtype=np.float64)
    if E.ndim != 3 or e.shape != (E.shape[0], E.shape[2]):
        raise InvalidInstance(f"contexts {E.shape} / queries {e.shape}: expected (T, n, d) / (T, d)")
    if y is None:
        return E, e, None
    y = np.asarray(y)
    if task == "classification":
        y = y.reshape(E.shape[0], -1)
        if y.shape[1] != 1 or not np.all(np.asarray(y, dtype=np.float64) == np.round(y)) or y.min() < 0:
            raise InvalidInstance("classification labels must be non-negative integers, shape (T,) or (T, 1)")
        return E, e, y[:, 0].astype(np.int64)
    y = np.asarray(y, dtype=np.float64).reshape(E.shape[0], -1)
    return E, e, y


class AttentionLayer(torch.nn.Module):
    """``replicas`` independent copies of one layer, Eqs. (1)-(6), initialised
    from ``seed`` (one int: every copy identical; a list: one seed per copy) by
    xavier-uniform attention weights as in the authors' code and nn.Linear's
    default for the decoder."""

    def __init__(self, *, d: int, H: int, d_h: int, d_v: int = 1, d_out: int = 1, replicas: int = 1,
                 bias: bool = False, logit_scale: float | None = None, seed=0):
        super().__init__()
        for name, v in (("d", d), ("H", H), ("d_h", d_h), ("d_v", d_v), ("d_out", d_out), ("replicas", replicas)):
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidInstance(f"{name} = {v!r} must be a positive integer")
        self.sizes = dict(d=d, H=H, d_h=d_h, d_v=d_v, d_out=d_out)
        self.scale = 1.0 / math.sqrt(d) if logit_scale is None else float(logit_scale)
        seeds = [int(seed)] * replicas if np.ndim(seed) == 0 else [int(s) for s in seed]
        if len(seeds) != replicas:
            raise InvalidInstance(f"{len(seeds)} seeds for {replicas} replicas")
        gens = {s: torch.Generator().manual_seed(s) for s in seeds}

        def uniform(shape, bound):
            draws = {s: (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * bound
                     for s, g in gens.items()}
            return torch.nn.Parameter(torch.stack([draws[s] for s in seeds]).to(torch.float32))

        self.W_Q = uniform((H, d, d_h), math.sqrt(6.0 / (d + d_h)))
        self.W_K = uniform((H, d, d_h), math.sqrt(6.0 / (d + d_h)))
        self.W_V = uniform((H, d, d_v), math.sqrt(6.0 / (d + d_v)))
        self.W_O = uniform((H * d_v, d), math.sqrt(6.0 / (H * d_v + d)))
        self.W_D = uniform((d, d_out), 1.0 / math.sqrt(d))
        self.b_D = uniform((d_out,), 1.0 / math.sqrt(d)) if bias else None

    def forward(self, E: torch.Tensor, e: torch.Tensor, *, scores: bool = False):
        """yhat (M, T, d_out); with ``scores`` also the softmax weights s (M, T, H, n).
        E is (T, n, d), or (1, n, d) for a context shared by every example."""
        M, T = self.W_Q.shape[0], e.shape[0]
        p = torch.einsum("td,mhdk->mthk", e, self.W_Q)
        u = torch.einsum("mthk,mhdk->mthd", p, self.W_K) * self.scale
        shared = E.shape[0] == 1
        a = torch.einsum("nd,mthd->mthn", E[0], u) if shared else torch.einsum("tnd,mthd->mthn", E, u)  # (1)
        s = torch.softmax(a, dim=-1)  # (2)
        z = torch.einsum("mthn,nd->mthd", s, E[0]) if shared else torch.einsum("mthn,tnd->mthd", s, E)  # (3)
        o = torch.einsum("mthd,mhdv->mthv", z, self.W_V).reshape(M, T, -1)  # (4)
        y = (o @ self.W_O) @ self.W_D  # (5), (6)
        if self.b_D is not None:
            y = y + self.b_D[:, None, :]
        return (y, s) if scores else y

    def export_weights(self, replica: int = 0) -> dict:
        """float64 numpy weights of one replica in :mod:`verifier.model.mha` order, the logit
        scale folded into W_K: ``forward_torch(E, e, **w)`` reproduces the layer (plus b_D)."""
        w = {k: getattr(self, k)[replica].detach().cpu().double().numpy()
             for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")}
        w["W_K"] = w["W_K"] * self.scale
        if self.b_D is not None:
            w["b_D"] = self.b_D[replica].detach().cpu().double().numpy()
        return w


def _tensors(E, e, device):
    Et = torch.as_tensor(np.array(E[:1] if is_shared(E) else E), dtype=torch.float32, device=device)
    return Et, torch.as_tensor(np.array(e), dtype=torch.float32, device=device)


def _schedule(step: int, steps: int, kind: str) -> float:
    """The authors' schedule: linear warm-up from 1% over steps/20, then cosine to 0."""
    if kind == "constant":
        return 1.0
    warm = max(steps // 20, 1)
    if step < warm:
        return 0.01 + 0.99 * step / warm
    return 0.5 * (1.0 + math.cos(math.pi * (step - warm) / max(steps - warm, 1)))


def train_memorization_grid(data, sizes, *, H: int, d_h: int, d_v: int = 1, task: str = "classification",
                            n_classes: int | None = None, steps: int = 2000, lr: float = 1e-3, seed: int = 0,
                            schedule: str = "warmup-cosine", bias: bool = False, logit_scale: float | None = None,
                            tol: float = 1e-2, check_every: int = 25, restarts: int = 1, device=None) -> dict:
    """Train ``restarts`` replicas per size T in ``sizes`` on the first T examples, all at
    once; restart i starts from the initialisation of seed ``seed + i``.

    Returns {"sizes", "results": [per size: T, reached (some restart memorized every
    example at some check), reached_restarts, first_step, correct (best count at a check,
    over restarts), accuracy, replica (the model replica of the best restart), and
    max_residual for regression], "steps", "seconds", "device", "model"}.  Stops early
    once every replica has reached."""
    if schedule not in ("warmup-cosine", "constant"):
        raise InvalidInstance(f"unknown schedule {schedule!r}")
    E, e, y = training_arrays(data, task=task)
    if y is None:
        raise InvalidInstance("training needs labels")
    sizes = [int(t) for t in sizes]
    if not isinstance(restarts, (int, np.integer)) or restarts < 1:
        raise InvalidInstance(f"restarts = {restarts!r} must be a positive integer")
    if not sizes or min(sizes) < 1 or max(sizes) > E.shape[0]:
        raise InvalidInstance(f"sizes {sizes} must lie in 1..T = {E.shape[0]}")
    device = torch.device(device) if device is not None else default_device()
    reps = [T for T in sizes for _ in range(restarts)]  # replica m: size reps[m], restart m % restarts
    M, Tmax, d = len(reps), max(sizes), E.shape[2]
    E, e, y = E[:Tmax], e[:Tmax], y[:Tmax]
    if task == "classification":
        n_classes = int(y.max()) + 1 if n_classes is None else int(n_classes)
        if y.max() >= n_classes:
            raise InvalidInstance(f"label {int(y.max())} >= n_classes = {n_classes}")
        d_out = n_classes
        yt = torch.as_tensor(np.array(y), device=device).expand(M, Tmax)
    else:
        d_out = y.shape[1]
        yt = torch.as_tensor(np.array(y), dtype=torch.float32, device=device).expand(M, Tmax, d_out)
    Et, et = _tensors(E, e, device)
    mask = (torch.arange(Tmax, device=device)[None, :] < torch.tensor(reps, device=device)[:, None]).float()
    model = AttentionLayer(d=d, H=H, d_h=d_h, d_v=d_v, d_out=d_out, replicas=M, bias=bias,
                           logit_scale=logit_scale,
                           seed=[seed + m % restarts for m in range(M)]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: _schedule(k, steps, schedule))
    best = np.zeros(M, dtype=np.int64)
    first = [None] * M
    last_metric = [None] * M
    t0, step = time.perf_counter(), 0

    def evaluate(out):
        with torch.no_grad():
            if task == "classification":
                ok = (out.argmax(-1) == yt).float() * mask
                metric = None
            else:
                res = (out - yt).abs().amax(-1) * mask
                ok = (res <= tol).float() * mask
                metric = res.amax(-1).cpu().numpy()
            return ok.sum(-1).cpu().numpy().astype(np.int64), metric

    for step in range(1, steps + 1):
        out = model(Et, et)
        if task == "classification":
            per = torch.nn.functional.cross_entropy(out.reshape(-1, d_out), yt.reshape(-1),
                                                    reduction="none").reshape(M, Tmax)
        else:
            per = ((out - yt) ** 2).mean(-1)
        loss = ((per * mask).sum(-1) / mask.sum(-1)).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % check_every == 0 or step == steps:
            correct, metric = evaluate(model(Et, et).detach())
            for m in range(M):
                if correct[m] >= best[m]:
                    best[m], last_metric[m] = correct[m], None if metric is None else float(metric[m])
                if first[m] is None and correct[m] == reps[m]:
                    first[m] = step
            if all(f is not None for f in first):
                break
    results = []
    for i, T in enumerate(sizes):
        ms = range(i * restarts, (i + 1) * restarts)
        done = [m for m in ms if first[m] is not None]
        m = min(done, key=lambda k: first[k]) if done else max(ms, key=lambda k: best[k])
        r = {"T": T, "reached": bool(done), "reached_restarts": len(done), "restarts": restarts,
             "first_step": first[m], "correct": int(best[m]), "accuracy": float(best[m]) / T, "replica": m}
        if task == "regression":
            r["max_residual"] = last_metric[m]
        results.append(r)
    return {"sizes": sizes, "results": results, "steps": step, "seconds": time.perf_counter() - t0,
            "device": str(device), "task": task, "lr": lr, "seed": seed, "H": H, "d_h": d_h, "d_v": d_v,
            "d_out": d_out, "model": model}


def train_memorization(data, *, H: int, d_h: int, d_v: int = 1, task: str = "classification",
                       n_classes: int | None = None, steps: int = 2000, lr: float = 1e-3, seed: int = 0,
                       **options) -> dict:
    """Train on every example of ``data``; stop as soon as all are memorized.

    Returns {"accuracy" (classification) or "mse" and "max_residual" (regression),
    "memorized" (bool), "correct", "T", "steps", "seconds", "device", "model"}."""
    T = training_arrays(data, task=task)[0].shape[0]
    g = train_memorization_grid(data, [T], H=H, d_h=d_h, d_v=d_v, task=task, n_classes=n_classes,
                                steps=steps, lr=lr, seed=seed, **options)
    r = g["results"][0]
    replica = r["replica"]
    out = {"T": T, "memorized": r["reached"], "correct": r["correct"], "steps": g["steps"],
           "seconds": g["seconds"], "device": g["device"], "model": g["model"], "replica": replica, "task": task}
    if task == "classification":
        out["accuracy"] = r["accuracy"]
    else:
        E, e, y = training_arrays(data, task=task)
        with torch.no_grad():
            pred = g["model"](*_tensors(E, e, g["model"].W_Q.device))[replica].double().cpu().numpy()
        out["mse"] = float(np.mean((pred - y) ** 2))
        out["max_residual"] = float(np.abs(pred - y).max())
    return out


def attention_maxima(model: AttentionLayer, data, *, replica: int = 0) -> np.ndarray:
    """max_i s_h^(t)_i for every example t and head h: an array (T, H)."""
    E, e = (data.contexts, data.queries) if hasattr(data, "contexts") else tuple(data)[:2]
    E, e, _ = training_arrays((E, e))
    with torch.no_grad():
        _, s = model(*_tensors(E, e, model.W_Q.device), scores=True)
    return s[replica].amax(-1).double().cpu().numpy()


def saturation_profile(model: AttentionLayer, data, *, threshold: float = 0.99, replica: int = 0) -> float:
    """Fraction of (example, head) pairs whose largest softmax weight is >= ``threshold``
    (App. H, Fig. 3: such a head is "saturated" on that example)."""
    return float(np.mean(attention_maxima(model, data, replica=replica) >= threshold))
