"""Lemma 3: W' = v w^T kills J's queries exactly (20) and separates the
entries off J (21) with an exact positive gap; broken W' and repeated tokens rejected."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma3_rank_one_saturation import (
    build_exact_saturation_vectors,
    build_saturation_vectors,
    check_lemma3,
    control_lemma3_repeated_token,
    control_lemma3_w_not_orthogonal,
    exact_entries,
    min_gap,
)
from verifier.data.strategies import attention_instances


@given(attention_instances(H=1, n=st.integers(2, 4), context=st.sampled_from(["random", "uniform", "pe", "shared"]),
                           T=st.integers(2, 7)), st.integers(0, 2**16), st.data())
def test_lemma3_holds_exactly_for_any_admissible_J(inst, seed, data):
    k = data.draw(st.integers(0, min(inst.T - 1, inst.d - 1, inst.n)), label="|J|")
    ev = check_lemma3(inst, seed=seed, J_size=k)
    assert ev.verdict == "verified" and ev.certified, ev.reason
    assert ev.measured["(20) exact"] and ev.measured["(21) exact"]
    eq20 = ev.certificates[0]
    assert eq20["w^T e^(j) for j in J"] == ["0"] * k
    if inst.T > k:
        assert ev.measured["min gap (exact, as float)"] > 0


@given(attention_instances(H=1, n=st.integers(2, 4), context="random", T=st.integers(3, 6)), st.integers(0, 2**16))
def test_exact_w_is_the_float_w_up_to_scale(inst, seed):
    J = list(range(inst.T - 1))[: inst.d - 1]
    v, w = build_exact_saturation_vectors(inst.queries, J, np.random.default_rng(seed))
    vf, wf = build_saturation_vectors(inst.queries, J, np.random.default_rng(seed))
    wq = np.array([float(x) for x in w])
    assert np.array_equal(v, vf)
    assert np.allclose(wq / np.linalg.norm(wq), wf, atol=1e-9)


def test_min_gap_finds_the_tied_pair():
    from flint import fmpq
    gap, pair = min_gap([fmpq(3), fmpq(1), fmpq(3, 1), fmpq(7)])
    assert gap == 0 and sorted(pair) == [0, 2]


def test_negative_control_w_not_orthogonal_refutes_eq20():
    ev = control_lemma3_w_not_orthogonal()
    assert ev.verdict == "refuted"
    assert ev.measured["(20) exact"] is False and "(20)" in ev.reason
    assert all(x != "0" for x in ev.certificates[0]["w^T e^(j) for j in J"])


def test_negative_control_repeated_token_gap_is_exactly_zero():
    ev = control_lemma3_repeated_token()
    assert ev.verdict == "hypotheses-unmet"
    assert [h.status for h in ev.hypotheses if "Assumption 2" in h.name] == ["refuted"]
    assert ev.measured["(21) exact"] is False
    assert ev.certificates[1]["min gap"] == "0" and sorted(ev.certificates[1]["tokens"]) == [0, 1]


def test_entries_are_exact_products():
    E = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    from flint import fmpq
    assert exact_entries(E, np.array([0.5, 0.0, 0.0]), np.array([1.0, 1.0, 0.0]), [fmpq(2), fmpq(0), fmpq(0)]) \
        == [fmpq(1), fmpq(2)]


# -- a failed draw is not a counterexample (issue 32) --------------------------------------------------

def first_draw_tie(seed: int, base_seed: int = 0, t: int = -1):
    """The default instance with example ``t``'s first two tokens differing by u = (v_1, -v_0, 0, ...),
    v the checker's FIRST draw: u . v = v_1 v_0 - v_0 v_1 = 0 exactly, so that draw's entries tie (21).
    The tokens are x and x + u with x supported on coordinates 2.. (no rounding in x + u)."""
    from verifier.data.instances import from_arrays, make_instance, rng_for

    base = make_instance(H=1, n=3, d=6, T=6, seed=base_seed)
    d = base.d
    rng = rng_for(seed, "lemma3")
    rng.standard_normal(d)  # g
    v = rng.standard_normal(d)
    E, e = np.array(base.contexts), np.array(base.queries)
    x = np.zeros(d)
    x[2:] = E[t, 0, 2:]
    u = np.zeros(d)
    u[0], u[1] = v[1], -v[0]
    E[t, 0], E[t, 1] = x, x + u
    return from_arrays(E, e, base.labels, H=1, seed=base_seed), v


def test_issue_case_first_draw_ties_is_redrawn_and_verified():
    """Issue 32: the first (g, v) of seed 0 ties two entries of the last example: that used to print
    REFUTED (certified); some W' works (another draw), so the verdict is verified, exactly."""
    from fractions import Fraction

    inst, v = first_draw_tie(0)
    E = np.asarray(inst.contexts)
    diff = [Fraction(a) - Fraction(b) for a, b in zip(E[-1, 0], E[-1, 1])]
    assert sum(di * Fraction(vi) for di, vi in zip(diff, v)) == 0  # the first draw ties, exactly
    ev = check_lemma3(inst, seed=0)
    assert ev.verdict == "verified" and ev.certified, ev.reason
    assert ev.measured["draws"] >= 2
    draws = ev.certificates[2]["draws"]
    assert draws[0]["(21) exact"] is False and draws[0]["min gap"] == "0" and draws[-1]["(21) exact"] is True


def test_every_draw_failing_is_inconclusive_never_refuted():
    inst, _ = first_draw_tie(0)
    ev = check_lemma3(inst, seed=0, draws=1)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.reason.startswith("a failed construction is not a counterexample")
    assert ev.refutation.kind == "failed-construction"


@given(st.integers(0, 2**16), st.integers(0, 2**10), st.integers(1, 3))
def test_first_draw_failing_never_gives_a_certified_refutation(seed, base_seed, t):
    """Property (issue 32): on instances where the checker's own first draw fails Eq. (21), the verdict is
    never 'refuted' (a redraw verifies, or it is inconclusive)."""
    inst, _ = first_draw_tie(seed, base_seed, t=-t)
    ev = check_lemma3(inst, seed=seed)
    assert ev.verdict != "refuted"
    assert ev.verdict in ("verified", "inconclusive", "hypotheses-unmet")
    if ev.verdict == "verified":
        assert ev.measured["draws"] >= 2


def test_no_w_prime_works_is_the_only_certified_refutation():
    """e^(t) in span{e^(j): j in J} exactly: w^T e^(t) = 0 for every admissible w, every entry 0: no W'
    works -- certified (no-choice-works), and here the Kruskal hypothesis fails, so hypotheses-unmet."""
    from verifier.data.instances import from_arrays, make_instance

    base = make_instance(H=1, n=3, d=6, T=6, seed=0)
    e = np.round(np.array(base.queries) * 8) / 8
    e[-1] = e[0] + 2 * e[1]  # exact in float64 on the 1/8 grid
    inst = from_arrays(base.contexts, e, base.labels, H=1)
    ev = check_lemma3(inst, seed=0)
    assert ev.refutation is not None and ev.refutation.kind == "no-choice-works"
    assert ev.verdict == "hypotheses-unmet"
    assert "span" in ev.reason
