"""The known findings about Dana et al. (AISTATS 2025), declared like strict
xfails: each printed statement expected refuted, with the reason, the
family of counterexamples, the certificates and the repair
(:mod:`verifier.statements.findings`).

Quotations are DANA2025.md's transcriptions of the AISTATS PDF (formulas read
off the rendered pages, tagged [V p.N]); the surrounding prose was not
retrieved.
"""
from __future__ import annotations

import math

from verifier.statements.findings import Finding, Printed, Witness, declare

SOURCE = "DANA2025.md, transcribed from the AISTATS PDF (formulas; the prose around them not retrieved)"


def _opts(**kw) -> tuple:
    return tuple(kw.items())


def _c_at_least_half(o: dict) -> bool:
    """C = sqrt(32 log(N+1)/d) >= 1/2, i.e. d <= 128 ln(N+1)."""
    return 32 * math.log(int(o["N"]) + 1) / int(o["d"]) >= 0.25


def _lemma2_too_wide(o: dict) -> bool:
    """d >= N+S-1 with H >= 2, or d > N+S-1 with H = 1 (S >= 2)."""
    N, S, d, H = (int(o[k]) for k in ("N", "S", "d", "H"))
    return S >= 2 and (d >= N + S - 1 if H >= 2 else d > N + S - 1)


def _shared_last_token(o: dict) -> bool:
    """Every sequence ends in one token and H d_h < d, or H = 0."""
    H, d = int(o["H"]), int(o["d"])
    d_h = int(o.get("d_h") or d)
    return H == 0 or (o.get("dataset") == "shared-last" and H * d_h < d)


THM2 = declare(Finding(
    key="dana_thm2.c_below_half", paper="dana2025", statement="dana_thm2", kind="missing hypothesis",
    title="Thm. 2 needs C = sqrt(32 log(N+1)/d) < 1/2, which the paper does not state",
    printed=Printed(
        "There is W with ||W W^T - I||_inf <= C = sqrt(32 log(N+1)/d) [...] such that d_KL(pi, L) <= "
        "E_t[(1 - pi(g|t)) (1 + 2C + C d_TV(pi~_t, pi_unif)) / (1 - 2C) log((N - 1)/(e^{-H(pi_t)} - 1))]",
        "Thm. 2, p. 7 (Sec. 5); proof App. A.3, pp. 14-15", SOURCE),
    reading="W read on the N x N Gram of its rows; H(pi) = sum pi log pi <= 0 (the sign the limits on p. 7 need); "
            "the bound on d_KL(pi, L), the infimum over the linear class L(N, S, d)",
    family="every N >= 2 and d <= 128 ln(N+1) (C >= 1/2), with any prior having one conditional neither "
           "uniform nor deterministic: 1 - 2C <= 0 makes the right-hand side negative < 0 <= d_KL(pi, L); "
           "smallest printed example N = 3, d = 2, pi = (1/2, 1/4, 1/4): C = 4.71, RHS = -0.0555",
    witnesses=(
        Witness("counterexample", "dana_thm2", control="neg_thm2_C",
                what="N = 3, d = 2, pi = (1/2, 1/4, 1/4): the RHS ball lies below 0 (arb)"),
        Witness("counterexample", "dana_thm2", options=_opts(N=3, S=2, d=2, H=1, conditionals="positive", seed=0),
                what="a drawn instance of the family (positive dyadic conditionals)"),
        Witness("repair", "dana_thm2_small_c", options=_opts(N=900, S=2, d=880, d_h=1, H=1, T0=4,
                                                             conditionals="positive", seed=0),
                expect="verified", what="N = 900, d = 880: C = 0.497 < 1/2 and d < N - 1 (the bound is not "
                                        "trivially true there); d_KL(pi, f) <= RHS in balls"),
        Witness("tightness", "dana_thm2_small_c", control="hypothesis weakened to C < 1",
                what="any C > 1/2 makes the RHS negative: the threshold 1/2 cannot be raised"),
    ),
    repair="Thm. 2 under C < 1/2 (d > 128 ln(N+1)); it says something only where also d < N - 1, i.e. "
           "N >= 869 (for N <= 868, C < 1/2 forces d >= N - 1, where d_KL(pi, L) = 0 by Prop. 2(a))",
    repair_id="dana_thm2_small_c",
    reason="the proof's step lambda <= log(...)/(1 - 2C) divides by 1 - 2C; for C >= 1/2 the right-hand side "
           "is negative",
    covers=_c_at_least_half,
    notes=("Every default instance of dana_thm2 has d <= 4 (C between 3.8 and 5.6): one fact, not one "
           "refutation per instance.",),
))

LEMMA2_WIDE = declare(Finding(
    key="dana_lemma2.d_at_least_N_plus_S_minus_1", paper="dana2025", statement="dana_lemma2",
    kind="missing hypothesis",
    title="Lemma 2 is false for every choice of e, pos, W_QK when H >= 2 and d >= N+S-1",
    printed=Printed("For T0 sequences there exist W_QK^i, e, pos with rank{A(t)} >= min(T0, Hd).",
                    "Lemma 2, p. 4; proof App. A.1, pp. 12-13", SOURCE),
    reading="rank of the T0 stacked attention outputs A(t) = [A^1(t); ...; A^H(t)] in R^{Hd}, for SOME "
            "embeddings, positions and attention weights (an existence statement per dataset)",
    family="S >= 2 and H >= 2 with d >= N+S-1 (H = 1: d > N+S-1), on supports whose formal ranks reach the "
           "cap (e.g. all N^S sequences): every choice gives rank <= min(d, R) + (H-1) min(d, D) < min(T0, Hd), "
           "R <= N+S-1 the formal rank of the tokens, D <= N+S-2 that of the differences x(t,s) - x(t,S); "
           "smallest: N = 4, S = 2, d = 5 = N+S-1, H = 3, all 16 bigrams: rank <= 13 < 15",
    witnesses=(
        Witness("counterexample", "dana_lemma2", options=_opts(N=4, S=2, d=5, H=3, T0=16, seed=0),
                what="all 16 bigrams, d = N+S-1 = 5, H = 3: cap 13 < 15 (sympy identities + exact formal ranks)"),
        Witness("counterexample", "dana_lemma2", control="neg_lemma2_smallN",
                what="H = 1, d = 6 > N+S-1 = 4: rank <= 4 < 6"),
        Witness("confirmation", "dana_lemma2", options=_opts(N=5, S=2, d=4, H=2, T0=8, seed=0), expect="verified",
                what="d = 4 < N+S-1 = 6: a certified nonsingular 8 x 8 minor of A (arb)"),
    ),
    repair="Lemma 2 with d <= N+S-2 when H >= 2 (d <= N+S-1 when H = 1) and S >= 2: checked, not proved, by the "
           "dana_lemma2 checker on every drawn instance outside the family (a certified nonsingular minor of "
           "order min(T0, Hd) for dyadic e, pos and the paper's rank-one or random W_QK)",
    reason="heads differ only within the span of the differences x(t,s) - x(t,S), of formal rank <= N+S-2 "
           "(DANA2025.md L1 states the looser cap H min(d, N+S-1))",
    covers=_lemma2_too_wide,
    notes=("The earlier wording 'the paper assumes neither S >= 2 nor d <= N+S-1' was off by one against its "
           "own counterexample (d = N+S-1 with H = 3): for H >= 2 the lemma needs d <= N+S-2.",),
))

LEMMA2_S1 = declare(Finding(
    key="dana_lemma2.single_token", paper="dana2025", statement="dana_lemma2", kind="boundary case",
    title="Lemma 2 is false for S = 1: every head outputs x(t,1)",
    printed=LEMMA2_WIDE.printed, reading=LEMMA2_WIDE.reading,
    family="S = 1 with min(d, N) < min(T0, Hd) (e.g. H >= 2, T0 > d): softmax over one token is 1, so every head "
           "outputs x(t,1) and rank <= min(d, N); smallest printed example N = 5, d = 2, H = 2: rank <= 2 < 4",
    witnesses=(Witness("counterexample", "dana_lemma2", control="neg_lemma2_S1",
                       what="N = 5, S = 1, d = 2, H = 2: rank <= 2 < 4 (sympy: softmax of one score is 1)"),
               Witness("counterexample", "dana_lemma2", options=_opts(N=5, S=1, d=2, H=2, T0=5, seed=0),
                       what="the same from the command line")),
    repair="S >= 2 (the proof's multiplicities n in [2, d+1] need at least two positions)",
    reason="with one position the attention weights are identically 1",
    covers=lambda o: int(o["S"]) == 1,
))

THM1_CAPACITY = declare(Finding(
    key="dana_thm1_eps0.capacity_reading", paper="dana2025", statement="dana_thm1_eps0", kind="false as intended",
    title="Thm. 1 read as a capacity statement (H fixed by T0 = H d_h + d) is false on shared-last-token data",
    printed=Printed("Let eps >= 0, gamma > 0, and assume Assumption 2. There exist f_{W,E} and an AoT with parameters "
                    "(d, d_h, H) such that d_h H + d >= T_eps and (4) d_KL(pi, T) <= d_KL(pi, L) + C eps ||W E||_2 "
                    "+ gamma.", "Thm. 1, p. 3; proof App. A.1-A.2 (H = ceil((T0 - d)/d_h), p. 13); Cor. 1, p. 4",
                    SOURCE),
    reading="two readings: (literal) H is chosen with the AoT, any H with d_h H + d >= T_eps: not refuted, and "
            "says nothing about capacity; (capacity, as the proof on p. 13 and Cor. 1 use it) for GIVEN (d, d_h, H) "
            "and every pi with T0 <= H d_h + d: refuted with eps = 0",
    family="H d_h < d and every sequence of the support ending in the same token (or H = 0): the AoT's logits "
           "per last token lie in an affine space of dimension <= H d_h, while d_KL(pi, L) = 0; smallest printed "
           "example N = 3, S = 2, d = 2, d_h = 1, H = 1, support {(1,3), (2,3), (3,3)}: d_KL >= kappa0 > 0",
    witnesses=(
        Witness("counterexample", "dana_thm1_eps0", control="neg_thm1_shared",
                what="a certified floor kappa0 > 0 = d_KL(pi, L) over EVERY AoT of sizes (2, 1, 1) on a valid "
                     "instance that satisfies Assumption 2 (Pinsker + Eckart-Young, arb)"),
        Witness("counterexample", "dana_thm1_eps0", options=_opts(N=3, S=2, d=2, d_h=1, H=1, T0=3,
                                                                  dataset="shared-last", conditionals="positive",
                                                                  seed=0),
                what="a drawn instance of the family (README's example command)"),
        Witness("counterexample", "dana_thm1_eps0", control="neg_thm1_H0",
                what="H = 0: two sequences with one last token get identical logits, d_KL >= (5/3) ln 2 - ln 3"),
    ),
    repair="none proved: the literal reading is what the proof gives (H grows with T0); the report's "
           "dana_thm1_eps0 certifies the exact route instance by instance where rank M = T0",
    reason="the proof and Cor. 1 fix H by T0 = H d_h + d; with one last token and H d_h < d the AoT's outputs "
           "span too little",
    covers=_shared_last_token,
    notes=("Filed until now as a negative control 'rejected as expected' and absent from 'Needs attention'; "
           "the report's 'route impossible' verdicts (D1) are inconclusive and refute nothing.",),
))
