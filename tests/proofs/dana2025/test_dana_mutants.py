"""The deciding lines of Dana et al.'s Thm. 1 (eps = 0) and its route steps,
pinned where a mutant of the decision would pass the other tests (issue 17,
item 2): the head-0 gap at exactly 0 (D5), the value-rank counterexample's
branches (D4), det G at T0 = d + H d_h (D6), the verdict's dependence on the
route's rank AND det G, and what the evidence reports.  Inputs are small
integers and dyadics: every decision is exact.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from proofs.dana2025 import thm1_exact_route as thm1
from proofs.dana2025.exact_route import build_route, draw_route_parameters
from proofs.dana2025.route_steps import head0_limit, singular_G, value_rank_counterexample
from verifier.arith.compare import Decision
from verifier.data.sequences import make_sequence_instance


def test_head0_gap_zero_is_a_failure_and_positive_gaps_hold():
    """g(t) = ||x_S||^2 - max_s x_S^T x_s: g = 0 (a tie) already fails (the
    weight splits, head 0 does not tend to x_S); g > 0 holds; one-token
    sequences have no gap."""
    e = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    pos = np.zeros((2, 2))
    tie = head0_limit(np.array([[0, 0]]), e, pos)  # x_1 = x_S: g = 0
    assert tie["decision"] is Decision.FALSE and tie["smallest gap g (exact)"] == "0"
    bad = head0_limit(np.array([[1, 0], [2, 1]]), e, pos)  # g = 1 - 2 = -1; then x_S=(2,0), x_1=(0,1): g = 4
    assert bad["decision"] is Decision.FALSE
    assert bad["sequences with g(t) <= 0 (head 0 does not tend to x(t,S))"] == 1
    assert bad["first such"] == [[1, 0]] and bad["smallest gap g (exact)"] == "-1"
    good = head0_limit(np.array([[0, 1], [2, 1]]), e, pos)  # x_S=(2,0): gaps 4-2=2, 4-0=4
    assert good["decision"] is Decision.TRUE and good["smallest gap g (exact)"] == "2"
    assert good["first such"] == []
    single = head0_limit(np.array([[1]]), e, np.zeros((1, 2)))
    assert single["decision"] is Decision.TRUE and single["smallest gap g (exact)"] is None


def test_singular_G_decides_only_at_the_square_case_with_rank_deficient_E():
    E_def = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])  # rank 1 < d = 2
    E_full = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    assert singular_G(E_def, d=2, T0=3, rows=3)["decision"] is Decision.FALSE
    assert singular_G(E_def, d=2, T0=3, rows=3)["rank E (exact)"] == 1
    assert singular_G(E_def, d=2, T0=3, rows=4)["decision"] is Decision.TRUE  # free parameters
    assert singular_G(E_full, d=2, T0=3, rows=3)["decision"] is Decision.TRUE  # rank E = d
    assert singular_G(E_def, d=1, T0=3, rows=3)["decision"] is Decision.TRUE  # rank E = 1 = d


def test_value_rank_counterexample_branches():
    inst = make_sequence_instance(N=4, S=2, d=2, d_h=1, H=2, seed=0)
    rp = draw_route_parameters(N=inst.N, S=inst.S, d=inst.d, d_h=inst.d_h, H=inst.H, seed=0)
    res = value_rank_counterexample(inst.sequences, rp, d_h=1, seed=0)
    if inst.T0 > inst.d:
        assert res["decision"] in (Decision.FALSE, Decision.UNDECIDED)
        if res["decision"] is Decision.FALSE:
            assert res["rank A' (certified)"] == inst.T0
            assert all(v == "true" for v in res["W_V^h full rank d_h (certified)"])
    # d_h = d: W_V invertible, no counterexample of this form
    assert value_rank_counterexample(inst.sequences, rp, d_h=inst.d, seed=0)["decision"] is Decision.TRUE
    # T0 <= d: none either
    few = inst.sequences[: inst.d]
    assert value_rank_counterexample(few, rp, d_h=1, seed=0)["decision"] is Decision.TRUE


def test_verdict_needs_rank_and_det_G():
    """TRUE only when the route's rank M = T0 is certified AND det G is
    certainly nonzero: each failing alone gives inconclusive, never verified."""
    inst = make_sequence_instance(N=5, S=2, d=3, H=2, seed=0)
    ev = thm1.check_dana_thm1_eps0(inst)
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["certified rank M"] == inst.T0 and ev.measured["T0"] == inst.T0
    assert ev.measured["max |T - W E| (ball parameters)"] < 1e-6
    assert ev.measured["max |T - W E| (saved float64 weights)"] < 1.0

    real = thm1.build_route

    def no_det(*a, **k):
        r = real(*a, **k)
        return replace(r, det_decision=Decision.UNDECIDED)

    def no_rank(*a, **k):
        r = real(*a, **k)
        return replace(r, rank=replace(r.rank, decision=Decision.UNDECIDED))

    for fake in (no_det, no_rank):
        thm1.build_route = fake
        try:
            ev = thm1.check_dana_thm1_eps0(inst)
        finally:
            thm1.build_route = real
        assert ev.verdict == "inconclusive" and not ev.certified, fake.__name__


@pytest.mark.parametrize("step,expected", [("det_G", "verified"), ("skip_head", None), ("wv_rank", None)])
def test_step_claims_are_decided_by_their_step(step, expected):
    inst = make_sequence_instance(N=5, S=2, d=3, H=2, seed=0)
    ev = thm1.check_dana_thm1_eps0(inst, step=step)
    route = build_route(inst, *thm1.random_targets(inst, 0))
    if step == "det_G":
        want = singular_G(thm1.random_targets(inst, 0)[1], d=inst.d, T0=inst.T0, rows=inst.d + inst.H * inst.d_h)
    elif step == "skip_head":
        want = head0_limit(inst.sequences, route.params.e, route.params.pos)
    else:
        want = value_rank_counterexample(inst.sequences, route.params, d_h=inst.d_h, seed=0)
    verdict = {Decision.TRUE: "verified", Decision.FALSE: "refuted", Decision.UNDECIDED: "inconclusive"}
    assert ev.verdict == verdict[want["decision"]]
    assert ev.certified is (want["decision"] is not Decision.UNDECIDED)
    if expected:
        assert ev.verdict == expected


def test_size_hypotheses_at_the_boundary():
    inst = make_sequence_instance(N=5, S=2, d=3, H=2, seed=0)
    cap = inst.H * inst.d_h + inst.d
    h = thm1.size_hypotheses(inst, T=cap)
    assert [x.status for x in h] == ["certified", "certified"]
    h = thm1.size_hypotheses(inst, T=cap + 1)
    assert h[0].status == "refuted"


def _spied_counterexample(monkeypatch, undecided_first: bool = False, S: int = 2, T0: int | None = None):
    """value_rank_counterexample with certify_rank_lower_bound spied on: the
    matrices it certified (A' first, then R_h P_v per head) and the result."""
    from dataclasses import replace as dc_replace

    from proofs.dana2025 import route_steps

    seen = []
    real = route_steps.certify_rank_lower_bound

    def spy(A, k=None, **kw):
        out = real(A, k, **kw)
        seen.append(A)
        if undecided_first and len(seen) == 1:
            out = dc_replace(out, decision=Decision.UNDECIDED)
        return out

    monkeypatch.setattr(route_steps, "certify_rank_lower_bound", spy)
    inst = make_sequence_instance(N=4, S=S, d=2, d_h=1, H=2, seed=0)
    seqs = inst.sequences[:T0] if T0 else inst.sequences
    rp = draw_route_parameters(N=inst.N, S=inst.S, d=inst.d, d_h=inst.d_h, H=inst.H, seed=0)
    return inst, seqs, rp, value_rank_counterexample(seqs, rp, d_h=1, seed=0), seen


@pytest.mark.parametrize("S,T0", [(2, None), (3, 3)])  # T0 = d + 1: c is the only null direction of X_S
def test_value_rank_counterexample_is_one(monkeypatch, S, T0):
    """A FALSE names a real counterexample: X_S c = 0 exactly for the true
    X_S = [e(s_S) + pos_S] (recomputed here), the skip rows of the certified
    A' are that X_S, and each certified W_V^h = R_h P_v maps v_h = A^h c to 0
    (a ball around 0, up to the balls' widths)."""
    from fractions import Fraction

    from flint import arb_mat, fmpq

    inst, seqs, rp, res, seen = _spied_counterexample(monkeypatch, S=S, T0=T0)
    T = len(seqs)
    assert res["decision"] is Decision.FALSE and T > inst.d
    c = [fmpq(*map(int, x.split("/"))) if "/" in x else fmpq(int(x)) for x in res["c (exact, X_S c = 0)"]]
    assert any(x != 0 for x in c)
    XS = [[Fraction(float(rp.e[s[-1], j])) + Fraction(float(rp.pos[-1, j])) for s in seqs.tolist()]
          for j in range(inst.d)]
    for row in XS:
        assert sum(Fraction(int(a.p), int(a.q)) * x for a, x in zip(c, row)) == 0
    Aprime = seen[0]
    for j in range(inst.d):
        for t in range(T):
            x = XS[j][t]
            assert Aprime[j, t].contains(fmpq(x.numerator, x.denominator)) and Aprime[j, t].rad() == 0
    cb = arb_mat([[x] for x in c])
    for h, WV in enumerate(seen[1:]):
        Ah = arb_mat([[Aprime[inst.d * (h + 1) + j, t] for t in range(T)] for j in range(inst.d)])
        out = WV * (Ah * cb)
        assert all(out[i, 0].contains(0) and abs(out[i, 0].mid()) < 1e-20 for i in range(out.nrows()))


def test_value_rank_counterexample_needs_the_rank_of_A_prime(monkeypatch):
    """Without the certificate rank A' = T0 there is no counterexample: UNDECIDED, never FALSE."""
    res = _spied_counterexample(monkeypatch, undecided_first=True)[3]
    assert res["decision"] is Decision.UNDECIDED


def test_head0_gaps_with_positions_and_three_tokens():
    """S = 3 and nonzero positions: g(t) = ||x_S||^2 - max_{s < S} x_S^T x_s
    with x_s = e[q_s] + pos_s, recomputed here in rationals; a gap of 1/2 (in
    (0, 1]) holds, and only the first three failing sequences are named."""
    from fractions import Fraction

    e = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [2.0, 0.0]])
    pos = np.array([[0.0, 0.25], [0.5, 0.0], [0.25, 0.0]])
    seqs = np.array([[0, 1, 3], [1, 2, 0], [3, 3, 3], [2, 1, 0], [0, 0, 0], [1, 1, 1], [2, 2, 2]])

    def gap(seq):
        X = [[Fraction(e[q, j]) + Fraction(pos[s, j]) for j in range(2)] for s, q in enumerate(seq)]
        dots = [sum(a * b for a, b in zip(X[-1], x)) for x in X]
        return dots[-1] - max(dots[:-1])

    res = head0_limit(seqs, e, pos)
    gaps = [gap(s) for s in seqs.tolist()]
    bad = [s for s, g in zip(seqs.tolist(), gaps) if g <= 0]
    assert res["sequences with g(t) <= 0 (head 0 does not tend to x(t,S))"] == len(bad) >= 4
    assert res["first such"] == bad[:3] and res["smallest gap g (exact)"] == str(min(gaps))
    assert res["decision"] is Decision.FALSE
    half = head0_limit(np.array([[1, 0]]), np.array([[1.0, 0.0], [0.5, 0.5]]), np.zeros((2, 2)))  # g = 1/2
    assert half["decision"] is Decision.TRUE and half["smallest gap g (exact)"] == "1/2"


def test_value_rank_counterexample_needs_rank_T0_not_any_rank():
    """A repeated sequence makes rank A' < T0: no counterexample (UNDECIDED),
    even though A' has a certifiable rank below T0."""
    inst = make_sequence_instance(N=4, S=2, d=2, d_h=1, H=2, seed=0)
    rp = draw_route_parameters(N=inst.N, S=inst.S, d=inst.d, d_h=inst.d_h, H=inst.H, seed=0)
    seqs = np.concatenate([inst.sequences, inst.sequences[:1]])
    res = value_rank_counterexample(seqs, rp, d_h=1, seed=0)
    assert res["decision"] is Decision.UNDECIDED and res["T0"] == len(seqs)


def test_value_rank_counterexample_needs_full_rank_W_V(monkeypatch):
    """R_h = 0 (a degenerate draw) makes W_V^h = R_h P_v rank 0 < d_h: no
    counterexample of this form (UNDECIDED), not a certified lower rank."""
    from proofs.dana2025 import route_steps

    class Zeros:
        def integers(self, low, high, size):
            return np.zeros(size, dtype=int)

    monkeypatch.setattr(route_steps, "rng_for", lambda *a: Zeros())
    inst = make_sequence_instance(N=4, S=2, d=2, d_h=1, H=2, seed=0)
    rp = draw_route_parameters(N=inst.N, S=inst.S, d=inst.d, d_h=inst.d_h, H=inst.H, seed=0)
    res = value_rank_counterexample(inst.sequences, rp, d_h=1, seed=0)
    assert res["decision"] is Decision.UNDECIDED
