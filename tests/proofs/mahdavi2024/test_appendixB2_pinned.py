"""App. B.2's deciding lines pinned by value (mutation survivors, issue 9 item 9).

The reported certificate (c, x_max, kappa, eps, the a-priori bound of Eq. (19))
against independent float64 formulas; the climb to a larger c (Lemma 4's c0 for
the certified sigma_min, else 2c) against mpmath; the three outcomes of a
pinned c; the precision handed to every enclosure; the precision ladder's ends.
Spies (monkeypatch) force the branches no default instance reaches: the
construction's c too small, the a-priori bound failing, no lower bound of sigma_min.
"""
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from flint import arb

from proofs.mahdavi2024 import appendixB2_finite_scaling as B
from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from verifier.arith.compare import Decision, Enclosure, LowerBound, UpperBound, upper
from verifier.data.instances import make_instance
from verifier.errors import InsufficientPrecision


def _setting(context, H, n, d, seed=0):
    inst = make_instance(H=H, n=n, d=d, context=context, seed=seed)
    return inst, build_key_query_weights(inst, seed=seed, factor=False)


@pytest.fixture(scope="module")
def shared():
    return _setting("shared", 3, 3, 5)


@pytest.fixture(scope="module")
def rand():
    return _setting("random", 4, 4, 7)  # head 2 has free rows F (delta_t = 1 in kappa)


def _steps(con):
    return [hs for hs in con.heads if hs.claim2 is not None and (hs.new_rows or hs.free_rows)]


def _x_max_squared(inst) -> Fraction:
    """max over every context's tokens of ||x||^2, in exact rationals."""
    E = np.asarray(inst.contexts, dtype=float)
    return max(sum(Fraction(float(v)) ** 2 for v in row) for row in E.reshape(-1, E.shape[-1]))


def _independent(inst, con, hs):
    """x_max, kappa and eps = max_i 2(n-1) exp(R_i - c g_i) in plain float64 (numpy)."""
    E, e, n = np.asarray(inst.contexts), np.asarray(inst.queries), inst.n
    x_max = max(np.linalg.norm(E[t], axis=1).max() for t in range(E.shape[0]))  # every context's tokens
    A = np.asarray(hs.coefficients, dtype=float)
    delta = np.array([0.0] * len(hs.new_rows) + [1.0] * len(hs.free_rows))
    kappa = float(np.sqrt(np.sum((delta + np.abs(A).sum(axis=1)) ** 2)))
    c2 = hs.claim2
    W_eff = np.asarray(con.W[hs.head - 1], dtype=float) - c2.c * np.outer(c2.v, c2.w)
    ist = dict(zip(list(c2.saturated), list(c2.istar)))
    eps = 0.0
    for t in list(hs.basis_before) + list(hs.free_rows):
        b = E[t] @ W_eff @ e[t]
        ap = (E[t] @ c2.v) * float(c2.w @ e[t])
        i = ist[t]
        R = b.max() - b[i]
        g = ap[i] - max(ap[k] for k in range(n) if k != i)
        eps = max(eps, 2 * (n - 1) * np.exp(R - c2.c * g))
    return x_max, kappa, eps


@pytest.mark.parametrize("which", ["shared", "rand"])
def test_certificate_values_match_independent_formulas(which, request):
    """Every reported number of every step: the construction's own c (tried once,
    first), x_max over ALL contexts' tokens, kappa with delta_t = 1 on the free
    rows, eps of Lemma 4, the a-priori bound x_max eps kappa, the three decisions."""
    inst, con = request.getfixturevalue(which)
    ev = B.check_appendixB2(inst)
    assert ev.verdict == "verified" and ev.certified
    steps = _steps(con)
    assert [c["head"] for c in ev.certificates] == [hs.head for hs in steps]
    for cert, hs in zip(ev.certificates, steps):
        c = float(hs.claim2.c)
        assert cert["c_construction"] == c and cert["c"] == c
        assert cert["c tried"] == [upper(arb(c))]
        x_max, kappa, eps = _independent(inst, con, hs)
        assert Fraction(cert["x_max"]) ** 2 >= _x_max_squared(inst)  # exactly: the float norm may round up
        assert cert["x_max"] == pytest.approx(x_max, rel=1e-12)
        assert cert["kappa"] >= kappa * (1 - 1e-14) and cert["kappa"] == pytest.approx(kappa, rel=1e-12)
        assert cert["eps"] == pytest.approx(eps, rel=1e-6)
        assert cert["apriori"] >= cert["x_max"] * cert["eps"] * cert["kappa"] * (1 - 1e-14)
        assert cert["apriori"] == pytest.approx(x_max * eps * kappa, rel=1e-6)
        assert cert["actual<=apriori"] == cert["apriori<sigma"] == cert["(19) actual<sigma"] == "true"
        assert cert["decision"] == "true" and cert["prec_bits"] == 128


def test_random_contexts_x_max_is_over_every_context(rand):
    """x_max of the random-context instance is NOT the largest token of E[0] alone."""
    inst, _ = rand
    E = np.asarray(inst.contexts)
    assert upper(B._x_max_ball(E, inst)) > np.linalg.norm(E[0], axis=1).max() * (1 + 1e-6)


def test_free_rows_enter_kappa_with_delta_one(rand):
    inst, con = rand
    hs = next(h for h in _steps(con) if h.free_rows)
    res = B.check_head_step(inst, con, hs, prec=128)
    _, kappa, _ = _independent(inst, con, hs)
    assert res["kappa"] == pytest.approx(kappa, rel=1e-12)


# -- _next_c: Lemma 4's c0 for eps* = sigma_lower / (2 x_max kappa), else 2c -----

def _sigma(lo, hi):
    return Enclosure(LowerBound(arb(lo)), UpperBound(arb(hi)))


def _c0(R, g, eps, n):
    mpmath.mp.prec = 200
    return (mpmath.mpf(R) + mpmath.log(2 * (n - 1) / mpmath.mpf(eps))) / mpmath.mpf(g)


def _parts(Rg, x_max, kappa):
    return {"Rg": [(arb(R), arb(g)) for R, g in Rg], "x_max": arb(x_max), "kappa": arb(kappa)}


def test_next_c_is_lemma4_c0_for_half_the_certified_sigma():
    """kappa < 1 (read as is, not clamped to 1), two saturated rows (the max c0)."""
    inst = SimpleNamespace(n=3)
    Rg, x_max, kappa, s = [(0.5, 0.25), (0.0, 1.0)], 2.0, 0.5, 0.3
    c = B._next_c(inst, _parts(Rg, x_max, kappa), {"sigma": _sigma(s, 0.31), "c": arb(1.5)})
    eps_star = mpmath.mpf(s) / (2 * x_max * kappa)  # 0.15
    want = max(_c0(R, g, eps_star, 3) for R, g in Rg)  # 15.13...
    assert want > 3
    assert float(c.mid()) >= float(want) * (1 - 1e-15)
    assert float(c.mid()) == pytest.approx(float(want), rel=1e-12)


def test_next_c_doubles_when_c0_is_below_2c():
    inst = SimpleNamespace(n=3)
    c = B._next_c(inst, _parts([(0.5, 0.25)], 2.0, 0.5), {"sigma": _sigma(0.3, 0.31), "c": arb(100.25)})
    assert float(c.mid()) == pytest.approx(200.5, rel=1e-15)  # 2 x upper(c): one ulp up


@pytest.mark.parametrize("parts, sigma", [
    (_parts([(0.5, 0.25), (0.0, 0.0)], 2.0, 0.5), _sigma(0.3, 0.31)),  # a gap g not certainly > 0
    (_parts([(0.5, 0.25)], 2.0, 0.5), UpperBound(arb(0.31))),  # no lower side of sigma_min
    (_parts([(0.5, 0.25)], 2.0, 0.5), _sigma(0.0, 0.31)),  # sigma_min not certainly > 0
    (_parts([(0.5, 0.25)], 1e10, 1.0), _sigma(1e-320, 0.31)),  # eps* underflows to 0
    (_parts([(0.5, 0.25)], 1e-160, 1e-160), _sigma(1.0, 1.5)),  # eps* overflows to inf
])
def test_next_c_gives_up_without_a_usable_eps_star(parts, sigma):
    assert B._next_c(SimpleNamespace(n=3), parts, {"sigma": sigma, "c": arb(1.5)}) is None


# -- check_head_step's branches ------------------------------------------------

def _spy_at_c(monkeypatch, force):
    """Wrap _at_c; ``force(k, res)`` may rewrite the k-th result (0-based)."""
    calls, real = [], B._at_c

    def at_c(instance, hs, parts, c, prec):
        res = dict(real(instance, hs, parts, c, prec))
        calls.append((c, res, parts))
        return force(len(calls) - 1, res)
    monkeypatch.setattr(B, "_at_c", at_c)
    return calls


def test_climbs_to_lemma4_c0_when_the_construction_c_is_not_enough(shared, monkeypatch):
    """The construction's c made (artificially) undecided: the next c is
    max(c0(eps*), 2c) with eps* = sigma_lower / (2 x_max kappa), and proves (19)."""
    inst, con = shared
    hs = _steps(con)[0]

    def force(k, res):
        if k == 0:
            res["apriori<sigma"] = Decision.UNDECIDED
        return res
    calls = _spy_at_c(monkeypatch, force)
    out = B.check_head_step(inst, con, hs, prec=128)
    assert out["decision"] is Decision.TRUE and len(calls) == 2
    c_con = float(hs.claim2.c)
    (c1, res1, parts), (c2, _, _) = calls
    assert float(c1.mid()) == c_con
    eps_star = mpmath.mpf(float(res1["sigma"].lower.value.lower())) / (
        2 * upper(parts["x_max"]) * upper(parts["kappa"]))
    c0 = max(_c0(float(R.mid()), float(g.mid()), eps_star, inst.n) for R, g in parts["Rg"])
    want = max(float(c0), 2 * c_con)
    assert float(c2.mid()) == pytest.approx(want, rel=1e-9)
    assert out["c tried"] == [upper(c1), upper(c2)] and out["c"] == float(c2.mid())
    assert out["c_construction"] == c_con


def test_existence_mode_gives_up_after_c_steps_larger_c(shared, monkeypatch):
    """apriori < sigma never holds: 1 + C_STEPS values of c, each >= twice the
    last, then UNDECIDED (only a proof counts for 'some finite c')."""
    assert B.C_STEPS == 6 and B.MAX_PREC == 1024
    inst, con = shared

    def force(k, res):
        res["apriori<sigma"] = Decision.FALSE
        return res
    calls = _spy_at_c(monkeypatch, force)
    out = B.check_head_step(inst, con, _steps(con)[0], prec=128)
    assert out["decision"] is Decision.UNDECIDED and len(calls) == 1 + B.C_STEPS
    cs = out["c tried"]
    assert len(cs) == 7 and all(b >= 2 * a * (1 - 1e-15) for a, b in zip(cs, cs[1:]))


def test_a_failing_apriori_bound_is_a_refutation(shared, monkeypatch):
    """Lemma 4's eps shrunk 1e12-fold: actual > x_max eps kappa certainly, the
    step is FALSE (Lemma 4 or its use is wrong), also at a pinned c."""
    inst, con = shared
    real = B.error_bound_ball
    monkeypatch.setattr(B, "error_bound_ball", lambda R, g, c, n: real(R, g, c, n) * arb("1e-12"))
    for scale in (None, 1.0):
        ev = B.check_appendixB2(inst, c_scale=scale)
        assert ev.verdict == "refuted" and ev.certified
        assert all(c["actual<=apriori"] == "false" and c["decision"] == "false" for c in ev.certificates)
        assert all(len(c["c tried"]) == 1 for c in ev.certificates)


@pytest.mark.parametrize("scale, decision, chain, eq19", [
    (1.0, Decision.TRUE, Decision.TRUE, Decision.TRUE),
    (0.5, Decision.UNDECIDED, Decision.FALSE, Decision.TRUE),  # bound too weak, (19) itself holds
    (1e-3, Decision.FALSE, Decision.FALSE, Decision.FALSE),  # (19) fails, both sides enclosed
])
def test_pinned_c_three_outcomes(shared, scale, decision, chain, eq19):
    inst, con = shared
    hs = _steps(con)[0]
    out = B.check_head_step(inst, con, hs, prec=128, c_scale=scale)
    assert out["apriori<sigma"] is chain and out["(19) actual<sigma"] is eq19
    assert out["decision"] is decision
    assert out["c tried"] == [upper(arb(hs.claim2.c) * arb(scale))]  # pinned: one c only


def test_without_a_lower_bound_of_sigma_min_nothing_is_proved(shared, monkeypatch):
    """sigma_min_lower_bound out of reach: sigma is an upper bound only, reported
    as such (no lower side), no climb, UNDECIDED."""
    inst, con = shared

    def no_lower(*a, **k):
        raise InsufficientPrecision("forced")
    monkeypatch.setattr(B, "sigma_min_lower_bound", no_lower)
    Y = B.to_arb_mat(np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]))
    only = B.sigma_min_bounds(Y, prec=128)
    assert isinstance(only, UpperBound) and upper(only) == pytest.approx(1.0)
    out = B.check_head_step(inst, con, _steps(con)[0], prec=128)
    assert out["sigma_min_lower"] is None and out["sigma_min_upper"] == pytest.approx(0.25673829, rel=1e-6)
    assert out["decision"] is Decision.UNDECIDED and len(out["c tried"]) == 1


def test_every_enclosure_is_taken_at_the_step_precision(shared, monkeypatch):
    inst, con = shared
    seen = []

    def spy(name):
        real = getattr(B, name)

        def f(*a, **k):
            seen.append((name, k.get("prec")))
            return real(*a, **k)
        monkeypatch.setattr(B, name, f)
    for name in ("spectral_norm_enclosure", "sigma_min_upper_bound", "sigma_min_lower_bound"):
        spy(name)
    B.check_head_step(inst, con, _steps(con)[0], prec=192)
    assert {n for n, _ in seen} == {"spectral_norm_enclosure", "sigma_min_upper_bound", "sigma_min_lower_bound"}
    assert all(p == 192 for _, p in seen), seen


# -- the precision ladder --------------------------------------------------------

@pytest.mark.parametrize("fail", ["raise", "undecided"])
def test_ladder_doubles_from_prec_to_max_prec_then_inconclusive(shared, monkeypatch, fail):
    inst, con = shared
    bits = []

    def step(instance, con_, hs, *, prec, c_scale=None):
        bits.append(prec)
        if fail == "raise":
            raise InsufficientPrecision("forced")
        return {"head": hs.head, "decision": Decision.UNDECIDED, "prec_bits": prec}
    monkeypatch.setattr(B, "check_head_step", step)
    ev = B.check_appendixB2(inst, prec=64)
    heads = [hs.head for hs in _steps(con)]
    assert bits == [64, 128, 256, 512, 1024] * len(heads)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert list(ev.certificates) == [{"head": h, "decision": "undecided", "prec_bits": 1024} for h in heads]
    assert ev.measured["max prec_bits"] == 1024
