"""Lemma 5 (Weyl): ||A - B||_2 < sigma_min^+(A) => rank B >= rank A, with the
hypothesis decided exactly (Gram characteristic polynomials); the equality
edge is hypotheses-unmet for '<' and refutes the non-strict variant."""
import numpy as np
from flint import fmpq, fmpq_mat, fmpq_poly
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.lemma5_weyl_rank import (
    GramRoot,
    check_lemma5,
    check_pair,
    check_weyl_pairs,
    compare_roots,
    control_lemma5_equality_edge,
    control_lemma5_non_strict,
    edge_pairs,
    gram_roots,
    householder,
    perturbation_hypothesis,
    rational_svd_pairs,
)
from verifier.arith.compare import Decision
from verifier.data.strategies import attention_instances


@given(attention_instances(H=1, n=st.integers(1, 4), context=st.sampled_from(["random", "uniform", "pe"]),
                           degenerate=st.sampled_from([None, "rank-deficient-context"]), T=st.integers(1, 3)),
       st.integers(0, 2**16))
def test_lemma5_verified_on_instances_and_rational_families(inst, seed):
    ev = check_lemma5(inst, seed=seed, count=2)
    assert ev.verdict == "verified" and ev.certified
    assert ev.hypotheses[0].status == "certified"


@given(st.integers(0, 2**16))
def test_just_inside_keeps_rank_and_edge_drops_it(seed):
    for A, B, label in rational_svd_pairs(np.random.default_rng(seed), count=2):
        row = check_pair(A, B, label, strict=True, prec=128)
        assert row["hypothesis"] == "true" and row["conclusion"] is True and row["rank B (exact)"] == row["rank A"]
    for A, B, label in rational_svd_pairs(np.random.default_rng(seed), count=2, edge=True):
        row = check_pair(A, B, label, strict=True, prec=128)
        assert row["hypothesis"] == "false" and row["equality (exact)"]
        assert row["rank B (exact)"] == row["rank A"] - 1


def test_householder_is_exactly_orthogonal():
    H = householder([1, -2, 3])
    assert H * H.transpose() == fmpq_mat([[1, 0, 0], [0, 1, 0], [0, 0, 1]])


def test_gram_roots_and_comparisons():
    A = fmpq_mat([[1, 1], [0, 1]])  # singular values^2 = (3 +- sqrt 5)/2: irrational
    roots = gram_roots(A)
    assert len(roots) == 2 and all(r.exact is None for r in roots)
    lo, hi = sorted(roots, key=lambda r: r.index)
    assert compare_roots(lo, lo) == "=" and compare_roots(lo, hi) == "<" and compare_roots(hi, lo) == ">"
    third = GramRoot(fmpq_poly([-1, 1]), 0, fmpq(1))
    assert compare_roots(lo, third) == "<" and compare_roots(third, hi) == "<"
    dec, info = perturbation_hypothesis(A, A)  # B = A: ||A - B|| = 0
    assert dec is Decision.TRUE


def test_negative_control_equality_edge_is_hypotheses_unmet():
    ev = control_lemma5_equality_edge()
    assert ev.verdict == "hypotheses-unmet"
    assert ev.measured["rank drops"] == ev.measured["pairs"]  # the conclusion is indeed false there
    assert ev.certificates[0]["equality (exact)"] and ev.certificates[0]["sigma_min^+(A)"].startswith("1.0000")


def test_negative_control_non_strict_variant_is_refuted():
    ev = control_lemma5_non_strict()
    assert ev.verdict == "refuted" and ev.hypotheses[0].status == "certified"


def test_float_adversarial_pair_just_inside():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 5))
    U, s, Vt = np.linalg.svd(A)
    B = A - s[-1] * (1 - 1e-9) * np.outer(U[:, -1], Vt[-1])
    ev = check_weyl_pairs([(A, B, "1e-9 inside")])
    assert ev.verdict == "verified" and ev.hypotheses[0].status == "certified"
    assert edge_pairs()[0][2].endswith("(edge)")


def test_a_roots_index_names_the_same_root_below_the_float_range():
    """Issue 32: compare_roots relies on an index naming the same root at every precision; the order must
    not rest on float64 midpoints (roots of magnitude 2^-1100 read 0.0 and -0.0 there, a tie left to the
    root finder's order).  Ordered by the exact midpoints of their isolating balls, index 0 is certainly
    the smaller root at every precision."""
    from flint import fmpq, fmpq_poly

    from proofs.mahdavi2024.lemma5_weyl_rank import GramRoot
    from verifier.arith.compare import Decision, certainly_less

    f = fmpq_poly([-2 * fmpq(1, 2 ** 2200), 0, 1])  # x^2 - 2^-2199: roots -+ sqrt(2) 2^-1100, irreducible over Q
    for prec in (64, 128, 512):
        lo, hi = GramRoot(f, 0, None).ball(prec), GramRoot(f, 1, None).ball(prec)
        assert float(lo.mid()) == 0.0 == float(hi.mid())  # the float64 midpoints cannot tell them apart
        assert certainly_less(lo, hi) is Decision.TRUE
