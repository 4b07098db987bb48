"""The exact capacity probe: how many examples SOME key/query weights make memorizable.

For real labels and d_v >= d_out, T examples are memorizable exactly (for
every labelling) iff some W_K, W_Q make Z (T x Hd, Eq. (7)) of full row rank
T: then the readout solves Z M = Y (Step 2); if rank Z < T, some labels are
out of reach for every readout.  So the question of the sweeps has a fast
exact answer per setting: the largest T with rank Z = T, certified by an arb
minor, found three ways on the same pool of examples (prefixes):

* the construction (Prop. 1, through the registry) at its count H(r-1)+1;
* generic random weights (standard normal W_K, W_Q): the longest prefix of
  full row rank;
* weights that maximize log det(Z Z^T) (torch, float64, Adam from the random
  weights): first at one example more than the best so far; if that is
  certified, bisecting upwards to Hd.

Each T reported is CERTIFIED (rank Z >= T by an arb minor of Z enclosed from
the float64 weights); an optimizer's failure is not a bound.  Caps: Hd (the
columns of Z, any data), H(n-1)+1 (Prop. 2, a shared context), H(d-1)+1
(Prop. 5, tokens summing to a constant) - App. I.1 conjectures H(d-1)+1 as the
count for contexts in general position.  A certified T above a proven cap
would refute that proposition; the probe reports it as a refutation.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from verifier.arith.compare import Decision, workprec
from verifier.arith.rank import certify_rank_lower_bound_lazy
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed, InvalidInstance
from verifier.experiments.catalogue import Figure, Outcome, experiment
from verifier.model import mha
from verifier.model.mha_balls import feature_matrix_ball
from verifier.statements.registry import get_construction

RTOL = 1e-9  # a candidate T is sent to the certificate when sigma_min / sigma_max > RTOL


@dataclass(frozen=True)
class Setting:
    H: int
    n: int
    d: int
    context: str  # "shared" (Gaussian, one context), "uniform" (general position, App. I.1), "sumconst"

    def caps(self) -> dict:
        c = {"Hd": self.H * self.d}
        if self.context == "shared":
            c["Prop. 2: H(n-1)+1"] = self.H * (self.n - 1) + 1
        if self.context == "sumconst":
            c["Prop. 5: H(d-1)+1"] = self.H * (self.d - 1) + 1
        return c

    @property
    def proven_cap(self) -> int:
        return min(self.caps().values())


def certify_rank(E, e, W_K, W_Q, T: int, *, prec: int = 128):
    """rank Z(first T examples) >= T by an arb minor; the RankLowerBound."""
    mid = mha.feature_matrix(E[:T], e[:T], W_K, W_Q)

    def minor_ball(rows, cols):
        return feature_matrix_ball(E[:T], e[:T], W_K, W_Q, rows=rows, cols=cols)

    with workprec(prec):
        return certify_rank_lower_bound_lazy(mid, T, minor_ball, prec=prec, max_prec=max(prec, 512))


def _full_rank(Z: np.ndarray) -> bool:
    if Z.shape[0] > Z.shape[1]:
        return False
    s = np.linalg.svd(Z, compute_uv=False)
    return bool(s[0] > 0 and s[-1] / s[0] > RTOL)


def longest_full_rank_prefix(E, e, W_K, W_Q) -> int:
    """Largest T with the first T rows of Z numerically independent (rank is monotone in T)."""
    Z = mha.feature_matrix(E, e, W_K, W_Q)
    lo, hi = 0, min(Z.shape)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _full_rank(Z[:mid]) else (lo, mid - 1)
    return lo


def _z_torch(E, e, WK, WQ):
    u = torch.einsum("thk,hek->the", torch.einsum("td,hdk->thk", e, WQ), WK)
    a = torch.einsum("the,tne->thn", u, E)  # Eq. (1)
    return torch.einsum("thn,tnd->thd", torch.softmax(a, -1), E).reshape(E.shape[0], -1)  # Eqs. (2), (3), (7)


def maximize_logdet(E, e, W_K, W_Q, T: int, *, steps: int, lr: float = 0.05):
    """Adam on -log det(Z Z^T) over (W_K, W_Q) for the first T examples (float64)."""
    Et, et = torch.as_tensor(np.array(E[:T])), torch.as_tensor(np.array(e[:T]))
    WK = torch.tensor(np.array(W_K), requires_grad=True)
    WQ = torch.tensor(np.array(W_Q), requires_grad=True)
    opt = torch.optim.Adam([WK, WQ], lr=lr)
    eye = torch.eye(T, dtype=torch.float64)
    for _ in range(steps):
        Z = _z_torch(Et, et, WK, WQ)
        G = Z @ Z.T
        loss = -torch.linalg.slogdet(G + 1e-12 * G.trace() / T * eye)[1]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return WK.detach().numpy(), WQ.detach().numpy()


def probe(setting: Setting, *, seed: int, steps: int) -> dict:
    """The three certified answers for one setting (d_h = d, so r = n)."""
    H, n, d = setting.H, setting.n, setting.d
    t0 = time.perf_counter()
    pool = make_instance(H=H, n=n, d=d, d_h=d, T=H * d + 2, context=setting.context, seed=seed)
    E, e = np.asarray(pool.contexts), np.asarray(pool.queries)
    out = {"H": H, "n": n, "d": d, "context": setting.context, "caps": setting.caps(),
           "conjecture_H(d-1)+1": H * (d - 1) + 1}
    count = H * (n - 1) + 1
    try:
        inst = make_instance(H=H, n=n, d=d, d_h=d, T=count, context=setting.context, seed=seed)
        con = get_construction("proposition1.key_query_weights")(inst, seed=seed)
        cert = get_construction("proposition1.certify_rank")(inst, con, count)
        out["construction"] = count if cert.decision is Decision.TRUE else 0
    except (ConstructionFailed, InvalidInstance) as exc:
        out["construction"], out["construction_failed"] = 0, f"{type(exc).__name__}: {exc}"
    rng = np.random.default_rng([seed, H, n, d, 7])
    W_K, W_Q = rng.standard_normal((H, d, d)), rng.standard_normal((H, d, d))
    T_rand = longest_full_rank_prefix(E, e, W_K, W_Q)
    ok = T_rand > 0 and certify_rank(E, e, W_K, W_Q, T_rand).decision is Decision.TRUE
    out["random_weights"] = T_rand if ok else 0
    lo, hi = max(out["construction"], out["random_weights"]), H * d
    tried = {}
    while lo < hi:  # one step past the best so far first; if it holds, bisect upwards
        T = lo + 1 if not tried else (lo + hi + 1) // 2
        K, Q = maximize_logdet(E, e, W_K, W_Q, T, steps=steps)
        good = _full_rank(mha.feature_matrix(E[:T], e[:T], K, Q)) and \
            certify_rank(E, e, K, Q, T).decision is Decision.TRUE
        tried[str(T)] = good
        if not good and T == lo + 1:
            break
        lo, hi = (T, hi) if good else (lo, T - 1)
    out["optimized"] = lo
    out["optimized_trials"] = tried
    out["above_proven_cap"] = max(out["construction"], out["random_weights"], lo) > setting.proven_cap
    out["seconds"] = time.perf_counter() - t0
    return out


def _settings(d, pairs, kinds=("shared", "uniform", "sumconst")):
    return tuple(Setting(H, n, d, k) for k in kinds for H, n in pairs)


PROBES = {
    "quick": dict(settings=(Setting(2, 2, 4, "uniform"), Setting(2, 2, 4, "shared")), steps=50),
    "cpu": dict(settings=_settings(6, [(1, 3), (2, 2), (2, 3), (2, 4), (3, 3)])
                + (Setting(4, 8, 16, "uniform"), Setting(4, 8, 16, "shared")), steps=200),
    "thorough": dict(settings=_settings(6, [(1, 3), (2, 2), (2, 3), (2, 4), (2, 5), (3, 3), (4, 3)])
                     + _settings(10, [(2, 4), (3, 6)]) + (Setting(4, 8, 16, "uniform"), Setting(8, 8, 16, "uniform")),
                     steps=400),
    "paper": dict(settings=(Setting(1, 32, 64, "uniform"), Setting(2, 32, 64, "uniform"),
                            Setting(2, 32, 64, "shared"), Setting(2, 32, 64, "sumconst")), steps=400),
}


@experiment("capacity_probe",
            claim="App. I.1 (conjecture; its formula is lost in our copy of the paper, read here as a cap "
                  "H(d-1)+1, EXPERIMENTS.md's reading): with contexts in general position the count is "
                  "H(d-1)+1 (instead of H(n-1)+1 with a shared context).",
            criterion="Per setting, the largest T with rank Z = T CERTIFIED (arb minor) for the construction, "
                      "random weights and log-det-maximizing weights (real labels: T examples are memorizable "
                      "iff such weights exist). Reproduced: on every general-position (Uniform[0,1]) setting "
                      "some certified T >= H(d-1)+1; partially: on at least half; otherwise not reproduced. "
                      "A certified T above a proven cap (Prop. 2: H(n-1)+1 shared; Prop. 5: H(d-1)+1 "
                      "sum-constant) would refute that proposition and is reported as such.",
            kind="probe")
def capacity_probe(scale: str, seed: int) -> Outcome:
    cfg = PROBES[scale]
    rows = [probe(s, seed=seed, steps=cfg["steps"]) for s in cfg["settings"]]
    best = [max(r["construction"], r["random_weights"], r["optimized"]) for r in rows]
    gp = [(r, b) for r, b in zip(rows, best) if r["context"] == "uniform"]
    status, _ = _decide([b >= r["conjecture_H(d-1)+1"] for r, b in gp])
    over = [r for r in rows if r["above_proven_cap"]]
    hd = sum(b == r["H"] * r["d"] for r, b in gp)
    above = [(r, b) for r, b in gp if r["H"] * r["d"] > r["conjecture_H(d-1)+1"]]  # H >= 2
    beyond = sum(b > r["conjecture_H(d-1)+1"] for r, b in above)
    at_cap = {k: sum(b == min(r["caps"].values()) for r, b in zip(rows, best) if r["context"] == k)
              for k in ("shared", "sumconst")}
    total = {k: sum(r["context"] == k for r in rows) for k in ("shared", "sumconst")}
    why = (f"general position: certified T >= H(d-1)+1 on {sum(b >= r['conjecture_H(d-1)+1'] for r, b in gp)} of "
           f"{len(gp)} settings; T = Hd (all the columns of Z) on {hd} of {len(gp)}, i.e. above the conjectured "
           f"H(d-1)+1 on {beyond} of the {len(above)} settings with H >= 2; shared contexts reach Prop. 2's cap "
           f"H(n-1)+1 on {at_cap['shared']} of {total['shared']}, sum-constant tokens Prop. 5's H(d-1)+1 on "
           f"{at_cap['sumconst']} of {total['sumconst']}")
    if above and beyond == len(above):
        why = (f"our cap reading H(d-1)+1 of App. I.1's lost formula is exceeded (a lower-bound reading, as App. I "
               f"frames the open question, is consistent): T = Hd certified on {beyond} of {len(above)} settings "
               f"with H >= 2. " + why)
    if not over:
        why += "; no certified T above a proven cap"
    if over:
        status = "not reproduced"
        why = (f"REFUTATION of a proven cap on {len(over)} setting(s): "
               + ", ".join(f"{r['context']} H={r['H']} n={r['n']} d={r['d']}" for r in over) + "; " + why)
    return Outcome(status, why, measured={"settings": rows, "best_certified": best, "seed": seed},
                   figures=(Figure("capacity_probe", "Exact capacity probe: certified rank(Z) = T",
                                   "Largest T with rank Z = T certified by an arb minor, per setting (bars: "
                                   "construction, random weights, log-det-maximizing weights; markers: the caps "
                                   "Hd, Prop. 2's H(n-1)+1, Prop. 5's H(d-1)+1 and App. I.1's conjectured "
                                   "H(d-1)+1). Real labels, d_v = d_out = 1, d_h = d.", probe_figure(rows)),))


def _decide(passes):
    from verifier.experiments.measures import decide

    return decide(passes, none_why="no general-position setting at this scale")


def probe_figure(rows) -> bytes:
    from verifier.experiments.plots import _pyplot, png

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(rows) + 2), 4))
    x = np.arange(len(rows))
    for k, (key, col) in enumerate((("construction", "C3"), ("random_weights", "C0"), ("optimized", "C2"))):
        ax.bar(x + (k - 1) * 0.27, [r[key] for r in rows], 0.27, color=col, label=key.replace("_", " "))
    ax.plot(x, [r["caps"]["Hd"] for r in rows], "k_", ms=14, mew=2, label="Hd")
    ax.plot(x, [r["conjecture_H(d-1)+1"] for r in rows], "m_", ms=14, mew=2, label="H(d-1)+1 (App. I.1)")
    ax.plot(x, [r["H"] * (r["n"] - 1) + 1 for r in rows], "y_", ms=14, mew=2, label="H(n-1)+1")
    ax.set_xticks(x, [f"{r['context'][:4]}\nH{r['H']} n{r['n']} d{r['d']}" for r in rows], fontsize=6.5)
    ax.set_xlabel("setting: context (shar: shared, unif: uniform, sumc: tokens summing to a constant), H, n, d")
    ax.set_ylabel("largest certified T with rank Z = T")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return png(fig)
