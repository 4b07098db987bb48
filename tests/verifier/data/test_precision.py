"""The meaning of a user's number (verifier/data/precision.py): by type, never
by value; a float stands for every real that rounds to it.  Ground truth:
the exact rationals of the neighbours (Fraction), and round-to-nearest
itself (the dtype's own conversion of exact points)."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.data.given import half_gaps_of
from verifier.data.instances import from_arrays, load_data, make_instance
from verifier.data.precision import EXACT_GENERATED, array_precision, input_precision
from verifier.errors import InvalidInstance

RNG = np.random.default_rng(3)
FLOATS = [np.float16, np.float32, np.float64]
LONG = np.finfo(np.longdouble).nmant + 1 > 53


def rounds_to(q: Fraction, x, dtype) -> bool:
    """Does the exact rational q round to x in dtype (round to nearest, ties to even)?  Decided from
    the exact neighbours: q lies strictly inside the half-gaps, or on a boundary with x even."""
    x = dtype(x)
    up, down = np.nextafter(x, dtype(np.inf)), np.nextafter(x, dtype(-np.inf))
    X = Fraction(*x.as_integer_ratio())
    hi = (X + Fraction(*up.as_integer_ratio())) / 2 if np.isfinite(up) else X + (X - Fraction(*down.as_integer_ratio())) / 2
    lo = (X + Fraction(*down.as_integer_ratio())) / 2 if np.isfinite(down) else X - (Fraction(*up.as_integer_ratio()) - X) / 2
    return lo < q < hi


def special_values(dtype):
    fi = np.finfo(dtype)
    tiny, sub = dtype(fi.tiny), dtype(fi.smallest_subnormal)
    return [dtype(0), dtype(1), dtype(-1), dtype(0.75), dtype(-3.5), tiny, -tiny, sub, -sub, dtype(3) * sub,
            dtype(fi.max), dtype(-fi.max), dtype(2) ** 10, dtype(1) / dtype(3)]


@pytest.mark.parametrize("dtype", FLOATS + ([np.longdouble] if LONG else []))
def test_half_gaps_are_exactly_the_rounding_interval(dtype):
    """For every kind of value (zero, subnormal, smallest normal, a power of two, the largest finite):
    points strictly inside the half-gaps round to x; points just beyond them do not."""
    values = np.array(special_values(dtype), dtype=dtype)
    p = array_precision(values)
    assert p.kind == "float"
    away, toward = p.half_gap_exponents(values)
    for x, a, t in zip(values, away, toward):
        X = Fraction(*x.as_integer_ratio())
        A, Tw = Fraction(2) ** int(a), Fraction(2) ** int(t)
        up, down = (A, Tw) if x > 0 else (Tw, A) if x < 0 else (A, A)
        eps = min(up, down) / 2**20
        assert rounds_to(X + up - eps, x, dtype) and rounds_to(X - down + eps, x, dtype)
        assert not rounds_to(X + up + eps, x, dtype) and not rounds_to(X - down - eps, x, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_the_outer_radius_contains_the_rounding_interval(dtype):
    values = np.array(special_values(dtype), dtype=dtype)
    p = array_precision(values)
    rad = p.radius(values.astype(np.float64))
    away, toward = p.half_gap_exponents(values)
    for r, a, t in zip(rad, away, toward):
        assert Fraction(float(r)) >= Fraction(2) ** int(max(a, t))


def test_zero_and_subnormals_are_absolute():
    """A float16 zero stands for every real below 2^-25 in magnitude; a subnormal for its absolute step."""
    p = array_precision(np.zeros(1, dtype=np.float16))
    assert p.radius(np.array([0.0]))[0] == 2.0**-25
    assert p.radius(np.array([2.0**-24]))[0] == 2.0**-25  # the smallest subnormal: the same absolute step
    assert p.radius(np.array([1.0]))[0] == 2.0**-11


@pytest.mark.parametrize("a, kind", [
    (RNG.standard_normal((3, 4)), "float"),
    (RNG.standard_normal((3, 4)).astype(np.float32), "float"),
    (RNG.integers(-9, 9, (3, 4)), "exact"),
    (RNG.integers(0, 2, (3, 4)).astype(bool), "exact"),
    (np.array([[3, 2**60 + 1]], dtype=np.int64), "exact"),
    (np.array([[3, 2**64 - 1]], dtype=np.uint64), "exact"),
    (RNG.integers(-512, 513, (3, 4)) / 256.0, "float"),  # a dyadic grid is still floats: no exact-looking rule
    (np.array([[1.0, 2.0, -3.0]]), "float"),  # integral floats too
])
def test_the_meaning_is_decided_by_the_type(a, kind):
    assert array_precision(a).kind == kind
    assert array_precision(a, exact=True).exact  # --exact-input


@pytest.mark.parametrize("a", [np.ones((2, 2)) + 1j, np.array([["x"]])])
def test_non_real_arrays_are_refused(a):
    with pytest.raises(InvalidInstance):
        array_precision(a)


def test_generated_and_python_arrays_are_exact_files_are_not(tmp_path):
    inst = make_instance(seed=0)
    assert inst.precision.reading == "exact" and inst.summary()["reading"].startswith("exact")
    assert not inst.at_precision and EXACT_GENERATED.exact_for("queries")
    E, e = RNG.standard_normal((4, 2, 5)), RNG.standard_normal((4, 5))
    assert from_arrays(E, e).precision.reading == "exact"
    path = tmp_path / "d.npz"
    np.savez(path, contexts=E, queries=e.astype(np.float32))
    inst = load_data(path)
    p = inst.precision
    assert p.reading == "dtype" and p.arrays["queries"].unit_roundoff == 2.0**-24 and inst.at_precision
    assert "queries" in inst.summary()["arrays read"]
    assert load_data(path, exact_input=True).precision.source == "--exact-input"
    assert not load_data(path, exact_input=True).at_precision
    assert load_data(path).subset([0, 1]).precision == p  # carried by the instance


def test_ball_encloses_given_integers_beyond_2_53():
    q = np.array([[2**60 + 1, 1, 0], [3, 2**53 + 1, 0]], dtype=np.int64)
    inst = from_arrays(np.zeros((2, 2, 3)), q, reading="dtype")
    mid, rad = inst.ball("queries")
    for i in range(2):
        for j in range(3):
            assert abs(Fraction(int(q[i, j])) - Fraction(float(mid[i, j]))) <= Fraction(float(rad[i, j]))
    assert inst.half_gaps("queries") is None  # integers are exact: no interval


@given(st.sampled_from(FLOATS), st.lists(st.floats(-1e4, 1e4, allow_subnormal=True), min_size=1, max_size=6))
def test_every_point_strictly_inside_the_gaps_rounds_to_the_stored_value(dtype, xs):
    """half_gaps_of (what a witness point must lie inside) is never wider than the rounding interval."""
    x = np.array(xs, dtype=dtype)[None, :]
    up, down = half_gaps_of(array_precision(x), x.astype(np.float64))
    for j, v in enumerate(x[0]):
        X = Fraction(*v.as_integer_ratio())
        u, d = Fraction(int(up[0][j].p), int(up[0][j].q)), Fraction(int(down[0][j].p), int(down[0][j].q))
        assert rounds_to(X + u * Fraction(999, 1000), v, dtype) and rounds_to(X - d * Fraction(999, 1000), v, dtype)


def test_describe_names_each_array():
    p = input_precision({"queries": RNG.standard_normal((5, 4)),
                         "contexts": RNG.standard_normal((5, 2, 4)).astype(np.float32)})
    text = p.describe()
    assert "queries float64: half an ulp each side (2^-53 relative)" in text
    assert "contexts float32: half an ulp each side (2^-24 relative)" in text


@pytest.mark.parametrize("dtype", FLOATS)
def test_an_instance_ball_holds_every_real_that_rounds_to_the_stored_value(dtype):
    """Instance.ball (what every certificate at the data's precision reads) against the exact
    rounding interval, computed here from the neighbours: never a point of it outside the ball."""
    vals = np.array([v for v in special_values(dtype) if abs(float(v)) < 1e100], dtype=dtype)
    q = np.stack([vals, vals[::-1]], axis=0)
    inst = from_arrays(np.zeros((2, 1, q.shape[1]), dtype=dtype), q, reading="dtype")
    mid, rad = inst.ball("queries")
    for x, m, r in zip(q.reshape(-1), mid.reshape(-1), rad.reshape(-1)):
        X = Fraction(*x.as_integer_ratio())
        up, down = np.nextafter(x, dtype(np.inf)), np.nextafter(x, dtype(-np.inf))
        hi = (X + Fraction(*up.as_integer_ratio())) / 2 if np.isfinite(up) else X
        lo = (X + Fraction(*down.as_integer_ratio())) / 2 if np.isfinite(down) else X
        assert Fraction(float(m)) - Fraction(float(r)) <= lo and hi <= Fraction(float(m)) + Fraction(float(r))
