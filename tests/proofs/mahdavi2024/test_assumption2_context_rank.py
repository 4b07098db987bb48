"""Assumption 2: rank E^(t) = n for every context.  Drawn instances agree
with exact ranks (both the exact and the ball path), rank-deficient contexts
are refuted with the example index and an exact null combination, the ball
path is used for large contexts, and the negative controls are rejected."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.assumption2_context_rank import check_assumption2, distinct_contexts
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.data.instances import CONTEXT_KINDS, from_arrays, make_instance
from verifier.data.strategies import attention_instances
from verifier.statements import registry
from verifier.statements.at_precision import EXACT_ONLY
from verifier.statements.runner import run_control


def _null(ev):
    return [c for c in ev.certificates if c["kind"] == "null combination"]


@given(attention_instances(context=st.sampled_from(CONTEXT_KINDS), T=st.integers(1, 6)))
def test_drawn_contexts_have_rank_n(inst):
    ev = check_assumption2(inst)
    assert all(exact_rank(E) == inst.n for E in inst.contexts)  # the oracle
    assert ev.verdict == "verified" and ev.certified
    assert ev.hypotheses == ()  # a property of the data
    assert ev.measured["at the data's precision"] == EXACT_ONLY  # generated data are exact
    summary = next(c for c in ev.certificates if c["kind"] == "summary")
    assert summary["distinct_contexts"] == (1 if inst.shared_context else inst.T)


@given(attention_instances(T=st.integers(1, 4), n=st.integers(2, 4)))
def test_ball_path_agrees(inst):
    """exact_entries=0 sends every context through the ball certificate."""
    ev = check_assumption2(inst, exact_entries=0)
    assert ev.verdict == "verified"
    summary = next(c for c in ev.certificates if c["kind"] == "summary")
    assert summary["ball_minors"] == summary["distinct_contexts"]
    minor = next(c for c in ev.certificates if c["kind"] == "ball minor")
    assert len(minor["rows"]) == len(minor["cols"]) == inst.n and minor["residual_norm_upper"] < 1


@given(attention_instances(degenerate="rank-deficient-context", T=st.integers(1, 5)))
def test_rank_deficient_contexts_are_refuted_with_null_combinations(inst):
    ev = check_assumption2(inst)
    assert ev.verdict == "refuted" and ev.exit_code == 1 and ev.certified
    assert ev.measured["rank_deficient"] == list(range(min(inst.T, 10)))
    for cert in _null(ev):
        E = inst.contexts[cert["example"]]
        assert exact_matvec_is_zero(E.T, cert["coefficients"])
        assert cert["rank"] == inst.n - 1


@given(st.integers(0, 2**16), st.integers(0, 3))
def test_one_bad_example_among_good_ones(seed, bad):
    rng = np.random.default_rng(seed)
    E = np.round(rng.standard_normal((4, 3, 6)) * 512) / 512
    E[bad, 2] = 3 * E[bad, 0] - E[bad, 1]  # exact on the grid
    ev = check_assumption2(from_arrays(E, rng.standard_normal((4, 6))))
    assert ev.verdict == "refuted"
    (cert,) = _null(ev)
    assert cert["example"] == bad and cert["same_context_as"] == [bad]
    assert exact_matvec_is_zero(E[bad].T, cert["coefficients"])


def test_large_contexts_use_ball_minors():
    inst = make_instance(H=2, n=12, d=100, d_h=2, seed=0)  # 1200 entries > EXACT_ENTRIES
    ev = check_assumption2(inst)
    assert ev.verdict == "verified" and ev.method == "exact rationals and arb balls"
    assert ev.prec_bits == 128
    assert any(c["kind"] == "ball minor" for c in ev.certificates)


def test_many_large_contexts_go_through_one_batched_gram_certificate(monkeypatch):
    """GRAM_FROM distinct large contexts or more: one batched Gram certificate
    (verifier/arith/gram_blocks.py) decides them, with the same verdict as the
    per-context ball minors (the batch switched off) and the exact ranks;
    a rank-deficient one among them is left to the per-context path, which
    refutes it with its exact null combination."""
    import proofs.mahdavi2024.assumption2_context_rank as a2

    inst = make_instance(H=2, n=12, d=100, d_h=2, T=a2.GRAM_FROM + 3, seed=1)  # 1200 entries > EXACT_ENTRIES
    ev = check_assumption2(inst)
    assert ev.verdict == "verified" and ev.certified and ev.method == "float64 verification (batched Gram)"
    summary = next(c for c in ev.certificates if c["kind"] == "summary")
    assert summary["gram_batched"] == summary["distinct_contexts"] == inst.T and summary["ball_minors"] == 0
    monkeypatch.setattr(a2, "GRAM_FROM", 10**9)
    per_context = check_assumption2(inst)
    assert per_context.verdict == "verified" and per_context.method == "exact rationals and arb balls"
    monkeypatch.undo()
    E = np.round(np.array(inst.contexts) * 512) / 512
    E[7, 4] = E[7, 0] - 2 * E[7, 3]  # exact on the grid
    bad = from_arrays(E, inst.queries, inst.labels, H=2, d_h=2)
    ev = check_assumption2(bad)
    assert ev.verdict == "refuted" and ev.certified and ev.measured["rank_deficient"] == [7]
    (cert,) = _null(ev)
    assert cert["example"] == 7 and exact_matvec_is_zero(E[7].T, cert["coefficients"])
    assert exact_rank(E[7]) == inst.n - 1 and all(exact_rank(E[t]) == inst.n for t in range(inst.T) if t != 7)


def test_undecidable_context_is_inconclusive():
    """Balls cannot certify a singular context and exact rank is switched off."""
    inst = make_instance(H=1, n=3, d=5, d_h=2, degenerate="rank-deficient-context", seed=0)
    ev = check_assumption2(inst, exact_entries=0, fallback_entries=0)
    assert ev.verdict == "inconclusive" and ev.exit_code == 3
    assert "--prec" in ev.reason


def test_shared_context_is_checked_once():
    inst = make_instance(H=5, n=3, d=5, context="shared", seed=0)
    assert list(distinct_contexts(inst.contexts)) == [0]
    assert check_assumption2(inst).measured["distinct_contexts"] == 1


def test_negative_controls_are_rejected():
    controls = registry.get("assumption2").controls
    assert len(controls) >= 2
    for control in controls:
        ev, rejected = run_control("assumption2", control)
        assert rejected, (control.description, ev.verdict, ev.reason)
        assert _null(ev)


def test_float32_computed_token_fails_at_the_data_precision(tmp_path):
    """token 3 = token 1 + token 2 computed in float32: rank 3 exactly, rank 2
    at float32 precision; integer data stay exact."""
    from verifier.data.instances import load_data

    rng = np.random.default_rng(2)
    E = rng.standard_normal((3, 3, 6)).astype(np.float32)
    E[1, 2] = E[1, 0] + E[1, 1]
    path = tmp_path / "f32.npz"
    np.savez(path, contexts=E, queries=rng.standard_normal((3, 6)).astype(np.float32))
    ev = check_assumption2(load_data(path))
    assert ev.verdict == "refuted" and "context 1" in ev.reason and ev.measured["on the stored values"] == "holds"
    assert check_assumption2(load_data(path, exact_input=True)).verdict == "verified"
    ints = tmp_path / "int.npz"
    np.savez(ints, contexts=rng.integers(-5, 6, (3, 3, 6)), queries=rng.integers(-5, 6, (3, 6)))
    ev = check_assumption2(load_data(ints))
    assert ev.measured["at the data's precision"] == EXACT_ONLY


def test_float64_data_hold_or_fail_at_every_point_of_their_intervals(tmp_path):
    """float64 contexts: well-conditioned ones hold at every point of their intervals (certified for the
    whole box); a token computed as the sum of two others in float64 is dependent at an explicit point
    (or undecided), never "holds"; either way no tolerance decides."""
    from verifier.data.instances import load_data

    rng = np.random.default_rng(3)
    E = rng.standard_normal((3, 3, 6))
    good = tmp_path / "good.npz"
    np.savez(good, contexts=E, queries=rng.standard_normal((3, 6)))
    ev = check_assumption2(load_data(good))
    assert ev.verdict == "verified" and ev.measured["at the data's precision"] == "holds"
    E[1, 2] = E[1, 0] + E[1, 1]
    bad = tmp_path / "bad.npz"
    np.savez(bad, contexts=E, queries=rng.standard_normal((3, 6)))
    ev = check_assumption2(load_data(bad))
    assert ev.verdict in ("refuted", "inconclusive") and ev.measured["at the data's precision"] != "holds"
