"""verifier/data/precision.py pinned (the mutation run's survivors, issue 31):
what each reading records, the exact half-gaps where the binade changes, the
exact rationals an array encodes, and why a float64 copy rounds.  Ground
truth: the neighbours of each value (numpy.nextafter) as exact Fractions, and
the rationals written out by hand."""
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from verifier.data.instances import from_arrays
from verifier.data.precision import (
    EXACT,
    EXACT_GENERATED,
    ArrayPrecision,
    InputPrecision,
    array_precision,
    exact_reading,
    float64_rounding,
    given_values,
    input_precision,
)
from verifier.data.weights import weights_from_arrays
from verifier.errors import InvalidInstance

FLOATS = [np.float16, np.float32, np.float64]
LONG = np.finfo(np.longdouble).nmant + 1 > 53
X87 = np.finfo(np.longdouble).nmant == 63 and sys.byteorder == "little"  # x86's 80-bit extended format
long_only = pytest.mark.skipif(not LONG, reason="long double is float64 on this machine")
LD = np.dtype(np.longdouble).name


def exact(x) -> Fraction:
    return Fraction(*x.as_integer_ratio())


# -- what each reading records (results.json's "arrays read") ------------------------------------------------------

def floating(name: str, p: int, emin: int) -> dict:
    return {"dtype": name, "kind": "float", "exact": False, "why": f"{name}: each value stands for the reals that "
            "round to it", "significand_bits": p, "smallest_normal_exponent": emin}


def points(name: str, why: str) -> dict:
    return {"dtype": name, "kind": "exact", "exact": True, "why": why}


INTEGERS = "integer dtype: each value stands for itself (any width)"
EXACT_INPUT = "--exact-input: each float stands for the rational it encodes"
DECIMALS = "exact values given (integers or decimals)"


@pytest.mark.parametrize("a, flag, record", [
    (np.zeros(2, np.float16), False, floating("float16", 11, -14)),
    (np.zeros((2, 2), np.float32), False, floating("float32", 24, -126)),
    ([[0.5, 1.0]], False, floating("float64", 53, -1022)),  # a list: read by the dtype numpy gives it
    (np.array([3, 2**60 + 1], np.int64), False, points("int64", INTEGERS)),
    (np.array([255], np.uint8), True, points("uint8", INTEGERS)),
    (np.array([True]), False, points("bool", INTEGERS)),
    (np.zeros(1, np.float32), True, points("float32", EXACT_INPUT)),
    (np.array([Fraction(1, 10), 3], dtype=object), False, points("rational", DECIMALS)),
    (np.array([Fraction(1, 10)], dtype=object), True, points("rational", DECIMALS)),
], ids=["float16", "float32", "list", "int64", "uint8-exact-input", "bool", "float32-exact-input", "decimals",
        "decimals-exact-input"])
def test_each_reading_records_its_type_and_format(a, flag, record):
    """What results.json records of each array (the record of its meaning: type, format, why)."""
    p = array_precision(a, exact=flag)
    assert p.to_dict() == record
    assert p == ArrayPrecision(record["dtype"], record["kind"], record["why"], record.get("significand_bits", 0),
                               record.get("smallest_normal_exponent", 0))


def test_a_list_is_read_by_the_type_numpy_gives_it():
    assert array_precision([[1, 2], [3, 4]]).exact and array_precision([1, 2]).dtype == np.asarray([1, 2]).dtype.name
    assert array_precision([0.25, -1.0]).kind == "float"  # not an object array of exact values
    assert array_precision([Fraction(1, 3)]).dtype == "rational"


@pytest.mark.parametrize("a, words", [(np.ones(2, np.complex64), "complex array (complex64)"),
                                      (np.array(["1.5"]), "is not numeric"),
                                      (np.array(["2024-01-01"], dtype="datetime64[D]"), "is not numeric")])
def test_each_refusal_says_why(a, words):
    """A complex array is refused as complex (real data), not as an unknown type."""
    with pytest.raises(InvalidInstance) as err:
        array_precision(a)
    assert words in str(err.value)


def test_a_float_description_states_its_relative_and_absolute_half_ulp():
    assert array_precision(np.zeros(1, np.float16)).describe() == (
        "float16: each value stands for the reals that round to it (half an ulp each side, 2^-11 relative; "
        "absolute 2^-25 at zero and subnormals)")
    assert "absolute 2^-1075 at zero" in array_precision(np.zeros(1)).describe()
    assert array_precision(np.zeros(1, np.int16)).describe() == "int16: exact"


def test_the_input_record_names_the_reading_and_each_array():
    q, E = np.zeros((2, 3), np.float32), np.zeros((2, 1, 3), np.int64)
    p = input_precision({"queries": q, "contexts": E, "labels": None})  # None: no such array
    assert p.to_dict() == {
        "reading": "dtype", "source": "file",
        "description": "at the data's precision (queries float32: half an ulp each side (2^-24 relative); "
                       "contexts int64: exact)",
        "arrays": {"queries": array_precision(q).to_dict(), "contexts": array_precision(E).to_dict()}}
    assert p.describe("contexts", "weights") == "at the data's precision (contexts int64: exact)"


@pytest.mark.parametrize("source, phrase", [("generated", "generated instance"), ("--exact-input", "--exact-input"),
                                            ("arrays", "arrays given in Python"), ("file", "file"),
                                            ("a notebook", "a notebook")])
def test_the_exact_reading_names_its_source(source, phrase):
    p = InputPrecision("exact", source)
    assert p.describe() == f"exact: values read as the rationals they encode ({phrase})"
    assert p.to_dict() == {"reading": "exact", "source": source, "description": p.describe(), "arrays": {}}


def test_exact_reading_defaults_to_arrays_given_in_python():
    assert exact_reading() == InputPrecision("exact", "arrays")
    assert exact_reading().describe().endswith("(arrays given in Python)")
    assert exact_reading("--exact-input").source == "--exact-input"
    assert EXACT_GENERATED.describe().endswith("(generated instance)")


def test_input_precision_passes_its_source_and_exact_input_to_every_array():
    arrays = {"queries": np.zeros((2, 3)), "contexts": np.zeros((2, 1, 3), np.float16)}
    p = input_precision(arrays, source="npz", exact=True)
    assert (p.reading, p.source) == ("dtype", "npz") and p.exact_for("queries", "contexts")
    assert p.of("contexts").why.startswith("--exact-input")
    assert not input_precision(arrays).exact_for("queries") and not input_precision(arrays).exact_for("contexts")


def test_of_gives_each_listed_rule_and_exact_for_the_rest():
    x = np.array([1.0, 0.0, -3.0, 2.0**-1074])
    p = input_precision({"queries": x})
    assert p.of("queries") == array_precision(x) and p.of("labels") == EXACT and p.exact_for("labels")
    assert not p.exact_for("queries", "labels")
    assert p.radius("queries", x).tolist() == [2.0**-53, 2.0**-1074, 2.0**-52, 2.0**-1074]
    assert p.radius("labels", x).tolist() == [0.0] * 4
    # the exact reading (--exact-input) reads every array as its points, listed or not
    e = InputPrecision("exact", "--exact-input", {"queries": array_precision(x)})
    assert e.of("queries") == EXACT and e.exact_for("queries") and e.radius("queries", x).tolist() == [0.0] * 4


# -- the exact half-gaps ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + ([np.longdouble] if LONG else []))
def test_half_gaps_are_half_the_exact_gaps_to_the_neighbours(dtype):
    """2^away and 2^toward are exactly half the gaps to the two neighbours, at every change of binade:
    the smallest normal (same gap below: subnormal spacing), twice it (half the gap below), the
    subnormals, zero (the smallest subnormal step both sides), an ordinary power of two."""
    fi = np.finfo(dtype)
    tiny, sub = dtype(fi.tiny), dtype(fi.smallest_subnormal)
    xs = [dtype(0), sub, dtype(5) * sub, tiny - sub, tiny, dtype(2) * tiny, dtype(4) * tiny, dtype(3) * tiny,
          dtype(1), dtype(0.75), dtype(2) ** 10, dtype(fi.max) / dtype(2)]
    values = np.array(xs + [-x for x in xs[1:]], dtype=dtype)
    away, toward = array_precision(values).half_gap_exponents(values)
    for x, a, t in zip(values, away, toward):
        X = exact(x)
        up = (exact(np.nextafter(x, dtype(np.inf))) - X) / 2
        down = (X - exact(np.nextafter(x, dtype(-np.inf)))) / 2
        above, below = (up, down) if x >= 0 else (down, up)  # away from zero, toward zero
        assert Fraction(2) ** int(a) == above, (x, a)
        assert Fraction(2) ** int(t) == (above if x == 0 else below), (x, t)


@long_only
def test_a_radius_is_that_of_the_float64_copy():
    """radius reads its argument as float64 (the working copy whose extra radius covers the rest): a long
    double just below 1 whose copy rounds up to 1.0 gets 1.0's radius (its exponent or one above)."""
    x = np.array([np.longdouble(1) - np.longdouble(2) ** -60, np.longdouble(3) / 7], dtype=np.longdouble)
    p = array_precision(x)
    r = p.radius(x)
    assert r.dtype == np.float64 and r.tolist() == p.radius(x.astype(np.float64)).tolist()
    assert r.tolist() == [2.0**-64, 2.0**-66]


# -- the exact rationals of an array ------------------------------------------------------------------------------

def _as_fractions(out):
    assert out.dtype == object and all(isinstance(v, fmpq) for v in out.reshape(-1))
    return [[Fraction(int(v.p), int(v.q)) for v in row] for row in out]


@pytest.mark.parametrize("a, want", [
    (np.array([[2**60 + 1, -3], [0, 7]], np.int64), [[2**60 + 1, -3], [0, 7]]),
    (np.array([[2**64 - 1, 1]], np.uint64), [[2**64 - 1, 1]]),
    (np.array([[True, False]]), [[1, 0]]),
    (np.array([[Fraction(1, 3), 5], [fmpq(-2, 7), 2**70 + 1]], dtype=object),
     [[Fraction(1, 3), 5], [Fraction(-2, 7), 2**70 + 1]]),
    (np.array([[0.1, -2.5], [2.0**-149, 3.0]], np.float32),
     [[exact(np.float32(0.1)), Fraction(-5, 2)], [Fraction(1, 2**149), 3]]),
    (np.array([[0.1], [2.0**-1074]]), [[Fraction(0.1)], [Fraction(1, 2**1074)]]),
    (np.array([[np.float16(1) / np.float16(3), 65504]], np.float16), [[Fraction(1365, 4096), 65504]]),
])
def test_given_values_are_the_exact_rationals_never_through_float64(a, want):
    assert _as_fractions(given_values(a)) == want


@long_only
def test_given_values_of_a_long_double_are_its_own_bits():
    a = np.array([[np.longdouble(1) + np.longdouble(2) ** -60, np.longdouble(2) ** -1100]], dtype=np.longdouble)
    assert _as_fractions(given_values(a)) == [[1 + Fraction(1, 2**60), Fraction(1, 2**1100)]]


# -- why the float64 copy rounds ----------------------------------------------------------------------------------

@pytest.mark.parametrize("a, why", [
    (np.zeros(3), ""),
    (np.array([np.nan, -np.inf, 5e-324]), ""),  # a float64 is its own copy, whatever its value
    (np.array([[1.5, 2.0**-149]], np.float32), ""),
    (np.array([True, False]), ""),
    (np.array([], dtype=object), ""),
    (np.array([["abc"]]), ""),  # no number, no float64 copy to speak of (the readers refuse it first)
    (np.array([2**53 + 1]), "int64 entries beyond 2^53 that float64 rounds"),
    (np.array([[0, -(2**53) - 1]]), "int64 entries beyond 2^53 that float64 rounds"),
    (np.array([[2**53, -(2**53)], [2**62, 3]]), ""),  # 2^53 and 2^62 are float64 values
    (np.array([2**64 - 1], np.uint64), "uint64 entries beyond 2^53 that float64 rounds"),
    (np.array([[1, 2], [3, -4]], np.int32), ""),
    (np.array(7, np.int32), ""),  # a 0-d array (a scalar weight)
    (np.array(2**53 + 1, np.int64), "int64 entries beyond 2^53 that float64 rounds"),
    (np.array([Fraction(1, 3)], dtype=object), "exact values (integers beyond 2^53 or decimals) that float64 rounds"),
])
def test_float64_rounding_says_which_copies_round(a, why):
    assert float64_rounding(a) == why


@long_only
@pytest.mark.parametrize("values, rounds", [
    (lambda L: [L(0.5), L(-3), L(2) ** -1074, L(2) ** 1000], False),  # float64 values (its subnormals too)
    (lambda L: [L(1) + L(2) ** -60], True),  # one bit more than float64 holds
    (lambda L: [L(1), L(2) ** -1100], True),  # below float64's smallest subnormal
    (lambda L: [-(L(2) ** 1100)], True),  # beyond float64's largest finite value
])
def test_a_long_double_rounds_when_its_bits_or_range_exceed_float64(values, rounds):
    a = np.array(values(np.longdouble), dtype=np.longdouble)
    assert float64_rounding(a) == (f"{LD} entries with more bits than float64 holds (or outside its range)"
                                   if rounds else "")


def _signaling_nan():
    """A signaling NaN of x86's 80-bit format (quiet bit clear, payload 1): its conversion raises invalid."""
    raw = (0x8000000000000001).to_bytes(8, "little") + (0x7FFF).to_bytes(2, "little")
    return np.frombuffer(raw.ljust(np.dtype(np.longdouble).itemsize, b"\0"), dtype=np.longdouble).copy()


@long_only
def test_float64_rounding_neither_warns_nor_trips_the_callers_error_state():
    """Overflow, underflow and invalid in the float64 copy are the answer, not an error: under the caller's
    np.errstate(all='raise') and warnings as errors, a long double too big, too small or a signaling NaN
    is reported as rounding."""
    big, small = np.longdouble(2) ** 1100, np.longdouble(2) ** -1100
    cases = [np.array([big, 1]), np.array([[small]]), np.array([-big])] + ([_signaling_nan()] if X87 else [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a in cases:
            with np.errstate(all="raise"):
                assert float64_rounding(a.astype(np.longdouble)).startswith(f"{LD} entries with more bits")


def test_a_scalar_integer_weight_is_refused_in_one_line():
    """Bug fixed: a 0-d int32 (int8, int16, uint32) weight made float64_rounding slice a 0-d array
    (IndexError: the CLI's 'internal error', exit 4) before the shape check could refuse it."""
    for dtype in (np.int8, np.int16, np.int32, np.uint32, np.int64):
        with pytest.raises(InvalidInstance, match=r"W_Q has shape \(\); expected"):
            weights_from_arrays({"W_Q": np.array(3, dtype), "W_K": np.array(3, dtype)})


def test_an_instance_of_int32_data_is_exact_and_keeps_its_values():
    q = np.array([[1, -2, 3], [4, 5, 2**31 - 1]], np.int32)
    inst = from_arrays(np.zeros((2, 2, 3), np.int32), q, reading="dtype")
    mid, rad = inst.ball("queries")
    assert rad is None and mid.tolist() == q.tolist() and inst.precision.exact_for("queries", "contexts")
