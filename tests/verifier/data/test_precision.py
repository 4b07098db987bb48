"""The precision model of input data: what each dtype means, exact dyadic
detection, the tolerance, and that a file is read at its precision while
--exact-input keeps the exact reading."""
import numpy as np
import pytest

from verifier.data.instances import from_arrays, make_instance
from verifier.data.instances import load_data
from verifier.data.precision import EXACT_GENERATED, array_precision, exact_dyadic, input_precision
from verifier.errors import InvalidInstance

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("a, u", [
    (RNG.standard_normal((3, 4)), 2.0**-53),
    (RNG.standard_normal((3, 4)).astype(np.float32), 2.0**-24),
    (RNG.standard_normal((3, 4)).astype(np.float16), 2.0**-11),
    (RNG.integers(-9, 9, (3, 4)), 0.0),
    (RNG.integers(0, 2, (3, 4)).astype(bool), 0.0),
    (np.array([[2.0**60 + 1]], dtype=np.float64), 0.0),  # = 2^60 in float64: one significant bit
    (np.array([[3, 2**60 + 1]], dtype=np.int64), 0.0),  # integers of any size: read exactly
    (np.array([[3, 2**64 - 1]], dtype=np.uint64), 0.0),
    (np.array([[1, 2**-60]], dtype=np.longdouble) + 1, 2.0**-(np.finfo(np.longdouble).nmant + 1)),
    (RNG.integers(-512, 513, (3, 4)) / 256.0, 0.0),  # a dyadic grid
    (RNG.integers(-512, 513, (3, 4)).astype(np.float32) / 256, 0.0),
])
def test_unit_roundoff_per_dtype(a, u):
    p = array_precision(a)
    assert p.unit_roundoff == u, p
    assert p.exact == (u == 0.0)


@pytest.mark.parametrize("a", [np.ones((2, 2)) + 1j, np.array([[None]], dtype=object), np.array([["x"]])])
def test_non_real_arrays_are_refused(a):
    with pytest.raises(InvalidInstance):
        array_precision(a)


def test_exact_dyadic_is_not_fooled_by_computed_floats():
    x = RNG.standard_normal(1000)
    assert not exact_dyadic(x) and not exact_dyadic(x.astype(np.float32))
    assert not exact_dyadic(np.array([0.1]))  # not a dyadic at all
    assert exact_dyadic(np.array([0.0, -3.0, 0.5, 1024.75]))
    assert not exact_dyadic(np.array([2.0**-20]))  # off the 2^-16 grid
    assert not exact_dyadic(np.array([1.0 + 2.0**-16 * 3], dtype=np.float32))  # too many bits for float32


def test_tolerance_is_numpys_numerical_rank_tolerance():
    p = input_precision({"queries": RNG.standard_normal((5, 4)), "contexts": RNG.standard_normal((5, 2, 4)).astype(np.float32)})
    assert p.tolerance((3, 4), "queries") == 4 * np.finfo(np.float64).eps
    assert p.tolerance((3, 4), "contexts") == 4 * np.finfo(np.float32).eps
    assert p.tolerance((3, 4), "queries", "contexts") == 4 * np.finfo(np.float32).eps
    assert EXACT_GENERATED.tolerance((3, 4), "queries") == 0.0
    assert "float32: relative 2^-24" in p.describe()


def test_generated_and_python_arrays_are_exact_files_are_not(tmp_path):
    inst = make_instance(seed=0)
    assert inst.precision.reading == "exact" and inst.summary()["reading"].startswith("exact")
    E, e = RNG.standard_normal((4, 2, 5)), RNG.standard_normal((4, 5))
    assert from_arrays(E, e).precision.reading == "exact"
    path = tmp_path / "d.npz"
    np.savez(path, contexts=E, queries=e.astype(np.float32))
    p = load_data(path).precision
    assert p.reading == "dtype" and p.arrays["queries"].unit_roundoff == 2.0**-24
    assert load_data(path, exact_input=True).precision.source == "--exact-input"
    assert load_data(path).subset([0, 1]).precision == p  # carried by the instance
