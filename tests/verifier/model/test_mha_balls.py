"""Ball feature matrices on row/column subsets, and the lazy rank certificate."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, workprec
from verifier.arith.rank import certify_rank_lower_bound_lazy
from verifier.data.strategies import attention_instances
from verifier.model import mha as model
from verifier.model.mha_balls import feature_matrix_ball


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 4)), st.data())
def test_ball_submatrix_encloses_float(inst, data):
    rng = np.random.default_rng(inst.seed)
    WK = rng.standard_normal((inst.H, inst.d, inst.d_h))
    WQ = rng.standard_normal((inst.H, inst.d, inst.d_h))
    Z = model.feature_matrix(inst.contexts, inst.queries, WK, WQ)
    rows = data.draw(st.lists(st.integers(0, inst.T - 1), min_size=1, max_size=inst.T, unique=True))
    cols = data.draw(st.lists(st.integers(0, inst.H * inst.d - 1), min_size=1, max_size=6, unique=True))
    with workprec(128):
        Zb = feature_matrix_ball(inst.contexts, inst.queries, WK, WQ, rows=rows, cols=cols)
    mid = np.array([[float(Zb[i, j].mid()) for j in range(len(cols))] for i in range(len(rows))])
    assert np.allclose(mid, Z[np.ix_(rows, cols)], rtol=1e-12, atol=1e-12)


def test_lazy_rank_never_exceeds_true_rank():
    rng = np.random.default_rng(0)
    A = (rng.integers(-3, 4, (6, 3)) @ rng.integers(-3, 4, (3, 8))).astype(float)  # exactly rank <= 3
    with workprec(128):
        res = certify_rank_lower_bound_lazy(A, 4, lambda r, c: to_arb_mat(A[np.ix_(r, c)]))
        ok = certify_rank_lower_bound_lazy(A, np.linalg.matrix_rank(A),
                                           lambda r, c: to_arb_mat(A[np.ix_(r, c)]))
    assert res.decision is not Decision.TRUE
    assert ok.decision is Decision.TRUE
