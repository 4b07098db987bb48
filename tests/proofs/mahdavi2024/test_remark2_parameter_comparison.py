"""Remark 2: at equal parameter counts MHA's count and the ReLU cap agree up
to kappa (d/n)^p (exact integers); the literal and the uniform-constant
comparisons are refuted."""
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition3_relu_lower_bound import relu_parameter_count
from proofs.mahdavi2024.remark2_parameter_comparison import (
    SETTINGS,
    build_grid,
    check_remark2,
    comparison_row,
    control_remark2_literal,
    control_remark2_uniform_constant,
    relu_width_at_budget,
)
from verifier.data.instances import make_instance


@st.composite
def sizes(draw):
    n = draw(st.integers(2, 40))
    return draw(st.integers(1, 64)), n, n + draw(st.integers(1, 200))


@given(sizes(), st.sampled_from(sorted(SETTINGS)))
def test_reconstructed_inequality_holds_off_the_grid(hnd, setting):
    H, n, d = hnd
    r = comparison_row(H, n, d, setting)
    kappa, p = SETTINGS[setting]
    assert n ** p * r["C_R"] <= kappa * d ** p * r["C_A"]
    assert r["C_A"] < r["C_R"]  # the literal comparison never holds (n < d)


@given(st.integers(1, 10**6), st.integers(1, 20), st.integers(2, 50))
def test_relu_width_is_the_largest_within_budget(budget, n, d):
    m = relu_width_at_budget(budget, n, d)
    assert m == 0 or relu_parameter_count(m, n, d) <= budget
    assert relu_parameter_count(m + 1, n, d) > budget


def test_grid_is_verified_and_tabulated():
    ev = check_remark2(make_instance(H=3, n=4, d=9))
    assert ev.verdict == "verified" and ev.certified
    table = ev.measured["table [H, n, d, setting, m, C_A, C_R]"]
    assert len(table) == len(build_grid(make_instance(H=3, n=4, d=9))) and [3, 4, 9, "lean"] in [r[:4] for r in table]
    assert ev.measured["literal C_A >= C_R holds at"] == 0


def test_negative_control_literal_comparison_is_refuted():
    assert control_remark2_literal().verdict == "refuted"


def test_negative_control_uniform_constant_is_refuted():
    ev = control_remark2_uniform_constant()
    assert ev.verdict == "refuted"
    assert ev.measured["worst n^p C_R / (d^p C_A)"]["lean"] > 8  # grows like d/n: n = 2, d = 64
