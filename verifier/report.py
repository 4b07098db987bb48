"""The verification report (stub until the full report lands): runs every
registered checker on its default instance and writes reports/."""
from __future__ import annotations

import json
from pathlib import Path

from . import registry
from .runner import build_instance, run_check


def write_report(*, out="reports", mode="default", seed=0, argv=()) -> int:
    reg = registry.load_all()
    rows = []
    for sid, st in reg.items():
        if not st.implemented:
            rows.append({"statement": sid, "verdict": "not implemented"})
            continue
        ev = run_check(sid, build_instance(sid, seed=seed), seed=seed)
        rows.append(ev.to_dict(with_trail=False))
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.json").write_text(json.dumps({"mode": mode, "seed": seed, "rows": rows}, sort_keys=True, indent=1))
    lines = ["# mha-verify report", "", "| statement | verdict |", "|---|---|"]
    lines += [f"| {r['statement']} | {r['verdict']} |" for r in rows]
    (path / "REPORT.md").write_text("\n".join(lines) + "\n")
    return 0 if all(r["verdict"] in ("verified", "not implemented") for r in rows) else 1
