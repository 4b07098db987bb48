"""verifier/arith/box_subsets.py: the threshold that certifies (a residual bound < 1, never 1 and never
more), and every field of the evidence on each path, on 1 x 1 and 1 x 2 matrices whose bounds are known
exactly (|rad / mid|: a float computation may only round them up, by a few ulps).  Ground truth by hand:
the box of [mid] with radius r holds the singular matrix [0] iff r >= |mid|."""
import numpy as np
import pytest

from verifier.arith import box_subsets
from verifier.arith.box_rank import gap_sides
from verifier.arith.box_subsets import BoxIndependence, stack_over_box, subsets_over_box
from verifier.arith.compare import Decision


def _near(got: float, exact: float) -> bool:
    """A rigorous bound: at least the exact value, at most a few ulps above it."""
    return exact <= got <= exact * (1 + 2.0**-40) + 2.0**-1000


def _fields(r: BoxIndependence) -> tuple:
    return r.decision, r.how, r.screened, r.population, r.certified, r.uncertified, r.witness_index


def _ones(radii) -> tuple:
    radii = np.asarray(radii, dtype=np.float64)
    return np.ones((len(radii), 1, 1)), radii.reshape(-1, 1, 1)


@pytest.mark.parametrize("radius", [1.0, 1.5, 1.99])
def test_a_stack_certifies_below_one_only(radius):
    """[1] +/- 1 holds [0] (singular); so does [1] +/- 1.5: bounds 1 and 1.5 certify nothing."""
    M, R = _ones([0.5, radius])
    r = stack_over_box(M, R, exact=lambda b: M[b], gaps=None)
    assert _fields(r) == (Decision.UNDECIDED, "every matrix", 2, 2, 1, 1, None) and _near(r.worst_bound, 0.5)


def test_a_stack_certified_everywhere():
    M, R = _ones([0.25, 0.5, 0.125])
    r = stack_over_box(M, R, exact=lambda b: M[b], gaps=None)
    assert _fields(r) == (Decision.TRUE, "every matrix", 3, 3, 3, 0, None) and _near(r.worst_bound, 0.5)
    assert r.witness is None


def test_nothing_certified_reports_no_worst_bound():
    M, R = _ones([1.0, 2.0])
    r = stack_over_box(M, R, exact=lambda b: M[b], gaps=None)
    assert _fields(r) == (Decision.UNDECIDED, "every matrix", 2, 2, 0, 2, None) and r.worst_bound == 0.0


def test_a_stack_searches_the_matrix_without_a_bound_first_and_names_it():
    """Three uncertified matrices: [1] +/- 1.5 (bound 1.5, but its half-gaps 2^-9 hold no singular point),
    [2^-10] (bound 2, half-gaps 2^-9 reach 0), [0] (no bound at all: singular as stored).  The search goes
    from no bound down, so the witness is the last matrix, named by its label."""
    M = np.array([[[1.0]], [[2.0**-10]], [[0.0]]])
    R = np.array([[[1.5]], [[2.0**-9]], [[2.0**-9]]])

    def gaps(b):
        return gap_sides(M[b], np.full((1, 1), -9), np.full((1, 1), -9), np.ones((1, 1), bool))

    r = stack_over_box(M, R, exact=lambda b: M[b], gaps=gaps, labels=["a", "b", "c"])
    assert _fields(r) == (Decision.FALSE, "every matrix", 3, 3, 0, 3, ("c",)) and r.worst_bound == 0.0
    assert r.witness is not None and r.witness.verified
    # without [0], the next in order: [2^-10] (bound 2) before [1] (bound 1.5, no witness anyway)
    r = stack_over_box(M[:2], R[:2], exact=lambda b: M[b], gaps=gaps, labels=["a", "b"])
    assert _fields(r) == (Decision.FALSE, "every matrix", 2, 2, 0, 2, ("b",)) and r.witness.verified
    # default labels: the index
    r = stack_over_box(M[1:2], R[1:2], exact=lambda b: M[1 + b], gaps=lambda b: gaps(1 + b))
    assert r.witness_index == (0,) and r.decision is Decision.FALSE


@pytest.mark.parametrize("radius", [1.0, 1.5])
def test_all_rows_at_once_needs_a_bound_below_one(radius):
    """m <= d: one certificate for all rows, only when its bound is < 1; else the subsets one by one."""
    mid, rad = np.array([[1.0, 0.0]]), np.array([[radius, 0.0]])
    r = subsets_over_box(mid, rad, 1, exact=lambda i: mid[i], gaps=None)
    assert _fields(r) == (Decision.UNDECIDED, "exhaustion", 1, 1, 0, 1, None) and r.worst_bound == 0.0


def test_all_rows_at_once_when_m_equals_d():
    mid, rad = np.eye(2), np.eye(2) * 0.25
    r = subsets_over_box(mid, rad, 1, exact=lambda i: mid[i], gaps=None)
    assert _fields(r) == (Decision.TRUE, "all rows", 2, 2, 2, 0, None) and _near(r.worst_bound, 0.25)


def test_subsets_by_exhaustion_count_every_block(monkeypatch):
    """Three 1 x 1 subsets of [1; 2; 4] with radii 0.5, 2.5, 1 (bounds 0.5, 1.25, 0.25); one subset per
    block (a small _CHUNK) must give the same counts as one block."""
    V = np.array([[1.0], [2.0], [4.0]])
    for chunk in (box_subsets._CHUNK, 1):
        monkeypatch.setattr(box_subsets, "_CHUNK", chunk)
        r = subsets_over_box(V, np.array([[0.5], [2.5], [1.0]]), 1, exact=lambda i: V[i], gaps=None)
        assert _fields(r) == (Decision.UNDECIDED, "exhaustion", 3, 3, 2, 1, None) and _near(r.worst_bound, 0.5)
        r = subsets_over_box(V, np.array([[0.5], [1.0], [3.0]]), 1, exact=lambda i: V[i], gaps=None)
        assert _fields(r) == (Decision.TRUE, "exhaustion", 3, 3, 3, 0, None) and _near(r.worst_bound, 0.75)
        r = subsets_over_box(V, np.array([[1.5], [1.0], [3.0]]), 1, exact=lambda i: V[i], gaps=None)
        assert _fields(r) == (Decision.UNDECIDED, "exhaustion", 3, 3, 2, 1, None) and _near(r.worst_bound, 0.75)


def test_a_sample_counts_what_it_drew_and_never_certifies():
    V = np.array([[1.0], [2.0], [4.0]])
    rad = np.array([[0.5], [2.5], [1.0]])
    r = subsets_over_box(V, rad, 1, exact=lambda i: V[i], gaps=None, exhaustive_limit=0, samples=7)
    assert r.decision is Decision.UNDECIDED and r.how == "sample" and r.population is None
    assert r.screened == 7 and r.certified + r.uncertified == 7 and r.uncertified >= 1  # 7 draws of 3 subsets
    every = subsets_over_box(V, np.full((3, 1), 0.25), 1, exact=lambda i: V[i], gaps=None, exhaustive_limit=2,
                             samples=5)
    assert _fields(every) == (Decision.UNDECIDED, "sample", 5, None, 5, 0, None)
    # C(3, 1) = 3 <= the limit: exhaustion, the population counted
    assert subsets_over_box(V, np.full((3, 1), 0.25), 1, exact=lambda i: V[i], gaps=None,
                            exhaustive_limit=3).how == "exhaustion"


def test_the_default_limits():
    """20,000 subsets are exhausted by default, 5,000 sampled beyond (stated in the evidence's 'examined')."""
    V = np.random.default_rng(0).standard_normal((200, 1)) + 3.0  # C(200, 1): exhausted
    r = subsets_over_box(V, np.abs(V) * 2.0**-30, 1, exact=lambda i: V[i], gaps=None)
    assert (r.how, r.screened) == ("exhaustion", 200)
    V = np.random.default_rng(0).standard_normal((201, 2)) + 3.0  # C(201, 2) = 20100 > 20000: sampled
    r = subsets_over_box(V, np.abs(V) * 2.0**-30, 2, exact=lambda i: V[i], gaps=None)
    assert (r.how, r.screened, r.population) == ("sample", 5000, None)
    V = np.random.default_rng(0).standard_normal((200, 2)) + 3.0  # C(200, 2) = 19900: exhausted
    assert subsets_over_box(V, np.abs(V) * 2.0**-30, 2, exact=lambda i: V[i], gaps=None).screened == 19900


def test_sampled_subsets_are_sorted_distinct_rows_and_the_seed_decides_them():
    draws, exhaustive = box_subsets._subsets(9, 3, 0, 50, seed=4)
    blocks = list(draws)
    assert not exhaustive and sum(len(b) for b in blocks) == 50
    for b in blocks:
        assert b.shape[1] == 3 and np.all(np.diff(b, axis=1) > 0) and b.min() >= 0 and b.max() < 9
    again = np.concatenate(list(box_subsets._subsets(9, 3, 0, 50, seed=4)[0]))
    assert np.array_equal(np.concatenate(blocks), again)
    other = np.concatenate(list(box_subsets._subsets(9, 3, 0, 50, seed=5)[0]))
    assert not np.array_equal(again, other)
    # every 3-subset of 9 rows can be drawn (the partition picks the k smallest of m uniform keys)
    seen = {tuple(x) for x in np.concatenate(list(box_subsets._subsets(9, 3, 0, 4000, seed=0)[0]))}
    assert len(seen) == 84


def test_k_outside_one_to_min_m_d_is_refused():
    V = np.eye(3)
    for k in (0, 4):
        with pytest.raises(ValueError, match=r"outside 1\.\.min\(m, d\) = 3"):
            subsets_over_box(V, None, k, exact=lambda i: V[i], gaps=None)
    assert subsets_over_box(V, None, 1, exact=lambda i: V[i], gaps=None).decision is Decision.TRUE


def test_to_dict_says_a_sample():
    V = np.array([[1.0], [2.0], [4.0]])
    r = subsets_over_box(V, np.full((3, 1), 0.25), 1, exact=lambda i: V[i], gaps=None, exhaustive_limit=0, samples=4)
    assert r.to_dict()["of"] == "a sample"
    assert subsets_over_box(V, np.full((3, 1), 0.25), 1, exact=lambda i: V[i], gaps=None).to_dict()["of"] == 3


def test_subsets_search_the_subset_without_a_bound_first():
    """[1; 2^-10; 0], k = 1: {1} has bound 2 and half-gaps reaching 0, {2} no bound; {0} is certified.  The
    witness is {2}, searched first; the stored values handed over as exact rationals (the float copy is
    then the mid given)."""
    from flint import fmpq

    V = np.array([[1.0], [2.0**-10], [0.0]])
    rad = np.array([[0.5], [2.0**-9], [2.0**-9]])
    Q = np.array([[fmpq(*float(x).as_integer_ratio())] for x in V[:, 0]], dtype=object)

    def gaps(idx):
        idx = list(idx)
        return gap_sides(Q[idx].tolist(), np.full((len(idx), 1), -9), np.full((len(idx), 1), -9),
                         np.ones((len(idx), 1), bool))

    r = subsets_over_box(V, rad, 1, exact=lambda i: Q[list(i)], gaps=gaps)
    assert _fields(r) == (Decision.FALSE, "exhaustion", 3, 3, 1, 2, (2,)) and _near(r.worst_bound, 0.5)
    assert r.witness.verified
    r = subsets_over_box(V[:2], rad[:2], 1, exact=lambda i: Q[list(i)], gaps=gaps)
    assert _fields(r) == (Decision.FALSE, "exhaustion", 2, 2, 1, 1, (1,))
    r = subsets_over_box(V, rad, 1, exact=lambda i: Q[list(i)], gaps=gaps, exhaustive_limit=0, samples=30)
    assert r.decision is Decision.FALSE and r.how == "sample" and r.population is None and r.screened == 30
    assert r.uncertified == 30 - r.certified and r.witness_index == (2,)


def test_a_bound_of_exactly_one_certifies_nothing(monkeypatch):
    """||I - R A X|| < 1 is the certificate; a bound equal to 1 proves nothing (patched bounds: no float
    input gives exactly 1, the rigorous rounding lands above it)."""
    monkeypatch.setattr(box_subsets, "box_full_row_rank", lambda mids, rads, backend=None: np.ones(len(mids)))
    M, R = _ones([0.5, 0.5])
    assert stack_over_box(M, R, exact=lambda b: M[b], gaps=None).certified == 0
    mid = np.array([[1.0, 0.0]])
    r = subsets_over_box(mid, mid * 0.5, 1, exact=lambda i: mid[i], gaps=None)
    assert r.how == "exhaustion" and r.certified == 0 and r.decision is Decision.UNDECIDED


def test_the_backend_is_handed_to_the_certificate(monkeypatch):
    seen = []
    real = box_subsets.box_full_row_rank

    def spy(mids, rads, backend=None):
        seen.append(backend)
        return real(mids, rads)

    monkeypatch.setattr(box_subsets, "box_full_row_rank", spy)
    M, R = _ones([0.5])
    stack_over_box(M, R, exact=lambda b: M[b], gaps=None, backend="B1")
    V = np.array([[1.0], [2.0]])
    subsets_over_box(V, V * 0.25, 1, exact=lambda i: V[i], gaps=None, backend="B2")
    subsets_over_box(np.eye(2), np.eye(2) * 0.25, 1, exact=lambda i: np.eye(2)[i], gaps=None, backend="B3")
    assert seen == ["B1", "B2", "B3"]


def test_a_witness_search_skips_a_subset_without_gaps():
    """gaps(idx) None for the first candidate (no half-gaps known): the search goes on to the next."""
    M = np.array([[[0.0]], [[0.0]]])
    R = np.full((2, 1, 1), 2.0**-9)

    def gaps(b):
        if b == 0:
            return None
        return gap_sides(M[b], np.full((1, 1), -9), np.full((1, 1), -9), np.ones((1, 1), bool))

    r = stack_over_box(M, R, exact=lambda b: M[b], gaps=gaps, labels=["first", "second"])
    assert r.decision is Decision.FALSE and r.witness_index == ("second",)


def test_the_default_exhaustion_limit_is_20000_subsets():
    """The limit the evidence states ('examined ... of'): 20,000 subsets exhausted, 5,000 sampled beyond."""
    import inspect

    params = inspect.signature(subsets_over_box).parameters
    assert (params["exhaustive_limit"].default, params["samples"].default, params["seed"].default) == (20000, 5000, 0)


def test_a_sample_is_the_k_smallest_of_m_uniform_keys_per_draw():
    """The sampled subsets are exactly the rows' indices of the k smallest keys of the seeded stream
    (numpy's PCG64: the same on every machine; which k are smallest does not depend on the partition's
    implementation), drawn in batches of at most 2,000,000 keys: 4,001 subsets of 500 rows take two."""
    for m, k, samples in ((9, 3, 50), (3, 2, 10), (500, 2, 4001), (7, 1, 5)):
        blocks = list(box_subsets._subsets(m, k, 0, samples, seed=11)[0])
        got = np.concatenate(blocks)
        assert got.shape == (samples, k)
        keys = np.random.default_rng([11, 0xB0C5]).random((samples, m))
        assert np.array_equal(got, np.sort(np.argsort(keys, axis=1)[:, :k], axis=1))
    assert [len(b) for b in box_subsets._subsets(500, 2, 0, 4001, seed=0)[0]] == [4000, 1]


def test_the_exhaustion_limit_is_inclusive(monkeypatch):
    """C(m, k) <= exhaustive_limit is exhausted, one more is sampled (C(m, k) patched: 20,000 and 20,001
    real subsets would take seconds)."""
    import types

    V = np.array([[1.0], [2.0], [4.0]])
    for population, how in ((20000, "exhaustion"), (20001, "sample")):
        monkeypatch.setattr(box_subsets, "math", types.SimpleNamespace(comb=lambda m, k, p=population: p))
        r = subsets_over_box(V, np.full((3, 1), 0.25), 1, exact=lambda i: V[i], gaps=None, samples=4)
        assert r.how == how


def test_exact_rows_without_radius_by_exhaustion():
    """rad None (exact values): the subsets are certified as points."""
    V = np.array([[1.0], [2.0], [0.0]])
    r = subsets_over_box(V, None, 1, exact=lambda i: V[i], gaps=None)
    assert _fields(r) == (Decision.UNDECIDED, "exhaustion", 3, 3, 2, 1, None)
