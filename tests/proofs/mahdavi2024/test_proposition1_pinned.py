"""Prop. 1's deciding lines and evidence pinned (mutation testing, issue 9):
every path of check_proposition1 (verified on the induction's rows, a variant
claim, Remark 1's r and hypotheses, refuted by the structural cap with no
minor, the construction failing) returns well-formed evidence with the right
numbers; the options of the rank certificate reach the certifier (block
columns first, the pivoted-QR fallback, the no-fallback message), its rows are
rows of Z; the trail of the induction head by head; the figure data."""
import dataclasses

import numpy as np
import pytest

import proofs.mahdavi2024.proposition1_rank_induction as p1
from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from proofs.mahdavi2024.proposition1_rank_induction import (
    certify_construction_rank,
    check_proposition1,
    construction_trail,
    theorem_hypotheses,
)
from verifier.arith.compare import Decision
from verifier.arith.rank import RankLowerBound
from verifier.arith.rank_caps import structural_rank_cap
from verifier.data.instances import make_instance
from verifier.errors import ConstructionFailed
from verifier.statements.evidence import Hypothesis, Step, brief

HYP_NAMES = ["n < d", "d_h >= 1", "Assumption 1", "Assumption 2"]
BLOCKS = "; columns from the induction's blocks"


def well_formed(ev, *, prec=True):
    assert ev.statement == "proposition1"
    assert isinstance(ev.claimed, str) and ev.claimed.startswith("rank(Z) >= ")
    assert isinstance(ev.measured, dict) and ev.measured
    assert isinstance(ev.method, str) and ev.method
    assert isinstance(ev.reason, str) and ev.reason
    if prec:
        assert isinstance(ev.prec_bits, int) and ev.prec_bits >= 64
    for h in ev.hypotheses:
        assert isinstance(h.name, str) and h.name and isinstance(h.detail, str) and h.detail
    assert ev.trail
    for s in ev.trail:
        assert isinstance(s, Step) and isinstance(s.title, str) and s.title
        assert isinstance(s.uses, str) and s.uses and isinstance(s.data, dict)
    for c in ev.certificates:
        assert isinstance(c, dict) and isinstance(c.get("kind"), str) and c["kind"]


def _shared(**kw):
    return make_instance(**{"H": 3, "n": 3, "d": 5, "context": "shared", "seed": 0, **kw})


def _no_seconds(steps):
    out = [s.to_dict() for s in steps]
    out[0]["data"].pop("seconds")
    return out


# -- check_proposition1: every path ------------------------------------------

def test_verified_path_numbers():
    inst = _shared()
    ev = check_proposition1(inst)
    well_formed(ev)
    con = build_key_query_weights(inst, seed=0)
    assert ev.verdict == "verified" and ev.certified and ev.method == "arb balls" and ev.prec_bits == 128
    assert ev.claimed == "rank(Z) >= 7 = min(H(r-1)+1, T)"
    assert ev.measured == {"certified_rank": 7, "induction_rank": 7, "numerical_rank_of_rows": 7}
    assert [h.name for h in ev.hypotheses] == HYP_NAMES and all(h.status == "certified" for h in ev.hypotheses)
    assert ev.hypotheses[1] == Hypothesis("d_h >= 1", "certified", "d_h = 3")
    assert len(ev.certificates) == 1
    cert = ev.certificates[0]
    assert cert["kind"] == "rank >= k: nonsingular minor" and cert["decision"] == "true"
    assert cert["k"] == cert["certified_k"] == cert["requested_k"] == 7 and cert["prec_bits"] == 128
    assert cert["rows"] == list(con.basis) and cert["cols"] == list(con.minor_columns(7))
    assert cert["method"].startswith("arb: ") and cert["method"].endswith(BLOCKS)
    assert ev.margin == 1.0 - cert["residual_norm_upper"] and 0.5 < ev.margin <= 1.0
    last = ev.trail[-1]
    assert last == Step("Certificate", "rank >= k by a nonsingular minor (Arb balls)",
                        {"k": 7, "decision": "true", "prec_bits": 128,
                         "||I - R A||_inf <=": cert["residual_norm_upper"]})
    assert _no_seconds(ev.trail[:-1]) == _no_seconds(construction_trail(inst, con))


def test_callers_precision_and_seed_reach_hypotheses_construction_and_certificate(monkeypatch):
    inst = _shared()
    seen = []
    real1, real2 = p1.check_assumption1, p1.check_assumption2

    def spy1(instance, **kw):
        seen.append(("A1", kw))
        return real1(instance, **kw)

    def spy2(instance, **kw):
        seen.append(("A2", kw))
        return real2(instance, **kw)

    monkeypatch.setattr(p1, "check_assumption1", spy1)
    monkeypatch.setattr(p1, "check_assumption2", spy2)
    ev = check_proposition1(inst, prec=192, seed=1)
    assert seen == [("A1", {"prec": 192, "seed": 1}), ("A2", {"prec": 192, "seed": 1})]
    assert ev.certificates[0]["prec_bits"] >= 192 and ev.prec_bits == ev.certificates[0]["prec_bits"]
    con1 = build_key_query_weights(inst, seed=1)
    assert _no_seconds(ev.trail[:-1]) == _no_seconds(construction_trail(inst, con1))
    ev0 = check_proposition1(inst)  # defaults: prec 128, seed 0
    assert ev0.trail[1].data["targets s^(j)"] != ev.trail[1].data["targets s^(j)"]
    assert ev0.prec_bits == 128 and ev0.certificates[0]["prec_bits"] == 128
    assert seen[2:] == [("A1", {"prec": 128, "seed": 0}), ("A2", {"prec": 128, "seed": 0})]


def test_theorem_hypotheses_defaults_names_and_samples(monkeypatch):
    inst = _shared()
    seen = []
    real1, real2 = p1.check_assumption1, p1.check_assumption2
    monkeypatch.setattr(p1, "check_assumption1", lambda i, **kw: seen.append(("A1", kw)) or real1(i, **kw))
    monkeypatch.setattr(p1, "check_assumption2", lambda i, **kw: seen.append(("A2", kw)) or real2(i, **kw))
    hyps = theorem_hypotheses(inst)
    assert seen == [("A1", {"prec": 128, "seed": 0}), ("A2", {"prec": 128, "seed": 0})]
    assert [h.name for h in hyps] == HYP_NAMES
    assert hyps[1] == Hypothesis("d_h >= 1", "certified", "d_h = 3")
    assert [h.status for h in hyps] == ["certified"] * 4
    seen.clear()
    theorem_hypotheses(inst, prec=160, seed=2, samples=7.0)
    assert seen == [("A1", {"prec": 160, "seed": 2, "samples": 7}), ("A2", {"prec": 160, "seed": 2})]
    assert type(seen[0][1]["samples"]) is int


def test_remark1_r_and_hypotheses_are_used():
    inst = _shared()
    given = [Hypothesis("Kruskal rank k of the queries", "certified", "k = 2")]
    ev = check_proposition1(inst, r=2.0, hypotheses=given)
    well_formed(ev)
    assert ev.hypotheses == tuple(given)
    assert ev.claimed == "rank(Z) >= 4 = min(H(r-1)+1, T)"  # H(r-1)+1 with r = 2
    assert ev.measured == {"certified_rank": 4, "induction_rank": 4, "numerical_rank_of_rows": 4}
    assert ev.trail[0].data["r"] == 2 and ev.verdict == "verified"


def test_variant_claim_text_and_certificate():
    ev = check_proposition1(_shared(), claimed_rank=5.0)
    well_formed(ev)
    assert ev.claimed == "rank(Z) >= 5 (variant)" and ev.verdict == "verified"
    assert ev.measured == {"certified_rank": 5, "induction_rank": 7, "numerical_rank_of_rows": 7}
    assert ev.certificates[0]["k"] == 5 and ev.certificates[0]["rows"] == [0, 1, 2, 3, 4]


def test_refuted_by_the_cap_with_no_minor_has_no_margin():
    """k above min(T, Hd): no minor at all (residual infinite): margin None, the cap refutes."""
    inst = make_instance(H=1, n=2, d=3, T=5, seed=0)
    ev = check_proposition1(inst, claimed_rank=4)
    well_formed(ev)
    assert ev.verdict == "refuted" and ev.certified and ev.margin is None
    assert ev.measured == {"certified_rank": 0, "induction_rank": 2, "numerical_rank_of_rows": 2,
                           "upper_bound (structural, any weights)": 3}
    cap = structural_rank_cap(inst.contexts, inst.queries, inst.H)
    assert ev.certificates[1] == cap.to_dict() and ev.certificates[1]["cap"] == 3
    assert ev.certificates[0]["method"] == "k=4 exceeds min(m, n)=3"
    assert ev.certificates[0]["residual_norm_upper"] is None
    assert ev.trail[-1].data["decision"] == "false"


def test_negative_control_margin_is_the_failed_minor():
    ev = p1.control_no_minus_one()
    well_formed(ev)
    cert = ev.certificates[0]
    assert cert["decision"] == "undecided" and cert["k"] == 9
    assert ev.margin == 1.0 - cert["residual_norm_upper"] < 0


def _failure(inst):
    with pytest.raises(ConstructionFailed) as info:
        build_key_query_weights(inst, seed=0, r=inst.r)
    return info.value


def test_construction_failure_evidence():
    inst = make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=0)
    exc = _failure(inst)
    ev = check_proposition1(inst, hypotheses=[])
    well_formed(ev, prec=False)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.claimed == "rank(Z) >= 5 = min(H(r-1)+1, T)"
    assert ev.measured == {"construction failed at": "Claim 1"} and exc.step == "Claim 1"
    assert ev.method == "construction (float64) failed: nothing decided"
    assert ev.reason == f"the construction broke at Claim 1: {exc}"
    assert ev.trail == (Step("Construction failed at Claim 1", "Claim 1", {"message": str(exc)}),)
    assert ev.prec_bits is None and ev.margin is None and ev.certificates == ()
    full = check_proposition1(inst)  # Assumption 1 fails: the unmet hypothesis leads the reason
    assert full.verdict == "hypotheses-unmet" and full.reason.endswith(f"; the construction broke at Claim 1: {exc}")


# -- certify_construction_rank -------------------------------------------------

def _spy_lazy(monkeypatch, first=None):
    """Record every call of the lazy certifier (args, kwargs); ``first`` replaces the first call."""
    calls = []
    real = p1.certify_rank_lower_bound_lazy

    def spy(mid, k, minor_ball, **kw):
        calls.append((mid.shape, k, kw))
        if first is not None and len(calls) == 1:
            return first(k)
        return real(mid, k, minor_ball, **kw)

    monkeypatch.setattr(p1, "certify_rank_lower_bound_lazy", spy)
    return calls


def _spy_float(monkeypatch):
    seen = []
    real = p1.feature_columns_float_ball

    def spy(*a, **kw):
        seen.append(kw["backend"])
        return real(*a, **kw)

    monkeypatch.setattr(p1, "feature_columns_float_ball", spy)
    return seen


def _plain_then_accurate(tiers) -> bool:
    """The float path's enclosures: the logits' products plain first, then accurate."""
    return isinstance(tiers, tuple) and len(tiers) == 2 and all(callable(t) for t in tiers)


def test_block_minor_gets_the_callers_options(monkeypatch):
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)
    calls, backends = _spy_lazy(monkeypatch), _spy_float(monkeypatch)
    cert = certify_construction_rank(inst, con, con.target, prec=160, method="float", backend="numpy")
    assert len(calls) == 1
    shape, k, kw = calls[0]
    assert shape == (con.target, con.Z.shape[1]) and k == con.target
    assert kw["cols"] == con.minor_columns(con.target) and len(kw["cols"]) == con.target
    assert (kw["prec"], kw["max_prec"], kw["method"], kw["backend"]) == (160, 512, "float", "numpy")
    assert _plain_then_accurate(kw["minor_float"]) and backends == ["numpy"]  # the float path used the caller's backend
    assert cert.decision is Decision.TRUE and cert.method.startswith("float64 verification")
    assert cert.method.endswith(BLOCKS) and cert.rows == con.basis and cert.cols == kw["cols"]
    calls.clear()
    certify_construction_rank(inst, con, con.target, prec=1024, method="arb")
    assert (calls[0][2]["prec"], calls[0][2]["max_prec"], calls[0][2]["method"], calls[0][2]["backend"]) \
        == (1024, 1024, "arb", None)


def test_default_precision_and_method():
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)
    cert = certify_construction_rank(inst, con, con.target)
    assert cert.prec_bits == 128 and cert.method.startswith("arb: ") and cert.method.endswith(BLOCKS)


def _undecided(k):
    """A block minor that decided nothing (patched in)."""
    return RankLowerBound(k, tuple(range(k)), tuple(range(k)), Decision.UNDECIDED, 53, "patched", float("inf"), 0.0, k)


def test_fallback_minor_gets_the_callers_options(monkeypatch):
    """Block minor undecided: the pivoted-QR minor of the rows is tried with the same options."""
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)

    calls, backends = _spy_lazy(monkeypatch, first=_undecided), _spy_float(monkeypatch)
    cert = certify_construction_rank(inst, con, con.target, prec=160, method="float", backend="numpy")
    assert len(calls) == 2 and "cols" in calls[0][2] and "cols" not in calls[1][2]
    kw = calls[1][2]
    assert (kw["prec"], kw["max_prec"], kw["method"], kw["backend"]) == (160, 512, "float", "numpy")
    assert _plain_then_accurate(kw["minor_float"]) and backends == ["numpy"]
    assert calls[1][0] == (con.target, con.Z.shape[1])
    assert cert.decision is Decision.TRUE and not cert.method.endswith(BLOCKS)


def test_no_fallback_message_names_the_shape(monkeypatch):
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)

    _spy_lazy(monkeypatch, first=_undecided)
    monkeypatch.setattr(p1, "PIVOTED_QR_LIMIT", con.Z.size - 1)
    cert = certify_construction_rank(inst, con, con.target)
    T, Hd = con.Z.shape
    assert (T, Hd) == (5, 10)
    assert cert.method == (f"patched{BLOCKS}; no fallback: a pivoted QR of the whole {T} x {Hd} Z exceeds "
                           f"{con.Z.size - 1} entries")
    assert cert.decision is Decision.UNDECIDED


def test_rows_beyond_the_induction_and_rows_of_z():
    """Random contexts, T above the target: the induction's basis is not the
    first rows; k = |basis| + 1 takes one more row (pivoted-QR minor), and the
    certificate names rows of Z (not of the reordered Z[rows])."""
    inst = make_instance(H=2, n=3, d=5, T=8, context="random", seed=0)
    con = build_key_query_weights(inst, seed=0)
    assert con.basis == (0, 1, 2, 3, 7) and con.target == 5
    exact = certify_construction_rank(inst, con, 5)
    assert exact.decision is Decision.TRUE and exact.rows == (0, 1, 2, 3, 7) and exact.method.endswith(BLOCKS)
    more = certify_construction_rank(inst, con, 6)
    assert more.decision is Decision.TRUE and more.certified_k == 6 and not more.method.endswith(BLOCKS)
    assert set(more.rows) <= set(range(inst.T)) and len(set(more.rows)) == 6
    assert set(more.rows) <= {0, 1, 2, 3, 7, 4}  # the basis first, then row 4 (the first other row)
    for c in (exact, more):  # the named minor of Z is the nonsingular one
        assert all(isinstance(i, int) for i in c.rows)
        assert np.linalg.matrix_rank(con.Z[np.ix_(list(c.rows), list(c.cols))]) == c.k


def test_k_above_the_rows_is_false_not_a_crash():
    inst = make_instance(H=1, n=2, d=3, T=5, seed=0)
    con = build_key_query_weights(inst, seed=0)
    cert = certify_construction_rank(inst, con, 4)
    assert cert.decision is Decision.FALSE and cert.rows == () and cert.certified_k == 0


# -- the trail ---------------------------------------------------------------

def test_trail_of_every_head():
    inst = _shared()
    con = dataclasses.replace(build_key_query_weights(inst, seed=0), seconds=1.23456)
    steps = construction_trail(inst, con)
    for s in steps:
        assert isinstance(s, Step) and s.title and s.uses and isinstance(s.data, dict)
    assert [s.title for s in steps] == [
        "Setting", "Head 1: base of the induction (fit 3 examples)",
        "Head 2: induction step (fit 2 new examples, saturate 3)",
        "Head 3: induction step (fit 2 new examples, saturate 5)",
        "Factorisation W^h = W_K^h (W_Q^h)^T"]
    assert steps[0] == Step("Setting", "Thm. 1 / Prop. 1",
                            {"T": 7, "n": 3, "d": 5, "H": 3, "d_h": 3, "r": 3, "target rank min(H(r-1)+1, T)": 7,
                             "backend": "numpy", "seconds": {"construction": 1.235}})
    h1 = con.heads[0]
    assert steps[1] == Step(steps[1].title, "Claim 1 (App. B.1): logits log s, b = E^+ a, W = B Q^+",
                            {"J (examples fitted)": [0, 1, 2], "targets s^(j)": brief(h1.targets),
                             "rows independent for free (head 1's output on them already independent)": [],
                             "sigma_min of the new rows": h1.sigma_min_limit, "rank after head": 3})
    assert np.asarray(brief(h1.targets)).shape == (3, 3)
    e = np.asarray(inst.queries)
    for step, hs, before, new, rank in ((steps[2], con.heads[1], [0, 1, 2], [3, 4], 5),
                                        (steps[3], con.heads[2], [0, 1, 2, 3, 4], [5, 6], 7)):
        c2 = hs.claim2
        lemma3 = brief(e[list(hs.new_rows)] @ c2.w)
        assert np.abs(lemma3).max() < 1e-12 and len(lemma3) == 2
        assert step == Step(step.title, "Claim 2 = Claim 1 on J + Lemma 3 (W' = v w^T) + Lemma 4 (c), Lemma 1, App. B.2", {
            "I (rows already independent)": before, "J (examples this head fits)": new,
            "row operations: max |A_ji|": float(np.abs(hs.coefficients).max()),
            "targets s^(j)": brief(hs.targets),
            "Lemma 3: w . e^(j) for j in J (should be 0)": lemma3,
            "Lemma 3: saturated argmax tokens i*": brief(c2.istar),
            "Lemma 3: smallest gap g": float(c2.gap.min()), "Lemma 4: largest spread R": float(c2.spread.max()),
            "App. B.2: eps": hs.eps, "App. B.2: c": hs.c, "App. B.2: x_max": hs.x_max, "App. B.2: kappa": hs.kappa,
            "a-priori bound x_max*eps*kappa": hs.perturbation_bound,
            "actual ||Y_c - Y_inf||_2": hs.perturbation_actual, "sigma_min(Y_inf)": hs.sigma_min_limit,
            "rows independent for free": [], "Lemma 1: rank after head >=": rank})
        assert len(step.data["Lemma 3: saturated argmax tokens i*"]) == len(before)
        assert step.data["row operations: max |A_ji|"] > 0 and step.data["Lemma 3: smallest gap g"] > 0
        assert 0 < hs.perturbation_actual <= hs.perturbation_bound < hs.sigma_min_limit
    assert steps[2].data["Lemma 4: largest spread R"] == 0.0 and steps[3].data["Lemma 4: largest spread R"] > 0
    assert steps[-1] == Step("Factorisation W^h = W_K^h (W_Q^h)^T", "Sec. 2 (rank W^h <= d_h; thin SVD)",
                             {"rank W^h": [3, 3, 3], "d_h": 3, "max relative factorisation error": 0.0})


def test_trail_names_the_heads_not_needed():
    inst = make_instance(H=3, n=3, d=5, T=3, seed=0)
    con = build_key_query_weights(inst, seed=0)
    steps = construction_trail(inst, con)
    assert len(con.heads) == 1 and len(steps) == 5
    for h, s in zip((2, 3), steps[2:4]):
        assert s == Step(f"Head {h}: not needed (rank 3 already reached); W^{h} = 0, uniform attention",
                         "Prop. 1 (heads beyond the target rank are free)", {})
    assert steps[-1].title.startswith("Factorisation") and steps[-1].data["rank W^h"] == [3, 0, 0]
    ev = check_proposition1(inst)
    well_formed(ev)
    assert ev.verdict == "verified" and ev.measured["certified_rank"] == 3 and len(ev.trail) == 6


def test_trail_records_rows_free_of_charge():
    """Random contexts with T above the target: a row becomes independent
    without being targeted (App. B's free rows), and the trail says which."""
    inst = make_instance(H=2, n=3, d=5, T=8, context="random", seed=0)
    con = build_key_query_weights(inst, seed=0)
    steps = construction_trail(inst, con)
    frees = [(s.data.get("rows independent for free (head 1's output on them already independent)"),
              s.data.get("rows independent for free")) for s in steps[1:1 + len(con.heads)]]
    assert frees == [(brief(con.heads[0].free_rows), None)] + [(None, brief(hs.free_rows)) for hs in con.heads[1:]]
    assert any(len(hs.free_rows) for hs in con.heads)


# -- figure data -------------------------------------------------------------

def test_construction_rank_helper(monkeypatch):
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=3)
    seeds = []
    real = p1.build_key_query_weights
    monkeypatch.setattr(p1, "build_key_query_weights", lambda i, **kw: seeds.append(kw) or real(i, **kw))
    assert p1._construction_rank(inst, 4) == (5, None)
    assert p1._construction_rank(inst, 5, certify=True) == (5, 5)
    assert seeds == [{"seed": 4}, {"seed": 5}]


def test_random_weights_rank_helper(monkeypatch):
    inst = make_instance(H=2, n=3, d=5, T=8, context="random", seed=0)
    seen = []
    real = p1.model.feature_matrix
    monkeypatch.setattr(p1.model, "feature_matrix", lambda E, e, **kw: seen.append((E, e, kw)) or real(E, e, **kw))
    assert p1._random_weights_rank(inst, 7) == 8
    (E, e, kw), = seen
    assert E is inst.contexts and e is inst.queries
    np.testing.assert_array_equal(kw["W"], np.random.default_rng(7).standard_normal((2, 5, 5)))


def test_rank_vs_heads_data():
    out = p1.rank_vs_heads_data(heads=(1, 2), n=3, d=5)
    assert out == {"n": 3, "d": 5, "heads": [1, 2], "T": [6, 8], "bound_thm1": [3, 5], "cap_prop2": [3, 5],
                   "construction_shared": [3, 5], "construction_shared_certified": [3, 5],
                   "random_weights_shared": [3, 5], "random_weights_random_contexts": [5, 8]}


def test_rank_sweep_data():
    out = p1.rank_sweep_data()
    assert out == {"H": 3,
                   "n_sweep": {"n": [2, 3, 4, 5, 6, 7], "d_h": 4, "d": 9, "rank": [4, 7, 10, 10, 10, 10],
                               "bound": [4, 7, 10, 10, 10, 10]},
                   "dh_sweep": {"d_h": [1, 2, 3, 4, 5, 6, 7], "n": 4, "d": 7, "rank": [1, 4, 7, 10, 10, 10, 10],
                                "bound": [1, 4, 7, 10, 10, 10, 10]}}
    assert p1.rank_sweep_data(H=1)["n_sweep"]["rank"] == [2, 3, 4, 4, 4, 4]


def test_a_cap_from_repeated_stored_inputs_is_a_verdict_on_the_stored_data():
    """A repeated example caps rank(Z) for ANY weights.  Read exactly, that is the data;
    read at the dtype's precision (every float stands for an interval, dyadic or not), the
    equality holds for the stored values only, and the reason says so for either array."""
    from proofs.mahdavi2024.proposition1_rank_induction import check_proposition1
    from verifier.data.instances import from_arrays
    rng = np.random.default_rng(0)
    E, e, y = rng.standard_normal((5, 3, 5)), rng.standard_normal((5, 5)), rng.standard_normal((5, 1))
    E[4], e[4] = E[0], e[0]
    dy = lambda a: np.round(a * 4) / 4  # noqa: E731  (dyadic: still intervals under the dtype reading)
    assert "for ANY weights" not in (check_proposition1(from_arrays(E, e, y, H=2)).reason or "")
    for Ec, ec in ((E, dy(e)), (dy(E), e)):
        reason = check_proposition1(from_arrays(Ec, ec, y, H=2, reading="dtype")).reason
        assert "rank(Z) <= 4 < 5 for ANY weights" in reason and "counterexample at the stored values" in reason


def test_the_float_path_tries_plain_products_then_accurate_ones(monkeypatch):
    """The minor enclosed with the logits' products plain first; where that
    ball is too wide to certify, with accurate products (both rigorous)."""
    from verifier.arith.float_certificates import FloatBall

    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)
    real, seen = p1.feature_columns_float_ball, []

    def spy(*a, **kw):
        seen.append(kw["accurate"])
        fb = real(*a, **kw)
        return fb if kw["accurate"] else FloatBall(fb.mid, fb.rad + 1e3)  # the plain ball made useless

    monkeypatch.setattr(p1, "feature_columns_float_ball", spy)
    cert = certify_construction_rank(inst, con, con.target, method="float", backend="numpy")
    assert seen == [False, True] and cert.decision is Decision.TRUE and "enclosure 2 of 2" in cert.method
    seen.clear()
    monkeypatch.setattr(p1, "feature_columns_float_ball", lambda *a, **kw: seen.append(kw["accurate"]) or real(*a, **kw))
    cert = certify_construction_rank(inst, con, con.target, method="float", backend="numpy")
    assert seen == [False] and cert.decision is Decision.TRUE and "enclosure" not in cert.method


def test_large_minors_go_to_accurate_products_at_once(monkeypatch):
    inst = make_instance(H=2, n=3, d=5, context="shared", seed=0)
    con = build_key_query_weights(inst, seed=0)
    real, seen = p1.feature_columns_float_ball, []
    monkeypatch.setattr(p1, "feature_columns_float_ball", lambda *a, **kw: seen.append(kw["accurate"]) or real(*a, **kw))
    monkeypatch.setattr(p1, "PLAIN_FIRST_UP_TO", con.target - 1)
    cert = certify_construction_rank(inst, con, con.target, method="float", backend="numpy")
    assert seen == [True] and cert.decision is Decision.TRUE
    seen.clear()
    monkeypatch.setattr(p1, "PLAIN_FIRST_UP_TO", con.target)
    certify_construction_rank(inst, con, con.target, method="float", backend="numpy")
    assert seen == [False]
