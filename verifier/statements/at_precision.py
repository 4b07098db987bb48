"""A rank-type property at the data's precision: the exact verdict, the
certified robustness, and what they mean together under the instance's
reading (:mod:`verifier.data.precision`).

Under the exact reading (generated instances, ``--exact-input``) the exact
verdict decides and the robustness is reported beside it.  Under the dtype
reading (a user's file) a property that holds exactly must also hold with
a margin above the data's precision:

=====================  =========================  ==========================
exact reading           robustness vs tolerance    at the data's precision
=====================  =========================  ==========================
fails (a witness)       -                          FALSE (fails exactly)
holds or undecided      upper <= tolerance         FALSE: "fails at the data's precision"
holds                   lower > tolerance          TRUE (every matrix of the property screened)
holds                   between                    UNDECIDED
undecided (sampled)     lower > tolerance          UNDECIDED (still sampled)
=====================  =========================  ==========================

A statement that needs such a property as a hypothesis turns a FALSE "at
the data's precision" into the hypothesis status ``fails-at-precision``
(:func:`verifier.statements.evidence.hypothesis_from_evidence`), and then
says hypotheses-unmet whatever its conclusion on the stored floats.

>>> from verifier.arith.compare import Decision
>>> from verifier.arith.robustness import Robustness
>>> from verifier.data.precision import input_precision
>>> import numpy as np
>>> rob = Robustness("queries [0, 4, 5]", (0, 4, 5), 0.0, 4e-17, 3e-17, 1.1e-15, 20, 20, Decision.FALSE)
>>> p = input_precision({"queries": np.random.default_rng(0).standard_normal((6, 5))})
>>> out = at_data_precision(Decision.TRUE, rob, p, "queries")
>>> out.decision.value, out.status
('false', "fails at the data's precision")
"""
from __future__ import annotations

from dataclasses import dataclass

from verifier.arith.compare import Decision
from verifier.arith.robustness import Robustness
from verifier.data.precision import InputPrecision

FAILS = "fails at the data's precision"
HOLDS = "holds at the data's precision"
UNDECIDED = "undecided at the data's precision"
EXACT_ONLY = "exact reading (precision not consulted)"
MEASURED_KEY = "at the data's precision"


@dataclass(frozen=True)
class PrecisionOutcome:
    """The decision under the reading, its status phrase, a reason (empty
    when the exact verdict's own reason stands) and the measured entries."""

    decision: Decision
    status: str
    reason: str
    measured: dict


def _exact_text(d: Decision) -> str:
    return {"true": "holds", "false": "fails", "undecided": "is undecided"}[d.value]


def at_data_precision(exact: Decision, rob: Robustness | None, precision: InputPrecision,
                      *arrays: str) -> PrecisionOutcome:
    """Combine the exact decision with the robustness of the worst matrix
    examined under ``precision``'s reading (``arrays``: the input arrays the
    property is built from, e.g. "queries")."""
    reading = precision.describe(*arrays)
    measured = {"reading": reading, "exact reading": _exact_text(exact)}
    if rob is not None:
        measured["robustness"] = rob.to_dict()
    exact_only = precision.exact_for(*arrays)
    if exact is Decision.FALSE:
        measured[MEASURED_KEY] = "fails (exactly)"
        return PrecisionOutcome(Decision.FALSE, "fails exactly", "", measured)
    if exact_only or rob is None:
        measured[MEASURED_KEY] = EXACT_ONLY
        return PrecisionOutcome(exact, EXACT_ONLY, "", measured)
    margin = (f"{rob.what}: relative sigma_min in [{rob.lower:.3g}, {rob.upper:.3g}] (certified), "
              f"tolerance {rob.tolerance:.3g}")
    if rob.decision is Decision.FALSE:
        measured[MEASURED_KEY] = "fails"
        reason = (f"{FAILS}: {margin} ({reading}); read as exact rationals it {_exact_text(exact)}"
                  " (--exact-input reads them so)")
        return PrecisionOutcome(Decision.FALSE, FAILS, reason, measured)
    if rob.decision is Decision.TRUE and exact is Decision.TRUE and rob.covers_population:
        measured[MEASURED_KEY] = "holds"
        return PrecisionOutcome(Decision.TRUE, HOLDS, "", measured)
    if rob.decision is Decision.TRUE and exact is Decision.TRUE:  # a sample above the tolerance: not all of them
        measured[MEASURED_KEY] = "undecided"
        reason = (f"{UNDECIDED}: {margin} over {rob.screened} of {rob.population or 'the'} matrices screened; "
                  f"the others are not certified ({reading}); holds exactly as rationals (--exact-input)")
        return PrecisionOutcome(Decision.UNDECIDED, UNDECIDED, reason, measured)
    if exact is Decision.TRUE:
        measured[MEASURED_KEY] = "undecided"
        why = ("the certified bounds straddle the tolerance" if rob.lower <= rob.tolerance else
               "the float64 screen that chose it is coarser than the data's precision")
        reason = f"{UNDECIDED}: {margin}: {why} ({reading}); holds exactly as rationals (--exact-input)"
        return PrecisionOutcome(Decision.UNDECIDED, UNDECIDED, reason, measured)
    measured[MEASURED_KEY] = "undecided (exact verdict undecided)"
    return PrecisionOutcome(Decision.UNDECIDED, UNDECIDED, "", measured)


def fails_at_precision(measured) -> bool:
    """Does evidence's ``measured`` say the property fails at the data's
    precision only (it holds or is undecided exactly)?"""
    return isinstance(measured, dict) and measured.get(MEASURED_KEY) == "fails"
