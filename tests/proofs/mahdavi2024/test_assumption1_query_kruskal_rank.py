"""Assumption 1: Kruskal rank of the queries >= n.  Drawn instances agree
with a brute-force oracle; degenerate queries are refuted with an exact
witness; large T is inconclusive with the paper's sampled evidence; the
hypothesis n < d is recorded; the negative controls are rejected."""
import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proofs.mahdavi2024.assumption1_query_kruskal_rank import check_assumption1
from verifier.arith.exact import exact_matvec_is_zero, exact_rank
from verifier.data.instances import from_arrays, make_instance
from verifier.data.strategies import attention_instances
from verifier.statements import registry
from verifier.statements.at_precision import EXACT_ONLY
from verifier.statements.runner import run_control


def oracle(queries, n) -> bool:
    T = queries.shape[0]
    return T >= n and all(exact_rank(queries[list(S)]) == n for S in itertools.combinations(range(T), n))


def _witness(ev):
    return next(c for c in ev.certificates if c["kind"] == "witness")


@given(attention_instances(T=st.integers(1, 9)))
def test_verdict_matches_the_oracle(inst):
    ev = check_assumption1(inst)
    holds = oracle(inst.queries, inst.n)
    assert ev.certified
    assert ev.verdict == ("verified" if holds else "refuted")
    assert ev.hypotheses == ()  # a property of the data: no hypothesis (n >= d simply fails)
    assert ev.measured["at the data's precision"] in (EXACT_ONLY, "fails (at the stored values)")
    if inst.T < inst.n:
        assert "Definition 1" in ev.reason and ev.certificates[-1]["kind"] == "structural"


@given(attention_instances(degenerate=st.sampled_from(["repeated-queries", "cls-queries"]),
                           T=st.integers(5, 7)))  # T >= n: the bound is a witness, not T < n
def test_equal_queries_are_refuted_with_a_witness(inst):
    ev = check_assumption1(inst)
    assert ev.verdict == "refuted" and ev.exit_code == 1
    w = _witness(ev)
    assert len(w["subset"]) == 2 and exact_matvec_is_zero(inst.queries[w["subset"]].T, w["coefficients"])


@given(st.integers(0, 2**16), st.integers(2, 4))
def test_planted_dependent_n_subset_is_refuted(seed, n):
    """Query n-1 ... a combination of n-1 others on a dyadic grid: exact."""
    rng = np.random.default_rng(seed)
    T, d = n + 3, n + 2
    q = np.round(rng.standard_normal((T, d)) * 256) / 256
    q[n - 1] = q[: n - 1].sum(axis=0) - q[0]  # in span of the first n-1 queries
    inst = from_arrays(rng.standard_normal((T, n, d)), q, H=2, d_h=n)
    ev = check_assumption1(inst)
    assert ev.verdict == "refuted"
    w = _witness(ev)
    assert len(w["subset"]) <= n and exact_matvec_is_zero(q[w["subset"]].T, w["coefficients"])


def test_large_T_is_inconclusive_with_sampled_evidence():
    inst = make_instance(H=40, n=3, d=6, seed=0)  # T = 81: C(81, 3) = 85320 > 20000
    ev = check_assumption1(inst, samples=300)
    assert ev.verdict == "inconclusive" and not ev.certified and ev.exit_code == 3
    assert ev.measured["sampled_independent"] == "300/300" and ev.measured["subsets"] == 85320
    assert "exhaustive_limit" in ev.reason
    assert check_assumption1(inst, exhaustive_limit=100_000).verdict == "verified"


def test_the_default_sample_is_the_papers_5000_within_the_work_budget(monkeypatch):
    import proofs.mahdavi2024.definition1_kruskal_rank as D

    inst = make_instance(H=40, n=3, d=6, seed=0)  # C(81, 3) = 85320 > 20000: sampled
    assert D.sample_size(3) == 5000 and "5000/5000" in check_assumption1(inst).reason
    monkeypatch.setattr(D, "SAMPLE_BUDGET", 27 * 40)  # k^3 = 27 per 3-subset: 40 of them
    ev = check_assumption1(inst)
    assert ev.measured["sampled_independent"] == "40/40" and ev.verdict == "inconclusive"
    assert "40 of its 5000 subsets: the work budget sample_size(3)" in ev.reason
    ev = check_assumption1(inst, samples=300)  # asked for: no cut to report
    assert ev.measured["sampled_independent"] == "300/300" and "work budget" not in ev.reason
    monkeypatch.setattr(D, "SAMPLE_BUDGET", 1)
    assert D.sample_size(3) == 1 and check_assumption1(inst).measured["sampled_independent"] == "1/1"


def test_a_witness_found_by_sampling_refutes():
    inst = make_instance(H=40, n=3, d=6, seed=0)
    q = np.array(inst.queries)
    q[10] = q[20]  # duplicate pair: found by the witness hunt even without exhaustion
    ev = check_assumption1(inst.replace(queries=q), samples=300)
    assert ev.verdict == "refuted"
    assert _witness(ev)["subset"] == [10, 20]


def test_n_gt_d_simply_fails():
    inst = make_instance(H=1, n=4, d=3, T=4, seed=0)
    ev = check_assumption1(inst)
    assert ev.verdict == "refuted" and ev.certified  # 4 queries in R^3: Kruskal rank <= 3 < 4
    assert "Definition 1" in ev.reason


def test_user_arrays():
    rng = np.random.default_rng(5)
    inst = from_arrays(rng.standard_normal((6, 3, 5)), rng.standard_normal((6, 5)))
    ev = check_assumption1(inst)
    assert ev.verdict == "verified" and ev.certificates[0]["subsets"] == 20


def test_same_seed_same_evidence():
    inst = make_instance(H=40, n=3, d=6, seed=2)
    a = check_assumption1(inst, samples=200, seed=7).to_dict(with_trail=True)
    b = check_assumption1(inst, samples=200, seed=7).to_dict(with_trail=True)
    for d in (a, b):
        d.pop("seconds")
        for step in d["trail"]:
            step["data"].pop("seconds", None)
    assert a["measured"] == b["measured"] and a["verdict"] == b["verdict"]


def test_repeated_queries_control_is_rejected():
    control = next(c for c in registry.get("assumption1").controls if "repeated" in c.description)
    ev, rejected = run_control("assumption1", control)
    assert rejected and ev.verdict == "refuted" and _witness(ev)["subset"] == [0, 1]


def test_low_kruskal_control_is_rejected():
    control = next(c for c in registry.get("assumption1").controls if "low-kruskal" in c.description)
    ev, rejected = run_control("assumption1", control)
    assert rejected, ev.reason
    assert len(_witness(ev)["subset"]) <= 3


@given(attention_instances(degenerate="low-kruskal-queries", n=st.integers(3, 4), T=st.integers(4, 7)))
def test_low_kruskal_queries_are_refuted(inst):
    ev = check_assumption1(inst)
    assert ev.verdict == "refuted"
    w = _witness(ev)
    assert len(w["subset"]) <= 3 and exact_matvec_is_zero(inst.queries[w["subset"]].T, w["coefficients"])


def _file(tmp_path, E, e, name="data.npz"):
    path = tmp_path / name
    np.savez(path, contexts=E, queries=e)
    return path


def test_float_computed_dependence_fails_at_the_data_precision(tmp_path):
    """q5 = 2 q1 - 3 q6 in float64: independent as exact rationals, dependent
    at an explicit point of the data's intervals (re-checked here in exact
    rationals); --exact-input keeps the exact reading."""
    from proofs.mahdavi2024.theorem1_memorization import check_theorem1
    from verifier.data.instances import load_data

    rng = np.random.default_rng(0)
    E, e = rng.standard_normal((6, 3, 5)), rng.standard_normal((6, 5))
    e[4] = 2 * e[0] - 3 * e[5]
    path = _file(tmp_path, E, e)
    inst = load_data(path)
    ev = check_assumption1(inst)
    assert ev.verdict == "refuted" and ev.reason.startswith("fails at the data's precision: the queries [0, 4, 5]")
    assert ev.measured["on the stored values"] == "holds"
    box = ev.measured["over the data's intervals"]
    assert box["witness"] == [0, 4, 5]
    assert_witness_point(inst, box["witness"], box["coefficients"])
    exact = check_assumption1(load_data(path, exact_input=True))
    assert exact.verdict == "verified" and exact.measured["at the data's precision"] == EXACT_ONLY
    thm = check_theorem1(load_data(path, H=3))
    assert thm.verdict == "hypotheses-unmet"
    (a1,) = [h for h in thm.hypotheses if h.name == "Assumption 1"]
    assert a1.status == "fails-at-precision" and "[0, 4, 5]" in thm.reason
    assert check_theorem1(load_data(path, exact_input=True, H=3)).verdict == "verified"


def test_robust_user_data_holds_at_the_data_precision(tmp_path):
    from verifier.data.instances import load_data

    rng = np.random.default_rng(1)
    path = _file(tmp_path, rng.standard_normal((6, 3, 5)).astype(np.float32),
                 rng.standard_normal((6, 5)).astype(np.float32))
    ev = check_assumption1(load_data(path))
    assert ev.verdict == "verified" and ev.measured["at the data's precision"] == "holds"
    box = ev.measured["over the data's intervals"]
    assert box["certified"] == box["of"] == 20 and box["largest residual bound ||I - R A X||_inf (< 1 certifies)"] < 1


def test_int64_queries_beyond_2_53_are_exact_whatever_float64_does():
    """Exact rationals (int64 queries near 2^60, not float64 values): integers stand for themselves,
    so the verdict is the exact one on the values given, with no interval certificate."""
    inst = make_instance(H=2, n=3, d=5, seed=0)
    rng = np.random.default_rng(0)
    q = rng.integers(-1000, 1000, (inst.T, 5)).astype(np.int64)
    q[:, 0] = 2**60 + rng.integers(-2**20, 2**20, inst.T)
    data = from_arrays(np.array(inst.contexts), q, H=2, reading="dtype")
    ev = check_assumption1(data)
    assert ev.verdict == "verified" and ev.measured["at the data's precision"] == EXACT_ONLY
    assert oracle(data.exact_array("queries"), 3)


def assert_witness_point(inst, rows, coefficients):
    """The witness of "fails at the data's precision", re-checked from scratch in exact rationals:
    for each column j, -sum_i c_i q_ij lies strictly inside the sums the half-ulps allow, so a point
    of the intervals (each entry within half an ulp of the stored float64) makes the rows dependent."""
    from fractions import Fraction

    c = [Fraction(x) for x in coefficients]
    Q = np.asarray(inst.queries)[rows]
    assert any(c)
    for j in range(Q.shape[1]):
        def half_gaps(x):
            up = Fraction(float(np.spacing(abs(x)))) / 2  # away from zero
            down = Fraction(float(abs(x) - np.nextafter(abs(x), 0))) / 2 if x != 0 else up
            return (up, down) if x > 0 else (down, up) if x < 0 else (up, up)
        t = -sum(ci * Fraction(float(Q[i, j])) for i, ci in enumerate(c))
        U = sum(ci * half_gaps(Q[i, j])[0] if ci > 0 else -ci * half_gaps(Q[i, j])[1] for i, ci in enumerate(c))
        L = -sum(ci * half_gaps(Q[i, j])[1] if ci > 0 else -ci * half_gaps(Q[i, j])[0] for i, ci in enumerate(c))
        assert t == 0 or L < t < U


# ------------------------------------------- T <= d: every subset certified (issue 38)

def test_t_at_most_d_is_certified_without_a_sample():
    """T <= d and too many n-subsets to exhaust: ONE rank certificate of the
    T x d queries proves all T independent, so every n-subset is: verified,
    certified, nothing sampled (the ViT setting, T = 757 <= d = 768, in
    small).  Truth: the exact rank over Q."""
    inst = make_instance(H=6, n=8, d=48, d_h=8, seed=1)  # T = 43 <= d = 48, C(43, 8) > 20000
    ev = check_assumption1(inst)
    assert ev.verdict == "verified" and ev.certified and ev.exit_code == 0
    assert exact_rank(np.array(inst.queries)) == inst.T
    (cert,) = [c for c in ev.certificates if c["kind"] == "all vectors independent"]
    assert cert["subsets"] == ev.measured["subsets"] and cert["residual_norm_upper"] < 1
    assert ev.measured["sampled_independent"] == "0/0" and ev.measured["kruskal_lower"] == inst.T
    assert "none sampled" in ev.reason and "rank of all 43 queries certified" in ev.method
    hyp = ev.to_dict(with_trail=True)["trail"]
    assert any("every subset independent" in s["title"] for s in hyp)


def test_t_at_most_d_with_dependent_queries_is_never_certified():
    """All T queries dependent (one is the sum of two others, exactly on a
    dyadic grid), every n-subset still tested: the whole-set certificate
    cannot hold; the dependent triple is found (refuted, n = 3) or the
    verdict stays evidence -- never verified."""
    inst = make_instance(H=6, n=3, d=48, d_h=3, seed=2)  # T = 13
    q = np.round(np.array(inst.queries) * 1024) / 1024
    q[7] = q[2] + q[4]
    ev = check_assumption1(inst.replace(queries=q), exhaustive_limit=10)
    assert ev.verdict == "refuted" and _witness(ev)["subset"] == [2, 4, 7]
    q = np.round(np.array(inst.queries) * 1024) / 1024
    q[12] = q[:12].sum(axis=0)  # dependent as a whole, every 3-subset independent
    data = inst.replace(queries=q)
    ev = check_assumption1(data, exhaustive_limit=10, samples=50)
    assert ev.verdict == "inconclusive" and not any(c["kind"] == "all vectors independent" for c in ev.certificates)
    assert oracle(q, 3) and exact_rank(q) == 12


def test_t_at_most_d_exact_rationals_are_certified_in_balls():
    """Exact rationals that are no floats (k/3: what a JSON decimal or a long
    double reads to): the whole-set certificate encloses them in float balls;
    a planted exact dependency among them is never certified.  int64 queries
    near 2^60 (float64 balls around them would be 512 wide in the first
    column, wider than the spread of its values): a 30 x 30 minor goes
    through arb balls of the exact integers, and certifies."""
    from flint import fmpq

    from verifier.arith.kruskal import kruskal_rank_at_least

    rng = np.random.default_rng(3)
    T, d = 30, 40
    ints = rng.integers(-1000, 1000, (T, d))
    Q = np.array([[fmpq(int(x), 3) for x in row] for row in ints], dtype=object)
    res = kruskal_rank_at_least(Q, 5, exhaustive_limit=10, samples=20)
    assert res.rank_certificate is not None and res.lower == T and res.sampled == 0
    assert exact_rank(ints.astype(float)) == T
    Q[5] = [Q[1][j] + Q[2][j] - Q[3][j] for j in range(d)]  # exact; the float64 copies are not dependent
    res = kruskal_rank_at_least(Q, 5, exhaustive_limit=10, samples=20)
    assert res.rank_certificate is None and res.lower < T
    q = ints.astype(np.int64)
    q[:, 0] += 2**60
    for dependent in (False, True):
        if dependent:
            q[5] = q[1] + q[2] - q[3]
        data = from_arrays(rng.standard_normal((T, 3, d)), q, H=2, reading="dtype")
        ev = check_assumption1(data, exhaustive_limit=10, samples=50)
        whole = any(c["kind"] == "all vectors independent" for c in ev.certificates)
        assert whole == (not dependent)  # 30 x 30: the arb path, on the rationals themselves
        assert not whole or exact_rank(data.exact_array("queries")) == T
        assert ev.verdict != "verified" or not dependent
