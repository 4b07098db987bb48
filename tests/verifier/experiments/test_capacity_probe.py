"""verifier/experiments/capacity_probe.py: certified ranks, never above a proven cap (tiny sizes)."""
import numpy as np

from verifier.arith.compare import Decision
from verifier.data.instances import make_instance
from verifier.experiments.capacity_probe import Setting, certify_rank, longest_full_rank_prefix, probe


def test_shared_context_stops_at_prop2_cap_and_general_position_goes_beyond():
    shared = probe(Setting(2, 2, 4, "shared"), seed=0, steps=30)
    cap = 2 * (2 - 1) + 1
    assert shared["construction"] == cap and shared["random_weights"] <= cap and shared["optimized"] == cap
    assert not shared["above_proven_cap"] and shared["optimized_trials"] == {str(cap + 1): False}
    gp = probe(Setting(2, 2, 4, "uniform"), seed=0, steps=30)
    assert gp["caps"] == {"Hd": 8} and max(gp["random_weights"], gp["optimized"]) <= 8


def test_certificate_refuses_a_rank_the_weights_do_not_have():
    inst = make_instance(H=2, n=3, d=5, T=7, context="shared", seed=1)
    E, e = np.asarray(inst.contexts), np.asarray(inst.queries)
    rng = np.random.default_rng(0)
    W_K, W_Q = rng.standard_normal((2, 5, 5)), rng.standard_normal((2, 5, 5))
    k = longest_full_rank_prefix(E, e, W_K, W_Q)
    assert k <= 2 * 2 + 1  # Prop. 2
    assert certify_rank(E, e, W_K, W_Q, k).decision is Decision.TRUE
    assert certify_rank(E, e, W_K, W_Q, k + 1).decision is not Decision.TRUE  # the negative control
