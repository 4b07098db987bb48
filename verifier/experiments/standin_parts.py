"""Tables 1 and 3 part by part: each part's result, its power check, and the
table's status from the parts (:mod:`verifier.experiments.power`'s
conventions, applied per part).

A part is a yes/no reading of the paper's claim on our stand-in data, with a
power check stated before the run: the condition under which the stand-in
could have come out either way (e.g. at least d queries to read a Kruskal
rank up to d).  A part's verdict:

* ``yes`` when it holds and its power check for a hold passed (``powered_yes``:
  a certificate, or sampled evidence that bounds the failing share below
  :data:`~verifier.experiments.power.SUBSET_MARGIN`; power both ways,
  :mod:`verifier.experiments.power`);
* ``no`` when it fails and its power check passed;
* ``inconclusive`` otherwise: the stand-in could not have shown the paper's
  behaviour (or its reading was not sampled enough to stand), and
  ``decides`` says what would.

The table's status applies the criterion's rule to the parts; an
inconclusive part is read both ways, and when the two readings give
different statuses the table is "inconclusive" (never "not reproduced").

>>> parts = {"(a)": part(True, True, "x"), "(b)": part(False, False, "y", "more data")}
>>> table_status(parts, lambda v: "reproduced" if all(v.values()) else "not reproduced")[0]
'inconclusive'
>>> parts["(b)"] = part(False, True, "y")
>>> table_status(parts, lambda v: "reproduced" if all(v.values()) else "not reproduced")[0]
'not reproduced'
"""
from __future__ import annotations

import itertools
from typing import Callable

from verifier.experiments.power import Power

__all__ = ["part", "part_verdict", "table_status", "parts_power"]


def part(result: bool, powered: bool, power_detail: str, decides: str = "", *, powered_yes: bool = True,
         yes_detail: str = "") -> dict:
    """One part: its reading on our data, whether its power check passed for a failure
    (``powered``) and for a hold (``powered_yes``), and why."""
    return {"result": bool(result), "powered": bool(powered), "power_detail": power_detail, "decides": decides,
            "powered_yes": bool(powered_yes), "yes_detail": yes_detail}


def sampled_power(readings: list[dict]) -> tuple[bool, str]:
    """The power for a hold read on sampled subsets (each reading a stored ``kruskal_at_precision``
    result: ``sampled``, ``exhaustive``): every one bounds the failing share below
    :data:`~verifier.experiments.power.SUBSET_MARGIN` (power.sampled_part)."""
    from verifier.experiments.power import SUBSET_MARGIN, sampled_part

    parts = [sampled_part(True, int(r.get("sampled", 0)), exhaustive=bool(r.get("exhaustive"))) for r in readings]
    ok = bool(parts) and all(q["decision"] == "holds" for q in parts)
    worst = max((q["failing_share_bound"] for q in parts), default=1.0)
    return ok, (f"a hold read on {min((int(r.get('sampled', 0)) for r in readings), default=0)} sampled subsets "
                f"bounds the failing share by {worst:.3g} at 97.5 % (need <= {SUBSET_MARGIN})")


def part_verdict(p: dict) -> str:
    if p["result"]:
        return "yes" if p.get("powered_yes", True) else "inconclusive"
    return "no" if p["powered"] else "inconclusive"


def _power_detail(p: dict) -> str:
    return p.get("yes_detail") or p["power_detail"] if p["result"] else p["power_detail"]


def table_status(parts: dict, rule: Callable[[dict], str]) -> tuple[str, str]:
    """The table's (status, why): ``rule({name: bool}) -> status`` on the parts,
    every inconclusive part read both ways; different statuses -> inconclusive."""
    verdicts = {k: part_verdict(p) for k, p in parts.items()}
    open_ = [k for k, v in verdicts.items() if v == "inconclusive"]
    outcomes = set()
    for values in itertools.product((True, False), repeat=len(open_)):
        reading = {k: v == "yes" for k, v in verdicts.items()} | dict(zip(open_, values))
        outcomes.add(rule(reading))
    why = "; ".join(f"{k}: {verdicts[k]}" + (f" [power: {_power_detail(parts[k])}]"
                                             if verdicts[k] == "inconclusive" else "") for k in parts)
    if len(outcomes) == 1:
        return outcomes.pop(), why
    decide = "; ".join(f"{k}: {parts[k]['decides']}" for k in open_ if parts[k]["decides"])
    return "inconclusive", why + (f". Would decide it: {decide}" if decide else "")


def parts_power(stated: str, parts_of: Callable[[dict], dict], rule: Callable[[dict], str],
                decides: str) -> Power:
    """A registered :class:`Power` whose checks are the parts' power checks, read from the
    stored ``measured`` numbers; its outcome fails only when an unpowered part leaves the
    table's status open (so a powered "no" elsewhere still decides "not reproduced")."""

    def evaluate(measured: dict) -> dict:
        try:
            parts = parts_of(measured)
        except (KeyError, TypeError):
            return {"outcome": "not measured",
                    "checks": [{"check": "parts", "outcome": "not measured", "detail": "not stored"}]}
        checks = [{"check": k, "outcome": "failed" if part_verdict(p) == "inconclusive" else "passed",
                   "detail": _power_detail(p)} for k, p in parts.items()]
        status, _ = table_status(parts, rule)
        return {"outcome": "failed" if status == "inconclusive" else "passed", "checks": checks}

    return Power(stated=stated, evaluate=evaluate, decides=decides)
