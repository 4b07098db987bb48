"""Property-based runs at real sizes (``mha-verify report --thorough`` only):
Theorem 1, Prop. 1 and Prop. 2 on instances drawn up to the sizes of real
models -- H <= 60, n <= 197, d <= 768, shared and random contexts, T =
H(r-1)+1 (:mod:`verifier.data.size_profiles`) -- each statement on each draw
one unit of work on the report's executor (in-process or Ray), cached and
resumable like the statements' sweep (:mod:`.cache`).

The budget is stated before anything runs: :data:`COUNT` draws (the first
three pin H at 60, n and d at 197 and 768, and every size at its smallest),
each shrunk until its cost, estimated from the sizes alone
(:func:`estimated_seconds`), is at most :data:`CAP_SECONDS`; so at most
``COUNT * CAP_SECONDS`` estimated seconds in all.  Theorem 1 takes
Assumption 1's random-subset evidence with :data:`ASSUMPTION_SAMPLES`
subsets (as the paper's-scale section); Props. 1 and 2 run exactly as
registered.  A random-context draw gets Prop. 2's verdict there:
hypotheses-unmet (its hypothesis is a shared context).

Same seed, same draws, same verdicts: results.json holds the draws, the
estimates and the verdicts; the measured times go to run.json
(``real_size_seconds``).

>>> [s.to_dict()["T"] for s in profile_draws(seed=0)] == [s.T for s in profile_draws(seed=0)]
True
>>> all(estimated_seconds(s) <= CAP_SECONDS for s in profile_draws(seed=0))
True
"""
from __future__ import annotations

import math
import time
import warnings

import mpmath

from verifier.arith.compare import workprec
from verifier.data.instances import make_instance
from verifier.data.size_profiles import REAL_MAX, SizeDraw, seeded_real_sizes
from verifier.report.cache import UnitCache, cached_map
from verifier.report.executor import LocalExecutor
from verifier.report.sweep import AMBIENT_PREC
from verifier.statements import registry
from verifier.statements.evidence import VERDICTS
from verifier.statements.runner import run_check

STATEMENTS = ("theorem1", "proposition1", "proposition2")
COUNT = 6
CAP_SECONDS = 40.0
ASSUMPTION_SAMPLES = 500
PREC = 128
UNIT_KIND = "real-size-draw"
#: Assumption 1's random-subset count per statement (None: the checker's own, the paper's 5000)
_SAMPLES = {"theorem1": ASSUMPTION_SAMPLES, "proposition1": 5000, "proposition2": 5000}

#: CPU seconds per unit of work, per statement, fitted on this project's
#: 2-core machine (single-threaded BLAS) at sizes up to H = 60, n = 197,
#: d = 768: Z's float work (SVD/QR of T x Hd), the T x T minor, one n x d
#: exact rank (a context, a subset), every context of a random draw, Assumption
#: 1's random subsets, Prop. 2's Z in Arb balls (one product per weight set;
#: a random context costs one per example) and its softmax rows
COST = {
    "theorem1": {"Z": 1.5e-9, "minor": 1.5e-9, "exact": 2e-7, "contexts": 5e-8, "subsets": 2e-9, "base": 0.3},
    "proposition1": {"Z": 3e-9, "minor": 1.5e-9, "exact": 2e-7, "contexts": 1e-7, "subsets": 2e-9, "base": 0.3},
    "proposition2": {"Z": 2e-9, "minor": 1.5e-9, "exact": 2e-7, "contexts": 1e-7, "subsets": 2e-9,
                     "balls shared": 1.3e-7, "balls random": 7e-7, "softmax rows": 5e-5, "base": 1.5},
}


def work(s: SizeDraw, sid: str) -> dict:
    """The counts the cost model multiplies (operations, up to constants)."""
    T, H, n, d = s.T, s.H, s.n, s.d
    subsets = min(_SAMPLES[sid], math.comb(T, n)) if T >= n else 0
    trials = 3 + (s.d_h >= n)  # Prop. 2's weight sets: random, saturated, uniform (+ Prop. 1's when d_h >= n)
    random = s.context == "random"
    return {"Z": T * H * d * min(T, H * d), "minor": T ** 3, "exact": n * n * d, "contexts": random * T * n * n * d,
            "subsets": subsets * n * n * d, "balls shared": (not random) * trials * T * H * n * d,
            "balls random": random * trials * T * H * n * d, "softmax rows": trials * T * H, "base": 1}


def estimated_seconds(s: SizeDraw, sid: str | None = None) -> float:
    """The cost model: CPU seconds for ``sid`` on ``s`` (all of :data:`STATEMENTS` when None)."""
    sids = STATEMENTS if sid is None else (sid,)
    return sum(COST[k].get(term, 0.0) * count for k in sids for term, count in work(s, k).items())


def profile_draws(*, seed: int, count: int = COUNT, cap: float = CAP_SECONDS) -> list[SizeDraw]:
    """The profile's draws: deterministic in ``seed``, each within ``cap``."""
    return seeded_real_sizes(seed=seed, count=count, cost=estimated_seconds, cap=cap)


def unit_inputs(sid: str, s: SizeDraw, *, prec: int = PREC, degenerate: str | None = None) -> dict:
    """What one unit's result depends on, besides the code."""
    return {"kind": UNIT_KIND, "statement": sid, "options": s.options(), "degenerate": degenerate, "prec": prec,
            "assumption_samples": ASSUMPTION_SAMPLES if sid == "theorem1" else None}


def run_unit(unit: dict) -> dict:
    """One statement on one drawn instance: its verdict, whether certified,
    its hypotheses' statuses, the reason when not verified, and the time."""
    registry.load_all()
    t0, c0 = time.perf_counter(), time.process_time()
    sid, prec = unit["statement"], unit["prec"]
    opts = dict(unit["options"], degenerate=unit["degenerate"])
    extra = {} if unit["assumption_samples"] is None else {"assumption_samples": unit["assumption_samples"]}
    with workprec(AMBIENT_PREC), mpmath.workprec(AMBIENT_PREC), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the verdicts decide; warnings are the checkers' own diagnostics
        inst = make_instance(**opts)
        ev = run_check(sid, inst, prec=prec, seed=opts["seed"], **extra)
    out = {"statement": sid, "T": inst.T, "verdict": ev.verdict, "certified": bool(ev.certified),
           "hypotheses": {h.name: h.status for h in ev.hypotheses}}
    if ev.verdict != "verified":
        out["reason"] = ev.reason
    out["seconds"] = {"wall": round(time.perf_counter() - t0, 3), "cpu": round(time.process_time() - c0, 3)}
    return out


def belongs(result: dict, unit: dict) -> str | None:
    """Why a cached result is not ``unit``'s (None: it is)."""
    if result["statement"] != unit["statement"]:
        return f"the result is {result['statement']!r}'s, not {unit['statement']!r}'s"
    if result["verdict"] not in VERDICTS or not isinstance(result["hypotheses"], dict):
        return f"verdict {result['verdict']!r}"
    if not isinstance(result["T"], int) or (unit["options"].get("T") not in (None, result["T"])):
        return f"T = {result['T']!r}, the unit's {unit['options'].get('T')!r}"
    return None


def run_profile(mode: str, *, seed: int, executor=None, cache: UnitCache | None = None, progress=None,
                draws: list[SizeDraw] | None = None, statements=STATEMENTS) -> dict:
    """The section's data: in thorough mode each of ``statements`` on every
    draw (``draws``: the profile's by default), run on ``executor``, read
    from / written to ``cache``; in other modes nothing runs."""
    sids = [s for s in STATEMENTS if s in statements]
    section = {"mode": mode, "count": 0, "draws": [], "statements": sids, "cap_seconds": CAP_SECONDS,
               "assumption1_samples": {s: _SAMPLES[s] for s in sids}, "largest": dict(REAL_MAX)}
    if mode != "thorough":
        return dict(section, error=False, refuted=[])
    draws = profile_draws(seed=seed) if draws is None else draws
    units = [unit_inputs(sid, s) for s in draws for sid in sids]

    def step(i: int, r: dict) -> None:
        if progress:
            progress.step(f"{r['statement']} T={r['T']}")

    results, stats = cached_map(executor or LocalExecutor(), run_unit, units, units, cache, on_result=step,
                                keep=lambda r: r["verdict"] != "error", check=belongs)
    rows = []
    for i, s in enumerate(draws):
        got = results[i * len(sids):(i + 1) * len(sids)]
        rows.append({"sizes": s.to_dict(), "estimated_seconds": round(sum(estimated_seconds(s, k) for k in sids), 1),
                     "results": {r["statement"]: r for r in got}})
    flat = [(row, r) for row in rows for r in row["results"].values()]
    return dict(section, count=len(rows), draws=rows, units=stats,
                estimated_seconds=round(sum(r["estimated_seconds"] for r in rows), 1),
                verdicts=_tally(r["verdict"] for _, r in flat),
                error=any(r["verdict"] == "error" for _, r in flat),
                refuted=[{"statement": r["statement"], **row["sizes"]} for row, r in flat if r["verdict"] == "refuted"])


def _tally(verdicts) -> dict:
    out: dict[str, int] = {}
    for v in verdicts:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def seconds_of(section: dict) -> dict:
    """The measured times (run.json): per draw, per statement, wall and CPU seconds."""
    return {f"draw {i}": {sid: r.get("seconds") for sid, r in row["results"].items()}
            for i, row in enumerate(section.get("draws", []))}


# -- the section -------------------------------------------------------------

_NAMES = {"theorem1": "Thm. 1", "proposition1": "Prop. 1", "proposition2": "Prop. 2"}
_SHORT = {"verified": "verified", "hypotheses-unmet": "hyp. unmet", "refuted": "REFUTED",
          "inconclusive": "inconclusive", "error": "ERROR"}


def _verdict(r: dict) -> str:
    return _SHORT.get(r["verdict"], r["verdict"]) + ("" if r["certified"] or r["verdict"] != "verified" else " (num.)")


def _drawn(s: dict) -> str:
    d = s.get("drawn")
    return "" if not d else f"{d['H']}, {d['n']}, {d['d']}, {d['d_h']}"


def markdown_section(section: dict) -> str:
    """The section as Markdown (``section`` without its times: results.json's
    entry; with them, a time column is added)."""
    if section.get("mode") != "thorough":
        return ""
    sids = section["statements"]
    lines = ["", "## Property-based runs at real sizes", "",
             f"{section['count']} instances drawn up to H = {section['largest']['H']}, n = {section['largest']['n']}, "
             f"d = {section['largest']['d']} (each size at its smallest, its largest or log-uniform between; the "
             "first draws pin H at its largest, then n and d, then every size at its smallest), d_h from the "
             "smallest with T >= n to n, a shared or a random context, T = H(r-1)+1; "
             + ", ".join(_NAMES[s] for s in sids) + " on each, every one a unit on the report's executor. "
             f"Budget, stated before running: each draw's cost estimated from its sizes at most "
             f"{section['cap_seconds']:g} CPU s (shrunk to fit: d_h first, then H, d, n halved in turn; the sizes first "
             f"drawn are shown), {section.get('estimated_seconds', 0):g} CPU s estimated in all. Assumption 1 from "
             + ", ".join(f"{v} random subsets for {_NAMES[k]}" for k, v in section["assumption1_samples"].items())
             + " where C(T, n) is larger (exhausted otherwise).", ""]
    timed = any("seconds" in r for row in section["draws"] for r in row["results"].values())
    head = "| # | H | n | d | d_h | T | context | seed | drawn (H, n, d, d_h) | estimated CPU s | " + \
        " | ".join(_NAMES[s] for s in sids) + " |" + (" measured s |" if timed else "")
    lines += [head, "|" + "---|" * (10 + len(sids) + timed)]
    for i, row in enumerate(section["draws"]):
        s, res = row["sizes"], row["results"]
        cells = [str(i), str(s["H"]), str(s["n"]), str(s["d"]), str(s["d_h"]), str(s["T"]), s["context"], str(s["seed"]), _drawn(s),
                 f"{row['estimated_seconds']:g}"] + [_verdict(res[sid]) for sid in sids]
        if timed:
            cells.append(f"{sum(r['seconds']['wall'] for r in res.values() if 'seconds' in r):.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    v = section.get("verdicts", {})
    sizes = [row["sizes"] for row in section["draws"]]
    lines += ["", "Verdicts: " + ", ".join(f"{k} {n}" for k, n in v.items()) + (
        f". Largest drawn: H = {max(s['H'] for s in sizes)}, n = {max(s['n'] for s in sizes)}, "
        f"d = {max(s['d'] for s in sizes)}, T = {max(s['T'] for s in sizes)}." if sizes else ".")]
    unmet = sorted({f"{_NAMES[sid]}: {r['reason']}" for row in section["draws"] for sid, r in row["results"].items()
                    if r["verdict"] != "verified" and r.get("reason")})
    if unmet:
        lines += ["", "Reasons, where not verified:", ""] + [f"- {u}" for u in unmet]
    if not timed:
        lines += ["", "Times of this run, per draw and statement: `run.json`, `real_size_seconds`."]
    lines += ["", "Reproduce a draw: `mha-verify check theorem1 --H H --n n --d d --dh d_h --context C --seed S` "
              "(T = H(r-1)+1 is the default; likewise `proposition1`, and `proposition2` with `--T` set to T).", ""]
    return "\n".join(lines) + "\n"


def html_section(section: dict) -> str:
    import html

    md = markdown_section(section).strip().splitlines()
    if not md:
        return ""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md if line.startswith("|")
            and not line.startswith("|---")]
    body = "".join("<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{html.escape(c)}</{'th' if i == 0 else 'td'}>"
                                     for c in row) + "</tr>" for i, row in enumerate(rows))
    text = [f"<p>{html.escape(line.lstrip('- '))}</p>" for line in md[1:] if line and not line.startswith("|")]
    cut = next((i for i, t in enumerate(text) if "Verdicts" in t), len(text))
    return (f"<section id='real-sizes'><h2>{html.escape(md[0].lstrip('# '))}</h2>{''.join(text[:cut])}"
            f"<table>{body}</table>{''.join(text[cut:])}</section>")


def insert_html(page: str, section: dict) -> str:
    """The section placed before the page's closing body tag (nothing outside thorough mode)."""
    part = html_section(section)
    cut = page.rfind("</body>")
    return page[:cut] + part + page[cut:] if cut >= 0 else page + part
