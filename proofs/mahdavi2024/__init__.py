"""Mahdavi, Liao, Thrampoulidis, "Memorization Capacity of Multi-Head
Attention in Transformers" (ICLR 2024, arXiv:2306.02010v3): one module per
statement (ids as in STATEMENTS.md), plus the shared construction of
Proposition 1's induction (:mod:`.proposition1_construction`).
"""
from verifier.statements.registry import register_paper

# id: (paper reference, summary, depends on)
CATALOGUE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "definition1": ("Def. 1", "Kruskal rank: the largest k such that every k-subset is independent", ()),
    "definition2": ("Def. 2", "General position: Kruskal rank min(#vectors, d)", ("definition1",)),
    "assumption1": ("Assumption 1", "the queries have Kruskal rank >= n", ("definition1",)),
    "assumption2": ("Assumption 2", "every context E^(t) has rank n", ()),
    "assumption3": ("Assumption 3", "ebar = e + mean of context tokens has Kruskal rank >= n", ("definition1",)),
    "theorem1": ("Thm. 1", "H heads memorize H(r-1)+1 arbitrary labels exactly", ("proposition1", "step2")),
    "proposition1": ("Prop. 1, App. B", "key/query weights with rank(Z) >= min(H(r-1)+1, T)",
                     ("claim1", "claim2", "lemma1", "appendixB2")),
    "step2": ("Sec. 4.1 Step 2", "full-row-rank Z: the readout solves Z M = Y", ()),
    "remark1": ("Remark 1", "queries of Kruskal rank k < n: r = min(n, k, d_h)", ("proposition1",)),
    "appendixC": ("App. C", "skip connection: memorize shifted labels", ("theorem1",)),
    "claim1": ("Claim 1, App. B.1", "one head fits r examples' softmax targets exactly", ()),
    "lemma3": ("Lemma 3, App. D", "rank-one W' = v w^T: kills J's queries (20), distinct entries off J (21)", ()),
    "lemma4": ("Lemma 4, App. D", "softmax saturation with explicit c0(eps)", ()),
    "claim2": ("Claim 2, App. B.1", "W* + c W' fits r-1 examples, keeps the rest within eps of one-hot",
               ("claim1", "lemma3", "lemma4")),
    "lemma1": ("Lemma 1, App. D", "rank [[A, B], [0, C]] >= rank A + rank C", ()),
    "lemma5": ("Lemma 5, App. D", "Weyl: ||A - B||_2 < sigma_min^+(A) => rank B >= rank A", ()),
    "appendixB2": ("App. B.2", "a finite c suffices: explicit perturbation bound < sigma_min^+", ("lemma4", "lemma5")),
    "proposition2": ("Prop. 2, App. E", "shared contexts: rank(Z) <= H(n-1)+1 for any weights", ()),
    "proposition5": ("Prop. 5, App. I", "tokens summing to c: rank(Z) <= H(d-1)+1 for any weights", ()),
    "proposition3": ("Prop. 3, App. F", "a ReLU net with m units cannot memorize T > m(d+2)+1", ()),
    "remark2": ("Remark 2", "MHA's Omega(Hn) vs ReLU's O(md) at equal parameter counts", ("proposition3",)),
    "proposition4": ("Prop. 4, App. G", "trivial self-attention with skip maps Assumptions 2-3 to 1-2", ("lemma2",)),
    "lemma2": ("Lemma 2, App. D", "x_i + xbar independent; det(I + (c/n) 1 1^T) = 1 + c", ()),
    "weights_rank": ("Eqs. 7-8, Prop. 1 (given weights)", "given W_Q, W_K: certified rank(Z), the examples on which "
                     "refitting only the readout fits ANY labels, and the caps for any weights",
                     ("proposition2", "proposition5")),
    "weights_memorize": ("Eqs. 1-6 (given weights)", "given weights: certified max |yhat - y| against a stated "
                         "tolerance", ()),
    "weights_classify": ("Eqs. 1-6 (given weights)", "given weights: examples whose argmax label is certified "
                         "correct, certified wrong, undecided", ()),
}

PAPER = register_paper(
    "mahdavi2024",
    title="Memorization Capacity of Multi-Head Attention in Transformers",
    citation="Mahdavi, Liao, Thrampoulidis, ICLR 2024, arXiv:2306.02010v3",
    catalogue=CATALOGUE,
)
