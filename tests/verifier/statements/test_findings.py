"""Declared findings: their shape, their families (each boundary tested just
inside and just outside), and that a declaration which no longer holds is
caught (strict xfail)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from verifier.data.sequences import from_sequences
from verifier.statements import findings, registry
from verifier.statements.findings import Finding, Printed, Witness

PRINTED = Printed("x", "p. 1", "test")


@pytest.fixture(autouse=True)
def _loaded():
    registry.load_all()


def _finding(**kw):
    base = dict(key="t.k", paper="dana2025", statement="dana_thm2", kind="missing hypothesis", title="t",
                printed=PRINTED, reading="r", strongest="s", survives=True, family="f",
                witnesses=(Witness("counterexample", "dana_thm2", control="neg_thm2_C"),))
    base.update(kw)
    return Finding(**base)


def test_a_finding_must_have_a_class_a_witness_a_counterexample_and_a_strongest_reading():
    _finding()
    with pytest.raises(ValueError, match="class"):
        _finding(kind="probably wrong")
    with pytest.raises(ValueError, match="no witness"):
        _finding(witnesses=())
    with pytest.raises(ValueError, match="no refuted counterexample"):
        _finding(witnesses=(Witness("repair", "dana_thm2_small_c", expect="verified"),))
    with pytest.raises(ValueError, match="strongest"):
        _finding(strongest="")
    with pytest.raises(ValueError, match="role"):
        Witness("guess", "dana_thm2")
    with pytest.raises(ValueError, match="not several"):
        Witness("counterexample", "dana_thm2", control="neg", experiment="capacity_probe")


def test_a_lost_formula_is_never_refuted_and_is_named_in_the_title():
    lost = Printed("a bound with complexity [...]", "App. I.1", "test", lost="the complexity")
    with pytest.raises(ValueError, match="lost"):  # refuting our reading is not refuting the paper
        _finding(printed=lost, title="lost formula")
    with pytest.raises(ValueError, match="title"):
        _finding(printed=lost, kind="sharpened", title="t")
    with pytest.raises(ValueError, match="Printed.lost"):
        _finding(kind=findings.LOST_FORMULA, title="t")
    f = _finding(printed=lost, kind="sharpened", title="the formula is lost")
    assert f.class_label == "sharpened (our reading of a lost formula)" and not f.refutes


def test_a_verified_repair_needs_its_checker_an_instance_and_a_control_of_its_own():
    cx = Witness("counterexample", "dana_thm2", control="neg_thm2_C")
    rep = Witness("repair", "dana_thm2_small_c", options=(("N", 900),), expect="verified")
    ctl = Witness("repair control", "dana_thm2_small_c", control="the construction without lambda")
    with pytest.raises(ValueError, match="verified repair"):
        _finding(repair_status="verified", repair_id="dana_thm2_small_c", witnesses=(cx, rep))
    with pytest.raises(ValueError, match="verified repair"):
        _finding(repair_status="verified", witnesses=(cx, rep, ctl))
    _finding(repair_status="verified", repair_id="dana_thm2_small_c", witnesses=(cx, rep, ctl))
    with pytest.raises(ValueError, match="repair status"):
        _finding(repair_status="probably")


def test_every_declared_finding_is_well_formed():
    found = findings.findings_of()
    assert {f.paper for f in found} == {"mahdavi2024", "dana2025"}
    for f in found:
        assert f.printed.where and f.printed.source and f.reading and f.family and f.strongest
        assert f.printed.text == findings.NOT_RETRIEVED or f.printed.text.strip()
        assert "seed 002" not in f.printed.source and not f.printed.source.startswith("DANA2025.md"), f.key
        assert "arXiv:" in f.printed.where + f.printed.source, f.key  # the public version is cited
        if f.repair_id:
            assert registry.REGISTRY[f.repair_id].implemented
        for w in f.witnesses:
            if w.experiment:
                continue
            st = registry.get(w.statement)
            if w.control:  # names exactly one negative control
                assert sum(c.description.startswith(w.control) for c in st.controls) == 1, (f.key, w.control)
    assert len({f.key for f in found}) == len(found)


def test_witnesses_given_as_options_lie_where_their_role_says():
    """A counterexample instance of a finding about the statement itself lies in its family; a confirmation
    instance (just outside a boundary) does not."""
    checked = 0
    for f in findings.findings_of():
        if f.covers is None or f.claim:
            continue
        for w in f.witnesses:
            if w.statement != f.statement or not w.options or w.kwargs:
                continue
            assert f.in_family(w.opts()) == (w.role == "counterexample"), (f.key, w.what)
            checked += 1
    assert checked >= 8


# -- each family's boundaries, just inside (key) and just outside (None) -----------------------------------------
@pytest.mark.parametrize("sid, options, key", [
    ("dana_thm2", {"N": 5, "d": 3}, "dana_thm2.c_below_half"),
    ("dana_thm2", {"N": 3, "d": 177}, "dana_thm2.c_below_half"),  # 128 ln 4 = 177.4 >= 177: C >= 1/2
    ("dana_thm2", {"N": 3, "d": 178}, None),
    ("dana_thm2", {"N": 900, "d": 880}, None),
    # Lemma 2: the cap min(d,R) + (H-1) min(d,D) against min(T0, Hd), T0 on each side
    ("dana_lemma2", {"N": 3, "S": 2, "d": 4, "H": 2, "T0": 8}, "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 3, "S": 2, "d": 4, "H": 2, "T0": 7}, None),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 5, "H": 2, "T0": 10}, "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 5, "H": 2, "T0": 9}, None),  # inside the old 'd >= N+S-1' family
    # d on each side (N = 3, S = 2, H = 2, T0 = 8): d = 3 gives cap 6 = min(8, 6)
    ("dana_lemma2", {"N": 3, "S": 2, "d": 3, "H": 2, "T0": 8}, None),
    # H = 1: d > N+S-1 on all N^S sequences
    ("dana_lemma2", {"N": 2, "S": 2, "d": 4, "H": 1, "T0": 4, "dataset": "all"},
     "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 2, "S": 2, "d": 3, "H": 1, "T0": 4, "dataset": "all"}, None),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 5, "H": 3, "T0": 16, "dataset": "all"},
     "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", {"N": 4, "S": 2, "d": 4, "H": 3, "T0": 16, "dataset": "all"}, None),
    ("dana_lemma2", {"N": 2, "S": 2, "d": 3, "H": 2, "T0": 4, "dataset": "all"}, None),  # d >= N+S-1, cap 5 >= 4
    # S = 1: its own fact
    ("dana_lemma2", {"N": 5, "S": 1, "d": 2, "H": 2, "T0": 3}, "dana_lemma2.single_token"),
    ("dana_lemma2", {"N": 5, "S": 1, "d": 2, "H": 2, "T0": 2}, None),
    # Thm. 1's capacity reading: H d_h < d, one last token, d_KL(pi, L) = 0
    ("dana_thm1_eps0", {"N": 3, "S": 2, "d": 2, "d_h": 1, "H": 1, "T0": 3, "dataset": "shared-last",
                        "conditionals": "positive"}, "dana_thm1_eps0.capacity_reading"),
    ("dana_thm1_eps0", {"N": 3, "S": 2, "d": 2, "d_h": 2, "H": 1, "T0": 3, "dataset": "shared-last",
                        "conditionals": "positive"}, None),  # H d_h = d
    ("dana_thm1_eps0", {"N": 4, "S": 2, "d": 2, "d_h": 1, "H": 1, "T0": 3, "dataset": "shared-last",
                        "conditionals": "positive"}, None),  # d = N - 2: d_KL(pi, L) = 0 not known
    ("dana_thm1_eps0", {"N": 3, "S": 2, "d": 2, "d_h": 1, "H": 1, "T0": 3, "dataset": "distinct-last",
                        "conditionals": "positive"}, None),
    # Cor. 2: H d_h + d against T0
    ("dana_corollary2", {"N": 3, "S": 2, "d": 2, "d_h": 1, "H": 2, "T0": 3}, "dana_corollary2.above_one"),
    ("dana_corollary2", {"N": 3, "S": 2, "d": 2, "d_h": 1, "H": 1, "T0": 3}, None),
    ("dana_corollary2", {"N": 3, "S": 2, "d": 2, "d_h": 1, "H": 1, "T0": 4}, None),
    ("lemma2", {"H": 1, "n": 3, "d": 5}, None),
])
def test_families_place_a_refuted_instance(sid, options, key):
    f = findings.covered_by(sid, {"seed": 0, **options})
    assert (f.key if f else None) == key


def _table(seqs, targets, **sizes):
    return from_sequences(np.array(seqs), N=3, targets=targets, kind="control", **sizes)


@pytest.mark.parametrize("sid, inst, key", [
    # the data's tokens decide, not N: N = 10, d = 5 <= N+S-2, but 4 tokens used
    ("dana_lemma2", from_sequences(np.array(list(itertools.product(range(4), repeat=2))[:10]), N=10,
                                   targets=np.zeros(10, dtype=int), d=5, H=2, kind="control"),
     "dana_lemma2.d_at_least_N_plus_S_minus_1"),
    ("dana_lemma2", from_sequences(np.array(list(itertools.product(range(5), repeat=2))[:10]), N=10,
                                   targets=np.zeros(10, dtype=int), d=5, H=2, kind="control"), None),
    ("dana_corollary1", _table([[0, 1], [1, 1]], [0, 1], d=2, d_h=1, H=0), "dana_corollary1.no_heads"),
    ("dana_corollary1", _table([[0, 1], [1, 1]], [0, 0], d=2, d_h=1, H=0), None),  # same target: no conflict
    ("dana_corollary1", _table([[0, 1], [1, 2]], [0, 1], d=2, d_h=1, H=0), None),  # distinct last tokens
    ("dana_corollary1", _table([[0, 1], [1, 1], [2, 1]], [0, 1, 2], d=2, d_h=1, H=0), None),  # T0 > H d_h + d
    ("dana_contrib1", _table([[0, 0], [1, 1], [2, 2]], [0, 1, 2], d=1, d_h=1, H=2), "dana_contrib1.d_equals_1"),
    ("dana_contrib1", _table([[0, 0], [1, 1], [2, 2]], [0, 1, 1], d=1, d_h=1, H=2), None),  # two targets
    ("dana_contrib1", _table([[0, 0], [1, 1], [2, 2]], [0, 1, 2], d=2, d_h=1, H=1), None),
])
def test_families_are_decided_on_the_data_at_hand(sid, inst, key):
    f = findings.covered_by(sid, {}, inst)
    assert (f.key if f else None) == key


def test_the_thm2_family_boundary_is_128_ln_n_plus_1():
    f = findings.FINDINGS["dana_thm2.c_below_half"]
    for N in (2, 10, 900):
        edge = 128 * math.log(N + 1)
        assert f.in_family({"N": N, "d": math.floor(edge)}) and not f.in_family({"N": N, "d": math.floor(edge) + 1})


def test_a_finding_about_a_proof_step_places_no_report_instance():
    step = findings.FINDINGS["dana_lemma2.hyperplane_step"]
    assert step.claim and findings.covered_by("dana_lemma2", {"N": 5, "S": 2, "d": 4, "H": 2, "T0": 8,
                                                              "seed": 0}) is None


def test_reproduces_is_strict():
    w = Witness("counterexample", "dana_thm2")
    assert findings.reproduces(w, "refuted", True) == (True, "")
    assert not findings.reproduces(w, "refuted", False)[0]
    assert not findings.reproduces(w, "inconclusive", False)[0]
    assert not findings.reproduces(w, "verified", True)[0]
    assert not findings.reproduces(w, "error", False)[0]


def test_a_declaration_that_no_longer_holds_is_caught():
    """Negative control of the mechanism: declare the verified default
    instance of Lemma 2 (d = 4 < N+S-1) refuted."""
    w = Witness("counterexample", "dana_lemma2", options=(("N", 5), ("S", 2), ("d", 4), ("H", 2), ("T0", 8),
                                                          ("seed", 0)))
    ev = findings.run_witness(w)
    assert ev.verdict == "verified" and ev.certified
    ok, why = findings.reproduces(w, ev.verdict, ev.certified)
    assert not ok and "declared refuted" in why


def test_an_experiment_witness_is_not_run_here():
    with pytest.raises(ValueError, match="report layer"):
        findings.run_witness(Witness("confirmation", "capacity_probe", experiment="capacity_probe"))


def test_errata_references_number_the_findings_in_the_papers_order():
    refs = [findings.errata_reference(f) for f in findings.findings_of("dana2025")]
    assert refs[0] == "ERRATA-dana2025.md, finding 1" and len(set(refs)) == len(refs)
