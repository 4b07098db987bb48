"""Thm. 2's deciding lines against an independent mpmath computation (issue 17, item 2).

The construction path (``construction_dkl``: no known d_KL(pi, L) bound applies, C < 1/2) is reached by an
instance that is neither positive nor a table: rows with zeros beside positive rows, a point mass and an
exactly uniform row, a non-uniform prior.  With orthonormal rows (d >= N) lambda(t) has the closed form
b(H) = log((N-1)/(e^H - 1)), and the construction's KL is (1 - pi_g) lambda exactly: everything is compared
with mpmath at 50 digits (values, never a float of the checker's own arithmetic).  The step (T4) is checked
against the root of log sum_j e^{lambda (G_jg - G_gg)/den} = H (mpmath), its bracket is checked, not trusted.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import proofs.dana2025.thm2_entropy_bound as thm2
import proofs.dana2025.thm2_terms as thm2_terms
from proofs.dana2025.thm2_entropy_bound import check_dana_thm2, jensen_step, t4_step
from verifier.arith.compare import workprec
from verifier.data.sequences import from_sequences

mpmath.mp.dps = 50
REL = mpmath.mpf(10) ** -13

# rows: a point mass first (skipped: its term's limit is 0), zeros beside positive entries, exactly uniform
SEQS = np.array([[2, 2], [0, 0], [0, 1], [1, 0], [1, 2]])
ROWS = [[0, 1, 0], [0.75, 0.25, 0], [0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3], [0, 0.125, 0.875]]
PRIOR = [1.0, 2.0, 0.5, 1.0, 0.5]  # not normalised: sum 5, w_0 != w_1


def _inst(d=1000, rows=ROWS, seqs=SEQS, prior=PRIOR, N=3):
    return from_sequences(seqs, N=N, conditionals=np.array(rows, dtype=float), prior=np.array(prior), d=d, H=1,
                          kind="test")


def _mp(x):
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def _dist(row):
    """The distribution a row of floats stands for when read exactly: p / sum p."""
    q = [_mp(x) for x in row]
    s = mpmath.fsum(q)
    return [x / s for x in q]


def _ent(q):
    return -mpmath.fsum(x * mpmath.log(x) for x in q if x > 0)


def _b(ent, N):
    return mpmath.log((N - 1) / mpmath.expm1(ent))


def _term(q, C):
    N, g = len(q), max(range(len(q)), key=lambda j: q[j])
    rest = 1 - q[g]
    tv = mpmath.fsum(abs(q[j] / rest - mpmath.mpf(1) / (N - 1)) for j in range(N) if j != g) / 2
    return rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * _b(_ent(q), N)


def _limit_zero(q):
    return sum(1 for x in q if x) == 1 or all(x == q[0] for x in q)


def _close(a, b, rel=REL):
    return abs(mpmath.mpf(a) - b) <= rel * abs(b) + mpmath.mpf(10) ** -300


def test_the_construction_path_against_mpmath():
    inst = _inst()
    assert not inst.is_positive and not inst.is_table  # no d_KL(pi, L) bound applies: the construction decides
    ev = check_dana_thm2(inst)
    assert ev.verdict == "verified" and ev.certified and ev.method == "exact Gram + arb balls" and ev.prec_bits == 128
    assert list(ev.measured) == ["C", "RHS", "Gram error <= C", "d_KL(pi, f) <="]
    assert [(s.title, s.uses) for s in ev.trail][3:] == [
        ("f: E(t) = lambda(t) W_g, d_KL(pi, f) in balls", "Thm. 2 construction"),
        ("(T5) simpler bound: E[(1-pi_g) b(H)] <= E[1-pi_g] b(E H)?", "T5")]
    N, d = 3, 1000
    C = mpmath.sqrt(32 * mpmath.log(N + 1) / d)
    assert _close(ev.measured["C"], C) and ev.trail[0].data == {"max |W W^T - I|": 0.0, "C": ev.measured["C"],
                                                                "C < 1/2": True}
    qs = [_dist(r) for r in ROWS]
    ws = [_mp(w) for w in PRIOR]
    terms = [mpmath.mpf(0) if _limit_zero(q) else _term(q, C) for q in qs]
    rhs = mpmath.fsum(w * t for w, t in zip(ws, terms)) / mpmath.fsum(ws)
    assert _close(ev.measured["RHS"], rhs)
    assert rhs * (1 - REL) <= ev.margin <= rhs  # the RHS ball's lower end
    rows = ev.trail[1].data["per sequence (pi_g, entropy, term)"]
    assert len(rows) == 5
    for r, q, t, raw in zip(rows, qs, terms, ROWS):
        assert r[0] == max(raw)
        if _limit_zero(q):
            assert r[1:] == (None, 0.0)
        else:
            assert _close(r[1], _ent(q)) and _close(r[2], t)
    assert ev.trail[2].data == {"holds": True}
    # lambda(t): the closed form for orthonormal rows; a point mass 60, the uniform row 0 (uniform logits)
    con = ev.trail[3].data
    lams = con["lambda"]
    assert lams[0] == 60.0 and lams[3] == 0.0
    for t in (1, 2, 4):
        assert _close(lams[t], _b(_ent(qs[t]), N), mpmath.mpf(10) ** -9)
    assert con["(T4) max f(t)_j, j != g"] == 0.0  # orthonormal: W_j^T W_g = 0
    # d_KL(pi, f) for the reported lambdas, in mpmath: logits lambda e_g
    kl = []
    for q, lam in zip(qs, lams):
        g = max(range(N), key=lambda j: q[j])
        z = [mpmath.mpf(lam) if j == g else mpmath.mpf(0) for j in range(N)]
        lse = mpmath.log(mpmath.fsum(mpmath.exp(x) for x in z))
        kl.append(mpmath.fsum(x * (mpmath.log(x) - (z[j] - lse)) for j, x in enumerate(q) if x > 0))
    dkl = mpmath.fsum(w * k for w, k in zip(ws, kl)) / mpmath.fsum(ws)
    assert dkl <= ev.measured["d_KL(pi, f) <="] <= dkl * (1 + REL)
    assert abs(kl[3]) < mpmath.mpf(10) ** -40 and dkl < rhs
    # (T5): both sides over the three rows with a finite b, in mpmath
    keep = [t for t in range(5) if not _limit_zero(qs[t])]
    wk = mpmath.fsum(ws[t] for t in keep)
    rest = {t: 1 - max(qs[t]) for t in keep}
    lhs5 = mpmath.fsum(ws[t] * rest[t] * _b(_ent(qs[t]), N) for t in keep) / wk
    rhs5 = (mpmath.fsum(ws[t] * rest[t] for t in keep) / wk) * _b(mpmath.fsum(ws[t] * _ent(qs[t]) for t in keep) / wk, N)
    t5 = ev.trail[4].data
    assert set(t5) == {"applies", "E[(1-pi_g) b(H)]", "E[1-pi_g] b(E H)", "step holds"} and t5["applies"] is True
    assert _close(t5["E[(1-pi_g) b(H)]"], lhs5) and _close(t5["E[1-pi_g] b(E H)"], rhs5)
    assert t5["step holds"] == ("true" if lhs5 < rhs5 else "false")


def test_a_construction_above_the_rhs_refutes_nothing(monkeypatch):
    """Any lambda gives an upper bound of d_KL(pi, L): a bad one (30) above the RHS is inconclusive."""
    monkeypatch.setattr(thm2_terms, "_solve_lambda", lambda *a: 30.0)
    ev = check_dana_thm2(_inst())
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.reason == "the construction's d_KL is above the RHS: d_KL(pi, L) may still be below it (inconclusive)"
    assert ev.measured["d_KL(pi, f) <="] > ev.measured["RHS"] and ev.margin == pytest.approx(ev.measured["RHS"])


def test_jensen_step_applies_from_two_rows():
    one = _inst(rows=[[0, 1, 0], [0.75, 0.25, 0]], seqs=SEQS[:2], prior=[1.0, 1.0])
    with workprec(128):
        assert jensen_step(one) == {"applies": False}


def test_the_refutation_with_c_between_one_half_and_one():
    """C = 0.86 (d = 60): 1 - 2C < 0 but 2 - 2C > 0, and 2 > C: the RHS, its sign and the reason."""
    inst = _inst(d=60, rows=[[0.5, 0.25, 0.25], [0.5, 0.375, 0.125], [0.75, 0.125, 0.125]], seqs=SEQS[:3],
                 prior=[1.0, 3.0, 0.5])
    ev = check_dana_thm2(inst)
    C = mpmath.sqrt(32 * mpmath.log(4) / 60)
    assert 0.5 < C < 1
    qs = [_dist(r) for r in inst.conditionals.tolist()]
    ws = [mpmath.mpf(1), mpmath.mpf(3), mpmath.mpf(0.5)]
    rhs = mpmath.fsum(w * _term(q, C) for w, q in zip(ws, qs)) / mpmath.fsum(ws)
    assert rhs < 0 and ev.verdict == "refuted" and ev.certified
    assert _close(ev.measured["RHS"], rhs) and rhs <= ev.margin <= rhs * (1 - REL)
    assert ev.reason == (f"(T1) C = {float(C):.3g} >= 1/2 (the hypothesis C < 1/2, i.e. d > 128 ln(N+1), is missing): "
                         f"the RHS is {float(rhs):.3g} < 0 <= d_KL(pi, L) for every distribution the data stand for")
    assert ev.trail[0].data["C < 1/2"] is False


def test_a_tiny_term_alone_refutes_with_c_between_one_half_and_one(tmp_path):
    """[1e-170, 1.0] beside a near-uniform row read at float64 precision, C = 0.765 (d = 60, N = 2): the sum's
    ball straddles 0, the tiny row's term is certainly < 0 and every term has the sign of 1 - 2C < 0."""
    inst = from_sequences(np.array([[0, 0], [1, 1]]), N=2, conditionals=np.array([[1e-170, 1.0], [0.5, 0.5]]),
                          d=60, H=1, d_h=1, kind="test", exact=False)
    assert 0.5 < mpmath.sqrt(32 * mpmath.log(3) / 60) < 1
    ev = check_dana_thm2(inst)
    assert ev.verdict == "refuted" and ev.certified
    assert ev.reason == ("(T1) C = 0.765 >= 1/2 (the hypothesis C < 1/2, i.e. d > 128 ln(N+1), is missing): the RHS is "
                         f"in {ev.reason.split('is in ')[1].split(']')[0]}] (every term <= 0, one certainly < 0) < 0 <= "
                         "d_KL(pi, L) for every distribution the data stand for")
    assert ev.reason.split("is in ")[1].startswith("[+/- ")  # the ball (it meets 0), radius shown
    assert ev.measured["RHS"] <= 0


# ---------------------------------------------------------------- (T4)
P4 = [2.0 ** -12, 1 - 2.0 ** -10, 2.0 ** -12, 2.0 ** -12, 2.0 ** -12]  # control_t4's row: mode token index 1
MOD = [0.5, 0.125, 0.125, 0.125, 0.125]  # entropy 1.39 > log 5 - 1: lambda small, f below C


def _t4_inst(rows, seqs=None):
    seqs = np.array([[0, i] for i in range(len(rows))]) if seqs is None else seqs
    return from_sequences(seqs, N=5, conditionals=np.array(rows, dtype=float), d=4, H=1, kind="test")


def _lambda_root(G, den, g, ent):
    """The root of F(lambda) = entropy (F decreasing from log N), by bisection in mpmath."""
    def F(lam):
        return mpmath.log(mpmath.fsum(mpmath.exp(lam * int(G[j, g] - G[g, g]) / den) for j in range(len(G))))
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while F(hi) > ent:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if F(mid) > ent else (lo, mid)
    return lo


def test_t4_against_the_root_and_the_exact_gram():
    """A point mass first (skipped), control_t4's row twice (a tie: the first is kept), a moderate row."""
    inst = _t4_inst([[0, 1, 0, 0, 0], P4, P4, MOD])
    ev = check_dana_thm2(inst, claim="T4")
    assert ev.verdict == "refuted" and ev.certified
    m = ev.measured
    assert list(m) == ["sequence", "j", "lambda(t) >", "f(t)_j >=", "C"] and m["sequence"] == 1
    S, den, _ = thm2.gram_construction(5, 4, 0)
    G = S @ S.T
    g = 1
    assert m["j"] != g and G[m["j"], g] == max(G[j, g] for j in range(5) if j != g) > 0
    assert _close(m["C"], mpmath.sqrt(32 * mpmath.log(6) / 4), mpmath.mpf(10) ** -15)
    lam = _lambda_root(G, den, g, _ent(_dist(P4)))
    assert lam * (1 - mpmath.mpf(10) ** -7) < m["lambda(t) >"] < lam  # a certified lower bound, tight
    assert m["f(t)_j >="] == m["lambda(t) >"] * G[m["j"], g] / den  # den = 4, G_jg = 2: exact in float64
    assert m["f(t)_j >="] > m["C"]
    assert t4_step(inst) == t4_step(inst, seed=0)  # the default seed is the check's
    one = _t4_inst([P4])
    ev2 = check_dana_thm2(one, claim="T4", seed=2)  # seed 2's sign matrix gives another j than seed 0's
    assert ev2.measured == {k: v for k, v in t4_step(one, seed=2).items() if k != "decision"}
    assert ev2.measured != {k: v for k, v in t4_step(one, seed=0).items() if k != "decision"}


def test_t4_below_c_is_not_refuted():
    ev = check_dana_thm2(_t4_inst([MOD]), claim="T4")
    assert ev.verdict == "inconclusive" and not ev.certified and "drops the factor" not in ev.reason
    assert ev.measured["sequence"] == 0 and ev.measured["f(t)_j >="] < ev.measured["C"]


def test_t4_of_point_masses_and_uniform_rows_decides_nothing():
    ev = check_dana_thm2(_t4_inst([[0, 1, 0, 0, 0], [0.2] * 5, [0, 0, 0, 0, 1]]), claim="T4")
    assert ev.verdict == "inconclusive" and ev.measured == {"why": "no sequence with a certified lambda bracket"}


def test_t4_rows_with_zeros():
    """A row with zero entries (its entropy over the positive ones) refutes like control_t4's."""
    row = [0.0, 1 - 2.0 ** -10, 2.0 ** -11, 2.0 ** -11, 0.0]
    ev = check_dana_thm2(_t4_inst([row]), claim="T4")
    S, den, _ = thm2.gram_construction(5, 4, 0)
    lam = _lambda_root(S @ S.T, den, 1, _ent(_dist(row)))
    assert ev.verdict == "refuted" and lam * (1 - mpmath.mpf(10) ** -7) < ev.measured["lambda(t) >"] < lam


def test_t4_bracket_is_checked_not_trusted(monkeypatch):
    """lambda from the float bisection, 1.5 times too large: F(lambda) < entropy, no row is certified."""
    orig = thm2._solve_lambda
    monkeypatch.setattr(thm2, "_solve_lambda", lambda *a: 1.5 * orig(*a))
    monkeypatch.setattr(thm2_terms, "_solve_lambda", lambda *a: 1.5 * orig(*a))
    ev = check_dana_thm2(_t4_inst([P4]), claim="T4")
    assert ev.verdict == "inconclusive" and ev.measured == {"why": "no sequence with a certified lambda bracket"}


def test_t4_needs_w_with_distinct_rows(monkeypatch):
    """Rows 0 and 1 of W equal: W_0^T W_1 = ||W_1||^2, lambda(t) does not exist for mode 1 (T3)."""
    S = np.array([[1, 1, 1, 1], [1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]], dtype=float)
    monkeypatch.setattr(thm2, "gram_construction", lambda N, d, seed: (S, 4, "test"))
    ev = check_dana_thm2(_t4_inst([P4]), claim="T4")
    assert ev.verdict == "inconclusive" and ev.measured == {"why": "no sequence with a certified lambda bracket"}


def test_t4_needs_w_within_c(monkeypatch):
    """A W whose Gram is 16 I off the identity does not meet the theorem's hypothesis: the step is not refuted."""
    S, den, _ = thm2.gram_construction(5, 4, 0)
    monkeypatch.setattr(thm2, "gram_construction", lambda N, d, seed: (8 * S, den, "scaled"))
    ev = check_dana_thm2(_t4_inst([P4]), claim="T4")
    assert ev.verdict == "inconclusive"
    assert ev.measured == {"why": "W does not meet ||W W^T - I||_inf <= C (exact Gram)"}


# ---------------------------------------------------------------- the other paths' evidence
def test_the_jensen_claim_paths():
    ev = check_dana_thm2(_inst(), claim="jensen")  # the step holds on these rows
    assert ev.verdict == "verified" and ev.certified and ev.reason == "conclusion holds on the instance (hypotheses: none)"
    one = check_dana_thm2(_inst(rows=[[0, 1, 0], [0.75, 0.25, 0]], seqs=SEQS[:2], prior=[1.0, 1.0]), claim="jensen")
    assert one.verdict == "inconclusive" and not one.certified and one.measured == {"applies": False}


def test_a_table_is_decided_through_prop3():
    tab = from_sequences(np.array([[0, 0], [0, 1]]), N=3, targets=[0, 2], d=180, H=1)
    ev = check_dana_thm2(tab)
    assert ev.verdict == "verified" and ev.measured["d_KL(pi, L) <="] == 0.0 and ev.measured["RHS"] == 0.0
    assert ev.trail[3].title == "d_KL(pi, L) = 0 (Prop. 2(a) / Prop. 3)"
    assert list(ev.trail[3].data) == ["why"] and ev.trail[3].data["why"].startswith("Prop. 3:")


def test_point_masses_beside_a_uniform_row_go_to_the_construction():
    """Neither a table nor positive, every term's limit 0: no d_KL(pi, L) bound is read, the construction decides."""
    ev = check_dana_thm2(_inst(rows=[[0, 1, 0], [1 / 3, 1 / 3, 1 / 3]], seqs=SEQS[:2], prior=[1.0, 1.0]))
    assert ev.trail[3].title == "f: E(t) = lambda(t) W_g, d_KL(pi, f) in balls"
    assert ev.trail[3].data["lambda"] == [60.0, 0.0] and ev.verdict == "inconclusive"  # KL of the point mass > 0 = RHS


def test_nine_sequences_show_eight_in_the_trail():
    seqs = np.array([[a, b] for a in range(3) for b in range(3)])
    rows = [[0.75, 0.25, 0]] * 9
    ev = check_dana_thm2(_inst(rows=rows, seqs=seqs, prior=[1.0] * 9))
    assert len(ev.trail[1].data["per sequence (pi_g, entropy, term)"]) == 8 and len(ev.trail[3].data["lambda"]) == 8
    assert ev.trail[1].data["RHS"].startswith("[") and "+/-" in ev.trail[1].data["RHS"]
    assert ev.trail[3].data["d_KL(pi,f)"].startswith("[") and "+/-" in ev.trail[3].data["d_KL(pi,f)"]


def test_sign_matrix_trail_and_t3(monkeypatch):
    ev = check_dana_thm2(_inst(d=2, rows=[[0.5, 0.25, 0.25]], seqs=SEQS[:1], prior=[1.0]))
    assert ev.trail[0].data["max |W W^T - I|"] == 1.0 and ev.trail[2].data == {"holds": False}  # seed 0: two equal rows
    S = np.array([[1, 1], [1, 1], [1, -1]], dtype=float)
    monkeypatch.setattr(thm2, "gram_construction", lambda N, d, seed: (S, 2, "test"))
    ev = check_dana_thm2(_inst(d=2, rows=[[0.5, 0.25, 0.25]], seqs=SEQS[:1], prior=[1.0]))
    assert ev.verdict == "refuted" and ev.trail[2].data == {"holds": False}  # W_0 = W_1


def test_no_gram_within_c_names_the_statement(monkeypatch):
    monkeypatch.setattr(thm2, "gram_construction", lambda N, d, seed: (np.ones((N, d)), 1, "all ones"))
    ev = check_dana_thm2(_inst())
    assert ev.statement == "dana_thm2" and ev.verdict == "inconclusive"


def test_an_undecided_sign_says_whether_the_data_or_the_precision_is_the_cause(tmp_path):
    exact = from_sequences(np.array([[0, 0]]), N=2, conditionals=np.array([[0.5 + 2.0 ** -40, 0.5 - 2.0 ** -40]]), d=2,
                           H=1, d_h=1)
    ev = check_dana_thm2(exact, prec=64)
    ball = ev.reason.split("the RHS ball ")[1].split(" meets")[0]
    assert ball.startswith("[+/- ") and ev.verdict == "inconclusive"
    assert ev.reason == f"the RHS ball {ball} meets d_KL(pi, L) = 0.0: its sign is not decided at this working precision: raise --prec"
    assert ev.margin < 0  # the RHS ball's lower end (C > 1/2: the ball is cut at 0 from above)
    assert check_dana_thm2(exact).verdict == "refuted"  # 128 bits decide it
    row = [0.5000000009313226, 0.4999999990686774]
    read = from_sequences(np.array([[0, 0]]), N=2, conditionals=np.array([row]), d=2, H=1, d_h=1, exact=False)
    ev = check_dana_thm2(read)
    ball = ev.reason.split("the RHS ball ")[1].split(" meets")[0]
    assert ball.startswith("[+/- ") and ev.verdict == "inconclusive"
    assert ev.reason == f"the RHS ball {ball} meets d_KL(pi, L) = 0.0: its sign is not decided {DATA}"


# ------------------------------------------------ which explanation an undecided sign gets (issue 17)
def _read(row):
    """N = 2, d = 2 (C = 4.19 > 1/2, positive rows: d_KL(pi, L) = 0 by Prop. 2(a)), read at float64 precision."""
    return from_sequences(np.array([[0, 0]]), N=2, conditionals=np.array([row]), d=2, H=1, d_h=1, exact=False)


def _c_ball(N, d, prec):
    with workprec(prec):
        return (32 * thm2.arb(N + 1).log() / d).sqrt()


DATA = ("for every distribution the data stand for (undecided at the data's precision: the stored values read as exact "
        "rationals would decide it; --exact-input if they are exact, --prec cannot)")
PREC = "at this working precision: raise --prec"


@pytest.mark.parametrize("prec", [64, 128])
def test_an_exactly_uniform_float_row_blames_the_data(prec):
    """(1/2, 1/2) read at float64 precision: the distributions it stands for include (1/2, 1/2), RHS = 0 =
    d_KL(pi, L), and (1/2 + 2^-56, 1/2 - 2^-56) (1/2's set: [1/2 - 2^-55, 1/2 + 2^-54]), RHS < 0 (mpmath): no
    precision decides the float reading's sign.  Read exactly it is
    uniform (the term's limit is 0): the RHS is exactly 0 >= 0 (no term certainly < 0, so only the clause
    0 <= exact RHS tells), decided at any precision: the data are the cause."""
    inst = _read([0.5, 0.5])
    C = mpmath.sqrt(32 * mpmath.log(3) / 2)
    assert 0.5 < C and _term([mpmath.mpf(1) / 2 + mpmath.mpf(2) ** -56, mpmath.mpf(1) / 2 - mpmath.mpf(2) ** -56], C) < 0
    ev = check_dana_thm2(inst, prec=prec)
    ball = ev.reason.split("the RHS ball ")[1].split(" meets")[0]
    assert ev.verdict == "inconclusive" and ev.reason == f"the RHS ball {ball} meets d_KL(pi, L) = 0.0: its sign is not decided {DATA}"
    assert check_dana_thm2(inst.exact_reading(), prec=prec).verdict == "verified"  # RHS = 0 exactly
    Cb = _c_ball(2, 2, prec)
    with workprec(prec):
        exact, _, negative = thm2.entropy_bound(inst.exact_reading(), Cb)
        assert not negative and exact == 0
    assert thm2._data_precision_is_the_cause(inst, Cb, prec) is True


def test_a_float_row_two_ulps_off_uniform_blames_the_precision_at_64_bits():
    """(1/2 + 2^-53, 1/2 - 2^-53) read at 2^-53.  Read exactly, its RHS is -3.13e-32 (mpmath, 50 digits): about
    2^-104.6, far below what 64 bits resolve in the entropy (log 2 to about 2^-64), so at 64 bits neither reading
    decides its sign and the working precision is the cause (the exact reading's ball is cut at 0 from above and
    reaches below it: no term certainly < 0, 0 <= RHS and RHS < 0 both undecided, RHS < 1 certain); at 256 bits
    the exact reading is refuted and the float reading's explanation becomes the data."""
    row = [0.5 + 2.0 ** -53, 0.5 - 2.0 ** -53]
    assert sum(Fraction(x) for x in row) == 1
    inst = _read(row)
    with mpmath.workdps(100):  # b(H) ~ 2^-103 is log 2 - H over about 1: 50 digits leave 18 of it
        truth = _term(_dist(row), mpmath.sqrt(32 * mpmath.log(3) / 2))  # one sequence: the RHS is its term
    assert -mpmath.mpf(2) ** -104 < truth < -mpmath.mpf(2) ** -106
    ev = check_dana_thm2(inst, prec=64)
    ball = ev.reason.split("the RHS ball ")[1].split(" meets")[0]
    assert ev.verdict == "inconclusive" and ev.reason == f"the RHS ball {ball} meets d_KL(pi, L) = 0.0: its sign is not decided {PREC}"
    Cb = _c_ball(2, 2, 64)
    with workprec(64):
        exact, _, negative = thm2.entropy_bound(inst.exact_reading(), Cb)
    assert not negative and exact.lower() < 0 and exact.upper() <= 0  # meets 0 (certainly below 1)
    assert thm2._data_precision_is_the_cause(inst, Cb, 64) is False
    assert check_dana_thm2(inst.exact_reading(), prec=64).verdict == "inconclusive"
    # more precision decides the exact reading (its RHS contains the mpmath value), and the explanation follows
    ev256 = check_dana_thm2(inst.exact_reading(), prec=256)
    assert ev256.verdict == "refuted" and ev256.margin >= truth
    with workprec(256):
        exact, _, negative = thm2.entropy_bound(inst.exact_reading(), _c_ball(2, 2, 256))
        assert negative and exact.lower() <= thm2.arb(mpmath.nstr(truth, 60)) <= exact.upper()
    assert check_dana_thm2(inst, prec=256).reason.endswith(DATA)


def test_the_construction_trail_with_a_sign_matrix():
    """N = 3, d = 2 (den = 2, C = 4.7 > 1/2): a point mass on token 1 beside an exactly uniform row, both terms' limit
    0: the RHS is exactly 0, nothing is refuted, neither a positive instance nor a table, so the sign-matrix
    construction decides.  (T4) f(t)_j = lambda(t) W_j^T W_g = lambda (S S^T)_{jg} / den, exact in Fractions."""
    inst = _inst(d=2, rows=[[0, 1, 0], [1 / 3, 1 / 3, 1 / 3]], seqs=SEQS[:2], prior=[1.0, 1.0])
    assert not inst.is_positive and not inst.is_table
    S, den, how = thm2.gram_construction(3, 2, 0)
    G = [[int(x) for x in r] for r in (S @ S.T).tolist()]
    assert den == 2 and how == "+-1/sqrt(d) signs"
    ev = check_dana_thm2(inst)
    con = ev.trail[3].data
    assert ev.trail[3].title == "f: E(t) = lambda(t) W_g, d_KL(pi, f) in balls" and ev.measured["RHS"] == 0.0
    lams = con["lambda"]
    assert lams == [60.0, 0.0]  # the point mass: 60; the uniform row: 0
    gs = [1, 0]  # the modes (np.argmax: the first of ties)
    t4 = max(Fraction(lam) * max(G[j][g] for j in range(3) if j != g) / den for lam, g in zip(lams, gs))
    assert max(G[j][1] for j in (0, 2)) != 0 and con["(T4) max f(t)_j, j != g"] == float(t4)
    # d_KL(pi, f): the point mass's logits lambda G_{j1} / den, in mpmath; the uniform row's KL is 0
    z = [60 * mpmath.mpf(G[j][1]) / den for j in range(3)]
    kl = mpmath.log(mpmath.fsum(mpmath.exp(x) for x in z)) - z[1]
    assert kl / 2 <= ev.measured["d_KL(pi, f) <="] <= kl / 2 * (1 + REL)
    assert ev.verdict == "inconclusive" and kl > 0  # above the RHS = 0: refutes nothing
