"""Pinned behaviour of verifier/arith/kruskal.py (mutation testing, issue 9):
the witness hunt (parallel pairs, whole-set rank deficiency) with exhaustion cut
short and no sampling, the sampled evidence's counts, the result's fields."""
import numpy as np
import pytest

from verifier.arith.compare import Decision
from verifier.arith.kruskal import kruskal_rank, kruskal_rank_at_least

RNG = np.random.default_rng(0)
PAIR = RNG.integers(-5, 6, (8, 5)).astype(float)
PAIR[6] = 2 * PAIR[3]
_B = RNG.integers(-5, 6, (3, 5)).astype(float)
LOW = RNG.integers(-3, 4, (8, 3)).astype(float) @ _B  # rank 3
GEN = RNG.standard_normal((9, 4))
DEP = np.random.default_rng(0).integers(-9, 10, (9, 4)).astype(float)
DEP[7] = DEP[0] + DEP[1] - DEP[5]


def test_hunt_finds_a_parallel_pair():
    r = kruskal_rank(PAIR, exhaustive_limit=10, samples=0)
    assert (r.lower, r.upper, r.witness, r.witness_coefficients) == (1, 1, (3, 6), ("2", "-1"))
    assert r.exhausted and r.sampled == 0 and r.sample_size is None
    assert r.method == ("upper <= min(m, d) = 5; C(8,2..5) exceed exhaustive_limit=10; "
                        "witness (parallel pair): dependent 2-subset [3, 6] => upper <= 1")


def _is_circuit(V, witness, coefficients) -> bool:
    """sum_i c_i v_i = 0 exactly with every c_i != 0 (so, with a 1-dimensional
    null space, every proper subset is independent): a circuit of V's rows."""
    from fractions import Fraction

    from verifier.arith.exact import exact_rank

    c = [Fraction(x) for x in coefficients]
    combo = [sum(ci * Fraction(float(V[i, j])) for ci, i in zip(c, witness)) for j in range(V.shape[1])]
    return all(x != 0 for x in c) and not any(combo) and exact_rank(V[list(witness)]) == len(witness) - 1


def test_hunt_finds_the_whole_sets_rank_deficiency():
    """Which dependent 4-subset the float pivoted QR proposes depends on the
    machine ((0, 4, 6, 7) on one, (3, 4, 6, 7) on another): the witness is
    asserted to be a circuit, checked exactly, and named in the method."""
    r = kruskal_rank(LOW, exhaustive_limit=10, samples=0)
    assert (r.lower, r.upper, len(r.witness), r.exhausted) == (1, 3, 4, False)
    assert _is_circuit(LOW, r.witness, r.witness_coefficients)
    named = ", ".join(str(i) for i in r.witness)
    assert f"witness (rank deficiency of the whole set): dependent 4-subset [{named}] => upper <= 3" in r.method
    assert r.at_least(1) is Decision.TRUE and r.at_least(4) is Decision.FALSE and r.at_least(2) is Decision.UNDECIDED


def test_sampling_is_evidence_with_exact_counts():
    r = kruskal_rank_at_least(GEN, 4, exhaustive_limit=50, samples=300, seed=3)
    assert (r.lower, r.upper, r.sampled, r.sampled_independent, r.sample_size, r.exhausted) == (2, 4, 300, 300, 4, False)
    assert r.at_least(4) is Decision.UNDECIDED and r.at_least(2) is Decision.TRUE
    assert r.method.endswith("evidence: 300/300 random 4-subsets independent (exact per subset; not a proof for all subsets)")
    assert "all C(9,2) = 36 2-subsets independent (exact, mod p / Q); C(9,3..4) exceed exhaustive_limit=50" in r.method


def test_sampling_finds_a_witness_and_goes_on_at_the_new_upper_bound():
    r = kruskal_rank(DEP, exhaustive_limit=50, samples=300, seed=3)
    assert (r.lower, r.upper, r.witness, r.witness_coefficients) == (2, 3, (0, 1, 5, 7), ("1", "1", "-1", "-1"))
    assert (r.sampled, r.sampled_independent, r.sample_size, r.exhausted) == (229, 229, 3, False)
    assert "witness (random 4-subset): dependent 4-subset [0, 1, 5, 7] => upper <= 3" in r.method
    at = kruskal_rank_at_least(DEP, 4, exhaustive_limit=50, samples=300, seed=3)
    assert at.at_least(4) is Decision.FALSE and at.witness == (0, 1, 5, 7)
    three = kruskal_rank_at_least(DEP, 3, exhaustive_limit=50, samples=300, seed=3)
    assert (three.sampled, three.sampled_independent, three.sample_size) == (300, 300, 3)
    assert three.at_least(3) is Decision.UNDECIDED


def test_to_dict_fields():
    r = kruskal_rank(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    d = r.to_dict()
    seconds = d.pop("seconds")
    assert 0 <= seconds < 60
    assert d == {"lower": 2, "upper": 2, "exact": True, "witness": None, "witness_coefficients": None,
                 "exhausted": True, "sampled": 0, "sampled_independent": 0, "sample_size": None,
                 "method": "upper <= min(m, d) = 2; all C(3,2) = 3 2-subsets independent (exact, mod p / Q)"}
    w = kruskal_rank(np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])).to_dict()
    assert w["witness"] == [0, 1, 2] and w["witness_coefficients"] == ["1", "1", "-1"] and w["exact"]


def test_methods_defaults_and_edges():
    import pytest

    from verifier.arith.kruskal import general_position
    from verifier.errors import InvalidInstance

    w = kruskal_rank(np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    assert w.method == ("upper <= min(m, d) = 3; witness (exhaustion of 3-subsets): dependent 3-subset [0, 1, 2] "
                        "=> upper <= 2; all C(4,2) = 6 2-subsets independent (exact, mod p / Q)")
    g2 = GEN.copy()
    g2[5] = 2 * g2[2]  # a parallel pair found while exhausting the affordable level 2 below the top 4
    p = kruskal_rank(g2, exhaustive_limit=50, samples=0)
    assert (p.lower, p.upper, p.witness, p.exhausted) == (1, 1, (2, 5), True)
    assert p.method == ("upper <= min(m, d) = 4; witness (exhaustion of 2-subsets): dependent 2-subset [2, 5] "
                        "=> upper <= 1")
    g = kruskal_rank(GEN, exhaustive_limit=50, samples=0)
    assert (g.lower, g.upper, g.exhausted, g.witness, g.witness_coefficients) == (2, 4, False, None, None)
    assert g.method == ("upper <= min(m, d) = 4; all C(9,2) = 36 2-subsets independent (exact, mod p / Q); "
                        "C(9,3..4) exceed exhaustive_limit=50")
    assert kruskal_rank(GEN, exhaustive_limit=36, samples=0).lower == 2  # C(9,2) = 36 <= limit: inclusive
    two = kruskal_rank_at_least(GEN, 2, exhaustive_limit=50)
    assert (two.lower, two.upper, two.exhausted, two.sampled) == (2, 4, True, 0)  # level 2 done, nothing cut
    z = kruskal_rank(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert (z.lower, z.upper, z.witness, z.witness_coefficients) == (0, 0, (0,), ("1",))
    gp = general_position(GEN, exhaustive_limit=50, samples=0)
    assert (gp.lower, gp.upper, gp.sampled) == (2, 4, 0)
    # defaults: samples=5000, seed=0
    assert kruskal_rank_at_least(GEN, 4, exhaustive_limit=50, seed=3).sampled == 5000
    assert kruskal_rank(DEP, exhaustive_limit=50, samples=300).sampled == 262
    with pytest.raises(InvalidInstance, match="must be >= 0"):
        kruskal_rank(GEN, exhaustive_limit=-1)
    with pytest.raises(InvalidInstance, match="must be >= 0"):
        kruskal_rank(GEN, samples=-1)


def test_sampled_counts_add_up_over_chunks(monkeypatch):
    """Chunks of 4 subsets (CHUNK_ELEMS patched to 64 = 4 x 4^2): the counts add up
    over the chunks, and the chunk holding the witness counts the subsets up to it."""
    import verifier.arith.kruskal as kr

    monkeypatch.setattr(kr, "CHUNK_ELEMS", 64)
    r = kruskal_rank_at_least(GEN, 4, exhaustive_limit=50, samples=30, seed=3)
    assert (r.sampled, r.sampled_independent, r.sample_size) == (30, 30, 4)
    w = kruskal_rank_at_least(DEP, 4, exhaustive_limit=50, samples=71, seed=3)
    assert (w.sampled, w.sampled_independent, w.sample_size, w.witness, w.upper) == (71, 70, 4, (0, 1, 5, 7), 3)
    assert w.at_least(4) is Decision.FALSE
    one = kruskal_rank_at_least(GEN, 4, exhaustive_limit=50, samples=1, seed=3)
    assert (one.sampled, one.sampled_independent, one.sample_size) == (1, 1, 4)


def test_more_defaults_and_the_zero_vector_note():
    assert kruskal_rank(GEN, exhaustive_limit=50, seed=3).sampled == 5000  # samples=5000
    assert kruskal_rank_at_least(DEP, 4, exhaustive_limit=50, samples=300).sampled == 262  # seed=0
    assert kruskal_rank(np.array([[0.0, 0.0], [1.0, 0.0]])).method == \
        "upper <= min(m, d) = 2; vector 0 is zero => Kruskal rank 0"


def _exact_rows(rows):
    from flint import fmpq

    V = np.empty((len(rows), len(rows[0])), dtype=object)
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            V[i, j] = fmpq(*x) if isinstance(x, tuple) else fmpq(x)
    return V


TINY = (1, 2**2000)  # exactly nonzero; its float64 copy is 0.0


@pytest.mark.parametrize("exhaustive_limit", [20000, 0])
def test_exact_rows_decide_where_their_float_copy_is_zero(exhaustive_limit):
    """An object array of fmpq rows is decided exactly: a row 2^-2000 e_1 is not a zero
    vector although its float64 copy is; a row of ones is not zero either.  With
    exhaustive_limit = 0 the float hunt divides by the copy's zero norm: silently."""
    import warnings

    from verifier.arith.kruskal import general_position

    V = _exact_rows([[1, 1], [TINY, 0], [0, 1]])  # every pair independent: kr = 2 = min(m, d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kr = kruskal_rank(V, exhaustive_limit=exhaustive_limit, samples=50)
    assert kr.upper == 2 and kr.witness is None
    if exhaustive_limit:
        assert kr.lower == 2
        assert general_position(V).at_least(2) is Decision.TRUE
    W = _exact_rows([[1, 1], [TINY, 0], [0, 0]])  # an exactly zero row: kr = 0
    kw = kruskal_rank(W)  # lower = 1 needs no zero row: a zero row not flagged would certify a lie
    assert kw.lower == 0 and kw.upper == 0 and kw.witness == (2,)
    assert kruskal_rank([[1.0, 0.0], [0.0, 1.0]]).lower == 2  # a list of rows (no dtype)


def test_general_position_reads_lists_and_float_arrays():
    from verifier.arith.kruskal import general_position

    rows = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    for V in (rows, np.array(rows), np.array(rows, dtype=np.int64)):
        assert general_position(V).at_least(2) is Decision.TRUE
    assert general_position([[1.0, 2.0], [2.0, 4.0]]).at_least(2) is Decision.FALSE
