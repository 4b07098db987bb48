"""Fixtures shared by the float path's tests."""
import pytest
from summation_orders import ALL_ORDERS, summation_order


@pytest.fixture(params=ALL_ORDERS)
def order(request):
    """Every product, batched product and float-module np.sum in the block summed in one legal order."""
    with summation_order(request.param):
        yield request.param
