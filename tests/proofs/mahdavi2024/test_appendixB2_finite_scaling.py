"""App. B.2: actual <= a-priori bound < sigma_min, in balls; small c refuted."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.appendixB2_finite_scaling import check_appendixB2, control_small_c
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances


def _expected(ev):
    """verified when every hypothesis holds, else hypotheses-unmet (e.g. T < n: Assumption 1, Kruskal rank >= n,
    fails), whatever the conclusion does: the construction still runs and its numbers are checked below."""
    return "hypotheses-unmet" if any(h.status in ("refuted", "fails-at-precision") for h in ev.hypotheses) \
        else "verified"


@given(attention_instances(H=st.integers(2, 4), n=st.integers(2, 4), context=st.sampled_from(["shared", "random"])))
def test_finite_c_suffices(inst):
    ev = check_appendixB2(inst)
    assert ev.verdict == _expected(ev), ev.reason
    for cert in ev.certificates:
        assert cert["actual"] <= cert["apriori"] < cert["sigma_min_lower"]


def test_negative_control_small_c_refuted_by_both_sides():
    """(19) fails at c/1000: the LOWER bound of the perturbation is above the
    UPPER bound of sigma_min (a one-sided bound alone would not refute)."""
    ev = control_small_c()
    assert ev.verdict == "refuted" and ev.certified
    bad = [c for c in ev.certificates if c["(19) actual<sigma"] == "false"]
    assert bad and all(c["actual_lower"] >= c["sigma_min_upper"] for c in bad)


def test_one_head_is_nothing_to_check():
    ev = check_appendixB2(make_instance(H=1, n=3, d=5, seed=0))
    assert ev.verdict == "verified" and not ev.certified
    assert "nothing to check" in ev.reason and ev.measured["steps"] == 0
