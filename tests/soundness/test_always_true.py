"""Each core certificate, replaced by one that always says TRUE, makes some
negative control or planted-false check fail (issue 9, item 7): the controls
reach the computations that decide "verified", so a lying certificate is seen.
"""
import numpy as np
import planted
import pytest
from flint import arb

from verifier.arith.compare import Decision, LowerBound, UpperBound
from verifier.arith.rank import RankLowerBound
from verifier.statements import registry
from verifier.statements.runner import run_control


def _controls(*sids):
    """Every registered negative control of ``sids``: True while all are rejected as expected."""
    reg = registry.load_all()

    def check():
        return all(run_control(sid, c)[1] for sid in sids for c in reg[sid].controls)
    return check


def _singular():
    return all(planted.refused_singular(A, methods=("arb", "float"))
               for A in planted.singular_family(seed=0, count=120, big=()))


def _capped():
    return all(planted.refused_above_cap(Z, cap) for _, Z, cap in planted.capped_feature_matrices(seed=0)[:6])


def _dependent():
    return all(planted.refused_dependent(planted.dependent_queries(seed=s), 4) for s in range(3))


def _always_true_minor(*args, **kw):
    return Decision.TRUE, 0.0, 128, "patched: always TRUE"


def _always_true_lazy(mid, k, minor_ball, **kw):
    return RankLowerBound(k, tuple(range(k)), tuple(range(k)), Decision.TRUE, 128, "patched", 0.0, 0.0, k)


def _all_independent(self, idx):
    return np.ones(idx.shape[0], dtype=bool), None, idx.shape[0]


PATCHES = {
    # certificate: (target, replacement, checks that must notice)
    "nonsingular minor (arb)": ("verifier.arith.rank._certify_minor", _always_true_minor, (_singular,)),
    "nonsingular minor (float, Rump)": ("verifier.arith.rank.inverse_residual_bound_explained",
                                        lambda *a, **k: (UpperBound(arb(0)), ""), (_singular, _capped)),
    "lazy rank certificate (Prop. 1 / Thm. 1)": (
        "proofs.mahdavi2024.proposition1_rank_induction.certify_rank_lower_bound_lazy", _always_true_lazy,
        (_controls("proposition1", "theorem1"),)),
    "residual ball (exact readout)": (
        "proofs.mahdavi2024.step2_linear_readout.residual_enclosure", lambda *a, **k: (Decision.TRUE, 0.0, 0.0),
        (_controls("step2", "appendixC"),)),
    "Kruskal exhaustion": ("verifier.arith.independence.SubsetIndependence.independent", _all_independent,
                           (_dependent, _controls("assumption1"))),
    "sigma_min lower bound (App. B.2)": (
        "proofs.mahdavi2024.appendixB2_finite_scaling.sigma_min_lower_bound",
        lambda *a, **k: LowerBound(arb(1e300)), (_controls("appendixB2"),)),
    "Claim 1's exact identity": (
        "proofs.mahdavi2024.claim1_fit_one_head.exact_claim1_identities",
        lambda *a, **k: {"P Q = I_k": True, "E^(t) b^(t) = a^(t) for all t": True, "holds": True,
                         "max denominator bits": 0}, (_controls("claim1"),)),
    "structural rank cap": (
        "proofs.mahdavi2024.proposition1_rank_induction.structural_rank_cap",
        lambda *a, **k: __import__("verifier.arith.rank_caps", fromlist=["RankCap"]).RankCap(10**9, "patched"),
        (_controls("proposition1"),)),
}


@pytest.mark.parametrize("name", list(PATCHES))
def test_a_certificate_that_always_says_true_is_caught(name, monkeypatch):
    target, replacement, checks = PATCHES[name]
    assert all(check() for check in checks), f"{name}: the checks fail even unpatched"
    monkeypatch.setattr(target, replacement)
    assert not all(check() for check in checks), f"{name} always TRUE: no control or planted case noticed"


def test_every_statement_of_the_first_paper_has_a_control_it_must_refute():
    """Item 7: a control refuted by the computation that decides 'verified'
    (hypotheses-unmet controls alone never reach it)."""
    reg = registry.load_all()
    missing = [sid for sid, st in reg.items() if st.implemented and registry.paper_of(sid).key == "mahdavi2024"
               and not any("refuted" in c.expect for c in st.controls)]
    assert not missing, missing
