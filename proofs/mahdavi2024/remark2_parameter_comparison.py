"""Remark 2 (Sec. 4.3): MHA's Omega(Hn) against the ReLU network's O(md) at
equal parameter counts.

Statement
---------
(reconstructed) Under Assumptions 1-2, an MHA layer memorizes
``C_A = H(r-1)+1`` examples (Theorem 1, r = min(n, d_h)) while a two-layer
ReLU net on ``[vec(E); e]`` with m units memorizes at most ``C_R = m(d+2)+1``
(Proposition 3).  At the same parameter count the former is "at least as
powerful" -- as orders of growth.  Quantitative form checked here (ours),
with the ReLU net given the largest m whose count ``m((n+1)d+2)+1`` does not
exceed MHA's ``H(2 d d_h + d d_v) + H d_v d + d d_out``:

    lean MHA   (d_h = n, d_v = d_out = 1):   n  C_R <= 8  d   C_A
    square MHA (d_h = d_v = d, d_out = 1):   n^2 C_R <= 16 d^2 C_A

for 2 <= n < d.  Proof: lean, m <= 2H (the budget is 2Hd(n+1)+d), so
``C_R <= 2H(d+2)+1`` and ``8d(H(n-1)+1) - n(2H(d+2)+1) = H(6nd - 8d - 4n) +
8d - n > 0``; square, ``m < (4Hd+1)/(n+1)`` and ``C_A >= Hn/2``, then
``(4Hd+1)(d+2) + n <= (68/9) H d^2`` for d >= 3.  So the comparison holds up
to a constant exactly when n = Theta(d); the literal ``C_A >= C_R`` never
holds on the grid (n < d), and no constant independent of d/n works.

Construction
------------
A grid of (H, n, d) (plus the instance's own sizes) in both settings; every
count is an exact integer (``verifier.model.mha.parameter_count`` for MHA).

Checks
------
* Hypotheses: 2 <= n < d at every grid point, d_h >= n (so r = n), exact.
* The claimed inequality ``n^p C_R <= kappa d^p C_A`` at every grid point, in
  integers (``kappa``, ``power`` options; defaults above).  A violating point
  refutes the claim, with its row as the witness.
* ``measured`` holds the table (H, n, d, setting, m, C_A, C_R) and the number
  of points where the literal ``C_A >= C_R`` holds.

Not established
---------------
The asymptotic statement itself (only the grid, plus the proof above); the
counts' own validity is checked by ``theorem1`` and ``proposition3``.

References
----------
arXiv:2306.02010v3, Sec. 4.3 (Proposition 3 and the comparison), Theorem 1.

>>> from verifier.data.instances import make_instance
>>> check_remark2(make_instance(H=2, n=3, d=5)).verdict
'verified'
"""
from __future__ import annotations

from verifier.arith.compare import Decision
from verifier.data.instances import make_instance
from verifier.model.mha import parameter_count
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .proposition3_relu_lower_bound import relu_parameter_count

GRID_H = (1, 4, 16)
GRID_D = (4, 16, 64)
SETTINGS = {"lean": (8, 1), "square": (16, 2)}  # setting: (kappa, power)


def mha_sizes(n: int, d: int, setting: str) -> tuple[int, int, int]:
    """(d_h, d_v, d_out): lean = the fewest parameters reaching r = n."""
    return (n, 1, 1) if setting == "lean" else (d, d, 1)


def relu_width_at_budget(budget: int, n: int, d: int) -> int:
    """The largest m with m((n+1)d+2)+1 <= budget."""
    return max(0, (budget - 1) // ((n + 1) * d + 2))


def comparison_row(H: int, n: int, d: int, setting: str) -> dict:
    d_h, d_v, d_out = mha_sizes(n, d, setting)
    budget = parameter_count(H, d, d_h, d_v, d_out)
    m = relu_width_at_budget(budget, n, d)
    return {"H": H, "n": n, "d": d, "setting": setting, "mha_parameters": budget, "m": m,
            "relu_parameters": relu_parameter_count(m, n, d), "C_A": H * (min(n, d_h) - 1) + 1,
            "C_R": m * (d + 2) + 1}


def build_grid(instance=None) -> list[dict]:
    """Rows over GRID_H x GRID_D x n in {2, d/2, d-1}, both settings, plus the instance."""
    points = {(H, n, d) for H in GRID_H for d in GRID_D for n in sorted({2, d // 2, d - 1})}
    if instance is not None and 2 <= instance.n < instance.d:
        points.add((instance.H, instance.n, instance.d))
    return [comparison_row(H, n, d, s) for (H, n, d) in sorted(points) for s in SETTINGS]


#: a grid point where the reconstructed inequality fails (exact integers)
GRID_VIOLATION = Refutation("counterexample", "a grid point (H, n, d) where n^p C_R > kappa d^p C_A (exact integers)")
#: the same for the caller's constants
PINNED_CONSTANTS = Refutation("counterexample", "a grid point where n^p C_R > kappa d^p C_A for the caller's "
                              "constants (exact integers)", variant="kappa / power: the constants pinned")


@statement("remark2", conclusion_over="any", refutes=(GRID_VIOLATION, PINNED_CONSTANTS),
           requires=("2 <= n < d at every grid point",),
           measure="violations")
def check_remark2(instance, *, prec: int = 128, seed: int = 0, kappa: dict | int | None = None,
                  power: dict | int | None = None, **options) -> Evidence:
    """n^p C_R <= kappa d^p C_A at every grid point (exact integers)."""
    rows = build_grid(instance)
    kap = {s: (SETTINGS[s][0] if kappa is None else kappa[s] if isinstance(kappa, dict) else int(kappa))
           for s in SETTINGS}
    pw = {s: (SETTINGS[s][1] if power is None else power[s] if isinstance(power, dict) else int(power))
          for s in SETTINGS}
    violations = []
    for r in rows:
        s = r["setting"]
        lhs, rhs = r["n"] ** pw[s] * r["C_R"], kap[s] * r["d"] ** pw[s] * r["C_A"]
        r["claim holds"] = lhs <= rhs
        if not r["claim holds"]:
            violations.append(r)
    valid = all(2 <= r["n"] < r["d"] for r in rows)
    hyps = [Hypothesis("2 <= n < d at every grid point", "certified" if valid else "refuted", f"{len(rows)} rows"),
            Hypothesis("d_h >= n (r = n)", "certified", "lean: d_h = n; square: d_h = d"),
            Hypothesis("budget: ReLU parameters <= MHA parameters", "certified"
                       if all(r["relu_parameters"] <= r["mha_parameters"] for r in rows) else "refuted",
                       "m is the largest width within MHA's count")]
    literal = sum(r["C_A"] >= r["C_R"] for r in rows)
    worst = {s: max((r["n"] ** pw[s] * r["C_R"] / (r["d"] ** pw[s] * r["C_A"]) for r in rows
                     if r["setting"] == s), default=0.0) for s in SETTINGS}
    table = [[r["H"], r["n"], r["d"], r["setting"], r["m"], r["C_A"], r["C_R"]] for r in rows]
    decision = Decision.FALSE if violations else Decision.TRUE
    claim = {s: f"n^{pw[s]} C_R <= {kap[s]} d^{pw[s]} C_A" for s in SETTINGS}
    measured = {"grid points": len(rows), "violations": len(violations),
                "worst n^p C_R / (d^p C_A)": worst, "literal C_A >= C_R holds at": literal,
                "table [H, n, d, setting, m, C_A, C_R]": table}
    certs = [{"kind": "violating grid point (exact integers)", **r} for r in violations[:5]]
    certs.append({"kind": "grid", "H": list(GRID_H), "d": list(GRID_D), "n": "{2, d/2, d-1}",
                  "settings": {"lean": "d_h = n, d_v = d_out = 1", "square": "d_h = d_v = d, d_out = 1"}})
    trail = [Step("MHA parameter count (verifier.model.mha.parameter_count); ReLU width m within that budget",
                  uses="Sec. 4.3, Eqs. (1)-(8)", data={"rows": len(rows)}),
             Step("C_A = H(r-1)+1 (Thm. 1), C_R = m(d+2)+1 (Prop. 3)", uses="Theorem 1, Proposition 3"),
             Step("claimed inequality at every grid point, exact integers", uses="Remark 2 (reconstructed)",
                  data={"claim": claim, "violations": len(violations), "literal C_A >= C_R": literal})]
    reason = "" if not violations else (
        f"{len(violations)} grid points violate it, e.g. H={violations[0]['H']}, n={violations[0]['n']}, "
        f"d={violations[0]['d']} ({violations[0]['setting']}): C_A = {violations[0]['C_A']}, "
        f"C_R = {violations[0]['C_R']}")
    return conclude("remark2", decision, claimed=claim, measured=measured, hypotheses=hyps, certified=True,
                    refutation=GRID_VIOLATION if kappa is None and power is None else PINNED_CONSTANTS,
                    method="exact integers", certificates=certs, trail=trail, reason=reason)


@negative_control("remark2", "literal comparison C_A >= C_R at equal parameter counts (constants ignored)",
                  expect=("refuted",))
def control_remark2_literal(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_remark2(make_instance(H=2, n=3, d=5, seed=seed), kappa=1, power=0)


@negative_control("remark2", "one constant for every n/d: C_R <= 8 C_A (drops n = Theta(d))",
                  expect=("refuted",))
def control_remark2_uniform_constant(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_remark2(make_instance(H=2, n=3, d=5, seed=seed), kappa=8, power=0)
