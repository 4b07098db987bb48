"""The known findings about Mahdavi et al. (ICLR 2024): what the checks added
to statements that hold (:mod:`verifier.statements.findings`).

Quotations are from the paper's text as extracted in the project's seed
(``seeds/002_*.txt``, arXiv:2306.02010v3); the extraction lost the formulas,
marked ``[...]`` (the formulas given beside them are STATEMENTS.md's
reconstructions).  Page numbers were not retrieved.
"""
from __future__ import annotations

from verifier.statements.findings import NOT_RETRIEVED, Finding, Printed, Witness, declare

SOURCE = "arXiv:2306.02010v3 text as extracted (seed 002; formulas lost, marked [...]); pages not retrieved"

PROP3 = declare(Finding(
    key="proposition3.sharpened", paper="mahdavi2024", statement="proposition3", kind="sharpened",
    title="Prop. 3's cap sharpens from m(d+2)+1 to m(d+1)+1 (ReLU is positively homogeneous)",
    printed=Printed("A ReLU FCN with [...] parameters can memorize at most [...] examples under Assumptions 1 and 2.",
                    "Sec. 4.3, after Proposition 3 (the proposition's own text: " + NOT_RETRIEVED + "); proof App. F",
                    SOURCE),
    reading="(STATEMENTS.md, reconstructed) an m-unit two-layer ReLU net on [vec(E); e] cannot memorize every "
            "dataset of size T > m(d+2)+1 that meets Assumptions 1-2 (the lifted dataset of App. F)",
    family="every m >= 1, n < d: on App. F's lifted data the reachable labels lie in finitely many subspaces of "
           "dimension <= m(d+1)+1, so T = m(d+1)+2 already fails; the threshold m(d+1) is too low (an exact "
           "Jacobian of rank T = m(d+1)+1)",
    witnesses=(
        Witness("confirmation", "proposition3", options=(("H", 1), ("n", 2), ("d", 3), ("T", 6), ("seed", 0)),
                kwargs=(("m", 1), ("threshold", 5)), expect="verified",
                what="m = 1, d = 3, T = 6 = m(d+2)+1 (outside the printed hypothesis) > m(d+1)+1 = 5: no such net "
                     "fits generic labels (exact Jacobian ranks, explicit unreachable labels)"),
        Witness("tightness", "proposition3", control="threshold lowered to m(d+1)",
                what="T = m(d+1)+1: an exact Jacobian of full rank T, an open set of labels is reachable"),
    ),
    repair="T > m(d+1)+1 suffices (the paper's count has m redundant scalings); tight on the lifted data",
    reason="v_j ReLU(w_j x + b_j) = (v_j/a) ReLU(a w_j x + a b_j) for a > 0: each unit has d+1 effective parameters",
))

REMARK2 = declare(Finding(
    key="remark2.growth_rates", paper="mahdavi2024", statement="remark2", kind="confirmed",
    title="The MHA vs ReLU comparison holds as growth rates, not as a literal inequality",
    printed=Printed("This upper bound on memorization of a ReLU network together with the lower bound of [...] as "
                    "established in Theorem 1 for MHA with the same order of parameters, shows that the latter is at "
                    "least as powerful, in terms of memorization, as the former (when data satisfy Assumptions 1 "
                    "and 2).", "Sec. 4.3, the paragraph after Proposition 3 (Remark 2 in STATEMENTS.md)", SOURCE),
    reading="at equal parameter counts, C_A = H(r-1)+1 (Thm. 1) against C_R = m(d+2)+1 (Prop. 3): (growth rates) "
            "n C_R <= 8 d C_A (lean MHA) and n^2 C_R <= 16 d^2 C_A (square MHA), confirmed with a proof and on a "
            "grid; (literal) C_A >= C_R: refuted at every grid point with n < d",
    family="literal reading: every grid point (H, n, d) with 2 <= n < d; growth-rate reading: holds up to a "
           "constant exactly when n = Theta(d)",
    witnesses=(
        Witness("confirmation", "remark2", options=(("H", 2), ("n", 3), ("d", 5), ("seed", 0)), expect="verified",
                what="the growth-rate inequalities at every grid point (exact integers)"),
        Witness("counterexample", "remark2", control="literal comparison C_A >= C_R",
                what="the literal comparison fails on the grid (exact integers)"),
        Witness("counterexample", "remark2", control="one constant for every n/d",
                what="no constant independent of d/n: C_R <= 8 C_A fails"),
    ),
    repair="'at least as powerful' as orders of growth when n = Theta(d) (constants 8 and 16 above)",
    reason="the comparison is between orders Omega(Hn) and O(md); the constants and the ratio d/n matter",
))

PROP5 = declare(Finding(
    key="proposition5.zero_sum", paper="mahdavi2024", statement="proposition5", kind="sharpened",
    title="Prop. 5 with c = 0 gives rank(Z) <= H(d-1), one less than printed",
    printed=Printed("If all context vectors satisfy [...] for all [...] and some universal scalar [...], then for "
                    "any set of weights [...], we have [...]", "App. I, Proposition 5", SOURCE),
    reading="(STATEMENTS.md) tokens with 1_d^T x = c for one c: rank(Z) <= H(d-1)+1 for any weights; with c = 0 "
            "each block indicator e_h kron 1_d is a null vector of Z (H of them), so rank(Z) <= H(d-1)",
    family="c = 0, any H, n, d (T >= H(d-1)): the cap H(d-1) is attained by Gaussian or Prop. 1 weights on the "
           "control's instance (H = 2, n = 3, d = 4, T = 8)",
    witnesses=(
        Witness("tightness", "proposition5", control="c = 0: the sharper cap H(d-1) holds",
                what="c = 0: H independent exact null vectors (sympy proof) and a certified rank H(d-1) (arb minor), "
                     "so H(d-1) - 1 is exceeded"),
        Witness("confirmation", "proposition5", control="cap lowered by one, H(d-1), on tokens summing to 1",
                what="c = 1: the printed cap H(d-1)+1 is the right one (H(d-1) exceeded)"),
    ),
    repair="rank(Z) <= H(d-1) + [c != 0]",
    reason="when c = 0 each head's block also sums to 0, one more null vector than the H-1 differences",
))

APPENDIX_I1 = declare(Finding(
    key="appendixI1.conjecture", paper="mahdavi2024", statement="capacity_probe", kind="conjecture refuted",
    title="App. I.1's conjectured count H(d-1)+1 for contexts in general position is exceeded: T = Hd is certified",
    printed=Printed("Preliminary results in Figure 4 suggest that the linearity in [...] still remains, while the "
                    "linearity in [...] is weakened. We conjecture that a bound with complexity [...] would hold, "
                    "which could be interesting for future works.", "App. I.1", SOURCE),
    reading="(EXPERIMENTS.md fig4) the memorization count with all tokens in general position is H(d-1)+1. Read as a "
            "cap (as Prop. 5's is): refuted; read as a lower bound: consistent (T = Hd >= H(d-1)+1)",
    family="H >= 2, contexts in general position (Uniform[0,1]): some key/query weights give rank Z = Hd, the "
           "number of columns, so T = Hd > H(d-1)+1 examples are memorizable for every real labelling; smallest "
           "probed: H = 2, n = 2, d = 4, T = 8 > 7",
    witnesses=(Witness("counterexample", "capacity_probe", experiment="capacity_probe",
                       options=(("H", 2), ("n", 2), ("d", 4), ("context", "uniform"), ("seed", 0), ("steps", 50)),
                       what="random weights on general-position data: rank Z = Hd = 8 certified by an arb minor"),),
    repair="as a cap, Hd (the columns of Z) is the right count for general position; H(d-1)+1 is Prop. 5's cap "
           "for tokens summing to a constant, a stronger hypothesis",
    reason="general position alone puts no linear constraint on the rows of Z",
))
