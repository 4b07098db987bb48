"""Theorem 1 end to end: certified exact memorization, saved weights, controls."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.theorem1_memorization import (
    check_theorem1,
    control_dh_too_small,
    control_duplicate_example,
    control_repeated_queries,
    control_too_many_examples,
)
from verifier.data.instances import make_instance
from verifier.data.strategies import attention_instances
from verifier.model.mha_torch import forward_torch


def _expected(ev):
    """verified when every hypothesis holds, else hypotheses-unmet (e.g. T < n: Assumption 1, Kruskal rank >= n,
    fails), whatever the conclusion does: the construction still runs and its numbers are checked below."""
    return "hypotheses-unmet" if any(h.status in ("refuted", "fails-at-precision") for h in ev.hypotheses) \
        else "verified"


@given(attention_instances(H=st.integers(1, 3), n=st.integers(2, 4), d_out=st.integers(1, 2)))
def test_memorizes_arbitrary_labels_certified(inst):
    ev = check_theorem1(inst)
    assert ev.verdict == _expected(ev), ev.reason
    assert ev.certified == (ev.verdict == "verified")
    assert ev.measured["max |yhat - y| with the exact readout (ball)"] <= 1e-20 * np.abs(inst.labels).max()
    assert ev.measured["max |yhat - y| of the float64 weights (numpy)"] < 1e-6
    lo, hi = ev.measured["saved float64 weights: max |yhat - y| (certified)"]
    assert 0 <= lo <= hi < 1e-6


def test_saved_weights_memorize_in_an_independent_forward_pass(tmp_path):
    path = tmp_path / "W.npz"
    inst = make_instance(H=3, n=3, d=5, d_out=2, d_v=3, context="shared", seed=3)
    ev = check_theorem1(inst, save_weights=str(path))
    assert ev.verdict == "verified"
    f = np.load(path)
    assert f["W_Q"].shape == (3, 5, 3) and f["W_K"].shape == (3, 5, 3)
    assert f["W_V"].shape == (3, 5, 3) and f["W_O"].shape == (9, 5) and f["W_D"].shape == (5, 2)
    yhat = forward_torch(f["contexts"], f["queries"], f["W_Q"], f["W_K"], f["W_V"], f["W_O"], f["W_D"],
                         dtype=torch.float64, device="cpu").numpy()
    assert np.abs(yhat - f["labels"]).max() < 1e-8


def test_larger_T_is_certified_by_rank_with_numerical_residual():
    inst = make_instance(H=8, n=10, d=14, context="shared", seed=0)  # T = 73 > 60
    ev = check_theorem1(inst)
    assert ev.verdict == "verified" and ev.certified
    assert ev.tolerance is None and "float64" in ev.method


def test_negative_controls():
    assert control_dh_too_small().verdict == "refuted"
    ev = control_repeated_queries()
    assert ev.verdict == "hypotheses-unmet" and "Claim 1" in ev.reason
    ev = control_too_many_examples()
    assert ev.verdict == "hypotheses-unmet"
    # Prop. 2's cap rules rank(Z) = T out for any weights: consulted first, no construction attempted
    assert ev.measured["structural cap rank(Z) <="] < ev.measured["T"]
    assert not any(c["kind"].startswith("rank(Z) = T") for c in ev.certificates)


def test_duplicate_example_with_different_labels_cannot_be_memorized():
    ev = control_duplicate_example()
    assert ev.verdict == "hypotheses-unmet"  # Assumption 1 fails (two equal queries) ...
    assert any("identical inputs" in c["kind"] for c in ev.certificates)  # ... and no weights could work


def test_saved_weights_far_from_the_labels_are_said_plainly(tmp_path):
    """Issue 9: queries scaled by 1e50, skip connection: exact weights exist
    (verified), the float64 weights as saved miss by ~1e34, certified."""
    from proofs.mahdavi2024.appendixC_skip_connection import check_appendixC
    from verifier.data.instances import from_arrays
    base = make_instance(H=3, n=3, d=5, d_out=2, d_v=2, seed=0)
    inst = from_arrays(base.contexts, base.queries * 1e50, base.labels, H=3, d_v=2)
    ev = check_appendixC(inst, save_weights=str(tmp_path / "w.npz"))
    assert ev.verdict == "verified" and ev.certified
    lo, hi = ev.measured["saved float64 weights: max |yhat - y| (certified)"]
    assert 1e30 < lo <= hi
    assert "do NOT memorize" in ev.reason
    saved = [c for c in ev.certificates if c["kind"].startswith("saved float64")][0]
    assert saved["far from the labels"] is True
    d = ev.to_dict()
    assert d["certificates"] and d["measured"]["saved float64 weights: max |yhat - y| (certified)"][0] > 1e30


# -- issue 32: use what is proved -----------------------------------------------------------------------

def _readout_residual_mp(inst, con, Y, dps=60):
    """max |Z M - Y| / max|Y| with Z computed in mpmath (60 digits) from the construction's float64
    weights (exact dyadics) and M = Z^T (Z Z^T)^{-1} Y solved there: the exact readout exists."""
    import mpmath

    mpmath.mp.dps = dps
    E, e = np.asarray(inst.contexts), np.asarray(inst.queries)
    rows = []
    for t in range(inst.T):
        row = []
        for h in range(inst.H):
            W = mpmath.matrix(con.W_K[h].tolist()) * mpmath.matrix(con.W_Q[h].tolist()).T
            Et = mpmath.matrix(E[t].tolist())
            a = Et * W * mpmath.matrix(e[t].tolist())
            m = max(a)
            s = [mpmath.exp(x - m) for x in a]
            s = [x / sum(s) for x in s]
            row += [sum(s[i] * Et[i, j] for i in range(inst.n)) for j in range(inst.d)]
        rows.append(row)
    Z = mpmath.matrix(rows)
    Ym = mpmath.matrix(np.asarray(Y).tolist())
    M = Z.T * mpmath.lu_solve(Z * Z.T, Ym)
    R = Z * M - Ym
    scale = max(abs(x) for x in Ym) or mpmath.mpf(1)
    return max(abs(x) for x in R) / scale


@pytest.mark.parametrize("scale", [0.0, 1e-310, 5e-324])
def test_zero_and_subnormal_labels_rest_on_the_rank_certificate(scale):
    """Issue 32: labels all zero or subnormal (the tolerance 1e-20 max|y| underflows to 0 exactly): rank(Z) = T
    certified proves an exact readout exists, so the verdict is verified at the default precision (it used to
    be 'inconclusive, raise --prec' at every precision, or verified with margin -5e-324); the margin is the
    rank certificate's, the residual is reported beside it.  The readout's existence is re-checked in mpmath."""
    from fractions import Fraction

    from proofs.mahdavi2024.proposition1_construction import build_key_query_weights
    from verifier.data.instances import from_arrays

    base = make_instance(H=3, n=3, d=5, seed=0)
    Y = np.asarray(base.labels) * scale if scale else np.zeros_like(base.labels)
    assert float(Fraction(1e-20) * Fraction(float(np.abs(Y).max()))) == 0.0  # the tolerance underflows, exactly
    inst = from_arrays(base.contexts, base.queries, Y, H=3)
    ev = check_theorem1(inst)
    assert ev.verdict == "verified" and ev.certified
    assert ev.margin == 1.0 - ev.certificates[0]["residual_norm_upper"] > 0
    assert "max |yhat - y| with the exact readout (ball)" in ev.measured
    if scale:
        assert "the verdict rests on the rank certificate" in ev.reason and "underflows" in ev.reason
    con = build_key_query_weights(inst, seed=0)
    assert _readout_residual_mp(inst, con, Y if scale else np.ones_like(Y)) < 1e-40


def test_caps_first_in_step2_the_issue_case():
    """Issue 32: `check step2 --context shared --T 6 --H 2 --n 3 --d 5` used to say 'Z Z^T not certainly
    invertible up to 1024 bits: raise --prec' (exit 3); rank(Z) <= H(n-1)+1 = 5 < 6 for any weights."""
    from proofs.mahdavi2024.step2_linear_readout import check_step2

    ev = check_step2(make_instance(H=2, n=3, d=5, T=6, context="shared", seed=0))
    assert ev.verdict == "hypotheses-unmet" and ev.exit_code == 2
    rank = next(h for h in ev.hypotheses if h.name == "rank(Z) = T")
    assert rank.status == "refuted" and rank.detail.startswith("rank(Z) <= 5 < T = 6 for ANY weights")
    assert "raise --prec" not in ev.reason


def test_a_float_range_error_in_the_minor_falls_back_to_arb():
    """Issue 32: k = T > 64 (the float path), one token of every context 1e6 times the others: logit
    differences of order -1e15 and below, the float softmax refuses the batch (FloatRangeError, raised
    while the minor is built).  It used to end the check ('inconclusive, raise --prec' at any --prec, the
    --json evidence without its hypotheses); now arb certifies rank(Z) = T, the method says so, and the
    same instance unscaled is certified by the float path, labelled so (53 bits)."""
    import json

    from verifier.data.instances import from_arrays

    base = make_instance(H=12, n=7, d=8, T=69, seed=0)
    E = np.array(base.contexts)
    E[:, 0, :] *= 1e6
    ev = check_theorem1(from_arrays(E, base.queries, base.labels, H=12))
    assert ev.verdict != "error" and ev.certified and ev.measured["certified_rank"] == 69
    assert ev.method.startswith("rank(Z) = T: arb balls") and ev.prec_bits >= 128
    assert "float path failed (FloatRangeError" in ev.certificates[0]["method"]
    assert len(json.loads(ev.to_json())["hypotheses"]) == len(ev.hypotheses) >= 6
    plain = check_theorem1(base)
    assert plain.method.startswith("rank(Z) = T: float64 verification") and plain.prec_bits == 53


def test_a_cap_read_on_a_rounded_float64_copy_refutes_nothing():
    """Two long-double contexts that differ below float64's resolution are equal in the float64 copy: the
    'repeated examples' cap is about that rounding, so rank(Z) = T is not refuted by it (issue 32)."""
    from proofs.mahdavi2024.proposition1_rank_induction import rank_cap_hypothesis
    from verifier.arith.rank_caps import structural_rank_cap
    from verifier.data.instances import from_arrays

    base = make_instance(H=2, n=2, d=3, T=3, seed=0)
    E, e = np.array(base.contexts, dtype=np.longdouble), np.array(base.queries, dtype=np.longdouble)
    E[1], e[1] = E[0], e[0]
    E[1, 0, 0] += np.ldexp(np.longdouble(abs(E[0, 0, 0])), -60)  # a different real, the same float64
    inst = from_arrays(E, e, base.labels, H=2)
    assert inst.rounded and np.array_equal(inst.contexts[0], inst.contexts[1])
    cap = structural_rank_cap(inst.contexts, inst.queries, inst.H)
    assert cap.cap == 2 < inst.T  # the float64 copy has a repeated example
    h = rank_cap_hypothesis(inst, cap)
    assert h.status == "evidence" and "float64 rounding" in h.detail
