"""Declared hypotheses: n >= d and impossible sizes are hypotheses-unmet with
evidence (never bad input, never a checker error); statements that do not
need n < d run there; data failing at its precision makes a statement that
needs the assumption hypotheses-unmet."""
import numpy as np

from verifier.data.instances import from_arrays, make_instance
from verifier.statements import registry
from verifier.statements.hypotheses import DATA, SHAPE
from verifier.statements.runner import run_check

registry.load_all()


def test_every_checker_declares_its_hypotheses():
    for sid, st in registry.REGISTRY.items():
        if st.implemented:
            assert isinstance(st.requires, tuple) and all(isinstance(h, str) and h for h in st.requires), sid
    assert "n < d" in registry.REGISTRY["theorem1"].requires
    assert "n < d" not in registry.REGISTRY["proposition2"].requires  # Prop. 2 holds for any n
    assert registry.REGISTRY["assumption2"].requires == ()  # a property of the data
    assert set(SHAPE) >= {"n < d", "d_v >= d_out", "d_out <= d"} and set(DATA) >= {"Assumption 1", "Assumption 2"}


def test_n_ge_d_is_hypotheses_unmet_without_running_the_construction():
    ev = run_check("theorem1", make_instance(H=2, n=4, d=3, seed=0))
    assert ev.verdict == "hypotheses-unmet" and not ev.certified
    assert ev.reason.startswith("hypotheses not met on the instance: n < d refuted (n = 4, d = 3)")
    assert "not attempted" in ev.reason
    assert [h.status for h in ev.hypotheses if h.name == "n < d"] == ["refuted"]


def test_statements_that_do_not_need_n_lt_d_run_there():
    shared = make_instance(H=2, n=4, d=3, T=4, context="shared", seed=0)
    assert run_check("proposition2", shared).verdict == "verified"  # the cap holds for any n
    assert run_check("assumption2", make_instance(H=2, n=4, d=3, seed=0)).verdict == "refuted"  # simply fails


def test_impossible_readout_sizes_are_hypotheses_unmet_not_errors():
    for sid in ("theorem1", "appendixC"):
        ev = run_check(sid, make_instance(H=3, n=3, d=5, d_out=3, d_v=1, seed=0))
        assert ev.verdict == "hypotheses-unmet" and "d_v >= d_out refuted" in ev.reason, sid
        ev = run_check(sid, make_instance(H=3, n=3, d=5, d_out=6, d_v=6, seed=0))
        assert ev.verdict == "hypotheses-unmet" and "d_out <= d refuted" in ev.reason, sid


def test_a_refuted_hypothesis_leads_the_reason():
    ev = run_check("proposition2", make_instance(H=2, n=2, d=4, T=6, context="random", seed=0))
    assert ev.verdict == "hypotheses-unmet"
    assert ev.reason.startswith("hypotheses not met on the instance: shared context")


def test_claim1_on_data_failing_at_its_precision_is_hypotheses_unmet():
    """Claim 1 does not report Assumption 1 itself: the runner checks it for
    data read at its dtype's precision."""
    rng = np.random.default_rng(0)
    E, e = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5))
    e[3] = 2 * e[0] - 3 * e[1]  # float-computed: dependent at float64 precision
    user = from_arrays(E, e, H=1, reading="dtype")
    ev = run_check("claim1", user)
    assert ev.verdict == "hypotheses-unmet" and "Assumption 1 fails at the data's precision" in ev.reason
    assert run_check("claim1", from_arrays(E, e, H=1)).verdict == "verified"  # exact reading
