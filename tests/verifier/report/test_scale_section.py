"""The report's named-instance section (verifier/report/scale.py): which
instances each mode runs, and how a row renders (no heavy run here; the
rows themselves come from the Theorem 1 checker, tested elsewhere)."""
from verifier.report import scale


def test_modes_pick_the_named_instances():
    assert [n["key"] for n in scale.named_instances("quick")] == []
    assert [n["key"] for n in scale.named_instances("default")] == ["fig2", "fig2-H60", "vit-shared"]
    assert [n["key"] for n in scale.named_instances("thorough")][-2:] == ["vit-tight", "vit-random"]
    opts = {n["key"]: n["options"] for n in scale.NAMED}
    assert opts["fig2"] == dict(H=20, n=32, d=64, d_h=32, context="shared")
    assert opts["vit-tight"]["d_h"] == opts["vit-tight"]["n"] == 197


def test_row_renders_with_its_path_and_times():
    row = {"key": "fig2", "name": "Fig. 2 setting", "options": dict(H=20, n=32, d=64, d_h=32, context="shared"),
           "T": 621, "verdict": "verified", "certified_rank": 621, "rank_method": "float64 verification (Rump) ...",
           "residual_bound": 1e-6, "assumption1": "sampled: 500/500 subsets (evidence)",
           "command": "mha-verify check theorem1 --H 20", "seconds": {"total": 4.9,
                                                                                            "construction": 0.2,
                                                                                            "rank certificate": 0.3}}
    md = scale.markdown_section({"mode": "default", "rows": [row], "error": False})
    assert ("| Fig. 2 setting | 20 | 32 | 64 | 32 | 621 | verified | 621 | float64 (Rump) | 1e-06 | "
            "sampled: 500/500 subsets (evidence) |") in md
    page = scale.insert_html("<html><body></body></html>", {"mode": "default", "rows": [row], "error": False})
    assert "<section id='scale'>" in page and page.endswith("</body></html>")
    assert "(skipped in this mode)" in scale.markdown_section(scale.run_named("quick", seed=0))


def test_a_certified_row_gets_a_certificate_file_re_checked_in_its_own_process(tmp_path):
    from verifier.statements import registry
    from verifier.statements.runner import build_instance, run_check

    registry.load_all()
    spec = {"key": "tiny", "name": "tiny", "options": dict(H=3, n=3, d=5)}
    inst = build_instance("theorem1", seed=0, **spec["options"])
    ev = run_check("theorem1", inst, seed=0)
    row, seconds = scale.certify_row(spec, inst, ev, seed=0, out=tmp_path)
    assert row == {"written": True, "file": "certificates/tiny.json", "recheck": "ACCEPTED", "recheck_exit": 0}
    assert (tmp_path / "certificates" / "tiny.json").exists() and set(seconds) == {"certificate", "re-check"}
    md = scale.markdown_section({"mode": "default", "rows": [dict(key="tiny", name="tiny", options=spec["options"],
                                                                   verdict="verified", certificate=row)]})
    assert "`certificates/tiny.json`: ACCEPTED" in md
    big = dict(row, written=False, why="its arrays hold 900 MiB (at most 256)")
    assert "not written: its arrays hold 900 MiB" in scale._certificate(big)


def test_assumption1_reads_certified_or_sampled():
    """T <= d: certified for every subset (one rank certificate, none sampled);
    T > d: the random-subset sample, evidence only."""
    from proofs.mahdavi2024.theorem1_memorization import check_theorem1
    from verifier.data.instances import make_instance

    ev = check_theorem1(make_instance(H=6, n=8, d=48, d_h=8, seed=1), assumption_samples=50)  # T = 43 <= 48
    assert scale.assumption1_reading(ev) == "certified: all T queries independent"
    ev = check_theorem1(make_instance(H=40, n=3, d=6, seed=0), assumption_samples=50)  # T = 81 > 6
    assert scale.assumption1_reading(ev) == "sampled: 50/50 subsets (evidence)"
