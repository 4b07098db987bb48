"""The report's section on the paper's experiments: every experiment registered in
:mod:`verifier.experiments.catalogue` (whatever its id), at the scale of the
report's mode (quick -> ``quick``, default -> ``cpu``, thorough -> ``thorough``).

For each: the claim and the success criterion as registered BEFORE the run,
the status that criterion gave (reproduced / partially reproduced / not
reproduced / inconclusive when the runs fail their power check / skipped with
the command that enables it / error) and why, the power check and its outcome, the
measured numbers (``results.json`` under ``experiments.<id>``), the figures
(PNG in ``figures/``, embedded in ``index.html``) with captions that say how
the scale differs from the paper's.  Probes of conjectures (status "finding")
get their own subsection and are not counted; then the paper's numbers beside
ours and the stand-ins' diagnosis (:mod:`.beside`).  Timings sit under ``seconds`` keys: the
report moves them to ``run.json`` and never renders them (same seed, same page).

>>> sec = {"scale": "quick", "experiments": {}, "pngs": {}}
>>> "## Experiments" in markdown_section(sec), has_error(sec)
(True, False)
"""
from __future__ import annotations

import base64
import functools
import html
import json
from pathlib import Path

import numpy as np

from verifier.experiments import catalogue
from verifier.report import beside

COLOURS = {"reproduced": ("#2e7d32", "white"), "partially reproduced": ("#f9a825", "black"),
           "not reproduced": ("#c62828", "white"), "inconclusive": ("#1565c0", "white"),
           "finding": ("#00838f", "white"), "skipped": ("#90a4ae", "black"), "error": ("#6a1b9a", "white")}


def _plain(x):
    """JSON-safe copy (numpy scalars and arrays to Python)."""
    return json.loads(json.dumps(x, default=lambda v: v.tolist() if isinstance(v, (np.ndarray, np.generic)) else str(v)))


def run_experiments(out, *, mode: str, seed: int, progress=None, only=None, executor=None, cache=None) -> dict:
    """Run every registered experiment (or the ids in ``only``; a report restricted to some
    statements passes ``()``) at the mode's scale; PNGs into ``out/figures``.

    Each experiment is one unit of work on ``executor`` (:mod:`.executor`; default this
    process): on Ray a task that asks for a GPU when the cluster has one
    (:meth:`~.executor.RayExecutor.training_placement`).  With ``cache`` (a
    :class:`~.cache.UnitCache`) each experiment's result is kept on disk under a hash of its
    id, scale, seed, the device it trains on and the code (:func:`experiment_key`): a rerun
    computes only the missing ones.  The results are the same wherever they run."""
    from verifier.report.cache import cached_map
    from verifier.report.executor import LocalExecutor

    scale = catalogue.REPORT_SCALE[mode]
    exps = catalogue.load_all()
    catalogue.clear_caches()  # each report computes its own runs (determinism is then tested, not cached)
    figdir = Path(out) / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    kept_rows, pngs, carried, todo = {}, {}, {}, []
    for eid, exp in exps.items():
        if only is not None and eid not in only:
            continue
        stored = campaign_entry(out, eid, scale=scale, seed=seed) if mode == "default" else None
        if stored is None and mode == "default" and eid in CAMPAIGN_IDS:
            stored = _rederivable(previous_entry(out, eid, scale=scale, seed=seed)) or _not_stored(eid, exp)
        if stored is not None:  # the default report never retrains: the stored campaign's runs (issue 35)
            kept_rows[eid], kept_pngs, carried[eid] = stored
            if kept_rows[eid]["status"] != "skipped":  # today's rules, stated as today's claim and criterion
                again = catalogue.rederive(kept_rows[eid])
                kept_rows[eid].update(status=again.status, why=again.why, power=_plain(again.power), kind=exp.kind,
                                      claim=exp.claim, criterion=exp.criterion)
            pngs.update(kept_pngs)
            if progress:
                progress.step(eid)
            continue
        if catalogue.missing_packages(exp) and (kept := previous_entry(out, eid, scale=scale, seed=seed)):
            kept_rows[eid], kept_pngs, carried[eid] = kept
            again = catalogue.rederive(kept_rows[eid])  # a kept result follows today's status rules
            kept_rows[eid].update(status=again.status, why=again.why, power=_plain(again.power), kind=exp.kind)
            pngs.update(kept_pngs)
            if progress:
                progress.step(eid)
            continue
        todo.append(eid)
    ex = executor or LocalExecutor()
    placement, resources = ex.training_placement()
    inputs = [experiment_inputs(eid, scale=scale, seed=seed, placement=placement) for eid in todo]

    def tick(i: int, _result) -> None:
        if progress:
            progress.step(todo[i])

    units, counts = cached_map(ex, functools.partial(experiment_unit, scale=scale, seed=seed), todo, inputs, cache,
                               on_result=tick, resources=resources, keep=lasting, check=belongs, backend=False)
    rows = {}
    for eid in exps:  # the catalogue's order, whatever order the units completed in
        if eid in kept_rows:
            rows[eid] = kept_rows[eid]
        elif eid in todo:
            row = dict(units[todo.index(eid)])
            for f, png in zip(row["figures"], row.pop("png_base64")):
                (figdir / f"{f['name']}.png").write_bytes(base64.b64decode(png))
                pngs[f["name"]] = png
            rows[eid] = row
    return {"scale": scale, "experiments": rows, "pngs": pngs, "carried_over": carried, "units": counts}


def lasting(row: dict) -> bool:
    """A result worth keeping: not an error (it may be transient) nor skipped (the missing
    package may be installed before the rerun; neither is in the key)."""
    return row.get("status") not in ("error", "skipped")


def experiment_inputs(eid: str, *, scale: str, seed: int, placement: str = "") -> dict:
    """What one experiment's run depends on besides the environment: its id, scale and
    seed, where it trains (``placement``: "gpu" when the executor gives it a GPU, else the
    device this process would train on)."""
    from verifier.experiments.devices import training_device

    return {"kind": "experiment", "experiment": eid, "scale": scale, "seed": seed,
            "device": placement or training_device().type}


def experiment_key(eid: str, *, scale: str, seed: int, placement: str = "") -> str:
    """The cache key of one experiment's run: :func:`experiment_inputs` with the code, the
    CPU kernels and the packages (:func:`~.cache.unit_key`)."""
    from verifier.report.cache import environment, unit_key

    return unit_key(experiment_inputs(eid, scale=scale, seed=seed, placement=placement),
                    env=environment(backend=False))  # the device is in the inputs: a GPU worker is not "another backend"


def belongs(row: dict, unit: dict) -> str | None:
    """Why a cached row is not ``unit``'s experiment (None: it is)."""
    if (row["id"], row["seed"]) != (unit["experiment"], unit["seed"]):
        return f"the row is {row['id']!r} at seed {row['seed']!r}, the unit {unit['experiment']!r} at {unit['seed']!r}"
    if row["status"] not in catalogue.STATUSES:
        return f"status {row['status']!r}"
    if len(row["figures"]) != len(row["png_base64"]) or not all(isinstance(f["name"], str) for f in row["figures"]):
        return "its figures and their images do not pair"
    return None


def experiment_unit(eid: str, *, scale: str, seed: int) -> dict:
    """One experiment run at ``scale`` and ``seed``: its results.json entry (JSON only) with
    its figures' PNG bytes, base64, under ``png_base64`` (a unit of work of any executor)."""
    exp = catalogue.load_all()[eid]
    o = catalogue.run_experiment(eid, scale=scale, seed=seed)
    figs, png = [], []
    for f in o.figures:
        name = f"experiment_{f.name}"
        png.append(base64.b64encode(f.png).decode("ascii"))
        figs.append({"name": name, "title": f.title, "caption": f.caption, "file": f"figures/{name}.png"})
    row = {"id": eid, "claim": exp.claim, "criterion": exp.criterion, "status": o.status, "why": o.why,
           "scale": o.scale, "seed": o.seed, "requires": list(exp.requires), "module": exp.module,
           "measured": _plain(o.measured), "figures": figs, "seconds": round(o.seconds, 3),
           "kind": exp.kind, "power": _plain(o.power)}
    if exp.requires and o.status != "skipped":
        row["provenance"] = provenance(exp.requires)
    row["png_base64"] = png
    return row


#: where a report without the experiments extra finds the results it keeps: the output folder's own
#: results.json, else the repository's committed report
COMMITTED = Path(__file__).resolve().parents[2] / "reports"
#: the stored campaign (verifier/experiments/campaign.py, benchmarks/run_experiments.py --campaign):
#: the default report reads these records and never retrains the experiments they cover
CAMPAIGN = COMMITTED / "experiments" / "campaign"
CAMPAIGN_IDS = ("fig2a", "fig2b", "fig2c", "fig4", "fig5", "fig3", "table1", "fig1", "table3")


def campaign_entry(out, eid: str, *, scale: str, seed: int, folder: Path | None = None):
    """``(entry, pngs, source)`` of ``eid`` from the stored campaign's record
    (``<folder>/<eid>_<scale>.json`` and its figures), with the provenance it stored; None when
    absent.  Its figures are copied into ``out/figures``."""
    folder = Path(folder or CAMPAIGN)
    try:
        rec = json.loads((folder / f"{eid}_{scale}.json").read_text())
        pngs = {f["name"]: (folder / f"{eid}_{scale}_{f['name']}.png").read_bytes() for f in rec["figures"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if rec.get("seed") != seed:
        return None
    exp = catalogue.load_all()[eid]
    figdir = Path(out) / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    figs = []
    for f in rec["figures"]:
        name = f"experiment_{f['name']}"
        (figdir / f"{name}.png").write_bytes(pngs[f["name"]])
        figs.append({"name": name, "title": f["title"], "caption": f["caption"], "file": f"figures/{name}.png"})
    entry = {"id": eid, "claim": exp.claim, "criterion": exp.criterion, "status": rec["status"], "why": rec["why"],
             "scale": rec["scale"], "seed": rec["seed"], "requires": list(exp.requires), "module": exp.module,
             "measured": rec["measured"], "figures": figs, "kind": exp.kind, "power": rec.get("power", {}),
             "provenance": "not retrained by this report: read from " + _record_source(rec.get("provenance"), eid, scale)}
    return entry, {f"experiment_{k}": base64.b64encode(v).decode("ascii") for k, v in pngs.items()}, str(folder)


def _record_source(provenance: str | None, eid: str, scale: str) -> str:
    """Where a stored record came from: the campaign's own line, else the record's file and what
    computed it (a real-model run stores its package versions, "computed with ...")."""
    if provenance and provenance.startswith("the stored campaign"):
        return provenance
    where = f"the stored record reports/experiments/campaign/{eid}_{scale}.json"
    return where + (f", {provenance}" if provenance else "")


def _rederivable(kept):
    """An earlier report's entry whose stored numbers today's rules can read (else None)."""
    if kept is None:
        return None
    try:
        catalogue.rederive(kept[0])
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    prefix = "not retrained by this report and not from the stored campaign: "
    old = kept[0].get("provenance", "an earlier report")
    kept[0]["provenance"] = old if old.startswith(prefix) else prefix + old
    return kept


def _not_stored(eid: str, exp):
    """A campaign experiment with no stored run: never retrained by the default report."""
    return ({"id": eid, "claim": exp.claim, "criterion": exp.criterion, "status": "skipped",
             "why": "not in the stored campaign: `python benchmarks/run_experiments.py --campaign` (sweeps, fig3) or "
                    f"`--scale cpu --only {eid} --out reports/experiments/campaign` computes it; the default report "
                    "does not retrain", "scale": "cpu", "seed": 0, "requires": list(exp.requires),
             "module": exp.module, "measured": {}, "figures": [], "kind": exp.kind,
             "power": {"stated": exp.power.stated if exp.power else "", "outcome": "not run", "checks": []}}, {},
            "none")


def provenance(requires) -> str:
    """Which versions of the optional packages computed an experiment."""
    from importlib import metadata

    dists = metadata.packages_distributions()
    names = sorted({d for p in requires for d in dists.get(p, [p])})
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (version unknown)")
    return "computed with " + ", ".join(versions)


def previous_entry(out, eid: str, *, scale: str, seed: int):
    """``(entry, pngs, source)`` of experiment ``eid`` from an earlier report at the same scale
    and seed (``out``'s results.json, else the committed one), when it has a result (not
    skipped, not an error) and its figures; else None.  The entry is kept as it was, with
    its provenance (one that predates provenance says so); run.json names the source."""
    for folder in dict.fromkeys((Path(out), COMMITTED)):
        try:
            old = json.loads((folder / "results.json").read_text())["experiments"]
            entry = old[eid]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if old.get("scale") != scale or entry.get("seed") != seed or entry.get("status") in ("skipped", "error"):
            continue
        try:
            pngs = {f["name"]: (folder / f["file"]).read_bytes() for f in entry["figures"]}
        except (OSError, KeyError, TypeError):
            continue
        figdir = Path(out) / "figures"
        for f in entry["figures"]:
            if (folder / f["file"]).resolve() != (figdir / f"{f['name']}.png").resolve():
                (figdir / f"{f['name']}.png").write_bytes(pngs[f["name"]])
        entry = dict(entry)
        entry.setdefault("provenance", "computed by an earlier report with the experiments extra installed "
                                       "(package versions not recorded)")
        return entry, {k: base64.b64encode(v).decode("ascii") for k, v in pngs.items()}, str(folder)
    return None


def results_entry(section: dict) -> dict:
    """What goes into results.json (the PNG bytes stay in the files)."""
    return {"scale": section["scale"], **section["experiments"]}


def has_error(section: dict) -> bool:
    return any(r["status"] == "error" for r in section["experiments"].values())


def _reproductions(section) -> dict:
    """The experiments counted as reproductions (probes have their own section)."""
    return {k: r for k, r in section["experiments"].items() if r.get("kind", "reproduction") != "probe"}


def _power(r) -> str:
    p = r.get("power") or {}
    if not p:
        return ""
    checks = "; ".join(f"{c['check']}: {c['outcome']} ({c['detail']})" for c in p.get("checks", []))
    return f"{p.get('stated', '')} Outcome: {p.get('outcome', '')}" + (f" ({checks})" if checks else "") + "."


def _source(section) -> str:
    """Where the section's runs come from, said once."""
    if section.get("scale") != "cpu":
        return ""
    return ("This report did not retrain them: it reads the stored campaign's runs (reports/experiments/campaign: "
            "seeds in batches until decided, verifier/experiments/campaign.py) and re-derives each status with "
            "today's rules; `python benchmarks/run_experiments.py --campaign` extends the campaign and "
            "`--compare DIR` shows a retrained campaign beside it. ")


def _counts(section) -> str:
    st = [r["status"] for r in _reproductions(section).values()]
    return ", ".join(f"{st.count(k)} {k}" for k in COLOURS if k in st) or "none registered"


def markdown_section(section: dict) -> str:
    rows = _reproductions(section)
    out = ["", "## Experiments", "",
           f"The paper's empirical claims, each with its criterion stated in code before the run; scale "
           f"`{section['scale']}` (`mha-verify report --thorough` for longer runs; the `paper` scale is for a GPU). "
           f"{_source(section)}Statuses: {_counts(section)}.", "",
           "| id | status | why |", "|---|---|---|"]
    for eid, r in rows.items():
        why = r["why"].replace("|", "\\|")
        out.append(f"| `{eid}` | {r['status']} | {why[:300]}{'...' if len(why) > 300 else ''} |")
    for eid, r in rows.items():
        out += ["", f"### `{eid}` ({r['status']})", "", f"**Claim.** {r['claim']}", "",
                f"**Criterion (stated before the run).** {r['criterion']}", "",
                f"**Power check (stated before the run).** {_power(r)}", "", f"**Outcome.** {r['why']}", ""]
        if r.get("provenance"):
            out += [f"**Provenance.** {r['provenance']}.", ""]
        for f in r["figures"]:
            out += [f"![{f['title']}]({f['file']})", "", f"*{f['title']}.* {f['caption']}", ""]
    out += beside.probes_markdown(section["experiments"]) + beside.beside_markdown(section["experiments"])
    return "\n".join(out) + "\n"


def _badge(status: str) -> str:
    face, ink = COLOURS.get(status, ("#ffffff", "black"))
    return f'<span class="badge" style="background:{face};color:{ink}">{html.escape(status)}</span>'


def html_section(section: dict) -> str:
    e = html.escape
    rows = _reproductions(section)
    parts = ['<h2 id="experiments">Experiments</h2>',
             f"<p>The paper's empirical claims, each with its criterion stated in code before the run; scale "
             f"<code>{e(section['scale'])}</code> (<code>mha-verify report --thorough</code> for longer runs; the "
             f"<code>paper</code> scale is for a GPU). {e(_source(section))}Statuses: {e(_counts(section))}.</p>",
             "<table><tr><th>id</th><th>status</th><th>why</th></tr>"]
    for eid, r in rows.items():
        parts.append(f'<tr><td><a href="#experiment-{e(eid)}"><code>{e(eid)}</code></a></td><td>{_badge(r["status"])}'
                     f"</td><td>{e(r['why'])}</td></tr>")
    parts.append("</table>")
    for eid, r in rows.items():
        parts += [f'<h3 id="experiment-{e(eid)}"><code>{e(eid)}</code> {_badge(r["status"])}</h3>',
                  f"<p><b>Claim.</b> {e(r['claim'])}</p>",
                  f"<p><b>Criterion (stated before the run).</b> {e(r['criterion'])}</p>",
                  f"<p><b>Power check (stated before the run).</b> {e(_power(r))}</p>",
                  f"<p><b>Outcome.</b> {e(r['why'])}</p>"]
        if r.get("provenance"):
            parts.append(f"<p><b>Provenance.</b> {e(r['provenance'])}.</p>")
        for f in r["figures"]:
            parts.append(f'<figure id="figure-{e(f["name"])}"><img id="img-{e(f["name"])}" alt="{e(f["title"])}" '
                         f'src="data:image/png;base64,{section["pngs"][f["name"]]}"><figcaption><b>{e(f["title"])}.'
                         f"</b> {e(f['caption'])}</figcaption></figure>")
    extra = beside.probes_markdown(section["experiments"]) + beside.beside_markdown(section["experiments"])
    parts.append(beside.to_html(extra, lambda name: f"data:image/png;base64,{section['pngs'].get(name, '')}"))
    return "\n".join(parts)


def insert_html(page: str, section: dict) -> str:
    """The section placed before the page's closing body tag."""
    cut = page.rfind("</body>")
    return page[:cut] + html_section(section) + page[cut:] if cut >= 0 else page + html_section(section)
