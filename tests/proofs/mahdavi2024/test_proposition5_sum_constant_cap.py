"""Proposition 5: tokens summing to c cap rank(Z) at H(d-1)+1 (H(d-1) when
c = 0) for any weights; without the hypothesis the cap is exceeded."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition5_sum_constant_cap import (
    build_sum_constant_contexts,
    check_proposition5,
    control_proposition5_cap_minus_one,
    control_proposition5_random_contexts,
    control_proposition5_zero_sum_minus_one,
    sum_constant_bound,
    token_sums,
    zero_sum_instance,
)
from verifier.arith.structure import block_sum_null_vectors, null_vectors_independent, prove_block_sums_constant
from verifier.data.instances import from_arrays, make_instance
from verifier.data.strategies import attention_instances


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 3), context="sumconst", T=st.integers(2, 10)),
       st.integers(0, 2**16))
def test_sum_constant_tokens_never_exceed_the_cap(inst, seed):
    ev = check_proposition5(inst, seed=seed)
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["best certified rank"] <= sum_constant_bound(inst.H, inst.d)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 5))
def test_block_sums_are_c_symbolically(H, n, d):
    assert prove_block_sums_constant(H, n, d).holds
    for zero in (False, True):
        V = block_sum_null_vectors(H, d, zero_sum=zero)
        assert len(V) == H - 1 + zero and null_vectors_independent(V)


def test_zero_sum_tokens_have_the_sharper_cap():
    ev = check_proposition5(zero_sum_instance(seed=5), seed=5)
    assert ev.verdict == "verified"
    assert ev.measured["c"] == "0" and ev.measured["proved rank(Z) <="] == sum_constant_bound(2, 4, zero_sum=True)


def test_one_token_off_by_one_ulp_refutes_the_hypothesis():
    E = build_sum_constant_contexts(6, 2, 3, seed=1)
    E[3, 1, 0] = np.nextafter(E[3, 1, 0], 10.0)
    inst = from_arrays(E, np.ones((6, 3)), H=2, d_h=2)
    assert len(set(token_sums(inst.contexts))) == 2
    ev = check_proposition5(inst)
    assert ev.hypotheses[0].status == "refuted" and ev.verdict == "hypotheses-unmet"


def test_single_head_cap_is_vacuous_and_says_so():
    ev = check_proposition5(make_instance(H=1, n=2, d=3, T=6, context="random"))
    # rank(Z) <= d = H(d-1)+1 holds for any data, but the tokens do not sum to one constant: the statement
    # does not apply (its vacuous conclusion is said in the reason, not counted)
    assert ev.verdict == "hypotheses-unmet" and "H = 1" in ev.reason
    assert "H = 1" in ev.measured["vacuous at these sizes"]


def test_negative_control_random_contexts_exceed_the_cap():
    ev = control_proposition5_random_contexts()
    assert ev.verdict == "hypotheses-unmet"
    assert ev.measured["best certified rank"] == 6 > sum_constant_bound(2, 3)


def test_negative_control_cap_minus_one_is_refuted():
    assert control_proposition5_cap_minus_one().verdict == "refuted"


def test_negative_control_zero_sum_cap_minus_one_is_refuted():
    assert control_proposition5_zero_sum_minus_one().verdict == "refuted"


def test_symbolic_proofs_cover_every_size_and_the_exact_caps():
    from proofs.mahdavi2024.proposition5_sum_constant_cap import build_sum_constant_contexts, symbolic_proofs
    for zero_sum, cap in ((False, 2 * (3 - 1) + 1), (True, 2 * (3 - 1))):
        size_free, expanded, tiny = symbolic_proofs(5, 9, 11, zero_sum=zero_sum)
        assert size_free.holds and size_free.sizes == {"n": "any"}
        assert expanded.holds and expanded.sizes == {"H": 4, "n": 8, "d": 8}
        assert tiny.holds and tiny.sizes["k"] == cap + 1  # every (cap+1)-minor vanishes: rank <= cap
        assert tiny.sizes["rows"] == (5 if zero_sum else 6)
    E = build_sum_constant_contexts(4, 3, 5, c=1, seed=0)
    assert np.all(E.sum(axis=-1) == 1.0) and np.all(np.abs(E[..., :-1]) <= 2.0)
    assert np.all(E[..., :-1] * 256 == np.round(E[..., :-1] * 256))
    assert np.all(build_sum_constant_contexts(2, 2, 3, c=0).sum(axis=-1) == 0.0)


def test_token_sums_are_exact_on_the_rationals_given():
    """An object array of exact rationals (Instance.exact_array) is summed as given, never
    through float64: 1/3 + 1/3 + 1/3 = 1 exactly."""
    from flint import fmpq

    E = np.empty((1, 2, 3), dtype=object)
    E[0, 0, :] = [fmpq(1, 3)] * 3
    E[0, 1, :] = [fmpq(1, 10), fmpq(2, 10), fmpq(7, 10)]
    assert token_sums(E) == [fmpq(1), fmpq(1)]
    assert token_sums(np.array([[[0.5, 0.25, 0.25]]])) == [fmpq(1)]


def test_sums_constant_as_stored_only_are_a_verdict_on_the_stored_tokens():
    """Tokens (a, -a, 1) sum to 1 exactly as stored.  Read exactly, the hypothesis is
    certified; read at the dtype's precision (a is not a short dyadic) it holds for the
    stored values only: evidence, and the reason says the verdict is on the stored tokens."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 2))
    E = np.stack([a, -a, np.ones((6, 2))], axis=-1)
    q = rng.standard_normal((6, 3))
    exact = check_proposition5(from_arrays(E, q, H=2, d_h=2))
    assert exact.hypotheses[0].status == "certified" and "stored tokens" not in (exact.reason or "")
    ev = check_proposition5(from_arrays(E, q, H=2, d_h=2, reading="dtype"))
    assert ev.hypotheses[0].status == "evidence" and ev.verdict != "refuted"
    assert "a verdict on the stored tokens" in ev.reason and "as stored only" in ev.reason
    assert ev.hypotheses[0].detail.startswith("undecided at the data's precision") and "--exact-input" in \
        ev.hypotheses[0].detail
    assert ev.reason.startswith("a verdict on the stored tokens")  # no earlier reason: nothing before it
