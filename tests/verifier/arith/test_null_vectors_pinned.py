"""Pinned results of verifier/arith/null_vectors.py (mutation testing, issue 9)."""
from verifier.arith.null_vectors import certify_rank_upper_bound, certify_rank_upper_bound_exact

A = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]  # rank 1, null space spanned by (2,-1,0), (3,0,-1)
METHOD = "exact over Q: A v = 0 and the vectors independent (flint fmpq)"


def _d(res):
    d = res.to_dict()
    assert 0 < d.pop("seconds") < 60  # measured, not the default 0.0
    return d


def test_accepted_and_rejected_certificates():
    ok = certify_rank_upper_bound(A, [[2, -1, 0], [3, 0, -1]])
    assert _d(ok) == {"k_upper": 1, "null_vectors": [["2", "-1", "0"], ["3", "0", "-1"]], "decision": "true",
                      "method": METHOD, "reason": ""}
    bad = certify_rank_upper_bound(A, [[1, 0, 0]])
    assert _d(bad) == {"k_upper": 2, "null_vectors": [["1", "0", "0"]], "decision": "false", "method": METHOD,
                       "reason": "vector 0 is not in the null space: A v != 0"}
    dep = certify_rank_upper_bound(A, [[2, -1, 0], [4, -2, 0]])
    assert _d(dep) == {"k_upper": 2, "null_vectors": [["2", "-1", "0"], ["4", "-2", "0"]], "decision": "false",
                       "method": METHOD, "reason": "the vectors are linearly dependent"}
    assert bad.k_upper == 2 and bad.null_vectors == ((1, 0, 0),)


def test_exact_null_space_certificate():
    res = certify_rank_upper_bound_exact(A)
    d = _d(res)
    assert d["k_upper"] == 1 and d["decision"] == "true" and d["reason"] == "" and len(d["null_vectors"]) == 2
    assert d["method"] == "exact null space over Q (flint fmpz_mat.nullspace), re-checked"
