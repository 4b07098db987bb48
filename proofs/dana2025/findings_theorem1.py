"""The findings about Dana et al. (AISTATS 2025): Thm. 1 (its capacity
reading and the proof's steps), footnote 8, Cor. 1, Contribution 1 and
Cor. 2.  Quotations and pages as in :mod:`.findings` (the AISTATS PDF,
arXiv:2411.10115); "V2" is the authors' earlier PDF in the same repository.
"""
from __future__ import annotations

from verifier.statements.findings import Finding, Printed, Witness, declare, instance_of, variant

from .findings import SOURCE, _opts


def _capacity_floor(o: dict, inst) -> bool:
    """H d_h < d (or H = 0) and a certified floor above d_KL(pi, L) over every AoT of these sizes."""
    from verifier.arith.compare import Decision

    from .capacity_bounds import capacity_impossibility

    inst = instance_of("dana_thm1_eps0", o, inst)
    if not (inst.H == 0 or inst.H * inst.d_h < inst.d):
        return False
    return capacity_impossibility(inst)["decision"] is Decision.FALSE


def _impossible_because(statement: str, start: str, d: int | None = None):
    """The family of an association table no AoT of the sizes memorizes, for the reason starting with
    ``start``, inside the statement's hypotheses (T0 <= H d_h + d, d_h <= d, and d = ``d`` when given)."""
    def covers(o: dict, inst) -> bool:
        from .associations import impossible_table

        inst = instance_of(statement, o, inst)
        if not (inst.is_table and inst.T0 <= inst.H * inst.d_h + inst.d and inst.d_h <= inst.d
                and (d is None or inst.d == d)):
            return False
        imp = impossible_table(inst)
        return imp is not None and imp["why"].startswith(start)
    return covers


def _accuracy_above_one(o: dict, inst) -> bool:
    inst = instance_of("dana_corollary2", o, inst)
    return inst.is_table and inst.uniform_prior and inst.H * inst.d_h + inst.d > inst.T0


THM1_PRINTED = Printed("Let eps >= 0, gamma > 0, and assume Assumption 2. There exist f_{W,E} and an AoT with parameters "
                       "(d, d_h, H) such that d_h H + d >= T_eps and (4) d_KL(pi, T) <= d_KL(pi, L) + C eps ||W E||_2 "
                       "+ gamma.", "AISTATS 2025 PDF p. 3, Sec. 3, Thm. 1, eq. (4); proof Sec. 4.1 p. 4 and App. "
                       "A.1-A.2 pp. 12-13 (arXiv:2411.10115)", SOURCE)

THM1_CAPACITY = declare(Finding(
    key="dana_thm1_eps0.capacity_reading", paper="dana2025", statement="dana_thm1_eps0", kind="false as intended",
    title="Thm. 1 read as a capacity statement (H fixed by T0 = H d_h + d) is false on shared-last-token data",
    printed=THM1_PRINTED,
    reading="(capacity, as the proof on p. 13 and Cor. 1 use it) for GIVEN (d, d_h, H) and every pi with "
            "T0 <= H d_h + d: refuted with eps = 0",
    strongest="(literal) H is chosen with the AoT, any H with d_h H + d >= T_eps: not refuted, but then the theorem says "
              "nothing about capacity, which is how the paper uses it (H = ceil((T0 - d)/d_h) on p. 13; Cor. 1; the "
              "scaling laws of Sec. 6)",
    survives=False,
    family="H d_h < d (or H = 0), a group of at least min(H d_h, d) + 2 sequences sharing their last token whose "
           "centered log-conditionals stay a certified kappa0 away from every affine min(H d_h, d)-space, and "
           "d_KL(pi, L) = 0 (positive conditionals with d >= N - 1; H = 0 also with a table and d >= 2): the AoT's "
           "logits per last "
           "token lie in such a space; smallest printed example N = 3, S = 2, d = 2, d_h = 1, H = 1, support "
           "{(1,3), (2,3), (3,3)}: d_KL >= kappa0 > 0",
    depends_on=("H d_h against d", "the last-token groups and their sizes", "N against d (d_KL(pi, L) = 0)",
                "the conditionals (kappa0)"),
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
    repair="none proved or conjectured: with H d_h >= d on shared-last-token data the rank route fails too, and no "
           "counterexample is known (DANA2025.md); dana_thm1_eps0 certifies the exact route instance by instance where "
           "rank M = T0 (28 of the 30 report instances; 2 are 'route impossible', inconclusive)",
    reason="the proof and Cor. 1 fix H by T0 = H d_h + d; with one last token and H d_h < d the AoT's outputs "
           "span too little",
    covers=_capacity_floor,
    notes=("The report's 'route impossible' verdicts (D1) are inconclusive and refute nothing.",),
))

THM1_STEP_I = declare(Finding(
    key="dana_thm1_eps0.skip_head", paper="dana2025", statement="dana_thm1_eps0", kind="proof step false",
    claim="skip_head",
    title="Thm. 1's proof step (i) in the earlier version (V2): 'head 0 tends to x(t,S)' fails without pos_S dominating",
    printed=Printed("[step (i)] the skip becomes a head 0: W_QK^0 = lambda I_d, W_O^0 W_V^0 = W_OV, whose attention "
                    "tends to x(t,S) as lambda -> oo", "the authors' earlier PDF 'V2' (17 pp., same repository), "
                    "App. A.2; the AISTATS PDF (p. 13) adds that the norm of pos_S is much larger", SOURCE),
    reading="for any embeddings, softmax_s(lambda x_S^T x_s) -> one-hot at s = S",
    strongest="the AISTATS version: pos_S much larger than the other vectors, so x_S^T x_S > x_S^T x_s for s != S; "
              "under it the step holds (||A^0 - x_S|| <= sum_{s != S} e^{-lambda g} ||x_s - x_S||)",
    survives=False,
    family="every sequence with some s != S and x_S^T x_s >= x_S^T x_S (e.g. x_S = (1, 0), x_1 = (2, 0)): head 0 "
           "tends to another token, or to an average",
    depends_on=("the embeddings (x_S^T x_s against ||x_S||^2)",),
    witnesses=(Witness("counterexample", "dana_thm1_eps0", control="neg_skiphead",
                       what="x_S = (1, 0), x_1 = (2, 0): head 0 tends to x_1"),),
    repair="the AISTATS version's hypothesis: x_S^T x_S > max_{s != S} x_S^T x_s (pos_S dominates)",
    repair_status="proved",
    reason="softmax(lambda x_S^T x_s) concentrates on the largest inner product with x_S, not on x_S itself",
    notes=("A finding about an earlier public version, kept because the AISTATS text repairs it without saying so.",),
))

THM1_STEP_III = declare(Finding(
    key="dana_thm1_eps0.wv_rank", paper="dana2025", statement="dana_thm1_eps0", kind="proof step false",
    claim="wv_rank",
    title="Thm. 1's proof step (iii) 'after multiplying by W_V with full rank, the rank stays T0' is false when d_h < d",
    printed=Printed("after multiplying by W_V with full rank, the rank stays T0", "AISTATS 2025 PDF p. 13, App. A.2 "
                    "(proof of Thm. 1), as transcribed in DANA2025.md (D4)", SOURCE),
    reading="for EVERY full-rank W_V^h in R^{d_h x d}, rank [x'(t,S); V^1 A'^1(t); ...] = T0 when rank A' = T0",
    strongest="SOME full-rank W_V keeps the rank (a generic choice): not refuted; the report's route certifies rank "
              "M = T0 with random V^h instance by instance",
    survives=False,
    family="T0 > d and d_h < d: a c != 0 with sum_t c_t x(t,S) = 0 and full-rank W_V^h with sum_t c_t A^h(t) in "
           "ker W_V^h give M c = 0 although rank A' = T0; for d_h = d, W_V is invertible and the step holds",
    depends_on=("T0 against d", "d_h against d"),
    witnesses=(Witness("counterexample", "dana_thm1_eps0", control="neg_wv_rank",
                       what="N = 5, S = 2, d = 3, d_h = 2, H = 2: full-rank W_V^h with M c = 0 (exact)"),),
    repair="choose W_V generically (rank M = T0 is then certified per instance, as the report does)",
    repair_status="conjectured",
    reason="a full-rank d_h x d matrix has a kernel when d_h < d, and the kernel can hold a combination of the A^h(t)",
))

THM1_STEP_IV = declare(Finding(
    key="dana_thm1_eps0.det_G", paper="dana2025", statement="dana_thm1_eps0", kind="proof step false",
    claim="det_G",
    title="Thm. 1's proof step (iv) needs the skip block G of the solution invertible; at T0 = H d_h + d it can be 0",
    printed=Printed("[step (iv)] W_U = W; solve E = W_O W_V A' for W_O [with head 0 = the skip: e' = W_OV^{-1} e]",
                    "AISTATS 2025 PDF p. 4 (Sec. 4.1) and p. 13 (App. A.2), as transcribed in DANA2025.md (D6)",
                    SOURCE),
    reading="for every targets E, the solved W_O's skip block G = W_OV is invertible, so the embeddings can absorb it",
    strongest="for generic targets E (det G != 0 is an open condition), or after perturbing E inside its cones "
              "(associations) or at an O(delta) KL cost put into gamma (distributions): not refuted",
    survives=False,
    family="T0 = H d_h + d (the solution is unique) and targets E of rank < d: G = 0 or singular",
    depends_on=("T0 against H d_h + d", "rank E against d"),
    witnesses=(Witness("counterexample", "dana_thm1_eps0", control="D6: step (iv)",
                       what="N = 5, S = 2, d = 3, H = 2, E of rank 1: det G = 0 (balls)"),),
    repair="perturb E (DANA2025.md D6); dana_thm1_eps0 certifies det G != 0 on each instance",
    repair_status="conjectured",
    reason="at T0 = H d_h + d the linear system has one solution, and E = 0 gives G = 0",
))

FOOTNOTE8 = declare(Finding(
    key="dana_thm1_eps.footnote8", paper="dana2025", statement="dana_thm1_eps", kind="proof step false",
    claim="footnote8",
    title="Footnote 8: 'P1 V P1^T invertible since V is orthogonal' is false",
    printed=Printed("P1 V P1^T invertible since V is orthogonal", "AISTATS 2025 PDF p. 14, App. A.3, footnote 8 "
                    "(with eq. (14): W_O = E P1^T (P1 V P1^T)^{-1} I_Sigma^{-1} U^T)", SOURCE),
    reading="every orthogonal V makes its leading block P1 V P1^T invertible",
    strongest="the block is invertible for the V the proof builds (generically): not refuted; dana_thm1_eps checks it "
              "on each instance, and the constant C of eq. (4) is finite only where it is",
    survives=False,
    family="every orthogonal V with a singular leading block, e.g. V = [[0, 1], [1, 0]], P1 = [1 0]: P1 V P1^T = 0",
    depends_on=("V",),
    witnesses=(Witness("counterexample", "dana_thm1_eps", control="neg_p1vp1",
                       what="V = [[0, 1], [1, 0]], P1 = [1 0]: P1 V P1^T = 0 (exact)"),),
    repair="require the block invertible (a hypothesis on the construction, checked per instance)",
    repair_status="conjectured",
    reason="orthogonality of V says nothing about its leading principal blocks",
))

COR1_MAXIMAL = declare(Finding(
    key="dana_corollary1.maximal", paper="dana2025", statement="dana_corollary1", kind="false as worded",
    claim="upper",
    title="Cor. 1 called 'an upper bound' and H d_h + d 'maximal': one AoT with T0 = 3 memorizes 9 associations",
    printed=Printed("[Cor. 1 is] an upper bound ... [H d_h + d is] maximal", "AISTATS 2025 PDF Sec. 3 (p. 3, on "
                    "Cor. 1) and Sec. 7 (p. 8), as transcribed in DANA2025.md (upper-bound reading)", SOURCE),
    reading="no AoT with (d, d_h, H) memorizes more than H d_h + d associations",
    strongest="H d_h + d is the largest count memorizable for EVERY association table of that size (a worst-case "
              "capacity): not refuted by one table; it would need a table of T0 + 1 associations that no AoT "
              "memorizes, and our numerics found none (N = 3, 4)",
    survives=False,
    family="d = 2, d_h = 1, H = 1 (H d_h + d = 3) and the 9 bigrams over N = 3 with the certified table; numerics "
           "(not certified) memorized every sampled table of 4, 6, 8 and 9 sequences",
    depends_on=("d", "d_h", "H", "the table"),
    witnesses=(Witness("counterexample", "dana_corollary1", control="upper-bound reading",
                       what="float64 weights with every margin certified positive in balls: 9 > 3"),),
    repair="call H d_h + d a guaranteed count (a lower bound on capacity), not an upper bound",
    repair_status="proved",
    reason="Cor. 1 is an existence statement: nothing in the paper bounds what an AoT can memorize from above",
))

COR1_H0 = declare(Finding(
    key="dana_corollary1.no_heads", paper="dana2025", statement="dana_corollary1", kind="boundary case",
    title="Cor. 1 at H = 0: two sequences with one last token and different targets get identical logits",
    printed=Printed("Under Assumption 1, some AoT with d = 2, H heads and head dimension d_h memorizes at least "
                    "T0 = H d_h + 2 associations", "AISTATS 2025 PDF p. 4, Sec. 4, Cor. 1 (arXiv:2411.10115)",
                    SOURCE),
    reading="every H >= 0 (the statement does not exclude H = 0; the proof of Thm. 1 itself takes H = 0 when T0 <= d, "
            "p. 13)",
    strongest="H >= 1 (an attention-only Transformer has heads): the finding does not apply",
    survives=False,
    family="d = 2, H = 0 and two sequences sharing their last token with different targets (T0 <= H d_h + d = 2)",
    depends_on=("H", "the last tokens", "the targets"),
    witnesses=(Witness("counterexample", "dana_corollary1", control="neg_cor1_H0",
                       what="N = 3, sequences (1,2), (2,2) with targets 1, 2: identical logits (exact)"),),
    repair="H >= 1, or distinct last tokens when H = 0",
    repair_status="proved",
    reason="with no head T(t) = W_U (e(t_S) + pos_S) depends on the last token only",
    covers=_impossible_because("dana_corollary1", "H = 0", d=2),
    notes=("The same mechanism (identical logits per last token) is part of the family of "
           "dana_thm1_eps0.capacity_reading, for distributions.",),
))

CONTRIB1_D1 = declare(Finding(
    key="dana_contrib1.d_equals_1", paper="dana2025", statement="dana_contrib1", kind="boundary case",
    title="Contribution 1 'for general d, H d_h + d associations' is false at d = 1",
    printed=Printed("[Contribution 1] for general d, [an AoT memorizes] H d_h + d associations",
                    "AISTATS 2025 PDF p. 2, Sec. 1 (contributions), as transcribed in DANA2025.md", SOURCE),
    reading="every d >= 1 (with d_h <= d)",
    strongest="d >= 2 (Cor. 1 is stated for d = 2, and the route needs two dimensions for the unembedding circle): "
              "the finding does not apply",
    survives=False,
    family="d = d_h = 1 and a table with at least 3 distinct targets (H >= 2 claims >= 3 associations): for every W_U "
           "at most two tokens are a unique max or min of a scalar logit",
    depends_on=("d", "the number of distinct targets"),
    witnesses=(Witness("counterexample", "dana_contrib1", control="neg_contrib1_d1",
                       what="d = d_h = 1, H = 2, targets {1, 2, 3}: impossible for every W_U (exact ordering)"),),
    repair="d >= 2",
    repair_status="proved",
    reason="with d = 1 the logits are w_j r for a scalar r: only the extreme w_j can be a strict argmax",
    covers=_impossible_because("dana_contrib1", "d = 1"),
))

COR2 = declare(Finding(
    key="dana_corollary2.above_one", paper="dana2025", statement="dana_corollary2", kind="false as worded",
    title="Cor. 2's accuracy bound exceeds 1 when H d_h + d > T0 (11/9 at N = 3; Exp. 6's text prints 1.018)",
    printed=Printed("E_t[Acc] >= 1/N + (1 - 1/N)(H d_h + d)/T0", "AISTATS 2025 PDF p. 5, Sec. 4, Cor. 2; Exp. 6's text "
                    "p. 18 evaluates it to 1.018 (N = 10, T0 = 100, H = 20, d_h = 5, d = 2)", SOURCE),
    reading="for every sizes and T0, under Assumption 1 and a uniform prior, some AoT reaches that expected accuracy",
    strongest="min(phi, 1), which EXP_6.py plots: under it the statement says accuracy 1 when H d_h + d >= T0 (Cor. "
              "1's claim), and the finding does not apply; Exp. 6's d_h = 5 > d = 2 also breaks d_h <= d",
    survives=False,
    family="Assumption 1, uniform prior and H d_h + d > T0: phi > 1 >= any accuracy (exact rationals)",
    depends_on=("H d_h + d against T0", "N"),
    witnesses=(Witness("counterexample", "dana_corollary2", control="neg_cor2_cap",
                       what="N = 3, d = 2, d_h = 1, H = 2, T0 = 3: phi = 11/9 > 1"),
               Witness("counterexample", "dana_corollary2", options=_opts(N=10, S=2, d=2, d_h=5, H=20, T0=100,
                                                                         seed=0),
                       what="Exp. 6's text: N = 10, T0 = 100 bigrams, H = 20, d_h = 5, d = 2: phi = 509/500 = 1.018"),
               Witness("confirmation", "dana_corollary2", options=_opts(N=3, S=2, d=2, d_h=1, H=1, T0=3, seed=0),
                       expect="verified", what="just outside: H d_h + d = T0 = 3, phi = 1, reached")),
    repair="E_t[Acc] >= min(1, 1/N + (1 - 1/N)(H d_h + d)/T0) (the plotted form)",
    repair_status="conjectured",
    reason="the bound grows linearly in H d_h + d without a cap",
    covers=_accuracy_above_one,
))

# -- negative controls that are deliberately wrong variants ---------------------------------------------------
variant("dana_thm1_eps", "(13) with the bound halved", "eq. (13)'s bound halved (a wrong constant of ours)")
