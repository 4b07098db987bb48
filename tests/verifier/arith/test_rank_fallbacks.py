"""Fallbacks that happen (issue 32): with ``method="auto"`` every float step of the rank certificate
that raises -- the minor's float enclosure (FloatRangeError from mha_float, an overflow, a
non-finite division, LinAlgError), the a priori bound, the pivoted QR that chooses the minor -- is
a failure of the float path, and arb certifies instead, as the docstring says; the certificate's
method names what certified it.  ``method="float"`` never falls back: undecided, with the reason.
The rank is re-checked exactly over Q (flint fmpq)."""
import numpy as np
import pytest
from flint import arb_mat

import verifier.arith.rank as rank
from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank
from verifier.arith.float_bounds import FloatRangeError
from verifier.arith.float_certificates import METHOD as FLOAT_METHOD

K = rank.FLOAT_FROM + 6  # above FLOAT_FROM: auto takes the float path first
FAILURES = [FloatRangeError("logit differences enclosed wider than 0.5"), OverflowError("(34, 'Result too large')"),
            FloatingPointError("overflow encountered"), np.linalg.LinAlgError("Singular matrix"),
            ZeroDivisionError("float division by zero")]


def _matrix(seed=0):
    A = np.round(np.random.default_rng(seed).standard_normal((K, K + 3)) * 64) / 64  # exact dyadics
    assert exact_rank(A) == K  # the truth, over Q
    return A


def _raise(exc):
    def f(*a, **k):
        raise exc
    return f


@pytest.mark.parametrize("exc", FAILURES, ids=lambda e: type(e).__name__)
def test_the_minors_float_enclosure_raising_falls_back_to_arb(exc):
    A = _matrix()
    cert = rank.certify_rank_lower_bound_lazy(A[:, :K], K, lambda r, c: arb_mat(A[np.ix_(r, c)].tolist()),
                                              minor_float=_raise(exc), cols=list(range(K)))
    assert cert.decision is Decision.TRUE and cert.certified_k == K
    assert cert.method.startswith(f"float path failed ({type(exc).__name__}: ") and "then arb:" in cert.method
    assert cert.prec_bits >= 128  # arb's precision, not the float path's 53 bits


@pytest.mark.parametrize("exc", FAILURES, ids=lambda e: type(e).__name__)
def test_the_a_priori_bound_raising_falls_back_to_arb(monkeypatch, exc):
    monkeypatch.setattr(rank, "inverse_residual_bound_explained", _raise(exc))
    cert = rank.certify_rank_lower_bound(_matrix(1), K)
    assert cert.decision is Decision.TRUE and "then arb:" in cert.method and not cert.method.startswith(FLOAT_METHOD)


@pytest.mark.parametrize("exc", FAILURES, ids=lambda e: type(e).__name__)
def test_the_float_method_alone_says_undecided_with_the_reason(monkeypatch, exc):
    monkeypatch.setattr(rank, "inverse_residual_bound_explained", _raise(exc))
    cert = rank.certify_rank_lower_bound(_matrix(2), K, method="float")
    assert cert.decision is Decision.UNDECIDED and cert.certified_k == 0
    assert f"float path failed ({type(exc).__name__}: " in cert.method


def test_the_float_path_when_it_works_is_named_so():
    cert = rank.certify_rank_lower_bound(_matrix(3), K)
    assert cert.decision is Decision.TRUE and cert.method.startswith(FLOAT_METHOD) and cert.prec_bits == 53


def test_the_pivoted_qr_failing_still_chooses_a_minor(monkeypatch):
    """The float choice of the minor failing (LinAlgError from LAPACK): the columns by norm; any choice
    is sound, the certificate decides."""
    monkeypatch.setattr(rank.scipy.linalg, "qr", _raise(np.linalg.LinAlgError("SVD did not converge")))
    A = np.round(np.random.default_rng(4).standard_normal((5, 8)) * 16) / 16
    cert = rank.certify_rank_lower_bound(A, 4)
    assert cert.decision is Decision.TRUE and len(cert.cols) == 4 and exact_rank(A[:, list(cert.cols)]) == 4
