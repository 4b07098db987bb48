"""ks_contextual_mapping: certified separation on separated data, hypotheses
unmet on non-separated data, exact collisions refuted, the hardmax negative
(Thm. 1) refuted for every weight under both tie rules; every certified
margin re-checked against high-precision mpmath."""
import mpmath
import numpy as np
import pytest

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
