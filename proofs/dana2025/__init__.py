"""Dana, Pydi, Chevaleyre, "Memorization in Attention-only Transformers"
(AISTATS 2025, arXiv:2411.10115): one module per statement (ids as in
../shared/paper/DANA2025.md), plus the shared pieces of the proofs:
the exact route of Thm. 1 (:mod:`.exact_route`), the lower bounds on
d_KL that the impossibility results use (:mod:`.kl_lower_bounds`), the
structural rank ceilings (:mod:`.rank_ceilings`) and the comparison with
Mahdavi et al. (:mod:`.comparison`).

The model is Eq. (2) (:mod:`verifier.model.aot`), the data are token
sequences (:mod:`verifier.data.sequences`); the instance options are the
paper's own (``--N --S --d --dh --H --T0 --dataset --conditionals --eps``).
"""
from fractions import Fraction

from verifier.data.sequences import (
    CONDITIONAL_KINDS,
    DATASET_KINDS,
    load_sequences,
    make_sequence_instance,
    vary_sequence_options,
)
from verifier.statements.registry import Flag, InstanceOptions, register_paper


def exact_decimal(text: str) -> Fraction:
    """A command-line number as the exact decimal it writes (never through float64)."""
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"not a decimal number: {text!r}") from None

# id: (paper reference, summary, depends on)
CATALOGUE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "dana_prop1": ("Prop. 1", "any Transformer of embedding dim d: dKL(pi,T) >= dKL(pi,L(N,S,d))", ()),
    "dana_prop2": ("Prop. 2", "(a) d >= N-1: dKL(pi,L) = 0 for every pi; (b) d < N-1: some pi has dKL(pi,L) > 0",
                   ()),
    "dana_prop3": ("Prop. 3, App. A.5", "Assumption 1, d >= 2: dKL(pi,L) = 0 (lambda W E on the circle)",
                   ("dana_prop2",)),
    "dana_lemma1": ("Lemma 1", "Assumption 2: the infimum of dKL over L is attained", ()),
    "dana_lemma2": ("Lemma 2, App. A.1", "some W_QK, e, pos give rank{A(t)} >= min(T0, Hd)", ()),
    "dana_thm1_eps0": ("Thm. 1 (eps = 0), App. A.2", "T0 <= H d_h + d: some AoT has T(t) = W E(t) on every "
                       "sequence (exact route)", ("dana_lemma2", "dana_prop2")),
    "dana_thm1_eps": ("Thm. 1 (eps > 0), App. A.3", "eq. (13): |dKL(pi,f) - dKL(pi,T)| <= E||delta - "
                      "(pi.delta)1||_inf; footnote 8", ("dana_thm1_eps0",)),
    "dana_corollary1": ("Cor. 1", "d = 2: some AoT memorizes H d_h + 2 associations",
                        ("dana_thm1_eps0", "dana_prop3")),
    "dana_contrib1": ("Contribution 1, p. 2", "any d: some AoT memorizes H d_h + d associations",
                      ("dana_corollary1",)),
    "dana_corollary2": ("Cor. 2", "uniform prior: E[Acc] >= 1/N + (1-1/N)(H d_h + d)/T0", ("dana_corollary1",)),
    "dana_thm2": ("Thm. 2, App. A.3", "some W has ||W W^T - I||_inf <= C; dKL(pi,L) <= the entropy bound", ()),
    "dana_thm2_small_c": ("Thm. 2 + C < 1/2 (our repair)", "Thm. 2 under the missing hypothesis C < 1/2 "
                          "(d > 128 ln(N+1)), on instances with d < N-1", ("dana_thm2",)),
    "dana_thm3": ("Thm. 3, Lemma 4, App. A.4", "O(eps log 1/eps) for polynomially approximable pi", ()),
}

NOT_CHECKABLE = {
    "dana_lemma1": "an attained infimum over a nonconvex set is not decided by a finite instance "
                   "(sound in outline: centered logits bounded, the rank <= d set closed); no checker depends on it",
    "dana_thm3": "O(eps log 1/eps) bounds with unstated constants, for 'polynomially approximable' pi (a class "
                 "the paper leaves open): no finite instance can refute or confirm them",
}

OPTIONS = InstanceOptions(
    defaults={"N": 5, "S": 2, "d": 3, "d_h": None, "H": 2, "T0": None, "dataset": "random",
              "conditionals": "table", "eps": None, "seed": 0},
    flags=(
        Flag("H", "--H", int, "number of heads"),
        Flag("N", "--N", int, "vocabulary size N (tokens 0..N-1)"),
        Flag("S", "--S", int, "sequence length S (context window)"),
        Flag("d", "--d", int, "embedding dimension d"),
        Flag("d_h", "--dh", int, "head dimension d_h (default d)"),
        Flag("T0", "--T0", int, "number of sequences in the support (default H d_h + d)"),
        Flag("dataset", "--dataset", str, "how the sequences are drawn", DATASET_KINDS),
        Flag("conditionals", "--conditionals", str, "association table (random or distinct targets) or "
             "positive conditionals", CONDITIONAL_KINDS),
        Flag("eps", "--eps", exact_decimal, "dana_thm1_eps: the mass epsilon left out, in (0, 1) (read as the exact "
             "decimal written: 0.1 is 1/10)"),
        Flag("seed", "--seed", int, "random seed (default 0)"),
    ),
    make=make_sequence_instance,
    load=load_sequences,
    vary=vary_sequence_options,
    from_data=("N", "S", "T0"),  # the file's vocabulary size, sequence length and support size
    draws=("dataset", "conditionals"),  # how generated data are drawn
)

PAPER = register_paper(
    "dana2025",
    title="Memorization in Attention-only Transformers",
    citation="Dana, Pydi, Chevaleyre, AISTATS 2025, arXiv:2411.10115",
    catalogue=CATALOGUE,
    instance_options=OPTIONS,
    not_checkable=NOT_CHECKABLE,
)
