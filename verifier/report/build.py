"""The verification report: every statement on a set of instances, one command.

``mha-verify report [--quick | --thorough] [--out DIR] [--seed N]`` writes

* ``results.json``: every row, every instance (its options and the exact
  ``mha-verify check ...`` command that reproduces it), every negative
  control, one full audit trail per statement, the figures' numbers;
* ``REPORT.md`` and ``index.html`` (self-contained: figures embedded as
  ``data:`` URIs; the same PNGs also lie in ``figures/``);
* ``ERRATA-<paper>.md`` and ``certificates-<paper>/``: each paper's
  findings as a document, and its self-contained certificates
  (:mod:`.errata`, the same as ``mha-verify errata <paper>``);
* ``run.json``: the facts of this run alone (date, duration, command,
  machine, versions, git commit, timings per phase and per statement).

Same seed => the same ``results.json``, ``REPORT.md``, ``index.html`` and
figures, byte for byte: everything that changes between runs is in
``run.json``.  The same holds on another machine (another BLAS, another
summation order): every number is printed to the digits it is known to
(:func:`verifier.statements.display.stable`, applied once, also to the data
a figure is drawn from), and what float pivoting chose (a minor's rows and
columns, a rejected negative control's evidence) is moved to ``run.json``
(:func:`.environment.split_machine_choices`).  The exit code is 4 for a
checker, figure or section error, 1 for a refutation or a negative control
that was not rejected, else 0.

The report is a list of sections, each a function: the statements
(:mod:`.rows`, rendered by :mod:`.markdown` / :mod:`.html`), the figures
(:mod:`.figures`), each later paper (:mod:`.papers`) and the experiments
(:mod:`.experiments`); instances come from :mod:`.plans`, progress lines
from :mod:`.progress`.
"""
from __future__ import annotations

import base64
import json
import time
import warnings
from pathlib import Path

from verifier.report.cache import UnitCache
from verifier.report.executor import make_executor
from verifier.report.plans import MODES, instance_plan, iter_plans, reproduce_command  # noqa: F401 - re-exported
from verifier.report.progress import Progress
from verifier.report.rows import (  # noqa: F401 - re-exported
    PREC,
    PROPERTY_PREFIXES,
    STATUS_ORDER,
    exit_code,
    is_property,
    row_status,
    run_controls,
    run_statement,
    summarise,
)
from verifier.report.sweep import run_statements
from verifier.statements import display, registry

TIMING_KEYS = frozenset({"seconds"})  # what results.json never holds (see environment.VOLATILE_KEYS)
_STATUS_ORDER = STATUS_ORDER


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
            png = rf.draw(name, display.stable(data))  # drawn as results.json prints it (display.stable)
        except Exception as exc:  # noqa: BLE001 - a failed figure is shown, never hidden
            error = f"{type(exc).__name__}: {exc}"
            png = rf.draw(name, None, error=error)
        (out / "figures" / f"{name}.png").write_bytes(png)
        figs.append({"name": name, "title": title, "caption": caption, "file": f"figures/{name}.png",
                     "data": data, "error": error, "png_base64": base64.b64encode(png).decode("ascii")})
        if progress:
            progress.step(name)
    return figs


def _phase(phases: dict, name: str, bar: Progress) -> None:
    bar.close()
    phases[name] = bar.seconds


def write_report(*, out="reports", mode="default", seed=0, argv=(), statements=None, prec: int = PREC,
                 summary_stream=None, quiet: bool = False, strict: bool = False, executor="local",
                 address: str | None = None, cache=None) -> int:
    """Run every statement (or only ``statements``), write the report to
    ``out``; returns the exit code (:mod:`.findings`: 0 every verdict
    verified or as declared, 1 a new refutation / control not rejected, 3 a
    declared finding not reproduced, 4 a checker, figure or section error;
    ``strict``: 1 on any refutation).  Progress goes to
    stderr (one line per phase off a terminal) unless ``quiet``; the final
    summary line to ``summary_stream`` (default stdout).  The statements'
    instances run on ``executor`` (:mod:`.executor`: "local", "ray" at
    ``address``, or an executor object), each one's result cached in the
    folder ``cache`` when given (:mod:`.sweep`: a rerun computes only what is
    missing; ``cache`` a folder or a :class:`~.cache.UnitCache`; run.json lists the
    entries it rejected and recomputed); neither changes results.json."""
    import sys

    from verifier.report import environment, markdown
    from verifier.report import errata as report_errata  # the leading Findings section
    from verifier.report import experiments as report_experiments
    from verifier.report import findings as report_findings  # declared findings, the exit code
    from verifier.report import given_weights as report_given  # a user's own layer, through the files
    from verifier.report import html as report_html
    from verifier.report import papers as report_papers  # one section per later paper (maps, tables)
    from verifier.report import real_sizes as report_real  # property-based runs at real sizes (thorough)
    from verifier.report import scale as report_scale  # Theorem 1 on named instances at the paper's scale
    from verifier.report import summary as report_summary  # the statuses counted as the banner counts them
    from verifier.report.figures import DRAWERS

    if mode not in MODES:
        raise ValueError(f"mode {mode!r} not in {sorted(MODES)}")
    t_start, phases = time.time(), {}
    reg = registry.load_all()
    ids = [s for s in reg if statements is None or s in statements]
    plans = [s for s in ids if reg[s].implemented]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    controls = {}
    bar = Progress("checks", MODES[mode] * len(plans), unit=f"instances of {len(plans)} statements", quiet=quiet)
    store = None if cache is None else cache if isinstance(cache, UnitCache) else UnitCache(cache)
    ex = make_executor(executor, address=address) if isinstance(executor, str) else executor
    try:
        runs, units = run_statements(plans, seed=seed, count=MODES[mode], prec=prec, executor=ex,
                                     cache=store, progress=bar)
        _phase(phases, "checks", bar)
        real_sids = [s for s in report_real.STATEMENTS if s in plans]
        real = mode == "thorough" and bool(real_sids)  # the real-size profile: thorough mode only
        bar = Progress("real sizes", len(report_real.profile_draws(seed=seed)) * len(real_sids) if real else 0,
                       unit="units of drawn real-size instances", quiet=quiet)
        real_sizes = report_real.run_profile(mode if real else "default", seed=seed, executor=ex, statements=real_sids,
                                             cache=store, progress=bar)
        if real:
            _phase(phases, "real sizes", bar)
        bar = Progress("negative controls", sum(len(reg[s].controls) for s in plans), unit="controls", quiet=quiet)
        for sid in plans:
            controls[sid] = run_controls(sid, seed=seed, prec=prec, progress=bar)
        _phase(phases, "negative controls", bar)
        rows = [summarise(s, runs.get(s), controls.get(s, [])) for s in ids]
        statuses = report_findings.shown_statuses(rows)  # the maps' colours: "refuted, as declared" where it is
        bar = Progress("figures", len(DRAWERS), unit="figures", quiet=quiet)
        figures = build_figures(out, seed=seed, statuses=statuses, progress=bar)
        _phase(phases, "figures", bar)
        n_exp = len(report_experiments.catalogue.load_all()) if statements is None else 0
        bar = Progress("experiments", n_exp, unit="experiments", quiet=quiet)
        experiments = report_experiments.run_experiments(out, mode=mode, seed=seed, progress=bar,
                                                         only=None if statements is None else (), executor=ex,
                                                         cache=store)
        _phase(phases, "experiments", bar)
    finally:
        if isinstance(executor, str):
            ex.close()
    bar = Progress("papers", len(registry.PAPERS) - 1, unit="later papers' sections", quiet=quiet)
    paper_entries, paper_pngs = report_papers.build_sections(out, seed=seed, statements=statements,
                                                             statuses=statuses)
    _phase(phases, "papers", bar)
    bar = Progress("paper's scale", len(report_scale.named_instances(mode)) if statements is None else 0,
                   unit="named instances", quiet=quiet)
    named = report_scale.run_named(mode if statements is None else "quick", seed=seed, progress=bar, out=out)
    _phase(phases, "paper's scale", bar)
    bar = Progress("given weights", 1, unit="section", quiet=quiet)
    given = report_given.run_section(mode if statements is None else "quick", seed=seed)
    _phase(phases, "given weights", bar)
    bar = Progress("findings", len(report_findings.to_run(statements=statements)), unit="declared findings",
                   quiet=quiet)
    found = report_findings.run_findings(statements=statements, prec=prec, seed=seed, progress=bar)
    report_findings.family_counts(rows, found)
    _phase(phases, "findings", bar)
    bad = (report_experiments.has_error(experiments) or report_papers.has_error(paper_entries)
           or named["error"] or real_sizes["error"] or given["error"])
    code = 4 if bad else report_findings.exit_code(rows, figures, found, strict=strict)
    code = 1 if code == 0 and real_sizes["refuted"] else code  # a drawn instance refuted: a new refutation
    results = {
        "paper": "; ".join(f"{p.title} ({p.citation})" for p in registry.PAPERS.values()),
        "config": {"mode": mode, "seed": seed, "prec_bits": prec, "instances_per_statement": MODES[mode],
                   "statements": ids},
        "summary": {"exit_code": code, "status_counts": {k: sum(r["status"] == k for r in rows)
                                                         for k in STATUS_ORDER if any(r["status"] == k for r in rows)},
                    "refutations": [dict(statement=r["id"], declared=report_findings.declared_key(r["id"], i["options"]),
                                         **i) for r in rows for i in r["instances"]
                                    if i["verdict"] == "refuted" and not is_property(r["id"])],
                    "gate": dict(strict=strict, **report_findings.problems(rows, found))},
        "findings": found,
        "statements": {r["id"]: r for r in rows},
        "figures": {f["name"]: {k: f[k] for k in ("title", "caption", "file", "data", "error")} for f in figures},
        "experiments": report_experiments.results_entry(experiments),
        "papers_order": list(registry.PAPERS),
        "citations": {k: p.citation for k, p in registry.PAPERS.items()},
        "papers": paper_entries, "named_instances": named, "given_weights": given,
    }
    real_units = real_sizes.pop("units", None)  # cached / computed: a fact of this run (run.json)
    if real:
        results["real_sizes"] = real_sizes
    facts = environment.run_facts(argv=argv, started=t_start, phases=phases,
                                  statement_seconds={r["id"]: r["seconds"] for r in rows},
                                  extra={"executor": ex.name, "units": units,
                                         "experiment_units": experiments.get("units"),
                                         **({"cache": store.facts()} if store is not None else {}),
                                         "named_instance_seconds": {r["key"]: r.get("seconds", {})
                                                                    for r in named["rows"]},
                                         **({"real_size_seconds": report_real.seconds_of(real_sizes),
                                             "real_size_units": real_units} if real else {})})
    results, choices = environment.split_machine_choices(environment.strip_volatile(results))
    kept = {eid: experiments["experiments"][eid] for eid in experiments["carried_over"]}
    results = display.stable(results)  # every float to the digits it is known to
    experiments, named = display.stable(experiments), display.stable(named)
    for eid, entry in kept.items():  # as the earlier report printed them (bounds are not rounded twice)
        results["experiments"][eid] = experiments["experiments"][eid] = environment.strip_volatile(entry)
    facts["machine_choices"] = choices  # what float pivoting chose on this machine (results.json: not)
    facts["experiments_kept_from"] = experiments["carried_over"]  # extra absent: whose results were kept
    (out / "results.json").write_text(json.dumps(results, sort_keys=True, indent=1) + "\n")
    (out / "REPORT.md").write_text(markdown.with_contents("".join((
        report_errata.insert_markdown(markdown.render_markdown(results), results),
        report_papers.markdown_sections(results),
        report_experiments.markdown_section(environment.strip_volatile(experiments)),
        report_scale.markdown_section(environment.strip_volatile(named)),
        report_given.markdown_section(results["given_weights"]),
        report_real.markdown_section(results.get("real_sizes", {}))))))
    page = report_errata.insert_html(report_html.render_html(results, figures), results)
    page = report_papers.insert_html(page, results, paper_pngs)
    page = report_experiments.insert_html(page, environment.strip_volatile(experiments))
    page = report_scale.insert_html(page, environment.strip_volatile(named))
    page = report_given.insert_html(page, results["given_weights"])
    (out / "index.html").write_text(report_html.with_navigation(report_real.insert_html(page, results.get("real_sizes", {}))))
    report_errata.write_report_errata(results, out)  # ERRATA-<paper>.md and its certificates, beside REPORT.md
    (out / "run.json").write_text(json.dumps(facts, sort_keys=True, indent=1) + "\n")
    counts = report_summary.status_counts(results)  # "1 refuted (as declared)", as the banner says it
    if store is not None and store.rejected and not quiet:
        print(f"mha-verify report: {len(store.rejected)} cache entries did not match their units and were "
              "recomputed (run.json: cache.rejected)", file=sys.stderr)
    _say([f"mha-verify report ({mode}, seed {seed}): {counts}; {facts['duration_seconds']:.0f} s; "
          f"wrote {out / 'index.html'} (exit {code})",
          report_findings.errata_line(found)], summary_stream or sys.stdout)  # the last line: known errata
    return code


def _say(lines: list[str], stream) -> None:
    """The summary lines; a closed stream loses them, never the exit code (the files are written)."""
    try:
        for line in lines:
            print(line, file=stream, flush=True)
    except (BrokenPipeError, OSError, ValueError, AttributeError):
        pass
