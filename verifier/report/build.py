"""The verification report: every statement on a set of instances, one command.

``mha-verify report [--quick | --thorough] [--out DIR] [--seed N]`` writes

* ``results.json``: every row, every instance (its options and the exact
  ``mha-verify check ...`` command that reproduces it), every negative
  control, one full audit trail per statement, the figures' numbers;
* ``REPORT.md`` and ``index.html`` (self-contained: figures embedded as
  ``data:`` URIs; the same PNGs also lie in ``figures/``).

Instances: the statement's default instance (``registry.REGISTRY[sid]
.defaults`` over the global defaults) plus, outside ``--quick``, instances
drawn from the seed by varying H, n, d, d_h, the context kind (random <->
uniform only) and the data seed in small ranges around those defaults
(n < d kept; a statement's own context / degenerate kind kept).  Quick: 1
per statement; default: 5; thorough: 200.  Every negative control runs once.

Same seed => same ``results.json`` apart from the ``run`` block (date, argv,
machine, versions, durations) and the ``seconds`` fields.  A statement without
a checker is a "not implemented" row, never a pass; a checker that raises is
an "error" row and the exit code is non-zero (4 for errors, 1 for a refutation
or a negative control that was not rejected, else 0).  Definitions and
assumptions are properties of the data: their "refuted" (the property fails
on a drawn instance) is counted and shown, but is not a refutation of the paper.

>>> plan = instance_plan("assumption2", mode="default", seed=0)
>>> len(plan), plan[0]["seed"], all(p["n"] < p["d"] for p in plan)
(30, 0, True)
>>> reproduce_command("lemma2", {"H": 1, "n": 3, "d": 5, "d_h": None, "T": 4, "seed": 0})
'mha-verify check lemma2 --H 1 --n 3 --d 5 --T 4 --seed 0'
"""
from __future__ import annotations

import base64
import itertools
import json
import math
import os
import re
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from verifier.errors import InvalidInstance
from verifier.statements import registry
from verifier.statements.evidence import error_evidence
from verifier.statements.runner import build_instance, run_check, run_control

MODES = {"quick": 1, "default": 30, "thorough": 200}
PREC = 128
TIMING_KEYS = frozenset({"seconds", "run"})  # what a determinism check strips
_CLI_FLAGS = (("H", "--H"), ("n", "--n"), ("d", "--d"), ("d_h", "--dh"), ("d_v", "--dv"),
              ("d_out", "--dout"), ("T", "--T"), ("context", "--context"),
              ("degenerate", "--degenerate"), ("seed", "--seed"))
#: Statements that are properties of the data (a definition, an assumption),
#: not claims of the paper: "refuted" there means "the property fails on this
#: instance" (e.g. Assumption 1 with fewer than n queries), never that the
#: paper is wrong, so it is counted but neither red nor a failing exit code.
PROPERTY_PREFIXES = ("definition", "assumption")
_STATUS_ORDER = ("error", "refuted", "control failed", "inconclusive", "hypotheses-unmet",
                 "verified (numerical)", "verified", "not checkable", "not implemented")


class Progress:
    """A one-line progress bar per phase on a terminal; silent in CI or when
    stderr is not a tty (no dependency)."""

    def __init__(self, phase: str, total: int, *, stream=None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get("CI")
        self.phase, self.total, self.done, self.enabled = phase, max(total, 1), 0, enabled
        self.t0 = time.perf_counter()

    def step(self, label: str = "") -> None:
        self.done += 1
        if self.enabled:
            width = 28
            fill = int(width * self.done / self.total)
            self.stream.write(f"\r{self.phase:>9s} [{'#' * fill}{'.' * (width - fill)}] "
                              f"{self.done}/{self.total} {time.perf_counter() - self.t0:5.1f}s {label[:28]:28s}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# -- which instances ------------------------------------------------------------

def _capacity(o: dict) -> int:
    return o["H"] * (min(o["n"], o["d_h"] or o["n"]) - 1) + 1


def _vary(base: dict, rng: np.random.Generator) -> dict:
    o = dict(base)
    o["H"] = int(max(1, base["H"] + rng.integers(-1, 2)))
    o["n"] = int(max(2, base["n"] + rng.integers(-1, 2)))
    gap = max(1, base["d"] - base["n"])
    o["d"] = o["n"] + int(max(1, gap + rng.integers(-1, 2)))
    if base["d_h"] is None:
        o["d_h"] = [None, None, max(1, o["n"] - 1), o["n"] + 1][int(rng.integers(4))]
    else:
        o["d_h"] = int(max(1, base["d_h"] + rng.integers(-1, 2)))
    if base["context"] == "random":
        o["context"] = ("random", "random", "uniform")[int(rng.integers(3))]
    if base["T"] is not None:  # keep the statement's T relative to the capacity
        o["T"] = int(max(1, base["T"] + _capacity(o) - _capacity(base)))
    o["seed"] = int(rng.integers(1, 2**31 - 1))
    return o


def iter_plans(sid: str, *, seed: int):
    """Instance options for ``sid``, deterministic in ``seed`` and ``sid``:
    the default instance first, then distinct draws around it."""
    st = registry.REGISTRY[sid]
    own = registry.instance_options(sid)  # a paper's own options (None: the first paper's)
    keys, vary = (own.defaults, own.vary or _vary) if own else (registry.DEFAULT_OPTIONS, _vary)
    base = {k: v for k, v in st.options(seed=seed).items() if k in keys}
    base["seed"] = int(seed)
    yield base
    seen = {json.dumps(base, sort_keys=True)}
    rng = np.random.default_rng([int(seed), zlib.crc32(sid.encode())])
    for _ in range(100_000):
        o = vary(base, rng)
        key = json.dumps(o, sort_keys=True)
        if key not in seen:
            seen.add(key)
            yield o


def instance_plan(sid: str, *, mode: str, seed: int) -> list[dict]:
    """The first ``MODES[mode]`` instances of :func:`iter_plans`."""
    return list(itertools.islice(iter_plans(sid, seed=seed), MODES[mode]))


def reproduce_command(sid: str, options: dict) -> str:
    """The exact ``mha-verify check`` line for an instance (defaults omitted
    only where the value is None)."""
    parts = ["mha-verify", "check", sid]
    own = registry.instance_options(sid) if sid in registry.REGISTRY else None
    flags = tuple((f.key, f.flag) for f in own.flags) if own else _CLI_FLAGS  # each paper's own flags
    for key, flag in flags:
        if options.get(key) is not None:
            parts += [flag, str(options[key])]
    return " ".join(parts)


# -- running -------------------------------------------------------------------

def _numbers_under(x, keep) -> list[float]:
    """Finite numbers found under keys accepted by ``keep`` (recursively)."""
    out = []
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and keep(str(k)):
                if math.isfinite(float(v)):
                    out.append(float(v))
            elif isinstance(v, (dict, list)):
                out += _numbers_under(v, keep)
    elif isinstance(x, list):
        for v in x:
            out += _numbers_under(v, keep)
    return out


def _is_residual_key(k: str) -> bool:
    """Residuals of the conclusion (|Yhat - Y|, residual balls), not the rank
    certificate's preconditioner residual ||I - R A||."""
    k = k.lower()
    return ("residual" in k and "residual_norm_upper" not in k) or bool(re.search(r"\|[^|]*-[^|]*\|", k))


def largest_residual(ev: dict) -> float | None:
    vals = _numbers_under({"m": ev.get("measured"), "c": ev.get("certificates")}, _is_residual_key)
    return max(vals) if vals else None


def _record(sid: str, options: dict, ev: dict, caught=()) -> dict:
    """One instance's row: options, the command that reproduces it, verdict,
    margin, residual, and the warnings the checker raised (shown, not printed)."""
    margin = ev.get("margin")
    warned = sorted({f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})" for w in caught})
    return {"options": options, "command": reproduce_command(sid, options), "verdict": ev["verdict"],
            "certified": ev["certified"], "method": ev["method"],
            "margin": margin if isinstance(margin, (int, float)) else None,
            "largest_residual": largest_residual(ev), "reason": ev["reason"],
            "fingerprint": (ev.get("instance") or {}).get("sha256_16"), "warnings": warned,
            "seconds": ev["seconds"]}


def run_statement(sid: str, plans, count: int, *, prec: int = PREC, progress: Progress | None = None) -> dict:
    """Run ``sid`` on ``count`` instances taken from ``plans`` (an iterable of
    options; a drawn instance the statement refuses as invalid is skipped and
    replaced, up to ``3 count`` draws).  The first (default) instance's full
    evidence, trail included, is kept as the audit."""
    instances, audit, skipped, details = [], None, [], []
    for i, opts in enumerate(itertools.islice(plans, 3 * count)):
        if len(instances) >= count:
            break
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ev = run_check(sid, build_instance(sid, **opts), prec=prec, seed=opts["seed"])
        except InvalidInstance as exc:
            if i > 0:  # a drawn variant the statement does not accept: not a verdict
                skipped.append({"options": opts, "command": reproduce_command(sid, opts), "reason": str(exc)})
                continue
            ev = error_evidence(sid, f"InvalidInstance on the default instance: {exc}")
        d = ev.to_dict(with_trail=True)
        if i == 0:
            audit = d
        elif d["verdict"] in ("refuted", "error", "inconclusive"):
            details.append(d)  # keep what someone will want to reproduce
        instances.append(_record(sid, opts, d, caught))
        if progress:
            progress.step(sid)
    return {"instances": instances, "skipped": skipped, "audit": audit, "details": details}


def run_controls(sid: str, *, seed: int, prec: int = PREC, progress: Progress | None = None) -> list[dict]:
    out = []
    for c in registry.REGISTRY[sid].controls:
        with warnings.catch_warnings(record=True):  # a false variant may warn: expected, not shown
            warnings.simplefilter("always")
            ev, ok = run_control(sid, c, prec=prec, seed=seed)
        d = ev.to_dict(with_trail=False)
        out.append({"description": c.description, "expect": list(c.expect), "rejected": bool(ok),
                    "function": f"{getattr(c.run, '__module__', '?')}.{getattr(c.run, '__qualname__', '?')}",
                    "verdict": d["verdict"], "reason": d["reason"], "seconds": d["seconds"],
                    "evidence": d})
        if progress:
            progress.step(f"{sid} control")
    return out


def is_property(sid: str) -> bool:
    return sid.startswith(PROPERTY_PREFIXES)


def row_status(row: dict) -> str:
    if not row["implemented"]:
        return "not checkable" if row.get("not_checkable") else "not implemented"
    verdicts = [r["verdict"] for r in row["instances"]]
    if is_property(row["id"]):  # the property failing on an instance is not a refutation
        verdicts = ["hypotheses-unmet" if v == "refuted" else v for v in verdicts]
    controls = row["controls"]
    if "error" in verdicts or any(c["verdict"] == "error" and not c["rejected"] for c in controls):
        return "error"
    if "refuted" in verdicts:
        return "refuted"
    if any(not c["rejected"] for c in controls):
        return "control failed"
    if "inconclusive" in verdicts:
        return "inconclusive"
    if "verified" not in verdicts:
        return "hypotheses-unmet"
    if any(r["verdict"] == "verified" and not r["certified"] for r in row["instances"]):
        return "verified (numerical)"
    return "verified"


def summarise(sid: str, run: dict | None, controls: list[dict]) -> dict:
    st = registry.REGISTRY[sid]
    row = {"id": sid, "kind": "property of the data" if is_property(sid) else "claim of the paper",
           "reference": st.reference, "summary": st.summary, "depends": list(st.depends),
           "implemented": st.implemented, "not_checkable": st.not_checkable, "paper": st.paper,
           "module": st.module, "doc": st.doc,
           "instances": [], "skipped": [], "audit": None, "details": [], "controls": controls}
    if run:
        row.update(run)
    inst = row["instances"]
    margins = [r["margin"] for r in inst if r["margin"] is not None and math.isfinite(r["margin"])]
    residuals = [r["largest_residual"] for r in inst if r["largest_residual"] is not None]
    counts = {v: sum(r["verdict"] == v for r in inst) for v in sorted({r["verdict"] for r in inst})}
    row.update({
        "instances_tried": len(inst),
        "certified_passes": sum(r["verdict"] == "verified" and r["certified"] for r in inst),
        "numerical_passes": sum(r["verdict"] == "verified" and not r["certified"] for r in inst),
        "verdict_counts": counts,
        "controls_total": len(controls), "controls_rejected": sum(c["rejected"] for c in controls),
        "worst_margin": min(margins) if margins else None,
        "largest_residual": max(residuals) if residuals else None,
        "seconds": round(sum(r["seconds"] for r in inst) + sum(c["seconds"] for c in controls), 6),
        "errors": [r["reason"] for r in inst if r["verdict"] == "error"]
        + [f"control '{c['description']}': {c['reason']}" for c in controls if c["verdict"] == "error" and not c["rejected"]],
    })
    row["status"] = row_status(row)
    return row


# -- the report ----------------------------------------------------------------

def exit_code(rows: list[dict], figures: list[dict]) -> int:
    statuses = {r["status"] for r in rows}
    if "error" in statuses or any(f["error"] for f in figures):
        return 4
    if statuses & {"refuted", "control failed"}:
        return 1
    return 0


def build_figures(out: Path, *, seed: int, statuses: dict, progress: Progress | None = None) -> list[dict]:
    from verifier.report import figures as rf

    figs = []
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for name in rf.DRAWERS:
        data, error, title, caption = None, "", name, ""
        try:
            title, caption = rf.figure_spec(name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the figures illustrate; the checkers decide
                data = rf.figure_data(name, seed=seed, statuses=statuses)
            png = rf.draw(name, data)
        except Exception as exc:  # noqa: BLE001 - a failed figure is shown, never hidden
            error = f"{type(exc).__name__}: {exc}"
            png = rf.draw(name, None, error=error)
        (out / "figures" / f"{name}.png").write_bytes(png)
        figs.append({"name": name, "title": title, "caption": caption, "file": f"figures/{name}.png",
                     "data": data, "error": error, "png_base64": base64.b64encode(png).decode("ascii")})
        if progress:
            progress.step(name)
    return figs


def write_report(*, out="reports", mode="default", seed=0, argv=(), statements=None, prec: int = PREC) -> int:
    """Run every statement (or only ``statements``), write the report to
    ``out``; returns the exit code (0 all well, 1 refuted / control not
    rejected, 4 a checker or figure error)."""
    from verifier.report import environment, markdown
    from verifier.report import html as report_html

    if mode not in MODES:
        raise ValueError(f"mode {mode!r} not in {sorted(MODES)}")
    t_start = time.time()
    reg = registry.load_all()
    ids = [s for s in reg if statements is None or s in statements]
    plans = [s for s in ids if reg[s].implemented]
    runs, controls = {}, {}
    bar = Progress("checks", MODES[mode] * len(plans))
    for sid in plans:
        runs[sid] = run_statement(sid, iter_plans(sid, seed=seed), MODES[mode], prec=prec, progress=bar)
    bar.close()
    bar = Progress("controls", sum(len(reg[s].controls) for s in plans))
    for sid in plans:
        controls[sid] = run_controls(sid, seed=seed, prec=prec, progress=bar)
    bar.close()
    rows = [summarise(s, runs.get(s), controls.get(s, [])) for s in ids]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from verifier.report.figures import DRAWERS

    bar = Progress("figures", len(DRAWERS))
    figures = build_figures(out, seed=seed, statuses={r["id"]: r["status"] for r in rows}, progress=bar)
    bar.close()
    from verifier.report import experiments as report_experiments

    bar = Progress("experiments", len(report_experiments.catalogue.load_all()) if statements is None else 0)
    experiments = report_experiments.run_experiments(out, mode=mode, seed=seed, progress=bar,
                                                     only=None if statements is None else ())
    bar.close()
    from verifier.report import papers as report_papers  # one section per later paper (maps, tables)

    paper_entries, paper_pngs = report_papers.build_sections(out, seed=seed, statements=statements,
                                                             statuses={r["id"]: r["status"] for r in rows})
    bad = report_experiments.has_error(experiments) or report_papers.has_error(paper_entries)
    code = 4 if bad else exit_code(rows, figures)
    results = {
        "paper": "; ".join(f"{p.title} ({p.citation})" for p in registry.PAPERS.values()),
        "config": {"mode": mode, "seed": seed, "prec_bits": prec, "instances_per_statement": MODES[mode],
                   "statements": ids},
        "summary": {"exit_code": code, "status_counts": {k: sum(r["status"] == k for r in rows)
                                                         for k in _STATUS_ORDER if any(r["status"] == k for r in rows)},
                    "refutations": [dict(statement=r["id"], **i) for r in rows for i in r["instances"]
                                    if i["verdict"] == "refuted" and not is_property(r["id"])]},
        "statements": {r["id"]: r for r in rows},
        "figures": {f["name"]: {k: f[k] for k in ("title", "caption", "file", "data", "error")} for f in figures},
        "experiments": report_experiments.results_entry(experiments),
        "papers_order": list(registry.PAPERS),
        "papers": paper_entries,
        "run": {"argv": list(argv), "command": " ".join(["mha-verify"] + list(argv)[1:]) if argv else "",
                "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
                "duration_seconds": round(time.time() - t_start, 3), **environment.run_environment()},
    }
    (out / "results.json").write_text(json.dumps(results, sort_keys=True, indent=1) + "\n")
    (out / "REPORT.md").write_text("".join((markdown.render_markdown(results), report_papers.markdown_sections(
        results), report_experiments.markdown_section(experiments))))
    page = report_papers.insert_html(report_html.render_html(results, figures), results, paper_pngs)
    (out / "index.html").write_text(report_experiments.insert_html(page, experiments))
    counts = ", ".join(f"{v} {k}" for k, v in results["summary"]["status_counts"].items())
    print(f"mha-verify report ({mode}, seed {seed}): {counts}; "
          f"{results['run']['duration_seconds']:.0f} s; wrote {out / 'index.html'} (exit {code})")
    return code
