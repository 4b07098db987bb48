"""A rank-type property at the data's precision: the verdict on the values
stored, the certificates over the box of every value they stand for, and
what they mean together under the instance's reading
(:mod:`verifier.data.precision`).

Under the exact reading (generated instances, ``--exact-input``, integer
data) the verdict on the stored values decides.  Under the dtype reading
(a user's floats) the property is about EVERY point of the box:

=====================  ===================================  ====================================
stored values          over the box (:mod:`verifier.arith.box_subsets`)  at the data's precision
=====================  ===================================  ====================================
fail (a witness)       -                                    FALSE (the stored point is in the box)
hold or undecided      a certified singular point           FALSE: "fails at the data's precision"
any                    every point certified                TRUE: "holds at the data's precision"
hold or undecided      neither                              UNDECIDED
=====================  ===================================  ====================================

No tolerance enters: "holds" is a certificate for every point, "fails" an
explicit point, checked in exact rationals.  A statement that needs the
property as a hypothesis turns FALSE at the data's precision into the
hypothesis status ``fails-at-precision``
(:func:`verifier.statements.evidence.hypothesis_from_evidence`): the verdict
is then hypotheses-unmet; UNDECIDED makes it inconclusive.

>>> from verifier.arith.compare import Decision
>>> from verifier.arith.box_subsets import BoxIndependence
>>> from verifier.data.precision import input_precision
>>> import numpy as np
>>> box = BoxIndependence(Decision.UNDECIDED, "sample", 50, None, 50, 0.3, 0)
>>> p = input_precision({"queries": np.zeros((6, 5))})
>>> out = at_data_precision(Decision.TRUE, box, p, "queries")
>>> out.decision.value, out.status
('undecided', "undecided at the data's precision")
"""
from __future__ import annotations

from dataclasses import dataclass

from verifier.arith.box_subsets import BoxIndependence
from verifier.arith.compare import Decision
from verifier.data.precision import InputPrecision

FAILS = "fails at the data's precision"
HOLDS = "holds at the data's precision"
UNDECIDED = "undecided at the data's precision"
EXACT_ONLY = "exact reading (the values given stand for themselves)"
MEASURED_KEY = "at the data's precision"
REMEDY = ("--exact-input if the stored values are exact; otherwise data of a wider float type (narrower "
          "intervals) would decide it")


@dataclass(frozen=True)
class PrecisionOutcome:
    """The decision under the reading, its status phrase, a reason (empty
    when the stored-values verdict's own reason stands) and the measured
    entries."""

    decision: Decision
    status: str
    reason: str
    measured: dict


def _exact_text(d: Decision) -> str:
    return {"true": "holds", "false": "fails", "undecided": "is undecided"}[d.value]


def at_data_precision(exact: Decision, box: BoxIndependence | None, precision: InputPrecision,
                      *arrays: str, what: str = "the property", item: str = "the rows") -> PrecisionOutcome:
    """Combine the verdict on the stored values with the certificates over
    the box (``box``: None when not computed, e.g. exact arrays) under
    ``precision``'s reading (``arrays``: the input arrays the property is
    built from, e.g. "queries"; ``item``: what a witness index names, e.g.
    "the queries" or "the tokens of context")."""
    reading = precision.describe(*arrays)
    measured = {"reading": reading, "on the stored values": _exact_text(exact)}
    if box is not None:
        measured["over the data's intervals"] = box.to_dict()
    if exact is Decision.FALSE:
        measured[MEASURED_KEY] = "fails (at the stored values)"
        return PrecisionOutcome(Decision.FALSE, "fails at the stored values", "", measured)
    if precision.exact_for(*arrays) or box is None:
        measured[MEASURED_KEY] = EXACT_ONLY
        return PrecisionOutcome(exact, EXACT_ONLY, "", measured)
    if box.decision is Decision.TRUE:
        measured[MEASURED_KEY] = "holds"
        return PrecisionOutcome(Decision.TRUE, HOLDS, f"{HOLDS}: {what} certified at every point of the data's "
                                f"intervals ({box.how}, {box.certified} matrices; {reading})", measured)
    if box.decision is Decision.FALSE:
        measured[MEASURED_KEY] = "fails"
        where = box.witness_index[0] if len(box.witness_index) == 1 else list(box.witness_index)
        reason = (f"{FAILS}: {item} {where} are dependent at an explicit point of the data's intervals "
                  f"(certified in exact rationals, {box.witness.used:.3g} of the half-gaps used; {reading}); on "
                  f"the stored values it {_exact_text(exact)} (--exact-input reads them as exact)")
        return PrecisionOutcome(Decision.FALSE, FAILS, reason, measured)
    measured[MEASURED_KEY] = "undecided"
    if box.population is None:
        why = (f"only a sample of the matrices could be examined ({box.screened}, {box.certified} certified at "
               "every point); exhausting them (raise --exhaustive-limit) or a dependent point would decide it")
    else:
        why = (f"{box.uncertified} of {box.screened} matrices neither certified at every point nor dependent at "
               f"an explicit one")
    reason = f"{UNDECIDED}: {why} ({reading}); on the stored values it {_exact_text(exact)}; {REMEDY}"
    return PrecisionOutcome(Decision.UNDECIDED, UNDECIDED, reason, measured)


def fails_at_precision(measured) -> bool:
    """Does evidence's ``measured`` say the property fails at the data's
    precision only (it holds or is undecided on the stored values)?"""
    return isinstance(measured, dict) and measured.get(MEASURED_KEY) == "fails"
