"""The standalone re-checker against the verifier, at the paper's scale (issue 33).

Runs, as a reader would, each in a process of its own and timed (wall clock
and CPU of the child):

    mha-verify check theorem1 --H 12 --n 197 --d 768 --dh 197 --context shared --certificate c.json
    python verifier/recheck.py c.json

and reports the re-check's time as a ratio to the verifier's (the reference
is measured in the same run: the target is a ratio, not seconds).  The check
includes Assumption 1's evidence (the paper's 5000 random n-subsets), Prop.
1's construction, the rank certificate, the readout and the certificate's
export (the construction re-run, the residual enclosed); the re-check
parses the file (binary64 arrays in base64), recomputes Z's minor and the
residual on its float path (docs/CERTIFICATES.md Sec. 6) and decides.

    python benchmarks/bench_recheck.py                 # the paper's setting (T = 2353), minutes
    python benchmarks/bench_recheck.py --setting fig2  # H=20 n=32 d=64 d_h=32 (T = 621), seconds
    python benchmarks/bench_recheck.py --out reports/benchmarks   # writes recheck.md and recheck.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"vit-tight": ["--H", "12", "--n", "197", "--d", "768", "--dh", "197", "--context", "shared"],
            "fig2": ["--H", "20", "--n", "32", "--d", "64", "--dh", "32", "--context", "shared"]}


def timed(cmd: list[str], env: dict, shown: str) -> dict:
    """Wall and CPU seconds (user + system of the child), exit code and the output's last line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return {"command": shown, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "exit": proc.returncode, "peak_rss_mib_children": after.ru_maxrss // 1024,
            "last_line": lines[-1][:400] if lines else "", "first_line": lines[0][:300] if lines else ""}


def run(setting: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        cert = Path(tmp) / "c.json"
        load0 = os.getloadavg()[0]
        shown = " ".join(SETTINGS[setting])
        verifier = timed([sys.executable, "-m", "verifier.cli", "check", "theorem1", *SETTINGS[setting],
                          "--certificate", str(cert)], env, f"mha-verify check theorem1 {shown} --certificate c.json")
        size = cert.stat().st_size if cert.exists() else 0
        recheck = timed([sys.executable, str(ROOT / "verifier" / "recheck.py"), str(cert)], env,
                        "python verifier/recheck.py c.json")
        recheck["last_line"] = recheck["last_line"].replace(str(cert), "c.json")
        load1 = os.getloadavg()[0]
    return {"setting": setting, "options": " ".join(SETTINGS[setting]), "verifier": verifier, "recheck": recheck,
            "certificate_bytes": size,
            "ratio_wall": round(recheck["wall_s"] / verifier["wall_s"], 4) if verifier["wall_s"] else None,
            "ratio_cpu": round(recheck["cpu_s"] / verifier["cpu_s"], 4) if verifier["cpu_s"] else None,
            "load_1min": [round(load0, 2), round(load1, 2)], "cpus": os.cpu_count(),
            "python": platform.python_version(), "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def markdown(r: dict) -> str:
    v, c = r["verifier"], r["recheck"]
    return "\n".join([
        "# The standalone re-checker against the verifier (benchmarks/bench_recheck.py)", "",
        f"Setting `{r['setting']}` ({r['options']}), {r['date_utc']} UTC, {r['cpus']} cores shared with other jobs, "
        f"load average (1 min) {r['load_1min'][0]} before / {r['load_1min'][1]} after, python {r['python']}.", "",
        "| step | command | wall s | CPU s | exit |", "|---|---|---|---|---|",
        f"| verifier (check + certificate) | `{v['command']}` | {v['wall_s']} | {v['cpu_s']} | {v['exit']} |",
        f"| re-checker | `{c['command']}` | {c['wall_s']} | {c['cpu_s']} | {c['exit']} |", "",
        f"**Re-check / verifier: {r['ratio_wall']} (wall clock), {r['ratio_cpu']} (CPU).** "
        f"Certificate: {r['certificate_bytes'] / 2**20:.1f} MiB.", "",
        f"Re-checker's verdict: `{c['last_line']}`", ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="vit-tight")
    ap.add_argument("--out", help="folder for recheck.md and recheck.json")
    args = ap.parse_args(argv)
    r = run(args.setting)
    print(markdown(r))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        name = "recheck" if args.setting == "vit-tight" else f"recheck_{args.setting}"
        (out / f"{name}.json").write_text(json.dumps(r, indent=1, sort_keys=True) + "\n")
        (out / f"{name}.md").write_text(markdown(r))
    return 0 if r["verifier"]["exit"] == 0 and r["recheck"]["exit"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
