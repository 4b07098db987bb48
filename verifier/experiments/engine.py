"""Training many independent runs as one batched job (CPU, or CUDA when present).

A panel of an experiment (every sweep value x dataset size x seed) is a list
of :class:`Run` on a list of :class:`Dataset`; :func:`train_panel` trains them
all at once in one :class:`~verifier.experiments.batched_model.BatchedAttention`,
each exactly as an independent run of the authors' recipe (App. A, their code):

* Adam (beta 0.9, 0.999, eps 1e-8), learning rate ``lr`` with a linear
  warm-up over the first 5% of the run's steps from 1% of ``lr``, then cosine
  decay to 0 at its last step;
* minibatches of ``batch`` examples, epochs of a fresh random permutation of the
  run's T examples (the last batch of an epoch may be smaller; T <= batch:
  every step is the whole set);
* ``steps = max(epochs x ceil(T / batch), min_steps)`` per run (optionally
  capped by ``max_steps``, a CPU-scale knob that the caption must state);
* every ``eval_every`` steps and at its last step, the whole training set is
  evaluated (each run's ``trace``: step, loss, accuracy at its evaluations, for
  a plateau rule); classification stops early at 100% training accuracy; the run
  keeps the checkpoint with the best training loss (or the 100% one).

Runs do not interact: Adam is elementwise and is written here with a
per-run learning rate and step count, so a run that stopped (early stop or
its own budget) is frozen while the others go on.  The measure of a run is
read at its kept checkpoint: training accuracy (classification) and MSE
(regression), over its T examples.  Numerical, never a certificate.

Same seeds => same numbers on the same device and panel (CPU: bit for bit);
batching changes kernel shapes, so a run alone may differ in the last bits.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> ds = Dataset(rng.uniform(size=(12, 6)), rng.uniform(size=(3, 6)), rng.integers(0, 4, 12))
>>> out = train_panel([ds], [Run(0, 12, H=2, d_h=4, seed=0)], d_out=4,
...                   recipe=Recipe(lr=1e-2, min_steps=400, eval_every=50), embedding=False)
>>> out.runs[0]["accuracy"], out.runs[0]["reached"]
(1.0, True)
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from verifier.errors import InvalidInstance
from verifier.experiments.batched_model import BatchedAttention
from verifier.experiments.devices import training_device, training_threads
from verifier.experiments.plateau import Plateau, PlateauState

TASKS = ("classification", "regression")
BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


@dataclass(frozen=True)
class Dataset:
    """queries (T, d_in); contexts (n, d_in) shared by every example or (T, n, d_in);
    labels: class indices (T,) or real labels (T, d_out)."""

    queries: np.ndarray
    contexts: np.ndarray
    labels: np.ndarray

    T = property(lambda self: int(self.queries.shape[0]))
    n = property(lambda self: int(self.contexts.shape[-2]))
    shared = property(lambda self: self.contexts.ndim == 2)


@dataclass(frozen=True)
class Run:
    """One independent run: the first ``T`` examples of dataset ``dataset``."""

    dataset: int
    T: int
    H: int
    d_h: int
    seed: int
    tags: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Recipe:
    task: str = "classification"
    lr: float = 1e-3
    batch: int = 256
    epochs: int = 500
    min_steps: int = 50_000
    max_steps: int | None = None
    eval_every: int = 500
    warmup: float = 0.05
    early_stop: bool = True
    plateau: Plateau | None = None  # train to a plateau (plateau.py) up to max_steps, not a fixed count

    def steps(self, T: int) -> int:
        """A run's step budget: its fixed count, or (plateau schedule) the cap ``max_steps``."""
        if self.plateau is not None:
            if self.max_steps is None:
                raise InvalidInstance("a plateau schedule needs max_steps (the cap)")
            return self.max_steps
        s = max(self.epochs * math.ceil(T / self.batch), self.min_steps)
        return s if self.max_steps is None else min(s, self.max_steps)


@dataclass
class PanelResult:
    runs: list  # per run: its Run fields, tags and measures
    steps: int  # global steps of the batched job
    seconds: float
    seconds_per_step: float  # training steps only, wall time (what a GPU estimate scales)
    cpu_seconds_per_step: float  # the same in process CPU time (all threads; robust to a busy machine)
    device: str
    recipe: dict
    model: BatchedAttention | None = None
    run_steps: int = 0  # training steps summed over runs (a stopped run takes none)


def _sampling_seed(r: Run) -> int:
    """The minibatch order of a run: from its seed and sizes only, never from its panel."""
    return int(np.random.SeedSequence([r.seed, r.T, r.H, r.d_h, 0x5EED]).generate_state(1)[0])


def lr_factor(step, total, warmup: float = 0.05):
    """Warm-up linear from 1% over ``warmup`` of the run, then cosine to 0 (tensor-friendly)."""
    w = torch.clamp(torch.floor(total * warmup), min=1.0)
    rise = 0.01 + 0.99 * step / w
    frac = (step - w) / torch.clamp(total - w, min=1.0)
    return torch.where(step < w, rise, 0.5 * (1.0 + torch.cos(math.pi * frac)))


def _stack(datasets: list[Dataset], task: str, device):
    if len({ds.shared for ds in datasets}) != 1:
        raise InvalidInstance("a panel mixes shared and per-example contexts")
    d_in = {ds.queries.shape[1] for ds in datasets} | {ds.contexts.shape[-1] for ds in datasets}
    if len(d_in) != 1:
        raise InvalidInstance(f"token dimensions differ across datasets: {sorted(d_in)}")
    D, Tm, nm = len(datasets), max(ds.T for ds in datasets), max(ds.n for ds in datasets)
    d = d_in.pop()
    Xq = np.zeros((D, Tm, d))
    C = np.zeros((D, nm, d)) if datasets[0].shared else np.zeros((D, Tm, nm, d))
    y0 = np.asarray(datasets[0].labels)
    Y = np.zeros((D, Tm), np.int64) if task == "classification" else np.zeros((D, Tm, y0.reshape(y0.shape[0], -1).shape[1]))
    for i, ds in enumerate(datasets):
        Xq[i, :ds.T] = ds.queries
        if ds.shared:
            C[i, :ds.n] = ds.contexts
        else:
            C[i, :ds.T, :ds.n] = ds.contexts
        Y[i, :ds.T] = np.asarray(ds.labels).reshape((ds.T,) + Y.shape[2:])
    f32 = dict(dtype=torch.float32, device=device)
    Yt = torch.as_tensor(Y, device=device) if task == "classification" else torch.as_tensor(Y, **f32)
    return torch.as_tensor(Xq, **f32), torch.as_tensor(C, **f32), Yt


def _per_example_loss(out, y, task):
    if task == "classification":
        flat = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1), reduction="none")
        return flat.view(y.shape)  # (M, B)
    return ((out - y) ** 2).mean(-1)


def evaluate(model, Xq, C, Y, ds, T, task, *, chunk: int | None = None):
    """Mean loss, accuracy (classification) and MSE over each run's T examples, in chunks
    of examples small enough that the largest activation stays near 2^27 floats."""
    M, Tm = len(T), int(T.max())
    if chunk is None:
        width = max(model.head_mask.shape[1] * C.shape[-2], C.shape[-2] * C.shape[-1] if C.dim() == 4 else 1)
        chunk = max(16, 2**27 // (M * width))
    loss = torch.zeros(M, device=Xq.device)
    hits = torch.zeros(M, device=Xq.device)
    with torch.no_grad():
        for a in range(0, Tm, chunk):
            idx = torch.arange(a, min(a + chunk, Tm), device=Xq.device)
            ok = (idx[None, :] < T[:, None]).float()
            rows = (ds[:, None], idx[None, :])
            out = model(Xq[rows], C[ds] if C.dim() == 3 else C[rows])
            y = Y[rows]
            loss += (_per_example_loss(out, y, task) * ok).sum(1)
            if task == "classification":
                hits += ((out.argmax(-1) == y).float() * ok).sum(1)
    loss = loss / T
    return loss, (hits / T if task == "classification" else None)


class Job:
    """The state of one batched job: data on the device, the model, Adam's moments, each
    run's sampling stream; :meth:`step` is one training step of every run."""

    def __init__(self, datasets: list[Dataset], runs: list[Run], *, d_out: int, recipe: Recipe,
                 embedding: bool = True, device=None):
        if recipe.task not in TASKS:
            raise InvalidInstance(f"unknown task {recipe.task!r}; choose from {', '.join(TASKS)}")
        if not runs:
            raise InvalidInstance("no runs")
        for r in runs:
            if not 0 <= r.dataset < len(datasets) or not 1 <= r.T <= datasets[r.dataset].T:
                raise InvalidInstance(f"run {r}: dataset index or T out of range")
        self.device = device = training_device(device)
        self.runs, self.recipe, self.task, self.M = runs, recipe, recipe.task, len(runs)
        Xq, C, self.Y = _stack(datasets, recipe.task, device)
        self.Xq, self.C = Xq, C[..., :max(datasets[r.dataset].n for r in runs), :]  # tokens no run uses
        self.ds = torch.tensor([r.dataset for r in runs], device=device)
        self.T = torch.tensor([r.T for r in runs], device=device)
        self.total = torch.tensor([float(recipe.steps(r.T)) for r in runs], device=device)
        self.model = BatchedAttention(d_in=Xq.shape[-1], d=Xq.shape[-1], d_out=d_out, H=[r.H for r in runs],
                                      n=[datasets[r.dataset].n for r in runs], d_h=[r.d_h for r in runs],
                                      seeds=[r.seed for r in runs], embedding=embedding, device=device)
        self.params = list(self.model.parameters())
        self.m1 = [torch.zeros_like(p) for p in self.params]
        self.m2 = [torch.zeros_like(p) for p in self.params]
        self.Tm, self.B = int(self.T.max()), min(recipe.batch, int(self.T.max()))
        self.gens = [torch.Generator().manual_seed(_sampling_seed(r)) for r in runs]  # each run its own stream
        self.perm = torch.arange(self.Tm, device=device).repeat(self.M, 1)  # T <= batch: the whole set
        for m in range(self.M):
            self._reshuffle(m)
        self.ptr = torch.zeros(self.M, dtype=torch.long, device=device)
        self._batch = None  # full batch (every run's T <= batch): its inputs, the same at every step
        self.lr_scale = torch.ones(self.M, device=device)  # the plateau schedule's decays

    def keep(self, idx: list[int]) -> None:
        """Go on with the runs ``idx`` only (the others stopped): every per-run tensor sliced,
        so that stopped runs cost nothing; each kept run's state is unchanged."""
        ix = torch.tensor(idx, device=self.device)
        self.model = self.model.subset(idx)
        self.params = list(self.model.parameters())
        self.m1, self.m2 = [a[ix] for a in self.m1], [b[ix] for b in self.m2]
        for k in ("ds", "T", "total", "perm", "ptr", "lr_scale"):
            setattr(self, k, getattr(self, k)[ix])
        self._batch = None
        self.runs, self.gens, self.M = [self.runs[i] for i in idx], [self.gens[i] for i in idx], len(idx)

    def _reshuffle(self, m: int) -> None:
        if self.runs[m].T > self.B:
            self.perm[m, :self.runs[m].T] = torch.randperm(self.runs[m].T, generator=self.gens[m]).to(self.device)

    def step(self, step: int, active) -> None:
        """Training step ``step`` (1-based) of every run; runs not ``active`` get lr 0."""
        M, B, T, ds = self.M, self.B, self.T, self.ds
        batch = self._batch
        if batch is None:
            idx = self.ptr[:, None] + torch.arange(B, device=self.device)[None, :]
            valid = (idx < T[:, None]).float()
            ex = self.perm.gather(1, idx.clamp(max=self.Tm - 1))
            ctx = self.C[ds] if self.C.dim() == 3 else self.C[ds[:, None], ex]
            batch = (self.Xq[ds[:, None], ex], ctx, self.Y[ds[:, None], ex], valid)
            if int(self.Tm) <= B:  # the whole set in a fixed order at every step: gathered once
                self._batch = batch
        xq, ctx, y, valid = batch
        per = _per_example_loss(self.model(xq, ctx), y, self.task)
        loss = ((per * valid).sum(1) / valid.sum(1)).sum()
        for p in self.params:
            p.grad = None
        loss.backward()
        s = torch.tensor(float(step - 1), device=self.device)
        pl = self.recipe.plateau
        if pl is None:
            lr = self.recipe.lr * lr_factor(s, self.total, self.recipe.warmup) * active
        else:  # warm-up over the first `warmup` of a window, then the plateau rule's decays
            w = max(1.0, math.floor(pl.warmup * pl.window))
            lr = self.recipe.lr * min(1.0, 0.01 + 0.99 * (step - 1) / w) * self.lr_scale * active
        b1t, b2t = 1 - BETAS[0] ** step, 1 - BETAS[1] ** step
        with torch.no_grad():  # Adam; a stopped run has lr 0 (its moments no longer matter)
            grads = [p.grad for p in self.params]  # moments: one foreach call each (the same arithmetic)
            torch._foreach_mul_(self.m1, BETAS[0])
            torch._foreach_add_(self.m1, grads, alpha=1 - BETAS[0])
            torch._foreach_mul_(self.m2, BETAS[1])
            torch._foreach_addcmul_(self.m2, grads, grads, value=1 - BETAS[1])
            for p, a, b in zip(self.params, self.m1, self.m2):
                step_size = (lr / b1t).view((M,) + (1,) * (p.dim() - 1))
                p.sub_(step_size * a / (b.div(b2t).sqrt_().add_(ADAM_EPS)))
            self.ptr += B
            ended = (self.ptr >= T).nonzero().flatten().tolist()
            for m in ended:
                self._reshuffle(m)
            if ended:
                self.ptr[ended] = 0
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def evaluate(self):
        return evaluate(self.model, self.Xq, self.C, self.Y, self.ds, self.T, self.task)


def train_panel(datasets: list[Dataset], runs: list[Run], *, d_out: int, recipe: Recipe = Recipe(),
                embedding: bool = True, device=None, keep_model: bool = False) -> PanelResult:
    """Train every run of ``runs`` at once; see the module docstring.  On the CPU with
    :data:`~verifier.experiments.devices.CPU_TRAINING_THREADS` threads, whatever the machine."""
    with training_threads(training_device(device)):
        return _train_panel(datasets, runs, d_out=d_out, recipe=recipe, embedding=embedding, device=device,
                            keep_model=keep_model)


def _train_panel(datasets: list[Dataset], runs: list[Run], *, d_out: int, recipe: Recipe, embedding: bool,
                 device, keep_model: bool) -> PanelResult:
    job = Job(datasets, runs, d_out=d_out, recipe=recipe, embedding=embedding, device=device)
    device, M, task, model, total = job.device, job.M, job.task, job.model, job.total.clone()
    live = list(range(M))  # the job's rows -> runs (stopped runs leave the job)
    active = torch.ones(M, dtype=torch.bool, device=device)
    best = {"loss": torch.full((M,), float("inf"), device=device), "acc": torch.zeros(M, device=device),
            "step": torch.zeros(M, device=device)}
    stopped = ["cap"] * M
    stop_step = [0] * M
    plateau = PlateauState(recipe.plateau, [r.T for r in runs], task) if recipe.plateau else None
    kept = model.state()
    trace: list = [[] for _ in range(M)]  # per run: (step, loss, accuracy) at each of its evaluations
    t0, train_seconds, train_cpu, step, run_steps = time.perf_counter(), 0.0, 0.0, 0, 0
    while bool(active.any()):
        step += 1
        ts, tc = time.perf_counter(), time.process_time()
        job.step(step, active)
        train_seconds += time.perf_counter() - ts
        train_cpu += time.process_time() - tc
        run_steps += len(live)
        last = active & (step >= job.total)
        if step % recipe.eval_every == 0 or bool(last.any()):
            ev_loss, ev_acc = job.evaluate()
            L = torch.tensor(live, device=device)
            full = (ev_acc >= 1.0) & active if ev_acc is not None else \
                (ev_loss < recipe.plateau.mse_memorized) & active if plateau else torch.zeros_like(active)
            better = active & ((ev_loss < best["loss"][L]) | full)
            best["loss"][L] = torch.where(better, ev_loss, best["loss"][L])
            if ev_acc is not None:
                best["acc"][L] = torch.where(better, ev_acc, best["acc"][L])
            best["step"][L] = torch.where(better, torch.tensor(float(step), device=device), best["step"][L])
            for k, p in job.model.named_parameters():
                shape = (len(live),) + (1,) * (p.dim() - 1)
                kept[k][L] = torch.where(better.view(shape), p.detach(), kept[k][L])
            accs = ev_acc.tolist() if ev_acc is not None else [None] * len(live)
            stop = (full if recipe.early_stop else torch.zeros_like(active)) | last
            for j, (on, lo, ac) in enumerate(zip(active.tolist(), ev_loss.tolist(), accs)):
                m = live[j]
                if not on:
                    continue
                trace[m].append((step, lo, ac))
                why = "memorized" if bool(full[j]) else ""
                if plateau and not why and step % recipe.plateau.window == 0:
                    why = plateau.check(m, float(best["acc"][m]) if ev_acc is not None else None,
                                        float(best["loss"][m]))
                    job.lr_scale[j] = plateau.lr_scale[m]
                if why or bool(stop[j]):
                    stopped[m] = why or "cap"
                    stop_step[m] = step
                    active[j] = False
            if not bool(active.all()) and bool(active.any()):
                idx = active.nonzero().flatten().tolist()
                job.keep(idx)
                live, active = [live[i] for i in idx], active[idx]
    with torch.no_grad():
        for k, p in model.named_parameters():
            p.copy_(kept[k])
    seconds = time.perf_counter() - t0
    out = []
    for m, r in enumerate(runs):
        row = {**{k: v for k, v in asdict(r).items() if k != "tags"}, **r.tags, "n": datasets[r.dataset].n,
               "steps_budget": int(total[m]), "steps": stop_step[m], "stopped": stopped[m],
               "kept_step": int(best["step"][m]), "train_loss": float(best["loss"][m]),
               "trace": {"step": [t[0] for t in trace[m]], "loss": [t[1] for t in trace[m]]}}
        if task == "classification":
            row["trace"]["accuracy"] = [t[2] for t in trace[m]]
            reached = stopped[m] == "memorized"
            row.update(accuracy=float(best["acc"][m]), correct=int(round(float(best["acc"][m]) * r.T)),
                       reached=reached, reached_step=stop_step[m] if reached else None)
        else:
            row.update(mse=float(best["loss"][m]))
        out.append(row)
    return PanelResult(out, step, seconds, train_seconds / max(step, 1), train_cpu / max(step, 1), str(device),
                       asdict(recipe), model if keep_model else None, run_steps)


def train_runs(datasets: list[Dataset], runs: list[Run], *, d_out: int, recipe: Recipe = Recipe(),
               embedding: bool = True, device=None, split: str = "auto") -> PanelResult:
    """:func:`train_panel` as one job (``split="none"``, the GPU default) or as one job per
    dataset size T (``split="T"``, the CPU default: on a CPU padding small T to the largest
    costs more than the per-job overhead).  Rows come back in the order of ``runs``; the
    numbers of a run do not depend on the split except in the last bits."""
    device = training_device(device)
    if split == "auto":
        split = "none" if device.type == "cuda" else "T"
    if split not in ("none", "T"):
        raise InvalidInstance(f"split {split!r} not in ('auto', 'none', 'T')")
    groups = [list(range(len(runs)))] if split == "none" else \
        [[i for i, r in enumerate(runs) if r.T == T] for T in sorted({r.T for r in runs})]
    rows: list = [None] * len(runs)
    steps, seconds, wall, cpu, run_steps = 0, 0.0, 0.0, 0.0, 0
    for g in groups:
        res = train_panel(datasets, [runs[i] for i in g], d_out=d_out, recipe=recipe, embedding=embedding,
                          device=device)
        for i, row in zip(g, res.runs):
            rows[i] = row
        steps += res.steps
        seconds += res.seconds
        wall += res.seconds_per_step * res.steps
        cpu += res.cpu_seconds_per_step * res.steps
        run_steps += res.run_steps
    return PanelResult(rows, steps, seconds, wall / max(steps, 1), cpu / max(steps, 1), str(device),
                       asdict(recipe), run_steps=run_steps)
