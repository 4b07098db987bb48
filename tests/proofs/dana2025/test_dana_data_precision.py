"""Dana et al.'s data read at their precision, hypotheses that decide the
verdict, size edge cases and equality cases decided exactly (issues 25, 31).

A float stands for every real that rounds to it (tests/rounding_truth.py
computes those sets independently); a JSON decimal and an integer stand for
themselves."""
import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st
from rounding_truth import box_distributions

from proofs.dana2025.contrib1_associations import check_dana_contrib1
from proofs.dana2025.prop3_circle_construction import check_dana_prop3
from proofs.dana2025.thm1_eps_approximation import check_dana_thm1_eps, heaviest_sequences
from proofs.dana2025.thm2_entropy_bound import check_dana_thm2
from verifier.arith.compare import workprec
from verifier.data.sequences import from_sequences, load_sequences, make_sequence_instance
from verifier.errors import InvalidInstance

ISSUE_ROW = [0.5000000009313226, 0.49999999906867654]  # sums to 1 - 2^-50 as float64 (issue 25)


def _file(tmp_path, **content):
    p = tmp_path / "data.json"
    p.write_text(json.dumps(content))
    return p


def _npz(tmp_path, **arrays):
    p = tmp_path / "data.npz"
    np.savez(p, **{k: np.asarray(v) for k, v in arrays.items()})
    return p


def test_the_issue_row_is_refused_as_decimals_and_at_its_precision(tmp_path):
    """As JSON the row is the decimals written (exact): they do not sum to 1.  As float64 each entry stands
    for its half-ulp interval: the upper ends sum to 1 - 2^-50 + 3 2^-55 < 1, no distribution rounds to it."""
    assert sum(map(Fraction, ISSUE_ROW)) == 1 - Fraction(1, 2**50)
    with pytest.raises(InvalidInstance, match=r"sums to 1 - 8.60e-16 = 49999999999999957/50000000000000000 \(exactly\), not 1"):
        load_sequences(_file(tmp_path, N=2, sequences=[[0, 0]], conditionals=[ISSUE_ROW]), d=141, H=1, d_h=1)
    with pytest.raises(InvalidInstance, match="upper ends of its entries' intervals sum to 0.9999999999999992.* < 1"):
        load_sequences(_npz(tmp_path, N=2, sequences=[[0, 0]], conditionals=[ISSUE_ROW]), d=141, H=1, d_h=1)


def test_both_targets_and_conditionals_are_refused(tmp_path):
    with pytest.raises(InvalidInstance, match="both 'targets' and 'conditionals'"):
        load_sequences(_file(tmp_path, N=2, sequences=[[0, 0]], targets=[1], conditionals=[[0.5, 0.5]]))


@pytest.mark.parametrize("N, match", [(1, "N = 1: a vocabulary of one token"), (10**12, "largest vocabulary")])
def test_vocabulary_sizes_outside_the_checkable_range_are_bad_input(tmp_path, N, match):
    with pytest.raises(InvalidInstance, match=match):
        load_sequences(_file(tmp_path, N=N, sequences=[[0, 0]], targets=[0]))
    with pytest.raises(InvalidInstance, match=match):
        make_sequence_instance(N=N, S=2, d=2, H=1)


def test_a_near_uniform_row_within_precision_is_not_refuted(tmp_path):
    # the issue's row with its mass put back: sums to 1 exactly, read at float64 precision (npz)
    row = [0.5000000009313226, 0.4999999990686774]
    assert sum(map(Fraction, row)) == 1
    inst = load_sequences(_npz(tmp_path, N=2, sequences=[[0, 0]], conditionals=[row]), d=141, H=1, d_h=1)
    assert inst.at_precision and "at the data's precision" in inst.summary()["reading"]
    ev = check_dana_thm2(inst)
    assert ev.verdict == "verified"  # C = 0.499 < 1/2 and every distribution has entropy <= log 2
    low_d = check_dana_thm2(inst.replace(d=2))
    assert low_d.verdict == "inconclusive"  # C > 1/2, but the RHS's sign is below the data's rounding
    assert "not decided for every distribution the data stand for" in low_d.reason and "--exact-input" in low_d.reason
    # the same decimals in JSON are exact: a non-uniform distribution, the RHS certainly < 0
    exact = load_sequences(_file(tmp_path, N=2, sequences=[[0, 0]], conditionals=[row]), d=2, H=1, d_h=1)
    assert not exact.at_precision and check_dana_thm2(exact).verdict == "refuted"


def test_a_refutation_says_which_side_of_one_half_c_is(tmp_path):
    inst = load_sequences(_file(tmp_path, N=3, sequences=[[0, 0]], conditionals=[[0.1, 0.2, 0.7]]), d=2, H=1)
    assert not inst.at_precision  # JSON decimals: exactly 1/10, 2/10, 7/10
    ev = check_dana_thm2(inst)
    assert ev.verdict == "refuted" and ev.certified
    assert "C = 4.71 >= 1/2" in ev.reason and "every distribution the data stand for" in ev.reason
    assert check_dana_thm2(inst.replace(d=178)).verdict == "verified"  # C < 1/2 there
    floats = load_sequences(_npz(tmp_path, N=3, sequences=[[0, 0]], conditionals=[[0.1, 0.2, 0.7]]), d=2, H=1)
    assert floats.at_precision and check_dana_thm2(floats).verdict == "refuted"  # for every distribution


def test_a_tiny_positive_entry_is_not_a_point_mass(tmp_path):
    """[1e-170, 1.0] (float64) stands for distributions with a tiny positive first entry: never a point mass;
    its Thm. 2 term is -4.9e-168 < 0, next to a near-uniform row whose term is <= 0 (C > 1/2)."""
    rows = [[1e-170, 1.0], [0.5, 0.5]]
    inst = load_sequences(_npz(tmp_path, N=2, sequences=[[0, 0], [1, 1]], conditionals=rows), d=2, H=1, d_h=1)
    ev = check_dana_thm2(inst)
    assert ev.verdict == "refuted" and "one certainly < 0" in ev.reason
    exact = from_sequences(np.array([[0, 0], [1, 1]]), N=2, conditionals=np.array([[0.5, 0.5], [0.5, 0.5]]), d=2)
    assert check_dana_thm2(exact).verdict == "verified"  # exactly uniform: every term is 0 = d_KL(pi, L)
    with pytest.raises(InvalidInstance, match="not 1"):  # as JSON decimals: 1 + 1e-170, not a distribution
        load_sequences(_file(tmp_path, N=2, sequences=[[0, 0], [1, 1]], conditionals=rows), d=2, H=1, d_h=1)


def _rhs_mp(q, C):
    """Thm. 2's right-hand side for one sequence in mpmath (q a genuine distribution)."""
    N, g = len(q), max(range(len(q)), key=lambda j: q[j])
    ent = -mpmath.fsum(x * mpmath.log(x) for x in q if x > 0)
    rest = 1 - q[g]
    tv = mpmath.fsum(abs(q[j] / rest - mpmath.mpf(1) / (N - 1)) for j in range(N) if j != g) / 2
    return rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * mpmath.log((N - 1) / (mpmath.exp(ent) - 1))


@settings(deadline=None)
@given(st.integers(3, 5), st.integers(-2**20, 2**20), st.sampled_from([2, 60, 400]), st.sampled_from([8, 20, 26, 40]),
       st.integers(0, 2**16))
def test_a_refutation_holds_at_every_corner_of_the_rounding_box(N, shift, d, bits, seed):
    """Float64 rows 2^-bits from uniform, read at their precision: when Thm. 2 is refuted, the RHS is
    negative at distributions inside the rows' rounding sets (the stored point with its deficit spread, and
    mass moved between two entries to the sets' edges; mpmath, 60 digits); far enough from uniform with
    C > 1/2 it is refuted."""
    rng = np.random.default_rng(seed)
    eps = rng.integers(-4, 5, N)
    eps[0] = 4  # never exactly uniform
    p = np.full(N, 1.0 / N) + eps * 2.0 ** -bits + shift * 2.0 ** -60
    p = np.abs(p) / np.abs(p).sum()
    try:
        inst = from_sequences(np.array([[0, 0]]), N=N, conditionals=p[None, :], d=d, H=1, exact=False)
    except InvalidInstance:
        assert not box_distributions(p.tolist())  # refused: no distribution rounds to the row
        return
    ev = check_dana_thm2(inst)
    assert ev.verdict in ("verified", "refuted", "inconclusive")
    if d <= 60 and bits <= 20:  # C > 1/2: RHS < 0 = d_KL(pi, L) for every such row
        assert ev.verdict == "refuted", ev.reason
    if d == 400:  # C < 1/2: the RHS is >= 0 for every distribution
        assert ev.verdict != "refuted", ev.reason
    if ev.verdict != "refuted":
        return
    mpmath.mp.dps = 60
    C = mpmath.sqrt(32 * mpmath.log(N + 1) / d)
    points = box_distributions(list(p))
    assert points
    for q in points:
        assert _rhs_mp([mpmath.mpf(x.numerator) / x.denominator for x in q], C) < 0


def test_conditional_balls_enclose_every_distribution_of_the_rounding_box():
    from flint import arb, fmpq

    p = np.array([[0.1, 0.2, 0.7], [1 / 3, 2 / 3, 0.0]])
    inst = from_sequences(np.array([[0, 0], [0, 1]]), N=3, conditionals=p, exact=False)
    with workprec(128):
        B = inst.conditional_balls()
        for t in range(2):
            points = box_distributions(list(p[t]))
            assert len(points) > 1
            for q in points:
                assert all(B[t, j].contains(arb(fmpq(x.numerator, x.denominator))) for j, x in enumerate(q))
        assert not B[1, 2].is_zero() and B[1, 2].upper() <= 2.0 ** -1074  # a float64 zero: [0, 2^-1075]
        assert max(float(B[t, j].rad()) for t in range(2) for j in range(3)) < 4 * 2.0 ** -53
        exact = from_sequences(np.array([[0, 0]]), N=2, conditionals=np.array([[1 / 3, 2 / 3]]))
        assert "normalized exactly" in exact.summary()["reading"]
        b = exact.conditional_balls()
        assert (b[0, 0] + b[0, 1] - 1).contains(0) and float(b[0, 0].rad()) < 2.0 ** -120


def test_huge_prior_weights_count_t_eps_exactly():
    seqs = np.array([[0, 0], [0, 1], [1, 1], [2, 2], [1, 2]])
    P = np.array([[0.5, 0.25, 0.25]] * 5)
    inst = from_sequences(seqs, N=3, conditionals=P, prior=[1e308] * 5, d=2, d_h=1, H=1)
    assert np.all(np.isfinite(inst.weights)) and inst.weights.max() == 1  # a float64 guide, w / max w
    assert len(heaviest_sequences([1e308] * 5, 0.25)) == 4  # mass 4/5 > 3/4; 3/5 is not
    assert len(heaviest_sequences([3.0, 1.0], 0.25)) == 2  # mass exactly 3/4 is not > 3/4
    assert len(heaviest_sequences([2**53 + 1, 2**53, 2**53, 2**53], 0.5)) == 2  # exact: 2^54 + 1 > 2^54 + 1/2
    ev = check_dana_thm1_eps(inst)
    assert ev.verdict == "hypotheses-unmet" and "T_eps <= H d_h + d refuted (T_eps = 4" in ev.reason
    far = from_sequences(seqs[:2], N=3, conditionals=P[:2], prior=[1e308, 1e-300])  # exact: no rescaling needed
    q = far.prior_rationals()
    assert q[1] / q[0] == fmpq(*(1e-300).as_integer_ratio()) / fmpq(*(1e308).as_integer_ratio())


def test_contrib1_outside_its_size_hypothesis_is_hypotheses_unmet():
    ev = check_dana_contrib1(make_sequence_instance(N=3, S=2, d=2, d_h=1, H=1, dataset="all"))
    assert ev.verdict == "hypotheses-unmet" and ev.exit_code == 2 and not ev.certified
    assert ev.reason.startswith("hypotheses not met on the instance: T0 <= H d_h + d refuted (T0 = 9")


def test_prop3_equality_case_is_decided_exactly():
    """N = 2: d_KL(pi, f_lambda) and log(1 + (N-1) e^{-lambda m}) are the same number (one ball)."""
    ev = check_dana_prop3(make_sequence_instance(N=2, S=2, d=2, H=1, seed=0))
    assert ev.verdict == "verified" and ev.certified
    assert all(r["d_KL <= bound by"].startswith("exact term-wise") for r in ev.measured["per eta"])
    assert check_dana_prop3(make_sequence_instance(N=5, S=2, d=2, H=1, seed=0)).measured["per eta"][0][
        "d_KL <= bound by"] == "balls"


def test_token_spaces_beyond_int64_are_drawn_without_overflow():
    inst = make_sequence_instance(N=1024, S=10, d=3, H=2, seed=0)  # N^S = 2^100
    assert inst.T0 == 9 and np.unique(inst.sequences, axis=0).shape[0] == 9 and inst.sequences.max() < 1024
    with pytest.raises(InvalidInstance, match="largest support checked"):
        make_sequence_instance(N=1024, S=3, dataset="all")
