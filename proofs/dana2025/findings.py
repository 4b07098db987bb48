"""The findings about Dana et al. (AISTATS 2025): Prop. 3, Lemma 2 and
Thm. 2, each declared like a strict xfail with its reading, the strongest
reading an author could hold, its family and certificates, and its repair
(:mod:`verifier.statements.findings`).  Thm. 1 and the corollaries:
:mod:`.findings_theorem1`.

Quotations: Dana, Pydi, Chevaleyre, "Memorization in Attention-only
Transformers", AISTATS 2025 (PMLR 258), arXiv:2411.10115.  The text quoted is
the AISTATS PDF in the authors' repository (github.com/leodana2000/
Transformer_Attentional_Memory at cffc0d8), its formulas transcribed from the
rendered pages (DANA2025.md); page numbers are that PDF's.  arXiv v1
(15 Nov 2024) was located and its App. A.1 matches (Lemma 2's proof, eqs.
(6)-(10)); which arXiv version equals the AISTATS PDF, and the arXiv page
numbers, were not retrieved.
"""
from __future__ import annotations

import math

from verifier.statements.findings import Finding, Printed, Witness, declare, instance_of, variant

SOURCE = ("Dana, Pydi, Chevaleyre, AISTATS 2025 (PMLR 258), arXiv:2411.10115: the AISTATS PDF (authors' repository, "
          "cffc0d8), formulas transcribed from its pages; the arXiv page numbers not retrieved")


def _opts(**kw) -> tuple:
    return tuple(kw.items())


def _c_at_least_half(o: dict, inst) -> bool:
    """C = sqrt(32 log(N+1)/d) >= 1/2, i.e. d <= 128 ln(N+1) (the sizes alone decide it)."""
    N, d = (int(inst.N), int(inst.d)) if inst is not None else (int(o["N"]), int(o["d"]))
    return 32 * math.log(N + 1) / d >= 0.25


def lemma2_cap(o: dict, inst) -> tuple:
    """(instance, the certified rank cap of its data, the claimed min(T0, Hd))."""
    from .rank_ceilings import lemma2_caps

    inst = instance_of("dana_lemma2", o, inst)
    caps = lemma2_caps(inst.sequences, N=inst.N, d=inst.d, H=inst.H)
    return inst, caps["cap"], min(inst.T0, inst.H * inst.d)


def _lemma2_rank_cap(o: dict, inst) -> bool:
    """S >= 2 and the data's rank cap (u, R, D: the tokens they use) below min(T0, Hd)."""
    inst, cap, target = lemma2_cap(o, inst)
    return inst.S >= 2 and cap < target


def _lemma2_single_token(o: dict, inst) -> bool:
    inst, cap, target = lemma2_cap(o, inst)
    return inst.S == 1 and cap < target


LEMMA2_PRINTED = Printed("For T0 sequences there exist W_QK^i, e, pos with rank{A(t)} >= min(T0, Hd).",
                         "AISTATS 2025 PDF p. 4, Sec. 4, Lemma 2; proof App. A.1, pp. 12-13 (arXiv:2411.10115)",
                         SOURCE)
LEMMA2_READING = ("rank of the T0 stacked attention outputs A(t) = [A^1(t); ...; A^H(t)] in R^{Hd} of Eq. (1), for SOME "
                  "embeddings, positions and attention weights (an existence statement per dataset)")

PROP3_RATE = declare(Finding(
    key="dana_prop3.rate", paper="dana2025", statement="dana_prop3", kind="wrong constant", claim="rate",
    title="Prop. 3's rate d_KL <= (N-1) e^{-lambda} is wrong for N >= 5: the exponent is lambda (1 - cos 2pi/N)",
    printed=Printed("d_KL(pi, f_lambda) = E_t log(1 + sum_{j != g} e^{-lambda (1 - cos(2 pi (j - g)/N))}) -> 0 ... "
                    "<= (N - 1) e^{-lambda}", "AISTATS 2025 PDF p. 17, App. A.5 (proof of Prop. 3, p. 3); the rate as "
                    "transcribed in DANA2025.md, the sentence around it not retrieved", SOURCE),
    reading="with W_j = (cos 2pi j/N, sin 2pi j/N), E(t) = W_g(t) and f_lambda = lambda W E: d_KL(pi, f_lambda) <= "
            "(N - 1) e^{-lambda} for every lambda",
    strongest="an order as lambda -> oo, d_KL = O(e^{-lambda}): also false for N >= 5 (the two nearest tokens alone give "
              "~2 e^{-lambda (1 - cos 2pi/N)} and 1 - cos 2pi/N < 1); only a rescaled lambda' = lambda (1 - cos 2pi/N) "
              "makes it right, and the printed lambda is the scale of f_lambda. Prop. 3 itself (d_KL -> 0) is unaffected",
    survives=True,
    family="every N >= 5 and lambda large enough that log(1 + 2 e^{-lambda (1 - cos 2pi/N)}) > (N-1) e^{-lambda}; "
           "certified at N = 5, lambda = 20 (1.99e-6 > 8.2e-9); N = 3, 4 lie outside (1 - cos 2pi/N >= 1)",
    depends_on=("N", "lambda"),
    witnesses=(
        Witness("counterexample", "dana_prop3", control="neg_prop3_rate",
                what="N = 5, lambda = 20: d_KL in balls above (N-1) e^{-lambda}"),
        Witness("confirmation", "dana_prop3", options=_opts(N=4, S=1, d=2, H=1, T0=4, conditionals="table-distinct",
                                                            seed=0),
                kwargs=(("rate", True), ("lam", 20.0)), expect="verified",
                what="N = 4 (just outside the family: 1 - cos 2pi/4 = 1): the printed rate holds"),
    ),
    repair="d_KL(pi, f_lambda) <= log(1 + (N-1) e^{-lambda m}) <= (N-1) e^{-lambda m}, m = 1 - cos 2pi/N (the margin "
           "min_{j != g} 1 - W_j.W_g): each term of the printed sum is at most e^{-lambda m}",
    repair_status="proved",
    reason="the exponent of the slowest term is lambda (1 - cos 2pi/N), below lambda once N >= 5",
))

LEMMA2_WIDE = declare(Finding(
    key="dana_lemma2.d_at_least_N_plus_S_minus_1", paper="dana2025", statement="dana_lemma2",
    kind="missing hypothesis",
    title="Lemma 2 is false for every e, pos, W_QK whenever the data's rank cap min(d, R) + (H-1) min(d, D) is below "
          "min(T0, Hd): T0 and the tokens the data use (R, D) decide, not N",
    printed=LEMMA2_PRINTED, reading=LEMMA2_READING,
    strongest="Lemma 2 for data that use every token at every position with T0 large, d <= N+S-2 (as in the paper's "
              "experiments: N = 50, S = 2, d = 10): not refuted there, and checked instance by instance (certified "
              "minors); the finding survives as a missing hypothesis, since the lemma is stated for any T0 sequences",
    survives=True,
    family="S >= 2 and min( min(u,d) + H min(d,D), min(d,R) + (H-1) min(d,D), H min(d, N+S-1) ) < min(T0, Hd): every "
           "choice gives rank <= that cap. R: formal rank of the tokens x(t,s) the data use (<= N+S-1), D: that of the "
           "differences x(t,s) - x(t,S) (<= N+S-2), u: distinct last tokens. On all N^S sequences (R = N+S-1, "
           "D = N+S-2): H >= 2, d >= N+S-1 and N^S > N+S-1 + (H-1)(N+S-2), or H = 1, d > N+S-1 and N^S > N+S-1 "
           "(N = 2, S = 2, H = 2, d = 3 lies outside: cap 5 >= T0 = 4). Smallest T0: H = 1: N = 2, S = 2, d = 4, all 4 bigrams (3 < 4); "
           "H >= 2: N = 3, S = 2, d = 4, H = 2, T0 = 8 (7 < 8). Also inside, with d <= N+S-2: N = 10 but 10 bigrams "
           "over 4 tokens, d = 5, H = 2 (R = 5, D = 4: 9 < 10)",
    depends_on=("S", "H", "d", "T0", "R (tokens used)", "D (differences used)", "u (distinct last tokens)"),
    witnesses=(
        Witness("counterexample", "dana_lemma2", options=_opts(N=2, S=2, d=4, H=1, T0=4, dataset="all", seed=0),
                what="the smallest, H = 1: all 4 bigrams over N = 2, d = 4 > N+S-1 = 3: rank <= 3 < 4"),
        Witness("counterexample", "dana_lemma2", options=_opts(N=3, S=2, d=4, H=2, T0=8, seed=0),
                what="the smallest with H >= 2: N = 3, d = 4 = N+S-1, T0 = 8 bigrams: rank <= 4 + 3 = 7 < 8"),
        Witness("counterexample", "dana_lemma2", control="neg_lemma2_few_tokens",
                what="d = 5 <= N+S-2 = 10 but only 4 tokens used: R = 5, D = 4, rank <= 9 < 10"),
        Witness("counterexample", "dana_lemma2", control="Lemma 2 at d = N + S - 1 with H >= 2",
                what="all 16 bigrams over N = 4, d = 5, H = 3: rank <= 5 + 2*4 = 13 < 15"),
        Witness("counterexample", "dana_lemma2", control="neg_lemma2_smallN",
                what="H = 1, all 8 sequences over N = 2, S = 3, d = 6 > N+S-1 = 4: rank <= 4 < 6"),
        Witness("confirmation", "dana_lemma2", options=_opts(N=4, S=2, d=5, H=2, T0=9, seed=0), expect="verified",
                what="just outside (cap 9 = T0): N = 4, d = 5, H = 2, T0 = 9: a certified nonsingular 9 x 9 minor"),
        Witness("confirmation", "dana_lemma2", options=_opts(N=3, S=2, d=4, H=2, T0=7, seed=0), expect="verified",
                what="just outside (cap 7 = T0): N = 3, d = 4, H = 2, T0 = 7: a certified nonsingular 7 x 7 minor"),
    ),
    repair="conjectured: Lemma 2 holds when S >= 2 and the data's cap is at least min(T0, Hd) (for instance d <= D, "
           "the formal rank of the differences the data use). Tested: the dana_lemma2 checker certifies a nonsingular "
           "minor of order min(T0, Hd) on every report instance outside the family and on the instances just outside "
           "it above; such evidence can only come out inconclusive, never refute. Not proved: proof step (c) fails for "
           "S < d (finding dana_lemma2.hyperplane_step). The earlier repair 'd <= N+S-2' is false as stated (the "
           "few-tokens witness lies inside it)",
    repair_status="conjectured",
    reason="heads differ only within the span of the differences x(t,s) - x(t,S), of formal rank D <= N+S-2; the "
           "tokens themselves span R <= N+S-1 (DANA2025.md L1 states the looser cap H min(d, N+S-1))",
    covers=_lemma2_rank_cap,
    notes=("The family was stated as 'H >= 2 and d >= N+S-1' (N alone): instances inside it verify when T0 is small "
           "(N = 4, S = 2, d = 5, H = 2, T0 = 9), and instances outside it are refuted when the data use few tokens; "
           "it is now the certificate's own condition, in T0, R, D and u.",),
))

LEMMA2_S1 = declare(Finding(
    key="dana_lemma2.single_token", paper="dana2025", statement="dana_lemma2", kind="boundary case",
    title="Lemma 2 is false for S = 1: every head outputs x(t,1)",
    printed=LEMMA2_PRINTED, reading=LEMMA2_READING,
    strongest="S >= 2 implicit (a next-token context of one token has nothing to attend to; the proof's multiplicities "
              "n in [2, d+1] need two positions): under it the finding does not apply",
    survives=False,
    family="S = 1 with min(d, number of tokens used) < min(T0, Hd) (e.g. H >= 2 and T0 > d): softmax over one token is "
           "1, every head outputs x(t,1); smallest printed example N = 5, d = 2, H = 2: rank <= 2 < 4",
    depends_on=("S", "d", "H", "T0", "tokens used"),
    witnesses=(Witness("counterexample", "dana_lemma2", control="neg_lemma2_S1",
                       what="N = 5, S = 1, d = 2, H = 2: rank <= 2 < 4 (sympy: softmax of one score is 1)"),
               Witness("counterexample", "dana_lemma2", options=_opts(N=5, S=1, d=2, H=2, T0=5, seed=0),
                       what="the same from the command line"),
               Witness("confirmation", "dana_lemma2", options=_opts(N=5, S=1, d=2, H=2, T0=2, seed=0),
                       expect="verified", what="just outside: T0 = 2 = d sequences, rank 2 reached")),
    repair="S >= 2 (the proof's multiplicities n in [2, d+1] need at least two positions)",
    repair_status="proved",
    reason="with one position the attention weights are identically 1",
    covers=_lemma2_single_token,
))

LEMMA2_STEP_C = declare(Finding(
    key="dana_lemma2.hyperplane_step", paper="dana2025", statement="dana_lemma2", kind="proof step false",
    claim="hyperplane",
    title="Lemma 2's proof step (c) is false when S < d: im f lies in a hyperplane for every W",
    printed=Printed("[step (c)] f(W) = (sum_j e^{x_S^T W x_j} x_j / sum_j e^{x_S^T W x_j})_t in R^{d x T0}; it is "
                    "sufficient that im f lies in no hyperplane [and then each head adds d to the rank]",
                    "AISTATS 2025 PDF p. 12, App. A.1, proof of Lemma 2 (before eq. (6); arXiv:2411.10115v1 App. A.1: "
                    "'It is in fact sufficient to have the image of [...] not contained in any hyperplane')", SOURCE),
    reading="for generic embeddings, the image {f(W) : W in R^{d x d}} spans R^{d x T0}",
    strongest="the step meant for S >= d: then it misses the paper's own experiments (S = 2 < d = 10); the lemma's "
              "conclusion there is checked instance by instance instead (certified minors), not by this step",
    survives=True,
    family="every instance with S < d (some sequence spans fewer than d dimensions): a v_t orthogonal to its tokens "
           "gives v_t^T f_t(W) = 0 for EVERY W; for S >= d the 'no hyperplane' claim is asserted, not shown, and "
           "'no hyperplane' would not give the rank anyway (L3: rank-one matrices span R^{2x2})",
    depends_on=("S", "d"),
    witnesses=(Witness("counterexample", "dana_lemma2", control="neg_hyperplane",
                       what="N = 5, S = 2 < d = 4: an exact v_t orthogonal to x(t,1), x(t,2)"),),
    repair="none proved; the lemma's conclusion is certified on each instance by a nonsingular minor",
    reason="sum_s a_s v_t^T x(t,s) = 0 whatever the attention weights a_s",
))

THM2 = declare(Finding(
    key="dana_thm2.c_below_half", paper="dana2025", statement="dana_thm2", kind="missing hypothesis",
    title="Thm. 2 needs C = sqrt(32 log(N+1)/d) < 1/2, which the paper does not state",
    printed=Printed(
        "There is W with ||W W^T - I||_inf <= C = sqrt(32 log(N+1)/d) ... such that d_KL(pi, L) <= "
        "E_t[(1 - pi(g|t)) (1 + 2C + C d_TV(pi~_t, pi_unif)) / (1 - 2C) log((N - 1)/(e^{-H(pi_t)} - 1))]",
        "AISTATS 2025 PDF p. 7, Sec. 5, Thm. 2; proof App. A.3, pp. 14-15 (arXiv:2411.10115)", SOURCE),
    reading="W read on the N x N Gram of its rows; H(pi) = sum pi log pi <= 0 (the sign the limits on p. 7 need); "
            "the bound on d_KL(pi, L), the infimum over the linear class L(N, S, d)",
    strongest="the bound for d large enough (the proof divides by 1 - 2C, so an author would hold C < 1/2): then it is "
              "the repair below; as printed, with no condition on d, every d <= 128 ln(N+1) refutes it",
    survives=True,
    family="every N >= 2 and d <= 128 ln(N+1) (C >= 1/2), with any prior having one conditional neither "
           "uniform nor deterministic: 1 - 2C <= 0 makes the right-hand side negative < 0 <= d_KL(pi, L); "
           "smallest printed example N = 3, d = 2, pi = (1/2, 1/4, 1/4): C = 4.71, RHS = -0.0555",
    depends_on=("N", "d", "the conditionals (not uniform, not deterministic)"),
    witnesses=(
        Witness("counterexample", "dana_thm2", control="neg_thm2_C",
                what="N = 3, d = 2, pi = (1/2, 1/4, 1/4): the RHS ball lies below 0 (arb)"),
        Witness("counterexample", "dana_thm2", options=_opts(N=3, S=2, d=2, H=1, conditionals="positive", seed=0),
                what="a drawn instance of the family (positive dyadic conditionals)"),
        Witness("repair", "dana_thm2_small_c", options=_opts(N=900, S=2, d=880, d_h=1, H=1, T0=4,
                                                             conditionals="peaked", seed=0),
                expect="verified", what="N = 900, d = 880 (C = 0.497 < 1/2, d < N - 1), peaked rows (mass 1 - 2^-10 "
                                        "on the mode): RHS ~ 4.2 < d_KL(pi, 0) ~ 6.8 <= log N, so the zero encoder "
                                        "fails the bound; the construction meets it (d_KL(pi, f) ~ 0.011), in balls"),
        Witness("repair control", "dana_thm2_small_c", control="the construction without lambda",
                what="the same instance with E(t) = 0 (a wrong construction): d_KL(pi, 0) > RHS, certified"),
        Witness("tightness", "dana_thm2_small_c", control="hypothesis weakened to C < 1",
                what="any C > 1/2 makes the RHS negative: the threshold 1/2 cannot be raised"),
    ),
    repair="Thm. 2 under C < 1/2 (d > 128 ln(N+1)), via the proof's construction: d_KL(pi, L) <= d_KL(pi, f) <= RHS. "
           "It says something only where also d < N - 1, i.e. N >= 869 (for N <= 868, C < 1/2 forces d >= N - 1, "
           "where d_KL(pi, L) = 0 by Prop. 2(a)), and where RHS < d_KL(pi, 0) (peaked rows)",
    repair_id="dana_thm2_small_c",
    repair_status="verified",
    reason="the proof's step lambda <= log(...)/(1 - 2C) divides by 1 - 2C; for C >= 1/2 the right-hand side "
           "is negative",
    covers=_c_at_least_half,
    notes=("Every default instance of dana_thm2 has d <= 4 (C between 3.8 and 5.6): one fact, not one refutation per "
           "instance.",
           "What the repair's evidence covers: the construction-level bound d_KL(pi, f) <= RHS on instances where the "
           "zero encoder fails it. The L-level bound d_KL(pi, L) <= RHS is also implied by d_KL(pi, L) = 0 wherever the "
           "centered log-targets span at most d dimensions (T0 <= d: every report instance); it can say more only "
           "with T0 >= d + 2: `mha-verify check dana_thm2_small_c --N 900 --d 880 --T0 882 --conditionals peaked` "
           "is verified (d_KL(pi, f) <= 0.0109 <= RHS = 4.235 < d_KL(pi, 0) = 6.788; 177 s on a loaded 2-core "
           "machine, too slow for the report; the rank of its log-targets was not certified).",),
))

THM2_T4 = declare(Finding(
    key="dana_thm2.t4", paper="dana2025", statement="dana_thm2", kind="proof step false", claim="T4",
    title="Thm. 2's proof step 'f(t)_j <= C' (T4) drops the factor lambda(t); false also where C < 1/2",
    printed=Printed("f(t)_j <= C [for j != g(t), with f(t)_j = lambda(t) W_j^T W_g(t)]",
                    "AISTATS 2025 PDF pp. 14-15, App. A.3, proof of Thm. 2 (as transcribed in DANA2025.md, T4)", SOURCE),
    reading="for the proof's W (||W W^T - I||_inf <= C) and E(t) = lambda(t) W_g: lambda(t) W_j^T W_g <= C",
    strongest="a typo for W_j^T W_g <= C (the Gram bound, true), with lambda carried into the next step: under it the "
              "step holds; whether the proof's next steps carry lambda was not checked",
    survives=False,
    family="every instance where lambda(t) max_{j != g} W_j^T W_g > C, i.e. peaked rows (large lambda) with any W "
           "meeting the Gram bound and some W_j^T W_g > C / lambda; certified at C >= 1/2 (N = 5, d = 4) and at "
           "C < 1/2 (N = 900, d = 880, mode mass 1 - 2^-10: lambda > 11, f(t)_j > 1.5 > C = 0.497)",
    depends_on=("N", "d", "the mode's mass (lambda)"),
    witnesses=(
        Witness("counterexample", "dana_thm2", control="T4: the proof's",
                what="N = 5, d = 4 (+-1/2 signs), mode mass 1 - 2^-10: lambda(t) W_j^T W_g > C"),
        Witness("counterexample", "dana_thm2", options=_opts(N=900, S=2, d=880, H=1, T0=4, conditionals="peaked",
                                                             seed=0),
                kwargs=(("claim", "T4"),), what="inside the repair's regime C < 1/2: N = 900, d = 880, peaked rows"),
    ),
    repair="none needed if a typo (see the strongest reading); otherwise the bound must carry lambda(t) C",
    reason="f(t)_j = lambda(t) W_j^T W_g, and lambda(t) grows without bound as pi_t concentrates",
))

THM2_T5 = declare(Finding(
    key="dana_thm2.t5", paper="dana2025", statement="dana_thm2", kind="proof step false", claim="jensen",
    title="Thm. 2's 'simpler bound' step (T5) applies Jensen the wrong way",
    printed=Printed("[the simpler bound] E_t[(1 - pi(g|t)) b(H(pi_t))] <= E_t[1 - pi(g|t)] b(E_t H(pi_t)), "
                    "b(H) = log((N - 1)/(e^{-H} - 1))", "AISTATS 2025 PDF p. 7 (after Thm. 2) and p. 15 (App. A.3), "
                    "as transcribed in DANA2025.md (T5)", SOURCE),
    reading="the step from the bound of Thm. 2 to its simpler form, for every prior",
    strongest="an approximation offered for intuition: the step is still refuted, and the simpler bound itself is not "
              "tested (refuting it needs d_KL(pi, L) above it: impractical)",
    survives=True,
    family="any prior with 1 - pi(g|t) equal across sequences and entropies not all equal: b is strictly convex and "
           "increasing, so E[b(H)] > b(E H); certified at N = 3 with (1/2, 1/4, 1/4) and (1/2, 3/8, 1/8)",
    depends_on=("the conditionals' entropies", "1 - pi(g|t)"),
    witnesses=(Witness("counterexample", "dana_thm2", control="T5: the simpler bound",
                       what="pi_g = 1/2 for both sequences, entropies differ: both sides in balls"),),
    repair="none proved; use the bound of Thm. 2 itself (under C < 1/2)",
    reason="Jensen's inequality for a convex b gives E[b(H)] >= b(E H), the opposite direction",
))

# -- negative controls that are deliberately wrong variants ---------------------------------------------------
for _sid, _control, _why in (
    ("dana_prop1", "neg_prop1_bias", "an unembedding bias the paper's model does not have (ours)"),
    ("dana_prop2", "(a) without d >= N - 1", "Prop. 2(a) without its hypothesis (ours)"),
    ("dana_prop3", "neg_prop3_d1", "Prop. 3 without its hypothesis d >= 2 (ours)"),
    ("dana_thm2_small_c", "hypothesis weakened to C < 1", "our repair with its hypothesis weakened (ours)"),
    ("dana_thm2_small_c", "the construction without lambda", "our repair's construction without its scaling (ours)"),
    ("dana_thm2_small_c", "C >= 1/2", "our repair outside its hypothesis (ours)"),
):
    variant(_sid, _control, _why)
