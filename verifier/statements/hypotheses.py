"""The hypotheses a statement declares it needs, and the ones the runner
decides before a checker runs.

Every checker declares its hypotheses with ``@statement(sid,
requires=(...))``: names from this vocabulary or free text the checker
itself decides (e.g. "shared contexts E^(t) = E").  Two kinds have a meaning
here:

* SHAPE hypotheses, decided from the instance's sizes alone (:data:`SHAPE`:
  "n < d", "d_v >= d_out", "d_out <= d", "d_out >= 1").  A
  refuted one means the statement does not apply: the runner answers
  hypotheses-unmet with the evidence, without attempting the construction
  (which may not even exist there: Claim 1's right inverse needs n <= d).
  Hypotheses the checker decides itself (e.g. "T <= H(r-1)+1": the
  construction still runs there and its outcome is shown, but the verdict is
  hypotheses-unmet) are declared as free text.
  n >= d is such a hypothesis, never bad input: GPT-2's n = 1024 > d = 768
  gets hypotheses-unmet from Theorem 1 and a verdict from Prop. 2.
* DATA hypotheses, the paper's assumptions, checked by their own statements
  (:data:`DATA`: "Assumption 1" -> ``assumption1``...).  For data read at
  its dtype's precision the runner makes sure a statement that needs one
  learns whether it fails at the data's precision.

>>> from verifier.data.instances import make_instance
>>> [h.status for h in shape_hypotheses(("n < d", "d_out <= d", "shared"), make_instance(n=4, d=3))]
['refuted', 'certified']
"""
from __future__ import annotations

from typing import Callable

from verifier.statements.at_precision import REMEDY, UNDECIDED
from verifier.statements.evidence import Hypothesis


def _h(name: str, ok: bool, detail: str) -> Hypothesis:
    return Hypothesis(name, "certified" if ok else "refuted", detail)


#: name -> instance -> Hypothesis, decided from the sizes (certified or refuted).
SHAPE: dict[str, Callable] = {
    "n < d": lambda i: _h("n < d", i.n < i.d, f"n = {i.n}, d = {i.d}"),
    "d_v >= d_out": lambda i: _h("d_v >= d_out", i.d_v >= i.d_out, f"d_v = {i.d_v}, d_out = {i.d_out}"),
    "d_out <= d": lambda i: _h("d_out <= d", i.d_out <= i.d, f"d_out = {i.d_out}, d = {i.d}"),
    "d_out >= 1": lambda i: _h("d_out >= 1", i.d_out >= 1, f"d_out = {i.d_out}"),
}

#: name -> the statement id whose checker decides it on the instance.
DATA: dict[str, str] = {"Assumption 1": "assumption1", "Assumption 2": "assumption2",
                        "Assumption 3": "assumption3"}

#: what the sizes alone say against a DATA hypothesis, where the
#: construction cannot even start: n tokens in R^d, d < n, are dependent.
#: (T < n also refutes Assumption 1, but the construction runs there and its
#: outcome is shown: the checker decides; the verdict is hypotheses-unmet.)
NECESSARY: dict[str, Callable] = {
    "Assumption 2": lambda i: (i.n <= i.d, f"rank E^(t) <= d = {i.d} < n = {i.n}"),
}


def n_less_than_d(instance) -> Hypothesis:
    """The setting's standing hypothesis n < d, read off the shapes."""
    return SHAPE["n < d"](instance)


def shape_hypotheses(requires, instance) -> list[Hypothesis]:
    """The SHAPE hypotheses among ``requires``, decided on ``instance``, and
    the DATA hypotheses the sizes alone refute (:data:`NECESSARY`); other
    names are skipped: the checker decides them."""
    out = []
    for name in requires:
        try:
            if name in SHAPE:
                out.append(SHAPE[name](instance))
            elif name in NECESSARY:
                ok, why = NECESSARY[name](instance)
                if not ok:  # refuted by the sizes; otherwise its checker decides
                    out.append(Hypothesis(name, "refuted", why))
        except AttributeError:  # an instance of another paper's kind: its checker decides
            continue
    return out


def data_hypotheses(requires) -> list[tuple[str, str]]:
    """(name, statement id) of the DATA hypotheses among ``requires``."""
    return [(name, DATA[name]) for name in requires if name in DATA]


def equality_hypothesis(name: str, equal: bool, instance, arrays: tuple[str, ...], *, holds: str,
                        fails: str) -> Hypothesis:
    """A hypothesis of exact equality or structure of the data (one shared
    context, constant token sums, duplicate examples), ``equal`` decided
    exactly on the values given (``Instance.exact_array``).

    Refuted when they differ.  Certified when they are equal and exact
    under the instance's reading (integers, generated data,
    ``--exact-input``).  For floats read at their precision, equal stored
    values stand for intervals that also hold unequal values: the equality
    holds for the stored values only, never for the whole set, so it is
    undecided at the data's precision (status "evidence"), and a statement
    that needs it concludes about the stored values only.

    >>> from verifier.data.instances import make_instance
    >>> equality_hypothesis("shared", True, make_instance(), ("contexts",), holds="one E", fails="").status
    'certified'
    """
    if not equal:
        return Hypothesis(name, "refuted", fails)
    precision = getattr(instance, "precision", None)
    if precision is None or precision.exact_for(*arrays):
        return Hypothesis(name, "certified", f"{holds} (exact equality of the values given)")
    return Hypothesis(name, "evidence", f"{UNDECIDED}: {holds} as stored ({precision.describe(*arrays)}); "
                                        f"other values they stand for differ; {REMEDY}")


def at_precision_only(h: Hypothesis) -> bool:
    """Did :func:`equality_hypothesis` find equality of the stored values only
    (undecided at the data's precision)?"""
    return h.status == "evidence" and h.detail.startswith(UNDECIDED)
