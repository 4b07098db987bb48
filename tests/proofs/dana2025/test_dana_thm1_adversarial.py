"""Thm. 1 (eps = 0): the controls' instances and the reasons of the step and route paths (issue 17, item 2)."""
from __future__ import annotations

import numpy as np

import proofs.dana2025.thm1_exact_route as thm1
from proofs.dana2025.thm1_exact_route import check_dana_thm1_eps0, random_targets
from verifier.data.sequences import make_sequence_instance


def test_the_controls_build_control_instances(monkeypatch):
    seen = []
    monkeypatch.setattr(thm1, "check_dana_thm1_eps0", lambda inst, **kw: seen.append(inst))
    thm1.neg_thm1_shared()
    thm1.neg_thm1_H0()
    assert [(i.kind, i.N, i.d, i.d_h, i.H, i.T0) for i in seen] == [("control", 3, 2, 1, 1, 3), ("control", 2, 2, 1, 0, 2)]
    assert all(i.conditionals.dtype == np.float64 for i in seen)


def test_a_step_that_holds_gives_the_default_reason_not_its_why():
    """Step (iii) with d_h = d holds (its 'why' says so): the reason is conclude's, not the step's note."""
    ev = check_dana_thm1_eps0(make_sequence_instance(N=5, S=2, d=3, H=2, seed=0), step="wv_rank")
    assert ev.verdict == "verified" and ev.certified
    assert ev.measured["why"].startswith("T0 <= d or d_h = d")
    assert ev.reason == "conclusion holds on the instance (hypotheses: none)"


def test_an_undecided_route_gives_its_notes():
    """E = 0 at T0 = H d_h + d: G = 0 (D6), the route's two notes joined by '; '."""
    inst = make_sequence_instance(N=5, S=2, d=3, H=2, seed=0)
    W, E = random_targets(inst, 0)
    ev = check_dana_thm1_eps0(inst, targets=(W, np.zeros_like(E)))
    assert ev.verdict == "inconclusive" and not ev.certified
    assert ev.reason == "parameter draws tried: 1; det G not certainly nonzero (D6)"
