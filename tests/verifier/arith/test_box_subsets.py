"""Independence of k-subsets and of stacks over a box (verifier/arith/box_subsets.py):
TRUE only when every examined matrix is certified and the population is exhausted; FALSE only
with an explicit point re-checked exactly; a sample never gives TRUE."""
import itertools
from fractions import Fraction

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.box_rank import gap_sides
from verifier.arith.box_subsets import stack_over_box, subsets_over_box
from verifier.arith.compare import Decision


def gaps_for(V, exponent=-24):
    return lambda idx: gap_sides(V[list(idx)], np.full((len(idx), V.shape[1]), exponent),
                                 np.full((len(idx), V.shape[1]), exponent - 1), np.ones((len(idx), V.shape[1]), bool))


def test_exhaustion_certifies_every_subset_of_a_generic_set():
    V = np.random.default_rng(0).standard_normal((7, 4))
    r = subsets_over_box(V, np.abs(V) * 2.0**-24, 3, exact=lambda i: V[i], gaps=gaps_for(V))
    assert r.decision is Decision.TRUE and r.how == "exhaustion" and r.certified == r.population == 35


def test_all_rows_at_once_when_there_are_fewer_than_the_dimension():
    V = np.random.default_rng(1).standard_normal((4, 6))
    r = subsets_over_box(V, np.abs(V) * 2.0**-24, 2, exact=lambda i: V[i], gaps=gaps_for(V))
    assert r.decision is Decision.TRUE and r.how == "all rows"


def test_a_sample_is_never_a_certificate():
    V = np.random.default_rng(2).standard_normal((40, 5))
    r = subsets_over_box(V, np.abs(V) * 2.0**-24, 5, exact=lambda i: V[i], gaps=gaps_for(V),
                         exhaustive_limit=10, samples=50)
    assert r.decision is Decision.UNDECIDED and r.population is None and r.how == "sample"


def test_a_rounded_dependence_is_refuted_with_a_point_in_the_half_gaps():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((6, 5)).astype(np.float32).astype(np.float64)
    V[4] = np.float32(2 * V[0] - 3 * V[5])
    assert fmpq_mat(3, 5, [fmpq(*float(x).as_integer_ratio()) for x in V[[0, 4, 5]].ravel()]).rank() == 3
    r = subsets_over_box(V, np.abs(V) * 2.0**-24 * 1.01, 3, exact=lambda i: V[i], gaps=gaps_for(V))
    assert r.decision is Decision.FALSE
    c = [Fraction(str(x)) for x in r.witness.c]
    S = V[list(r.witness_index)]
    for j in range(5):  # -c^T S_j reachable within the half-gaps (2^-24 relative, symmetric bound here)
        t = -sum(ci * Fraction(float(S[i, j])) for i, ci in enumerate(c))
        assert abs(t) < sum(abs(ci) * Fraction(2) ** -25 * 2 for ci in c)


def test_a_stack_names_the_matrix_that_fails():
    rng = np.random.default_rng(4)
    E = rng.standard_normal((3, 3, 5)).astype(np.float32).astype(np.float64)
    E[1, 2] = np.float32(E[1, 0] + E[1, 1])
    exact = lambda b: E[b]  # noqa: E731
    gaps = lambda b: gap_sides(E[b], np.full((3, 5), -24), np.full((3, 5), -25), np.ones((3, 5), bool))  # noqa: E731
    r = stack_over_box(E, np.abs(E) * 2.0**-23, exact=exact, gaps=gaps, labels=[10, 11, 12])
    assert r.decision in (Decision.FALSE, Decision.UNDECIDED)
    if r.decision is Decision.FALSE:
        assert r.witness_index == (11,)
    good = stack_over_box(E[[0, 2]], np.abs(E[[0, 2]]) * 2.0**-24, exact=exact, gaps=None)
    assert good.decision is Decision.TRUE


def test_every_subset_really_is_independent_where_certified():
    """The TRUE of an exhaustion, re-checked at the corners of each subset's box in exact rationals."""
    rng = np.random.default_rng(5)
    V = np.round(rng.standard_normal((5, 3)) * 8) / 8
    rad = np.full(V.shape, 2.0**-10)
    r = subsets_over_box(V, rad, 3, exact=lambda i: V[i], gaps=None)
    if r.decision is Decision.TRUE:
        for idx in itertools.combinations(range(5), 3):
            for signs in itertools.product([-1, 1], repeat=3):
                P = [[Fraction(float(V[i, j])) + s * Fraction(float(rad[i, j])) for j in range(3)]
                     for i, s in zip(idx, signs)]
                M = fmpq_mat(3, 3, [fmpq(x.numerator, x.denominator) for row in P for x in row])
                assert M.rank() == 3
