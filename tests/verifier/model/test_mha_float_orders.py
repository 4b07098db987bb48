"""The layer's rigorous float balls (verifier/model/mha_float.py) under every
summation order of tests/summation_orders.py (issue 17, item 1): each ball
must contain Arb's 200-bit enclosure of the exact features, on Prop. 1's
saturated construction (logits ~1e4 cancelling on the fitted rows) and on
weights scaled to make the softmax saturate.  The products of the logits
(accurate_matmul, ball_matmul) and of the features go through the order;
float_bounds' row sums too (softmax's own ``.sum`` is the array's: numpy's
pairwise order, not reordered here)."""
import numpy as np
import pytest
from flint import arb
from summation_orders import ALL_ORDERS, summation_order

from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
from verifier.arith.compare import workprec
from verifier.data.instances import make_instance
from verifier.model.mha_balls import feature_matrix_ball
from verifier.model.mha_float import feature_columns_float_ball


def _assert_contains(inst, W_K, W_Q, rows=None, accurate=True):
    fb = feature_columns_float_ball(inst.contexts, inst.queries, W_K, W_Q, rows=rows, backend="numpy",
                                    accurate=accurate)
    mid, rad = np.asarray(fb.mid), np.asarray(fb.rad)
    with workprec(200):
        Zb = feature_matrix_ball(inst.contexts, inst.queries, W_K, W_Q, rows=rows)
        for i in range(Zb.nrows()):
            for j in range(Zb.ncols()):
                lo, hi = arb(float(mid[i, j])) - arb(float(rad[i, j])), arb(float(mid[i, j])) + arb(float(rad[i, j]))
                assert lo <= Zb[i, j].lower() and Zb[i, j].upper() <= hi, (i, j)


@pytest.mark.parametrize("accurate", [True, False])  # the logits' products accurate, or plain (the first try)
@pytest.mark.parametrize("order", ALL_ORDERS)
@pytest.mark.parametrize("context", ["shared", "random"])
def test_feature_balls_of_the_saturated_construction_hold_in_every_order(order, context, accurate):
    inst = make_instance(H=3, n=3, d=5, context=context, seed=1)
    con = build_key_query_weights(inst, seed=0)  # built once, in numpy's own order: the weights are data here
    with summation_order(order):
        _assert_contains(inst, con.W_K, con.W_Q, rows=list(con.basis), accurate=accurate)


@pytest.mark.parametrize("accurate", [True, False])
@pytest.mark.parametrize("order", ALL_ORDERS)
def test_feature_balls_of_large_signed_weights_hold_in_every_order(order, accurate):
    inst = make_instance(H=2, n=4, d=6, context="random", seed=3)
    rng = np.random.default_rng(3)
    W_K = 40.0 * rng.standard_normal((inst.H, inst.d, 3)) * rng.choice([-1.0, 1.0], (inst.H, inst.d, 1))
    W_Q = 40.0 * rng.standard_normal((inst.H, inst.d, 3))
    with summation_order(order):
        _assert_contains(inst, W_K, W_Q, accurate=accurate)
