"""Instances: every context kind and degenerate kind has the right shapes and
the property it promises; bad arrays are rejected with one clear line;
``.npz`` files round-trip."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.exact import exact_rank
from verifier.data.given import OVERFLOW_LIMIT, validate_arrays
from verifier.data.instances import (
    CONTEXT_KINDS,
    DEGENERATE_KINDS,
    from_arrays,
    load_data,
    make_instance,
    sinusoidal_encoding,
)
from verifier.data.strategies import attention_instances, seeds
from verifier.errors import InvalidInstance

EPS = np.finfo(float).eps


def _shapes_ok(inst):
    T, n, d = inst.T, inst.n, inst.d
    assert inst.contexts.shape == (T, n, d)
    assert inst.queries.shape == (T, d)
    assert inst.labels.shape == (T, inst.d_out)
    assert n < d
    assert inst.r == min(n, inst.d_h) and inst.capacity == inst.H * (inst.r - 1) + 1
    for a in (inst.contexts, inst.queries, inst.labels):
        assert a.dtype == np.float64 and not a.flags.writeable and np.all(np.isfinite(a))


@given(attention_instances(context=st.sampled_from(CONTEXT_KINDS),
                           degenerate=st.none() | st.sampled_from(DEGENERATE_KINDS)))
def test_every_kind_has_the_right_shapes(inst):
    _shapes_ok(inst)
    assert inst.T == inst.capacity  # T defaults to H(r-1)+1


@given(attention_instances(T=st.integers(1, 9)))
def test_T_is_respected(inst):
    _shapes_ok(inst)


@given(attention_instances(context="shared", T=st.integers(2, 6)))
def test_shared_contexts_are_really_shared(inst):
    assert np.array_equal(inst.contexts, np.broadcast_to(inst.contexts[0], inst.contexts.shape))
    assert inst.shared_context
    assert exact_rank(inst.contexts[0]) == inst.n


@given(attention_instances(context="random", T=st.integers(2, 6)))
def test_random_contexts_are_not_shared_and_have_rank_n(inst):
    assert not inst.shared_context
    assert all(exact_rank(E) == inst.n for E in inst.contexts)


@given(attention_instances(context="sumconst"))
def test_sumconst_tokens_sum_to_one(inst):
    """1_d^T x = 1 for every context token and every query, up to the
    rounding of the centring (a few ulps of the largest entry per term)."""
    for X in (inst.contexts.reshape(-1, inst.d), inst.queries):
        tol = 4 * inst.d * EPS * max(1.0, float(np.abs(X).max()))
        assert np.all(np.abs(X.sum(axis=1) - 1.0) <= tol)


@given(attention_instances(context="pe"), )
def test_pe_adds_the_positional_encoding(inst):
    """Tokens = U[0,1] + PE(position), positions 1..n for the context and 0
    for the query; the same seed with context="uniform" gives the U[0,1] part."""
    pe = sinusoidal_encoding(inst.n + 1, inst.d)
    base = make_instance(H=inst.H, n=inst.n, d=inst.d, d_h=inst.d_h, d_v=inst.d_v,
                         d_out=inst.d_out, context="uniform", seed=inst.seed)
    assert np.array_equal(inst.contexts, base.contexts + pe[1:][None])
    assert np.array_equal(inst.queries, base.queries + pe[0][None])
    slack = 4 * EPS
    assert np.all(inst.contexts - pe[1:] >= -slack) and np.all(inst.contexts - pe[1:] <= 1 + slack)


def test_sinusoidal_encoding_values():
    pe = sinusoidal_encoding(3, 4)
    assert pe.shape == (3, 4)
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1])
    np.testing.assert_allclose(pe[2], [np.sin(2), np.cos(2), np.sin(2 / 100), np.cos(2 / 100)], rtol=1e-15)


@given(attention_instances(context="uniform"))
def test_uniform_tokens_are_in_the_unit_cube(inst):
    for X in (inst.contexts, inst.queries):
        assert np.all(X >= 0) and np.all(X < 1)


@given(attention_instances(degenerate="repeated-queries", T=st.integers(2, 6)))
def test_repeated_queries_repeat(inst):
    assert np.all(inst.queries == inst.queries[0])


@given(attention_instances(degenerate="cls-queries", T=st.integers(2, 6)))
def test_cls_queries_are_one_vector(inst):
    assert np.all(inst.queries == inst.queries[0])


@given(attention_instances(degenerate="low-kruskal-queries", T=st.integers(3, 6), n=st.integers(3, 4)))
def test_low_kruskal_queries_span_two_dimensions_numerically(inst):
    sv = np.linalg.svd(inst.queries, compute_uv=False)
    assert sv[2] <= 1e-12 * sv[0]


@given(attention_instances(degenerate="low-kruskal-queries", T=st.integers(3, 6), n=st.integers(3, 4)))
def test_low_kruskal_queries_span_two_dimensions_exactly(inst):
    """Exactly, over Q: a float product of Gaussian factors would be full rank."""
    assert exact_rank(inst.queries) <= 2 < inst.n


@given(attention_instances(degenerate="rank-deficient-context", T=st.integers(1, 5)))
def test_rank_deficient_context_repeats_token_one(inst):
    assert np.array_equal(inst.contexts[:, 1, :], inst.contexts[:, 0, :])
    assert all(exact_rank(E) < inst.n for E in inst.contexts)


@given(seeds)
def test_same_seed_same_instance(seed):
    a = make_instance(H=2, n=3, d=5, seed=seed)
    b = make_instance(H=2, n=3, d=5, seed=seed)
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != make_instance(H=2, n=3, d=5, seed=seed + 1).fingerprint()


# ----------------------------------------------------------------- validation

GOOD_E = np.random.default_rng(0).standard_normal((4, 2, 5))
GOOD_e = np.random.default_rng(1).standard_normal((4, 5))


def _with(a, idx, value):
    a = a.copy()
    a[idx] = value
    return a


@pytest.mark.parametrize("E, e, y, message", [
    (_with(GOOD_E, (0, 0, 0), np.nan), GOOD_e, None, "'contexts' has 1 NaN or infinite"),
    (GOOD_E, _with(GOOD_e, (1, 2), np.inf), None, "'queries' has 1 NaN or infinite"),
    (GOOD_E, GOOD_e, np.array([[np.nan]] * 4), "'labels' has 4 NaN or infinite"),
    (GOOD_E[0], GOOD_e, None, "'contexts' has shape (2, 5); expected (T, n, d)"),
    (GOOD_E, GOOD_e[0], None, "'queries' has shape (5,); expected (T, d)"),
    (GOOD_E, GOOD_e[:, :4], None, "queries have shape (4, 4); expected (T, d) = (4, 5)"),
    (GOOD_E, GOOD_e, np.zeros((3, 1)), "labels have 3 rows; expected T = 4"),
    (GOOD_E, GOOD_e, np.zeros(4), "'labels' has shape (4,)"),
    (None, GOOD_e, None, "missing array 'contexts'"),
    (GOOD_E, None, None, "missing array 'queries'"),
    (np.zeros((4, 2, 5)) + 1j, GOOD_e, None, "complex"),
    (np.array([[[None]]], dtype=object), GOOD_e, None, "object array"),
    ([[[1.0, 2.0], [3.0]]], GOOD_e, None, "not a rectangular numeric array"),
    (_with(GOOD_E, (0, 0, 0), 10 * OVERFLOW_LIMIT), GOOD_e, None, "overflow"),
    (np.zeros((0, 2, 5)), np.zeros((0, 5)), None, "is empty"),
    (np.array([[["a"]]]), GOOD_e, None, "holds strings"),
])
def test_validation_messages(E, e, y, message):
    with pytest.raises(InvalidInstance) as info:
        validate_arrays(E, e, y)
    text = str(info.value)
    assert message in text, text
    assert "\n" not in text


@pytest.mark.parametrize("kw, message", [
    (dict(seed=-1), "seed = -1 must be a non-negative integer"),
    (dict(H=0), "H = 0 must be a positive integer"),
    (dict(d_h=0), "d_h = 0"),
    (dict(T=0), "T = 0"),
    (dict(context="bogus"), "unknown context kind 'bogus'"),
    (dict(degenerate="bogus"), "unknown degenerate kind 'bogus'"),
])
def test_make_instance_rejects_bad_options(kw, message):
    with pytest.raises(InvalidInstance, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_instance(**kw)


def test_from_arrays_draws_missing_labels_deterministically():
    a = from_arrays(GOOD_E, GOOD_e, seed=3)
    b = from_arrays(GOOD_E, GOOD_e, seed=3)
    assert a.labels.shape == (4, 1) and np.array_equal(a.labels, b.labels)
    assert a.d_h == a.n and a.d_v == a.d_out


# ------------------------------------------------------------------ .npz files

@given(attention_instances(T=st.integers(1, 5)))
def test_load_data_round_trip(tmp_path_factory, inst):
    path = tmp_path_factory.mktemp("npz") / "data.npz"
    np.savez(path, contexts=inst.contexts, queries=inst.queries, labels=inst.labels)
    back = load_data(path, H=inst.H, d_h=inst.d_h, d_v=inst.d_v)
    assert back.fingerprint() == inst.fingerprint()
    for name in ("contexts", "queries", "labels"):
        assert np.array_equal(getattr(back, name), getattr(inst, name))
    assert (back.H, back.d_h, back.d_v, back.d_out) == (inst.H, inst.d_h, inst.d_v, inst.d_out)
    assert back.source == "file:data.npz"


def test_n_ge_d_is_not_bad_input():
    """n >= d is a hypothesis of some statements, checked by them."""
    E, e, _ = validate_arrays(np.ones((4, 6, 5)), GOOD_e)
    assert E.shape == (4, 6, 5)
    assert make_instance(n=4, d=4).n == 4


def test_load_data_errors(tmp_path):
    with pytest.raises(InvalidInstance, match="no such file"):
        load_data(tmp_path / "absent.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(InvalidInstance, match="not an .npz archive"):
        load_data(junk)
    only_q = tmp_path / "only_q.npz"
    np.savez(only_q, queries=GOOD_e)
    with pytest.raises(InvalidInstance, match=r"missing array 'contexts' \(has: queries; expected: contexts, queries, labels\)"):
        load_data(only_q)
    nan = tmp_path / "nan.npz"
    np.savez(nan, contexts=_with(GOOD_E, (1, 1, 1), np.nan), queries=GOOD_e)
    with pytest.raises(InvalidInstance, match="NaN"):
        load_data(nan)


def test_shared_context_instance_holds_one_context():
    inst = make_instance(H=12, n=197, d=768, d_h=197, context="shared", seed=0)  # T = 2353
    assert inst.T == 2353 and inst.contexts.strides[0] == 0 and inst.contexts.base is not None
    assert inst.contexts[0].nbytes == 197 * 768 * 8  # the one context; the rest is a stride-0 view
    sub = inst.subset([0, 5, 7])
    assert sub.contexts.strides[0] == 0 and sub.shared_context
