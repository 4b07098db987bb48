"""The command line with two papers: each paper's own instance flags, a flag
of the other paper refused (exit 2, one line), and 'not checkable' ids."""
from test_cli import assert_clean_failure, mha  # noqa: F401 (same folder)

from verifier.statements import registry


def test_list_says_not_checkable_with_the_reason():
    proc = mha("list")
    line = next(l for l in proc.stdout.splitlines() if l.startswith("dana_thm3 "))
    assert "not checkable" in line and "[not checkable: " in line


def test_not_checkable_id_exits_2():
    assert_clean_failure(mha("check", "dana_lemma1"), 2, "is not checkable")


def test_flags_of_the_other_paper_are_refused():
    assert_clean_failure(mha("check", "theorem1", "--N", 3), 2, "option --N does not apply to theorem1")
    sid = next(s for s, st in registry.load_all().items() if st.paper == "dana2025" and st.implemented) \
        if any(st.paper == "dana2025" and st.implemented for st in registry.load_all().values()) else None
    if sid:
        assert_clean_failure(mha("check", sid, "--n", 3), 2, f"option --n does not apply to {sid}")


def test_second_paper_flags_in_help():
    proc = mha("check", "--help")
    for flag in ("--N", "--S", "--T0", "--dataset", "--conditionals"):
        assert flag in proc.stdout
    registry.load_all()
    assert all(f.flag in proc.stdout for p in registry.PAPERS.values() if p.instance_options
               for f in p.instance_options.flags)


def test_a_conclusion_outside_the_hypotheses_is_never_verified_and_the_headline_says_why(capsys):
    """Issue 25: contrib1 on all 9 bigrams (T0 = 9 > H d_h + d = 3) printed VERIFIED and exited 0."""
    from test_cli import run

    proc = run(capsys, "check", "dana_contrib1", "--N", 3, "--d", 2, "--dh", 1, "--H", 1, "--dataset", "all")
    assert proc.returncode == 2
    assert proc.stdout.startswith("dana_contrib1: HYPOTHESES-UNMET (T0 <= H d_h + d not met;")
    assert "VERIFIED" not in proc.stdout
    assert_clean_failure(proc, 2, "hypotheses unmet: hypotheses not met on the instance: T0 <= H d_h + d refuted")
