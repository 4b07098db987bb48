"""verifier/data/given.py pinned (the mutation run's survivors, issue 31):
the float64 copies of exact values (JSON decimals, wide integers, long
doubles) and the bound on their rounding, the exact half-gaps of rationals,
the overflow screen on exact values, shared (broadcast) contexts, and the
refusals' messages.  Ground truth: exact Fractions and exponents computed
here by hand (floor(log2 |x|) by doubling)."""
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from verifier.data.given import (
    OVERFLOW_LIMIT,
    add_up,
    float64_copy,
    half_gaps_of,
    rational_half_gaps,
    validate_arrays,
    validated,
)
from verifier.data.precision import ArrayPrecision, array_precision, given_values
from verifier.errors import InvalidInstance

LONG = np.finfo(np.longdouble).nmant + 1 > 53
long_only = pytest.mark.skipif(not LONG, reason="long double is float64 on this machine")
F64 = ArrayPrecision("float64", "float", "test", p=53, emin=-1022)
F80 = ArrayPrecision("longdouble", "float", "test", p=64, emin=-16382)


def fr(x) -> Fraction:
    """The exact rational of a float64, an fmpq or an int."""
    if isinstance(x, (float, np.floating)):
        return Fraction(*float(x).as_integer_ratio()) if np.dtype(type(x)).itemsize <= 8 else \
            Fraction(*x.as_integer_ratio())
    if isinstance(x, fmpq):
        return Fraction(int(x.p), int(x.q))
    return Fraction(x)


def floor_log2(x: Fraction) -> int:
    x, E = abs(x), 0
    while x >= 2:
        x, E = x / 2, E + 1
    while x < 1:
        x, E = x * 2, E - 1
    return E


def gap_exponents(x: Fraction, p: int, emin: int) -> tuple[int, int]:
    """(away, toward) by hand: 2^(max(E, emin) - p), one less toward zero at a power of two above 2^emin."""
    if x == 0:
        return emin - p, emin - p
    E = floor_log2(x)
    a = max(E, emin) - p
    power = abs(x) == Fraction(2) ** E
    return a, (a - 1 if power and E > emin else a)


def E3(T=1, n=1, d=3):
    return np.zeros((T, n, d))


# -- add_up: floats >= x + y, moved up one float only where the sum is positive --------------------------------------

def test_add_up_bounds_the_exact_sum_and_leaves_zero_sums_zero():
    x = np.array([0.0, 0.5, 0.1, 3.0, 0.0])
    y = np.array([0.0, 0.25, 0.2, 1e-300, 2.0 ** -1074])
    s = add_up(x, y)
    for a, b, c in zip(x, y, s):
        assert fr(c) >= fr(a) + fr(b)
    assert s[0] == 0.0  # a zero sum stays zero (not the smallest subnormal)
    assert s[1] == np.nextafter(0.75, np.inf)  # 0.75 is exact: still moved up one float (a sum in (0, 1])
    assert s[4] == 2.0 ** -1073


def test_add_up_zero_sums_are_zero_in_a_large_array():
    for _ in range(5):
        junk = np.full(4096, 7.5)  # leave nonzero bytes where the next arrays may be allocated
        del junk
        s = add_up(np.zeros(4096), np.zeros(4096))
        assert not s.any()


# -- float64_copy / validated on exact values (JSON decimals, integers beyond 2^53) ----------------------------------

def test_exact_decimals_keep_their_values_and_a_sound_radius():
    q = np.array([[Fraction(1, 3), 1, Fraction(1, 10)], [Fraction(-2, 7), Fraction(1, 2), 2 ** 60 + 1]], dtype=object)
    arrays, rounding = validated(np.zeros((2, 1, 3)), q)
    copy = arrays["queries"]
    assert copy.dtype == np.float64 and copy.shape == (2, 3)
    for got, want in zip(copy.reshape(-1), q.reshape(-1)):
        assert got == float(want)  # float(Fraction) is correctly rounded
    why, given, rad = rounding["queries"]
    assert why == "exact decimals that float64 rounds"
    assert given.shape == (2, 3) and rad.shape == (2, 3) and rad.dtype == np.float64
    for g, want in zip(given.reshape(-1), q.reshape(-1)):
        assert fr(g) == Fraction(want)
    for r, c, want in zip(rad.reshape(-1), copy.reshape(-1), q.reshape(-1)):
        err = abs(Fraction(want) - fr(c))
        assert fr(r) >= err  # the radius bounds the rounding
        assert r == np.nextafter(float(err), np.inf)  # one float above the float of the exact error
    assert rad[0, 1] == 2.0 ** -1074 and rad[1, 2] == np.nextafter(1.0, np.inf)
    assert "contexts" not in rounding


def test_an_error_that_rounds_down_in_float64_is_still_covered():
    # 1/3 - fl(1/3) = 1/(3 * 2^54): float64 rounds it down; the radius must not
    x = Fraction(1, 3)
    err = abs(x - fr(float(x)))
    assert fr(float(err)) < err
    _, rounding = validated(E3(), np.array([[x, x, x]], dtype=object))
    assert all(fr(r) >= err for r in rounding["queries"][2].reshape(-1))


def test_exact_decimals_that_float64_holds_record_no_rounding():
    q = np.array([[Fraction(1, 2), 3, Fraction(-5, 4)]], dtype=object)
    arrays, rounding = validated(E3(), q)
    assert rounding == {}
    assert arrays["queries"].tolist() == [[0.5, 3.0, -1.25]]
    copy, given, rad, _ = float64_copy("queries", q)
    assert given is None and rad is None and copy.tolist() == [[0.5, 3.0, -1.25]]


def test_object_arrays_of_other_things_are_refused_by_name():
    with pytest.raises(InvalidInstance) as info:
        validated(E3(), np.array([[1, "a", 2]], dtype=object))
    assert str(info.value) == ("array 'queries' is an object array of str; expected integers or floats")
    with pytest.raises(InvalidInstance, match="object array of bool"):
        validated(E3(), np.array([[1, True, 2]], dtype=object))
    arrays, _ = validated(E3(2), np.array([[1, Fraction(1, 2), 2], [fmpq(3, 4), 0, 1]], dtype=object))  # 2-D is fine
    assert arrays["queries"].tolist() == [[1.0, 0.5, 2.0], [0.75, 0.0, 1.0]]


def test_wide_integers_get_their_exact_distance():
    for dtype, v, want in ((np.int64, 2 ** 60 + 1, 1), (np.int64, -(2 ** 60 + 1), 1),
                           (np.uint64, 2 ** 62 + 513, 511), (np.uint64, 2 ** 64 - 1, 1)):
        q = np.array([[v, 1, 2]], dtype=dtype)
        _, rounding = validated(E3(), q)
        why, given, rad = rounding["queries"]
        assert "2^53" in why
        assert fr(given[0, 0]) == v and rad.dtype == np.float64
        assert rad.tolist() == [[float(want), 0.0, 0.0]]
        assert want == abs(v - int(float(v)))


@long_only
def test_long_doubles_get_the_exact_distance_when_float64_holds_it():
    one = np.longdouble(1)
    x = np.array([[one + np.longdouble(2) ** -60, one, -(one + np.longdouble(2) ** -62)]])
    arrays, rounding = validated(E3(), x)
    assert arrays["queries"].tolist() == [[1.0, 1.0, -1.0]]
    why, given, rad = rounding["queries"]
    assert fr(given[0, 0]) == 1 + Fraction(1, 2 ** 60)
    assert rad.dtype == np.float64
    assert rad.tolist() == [[2.0 ** -60, 0.0, 2.0 ** -62]]  # exact: no move up where float64 holds the distance


@long_only
def test_long_double_distances_below_float64_are_moved_up():
    tiny = np.longdouble(2) ** -1075 * 3  # 1.5 * 2^-1074: float64 rounds it to 2^-1073 (ties to even)
    x = np.array([[tiny, 0, 0]], dtype=np.longdouble)
    arrays, rounding = validated(E3(), x)
    _, given, rad = rounding["queries"]
    dist = abs(fr(given[0, 0]) - fr(arrays["queries"][0, 0]))
    assert dist == Fraction(1, 2 ** 1075)
    assert fr(rad[0, 0]) >= dist and rad[0, 0] == 2.0 ** -1074


# -- the overflow screen: exact values compared exactly, long doubles in their own format ---------------------------

def test_exact_values_are_screened_exactly():
    ok = [10 ** 100, 5000, Fraction(10 ** 100)]
    for v in ok:
        validated(E3(), np.array([[v, 0, 1]], dtype=object))
    for v in (10 ** 100 + 1, 10 ** 400, Fraction(10 ** 200, 3), -(10 ** 100) - 1, Fraction(10 ** 101 + 1, 10)):
        with pytest.raises(InvalidInstance) as info:
            validated(E3(), np.array([[0, v, 1], [1, 1, 1]], dtype=object)[:1])
        assert str(info.value) == "array 'queries' has entries above 1e+100 in magnitude (overflow)"
    with pytest.raises(InvalidInstance, match="overflow"):
        validated(E3(2), np.array([[0, 1, 1], [1, 10 ** 400, 1]], dtype=object))


def test_float_screen_at_the_limit():
    validated(E3(), np.array([[OVERFLOW_LIMIT, 0.0, -OVERFLOW_LIMIT]]))
    with pytest.raises(InvalidInstance, match="overflow"):
        validated(E3(), np.array([[np.nextafter(OVERFLOW_LIMIT, np.inf), 0.0, 1.0]]))


@long_only
def test_long_doubles_just_above_the_limit_are_refused():
    above = np.nextafter(np.longdouble(OVERFLOW_LIMIT), np.longdouble(np.inf))
    assert float(above) == OVERFLOW_LIMIT  # float64 would let it through
    with pytest.raises(InvalidInstance, match="overflow"):
        validated(E3(), np.array([[above, 0, 1]], dtype=np.longdouble))
    validated(E3(), np.array([[np.longdouble(OVERFLOW_LIMIT), 0, 1]], dtype=np.longdouble))


# -- a shared context: one copy, broadcast --------------------------------------------------------------------------

@pytest.mark.parametrize("T,n", [(2, 1), (3, 2)])
def test_a_shared_context_stays_one_broadcast_copy(T, n):
    E = np.broadcast_to(np.array([[2 ** 60 + 1, 1, 2]] * n, dtype=np.int64)[None], (T, n, 3))
    arrays, rounding = validated(E, np.zeros((T, 3)))
    copy = arrays["contexts"]
    assert copy.shape == (T, n, 3) and copy.dtype == np.float64 and copy.strides[0] == 0
    assert copy[T - 1, 0].tolist() == [float(2 ** 60), 1.0, 2.0]
    why, given, rad = rounding["contexts"]
    assert given.shape == (T, n, 3) and rad.shape == (T, n, 3)
    assert fr(given[T - 1, n - 1, 0]) == 2 ** 60 + 1
    assert rad[T - 1, n - 1].tolist() == [1.0, 0.0, 0.0]


def test_a_shared_context_is_screened_and_a_stride_zero_token_axis_is_not_shared():
    E = np.broadcast_to(np.array([[1.0, 2.0, 3.0]])[None], (3, 1, 3))
    E2 = np.broadcast_to(np.array([[[1, 2, 3]], [[4, 5, 6]]], dtype=np.int64), (2, 2, 3))  # strides[1] == 0
    arrays, _ = validated(E2, np.zeros((2, 3)))
    assert arrays["contexts"][1, 1].tolist() == [4.0, 5.0, 6.0]
    assert arrays["contexts"].strides[0] != 0
    assert validated(E, np.zeros((3, 3)))[0]["contexts"].shape == (3, 1, 3)


# -- validated / validate_arrays: defaults, refusals and their messages --------------------------------------------

def test_n_at_least_d_is_allowed_by_default_and_refused_on_request():
    E = np.zeros((1, 2, 2))
    validated(E, np.zeros((1, 2)))
    c, e, y = validate_arrays(E, np.zeros((1, 2)))
    assert y is None
    with pytest.raises(InvalidInstance) as info:
        validated(E, np.zeros((1, 2)), allow_n_ge_d=False)
    assert str(info.value) == "n = 2 must be < d = 2 (the paper assumes n < d throughout)"
    with pytest.raises(InvalidInstance, match="n = 2 must be < d = 2"):
        validate_arrays(E, np.zeros((1, 2)), allow_n_ge_d=False)
    validated(np.zeros((1, 1, 2)), np.zeros((1, 2)), allow_n_ge_d=False)


def test_validate_arrays_returns_the_labels():
    c, e, y = validate_arrays(E3(2), np.ones((2, 3)), np.array([[1], [2]]))
    assert y.tolist() == [[1.0], [2.0]] and y.dtype == np.float64
    assert e.tolist() == [[1.0] * 3] * 2 and c.shape == (2, 1, 3)


def test_refusals_name_the_array_and_the_fault():
    with pytest.raises(InvalidInstance) as info:
        validated(E3(), np.array([[1j, 0, 0]]))
    assert str(info.value) == "array 'queries' is complex (complex128); the statements are about real data"
    with pytest.raises(InvalidInstance) as info:
        validated(E3(), np.array([["2024-01-01"] * 3], dtype="datetime64[D]"))
    assert str(info.value) == "array 'queries' has dtype datetime64[D], not a number type"
    with pytest.raises(InvalidInstance) as info:
        validated(E3(), np.zeros((1, 3)), np.zeros(1))
    assert str(info.value) == "array 'labels' has shape (1,); expected (T, d_out)"


# -- exact half-gaps of rationals (long doubles read as exact values) ---------------------------------------------

RATIONALS = [Fraction(0), Fraction(1), Fraction(-1), Fraction(5, 7), Fraction(-5, 7), Fraction(1, 3), Fraction(3, 2),
             Fraction(5, 4), Fraction(7, 8), Fraction(1, 4), Fraction(4), Fraction(6), Fraction(-8), Fraction(3, 4),
             Fraction(2 ** 60 + 1), Fraction(1, 2 ** 70), Fraction(3, 2 ** 71), Fraction(2 ** 70, 3),
             Fraction(1, 2 ** 1022), Fraction(1, 2 ** 1021), Fraction(1, 2 ** 1023), Fraction(3, 2 ** 1074),
             Fraction(1, 2 ** 16382), Fraction(1, 2 ** 16381), Fraction(1, 2 ** 16400), Fraction(2 ** 100 - 1, 2 ** 99),
             Fraction(15, 16), Fraction(17, 16), Fraction(9, 2)]


@pytest.mark.parametrize("meaning", [F64, F80], ids=["p53", "p64"])
def test_rational_half_gaps_match_the_exponents_by_hand(meaning):
    q = np.empty((1, len(RATIONALS)), dtype=object)
    for j, x in enumerate(RATIONALS):
        q[0, j] = fmpq(x.numerator, x.denominator)
    mask, away, toward = rational_half_gaps(q, meaning)
    assert mask.dtype == bool and mask.shape == q.shape and mask.all()
    assert np.issubdtype(away.dtype, np.integer) and np.issubdtype(toward.dtype, np.integer)
    for j, x in enumerate(RATIONALS):
        assert (int(away[0, j]), int(toward[0, j])) == gap_exponents(x, meaning.p, meaning.emin), x


def test_rational_half_gaps_agree_with_the_float64_exponents():
    x = np.array([[0.0, 1.0, -2.0, 0.75, 2.0 ** -1022, 2.0 ** -1021, 2.0 ** -1074, 1e300, -3.5, 2.0 ** -1023]])
    away, toward = F64.half_gap_exponents(x)
    _, ra, rt = rational_half_gaps(given_values(x), F64)
    assert ra.tolist() == away.tolist() and rt.tolist() == toward.tolist()


@long_only
def test_half_gaps_of_long_doubles_are_exact_and_sided():
    x = np.array([[np.longdouble(1), -np.longdouble(1), np.longdouble(0), np.longdouble(3) / 4]], dtype=np.longdouble)
    meaning = array_precision(x)
    up, down = half_gaps_of(meaning, given_values(x))
    assert [fr(v) for v in up[0]] == [Fraction(1, 2 ** 64), Fraction(1, 2 ** 65), Fraction(1, 2 ** 16446),
                                      Fraction(1, 2 ** 65)]
    assert [fr(v) for v in down[0]] == [Fraction(1, 2 ** 65), Fraction(1, 2 ** 64), Fraction(1, 2 ** 16446),
                                        Fraction(1, 2 ** 65)]
    up, down = half_gaps_of(array_precision(np.zeros(1)), np.array([[1.0, 0.75]]))
    assert [fr(v) for v in up[0]] == [Fraction(1, 2 ** 53), Fraction(1, 2 ** 54)]
    assert [fr(v) for v in down[0]] == [Fraction(1, 2 ** 54), Fraction(1, 2 ** 54)]
    assert half_gaps_of(array_precision(np.zeros(1, dtype=np.int64)), np.array([[1]])) is None


def test_a_masked_array_is_screened_on_every_entry():
    # found by the mutation run (validated _19): np.ma's reductions skipped masked entries, so NaN and 1e200
    # passed the screens and reached the float64 copy
    q = np.ma.array([[1e200, np.nan, 1.0]], mask=[[1, 1, 0]])
    with pytest.raises(InvalidInstance, match="NaN or infinite"):
        validated(E3(), q)
    with pytest.raises(InvalidInstance, match="overflow"):
        validated(E3(), np.ma.array([[1e200, 0.0, 1.0]], mask=[[1, 0, 0]]))
