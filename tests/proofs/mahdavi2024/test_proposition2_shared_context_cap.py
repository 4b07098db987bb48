"""Proposition 2: shared contexts cap rank(Z) at H(n-1)+1 for any weights;
the cap is attained (Prop. 1's construction, d_h >= n); H(n-1) is refuted."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.proposition2_shared_context_cap import (
    check_proposition2,
    control_proposition2_bound_minus_one,
    control_proposition2_not_shared,
    shared_context_bound,
)
from verifier.arith.compare import Decision, workprec
from verifier.arith.structure import (
    ball_annihilation,
    null_vectors_independent,
    prove_stochastic_blocks_annihilated,
    stochastic_block_null_vectors,
)
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances
from verifier.model.mha_balls import scores_matrix_ball

ROOT = Path(__file__).resolve().parents[3]


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 3), context="shared",
                           T=st.integers(2, 9)), st.integers(0, 2**16))
def test_shared_context_rank_never_exceeds_the_cap(inst, seed):
    ev = check_proposition2(inst, seed=seed)
    bound = shared_context_bound(inst.H, inst.n)
    assert ev.verdict == "verified" and ev.certified
    for label, m in ev.measured.items():
        if isinstance(m, dict):
            assert m["certified_rank_lower"] <= bound, label


@given(st.integers(1, 4), st.integers(1, 4))
def test_softmax_blocks_annihilate_the_null_vectors_symbolically(H, n):
    assert prove_stochastic_blocks_annihilated(H, n).holds
    V = stochastic_block_null_vectors(H, n)
    assert len(V) == H - 1 and null_vectors_independent(V)


def test_balls_contain_zero_for_null_vectors_and_exclude_it_otherwise():
    inst = make_instance(H=3, n=3, d=5, T=6, context="shared", seed=4)
    rng = np.random.default_rng(0)
    W_K, W_Q = rng.standard_normal((2, 3, 5, 3))
    with workprec(128):
        S = scores_matrix_ball(inst.contexts, inst.queries, W_K, W_Q)
        good = ball_annihilation(S, stochastic_block_null_vectors(3, 3))
        bad = ball_annihilation(S, [[1] * 9])  # row sums of [S_1 S_2 S_3] are 3, not 0
    assert good.decision is Decision.TRUE and good.max_abs_upper < 1e-30
    assert bad.decision is Decision.FALSE


def test_construction_attains_the_cap_exactly():
    inst = make_instance(H=3, n=3, d=6, T=7, context="shared", seed=2)
    ev = check_proposition2(inst)
    assert ev.verdict == "verified"
    assert ev.measured["tight (rank = H(n-1)+1 certified)"] is True


def test_negative_control_bound_minus_one_is_refuted():
    ev = control_proposition2_bound_minus_one()
    assert ev.verdict == "refuted"
    assert ev.measured["Prop. 1 construction"]["certified_rank_lower"] == shared_context_bound(3, 3)


def test_negative_control_unshared_contexts_exceed_the_cap():
    ev = control_proposition2_not_shared()
    assert ev.verdict == "hypotheses-unmet"
    assert ev.measured["random"]["certified_rank_lower"] > shared_context_bound(2, 2)


def test_cli_gives_a_certified_verdict():
    proc = subprocess.run([sys.executable, "-m", "verifier.cli", "check", "proposition2", "--H", "4", "--n", "3",
                           "--d", "6", "--context", "shared", "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["verdict"] == "verified" and d["certified"] is True


# --- pinned pieces (mutation testing, issue 9) ---

def test_assumption_hypotheses_pass_names_prec_and_seed(monkeypatch):
    import proofs.mahdavi2024.proposition2_shared_context_cap as p2
    from verifier.statements.evidence import Evidence

    calls = []

    def fake(label):
        def check(instance, **kw):
            calls.append((label, kw))
            return Evidence(label, "verified", True, "fake", 128, None, None, None, None, (), (), {}, 0.0, "")
        return check

    monkeypatch.setattr(p2, "check_assumption1", fake("a1"))
    monkeypatch.setattr(p2, "check_assumption2", fake("a2"))
    hyps = p2.assumption_hypotheses(make_instance(H=2, n=2, d=4, T=3, context="shared"), prec=256, seed=7)
    assert calls == [("a1", {"prec": 256, "seed": 7}), ("a2", {"prec": 256, "seed": 7})]
    assert [h.name for h in hyps] == ["Assumption 1 (queries' Kruskal rank >= n)",
                                      "Assumption 2 (every context has rank n)"]
    assert [h.status for h in hyps] == ["certified", "certified"]


def test_weight_trials_are_pinned():
    from proofs.mahdavi2024.proposition2_shared_context_cap import (
        ONE_HOT_SCALE,
        UNIFORM_SCALE,
        build_weight_trials,
    )
    from verifier.data.instances import rng_for

    inst = make_instance(H=2, n=3, d=5, T=4, context="shared")
    trials = build_weight_trials(inst)
    rng = rng_for(0, "proposition2")
    W_K = rng.standard_normal((2, 5, inst.d_h)) / np.sqrt(5)
    W_Q = rng.standard_normal((2, 5, inst.d_h)) / np.sqrt(5)
    assert [t[0] for t in trials] == ["random", "one-hot (huge logits)", "uniform (tiny logits)"]
    assert (ONE_HOT_SCALE, UNIFORM_SCALE) == (30.0, 1e-4)
    for (_, K, Q), s in zip(trials, (1.0, ONE_HOT_SCALE, UNIFORM_SCALE)):
        assert np.array_equal(K, s * W_K) and np.array_equal(Q, s * W_Q)


def test_measure_weights_passes_k_prec_and_null_vectors():
    from proofs.mahdavi2024.proposition2_shared_context_cap import build_weight_trials, measure_weights

    inst = make_instance(H=2, n=3, d=5, T=6, context="shared")
    _, W_K, W_Q = build_weight_trials(inst)[0]
    V = stochastic_block_null_vectors(2, 3)
    r = measure_weights(inst, W_K, W_Q, V, prec=192, k=5)
    assert set(r) == {"annihilation", "rank_lower", "numerical_rank"}
    assert r["annihilation"].decision is Decision.TRUE and r["annihilation"].vectors == len(V) == 1
    assert r["rank_lower"].requested_k == 5 and r["rank_lower"].prec_bits == 192
    assert measure_weights(inst, W_K, W_Q, [], prec=128)["annihilation"] is None


def test_symbolic_proofs_sizes_are_pinned():
    from proofs.mahdavi2024.proposition2_shared_context_cap import symbolic_proofs

    proofs = symbolic_proofs(2, 3, 4)
    assert all(p.holds for p in proofs)
    assert proofs[2].sizes == {"rows": 4, "cols": 6, "k": 4}  # H=2, n=2, d=3, T=4: no 4-minor


def test_a_context_shared_as_stored_only_is_a_verdict_on_the_stored_contexts():
    """One context E (full-precision floats) repeated.  Read exactly, "shared context" is
    certified; read at the dtype's precision it holds for the stored values only: evidence,
    and the reason says the verdict is on the stored contexts."""
    from proofs.mahdavi2024.proposition2_shared_context_cap import check_proposition2
    from verifier.data.instances import from_arrays
    rng = np.random.default_rng(4)
    E = np.broadcast_to(rng.standard_normal((3, 5)), (6, 3, 5)).copy()
    q = rng.standard_normal((6, 5))
    exact = check_proposition2(from_arrays(E, q, H=2, d_h=3))
    assert exact.hypotheses[0].status == "certified" and "stored contexts" not in (exact.reason or "")
    ev = check_proposition2(from_arrays(E, q, H=2, d_h=3, reading="dtype"))
    assert ev.hypotheses[0].status == "evidence" and ev.verdict != "refuted"
    assert "a verdict on the stored contexts" in ev.reason and "as stored only" in ev.reason
    assert ev.hypotheses[0].detail.startswith("undecided at the data's precision")
    assert ev.reason.startswith("a verdict on the stored contexts")  # no earlier reason: nothing before it
