"""Issue 31 on Dana et al.'s data: each old bug of the reader as a test on
the one reader, and adversaries that build a dataset at a point where a
hypothesis of equality or structure fails (not a point mass, not a uniform
prior), inside the intervals of a float file, and round it: no certified
verdict may rest on that hypothesis.  Ground truth in exact rationals
(tests/rounding_truth.py, Fractions, mpmath)."""
import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rounding_truth import exact, rounding_set, rounds_to

from proofs.dana2025.contrib1_associations import check_dana_contrib1
from proofs.dana2025.corollary1_associations import check_dana_corollary1
from proofs.dana2025.corollary2_accuracy import accuracy_bound, check_dana_corollary2
from proofs.dana2025.prop3_circle_construction import check_dana_prop3
from proofs.dana2025.thm2_entropy_bound import check_dana_thm2
from verifier.data.sequences import from_sequences, load_sequences
from verifier.errors import InvalidInstance

FLOATS = (np.float16, np.float32, np.float64)


def _json(tmp_path, text: str):
    p = tmp_path / "d.json"
    p.write_text(text)
    return p


def _npz(tmp_path, **arrays):
    p = tmp_path / "d.npz"
    np.savez(p, **arrays)
    return p


# ------------------------------------------------------------------ the old bugs, on the one reader
@pytest.mark.parametrize("how", ["json", "int64", "uint64"])
def test_integers_beyond_2_53_in_a_prior_are_compared_exactly(tmp_path, how):
    """[2^53 + 1, 2^53] is not uniform: float64 made it [2^53, 2^53] and Cor. 2's hypothesis 'certified'."""
    seqs, targets, prior = [[0, 0], [0, 1]], [0, 1], [2**53 + 1, 2**53]
    if how == "json":
        p = _json(tmp_path, json.dumps({"N": 2, "sequences": seqs, "targets": targets, "prior": prior}))
    else:
        p = _npz(tmp_path, N=2, sequences=np.array(seqs), targets=np.array(targets), prior=np.array(prior, dtype=how))
    inst = load_sequences(p, d=2, d_h=1, H=1)
    ev = check_dana_corollary2(inst)
    assert ev.verdict == "hypotheses-unmet" and not ev.certified
    assert "uniform prior refuted" in ev.reason and "9007199254740993 and 9007199254740992 differ" in ev.reason


def test_long_doubles_below_float64_are_not_zeros(tmp_path):
    """(1e-4000, 1) in long double is not a point mass: float64 made it (0, 1) and Thm. 2 VERIFIED; the
    statement is refuted there (C = 4.19 > 1/2, its term < 0 for every distribution it stands for)."""
    row = np.array([[np.longdouble("1e-4000"), np.longdouble(1)]])
    inst = load_sequences(_npz(tmp_path, N=2, sequences=np.array([[0, 0]]), conditionals=row), d=2, H=1, d_h=1)
    assert not inst.is_table and inst.is_positive
    ev = check_dana_thm2(inst)
    assert ev.verdict == "refuted" and ev.certified and "for every distribution the data stand for" in ev.reason
    with pytest.raises(InvalidInstance, match="not 1"):  # 1 + 1e-4000 exactly: not a distribution
        load_sequences(_npz(tmp_path, N=2, sequences=np.array([[0, 0]]), conditionals=row), exact_input=True)


@pytest.mark.parametrize("text, needle", [
    ('{"N": 2, "sequences": [[0, 0]], "conditionals": [["0.5", "0.5"]]}', "holds a string"),
    ('{"N": 2, "sequences": [[0, 0]], "targets": [1], "prior": ["2"]}', "holds a string"),
    ('{"N": "2", "sequences": [[0, 0]], "targets": [1]}', "holds a string"),
])
def test_strings_are_bad_input(tmp_path, text, needle):
    with pytest.raises(InvalidInstance, match=needle):
        load_sequences(_json(tmp_path, text))


def test_string_arrays_in_npz_are_bad_input(tmp_path):
    p = _npz(tmp_path, N=np.array(2), sequences=np.array([[0, 0]]), conditionals=np.array([["0.5", "0.5"]]))
    with pytest.raises(InvalidInstance, match="'conditionals' holds strings"):
        load_sequences(p)


def test_json_decimals_beyond_17_digits_are_exact(tmp_path):
    """0.500000000000000001 is not 1/2: through float64 the row was exactly uniform and Thm. 2 VERIFIED;
    exactly it is a non-uniform distribution whose RHS is < 0 (C > 1/2): refuted."""
    text = '{"N": 2, "sequences": [[0, 0]], "conditionals": [[0.500000000000000001, 0.499999999999999999]]}'
    inst = load_sequences(_json(tmp_path, text), d=2, H=1, d_h=1)
    assert not inst.at_precision
    assert inst.cond_numbers.rationals[0, 0] != inst.cond_numbers.rationals[0, 1]
    assert float(0.500000000000000001) == 0.5  # what float64 made of it
    ev = check_dana_thm2(inst)
    assert ev.verdict == "refuted" and ev.certified
    mpmath.mp.dps = 60
    q = mpmath.mpf("0.500000000000000001")
    C = mpmath.sqrt(32 * mpmath.log(3) / 2)
    ent = -(q * mpmath.log(q) + (1 - q) * mpmath.log(1 - q))
    assert (1 - q) * (1 + 2 * C) / (1 - 2 * C) * mpmath.log(1 / mpmath.expm1(ent)) < 0  # tv = 0 for N = 2


def test_a_misspelled_optional_array_is_refused(tmp_path):
    """'priors' instead of 'prior': never a uniform prior assumed in its place."""
    p = _json(tmp_path, json.dumps({"N": 2, "sequences": [[0, 0], [0, 1]], "targets": [0, 1], "priors": [1, 3]}))
    with pytest.raises(InvalidInstance, match=r"array 'priors' is not one this statement reads \(expected: N, "
                                              r"sequences, targets, conditionals, prior\)"):
        load_sequences(p)


def test_float16_rows_at_the_edge_through_the_file(tmp_path):
    """Lower ends summing to exactly 1, every end included: accepted; one ulp further: refused."""
    row = np.array([12528, 11832, 11758, 14656], dtype=np.uint16).view(np.float16)
    assert sum(rounding_set(x)[0] for x in row) == 1
    inst = load_sequences(_npz(tmp_path, N=4, sequences=np.array([[0, 0]]), conditionals=row[None, :]))
    assert inst.at_precision
    out = row.copy()
    out[-1] = np.nextafter(out[-1], np.float16(1))
    with pytest.raises(InvalidInstance, match="no distribution rounds to it in float16"):
        load_sequences(_npz(tmp_path, N=4, sequences=np.array([[0, 0]]), conditionals=out[None, :]))


# ------------------------------------------------------------------ hypotheses on floats: Assumption 1
@pytest.mark.parametrize("dt", FLOATS + (np.longdouble,))
def test_a_float_point_mass_row_is_undecided_at_its_precision(tmp_path, dt):
    """(1, 0, 0) stored in a float dtype stands for (1 - s, s, 0) with s below the zero's half-gap: not a
    point mass.  Every statement that rests on Assumption 1 is inconclusive, naming --exact-input; with it,
    the same file is an exact table.  Thm. 2 (C > 1/2) is not verified: at (1 - s, s, 0) it is refuted."""
    p = _npz(tmp_path, N=3, sequences=np.array([[0, 0], [1, 1]]), conditionals=np.array([[1, 0, 0], [0, 0, 1]],
                                                                                              dtype=dt))
    inst = load_sequences(p, d=2, d_h=1, H=1)
    for check in (check_dana_prop3, check_dana_corollary1, check_dana_contrib1, check_dana_corollary2):
        ev = check(inst)
        assert ev.verdict == "inconclusive" and not ev.certified and ev.exit_code == 3, (check, ev.reason)
        assert "Assumption 1 (point masses) undecided at the data's precision" in ev.reason
        assert "--exact-input" in ev.reason
    thm2 = check_dana_thm2(inst)
    assert thm2.verdict == "inconclusive" and "--exact-input" in thm2.reason
    exact = load_sequences(p, d=2, d_h=1, H=1, exact_input=True)
    assert check_dana_prop3(exact).verdict == "verified" and check_dana_thm2(exact).verdict == "verified"


def test_a_row_far_from_every_point_mass_fails_the_hypothesis():
    inst = from_sequences([[0, 0]], N=2, conditionals=np.array([[0.5, 0.5]], dtype=np.float16), exact=False, d=2)
    ev = check_dana_prop3(inst)
    assert ev.verdict == "hypotheses-unmet" and "Assumption 1 (point masses) refuted" in ev.reason


def _rhs(q, C):
    """Thm. 2's term for one exact distribution q (Fractions): 1 - q_g as the exact sum of the others, the
    mode's q_g log q_g as log1p(-(1 - q_g)) (q_g within 2^-1076 of 1)."""
    N, g = len(q), max(range(len(q)), key=lambda j: q[j])
    mp = [mpmath.mpf(x.numerator) / x.denominator for x in q]
    rest_q = sum((x for j, x in enumerate(q) if j != g), Fraction(0))
    rest = mpmath.mpf(rest_q.numerator) / rest_q.denominator
    ent = -mpmath.fsum(x * mpmath.log(x) for j, x in enumerate(mp) if x > 0 and j != g) - mp[g] * mpmath.log1p(-rest)
    tv = mpmath.fsum(abs(mp[j] / rest - mpmath.mpf(1) / (N - 1)) for j in range(N) if j != g) / 2
    return rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * mpmath.log((N - 1) / mpmath.expm1(ent))


@settings(deadline=None)
@given(st.sampled_from(FLOATS), st.integers(2, 4), st.integers(0, 3), st.integers(1, 3), st.integers(1, 3))
def test_an_adversary_below_the_zeros_half_gap_gets_no_certified_verdict(dt, N, g, k, which):
    """The adversary's real pi_t = (1 - s) e_g + s e_j, s a quarter of the smallest subnormal: it rounds to
    the point mass e_g in every float format, and it is not one.  Nothing that rests on Assumption 1 is
    certified, and Thm. 2, refuted at the adversary's point (mpmath), is never verified."""
    g, j = g % N, (g + which) % N
    if j == g:
        j = (g + 1) % N
    s = exact(np.finfo(dt).smallest_subnormal) / 4
    real = [Fraction(0)] * N
    real[g], real[j] = 1 - s, s
    row = np.array([rounds_to(x, dt) for x in real], dtype=dt)
    assert [exact(x) for x in row] == [int(i == g) for i in range(N)]  # stored: a point mass
    inst = from_sequences([[0, 0]], N=N, conditionals=row[None, :], exact=False, d=2, d_h=1, H=k)
    for check in (check_dana_prop3, check_dana_corollary1, check_dana_corollary2):
        assert check(inst).verdict == "inconclusive"
    mpmath.mp.dps = 80
    C = mpmath.sqrt(32 * mpmath.log(N + 1) / 2)
    assert _rhs(real, C) < 0  # the statement fails there
    assert check_dana_thm2(inst).verdict != "verified"


# ------------------------------------------------------------------ hypotheses on floats: a uniform prior
def test_equal_float_weights_are_undecided_unless_the_conclusion_holds_without_them():
    """Cor. 2's C1 (phi > 1) on equal float16 weights: inconclusive (the refutation rests on a uniform prior
    the weights may not be); with integer weights: refuted.  Where the construction's accuracy leaves room,
    the bound holds for EVERY prior the weights stand for, uniform or not: verified."""
    seqs, targets = np.array([[0, 0], [1, 1], [2, 2]]), np.array([0, 1, 2])
    f16 = np.ones(3, dtype=np.float16)
    c1 = from_sequences(seqs, N=3, targets=targets, prior=f16, d=2, d_h=1, H=2, exact=False)
    ev = check_dana_corollary2(c1)
    assert ev.verdict == "inconclusive" and "(C1)" in ev.reason and "uniform prior undecided" in ev.reason
    assert check_dana_corollary2(c1.replace(weights=np.ones(3))).verdict == "refuted"
    for T0 in (3, 5):  # phi = 1 and 11/15 (H = 1): the construction decides; whatever it reaches, a verdict
        seqs, tg = np.array([[0, 0], [1, 1], [2, 2], [0, 1], [1, 2]])[:T0], np.array([0, 1, 2, 0, 1])[:T0]
        inst = from_sequences(seqs, N=3, targets=tg, prior=np.ones(T0, dtype=np.float16), d=2, d_h=1, H=1,
                              exact=False)
        ev = check_dana_corollary2(inst)
        phi = accuracy_bound(3, T0, 3)
        correct = next(s.data["correct sequences"] for s in ev.trail if "correct sequences" in s.data)
        # the floor over the weights' intervals: correct ones at 1 - 2^-12, the others at 1 + 2^-11
        lo, hi = 1 - Fraction(1, 2**12), 1 + Fraction(1, 2**11)
        floor = len(correct) * lo / (len(correct) * lo + (T0 - len(correct)) * hi)
        assert ev.verdict == ("verified" if floor >= phi else "inconclusive"), (T0, correct, ev.reason)
        if ev.verdict == "verified":
            assert "for EVERY prior the weights stand for" in ev.reason


@settings(deadline=None)
@given(st.sampled_from(FLOATS), st.lists(st.integers(-1, 1), min_size=5, max_size=5), st.integers(0, 2**16))
def test_an_adversary_with_a_non_uniform_prior_inside_the_intervals(dt, signs, seed):
    """The adversary's real weights 1 + delta_t (|delta_t| a quarter of the half-ulp of 1) round to equal
    floats: 'uniform prior' holds for the stored values only.  Cor. 2 is never refuted, and when it is
    verified the bound holds at the adversary's real prior (exact accuracy over the certified-correct set)."""
    half_ulp = exact(np.finfo(dt).eps) / 4  # below 1: the gap toward zero is half of eps
    real = [1 + sgn * half_ulp / 2 for sgn in signs]
    w = np.array([rounds_to(x, dt) for x in real], dtype=dt)
    assert all(exact(x) == 1 for x in w)
    rng = np.random.default_rng(seed)
    seqs = np.array([[a, b] for a in range(3) for b in range(3)])[rng.permutation(9)[:5]]
    targets = rng.integers(0, 3, 5)
    inst = from_sequences(seqs, N=3, targets=targets, prior=w, d=2, d_h=1, H=int(rng.integers(1, 3)), exact=False)
    ev = check_dana_corollary2(inst)
    assert ev.verdict != "refuted"
    if ev.verdict == "verified":
        correct = next(s.data["correct sequences"] for s in ev.trail if "correct sequences" in s.data)
        acc = sum((real[t] for t in correct), Fraction(0)) / sum(real)
        assert acc >= accuracy_bound(3, inst.T0, inst.H * inst.d_h + inst.d)


def test_eps_is_the_exact_decimal_written_and_checked_with_data(tmp_path, capsys):
    """--eps 0.1 is 1/10, not float64(0.1) (slightly above): with weights 10, 8, 1, 1 the two heaviest
    carry exactly 9/10 = 1 - 1/10, not more, so T_eps = 3 > H d_h + d = 2 (found by an adversarial test);
    an eps outside (0, 1) is bad input with a file too; a prior of the wrong shape is refused."""
    import json

    from verifier.cli import main

    path = tmp_path / "f3.json"
    path.write_text(json.dumps({"N": 2, "sequences": [[0, 0], [0, 1], [1, 0], [1, 1]],
                                "conditionals": [[0.5, 0.5], [0.25, 0.75], [0.75, 0.25], [0.125, 0.875]],
                                "prior": [10, 8, 1, 1]}))
    base = ["check", "dana_thm1_eps", "--data", str(path), "--d", "1", "--dh", "1", "--H", "1", "--json"]
    assert main(base + ["--eps", "0.1"]) == 2
    assert json.loads(capsys.readouterr().out)["verdict"] == "hypotheses-unmet"
    for bad in ("5", "1", "-1", "nan", "inf"):
        assert main(base + ["--eps", bad]) == 2
        assert json.loads(capsys.readouterr().out)["verdict"] == "bad-input"
    shaped = tmp_path / "f4.npz"
    np.savez(shaped, N=np.int64(4), sequences=np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
             targets=np.array([1, 2, 3, 0]), prior=np.array([[1, 1], [1, 1]]))
    assert main(["check", "dana_corollary2", "--data", str(shaped), "--d", "2", "--dh", "1", "--H", "1",
                 "--json"]) == 2
    assert "shape" in json.loads(capsys.readouterr().out)["message"]


def test_a_verified_check_on_float_data_never_errors(tmp_path, capsys):
    """The runner's rule for conclusions certified on the stored values reads any paper's instance
    (a float prior once raised AttributeError, exit 4)."""
    import json

    from verifier.cli import main

    path = tmp_path / "f1.npz"
    np.savez(path, N=np.int64(4), sequences=np.array([[0, 1], [1, 2], [2, 3]]), targets=np.array([1, 2, 3]),
             prior=np.array([0.25, 0.25, 0.5]))
    for sid in ("dana_corollary1", "dana_prop1", "dana_lemma2", "dana_thm1_eps0", "dana_contrib1"):
        code = main(["check", sid, "--data", str(path), "--d", "2", "--dh", "1", "--H", "1", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code in (0, 1, 2, 3) and out["verdict"] != "error", (sid, out)
        assert out["verdict"] != "verified" or out.get("certified"), sid
