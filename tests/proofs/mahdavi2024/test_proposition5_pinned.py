"""Prop. 5's deciding lines and evidence pinned (mutation testing, issue 9):
every path of check_proposition5 (verified; refuted when a certified rank
exceeds a lowered cap; the zero-sum c = 0 sharper cap; vacuous sizes, with and
without the hypothesis; non-constant token sums naming the token that differs;
a failed symbolic proof or dependent null vectors leaving the cap undecided;
the Prop. 1 construction failing) returns well-formed evidence with the right
numbers; prec and seed reach every callee; the helpers' defaults and draws."""
import dataclasses

import numpy as np

import proofs.mahdavi2024.proposition5_sum_constant_cap as p5
from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from proofs.mahdavi2024.proposition5_sum_constant_cap import (
    build_sum_constant_contexts,
    check_proposition5,
    symbolic_proofs,
    token_sums,
    zero_sum_instance,
)
from verifier.data.instances import from_arrays, make_instance, rng_for
from verifier.errors import ConstructionFailed
from verifier.statements.evidence import Hypothesis, Step

HYP = "1_d^T x = c for every context token"
LABELS = ["random", "one-hot (huge logits)", "uniform (tiny logits)", "Prop. 1 construction"]
METHOD = "sympy proof + exact token sums + arb balls"
ANN = "Z v in balls (consistency, not proof)"
TITLES = ["exact token sums",
          "sympy: 1^T z_h = c for every head; tiny instance: every (cap+1)-minor of Z(s) vanishes",
          "null vectors of Z independent => rank(Z) <= Hd - #vectors",
          "weights tried: Z v contains 0 in balls; certified rank(Z) lower bounds"]
USES = ["Prop. 5 hypothesis", "App. I", "App. I", "Eqs. (1)-(7)"]
DEFAULT_VERIFIED = "conclusion holds on the instance (hypotheses: certified)"


def well_formed(ev, *, claimed):
    assert ev.statement == "proposition5"
    assert ev.claimed == {"rank(Z) <=": claimed, "for": "any weights"}
    assert isinstance(ev.measured, dict) and ev.measured
    assert ev.method == METHOD
    assert isinstance(ev.prec_bits, int) and ev.prec_bits >= 64
    assert isinstance(ev.reason, str) and ev.reason
    assert len(ev.hypotheses) == 1 and ev.hypotheses[0].name == HYP and ev.hypotheses[0].detail
    assert [s.title for s in ev.trail] == TITLES and [s.uses for s in ev.trail] == USES
    for s in ev.trail:
        assert isinstance(s, Step) and isinstance(s.data, dict) and s.data
    assert len(ev.certificates) >= 4
    for c in ev.certificates[:3]:  # the sympy identities (SymbolicIdentity.to_dict, as in Prop. 2)
        assert isinstance(c, dict) and c["claim"] and c["method"].startswith("sympy") and c["sizes"]
    for c in ev.certificates[3:]:
        assert isinstance(c, dict) and isinstance(c.get("kind"), str) and c["kind"]


def _sumconst(**kw):
    return make_instance(**{"H": 2, "n": 2, "d": 3, "T": 6, "context": "sumconst", "seed": 0, **kw})


def _per_weights(ev):
    return {k: v for k, v in ev.measured.items() if isinstance(v, dict)}


def _check_weight_certificates(ev, labels, n_vectors, prec=128):
    """One certificate per weight set: its rank bound (the measured numbers) and,
    with null vectors, Z v in balls over all of them."""
    certs = [c for c in ev.certificates if c.get("kind", "").startswith("weights: ")]
    assert [c["kind"] for c in certs] == [f"weights: {label}" for label in labels]
    for label, c in zip(labels, certs):
        rl = c["rank_lower_bound"]
        assert rl["certified_k"] == ev.measured[label]["certified_rank_lower"] and rl["prec_bits"] == prec
        if n_vectors:
            ann = c[ANN]
            assert ann["decision"] == "true" and ann["vectors"] == n_vectors
            assert ann["entries_excluding_zero"] == [] and ann["max_abs_upper"] < 1e-20
        else:
            assert set(c) == {"kind", "rank_lower_bound"}


# -- check_proposition5: every path --------------------------------------------

def test_verified_path_numbers():
    ev = check_proposition5(_sumconst())
    well_formed(ev, claimed=5)
    assert ev.verdict == "verified" and ev.certified and ev.prec_bits == 128
    assert ev.reason == DEFAULT_VERIFIED  # best == claimed: nothing exceeds, not vacuous
    assert ev.hypotheses == (Hypothesis(HYP, "certified", "exact sums: all equal to c = 1 (exact equality of the values given)"),)
    per = {"random": {"certified_rank_lower": 5, "numerical_rank": 5},
           "one-hot (huge logits)": {"certified_rank_lower": 4, "numerical_rank": 4},
           "uniform (tiny logits)": {"certified_rank_lower": 5, "numerical_rank": 5},
           "Prop. 1 construction": {"certified_rank_lower": 5, "numerical_rank": 5}}
    assert ev.measured == {"c": "1", "cap H(d-1)+1": 5, "proved rank(Z) <=": 5, "T": 6, "Hd": 6,
                           "best certified rank": 5, "gap to cap": 0, "vacuous at these sizes": None, **per}
    assert ev.margin == 0
    size_free, expanded, tiny = symbolic_proofs(2, 2, 3, zero_sum=False)
    assert ev.certificates[0]["claim"] == size_free.to_dict()["claim"]
    assert ev.certificates[1]["sizes"] == {"H": 2, "n": 2, "d": 3} and ev.certificates[1]["holds"]
    assert ev.certificates[2]["sizes"] == {"rows": 6, "cols": 6, "k": 6} and ev.certificates[2]["holds"]
    assert ev.certificates[3] == {"kind": "null vectors of Z (exact integers)", "c": "1",
                                  "vectors": [[1, 1, 1, -1, -1, -1]], "independent": True}
    assert len(ev.certificates) == 3 + 1 + 4
    _check_weight_certificates(ev, LABELS, 1)
    assert ev.trail[0].data == {"constant": True, "c": "1"}
    assert ev.trail[1].data == {"all hold": True}
    assert ev.trail[2].data == {"vectors": 1, "bound": 5}
    assert ev.trail[3].data == per


def test_refuted_when_a_certified_rank_exceeds_a_lowered_cap():
    ev = check_proposition5(_sumconst(), claimed_bound=4.0)
    well_formed(ev, claimed=4)
    assert ev.verdict == "refuted" and ev.certified
    # one-hot certifies 4 = claimed: not "over" (strictly greater only)
    assert ev.reason == ("certified rank(Z) 5 > claimed 4 for weights: random, uniform (tiny logits), "
                         "Prop. 1 construction; refutes the variant (claimed_bound: the cap H(d-1)+1 replaced by "
                         "the caller's), not the statement")
    assert ev.margin == 4 - 5  # claimed - best
    assert ev.measured["gap to cap"] == 5 - 5 and ev.measured["cap H(d-1)+1"] == 5  # cap - best
    assert ev.measured["vacuous at these sizes"] is None and ev.measured["proved rank(Z) <="] == 5


def test_zero_sum_tokens_have_the_sharper_cap():
    inst = zero_sum_instance(n=2, d=3, T=6)
    ev = check_proposition5(inst)
    well_formed(ev, claimed=5)
    assert ev.verdict == "verified" and ev.reason == DEFAULT_VERIFIED
    assert ev.hypotheses == (Hypothesis(HYP, "certified", "exact sums: all equal to c = 0 (exact equality of the values given)"),)
    m = ev.measured
    assert (m["c"], m["cap H(d-1)+1"], m["proved rank(Z) <="], m["Hd"]) == ("0", 5, 4, 6)  # Hd - 2 vectors
    best = m["best certified rank"]
    assert best == 4 and m["gap to cap"] == 5 - best and ev.margin == 5 - best
    assert ev.certificates[2]["sizes"] == {"rows": 5, "cols": 6, "k": 5}  # the c = 0 tiny case: rank <= 4
    assert ev.certificates[3] == {"kind": "null vectors of Z (exact integers)", "c": "0",
                                  "vectors": [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], "independent": True}
    _check_weight_certificates(ev, LABELS, 2)
    assert ev.trail[2].data == {"vectors": 2, "bound": 4}
    sharp = check_proposition5(inst, claimed_bound=4)  # H(d-1): proved, best == claimed
    assert sharp.verdict == "verified" and sharp.margin == 0 and sharp.reason == DEFAULT_VERIFIED
    low = check_proposition5(inst, claimed_bound=3)
    assert low.verdict == "refuted" and low.margin == -1
    assert low.reason.startswith("certified rank(Z) 4 > claimed 3 for weights: ")


def test_vacuous_single_head_with_the_hypothesis_says_nothing_more():
    """H = 1, tokens summing to 1: proved AND vacuous: the proof decides, no vacuous reason."""
    ev = check_proposition5(_sumconst(H=1))
    well_formed(ev, claimed=3)
    assert ev.verdict == "verified" and ev.reason == DEFAULT_VERIFIED
    assert ev.measured["vacuous at these sizes"] == ("rank(Z) <= min(T, Hd) = 3 <= 3 for ANY data: "
                                                     "H = 1 makes H(d-1)+1 = d = Hd")
    assert ev.measured["Hd"] == 3 and ev.measured["proved rank(Z) <="] == 3  # H = 1: no null vector
    assert ev.certificates[3]["vectors"] == []
    _check_weight_certificates(ev, LABELS, 0)


def test_vacuous_single_head_without_the_hypothesis_gives_the_reason():
    ev = check_proposition5(make_instance(H=1, n=2, d=3, T=6, context="random"))
    why = "rank(Z) <= min(T, Hd) = 3 <= 3 for ANY data: H = 1 makes H(d-1)+1 = d = Hd"
    assert ev.verdict == "hypotheses-unmet" and ev.measured["vacuous at these sizes"] == why
    assert ev.reason.startswith("hypotheses not met on the instance: 1_d^T x = c for every context token refuted")
    assert f"; {why}; the conclusion holds on this instance all the same" in ev.reason
    assert ev.hypotheses[0].status == "refuted"
    assert ev.measured["c"] is None and ev.measured["proved rank(Z) <="] is None
    _check_weight_certificates(ev, LABELS, 0)


def test_vacuous_few_rows_names_t():
    ev = check_proposition5(_sumconst(T=4))
    well_formed(ev, claimed=5)
    why = "rank(Z) <= min(T, Hd) = 4 <= 5 for ANY data: T = 4 rows are too few"
    assert ev.measured["vacuous at these sizes"] == why and ev.reason == DEFAULT_VERIFIED
    assert ev.measured["best certified rank"] == 4 and ev.measured["gap to cap"] == 1 and ev.margin == 1
    # H = 1 with a claim below d: T is what makes it vacuous, not H
    ev1 = check_proposition5(from_arrays(build_sum_constant_contexts(2, 2, 3), np.eye(2, 3), H=1),
                             claimed_bound=2)
    assert ev1.measured["vacuous at these sizes"] == ("rank(Z) <= min(T, Hd) = 2 <= 2 for ANY data: "
                                                      "T = 2 rows are too few")
    assert ev1.verdict == "verified" and ev1.reason == DEFAULT_VERIFIED


def _off(E, t, i):
    E = E.copy()
    E[t, i, 0] = np.nextafter(E[t, i, 0], 10.0)
    return E


def test_non_constant_sums_name_the_token_that_differs():
    E = build_sum_constant_contexts(6, 2, 3, seed=1)
    inst = from_arrays(_off(E, 2, 1), np.eye(6, 3), H=2, d_h=2)  # token 5 = example 2, token 1 (odd >= n)
    s = token_sums(inst.contexts)
    ev = check_proposition5(inst)
    well_formed(ev, claimed=5)
    assert ev.hypotheses == (Hypothesis(HYP, "refuted", f"exact sums differ: 1 (example 0, token 0) vs {s[5]} "
                                                        "(example 2, token 1)"),)
    assert ev.verdict == "hypotheses-unmet"
    assert ev.measured["c"] is None and ev.measured["proved rank(Z) <="] is None
    assert ev.certificates[3] == {"kind": "null vectors of Z (exact integers)", "c": "1", "vectors": [],
                                  "independent": True}
    assert ev.trail[0].data == {"constant": False, "c": "1"} and ev.trail[2].data == {"vectors": 0, "bound": None}
    _check_weight_certificates(ev, LABELS, 0)
    # the first token is the odd one: c is read off token 0, the witness is token 1
    inst0 = from_arrays(_off(E, 0, 0), np.eye(6, 3), H=2, d_h=2)
    s0 = token_sums(inst0.contexts)
    h = check_proposition5(inst0).hypotheses[0]
    assert h.detail == f"exact sums differ: {s0[0]} (example 0, token 0) vs 1 (example 0, token 1)"


def test_a_failed_symbolic_proof_leaves_the_cap_undecided(monkeypatch):
    real = p5.symbolic_proofs

    def failing(*a, **kw):
        out = real(*a, **kw)
        return out[:2] + [dataclasses.replace(out[2], holds=False)]

    monkeypatch.setattr(p5, "symbolic_proofs", failing)
    ev = check_proposition5(_sumconst())
    assert ev.verdict == "inconclusive" and not ev.certified  # best 5 <= 5, 6 rows, nothing proved
    assert ev.trail[1].data == {"all hold": False}
    assert ev.reason == "the arithmetic could not decide the conclusion: raise --prec"
    assert ev.measured["vacuous at these sizes"] is None


def test_dependent_null_vectors_leave_the_cap_undecided(monkeypatch):
    seen = []

    def dependent(V):
        seen.append(V)
        return False

    monkeypatch.setattr(p5, "null_vectors_independent", dependent)
    ev = check_proposition5(_sumconst())
    assert seen == [[[1, 1, 1, -1, -1, -1]]]  # the vectors themselves are checked
    assert ev.verdict == "inconclusive" and ev.certificates[3]["independent"] is False


def test_construction_failure_is_recorded():
    inst = make_instance(H=2, n=3, d=5, T=8, context="sumconst", degenerate="repeated-queries", seed=0)
    try:
        build_key_query_weights(inst, seed=0)
    except ConstructionFailed as e:
        exc = e
    ev = check_proposition5(inst)
    well_formed(ev, claimed=9)
    assert ev.verdict == "verified"
    assert list(_per_weights(ev)) == LABELS[:3]
    assert ev.certificates[-1] == {"kind": "Prop. 1 construction failed", "message": str(exc)}
    _check_weight_certificates(ev, LABELS[:3], 1)
    assert len(ev.certificates) == 3 + 1 + 3 + 1


def test_prec_and_seed_reach_every_callee(monkeypatch):
    calls = []

    def spy(name):
        real = getattr(p5, name)

        def wrapped(*a, **kw):
            calls.append((name, kw))
            return real(*a, **kw)

        monkeypatch.setattr(p5, name, wrapped)

    for name in ("symbolic_proofs", "build_weight_trials", "build_key_query_weights", "certify_rank_lower_bound"):
        spy(name)
    seen_ann = []
    real_ann = p5.ball_annihilation
    monkeypatch.setattr(p5, "ball_annihilation", lambda Z, V: seen_ann.append(V) or real_ann(Z, V))
    inst = _sumconst()
    ev = check_proposition5(inst, prec=192, seed=3)
    assert calls[0] == ("symbolic_proofs", {"zero_sum": False, "seed": 3})
    assert calls[1:3] == [("build_weight_trials", {"seed": 3}), ("build_key_query_weights", {"seed": 3})]
    assert calls[3:] == [("certify_rank_lower_bound", {"prec": 192})] * 4
    assert seen_ann == [[[1, 1, 1, -1, -1, -1]]] * 4
    assert ev.prec_bits == 192
    assert all(c["rank_lower_bound"]["prec_bits"] == 192 for c in ev.certificates if "rank_lower_bound" in c)
    calls.clear()
    ev0 = check_proposition5(inst)  # defaults: prec 128, seed 0
    assert calls[:3] == [("symbolic_proofs", {"zero_sum": False, "seed": 0}),
                         ("build_weight_trials", {"seed": 0}), ("build_key_query_weights", {"seed": 0})]
    assert calls[3:] == [("certify_rank_lower_bound", {"prec": 128})] * 4
    assert ev0.prec_bits == 128
    calls.clear()
    check_proposition5(zero_sum_instance(n=2, d=3, T=6), seed=1)
    assert calls[0] == ("symbolic_proofs", {"zero_sum": True, "seed": 1})


# -- helpers ---------------------------------------------------------------------

def test_sum_constant_contexts_replay_their_stream():
    for (T, n, d), c, seed in (((3, 2, 4), 1, 0), ((2, 3, 3), 0, 5), ((1, 2, 3), -2.5, 7)):
        x = rng_for(seed, "proposition5").integers(-512, 513, (T, n, d)).astype(np.float64) / 256.0
        x[..., -1] = c - x[..., :-1].sum(axis=-1)
        got = build_sum_constant_contexts(T, n, d, c=c, seed=seed)
        assert got.dtype == np.float64 and np.array_equal(got, x)
    assert np.array_equal(build_sum_constant_contexts(3, 2, 4), build_sum_constant_contexts(3, 2, 4, c=1, seed=0))
    assert np.all(build_sum_constant_contexts(3, 2, 4).sum(axis=-1) == 1.0)


def test_sum_constant_contexts_draw_the_whole_grid_and_nothing_more():
    x = build_sum_constant_contexts(400, 8, 6, seed=2)[..., :-1] * 256.0
    assert x.min() == -512 and x.max() == 512  # both ends drawn, none beyond
    assert len(np.unique(x)) == 1025


def test_symbolic_proofs_draw_their_tiny_tokens(monkeypatch):
    seen = []
    real = p5.build_sum_constant_contexts
    monkeypatch.setattr(p5, "build_sum_constant_contexts", lambda *a, **kw: seen.append((a, kw)) or real(*a, **kw))
    symbolic_proofs(2, 2, 3, zero_sum=False)
    symbolic_proofs(2, 2, 3, zero_sum=True, seed=4)
    assert seen == [((6, 2, 3), {"c": 1, "seed": 0}), ((5, 2, 3), {"c": 0, "seed": 4})]


def test_token_sums_read_the_tokens_as_float64():
    x = np.array([[[0.1, 2.0, 3.0], [0.5, 0.25, -1.0]]], dtype=np.longdouble)
    f = x.astype(np.float64)
    assert token_sums(x) == token_sums(f)
    from flint import fmpq
    assert token_sums(f)[1] == fmpq(-1, 4)


def test_zero_sum_instance_defaults_and_streams():
    inst = zero_sum_instance()
    assert (inst.H, inst.T, inst.n, inst.d, inst.d_h) == (2, 8, 3, 4, 3)
    assert inst.kind == "sumconst-zero" and inst.seed == 0
    assert np.array_equal(inst.contexts, build_sum_constant_contexts(8, 3, 4, c=0, seed=0))
    assert np.array_equal(inst.queries, np.random.default_rng(1).standard_normal((8, 4)))
    assert np.array_equal(inst.labels, np.random.default_rng(0).standard_normal((8, 1)))
    other = zero_sum_instance(H=3, n=2, d=3, T=5, seed=2)
    assert (other.H, other.T, other.n, other.d, other.d_h, other.seed) == (3, 5, 2, 3, 2, 2)
    assert np.array_equal(other.contexts, build_sum_constant_contexts(5, 2, 3, c=0, seed=2))
    assert np.array_equal(other.queries, np.random.default_rng(3).standard_normal((5, 3)))
    assert np.array_equal(other.labels, np.random.default_rng(2).standard_normal((5, 1)))
