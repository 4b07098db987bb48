"""The values the user gave are what is certified (issue 24): int64 / uint64
beyond 2^53 and long doubles are read exactly (or at long double's own
precision), never through a float64 rounding that changes the truth.

Each file of the issue is built, checked through the command line, and every
verdict is compared with the truth computed here independently: exact
rationals (Fraction from the given integers / long doubles, python-flint
``fmpq_mat`` rank) and brute force over subsets."""
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from verifier.cli import main
from verifier.data.instances import from_arrays, load_data
from verifier.errors import InvalidInstance

B = 2**53
L = np.longdouble
LONG = np.finfo(np.longdouble).nmant + 1 > 53  # x86-64: 64-bit significand (not on every platform)
needs_long = pytest.mark.skipif(not LONG, reason="long double is float64 on this platform")
TINY = L(2) ** -60 if LONG else None


def exact(x) -> Fraction:
    """The rational a given int / long double encodes (no float64 on the way)."""
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    return Fraction(*x.as_integer_ratio())


def rank(rows) -> int:
    rows = [[exact(x) for x in r] for r in rows]
    if not rows:
        return 0
    M = fmpq_mat(len(rows), len(rows[0]), [fmpq(v.numerator, v.denominator) for r in rows for v in r])
    return M.rank()


def kruskal(V) -> int:
    """Brute force: the largest k with every k-subset independent."""
    V = list(np.asarray(V))
    k = 0
    for size in range(1, min(len(V), len(V[0])) + 1):
        if all(rank([V[i] for i in s]) == size for s in itertools.combinations(range(len(V)), size)):
            k = size
        else:
            break
    return k


def contexts_for(T: int, d: int, dtype) -> np.ndarray:
    E = np.zeros((T, 2, d), dtype=dtype)
    E[:, 0, 0], E[:, 1, 1] = 1, 1
    return E


def check(tmp_path, sid, contexts, queries, *flags):
    path = tmp_path / "data.npz"
    np.savez(path, contexts=contexts, queries=queries)
    code = main(["check", sid, "--data", str(path), "--json", *flags])
    return code


def run_json(capsys, tmp_path, sid, contexts, queries, *flags):
    code = check(tmp_path, sid, contexts, queries, *flags)
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == code
    return out


READINGS = ([], ["--exact-input"])

INT64_INDEPENDENT = np.array([[B, 1, 0], [B + 1, 1, 0], [0, 0, 1]], dtype=np.int64)  # det of rows 0, 1: -1
INT64_DEPENDENT = np.array([[B + 1, 1, 0], [3 * (B + 1), 3, 0], [0, 0, 1]], dtype=np.int64)  # q1 = 3 q0
UINT64 = np.array([[2**63 + 1, 1, 0, 0], [2**63, 1, 0, 0]], dtype=np.uint64)


def _long_files():
    if not LONG:
        return []
    a = L(1) + L(2) ** -53 - TINY  # rounds to 1; 3a rounds to 3 + 2^-51
    independent = np.array([[L(1) + TINY, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=np.longdouble)
    dependent = np.array([[a, 1, 0], [3 * a, 3, 0], [0, 0, 1]], dtype=np.longdouble)
    return [independent, dependent]


@pytest.mark.parametrize("flags", READINGS)
@pytest.mark.parametrize("queries", [INT64_INDEPENDENT, INT64_DEPENDENT, UINT64] + _long_files(),
                         ids=["int64-independent", "int64-dependent", "uint64"] + ["long-independent",
                                                                                   "long-dependent"][:len(_long_files())])
def test_issue_files_get_the_true_kruskal_rank(capsys, tmp_path, queries, flags):
    truth = kruskal(queries)
    rounded = kruskal(queries.astype(np.float64))
    assert truth != rounded or queries.dtype == np.uint64  # the files are the ones where float64 lies
    T, d = queries.shape
    out = run_json(capsys, tmp_path, "definition1", contexts_for(T, d, queries.dtype), queries, *flags)
    assert out["measured"]["kruskal_lower"] == out["measured"]["kruskal_upper"] == truth  # the values given
    if queries.dtype != np.longdouble or flags:  # integers, and --exact-input: the values given decide
        assert out["verdict"] == "verified" and out["certified"]
    else:  # each long double stands for an interval: never a certificate the intervals do not support
        assert out["verdict"] in ("inconclusive", "verified", "refuted")
    out = run_json(capsys, tmp_path, "assumption1", contexts_for(T, d, queries.dtype), queries, *flags)
    if out["verdict"] == "verified":
        assert truth >= 2
    elif out["verdict"] == "refuted" and "exact null combination" in out["reason"]:
        assert truth < 2
    else:  # at long double's precision a near-dependence may be undecided: never a wrong certificate
        assert queries.dtype == np.longdouble and not flags and out["verdict"] in ("inconclusive", "refuted")
    if queries.dtype != np.longdouble or flags:  # integers, and --exact-input: the exact verdict
        assert out["verdict"] == ("verified" if truth >= 2 else "refuted")


def test_uint64_independent_pair_is_not_refuted(capsys, tmp_path):
    """The issue's uint64 file: independent (det = 1), float64 makes them parallel."""
    assert rank(UINT64) == 2 and np.linalg.matrix_rank(UINT64.astype(np.float64)) == 1
    for flags in READINGS:
        out = run_json(capsys, tmp_path, "assumption1", contexts_for(2, 4, np.uint64), UINT64, *flags)
        assert out["verdict"] == "verified", out["reason"]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64] + ([np.longdouble] if LONG else []))
def test_the_reading_is_labelled_from_the_given_values(tmp_path, dtype):
    big = np.array([[B + 1, 1, 0], [1, 2, 0], [0, 0, 1]], dtype=dtype) if dtype != np.longdouble else \
        np.array([[L(1) + TINY, 1, 0], [1, 2, 0], [0, 0, 1]], dtype=dtype)
    np.savez(tmp_path / "f.npz", contexts=contexts_for(3, 3, dtype), queries=big)
    inst = load_data(tmp_path / "f.npz")
    arr = inst.precision.arrays["queries"]
    if dtype == np.longdouble:
        assert arr.unit_roundoff == 2.0 ** -(np.finfo(np.longdouble).nmant + 1) == 2.0**-64
    else:
        assert arr.exact and "queries" in inst.rounded
    got = inst.exact_array("queries")[0, 0]
    assert Fraction(int(got.p), int(got.q)) == exact(big[0, 0])  # the value given, not its rounding
    assert float(inst.queries[0, 0]) != exact(big[0, 0])  # the float64 working copy does round it
    assert "float64 copy rounds" in inst.summary()


def test_int64_contexts_that_float64_merges_are_not_shared(capsys, tmp_path):
    """Prop. 2 with contexts differing by +1 at 2^53: not shared, and the cap
    H(n-1)+1 = 2 fails for them (W = 0: z_t is the mean token, exact rank 3)."""
    tokens = [[(B, B, 1), (0, 0, 1)], [(B + 1, B, 1), (0, 0, 1)], [(B, B + 1, 1), (0, 0, 1)]]
    E = np.array(tokens, dtype=np.int64)
    assert np.array_equal(E.astype(np.float64), np.broadcast_to(E[:1].astype(np.float64), E.shape))
    means = [[exact(E[t, 0, j]) + exact(E[t, 1, j]) for j in range(3)] for t in range(3)]  # 2 x mean token
    assert rank([[Fraction(x) for x in r] for r in means]) == 3 > 2  # truth: rank(Z) = 3 > the cap
    queries = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.int64)
    for flags in READINGS:
        out = run_json(capsys, tmp_path, "proposition2", E, queries, "--H", "1", *flags)
        assert out["verdict"] == "hypotheses-unmet", out["reason"]
        assert out["hypotheses"][0]["status"] == "refuted"


def test_int64_contexts_equal_beyond_2_53_are_shared(capsys, tmp_path):
    E = np.broadcast_to(np.array([[B + 1, 0, 1], [0, B + 3, 1]], dtype=np.int64), (3, 2, 3)).copy()
    queries = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.int64)
    out = run_json(capsys, tmp_path, "proposition2", E, queries, "--H", "1")
    assert out["hypotheses"][0]["status"] == "certified"
    assert out["verdict"] == "verified"


@needs_long
def test_long_double_token_sums_that_float64_equalises(capsys, tmp_path):
    """Prop. 5: sums 2 + {0, 2^-60, 2^-59}, all 2 after float64 rounding."""
    rng = np.random.default_rng(0)
    T, n, d = 6, 2, 3
    E = np.zeros((T, n, d), dtype=np.longdouble)
    for t in range(T):
        for i in range(n):
            a, b = (int(x) for x in rng.integers(-2, 3, 2))
            b -= 1 if a + b == 2 else 0  # the last coordinate 2 - a - b + s stays away from 0: float64 drops s
            E[t, i] = [a, b, L(2 - a - b) + [L(0), TINY, 2 * TINY][(t + i) % 3]]
    sums = [sum(exact(x) for x in E[t, i]) for t in range(T) for i in range(n)]
    float_sums = {float(sum(Fraction(float(x)) for x in E[t, i])) for t in range(T) for i in range(n)}
    assert len(set(sums)) == 3 and float_sums == {2.0}  # differ exactly, equal as float64
    queries = rng.integers(-3, 4, (T, d)).astype(np.longdouble)
    for flags in READINGS:
        out = run_json(capsys, tmp_path, "proposition5", E, queries, "--H", "2", *flags)
        assert out["verdict"] == "hypotheses-unmet", out["reason"]
        assert out["hypotheses"][0]["status"] == "refuted" and "exact sums differ" in out["hypotheses"][0]["detail"]


def test_float32_shared_context_holds_at_the_data_precision_only(capsys, tmp_path):
    """Equal stored floats read at their precision stand for intervals that
    also hold unequal contexts: the equality is undecided at the data's
    precision, and the cap proved for the stored values is not a verdict on
    every value they stand for (inconclusive, naming --exact-input)."""
    rng = np.random.default_rng(1)
    E = np.broadcast_to(rng.standard_normal((1, 2, 4)).astype(np.float32), (4, 2, 4)).copy()
    q = rng.standard_normal((4, 4)).astype(np.float32)
    out = run_json(capsys, tmp_path, "proposition2", E, q, "--H", "1")
    h = out["hypotheses"][0]
    assert h["status"] == "evidence" and h["detail"].startswith("undecided at the data's precision")
    assert out["verdict"] == "inconclusive" and "stored" in out["reason"] and "--exact-input" in out["reason"]
    out = run_json(capsys, tmp_path, "proposition2", E, q, "--H", "1", "--exact-input")
    assert out["hypotheses"][0]["status"] == "certified"


def test_a_construction_on_a_rounded_copy_says_so(capsys, tmp_path):
    """A checker whose certificates read the float64 copy decided on the rounded data, not on the values
    given: its verdict is inconclusive and named one on the rounding (Lemma 5).  Theorem 1 encloses Z
    with the values given exactly (their balls), so a verdict of it stands (here its float construction
    does not get through 2^53 + 1 beside 1: inconclusive, never a refutation)."""
    q = np.array([[B + 1, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]], dtype=np.int64)
    E = np.zeros((3, 2, 5), dtype=np.int64)
    E[:, 0, 3], E[:, 1, 4] = 1, 1
    E[:, 0, 0] = [1, 2, 3]
    out = run_json(capsys, tmp_path, "lemma5", E, q, "--H", "2")
    assert out["verdict"] == "inconclusive"
    assert out["reason"].startswith("verified on the float64 rounding of the data (queries: int64")
    assert out["instance"]["float64 copy rounds"] == {"queries": "int64 entries beyond 2^53 that float64 rounds"}
    out = run_json(capsys, tmp_path, "theorem1", E, q, "--H", "2")  # the float construction may not get through
    assert out["verdict"] in ("verified", "inconclusive") and "float64 rounding" not in out["reason"]
    out = run_json(capsys, tmp_path, "assumption2", E, q)  # certifies on the values given: no such label
    assert out["verdict"] == "verified" and "float64 rounding" not in out["reason"]


@pytest.mark.parametrize("bad, why", [
    (np.array([[L(10) ** 200, 1, 0]] * 3, dtype=np.longdouble), r"above 1e\+100"),
    (np.array([[np.nan, 1, 0]] * 3, dtype=np.longdouble), "NaN or infinite"),
])
def test_long_doubles_float64_cannot_hold_are_refused_in_one_line(bad, why):
    with pytest.raises(InvalidInstance, match=why):
        from_arrays(contexts_for(3, 3, np.longdouble), bad, reading="dtype")


@needs_long
def test_long_doubles_below_float64s_range_are_intervals_around_them_not_zeros():
    """A long double 1e-400 stands for the reals that round to it in its own
    format: never 0 (float64's copy) and never an exact value."""
    tiny = L(10) ** -400
    inst = from_arrays(contexts_for(3, 3, np.longdouble), np.array([[tiny, 1, 0], [0, 1, 0], [0, 0, 1]],
                                                                     dtype=np.longdouble), reading="dtype")
    mid, rad = inst.ball("queries", 0)
    assert mid[0] == 0.0 and rad[0] >= float(tiny) * 0.99 and rad[0] > 0  # the ball holds 1e-400's interval
    assert exact(tiny) == Fraction(int(inst.given["queries"][0, 0].p), int(inst.given["queries"][0, 0].q))


# --- property: whatever float64 does to the data, the verdicts are the truth --------------------------

@st.composite
def rounded_sets(draw):
    """m rows x = s * c_i w + v_i (s = 2^53 integers, or 1 with v scaled by
    2^-60 long doubles): float64 keeps s c_i w and drops v where w != 0, so
    the rows it stores are (nearly) parallel while the given ones need not be."""
    kind = draw(st.sampled_from(["int64", "longdouble"] if LONG else ["int64"]))
    m, d = draw(st.integers(2, 4)), draw(st.integers(2, 4))
    w = draw(st.lists(st.integers(-1, 1), min_size=d, max_size=d))
    c = draw(st.lists(st.integers(1, 3), min_size=m, max_size=m))
    v = draw(st.lists(st.lists(st.integers(-1, 1), min_size=d, max_size=d), min_size=m, max_size=m))
    if kind == "int64":
        V = np.array([[B * ci * wj + vij for wj, vij in zip(w, vi)] for ci, vi in zip(c, v)], dtype=np.int64)
    else:
        V = np.array([[L(ci * wj) + L(vij) * TINY * (1 if wj else 2**60) for wj, vij in zip(w, vi)]
                      for ci, vi in zip(c, v)], dtype=np.longdouble)
    return V


@settings(max_examples=max(30, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                  HealthCheck.too_slow])
@given(V=rounded_sets(), exact_input=st.booleans())
def test_verdicts_are_the_truth_of_the_values_given(V, exact_input):
    from proofs.mahdavi2024.assumption1_query_kruskal_rank import check_assumption1
    from proofs.mahdavi2024.assumption2_context_rank import check_assumption2
    from proofs.mahdavi2024.definition1_kruskal_rank import check_definition1

    truth = kruskal(V)
    assume(truth != kruskal(V.astype(np.float64)))  # float64 rounding changes the truth
    m, d = V.shape
    inst = from_arrays(contexts_for(m, d, V.dtype), V, H=1, reading="exact" if exact_input else "dtype",
                       precision_source="--exact-input" if exact_input else "file")
    ev = check_definition1(inst)
    assert ev.measured["kruskal_lower"] == ev.measured["kruskal_upper"] == truth  # on the values given
    if exact_input or V.dtype == np.int64:
        assert ev.verdict == "verified"
    ev = check_assumption1(inst)
    if ev.verdict == "verified":
        assert truth >= 2
    if ev.verdict == "refuted" and "exact null combination" in ev.reason:
        assert truth < 2
    if exact_input or V.dtype == np.int64:
        assert ev.verdict == ("verified" if truth >= 2 else "refuted")
    # the same rows as ONE context (n = m tokens): Assumption 2 is "rank = m", Lemma 2 its shift by c = 1
    one = from_arrays(V[None], V[:1], H=1, reading="exact" if exact_input else "dtype",
                      precision_source="--exact-input" if exact_input else "file")
    full = rank(V) == m
    ev = check_assumption2(one)
    assert ev.verdict != "verified" or full
    assert ev.verdict != "refuted" or not full or ev.measured["at the data's precision"] == "fails"
    if exact_input or V.dtype == np.int64:
        assert ev.verdict == ("verified" if full else "refuted")


@needs_long
@pytest.mark.parametrize("gap", [-58, -60, -62])
def test_a_pair_whose_float64_copies_coincide_is_certified_on_its_long_doubles(capsys, tmp_path, gap):
    """Queries 2 and 3 differ by 2^gap in one entry: their float64 copies are equal (a float64 screen
    sees a dependent pair), their long doubles are not, and no point of their intervals (half-gaps of
    2^-64 and 2^-65 at 1) makes them parallel when 2^gap exceeds the four half-gaps together (< 2^-61):
    the pair never "fails at the data's precision" there (at 2^-62 a parallel point may exist: then
    only an exact witness may say so)."""
    q = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [1, L(1) + L(2) ** gap, 1]], dtype=np.longdouble)
    out = run_json(capsys, tmp_path, "assumption1", contexts_for(4, 3, np.longdouble), q)
    if 2.0 ** gap > 4 * 2.0**-64:  # the parallel point is out of reach
        assert out["measured"].get("at the data's precision") != "fails"
        assert out["verdict"] != "refuted"
    assert out["verdict"] != "verified" or out["measured"]["at the data's precision"] == "holds"


@needs_long
def test_well_conditioned_long_doubles_hold_at_their_precision(capsys, tmp_path):
    q = np.array([[L(1) + TINY, 0, 1], [0, L(1) + TINY, 1], [1, 1, 0]], dtype=np.longdouble)
    out = run_json(capsys, tmp_path, "assumption1", contexts_for(3, 3, np.longdouble), q)
    assert out["verdict"] == "verified" and out["measured"]["at the data's precision"] == "holds"
    assert "2^-64 relative" in out["measured"]["reading"]


def test_a_structural_cap_from_stored_equalities_is_named_a_verdict_on_the_stored_data():
    """Prop. 1 refuted by Prop. 2's cap: from the shared context's exact
    equality, which for floats read at their precision holds only as stored."""
    from proofs.mahdavi2024.proposition1_rank_induction import check_proposition1

    rng = np.random.default_rng(0)
    E = np.broadcast_to(rng.standard_normal((1, 3, 5)), (11, 3, 5)).copy()
    q = rng.standard_normal((11, 5))
    at_precision = check_proposition1(from_arrays(E, q, H=3, reading="dtype", precision_source="file"),
                                      claimed_rank=9)
    assert at_precision.verdict == "refuted" and "counterexample at the stored values" in at_precision.reason
    exact_input = check_proposition1(from_arrays(E, q, H=3, reading="exact"), claimed_rank=9)
    assert exact_input.verdict == "refuted" and "stored" not in exact_input.reason
