"""The rule that combines the stored-values verdict with the certificates over
the data's intervals (verifier/statements/at_precision.py): every row of its table."""
import numpy as np

from verifier.arith.box_rank import SingularPoint
from verifier.arith.box_subsets import BoxIndependence
from verifier.arith.compare import Decision
from verifier.data.precision import EXACT_GENERATED, input_precision
from verifier.statements.at_precision import EXACT_ONLY, FAILS, HOLDS, UNDECIDED, at_data_precision, fails_at_precision

P = input_precision({"queries": np.zeros((3, 2))})
T_, F_, U_ = Decision.TRUE, Decision.FALSE, Decision.UNDECIDED


def box(decision, population=10, witness=None):
    return BoxIndependence(decision, "exhaustion" if population else "sample", 10, population, 9, 0.5, 1,
                           (0, 2) if witness else None, witness)


def test_stored_values_failing_decide_whatever_the_box():
    out = at_data_precision(F_, box(T_), P, "queries")
    assert out.decision is F_ and out.measured["at the data's precision"] == "fails (at the stored values)"
    assert not fails_at_precision(out.measured)


def test_an_exact_reading_is_the_stored_verdict():
    for d in (T_, U_):
        assert at_data_precision(d, box(F_, witness=SingularPoint((1, -1), 0.5, True)), EXACT_GENERATED,
                                 "queries").decision is d
        assert at_data_precision(d, None, P, "queries").status == EXACT_ONLY


def test_holds_needs_every_point_certified():
    out = at_data_precision(T_, box(T_), P, "queries")
    assert out.decision is T_ and out.status == HOLDS and out.reason.startswith(HOLDS)
    assert at_data_precision(U_, box(T_), P, "queries").decision is T_  # the box covers what sampling could not


def test_a_witness_point_fails_and_names_it():
    out = at_data_precision(T_, box(F_, witness=SingularPoint((1, -1), 0.25, True)), P, "queries", item="the queries")
    assert out.decision is F_ and out.status == FAILS and fails_at_precision(out.measured)
    assert out.reason.startswith(f"{FAILS}: the queries [0, 2]") and "--exact-input" in out.reason


def test_neither_is_undecided_with_a_remedy():
    out = at_data_precision(T_, box(U_), P, "queries")
    assert out.decision is U_ and out.status == UNDECIDED and "--exact-input" in out.reason
    sampled = at_data_precision(T_, box(U_, population=None), P, "queries")
    assert sampled.decision is U_ and "--exhaustive-limit" in sampled.reason


# The texts a user reads, pinned whole on every row of the table (the measured entries are the
# evidence's "measured"; the status and reason are printed): a changed word is a changed report.
READING = P.describe("queries")


def test_every_row_says_exactly_what_it_decided():
    out = at_data_precision(F_, box(T_), P, "queries")
    assert (out.status, out.reason) == ("fails at the stored values", "")
    assert out.measured == {"reading": READING, "on the stored values": "fails",
                            "over the data's intervals": box(T_).to_dict(),
                            "at the data's precision": "fails (at the stored values)"}
    out = at_data_precision(U_, None, P, "queries")
    assert (out.decision, out.status, out.reason) == (U_, EXACT_ONLY, "")
    assert out.measured == {"reading": READING, "on the stored values": "is undecided",
                            "at the data's precision": EXACT_ONLY}
    out = at_data_precision(U_, box(T_), P, "queries")
    assert out.reason == (f"{HOLDS}: the property certified at every point of the data's intervals "
                          f"(exhaustion, 9 matrices; {READING})")
    assert out.measured["at the data's precision"] == "holds"
    out = at_data_precision(T_, box(F_, witness=SingularPoint((1, -1), 0.25, True)), P, "queries")
    assert out.reason == (f"{FAILS}: the rows [0, 2] are dependent at an explicit point of the data's intervals "
                          f"(certified in exact rationals, 0.25 of the half-gaps used; {READING}); on the stored "
                          "values it holds (--exact-input reads them as exact)")
    out = at_data_precision(T_, box(U_), P, "queries")
    assert out.measured == {"reading": READING, "on the stored values": "holds",
                            "over the data's intervals": box(U_).to_dict(), "at the data's precision": "undecided"}
    assert out.reason == (f"{UNDECIDED}: 1 of 10 matrices neither certified at every point nor dependent at an "
                          f"explicit one ({READING}); on the stored values it holds; --exact-input if the stored "
                          "values are exact; otherwise data of a wider float type (narrower intervals) would decide it")
    out = at_data_precision(F_, None, P, "queries")
    assert out.measured["on the stored values"] == "fails"


def test_the_reading_is_the_precisions_own_words():
    assert READING and isinstance(READING, str)
    assert at_data_precision(T_, box(T_), P, "queries").measured["reading"] == READING
