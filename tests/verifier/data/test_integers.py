"""Index-like arrays hold integers (issue 31): integer dtypes and JSON
integers of any width exactly, a float only under --exact-input."""
from fractions import Fraction

import numpy as np
import pytest

from verifier.data.integers import integer_values, within
from verifier.errors import InvalidInstance


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.longdouble])
def test_float_arrays_are_not_integers_unless_exact_input(dt):
    a = np.array([3, 2049], dtype=dt)  # float16 2049 rounds to 2048: the file says 2048, standing for [2047.5, 2049]
    with pytest.raises(InvalidInstance, match=f"'ids' holds {np.dtype(dt).name} values; a float stands for every "
                                              "real that rounds to it .*--exact-input"):
        integer_values("ids", a)
    assert integer_values("ids", a, exact=True).tolist() == [3, int(a[1])]
    with pytest.raises(InvalidInstance, match="non-integer"):
        integer_values("ids", np.array([0.5], dtype=dt), exact=True)


def test_wide_integers_stay_exact():
    big = np.array([2**53 + 1, 2**53], dtype=np.int64)
    assert integer_values("ids", big).tolist() == [2**53 + 1, 2**53]
    u = np.array([2**64 - 1], dtype=np.uint64)
    out = integer_values("ids", u)
    assert out.dtype == object and out.tolist() == [2**64 - 1]
    obj = np.empty(2, dtype=object)
    obj[:] = [10**30 + 1, Fraction(4, 2)]  # JSON integers beyond int64, an integral decimal (2.0 is exactly 2)
    assert integer_values("ids", obj).tolist() == [10**30 + 1, 2]
    assert within(out, 0, 2**64) and not within(out, 0, 2**64 - 1)
    ld = np.array([np.longdouble(2**63) * 4], dtype=np.longdouble)
    assert integer_values("ids", ld, exact=True).tolist() == [2**65]  # never through float64 or int64


@pytest.mark.parametrize("bad, needle", [
    (np.array([Fraction(1, 2)], dtype=object), "must hold integers; found 1/2"),
    (np.array(["1"]), "must hold integers, got dtype"),
    (np.array([np.nan]), "NaN or infinite"),
])
def test_bad_integer_arrays_are_one_line(bad, needle):
    with pytest.raises(InvalidInstance, match=needle):
        integer_values("labels", bad, exact=True)
