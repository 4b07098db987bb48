"""App. B.2: actual <= a-priori bound < sigma_min, in balls; small c refuted."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.appendixB2_finite_scaling import check_appendixB2, control_small_c
from verifier.data.strategies import attention_instances


@given(attention_instances(H=st.integers(2, 4), n=st.integers(2, 4), context=st.sampled_from(["shared", "random"])))
def test_finite_c_suffices(inst):
    ev = check_appendixB2(inst)
    assert ev.verdict == "verified", ev.reason
    for cert in ev.certificates:
        assert cert["actual"] <= cert["apriori"] < cert["sigma_min_lower"]


def test_negative_control_small_c_refuted():
    ev = control_small_c()
    assert ev.verdict == "refuted"
    assert any(c["apriori<sigma"] == "false" for c in ev.certificates)
