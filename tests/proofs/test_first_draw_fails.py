"""A failed construction is not a counterexample (issue 32): for every existence statement of the
registry ("there are weights / a network / a W' ..."), instances on which the checker's OWN first draw
fails -- the first call of the step that draws its witness is made to fail (a tied W', a zero
projection, out-of-range IDs, a corrupted network, a construction that stops) -- never give a
certified refutation: the checker redraws, or says inconclusive, or refutes only by a proof that no
choice works (which does not depend on the draw).  A Hypothesis property over seeds, per statement.
"""
import importlib

import numpy as np
import pytest
from flint import arb, arb_mat, fmpq_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.arith.compare import Decision
from verifier.errors import ConstructionFailed
from verifier.statements import registry
from verifier.statements.runner import build_instance, run_check

M = "proofs.mahdavi2024."
D = "proofs.dana2025."
K = "proofs.kajitsuka2025."


def _stops(real):
    def f(*a, **k):
        raise ConstructionFailed("Claim 2", "the first draw failed (sabotaged by the test)")
    return f


def _tied_w_prime(real):  # v = 0: every entry of E W' e ties, Eq. (21) fails for this draw
    def f(*a, **k):
        v, w = real(*a, **k)
        return np.zeros_like(v), w
    return f


def _fit_missed(real):
    return lambda *a, **k: (Decision.FALSE, {"kind": "exact identity (sabotaged by the test)", "holds": False})


def _full_rank_jacobian(real):  # an exact Jacobian of rank T: the lifted labels look reachable
    def f(net, inputs):
        J = real(net, inputs)
        return fmpq_mat([[int(i == j) for j in range(J.ncols())] for i in range(J.nrows())])
    return f


def _dkl_too_big(real):
    return lambda *a, **k: arb(10)


def _zero_outputs(real):
    def f(*a, **k):
        A = real(*a, **k)
        return arb_mat(A.nrows(), A.ncols())
    return f


def _zero_route(real):
    def f(**k):
        rp = real(**k)
        return type(rp)(rp.e, rp.pos, 0 * rp.P, 0 * rp.Q, 0 * rp.V)
    return f


def _zero_gram(real):
    def f(N, d, seed, *a, **k):
        S, den, how = real(N, d, seed, *a, **k)
        return np.zeros_like(S), den, how + " (zeroed by the test)"
    return f


def _colliding_projection(real):
    return lambda E, seed=0, draw=0: [1] * np.asarray(E).shape[1]


def _flipped_network(real):
    return lambda ids, labels, C, **kw: real(ids, labels, C, **{**kw, "flip": (0, 0)})


def _ids_out_of_range(real):
    def f(keys, lam):
        dec, (items, s, z, o) = real(keys, lam)
        return dec, (items, s, None, None)
    return f


#: existence statement -> (module, function drawn first, sabotage of its first call)
FIRST_DRAW = {
    "theorem1": (M + "theorem1_memorization", "build_key_query_weights", _stops),
    "appendixC": (M + "theorem1_memorization", "build_key_query_weights", _stops),
    "proposition1": (M + "proposition1_rank_induction", "build_key_query_weights", _stops),
    "remark1": (M + "proposition1_rank_induction", "build_key_query_weights", _stops),
    "step2": (M + "step2_linear_readout", "build_key_query_weights", _stops),
    "claim1": (M + "claim1_fit_one_head", "exact_fit_decision", _fit_missed),
    "lemma3": (M + "lemma3_rank_one_saturation", "build_exact_saturation_vectors", _tied_w_prime),
    "claim2": (M + "claim2_fit_and_saturate", "build_saturation_vectors", _tied_w_prime),
    "proposition3": (M + "proposition3_relu_lower_bound", "jacobian", _full_rank_jacobian),
    "dana_prop3": (D + "prop3_circle_construction", "circle_dkl", _dkl_too_big),
    "dana_lemma2": (D + "lemma2_attention_rank", "attention_output_matrix", _zero_outputs),
    "dana_thm1_eps0": (D + "exact_route", "draw_route_parameters", _zero_route),
    "dana_corollary1": (D + "exact_route", "draw_route_parameters", _zero_route),
    "dana_contrib1": (D + "exact_route", "draw_route_parameters", _zero_route),
    "dana_corollary2": (D + "exact_route", "draw_route_parameters", _zero_route),
    "dana_thm2": (D + "thm2_entropy_bound", "gram_construction", _zero_gram),
    "dana_thm2_small_c": (D + "thm2_entropy_bound", "gram_construction", _zero_gram),
    "ks_contextual_mapping": (K + "contextual_mapping", "build_projection", _colliding_projection),
    "ks_ffn_memorization": (K + "ffn_memorization", "build_ffn", _flipped_network),
    "ks_ntp_memorization": (K + "ntp_memorization", "_ids", _ids_out_of_range),
    "ks_s2s_memorization": (K + "ntp_memorization", "_ids", _ids_out_of_range),
}


def test_every_existence_statement_has_a_first_draw_sabotage():
    reg = registry.load_all()
    assert set(FIRST_DRAW) == {sid for sid, s in reg.items() if s.implemented and s.exists}


def _first_call_fails(monkeypatch, module, name, sabotage):
    mod = importlib.import_module(module)
    real = getattr(mod, name)
    bad, calls = sabotage(real), []

    def first(*a, **k):
        calls.append(1)
        return bad(*a, **k) if len(calls) == 1 else real(*a, **k)

    monkeypatch.setattr(mod, name, first)
    return calls


@pytest.mark.parametrize("sid", sorted(FIRST_DRAW))
@settings(max_examples=3)
@given(seed=st.integers(0, 2**16))
def test_a_failed_first_draw_never_gives_a_certified_refutation(sid, seed):
    module, name, sabotage = FIRST_DRAW[sid]
    with pytest.MonkeyPatch.context() as mp:
        calls = _first_call_fails(mp, module, name, sabotage)
        inst = build_instance(sid, seed=seed)
        ev = run_check(sid, inst, seed=seed)
    assert ev.verdict != "error", (sid, seed, ev.reason)
    if ev.refutation is not None:  # only a proof that no choice works, which no draw decides
        assert ev.refutation.kind in ("no-choice-works", "failed-construction"), (sid, ev.refutation)
    if ev.verdict == "refuted":  # e.g. dana_thm2's negative RHS (C >= 1/2): the same without the sabotage
        assert ev.refutation.kind == "no-choice-works"
        assert run_check(sid, inst, seed=seed).refutation == ev.refutation
    else:
        assert calls or ev.verdict == "hypotheses-unmet", f"{sid}: the sabotaged step was never reached"
