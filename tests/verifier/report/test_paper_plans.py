"""The report's instance plans for a paper with its own options: deterministic,
distinct, drawn by the paper's ``vary``, and each plan reproducible by the
command it prints (the paper's own flags)."""
import json

from verifier.report import build as report
from verifier.statements import registry


def test_second_paper_plans_use_its_options():
    registry.load_all()
    for sid, st in registry.REGISTRY.items():
        own = registry.instance_options(sid)
        if own is None or not st.implemented:
            continue
        plans = report.instance_plan(sid, mode="thorough", seed=3)
        assert plans == report.instance_plan(sid, mode="thorough", seed=3)
        assert len({json.dumps(p, sort_keys=True) for p in plans}) == len(plans)
        for p in plans:
            assert set(p) <= set(own.defaults) and p["N"] >= 2
            assert p["d_h"] is None or 1 <= p["d_h"] <= p["d"]
        cmd = report.reproduce_command(sid, plans[1])
        assert cmd.startswith(f"mha-verify check {sid} ") and "--N " in cmd and "--n " not in cmd


def test_reproduce_command_uses_the_papers_flags():
    registry.load_all()
    cmd = report.reproduce_command("dana_lemma2", {"N": 5, "S": 2, "d": 4, "d_h": None, "H": 2, "seed": 0})
    assert cmd == "mha-verify check dana_lemma2 --H 2 --N 5 --S 2 --d 4 --seed 0"
