"""Pinned behaviour of verifier/arith/rank_caps.py (mutation testing, issue 9):
a cap too LOW would make a true certificate conflict, so the counts of distinct
examples and the token-sum test are pinned on edge cases."""
import numpy as np
import pytest

from verifier.arith.rank_caps import DIMENSIONS, check_against_cap, structural_rank_cap
from verifier.errors import CertificateConflict

REP = "1 repeated examples (identical context and query)"
SHARED = "shared context (Prop. 2: H-1 null vectors of S)"


def _ctx(T, n=2, d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((T, n, d))


def test_examples_differing_only_in_their_context_are_distinct():
    E = _ctx(2)
    e = np.ones((2, 3))  # the same query, different contexts
    cap = structural_rank_cap(E, e, H=2)
    assert REP not in cap.caps and cap.cap == 2 and cap.why == DIMENSIONS


def test_signed_zeros_are_one_example_and_tiny_differences_are_not():
    E = np.repeat(_ctx(1), 2, axis=0)  # identical copies (not a stride-0 view)
    e = np.array([[0.0, 1.0, 2.0], [-0.0, 1.0, 2.0]])
    cap = structural_rank_cap(E, e, H=2)
    assert cap.caps[REP] == 1 and cap.cap == 1 and cap.why == REP
    F = np.zeros((2, 2, 3))
    F[1, 0, 0] = -0.0
    assert structural_rank_cap(F, np.ones((2, 3)), H=2).caps[REP] == 1  # 0.0 and -0.0 contexts: the same example
    tiny = np.array([[0.0, 0.0, 0.0], [1e-17, 0.0, 0.0]])
    assert REP not in structural_rank_cap(E, tiny, H=2).caps


def test_distinct_queries_on_a_shared_context_are_counted_as_rows():
    E = np.broadcast_to(_ctx(1), (3, 2, 3))
    e = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [1.0, 1.0, 0.0]])  # 3 distinct rows, 2 distinct values
    assert "repeated" not in " ".join(structural_rank_cap(E, e, H=2).caps)
    e2 = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [3.0, 1.0, 0.0]])
    assert structural_rank_cap(E, e2, H=2).caps[REP] == 2


def test_shared_context_by_copies_gets_the_prop2_cap():
    E = np.repeat(_ctx(1, n=2, d=4), 6, axis=0)  # copies, strides != 0
    e = np.random.default_rng(1).standard_normal((6, 4))
    cap = structural_rank_cap(E, e, H=2)
    assert cap.caps[SHARED] == 3 and cap.cap == 3 and cap.why == SHARED
    assert cap.caps[DIMENSIONS] == 6
    assert cap.to_dict() == {"kind": "structural cap rank(Z) <= cap for ANY weights", "cap": 3, "why": SHARED,
                             "caps": {DIMENSIONS: 6, SHARED: 3}}


def test_token_sums_are_checked_on_every_example():
    E = np.zeros((2, 2, 3))
    E[0] = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]  # example 0: every token sums to 1
    E[1] = [[1.0, 1.0, 0.0], [0.0, 0.0, 3.0]]  # example 1: not
    e = np.eye(3)[:2]
    assert not any("sums to" in k for k in structural_rank_cap(E, e, H=1).caps)
    E[1] = [[0.25, 0.75, 0.0], [0.0, 0.0, 1.0]]
    assert any("every token sums to c = 1" in k for k in structural_rank_cap(E, e, H=1).caps)
    one = structural_rank_cap(np.array([[[0.5, 0.5]]]), np.array([[1.0, 0.0]]), H=1)  # a single token
    assert one.cap == 1


def test_check_against_cap():
    cap = structural_rank_cap(np.repeat(_ctx(1), 6, axis=0), np.random.default_rng(1).standard_normal((6, 3)), H=2)
    check_against_cap(cap.cap, cap)
    with pytest.raises(CertificateConflict, match=f"rank\\(Z\\) >= {cap.cap + 1} certified by a minor"):
        check_against_cap(cap.cap + 1, cap)


def test_repeats_are_found_among_equal_queries_only_and_exactly(monkeypatch):
    """Examples with different queries differ whatever their contexts (their contexts are not
    hashed); among equal queries the contexts decide, exactly: equal contexts are one example,
    contexts one ulp apart are two."""
    import hashlib

    rng = np.random.default_rng(5)
    E, e = rng.standard_normal((8, 2, 3)), rng.standard_normal((8, 3))
    E[5] = E[1]  # the same context, another query: two examples
    hashed = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda b: hashed.append(len(b)) or real(b))
    assert REP not in structural_rank_cap(E, e, H=2).caps and hashed == []
    e[3] = e[6] = e[0]  # one query for examples 0, 3, 6
    E[3] = E[0]  # ... and one context for 0 and 3: a repeat
    E[6] = E[0]
    E[6, 1, 2] = np.nextafter(E[0, 1, 2], np.inf)  # one ulp off: another example
    cap = structural_rank_cap(E, e, H=2)
    assert cap.caps[REP] == 7 and len(hashed) == 3  # only the 3 examples of that query are hashed
    e[6] = e[0] + 0.0
    E[6] = E[0] * 1.0
    assert structural_rank_cap(E, e, H=2).caps["2 repeated examples (identical context and query)"] == 6
