"""Planted-false instances must never be certified (issue 9, item 8).

Exactly singular integer / dyadic matrices, feature matrices above Prop. 2's
and Prop. 5's caps, exactly dependent query subsets, Lemma 4 below c0, and the
proofs' own false variants: every certificate (arb and float paths) refuses.
"""
import numpy as np
import pytest
from planted import (
    capped_feature_matrices,
    dependent_queries,
    rank_never_overclaimed,
    refused_above_cap,
    refused_dependent,
    refused_singular,
    singular_family,
)

from verifier.data.instances import from_arrays, make_instance


def test_singular_integer_and_dyadic_matrices_are_never_certified():
    family = singular_family(seed=0)
    bad = [i for i, A in enumerate(family) if not refused_singular(A)]
    assert not bad, f"singular matrices certified nonsingular: {bad[:5]}"
    assert all(rank_never_overclaimed(A) for A in family[:60])


def test_feature_matrices_above_the_structural_caps_are_never_certified():
    for label, Z, cap in capped_feature_matrices(seed=0):
        assert refused_above_cap(Z, cap), label


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dependent_query_subsets_are_never_independent(seed):
    V = dependent_queries(seed=seed)
    assert refused_dependent(V, 4)


def test_assumption1_refutes_planted_dependent_queries():
    from proofs.mahdavi2024.assumption1_query_kruskal_rank import check_assumption1
    V = dependent_queries(seed=0, m=12, d=5, k=3)  # n = 3: a dependent 3-subset
    E = np.random.default_rng(0).standard_normal((12, 3, 5))
    ev = check_assumption1(from_arrays(E, V, H=2))
    assert ev.verdict == "refuted" and ev.certified


def test_prop1_above_the_shared_context_cap_is_never_verified():
    from proofs.mahdavi2024.proposition1_rank_induction import check_proposition1
    inst = make_instance(H=4, n=3, d=5, T=13, context="shared", seed=2)  # cap H(n-1)+1 = 9
    ev = check_proposition1(inst, claimed_rank=10)
    assert ev.verdict == "refuted" and ev.measured["certified_rank"] <= 9


def test_lemma4_below_c0_is_never_verified():
    from proofs.mahdavi2024.lemma4_softmax_saturation import CONTROL_INSTANCE, check_lemma4
    assert check_lemma4(make_instance(H=2, n=3, d=5, seed=3), eps=1e-6, multipliers=(0.25,),
                        eps_from=0.25).verdict == "refuted"
    for bound in ("no-2", "no-R"):
        assert check_lemma4(make_instance(**CONTROL_INSTANCE), bound=bound).verdict == "refuted"


def test_false_constructions_are_never_verified():
    """The proofs' own false variants, decided by the deciding computation."""
    from proofs.mahdavi2024.appendixB2_finite_scaling import check_appendixB2
    from proofs.mahdavi2024.claim1_fit_one_head import check_claim1
    from proofs.mahdavi2024.claim2_fit_and_saturate import check_claim2
    from proofs.mahdavi2024.lemma3_rank_one_saturation import check_lemma3
    from proofs.mahdavi2024.step2_linear_readout import check_step2
    assert check_claim1(make_instance(H=1, n=4, d=6, seed=5), right_inverse="transpose").verdict == "refuted"
    assert check_claim2(make_instance(H=2, n=4, d=6, seed=5), orthogonalize=False).verdict == "refuted"
    assert check_claim2(make_instance(H=2, n=4, d=6, seed=5), c=0.0).verdict == "refuted"
    assert check_lemma3(make_instance(H=1, n=3, d=6, T=6, seed=5), orthogonalize=False).verdict == "refuted"
    assert check_appendixB2(make_instance(H=3, n=3, d=5, context="shared", seed=5), c_scale=1e-3).verdict == "refuted"
    assert check_step2(make_instance(H=2, n=3, d=5, d_out=2, d_v=3, seed=5),
                       readout_perturbation=1e-9).verdict == "refuted"


def test_identical_inputs_with_different_labels_are_never_memorized():
    from proofs.mahdavi2024.theorem1_memorization import check_theorem1
    base = make_instance(H=3, n=3, d=5, seed=4)
    E, e, y = np.array(base.contexts), np.array(base.queries), np.array(base.labels)
    E[3], e[3], y[3] = E[1], e[1], y[1] - 2.0
    ev = check_theorem1(from_arrays(E, e, y, H=3))
    assert ev.verdict != "verified"
    assert any("identical inputs" in c["kind"] for c in ev.certificates)


def test_float_ball_inputs_are_refused_when_singular_and_certified_when_not():
    """FloatBall input (the torch/float path's own balls), with and without radii."""
    from verifier.arith.compare import Decision
    from verifier.arith.float_certificates import FloatBall
    from verifier.arith.rank import certify_rank_lower_bound
    rng = np.random.default_rng(3)
    for A in singular_family(seed=1, count=40, big=()):
        n = A.shape[0]
        for ball in (FloatBall(A, None), FloatBall(A, np.full(A.shape, 2.0 ** -40))):
            for method in ("float", "arb"):
                assert certify_rank_lower_bound(ball, k=n, method=method).decision is not Decision.TRUE
    B = rng.standard_normal((6, 8))
    for ball in (FloatBall(B, None), FloatBall(B, np.full(B.shape, 1e-12))):
        for method in ("float", "arb"):
            res = certify_rank_lower_bound(ball, k=6, method=method)
            assert res.decision is Decision.TRUE and len(res.rows) == len(res.cols) == 6
