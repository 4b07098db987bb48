"""The deciding lines of the proofs, as truth tables (mutation testing aims here:
a flipped comparison or a dropped branch must fail a test)."""
from types import SimpleNamespace

import numpy as np
import pytest

from proofs.mahdavi2024.proposition1_rank_induction import rank_claim_decision
from proofs.mahdavi2024.proposition2_shared_context_cap import cap_claim_decision
from proofs.mahdavi2024.theorem1_memorization import conflicting_duplicates, memorization_decision
from verifier.arith.compare import Decision
from verifier.arith.rank_caps import check_against_cap, structural_rank_cap
from verifier.data.instances import from_arrays, make_instance
from verifier.errors import CertificateConflict

T, F, U = Decision.TRUE, Decision.FALSE, Decision.UNDECIDED


def test_cap_claim_decision():
    assert cap_claim_decision(5, 5, proved_cap=5, rows=9) is T  # proved, attained
    assert cap_claim_decision(4, 5, proved_cap=None, rows=9) is U  # no proof, no excess
    assert cap_claim_decision(4, 5, proved_cap=None, rows=5) is T  # vacuous: rows <= claim
    assert cap_claim_decision(4, 5, proved_cap=None, rows=6) is U
    assert cap_claim_decision(5, 4, proved_cap=5, rows=9) is F  # a claim below the attained rank
    assert cap_claim_decision(6, 6, proved_cap=None, rows=9) is U  # equality is no excess
    assert cap_claim_decision(6, 5, proved_cap=None, rows=9) is F
    assert cap_claim_decision(4, 5, proved_cap=6, rows=9) is U  # proved cap above the claim proves nothing
    with pytest.raises(CertificateConflict):
        cap_claim_decision(6, 6, proved_cap=5, rows=9)


def _cert(decision, k):
    return SimpleNamespace(decision=decision, k=k)


def test_rank_claim_decision():
    assert rank_claim_decision(_cert(T, 7), 7, 7) is T
    assert rank_claim_decision(_cert(T, 8), 7, 9) is T
    assert rank_claim_decision(_cert(T, 6), 7, 9) is U  # certified less than claimed
    assert rank_claim_decision(_cert(U, 7), 7, 9) is U
    assert rank_claim_decision(_cert(U, 7), 7, 6) is F  # the cap is below the claim
    assert rank_claim_decision(_cert(U, 7), 7, 7) is U  # cap = claim: no contradiction


def test_memorization_decision():
    # rank(Z) = T certified proves an exact readout exists: the residual's enclosure never overrides it (issue 32)
    assert memorization_decision(T, None) is T
    assert memorization_decision(U, (0, 3)) is F
    assert memorization_decision(U, None) is U and memorization_decision(F, None) is U


def test_conflicting_duplicates():
    base = make_instance(H=2, n=2, d=3, T=4, seed=0)
    E, e, y = np.array(base.contexts), np.array(base.queries), np.array(base.labels)
    assert conflicting_duplicates(base) is None
    E[3], e[3], y[3] = E[1], e[1], y[1]
    assert conflicting_duplicates(from_arrays(E, e, y, H=2)) is None  # equal labels: no clash
    y[3] = y[1] + 1
    assert conflicting_duplicates(from_arrays(E, e, y, H=2)) == (1, 3)


def test_structural_caps():
    rng = np.random.default_rng(0)
    E, e = rng.standard_normal((9, 3, 5)), rng.standard_normal((9, 5))
    cap = structural_rank_cap(E, e, H=2)
    assert cap.cap == 9 and cap.why == "Z is T x Hd"
    E2, e2 = E.copy(), e.copy()
    E2[4], e2[4] = E2[2], e2[2]
    assert structural_rank_cap(E2, e2, H=2).cap == 8  # one repeated example
    shared = np.broadcast_to(E[:1], E.shape)
    c = structural_rank_cap(shared, e, H=2)
    assert c.cap == 2 * (3 - 1) + 1 and "shared context" in c.why
    assert structural_rank_cap(shared, e, H=4).cap == 9  # H(n-1)+1 = 9 ties with T = 9: the structure is named
    assert "shared" in structural_rank_cap(shared, e, H=4).why
    s1 = make_instance(H=2, n=3, d=4, T=10, context="sumconst", seed=1)
    c1 = structural_rank_cap(s1.contexts, s1.queries, H=2)
    assert c1.cap == 2 * (4 - 1) + 1 and "sums to c" in c1.why
    E0 = np.array(s1.contexts)
    E0[..., -1] -= 1.0  # every token now sums to 0: H block indicators, cap H(d-1)
    assert structural_rank_cap(E0, s1.queries, H=2).cap == 2 * (4 - 1)
    E0[0, 0, 0] += 2.0 ** -20  # one token off: no sum structure
    assert structural_rank_cap(E0, s1.queries, H=2).cap == 8  # T x Hd = min(10, 8)


def test_check_against_cap():
    cap = structural_rank_cap(np.broadcast_to(np.eye(2, 3), (6, 2, 3)), np.arange(18.0).reshape(6, 3), H=2)
    check_against_cap(cap.cap, cap)  # equality is fine
    with pytest.raises(CertificateConflict):
        check_against_cap(cap.cap + 1, cap)


def test_kruskal_at_least_and_certified_rank():
    from verifier.arith.kruskal import kruskal_at_least
    from verifier.arith.rank import certified_rank
    assert kruskal_at_least(3, 5, 3) is T and kruskal_at_least(3, 5, 2) is T
    assert kruskal_at_least(3, 5, 4) is U and kruskal_at_least(3, 5, 5) is U
    assert kruskal_at_least(3, 5, 6) is F and kruskal_at_least(2, 2, 3) is F
    assert certified_rank(7, T) == 7 and certified_rank(7, U) == 0 and certified_rank(7, F) == 0
