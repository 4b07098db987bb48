"""ks_ffn_memorization: the bit-extraction network memorizes exactly (fast
evaluator = the plain layer-by-layer product), its parameter count is the
stated formula, and the controls (budget below P, a flipped payload bit, an
id with two labels) are rejected."""
import math

import numpy as np
import pytest

from proofs.kajitsuka2025.bit_extraction import (
    build_bit_extraction,
    evaluate,
    formula_count,
    forward_dense,
    parameter_count,
)
from proofs.kajitsuka2025.ffn_memorization import check_ks_ffn_memorization
from verifier.data.token_sequences import from_arrays, make_token_instance
from verifier.statements import registry
from verifier.statements.runner import run_control


@pytest.mark.parametrize("seed", range(6))
def test_fast_equals_dense_and_memorizes(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(1, 120))
    C = int(rng.integers(2, 40))
    spread = int(rng.choice([2, 50, 1 << 30]))
    ids = rng.choice(spread * N, size=N, replace=False) - spread * N // 3
    labels = rng.integers(0, C, N)
    net = build_bit_extraction(ids, labels, C=C)
    assert evaluate(net, ids).tolist() == labels.tolist() == forward_dense(net, ids)
    assert parameter_count(net) == formula_count(N, net.K, net.omega, net.beta)


@pytest.mark.parametrize("K", [1, 2, 7])
def test_any_block_size_and_corruption_is_seen(K):
    ids, labels = [0, 3, 4, 10, 11, 12, 40, 41], [1, 0, 2, 2, 1, 0, 1, 2]
    net = build_bit_extraction(ids, labels, C=3, K=K)
    assert forward_dense(net, ids) == labels == evaluate(net, ids).tolist()
    bad = build_bit_extraction(ids, labels, C=3, K=K, flip=(0, 0))
    assert forward_dense(bad, ids) == evaluate(bad, ids).tolist() != labels


def test_checker_verified_with_exact_count():
    ev = check_ks_ffn_memorization(make_token_instance(N=2000, C=5, seed=1, ids_only=True))
    m = ev.measured
    assert ev.verdict == "verified" and ev.certified and m["wrong outputs"] == 0
    assert m["parameters P"] == m["P (formula 16 ceil(N/K) + 5 + K(56(w+beta)+125))"]
    assert m["P * bits >= N log2 C"]
    assert m["P / sqrt(N log2 N)"] < 100


def test_sublinear_growth():
    P = {}
    for N in (1000, 16000):
        P[N] = check_ks_ffn_memorization(make_token_instance(N=N, C=3, seed=0, ids_only=True)).measured["parameters P"]
    assert P[16000] / P[1000] < 16 / 2  # far below linear growth (sqrt: ~4 up to logs)


def test_budget_and_duplicates():
    inst = make_token_instance(N=300, C=3, seed=2, ids_only=True)
    P = check_ks_ffn_memorization(inst).measured["parameters P"]
    assert check_ks_ffn_memorization(inst, budget=P).verdict == "verified"
    ev = check_ks_ffn_memorization(inst, budget=P - 1)
    assert ev.verdict == "refuted" and "not the paper" in ev.reason
    same = from_arrays(np.zeros((3, 1), dtype=int), [1, 1, 0], V=1, ids=[5, 5, 9], C=2)
    assert check_ks_ffn_memorization(same).verdict == "verified"  # one point listed twice
    clash = from_arrays(np.zeros((2, 1), dtype=int), [0, 1], V=1, ids=[5, 5], C=2)
    assert check_ks_ffn_memorization(clash).verdict == "hypotheses-unmet"


def test_controls_rejected():
    reg = registry.load_all()
    controls = reg["ks_ffn_memorization"].controls
    assert len(controls) >= 3
    for c in controls:
        ev, ok = run_control("ks_ffn_memorization", c)
        assert ok, (c.description, ev.verdict, ev.reason)


def test_parameter_table():
    d = registry.table_data("ks_ffn_parameters").data(0)
    assert all(r[4] == "verified" for r in d["rows"])
    ratios = [r[1] / r[0] for r in d["rows"]]
    assert all(a > b for a, b in zip(ratios, ratios[1:]))  # P / N decreasing: sublinear
    assert math.isfinite(d["rows"][0][5])


def test_the_reference_constant_is_fitted_on_data_it_is_then_not_compared_against():
    from proofs.kajitsuka2025.ffn_memorization import FIT_MAX_N

    d = registry.table_data("ks_ffn_parameters").data(0)
    fit = [r for r in d["rows"] if r[0] <= FIT_MAX_N]
    held = [r for r in d["rows"] if r[0] > FIT_MAX_N]
    assert fit and held and all(r[6] == "(fitted)" for r in fit)
    c = math.exp(sum(math.log(r[1] / math.sqrt(r[0] * math.log2(r[0]))) for r in fit) / len(fit))
    for r in held:  # the held-out ratio is what the table says, not 1 by construction
        assert r[6] == round(r[1] / (c * math.sqrt(r[0] * math.log2(r[0]))), 3) and r[6] != 1.0
