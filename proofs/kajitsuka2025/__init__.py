"""Kajitsuka, Sato, "On the Optimal Memorization Capacity of Transformers"
(ICLR 2025, arXiv:2409.17677), with its two building blocks: Kajitsuka &
Sato ICLR 2024 (arXiv:2307.14023, one rank-1 softmax attention layer is a
contextual mapping) and Vardi, Yehudai & Shamir ICLR 2022 (arXiv:2110.03187,
ReLU networks memorize N separated points with O~(sqrt N) parameters by bit
extraction).

What could be retrieved of these papers is in ../shared/paper/KAJITSUKA2025.md,
every claim labelled retrieved / secondary / not retrieved: the 2025 paper's
abstract, but none of its theorems, constants or constructions; of the 2024
paper the proof skeleton (Lemma 1's hypothesis delta > 2 log n + 3, Lemma 3's
projection, Thm. 1 hardmax negative, Thm. 2) but not Thm. 2's explicit
(r, delta); of Vardi et al. the shape (width 12, depth O~(sqrt N), bit
extraction) but not the construction.  Each checker is therefore a
**reconstruction of the abstract's claim**: the constructions and every
constant in them are ours, named as ours in each module.

Instance options (``--N --S --V --d --C --dh --seed``, ``--data``): N
sequences of length n (``--S``; ``--n`` is the first paper's context size)
over V tokens with integer embeddings in Z^d, labels in [0, C), and N scalar
ids (:mod:`verifier.data.token_sequences`).
"""
from verifier.data.token_sequences import load_token_sequences, make_token_instance, vary_token_options
from verifier.statements.registry import Flag, InstanceOptions, register_paper

# id: (paper reference, summary, depends on)
CATALOGUE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "ks_contextual_mapping": ("ICLR 2024 Thm. 2 (+ Lemmas 1, 3; Thm. 1 hardmax)",
                              "token-wise separated data: one rank-1 softmax attention layer maps positions whose "
                              "tokens or whose contexts' token sets differ to outputs separated by a certified "
                              "margin", ()),
    "ks_ffn_memorization": ("Vardi et al. ICLR 2022 (bit extraction), as used by ICLR 2025",
                            "a ReLU network with O(sqrt(N log N)) parameters memorizes N distinct scalar ids "
                            "exactly (our bit-extraction construction)", ()),
    "ks_ntp_memorization": ("ICLR 2025 abstract (next-token upper bound)",
                            "N sequences of length n are memorized with O~(sqrt N) parameters, little "
                            "influence from n", ("ks_contextual_mapping", "ks_ffn_memorization")),
    "ks_s2s_memorization": ("ICLR 2025 abstract (seq-to-seq upper bound)",
                            "sequence-to-sequence memorization with O~(sqrt(nN)) parameters",
                            ("ks_contextual_mapping", "ks_ffn_memorization")),
    "ks_ntp_lower": ("ICLR 2025 abstract (next-token optimality)",
                     "Omega~(sqrt N) parameters are necessary for next-token memorization", ()),
    "ks_s2s_lower_hardmax": ("ICLR 2025 abstract (seq-to-seq necessity, hardmax)",
                             "Omega~(sqrt(nN)) parameters are necessary for hardmax Transformers", ()),
}

NOT_CHECKABLE = {
    "ks_ntp_lower": "a lower bound over ALL networks and all N (a VC/counting argument whose statement and constants "
                    "were not retrieved): no finite construction can confirm it, and a construction that fits a "
                    "budget only shows an upper bound",
    "ks_s2s_lower_hardmax": "a lower bound over ALL hardmax Transformers (hypotheses, constants and the proof's VC "
                            "bound not retrieved): quantifies over every network, so no finite instance decides it",
}

OPTIONS = InstanceOptions(
    defaults={"N": 8, "S": 3, "V": 5, "d": 2, "d_h": None, "C": 3, "seed": 0},
    flags=(
        Flag("N", "--N", int, "number of sequences / ids N (ks_*; dana_*: vocabulary size)"),
        Flag("S", "--S", int, "sequence length (ks_*: the paper's n)"),
        Flag("V", "--V", int, "ks_*: vocabulary size V (tokens 0..V-1)"),
        Flag("d", "--d", int, "embedding dimension d"),
        Flag("d_h", "--dh", int, "head dimension"),
        Flag("C", "--C", int, "ks_*: number of labels C (labels 0..C-1)"),
        Flag("seed", "--seed", int, "random seed (default 0)"),
    ),
    make=make_token_instance,
    load=load_token_sequences,
    vary=vary_token_options,
    from_data=("N", "S", "V", "d", "C"),  # the file's sizes (d and V from its embeddings; without them, d is the option)
)

PAPER = register_paper(
    "kajitsuka2025",
    title="On the Optimal Memorization Capacity of Transformers",
    citation="Kajitsuka, Sato, ICLR 2025, arXiv:2409.17677; a reconstruction of the abstract's claim: "
             "the constructions and constants are ours",
    catalogue=CATALOGUE,
    instance_options=OPTIONS,
    not_checkable=NOT_CHECKABLE,
    reconstruction="the 2025 paper's theorems, constants and constructions were not retrieved: each checker checks "
                   "our construction for the abstract's claim",
)
