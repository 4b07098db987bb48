"""Prop. 2's check pinned (mutation testing, issue 9): every path of
check_proposition2 (shared and verified at the cap, refuted when unshared, a
claim below the proved cap that no trial exceeds, vacuous sizes, construction
skipped or failed) returns well-formed evidence with the right numbers, and
the options reach the weights measured."""
import numpy as np
import pytest

import proofs.mahdavi2024.proposition2_shared_context_cap as p2
from proofs.mahdavi2024.proposition2_shared_context_cap import check_proposition2, control_proposition2_not_shared
from verifier.arith.compare import Decision
from verifier.data.instances import from_arrays, make_instance
from verifier.errors import ConstructionFailed
from verifier.statements.evidence import Step

CLAIM = {"rank(Z) <=": 7, "for": "any weights"}
SHARED = dict(H=3, n=3, d=6, T=9, context="shared", seed=0)


def well_formed(ev, claimed=7):
    assert ev.statement == "proposition2"
    assert ev.claimed == {"rank(Z) <=": claimed, "for": "any weights"}
    assert isinstance(ev.measured, dict) and ev.method == "sympy proof + exact null vectors + arb balls"
    assert isinstance(ev.prec_bits, int) and isinstance(ev.reason, str)
    assert ev.hypotheses[0].name == "shared context E^(t) = E"
    assert ev.hypotheses[0].detail in (f"the {ev.measured['T']} contexts are one E (exact equality of the values given)",
                                       "the contexts differ (exact comparison of the values given)")
    assert (ev.hypotheses[0].status == "certified") == ev.hypotheses[0].detail.startswith(f"the {ev.measured['T']}")
    assert [s.uses for s in ev.trail] == ["Prop. 2 hypothesis", "App. E", "App. E", "Eqs. (1)-(7)", "Prop. 1, App. B"]
    for s in ev.trail:
        assert isinstance(s, Step) and s.title and isinstance(s.data, dict)
    for c in ev.certificates:  # sympy proofs are named by their claim, the others by their kind
        assert isinstance(c, dict) and isinstance(c.get("kind", c.get("claim")), str)
    assert [c["holds"] for c in ev.certificates[:3]] == [True, True, True]
    ranks = {k: v["certified_rank_lower"] for k, v in ev.measured.items() if isinstance(v, dict)}
    assert ev.margin == claimed - max(ranks.values())
    assert all(set(v) == {"certified_rank_lower", "numerical_rank"}
               for v in ev.measured.values() if isinstance(v, dict))
    assert ev.trail[3].data == {k: v for k, v in ev.measured.items() if isinstance(v, dict)}


def _spy(monkeypatch):
    calls = []
    real = p2.measure_weights

    def spy(instance, W_K, W_Q, null_vectors, *, prec, k=None):
        calls.append({"null_vectors": null_vectors, "prec": prec, "k": k})
        return real(instance, W_K, W_Q, null_vectors, prec=prec, k=k)

    monkeypatch.setattr(p2, "measure_weights", spy)
    return calls


def test_shared_context_at_the_cap(monkeypatch):
    calls = _spy(monkeypatch)
    ev = check_proposition2(make_instance(**SHARED), prec=160)
    well_formed(ev)
    assert ev.verdict == "verified" and ev.certified and ev.prec_bits == 160
    assert ev.reason == "conclusion holds on the instance (hypotheses: certified)"
    m = ev.measured
    assert (m["bound H(n-1)+1"], m["rank(S) <= Hn-(H-1)"], m["T"], m["Hd"]) == (7, 7, 9, 18)
    assert m["Assumptions 1, 2 (for tightness only)"] == "certified, certified"
    assert m["tight (rank = H(n-1)+1 certified)"] is True
    assert "Prop. 1 construction" in m["bound attained by"]
    assert all(m[label]["certified_rank_lower"] == 7 for label in m["bound attained by"])
    assert ev.margin == 0
    V = p2.stochastic_block_null_vectors(3, 3)
    assert [c["null_vectors"] for c in calls] == [V] * 4 and all(c["prec"] == 160 for c in calls)
    assert [c["k"] for c in calls] == [None, None, None, 7]  # the construction's minor: k = min(bound, T)
    null = [c for c in ev.certificates if c.get("kind") == "null vectors of S (exact integers)"][0]
    assert null == {"kind": "null vectors of S (exact integers)", "vectors": V, "independent": True}
    weights = [c for c in ev.certificates if c.get("kind", "").startswith("weights: ")]
    assert len(weights) == 4 and all("S v in balls (consistency, not proof)" in c for c in weights)
    assert ev.trail[0].data == {"shared": True, "status": "certified"}
    assert ev.trail[2].data == {"H-1": 2, "independent": True, "bound": 7}
    assert ev.trail[4].data == {"tight": True, "construction": "built"}


def test_unshared_contexts_refute_the_cap(monkeypatch):
    calls = _spy(monkeypatch)
    ev = control_proposition2_not_shared()
    well_formed(ev, claimed=ev.claimed["rank(Z) <="])
    assert ev.verdict == "hypotheses-unmet" and ev.hypotheses[0].status == "refuted"
    m = ev.measured
    assert m["rank(S) <= Hn-(H-1)"] is None and m["bound attained by"] == []
    assert m["tight (rank = H(n-1)+1 certified)"] is None
    assert all(c["null_vectors"] == [] and c["k"] is None for c in calls)
    assert "; certified rank(Z) 6 > claimed 3 for weights: random, one-hot (huge logits)" in ev.reason
    assert not any("S v in balls (consistency, not proof)" in c for c in ev.certificates)


def _zero_weights(monkeypatch):
    def trials(instance, *, seed=0):
        z = np.zeros((instance.H, instance.d, instance.d_h))
        return [("zero", z, z)]
    monkeypatch.setattr(p2, "build_weight_trials", trials)


def test_a_claim_below_the_proved_cap_is_not_verified_by_absent_evidence(monkeypatch):
    """Shared contexts, claim 6 < cap 7, no trial above 6 (zero weights, no construction): undecided."""
    _zero_weights(monkeypatch)
    ev = check_proposition2(make_instance(**SHARED), claimed_bound=6, tightness=False)
    well_formed(ev, claimed=6)
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.trail[4].data == {"tight": None, "construction": "skipped"}


@pytest.mark.parametrize("T, claimed, vacuous", [(9, 6, False), (6, 6, True), (5, 6, True)])
def test_vacuous_sizes_are_said(monkeypatch, T, claimed, vacuous):
    """Unshared contexts, nothing above the claim: the reason says when min(T, Hd) <= claim makes it vacuous."""
    _zero_weights(monkeypatch)
    inst = make_instance(H=3, n=3, d=6, T=T, seed=0)
    ev = check_proposition2(inst, claimed_bound=claimed, tightness=False)
    want = f"min(T, Hd) = {T} <= {claimed}: the bound holds for any data at these sizes"
    assert (want in ev.reason) is vacuous


def test_construction_conditions_and_failure(monkeypatch):
    built = []
    real = p2.build_key_query_weights

    def spy(instance, *, seed=0, **kw):
        built.append(seed)
        return real(instance, seed=seed, **kw)

    monkeypatch.setattr(p2, "build_key_query_weights", spy)
    check_proposition2(make_instance(**SHARED), seed=3)
    assert built == [3]
    check_proposition2(make_instance(**SHARED), tightness=False)
    check_proposition2(make_instance(**{**SHARED, "T": 6}))  # T < bound: nothing to attain
    check_proposition2(make_instance(H=3, n=3, d=6, d_h=2, T=9, context="shared", seed=0))  # d_h < n
    assert built == [3]

    def fail(instance, **kw):
        raise ConstructionFailed("Claim 1", "planted")

    monkeypatch.setattr(p2, "build_key_query_weights", fail)
    ev = check_proposition2(make_instance(**SHARED))
    assert ev.trail[4].data == {"tight": None, "construction": "failed"}
    assert "Prop. 1 construction" not in ev.measured


def test_weight_trials_get_the_seed(monkeypatch):
    seeds = []
    real = p2.build_weight_trials
    monkeypatch.setattr(p2, "build_weight_trials", lambda inst, *, seed=0: seeds.append(seed) or real(inst, seed=seed))
    check_proposition2(make_instance(**SHARED), tightness=False)
    check_proposition2(make_instance(**SHARED), seed=5, tightness=False)
    assert seeds == [0, 5]


def test_an_excluding_annihilation_ball_is_an_error(monkeypatch):
    """S v must contain 0 for row-stochastic S: a ball excluding it is a bug, never a verdict."""
    real = p2.measure_weights

    class Bad:
        decision = Decision.FALSE

        def to_dict(self):
            return {}

    def bad(*a, **k):
        r = real(*a, **k)
        return {**r, "annihilation": Bad()}

    monkeypatch.setattr(p2, "measure_weights", bad)
    with pytest.raises(RuntimeError, match="contradicting row-stochastic S"):
        check_proposition2(make_instance(**SHARED), tightness=False)


def test_zero_contexts_with_claim_zero_are_not_refuted():
    """rank(Z) = 0 for zero contexts: a claim of 0 is never refuted (no certified rank exceeds it)."""
    E = np.zeros((4, 3, 6))
    e = np.random.default_rng(0).standard_normal((4, 6))
    ev = check_proposition2(from_arrays(E, e, H=2, kind="zero"), claimed_bound=0, tightness=False)
    assert ev.verdict != "refuted"


def test_unshared_construction_gets_no_null_vectors_and_attains_nothing(monkeypatch):
    """Unshared contexts at T = cap: ranks equal to the cap are not 'the bound attained' (no bound is proved)."""
    calls = _spy(monkeypatch)
    ev = check_proposition2(make_instance(H=3, n=3, d=6, T=7, seed=0))
    assert len(calls) == 4 and all(c["null_vectors"] == [] and c["k"] is None for c in calls)
    assert ev.measured["bound attained by"] == []
    assert any(v["certified_rank_lower"] == 7 for v in ev.measured.values() if isinstance(v, dict))


def test_certificate_and_trail_contents():
    ev = check_proposition2(make_instance(**SHARED), tightness=False)
    assert ev.trail[1].data == {"all hold": True}
    for c in ev.certificates:
        if c.get("kind", "").startswith("weights: "):
            ann = c["S v in balls (consistency, not proof)"]
            assert isinstance(ann, dict) and ann["decision"] == "true"


def test_dependent_null_vectors_prove_nothing(monkeypatch):
    """The proof's premise 'the H-1 null vectors are independent' is checked, not assumed."""
    V = p2.stochastic_block_null_vectors(3, 3)
    monkeypatch.setattr(p2, "stochastic_block_null_vectors", lambda H, n: [V[0], V[0]])
    ev = check_proposition2(make_instance(**SHARED), tightness=False)
    assert ev.measured["rank(S) <= Hn-(H-1)"] is None
    assert ev.trail[2].data["independent"] is False
