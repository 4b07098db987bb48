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
