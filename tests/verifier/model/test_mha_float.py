"""Rigorous float balls of the layer (verifier/model/mha_float.py) against Arb:
the float ball must contain the exact value (Arb's, at 200 bits, whose own
radius is negligible), on random weights and on Prop. 1's saturated ones."""
import numpy as np
import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from verifier.arith.backend import get_backend
from verifier.arith.compare import workprec
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances
from verifier.model.mha_balls import feature_matrix_ball, scores_ball
from verifier.model.mha_float import feature_columns_float_ball, logits_float_ball, softmax_float_ball


def _contains(mid, rad, ball) -> bool:
    """True when the float ball holds the exact value: Arb's ball, far
    narrower, must lie inside [mid - rad, mid + rad]."""
    lo, hi = arb(float(mid)) - arb(float(rad)), arb(float(mid)) + arb(float(rad))
    return bool(lo <= ball.lower() and ball.upper() <= hi)


def _check_features(inst, W_K, W_Q, backend, rows=None, cols=None, accurate=True):
    b = get_backend(backend)
    fb = feature_columns_float_ball(inst.contexts, inst.queries, W_K, W_Q, rows=rows, cols=cols, backend=backend,
                                    accurate=accurate)
    mid, rad = b.to_numpy(fb.mid), b.to_numpy(fb.rad)
    with workprec(200):
        Zb = feature_matrix_ball(inst.contexts, inst.queries, W_K, W_Q, rows=rows, cols=cols)
        for i in range(Zb.nrows()):
            for j in range(Zb.ncols()):
                assert _contains(mid[i, j], rad[i, j], Zb[i, j]), (i, j)
    return rad


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 4)), st.sampled_from([0.1, 3.0, 40.0]),
       st.booleans())
def test_float_feature_ball_contains_exact_features(inst, scale, accurate):
    """Both enclosures of the logits' products: accurate, and plain (the
    certificate's cheaper first try, proposition1_rank_induction)."""
    rng = np.random.default_rng(inst.seed)
    W_K = scale * rng.standard_normal((inst.H, inst.d, inst.d_h))
    W_Q = scale * rng.standard_normal((inst.H, inst.d, inst.d_h))
    rad = _check_features(inst, W_K, W_Q, "numpy", accurate=accurate)
    assert rad.max() < 1e-6 * max(1.0, scale**2 * 1e3)


@pytest.mark.parametrize("accurate", [True, False])
@pytest.mark.parametrize("context", ["shared", "random"])
@pytest.mark.parametrize("backend", ["numpy", "torch-cpu"])
def test_float_feature_ball_on_saturated_construction(context, backend, accurate):
    """Prop. 1's weights: logits up to ~1e4 with cancellation on the fitted
    rows.  Both enclosures hold; the accurate products' stays tight there."""
    inst = make_instance(H=3, n=3, d=5, context=context, seed=1)
    con = build_key_query_weights(inst, seed=0)
    rad = _check_features(inst, con.W_K, con.W_Q, backend, rows=list(con.basis), cols=None, accurate=accurate)
    assert rad.max() < (1e-9 if accurate else 1.0)


@pytest.mark.parametrize("context", ["shared", "random"])
@pytest.mark.parametrize("group_bytes", [1, 2**28])
def test_float_feature_ball_heads_one_at_a_time_or_together(group_bytes, context, monkeypatch):
    """Heads evaluated in groups of one or all together (mha_float.HEAD_GROUP_BYTES)
    both enclose the exact features, rows asked in any order, on Prop. 1's
    saturated weights."""
    import verifier.model.mha_float as mf

    monkeypatch.setattr(mf, "HEAD_GROUP_BYTES", group_bytes)
    inst = make_instance(H=3, n=3, d=5, context=context, seed=4)
    con = build_key_query_weights(inst, seed=0)
    rows = list(con.basis)[::-1]
    cols = [0, 6, 7, 11, 14, 2]
    rad = _check_features(inst, con.W_K, con.W_Q, "numpy", rows=rows, cols=cols)
    assert rad.max() < 1e-9


@pytest.mark.parametrize("backend", ["numpy", "torch-cpu"])
@pytest.mark.parametrize("per_chunk", [1, 2, 10**6])
def test_float_feature_ball_with_abs_formed_in_chunks(per_chunk, backend, monkeypatch):
    """|E| of per-example contexts formed 1, 2 or all examples at a time (mha_float.ABS_CHUNK;
    the last chunk shorter): the ball encloses the exact features, and an entry beyond the
    range check's 2^400 in the last example is refused in whichever chunk it falls."""
    import verifier.model.mha_float as mf

    inst = make_instance(H=3, n=3, d=5, context="random", seed=4)
    monkeypatch.setattr(mf, "ABS_CHUNK", per_chunk * inst.n * inst.d)
    con = build_key_query_weights(inst, seed=0)
    rad = _check_features(inst, con.W_K, con.W_Q, backend, rows=list(con.basis)[::-1], cols=[0, 6, 7, 11, 14])
    assert rad.max() < 1e-9
    from verifier.data.instances import from_arrays

    E, e = np.array(inst.contexts), np.array(inst.queries)
    e[0] *= 2.0**-40  # each chunk's own query scale: another example's bound would be 2^40 too small
    tiny_first = from_arrays(E, e, H=inst.H, d_h=inst.d_h)
    rng = np.random.default_rng(0)
    W_K, W_Q = (3.0 * rng.standard_normal((inst.H, inst.d, inst.d_h)) for _ in range(2))
    _check_features(tiny_first, W_K, W_Q, backend)
    E[-1, 0, 0] = 1e300  # > 2^400 (mha_float's MAG)
    with pytest.raises(Exception, match="exceeds 2\\^400"):
        feature_columns_float_ball(E, inst.queries, con.W_K, con.W_Q, backend=backend)


def test_float_softmax_contains_arb_softmax_and_stays_tight_when_saturated():
    b = get_backend("numpy")
    a = np.array([[1e7, 1e7 - 30.0, -1e7, 0.0], [0.5, 0.25, -1.0, 2.0]])
    rad = np.array([[1e-5, 1e-5, 1e-5, 1e-5], [1e-13, 0.0, 0.0, 1e-13]])
    mid, srad = softmax_float_ball(b, a, rad)
    with workprec(200):
        for t in range(2):
            for sign in (-1.0, 1.0):  # exact softmax at two corners of the logit ball
                logits = [arb(float(a[t, i])) + sign * (-1) ** i * arb(float(rad[t, i])) for i in range(4)]
                m = max(logits, key=lambda x: float(x.mid()))
                ex = [(x - m).exp() for x in logits]
                tot = sum(ex[1:], ex[0])
                for i in range(4):
                    assert _contains(mid[t, i], srad[t, i], ex[i] / tot)
    assert srad[0, 0] < 1e-12  # saturated: the top probability is tight though the logits carry +/- 1e-5


def test_float_logits_match_arb_logits():
    inst = make_instance(H=2, n=3, d=6, context="random", seed=2)
    con = build_key_query_weights(inst, seed=0)
    b = get_backend("numpy")
    with workprec(200):
        S = scores_ball(inst.contexts, inst.queries, con.W_K, con.W_Q)
        for h in range(2):
            am, ar = logits_float_ball(b, inst.contexts, inst.queries, con.W_K, con.W_Q, h)
            sm, sr = softmax_float_ball(b, am, ar)
            for t in range(inst.T):
                for i in range(inst.n):
                    assert _contains(sm[t, i], sr[t, i], S[t][h][i])


@pytest.mark.parametrize("per_chunk", [1, 2, 10**6])
def test_per_example_radius_covers_each_examples_own_input_ball(per_chunk, monkeypatch):
    """The radius of E^(t) u^(t) must cover |E^(t)| u_rad^(t) for EVERY example (exact
    rationals), whichever chunk |E| of that example was formed in: examples whose u-balls
    differ by 2^60 in width, so a chunk paired with another chunk's u would fall short."""
    from fractions import Fraction

    import verifier.model.mha_float as mf

    rng = np.random.default_rng(7)
    T, n, d = 5, 3, 4
    monkeypatch.setattr(mf, "ABS_CHUNK", per_chunk * n * d)
    E = rng.standard_normal((T, n, d))
    u_mid = rng.standard_normal((T, d))
    u_rad = np.abs(rng.standard_normal((T, d))) * (2.0 ** -60 * (np.arange(T) % 2 == 0) + (np.arange(T) % 2))[:, None]
    b = get_backend("numpy")
    for E_abs in (None, np.abs(E)):
        mid, rad = mf._per_example_products(b, E, E_abs, u_mid, u_rad)
        for t in range(T):
            for i in range(n):
                need = sum(abs(Fraction(E[t, i, c])) * Fraction(u_rad[t, c]) for c in range(d))
                assert Fraction(rad[t, i]) >= need, (t, i)


@pytest.mark.parametrize("backend", ["numpy", "torch-cpu"])
@pytest.mark.parametrize("per_chunk", [1, 2, 3, 10**6])
def test_max_over_tokens_in_chunks_is_exact(per_chunk, backend, monkeypatch):
    """max_i |E_ic| per example is exact (no rounding in abs or max), chunked or not;
    an empty batch gives an empty (0, d) result."""
    import verifier.model.mha_float as mf

    monkeypatch.setattr(mf, "ABS_CHUNK", per_chunk * 3 * 4)
    E = np.random.default_rng(8).standard_normal((7, 3, 4)) * 2.0 ** np.arange(-3, 4)[:, None, None]
    b = get_backend(backend)
    got = b.to_numpy(mf._max_abs_over_tokens(b, b.asarray(E)))
    assert np.array_equal(got, np.max(np.abs(E), axis=1))
    assert b.to_numpy(mf._max_abs_over_tokens(b, b.asarray(E[:0]))).shape == (0, 4)
