"""The report's section on the paper's own scale: Theorem 1 certified on named
instances, with their times.

Beside the many small drawn instances, Theorem 1 runs (the registered
checker, unchanged: hypotheses, Prop. 1's construction, rank(Z) = T
certified, the readout) on the settings people care about:

* default and thorough: the paper's Fig. 2 setting (H=20, n=32, d=64,
  d_h=32, shared context, T = 621), the largest H of its sweep (H=60,
  T = 1861) and ViT-base with a shared context (H=12, n=197, d=768,
  d_h=64, T = 757);
* thorough only: ViT-base with d_h = n = 197 (T = 2353 = Prop. 2's cap) and
  ViT-base with random (per-example) contexts.

At these sizes the rank certificate takes the rigorous float64 path
(:mod:`verifier.arith.float_certificates`; the row says which path
decided) and Assumption 1, whose n-subsets cannot be exhausted, is
certified for every subset where T <= d (one rank certificate of the T x d
queries: ViT-base, T = 757 <= 768), else gets the paper's random-subset
evidence with :data:`ASSUMPTION_SAMPLES` subsets (the CLI's default is the
paper's 5000); the row says which.  Times sit under ``seconds`` (the
determinism check strips them).  Each certified row is written as a
certificate file (``OUT/certificates/<key>.json``, :mod:`.check_certificates`)
and re-checked by ``verifier/recheck.py`` in a process of its own; the row
records the re-check's verdict, its time beside the verifier's.  ``--quick``
skips the section.

>>> [n["key"] for n in named_instances("default")]
['fig2', 'fig2-H60', 'vit-shared']
>>> "## The paper's scale" in markdown_section(run_named("quick", seed=0))
True
"""
from __future__ import annotations

import html
import subprocess
import sys
import time
from pathlib import Path

from verifier.statements.runner import build_instance, run_check

ASSUMPTION_SAMPLES = 500
PREC = 128
CERTIFICATE_BYTES = 256 << 20  # a named instance's certificate is written up to this size (binary64 arrays)
RECHECK = Path(__file__).resolve().parents[1] / "recheck.py"

NAMED = (
    {"key": "fig2", "name": "Fig. 2 setting (shared context)", "modes": ("default", "thorough"),
     "options": dict(H=20, n=32, d=64, d_h=32, context="shared")},
    {"key": "fig2-H60", "name": "largest H of the Fig. 2a sweep", "modes": ("default", "thorough"),
     "options": dict(H=60, n=32, d=64, d_h=32, context="shared")},
    {"key": "vit-shared", "name": "ViT-base, shared context", "modes": ("default", "thorough"),
     "options": dict(H=12, n=197, d=768, d_h=64, context="shared")},
    {"key": "vit-tight", "name": "ViT-base, d_h = n (Prop. 2's cap)", "modes": ("thorough",),
     "options": dict(H=12, n=197, d=768, d_h=197, context="shared")},
    {"key": "vit-random", "name": "ViT-base, random contexts", "modes": ("thorough",),
     "options": dict(H=12, n=197, d=768, d_h=64, context="random")},
)
_FLAGS = (("H", "--H"), ("n", "--n"), ("d", "--d"), ("d_h", "--dh"), ("context", "--context"))


def named_instances(mode: str) -> list[dict]:
    return [n for n in NAMED if mode in n["modes"]]


def _command(options: dict, seed: int) -> str:
    flags = " ".join(f"{flag} {options[k]}" for k, flag in _FLAGS if k in options)
    return f"mha-verify check theorem1 {flags} --seed {seed}"


def _rank_certificate(ev) -> dict:
    for c in ev.certificates:
        if str(c.get("kind", "")).startswith("rank(Z) = T"):
            return c
    return {}


def _construction_seconds(ev) -> float | None:
    for step in ev.trail:
        if step.title == "Setting":
            return (step.data.get("seconds") or {}).get("construction")
    return None


def certify_row(spec: dict, inst, ev, *, seed: int, out) -> tuple[dict, dict]:
    """(what the row records, its seconds): the certificate written to ``out/certificates/<key>.json``
    and its re-check by ``python verifier/recheck.py`` in a separate process."""
    from verifier.report.certificate_format import write
    from verifier.report.check_certificates import exact_instance_size, memorization_certificate

    size = exact_instance_size(inst)
    if size > CERTIFICATE_BYTES:
        return {"written": False, "why": f"its arrays hold {size >> 20} MiB (at most {CERTIFICATE_BYTES >> 20})"}, {}
    t0 = time.perf_counter()
    (Path(out) / "certificates").mkdir(parents=True, exist_ok=True)
    path = write(memorization_certificate("theorem1", inst, ev, seed=seed),
                 Path(out) / "certificates" / f"{spec['key']}.json")
    t1 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(RECHECK), str(path)], capture_output=True, text=True)
    t2 = time.perf_counter()
    verdict = proc.stdout.split(": ")[1] if proc.stdout.count(": ") >= 2 else f"exit {proc.returncode}"
    return ({"written": True, "file": f"certificates/{spec['key']}.json", "recheck": verdict,
             "recheck_exit": proc.returncode},
            {"certificate": round(t1 - t0, 2), "re-check": round(t2 - t1, 2)})


def run_row(spec: dict, *, seed: int, out=None) -> dict:
    """Theorem 1 on one named instance: the verdict and what decided it (and, given ``out``, its
    certificate file and re-check)."""
    t0 = time.perf_counter()
    inst = build_instance("theorem1", seed=seed, **spec["options"])
    ev = run_check("theorem1", inst, prec=PREC, seed=seed, assumption_samples=ASSUMPTION_SAMPLES)
    cert = _rank_certificate(ev)
    resid = cert.get("residual_norm_upper")
    total = round(time.perf_counter() - t0, 2)
    certificate, cert_seconds = ({}, {})
    if out is not None and ev.verdict == "verified" and ev.certified:
        certificate, cert_seconds = certify_row(spec, inst, ev, seed=seed, out=out)
    return {"key": spec["key"], "name": spec["name"], "options": dict(spec["options"], seed=seed),
            "T": inst.T, "command": _command(spec["options"], seed), "verdict": ev.verdict,
            "certified": ev.certified, "certified_rank": ev.measured.get("certified_rank"),
            "rank_method": cert.get("method", ""), "residual_bound": float(f"{resid:.2g}") if resid else None,
            "hypotheses": {h.name: h.status for h in ev.hypotheses}, "reason": ev.reason,
            "assumption1": assumption1_reading(ev),
            "assumption1_samples": ASSUMPTION_SAMPLES, "certificate": certificate,
            "seconds": {"total": total, **cert_seconds,
                        "construction": _construction_seconds(ev),
                        "rank certificate": round(cert["seconds"], 2) if "seconds" in cert else None}}


def assumption1_reading(ev) -> str:
    """What Theorem 1's Assumption 1 rests on: certified for every n-subset
    (T <= d: one rank certificate of the queries; or exhaustion), or the
    random-subset sample (evidence only)."""
    a1 = next((h for h in ev.hypotheses if h.name == "Assumption 1"), None)
    if a1 is None:
        return ""
    if a1.status == "certified":
        return "certified: all T queries independent" if "none sampled" in a1.detail else "certified"
    if "evidence: " in a1.detail:
        return "sampled: " + a1.detail.split("evidence: ")[1].split(" random")[0] + " subsets (evidence)"
    return a1.status


def run_named(mode: str, *, seed: int, progress=None, out=None) -> dict:
    rows = []
    for spec in named_instances(mode):
        try:
            rows.append(run_row(spec, seed=seed, out=out))
        except Exception as exc:  # noqa: BLE001 - the report runs to completion
            rows.append({"key": spec["key"], "name": spec["name"], "options": spec["options"],
                         "verdict": "error", "reason": f"{type(exc).__name__}: {exc}"})
        if progress:
            progress.step(spec["key"])
            sec = rows[-1].get("seconds", {})
            if "re-check" in sec and getattr(progress, "enabled", False):
                print(f"\n  {spec['key']}: verifier {sec['total']} s; certificate re-checked by verifier/recheck.py in "
                      f"{sec['re-check']} s ({rows[-1]['certificate']['recheck']})", file=sys.stderr)
    return {"mode": mode, "rows": rows, "error": any(r.get("verdict") == "error" for r in rows)}


def _path(method: str) -> str:
    return "float64 (Rump)" if "float64" in method else "arb balls" if method else ""


def _certificate(c: dict) -> str:
    if not c:
        return ""
    if not c.get("written"):
        return f"not written: {c.get('why', '')}"
    return f"`{c['file']}`: {c['recheck']}"


def _fmt(x) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)


def markdown_section(section: dict) -> str:
    lines = ["", "## The paper's scale: Theorem 1 on named instances", "",
             "The registered Theorem 1 checker on the settings of the paper's experiments and of ViT-base. "
             "Assumption 1 (every n of the T queries independent): certified for every subset where T <= d (one rank "
             f"certificate of the T x d queries), else the paper's random-subset evidence with {ASSUMPTION_SAMPLES} "
             "subsets. rank(Z) = T is certified on a T x T minor of Z enclosed from the returned float64 weights.", ""]
    if not section.get("rows"):
        lines.append("(skipped in this mode)")
        return "\n".join(lines) + "\n"
    timed = any(r.get("seconds") for r in section["rows"])  # times live in run.json (named_instance_seconds)
    lines += ["| instance | H | n | d | d_h | T | verdict | certified rank | rank certificate | "
              "||I - R Z_minor||_inf <= | Assumption 1 | certificate file, re-checked |" + (
                  " construction s | certificate s | verifier total s | re-check s |" if timed else ""),
              "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if timed else "")]
    for r in section["rows"]:
        o, s = r.get("options", {}), r.get("seconds", {})
        lines.append(f"| {r['name']} | {o.get('H')} | {o.get('n')} | {o.get('d')} | {o.get('d_h')} | "
                     f"{r.get('T', '')} | {r['verdict']} | {_fmt(r.get('certified_rank'))} | {_path(r.get('rank_method', ''))} | "
                     f"{_fmt(r.get('residual_bound'))} | {r.get('assumption1', '')} | "
                     f"{_certificate(r.get('certificate') or {})} |" + (
                         f" {_fmt(s.get('construction'))} | {_fmt(s.get('rank certificate'))} | {_fmt(s.get('total'))} "
                         f"| {_fmt(s.get('re-check'))} |" if timed else ""))
    if not timed:
        lines += ["", "Times of this run (construction, rank certificate, the verifier's total, the certificate's "
                  "export and its re-check by `verifier/recheck.py` in a process of its own): `run.json`, "
                  "`named_instance_seconds`."]
    lines += ["", "Reproduce a row: " + "; ".join(f"`{r['command']}`" for r in section["rows"] if "command" in r),
              "", "Re-check a row without the project: `python verifier/recheck.py OUT/certificates/KEY.json` "
              "(docs/CERTIFICATES.md).", ""]
    return "\n".join(lines) + "\n"


def html_section(section: dict) -> str:
    md = markdown_section(section).strip().splitlines()
    head = f"<h2>{html.escape(md[0].lstrip('# '))}</h2>"
    table = [line for line in md if line.startswith("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table if not line.startswith("|---")]
    if not rows:
        return f"<section id='scale'>{head}<p>(skipped in this mode)</p></section>"
    body = "".join("<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{html.escape(c)}</{'th' if i == 0 else 'td'}>"
                                     for c in row) + "</tr>" for i, row in enumerate(rows))
    text = "".join(f"<p>{html.escape(line)}</p>" for line in md[1:] if line and not line.startswith("|"))
    return f"<section id='scale'>{head}{text}<table>{body}</table></section>"


def insert_html(page: str, section: dict) -> str:
    """The section placed before the page's closing body tag."""
    cut = page.rfind("</body>")
    return page[:cut] + html_section(section) + page[cut:] if cut >= 0 else page + html_section(section)
