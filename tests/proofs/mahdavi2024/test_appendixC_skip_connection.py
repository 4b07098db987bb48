"""App. C: shifted labels memorize y with the skip connection; unshifted do not."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.appendixC_skip_connection import check_appendixC, control_unshifted_labels
from verifier.data.strategies import attention_instances


def _expected(ev):
    """verified when every hypothesis holds, else hypotheses-unmet (e.g. T < n: Assumption 1, Kruskal rank >= n,
    fails), whatever the conclusion does: the construction still runs and its numbers are checked below."""
    return "hypotheses-unmet" if any(h.status in ("refuted", "fails-at-precision") for h in ev.hypotheses) \
        else "verified"


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 3), d_out=st.integers(1, 2)))
def test_skip_connection_memorizes(inst):
    ev = check_appendixC(inst)
    assert ev.verdict == _expected(ev), ev.reason
    assert ev.measured["max |yhat - y| with the exact readout (ball)"] <= 1e-20


def test_negative_control_unshifted_labels():
    assert control_unshifted_labels().verdict == "refuted"
