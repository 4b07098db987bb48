"""Fixtures shared by the float path's tests."""
import pytest
from summation_orders import ALL_ORDERS, summation_order


@pytest.fixture(params=ALL_ORDERS)
def order(request):
    """Every product, batched product and float-module np.sum in the block summed in one legal order."""
    with summation_order(request.param):
        yield request.param


@pytest.fixture
def only_gesvd(monkeypatch):
    """LAPACK's gesdd fails to converge (patched): numpy's svd raises, and scipy's svd raises
    for any driver but gesvd, which computes as usual."""
    import numpy as np
    import scipy.linalg

    def gesdd_fails(*a, **k):
        raise np.linalg.LinAlgError("SVD did not converge (patched)")

    scipy_svd = scipy.linalg.svd

    def gesvd_only(a, *args, lapack_driver="gesdd", **kw):
        if lapack_driver != "gesvd":
            gesdd_fails()
        return scipy_svd(a, *args, lapack_driver=lapack_driver, **kw)

    monkeypatch.setattr(np.linalg, "svd", gesdd_fails)
    monkeypatch.setattr(scipy.linalg, "svd", gesvd_only)
