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


def _paper_files(tmp_path):
    """A float file for each later paper: float16 conditionals (Dana), float32 integral ids (K&S)."""
    import numpy as np

    dana = tmp_path / "dana.npz"
    np.savez(dana, N=np.array(3), sequences=np.array([[0, 0], [1, 1]]),
             conditionals=np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]], dtype=np.float16))
    ks = tmp_path / "ks.npz"
    np.savez(ks, sequences=np.array([[0, 1], [1, 0]]), labels=np.array([0, 1]),
             ids=np.array([3.0, 5.0], dtype=np.float32))
    return {"dana2025": dana, "kajitsuka2025": ks}


def test_exact_input_is_honoured_for_every_statement_of_the_later_papers(tmp_path):
    """Issue 31: --exact-input was silently ignored for the second and third papers.  Every statement that
    reads a file gets the exact reading with it, and the dtype reading without (float ids: bad input)."""
    from verifier.errors import InvalidInstance
    from verifier.statements.runner import build_instance

    files = _paper_files(tmp_path)
    sids = [sid for sid, st in registry.load_all().items() if st.implemented and st.paper in files]
    assert len(sids) >= 12
    for sid in sids:
        paper = registry.REGISTRY[sid].paper
        exact = build_instance(sid, data=files[paper], exact_input=True)
        if paper == "dana2025":
            assert not exact.at_precision and build_instance(sid, data=files[paper]).at_precision, sid
        else:
            assert exact.ids.tolist() == [3, 5], sid
            try:
                build_instance(sid, data=files[paper])
                raise AssertionError(f"{sid}: float ids read as integers")
            except InvalidInstance as exc:
                assert "'ids' holds float32 values" in str(exc)


def test_the_options_a_file_determines_are_instance_attributes():
    """Each paper's InstanceOptions.from_data names attributes of its instances, and draws names options."""
    for paper in registry.load_all() and registry.PAPERS.values():
        own = paper.instance_options
        if own is None:
            continue
        inst = own.make(**own.defaults)
        assert all(hasattr(inst, key) for key in own.from_data), paper.key
        assert set(own.draws) <= set(own.defaults), paper.key
    assert registry.PAPERS["dana2025"].instance_options.from_data == ("N", "S", "T0")
    assert set(registry.PAPERS["kajitsuka2025"].instance_options.from_data) == {"N", "S", "V", "d", "C"}
