"""A float failure is no verdict (issue 17, item 4): a LinAlgError, a non-finite
float result or an operand out of the float range moves the certificate on to
the multiprecision route, with the reason in its method text; it never ends at
the first rung.  The float step is patched here, so each test decides the same
on every machine."""

import numpy as np
import pytest

import verifier.arith.rank as rank
from verifier.arith.compare import Decision, lower
from verifier.arith.exact import exact_rank
from verifier.arith.float_certificates import inverse_residual_bound_explained, sigma_min_lower_float
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.errors import InsufficientPrecision

A3 = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])  # det 18: nonsingular
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2


def _raise(*a, **k):
    raise np.linalg.LinAlgError("Singular matrix (patched)")


def _inf(a, *args, **kw):
    return np.full(np.shape(a)[::-1], np.inf)


@pytest.fixture(params=["LinAlgError", "inf"])
def broken_inverse(request, monkeypatch):
    """np.linalg.inv (the arb route's preconditioner and the numpy backend's
    inverse) raises or returns inf."""
    monkeypatch.setattr(np.linalg, "inv", _raise if request.param == "LinAlgError" else _inf)
    return request.param


def test_a_failed_float_inverse_climbs_to_the_approximate_solve(broken_inverse):
    res = certify_rank_lower_bound(A3, k=3, method="arb")
    assert res.decision is Decision.TRUE and res.prec_bits == 128
    assert "float64 inverse " in res.method and "128-bit approximate solve" in res.method
    assert ("(Singular matrix (patched))" in res.method) == (broken_inverse == "LinAlgError")
    assert ("float64 inverse not finite; R ~ inv" in res.method) == (broken_inverse == "inf")


def test_a_wrong_float_inverse_that_succeeds_adds_no_failure_note(monkeypatch):
    """A finite float64 inverse is no failure even when it is useless (R = 0: ||I - R A|| = 1,
    not certified at 128 bits): the ladder climbs to the approximate solve at 256 bits with
    no note before it."""
    monkeypatch.setattr(np.linalg, "inv", lambda a: np.zeros_like(a))
    res = certify_rank_lower_bound(A3, k=3, method="arb")
    assert res.decision is Decision.TRUE and res.prec_bits == 256
    assert res.method == "arb: ||I - R A_minor||_inf < 1 with R ~ inv(A_minor) by a 256-bit approximate solve"


@pytest.mark.parametrize("refine_limit", [300, 1])
def test_a_failed_float_path_moves_on_to_arb_whatever_the_size(broken_inverse, monkeypatch, refine_limit):
    """Above REFINE_LIMIT a weak float bound stays undecided (arb is slow there),
    but a float failure still climbs: it is no bound at all."""
    monkeypatch.setattr(rank, "FLOAT_FROM", 1)
    monkeypatch.setattr(rank, "REFINE_LIMIT", refine_limit)
    res = certify_rank_lower_bound(A3, k=3)
    assert res.decision is Decision.TRUE
    assert res.method.startswith("float path failed (no float64 inverse of the midpoint")
    assert "; then arb: " in res.method
    only_float = certify_rank_lower_bound(A3, k=3, method="float")  # asked for the float path only
    assert only_float.decision is Decision.UNDECIDED and "not decided (float path failed (" in only_float.method


def test_the_issue_s_float_product_is_certified_when_the_float_inverse_fails(broken_inverse):
    """The float product of rank-2 factors is exactly of full rank; on another
    machine np.linalg.inv raised LinAlgError on it and the certifier stopped."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 8))
    assert exact_rank(A) == 8
    assert certify_rank_lower_bound(A, k=8).decision is Decision.TRUE


def test_a_singular_minor_stays_undecided_to_the_top_of_the_ladder(broken_inverse):
    res = certify_rank_lower_bound(SINGULAR, k=3, max_prec=512)
    assert res.decision is Decision.UNDECIDED and res.certified_k == 0 and res.prec_bits == 512
    assert res.residual_norm_upper >= 1


def test_out_of_range_operands_move_on_to_arb(monkeypatch):
    monkeypatch.setattr(rank, "FLOAT_FROM", 1)
    monkeypatch.setattr(rank, "REFINE_LIMIT", 1)
    A = np.diag([1e300, 1.0, 2.0**-600])
    res = certify_rank_lower_bound(A, k=3)
    assert res.decision is Decision.TRUE and res.method.startswith("float path failed (float range: ")
    bound, why = inverse_residual_bound_explained(A)
    assert bound.value.is_finite() is False and why.startswith("float range: ")
    assert inverse_residual_bound_explained(A3)[1] == ""


@pytest.mark.parametrize("failure", ["LinAlgError", "inf"])
def test_sigma_min_lower_bound_survives_a_failed_pseudo_inverse(monkeypatch, failure):
    """sigma_min(diag(3, 1/4) with a zero column) = 1/4 exactly; the bound from the
    multiprecision right inverse is below it and close."""
    A = np.array([[3.0, 0.0, 0.0], [0.0, 0.25, 0.0]])
    monkeypatch.setattr(np.linalg, "pinv", _raise if failure == "LinAlgError" else _inf)
    lb = lower(sigma_min_lower_bound(A))
    assert 0.25 * (1 - 1e-9) < lb <= 0.25
    with pytest.raises(InsufficientPrecision):  # singular: no route proves a positive bound
        sigma_min_lower_bound(np.array([[1.0, 2.0], [2.0, 4.0]]))


def test_sigma_min_lower_float_turns_a_lapack_failure_into_insufficient_precision(monkeypatch):
    monkeypatch.setattr(np.linalg, "eigvalsh", _raise)
    with pytest.raises(InsufficientPrecision, match="float eigvalsh of fl"):
        sigma_min_lower_float(A3)
    assert lower(sigma_min_lower_float(A3, alpha=1.0)) > 0  # an alpha given: no eigvalsh needed


def test_the_kruskal_hunt_skips_a_failed_float_proposal(monkeypatch):
    """The hunt's float rank only proposes a witness (it runs when exhaustion is
    cut short); when it fails, sampling still finds the dependent set exactly."""
    from verifier.arith.kruskal import kruskal_rank

    calls = []

    def broken(*a, **k):
        calls.append(1)
        _raise()

    monkeypatch.setattr(np.linalg, "matrix_rank", broken)
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])  # pairs independent, the three dependent
    kr = kruskal_rank(V, exhaustive_limit=0)
    assert calls and kr.upper == 2 and kr.witness == (0, 1, 2)


def test_test_vectors_survive_a_failed_gesdd(monkeypatch):
    """sigma_min's upper side and ||A||'s lower side take their test vectors from a
    float SVD; when numpy's (gesdd) fails, scipy's gesvd chooses them."""
    from verifier.arith.compare import upper
    from verifier.arith.singular_values import sigma_min_upper_bound, spectral_norm_lower_bound

    monkeypatch.setattr(np.linalg, "svd", _raise)
    A = np.array([[3.0, 0.0, 0.0], [0.0, 0.25, 0.0]])
    assert 0.25 <= upper(sigma_min_upper_bound(A)) < 0.25 * (1 + 1e-12)
    assert 3.0 * (1 - 1e-12) < lower(spectral_norm_lower_bound(A)) <= 3.0
