"""ks_contextual_mapping: certified separation on separated data, hypotheses
unmet on non-separated data, exact collisions refuted, the hardmax negative
(Thm. 1) refuted for every weight under both tie rules; every certified
margin re-checked against high-precision mpmath."""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from proofs.kajitsuka2025.contextual_mapping import HARDMAX_DATA, check_ks_contextual_mapping, hardmax_collisions
from verifier.data.token_sequences import from_arrays, make_token_instance
from verifier.statements import registry
from verifier.statements.runner import run_control


@pytest.mark.parametrize("kw", [dict(N=8, S=3, V=5, d=2, seed=0), dict(N=40, S=4, V=3, d=1, seed=2),
                                dict(N=60, S=5, V=7, d=3, seed=4)])
def test_separated_data_verified_and_margin_true(kw):
    inst = make_token_instance(**kw)
    ev = check_ks_contextual_mapping(inst)
    assert ev.verdict == "verified" and ev.certified and ev.margin > 0
    # the certified delta is a lower bound of the true min distance over required pairs (mpmath, 60 digits)
    m = ev.measured
    w, lam, kappa = m["w"], mpmath.mpf(eval(m["lambda"])), mpmath.mpf(eval(m["kappa"]))
    mpmath.mp.dps = 60
    E = inst.embeddings
    outs = []
    for row in inst.sequences.tolist():
        p = [int(np.dot(E[t], w)) for t in row]
        for t in set(row):
            pt = int(np.dot(E[t], w))
            a = [mpmath.exp(lam * pt * q) for q in p]
            g = sum(q * x for q, x in zip(p, a)) / sum(a)
            outs.append((t, frozenset(row), [mpmath.mpf(int(v)) for v in E[t]], g))
    def dist2(a, b):  # ||x_a - x_b + kappa (g_a - g_b) e_1||^2
        (_, _, xa, ga), (_, _, xb, gb) = a, b
        return sum((u - v) ** 2 for u, v in zip(xa, xb)) + 2 * kappa * (ga - gb) * (xa[0] - xb[0]) \
            + kappa ** 2 * (ga - gb) ** 2

    best = mpmath.sqrt(min(dist2(a, b) for i, a in enumerate(outs) for b in outs[:i]
                           if a[0] != b[0] or a[1] != b[1]))
    assert best >= mpmath.mpf(ev.margin) * (1 - mpmath.mpf(10) ** -12)


def test_not_separated_is_hypotheses_unmet():
    dup = from_arrays(np.array([[0, 1], [1, 2]]), np.zeros(2, dtype=int), embeddings=np.array([[1, 2], [1, 2], [3, 1]]))
    assert check_ks_contextual_mapping(dup).verdict == "hypotheses-unmet"
    zero = from_arrays(np.array([[0, 1]]), np.zeros(1, dtype=int), embeddings=np.array([[0, 0], [3, 1]]))
    assert check_ks_contextual_mapping(zero).verdict == "hypotheses-unmet"


@pytest.mark.parametrize("tie", ["average", "first"])
def test_hardmax_every_sign_collides(tie):
    inst = from_arrays(np.array(HARDMAX_DATA[0]), np.zeros(4, dtype=int), embeddings=np.array(HARDMAX_DATA[1]))
    cases = hardmax_collisions(inst, tie)
    assert [c["sign(c)"] for c in cases] == [-1, 0, 1] and all("query token" in c for c in cases)
    ev = check_ks_contextual_mapping(inst, attention="hardmax", tie=tie)
    assert ev.verdict == "refuted" and ev.certified


def test_hardmax_without_a_counterexample_is_not_refuted():
    # distinct singletons (1), (2): nothing to collide, so no certificate against hardmax
    inst = from_arrays(np.array([[0], [1]]), np.zeros(2, dtype=int), embeddings=np.array([[1], [2]]))
    assert check_ks_contextual_mapping(inst, attention="hardmax").verdict != "refuted"


def test_controls_refuted():
    reg = registry.load_all()
    controls = reg["ks_contextual_mapping"].controls
    assert len(controls) >= 3
    for c in controls:
        ev, ok = run_control("ks_contextual_mapping", c)
        assert ok and ev.certified, (c.description, ev.verdict, ev.reason)


# -- issue 32: bounds rounded outward, the claim says what the predicate checks -------------------------

def _outputs_mp(inst, ev, dps=60):
    """Every output y = x_t + kappa g e_1 (mpmath at ``dps`` digits): (token, token set, sequence, y)."""
    mpmath.mp.dps = dps
    m = ev.measured
    w = m["w"]
    lam, kappa = (mpmath.mpf(q.numerator) / q.denominator for q in (Fraction(m["lambda"]), Fraction(m["kappa"])))
    E = inst.embeddings
    out = []
    for i, row in enumerate(inst.sequences.tolist()):
        p = [int(np.dot(E[t], w)) for t in row]
        for t in row:
            pt = int(np.dot(E[t], w))
            a = [mpmath.exp(lam * pt * q) for q in p]
            g = sum(q * x for q, x in zip(p, a)) / sum(a)
            y = [mpmath.mpf(int(v)) for v in E[t]]
            y[0] += kappa * g
            out.append((t, frozenset(row), i, y))
    return out


@given(st.integers(0, 10**6), st.integers(2, 5), st.integers(1, 2), st.integers(2, 3))
def test_printed_norm_bound_is_above_every_output(seed, V, d, S):
    """r is rounded UP from its ball: never below the largest output norm (mpmath, 60 digits)."""
    inst = make_token_instance(N=min(6, V ** S), S=S, V=V, d=d, seed=seed)
    ev = check_ks_contextual_mapping(inst)
    assume(ev.verdict == "verified")
    r = ev.measured["r (output norm bound, rounded up)"]
    top = max(mpmath.sqrt(sum(v * v for v in y)) for *_, y in _outputs_mp(inst, ev))
    assert mpmath.mpf(r) >= top


def test_norm_bound_attained_exactly_is_still_a_bound():
    """d = 1, the constant sequence of the largest token: g = p_t exactly, so the largest output norm
    equals sqrt(r_max^2) + kappa max|p| exactly; to nearest the float can fall below it, rounded up it
    cannot (exact rationals)."""
    inst = from_arrays(np.array([[2, 2, 2], [0, 1, 2], [1, 0, 0]]), np.zeros(3, dtype=int),
                       embeddings=np.array([[3], [7], [11]]), kind="control")
    ev = check_ks_contextual_mapping(inst)
    m = ev.measured
    assert ev.verdict == "verified"
    w = m["w"][0]
    p = [3 * w, 7 * w, 11 * w]
    kappa = Fraction(m["kappa"])
    exact = 11 + kappa * max(abs(x) for x in p)  # = ||y|| for the constant sequence (2, 2, 2) when w > 0
    if w > 0:
        assert 11 + kappa * p[2] == exact
    assert Fraction(m["r (output norm bound, rounded up)"]) >= exact
    assert Fraction(m["delta (certified lower bound)"]) <= Fraction(ev.margin)


def test_claim_is_the_predicate_same_token_set_not_required():
    """Two contexts with the same token SET (a permutation) give identical outputs (permutation
    equivariance, exact in mpmath); the claim says token sets differ, so that is no violation, and the
    verdict is verified -- with the text saying exactly that."""
    inst = from_arrays(np.array([[0, 1, 2], [2, 1, 0], [0, 1, 1]]), np.zeros(3, dtype=int),
                       embeddings=np.array([[1, 0], [0, 2], [3, 1]]), kind="control")
    ev = check_ks_contextual_mapping(inst)
    assert ev.verdict == "verified"
    assert "token SETS" in ev.claimed and "same token set need not be separated" in ev.claimed
    outs = _outputs_mp(inst, ev)
    y0 = [y for t, _, i, y in outs if i == 0 and t == 1][0]
    y1 = [y for t, _, i, y in outs if i == 1 and t == 1][0]
    assert all(a == b for a, b in zip(y0, y1))  # identical outputs for token 1 in the two permutations
    reg = registry.load_all()
    assert "token sets" in reg["ks_contextual_mapping"].summary and "(context, token) pairs" not in \
        reg["ks_contextual_mapping"].summary
