"""Enclosures with weights known to a precision, against mpmath at 600 bits on
points of the balls (corners and random points, exact rationals): Z (Eq. 7,
mha_float with radii on W_K, W_Q), yhat (Eqs. 4-6, with and without the skip
connection) and the argmax margins.  Each radius is also shown to matter: a
point at the edge of a weight's ball leaves the enclosure computed without
that radius."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from verifier.arith.balls import BallArray
from verifier.arith.float_certificates import FloatBall
from verifier.model.mha_float import feature_columns_float_ball
from verifier.model.readout_balls import margins_float_ball, output_float_ball

PREC = 600


def point(mid, rad, t):
    """mid + t rad, exactly, as an object array of Fractions (t in [-1, 1])."""
    mid = np.asarray(mid, dtype=np.float64)
    if rad is None:
        rad = np.zeros_like(mid)
    out = np.empty(mid.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (m, r, s) in enumerate(zip(mid.reshape(-1), np.asarray(rad).reshape(-1), np.asarray(t).reshape(-1))):
        flat[i] = Fraction(float(m)) + Fraction(s) * Fraction(float(r))
    return out


def mpf(q: Fraction):
    return mp.mpf(q.numerator) / q.denominator


def Z_exact(E, e, WK, WQ):
    """Eq. 7 in mpmath: E (T,n,d), e (T,d'), WK (H,d,dh), WQ (H,d',dh) of Fractions."""
    T, n, d = E.shape
    H = WK.shape[0]
    out = []
    for t in range(T):
        row = []
        for h in range(H):
            p = [sum((mpf(e[t, i]) * mpf(WQ[h, i, c]) for i in range(e.shape[1])), mp.mpf(0))
                 for c in range(WK.shape[2])]
            u = [sum((mpf(WK[h, i, c]) * p[c] for c in range(WK.shape[2])), mp.mpf(0)) for i in range(d)]
            a = [sum((mpf(E[t, r, i]) * u[i] for i in range(d)), mp.mpf(0)) for r in range(n)]
            m = max(a)
            ex = [mp.exp(x - m) for x in a]
            s = sum(ex)
            row += [sum((ex[r] / s * mpf(E[t, r, i]) for r in range(n)), mp.mpf(0)) for i in range(d)]
        out.append(row)
    return out


def inside(values, mid, rad) -> bool:
    mid, rad = np.asarray(mid), np.asarray(rad)
    for v, m, r in zip(np.asarray(values, dtype=object).reshape(-1), mid.reshape(-1), rad.reshape(-1)):
        if abs(v - mp.mpf(float(m))) > mp.mpf(float(r)) + abs(v) * mp.mpf(2) ** -550:
            return False
    return True


def _instance(seed, scale_exp=0, shared=False):
    rng = np.random.default_rng(seed)
    T, n, d, H, dh = 3, 3, 4, 2, 2
    E = rng.standard_normal((1 if shared else T, n, d))
    E = np.broadcast_to(E, (T, n, d)) if shared else E
    e = rng.standard_normal((T, d))
    s = 2.0 ** scale_exp
    WK, WQ = rng.standard_normal((H, d, dh)) * s, rng.standard_normal((H, d, dh)) / s
    rad = lambda a, k: np.abs(a) * 2.0 ** -k  # noqa: E731 - a short local
    return E, e, WK, WQ, rad


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), scale_exp=st.integers(-60, 60), shared=st.booleans(), k=st.integers(14, 40))
def test_Z_enclosure_holds_for_every_weight_and_token_in_the_balls(seed, scale_exp, shared, k):
    mp.prec = PREC
    E, e, WK, WQ, rad = _instance(seed, scale_exp, shared)
    Er = None if shared else rad(E, k + 3)
    balls = (BallArray(E, Er), BallArray(e, rad(e, k)), BallArray(WK, rad(WK, k)), BallArray(WQ, rad(WQ, k)))
    Zb = feature_columns_float_ball(*balls)
    rng = np.random.default_rng(seed + 1)
    for draw in range(3):
        ts = [rng.choice([-1.0, 1.0], a.shape) if draw < 2 else rng.uniform(-1, 1, a.shape) for a in (E, e, WK, WQ)]
        pts = [point(b.mid, b.rad, t) for b, t in zip(balls, ts)]
        assert inside(Z_exact(*pts), Zb.mid, Zb.rad)


def test_the_weights_radius_is_propagated():
    """Z at W_Q moved to its ball's edge lies outside the enclosure computed as if W_Q were exact."""
    mp.prec = PREC
    E, e, WK, WQ, rad = _instance(3)
    rQ = rad(WQ, 10)
    exact_W = feature_columns_float_ball(E, e, WK, WQ)
    ball_W = feature_columns_float_ball(E, e, WK, BallArray(WQ, rQ))
    moved = Z_exact(point(E, None, 0 * E), point(e, None, 0 * e), point(WK, None, 0 * WK),
                    point(WQ, rQ, np.ones(WQ.shape)))
    assert inside(moved, ball_W.mid, ball_W.rad)
    assert not inside(moved, exact_W.mid, exact_W.rad)


def _readout(seed, d_out=3, scale_exp=0):
    rng = np.random.default_rng(seed)
    T, H, d, d_v = 4, 2, 3, 2
    s = 2.0 ** scale_exp
    Z = rng.standard_normal((T, H * d)) * s
    W = {"W_V": rng.standard_normal((H, d, d_v)) / s, "W_O": rng.standard_normal((H * d_v, d)),
         "W_D": rng.standard_normal((d, d_out))}
    e = rng.standard_normal((T, d))
    return Z, W, e


def y_exact(Z, W, e=None):
    H, d, d_v = W["W_V"].shape
    T = Z.shape[0]
    o = [[sum((mpf(Z[t, h * d + i]) * mpf(W["W_V"][h, i, v]) for i in range(d)), mp.mpf(0))
          for h in range(H) for v in range(d_v)] for t in range(T)]
    tok = [[sum((o[t][j] * mpf(W["W_O"][j, c]) for j in range(H * d_v)), mp.mpf(0)) + (0 if e is None else mpf(e[t, c]))
            for c in range(d)] for t in range(T)]
    return [[sum((tok[t][c] * mpf(W["W_D"][c, k]) for c in range(d)), mp.mpf(0)) for k in range(W["W_D"].shape[1])]
            for t in range(T)]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), skip=st.booleans(), k=st.integers(6, 50), scale_exp=st.integers(-100, 100))
def test_output_and_margins_hold_for_every_point_of_the_balls(seed, skip, k, scale_exp):
    mp.prec = PREC
    Z, W, e = _readout(seed, scale_exp=scale_exp)
    Zr = np.abs(Z) * 2.0 ** -k
    Wb = {n: BallArray(a, np.abs(a) * 2.0 ** -k) for n, a in W.items()}
    er = np.abs(e) * 2.0 ** -k
    q = BallArray(e, er) if skip else None
    Ym, Yr = output_float_ball(FloatBall(Z, Zr), Wb, q)
    classes = np.arange(Z.shape[0]) % 3
    Mm, Mr = margins_float_ball(FloatBall(Z, Zr), Wb, classes, q)
    rng = np.random.default_rng(seed)
    for draw in range(3):
        t = (lambda a: rng.choice([-1.0, 1.0], a.shape)) if draw < 2 else (lambda a: rng.uniform(-1, 1, a.shape))
        Zp = point(Z, Zr, t(Z))
        Wp = {n: point(a, np.abs(a) * 2.0 ** -k, t(a)) for n, a in W.items()}
        ep = point(e, er, t(e)) if skip else None
        Y = y_exact(Zp, Wp, ep)
        assert inside(Y, Ym, Yr)
        margins = [[Y[i][j] - Y[i][int(classes[i])] for j in range(3)] for i in range(len(Y))]
        assert inside(margins, Mm, Mr)


def test_margin_column_of_the_class_is_exactly_zero():
    Z, W, _ = _readout(0)
    Mm, Mr = margins_float_ball(FloatBall(Z, None), {n: BallArray(a) for n, a in W.items()}, np.array([0, 1, 2, 0]))
    assert [Mm[i, c] for i, c in enumerate([0, 1, 2, 0])] == [0.0] * 4
    assert [Mr[i, c] for i, c in enumerate([0, 1, 2, 0])] == [0.0] * 4
