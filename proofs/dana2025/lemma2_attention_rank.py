"""Lemma 2 (App. A.1): the attention outputs of T0 sequences can have rank min(T0, Hd).

Statement
---------
For T0 sequences t in [N]^S there exist W_QK^1..W_QK^H (d x d), e and pos
such that the stacked attention outputs A(t) = [A^1(t); ...; A^H(t)] in
R^{Hd} (Eq. (1): A^h(t) = sum_s softmax_s(x_S^T W_QK^h x_s) x(t,s)) satisfy

    rank{A(t) : t} >= min(T0, H d).

Construction
------------
Rational e, pos (dyadic, generic); first the paper's W_QK^h = w_h e1 e1^T
(step (d)), else random full matrices.  A is enclosed in Arb balls.

Checks
------
1. Rank caps valid for EVERY e, pos, W_QK (:mod:`.rank_ceilings`, sympy
   identities): with S = 1 every head outputs x(t,1), so rank <= min(d, N);
   in general rank <= min(u, d) + H min(d, D) <= H min(d, N+S-1) (L1) and
   rank <= min(d, R) + (H-1) min(d, D).  A cap below min(T0, Hd) refutes the
   lemma on the instance: the paper assumes neither S >= 2 nor d <= N+S-2
   (H >= 2; d <= N+S-1 for H = 1), and with all N^S sequences every
   d >= N+S-1 (H >= 2) is refuted (finding dana_lemma2.d_at_least_N_plus_S_minus_1).
   For d < N+S-1 the lemma is checked, not proved, by step 2 on each instance.
2. Otherwise the conclusion: a nonsingular min(T0, Hd) minor of A, certified.
3. The proof's steps on the instance (audit trail): (a) dummy sequences need
   N^S >= Hd; (c) "im f lies in no hyperplane" (L2; variant claim
   ``claim="hyperplane"``: refuted exactly when some rank X(t) < d, e.g. S < d,
   verified by dT0 images f(W) of certified full rank otherwise); the
   implication (c) => (d) is invalid (L3: rank-one matrices span R^{2x2},
   none has rank 2; exact); Lemma 3's embeddings are replaced by generic
   rationals (L4); the series identification (L5) is not checked: the final
   rank is certified instead.

Not established
---------------
An existence statement: a certified minor shows it on the instance only.
A failed certification is "inconclusive", never a refutation; refutations
come only from the caps, which hold for all parameters.

References
----------
arXiv:2411.10115 (AISTATS 2025), Lemma 2 p. 4, proof App. A.1 pp. 12-13; DANA2025.md (D3, L1-L5).

>>> from verifier.data.sequences import make_sequence_instance
>>> check_dana_lemma2(make_sequence_instance(N=5, S=2, d=4, H=2, T0=8, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import itertools

import numpy as np
from flint import arb_mat

from verifier.arith.balls import to_arb_mat
from verifier.arith.compare import Decision, workprec
from verifier.arith.exact import exact_nullspace, exact_rank
from verifier.arith.rank import certify_rank_lower_bound
from verifier.data.instances import rng_for
from verifier.data.sequences import from_sequences
from verifier.model.aot_balls import attention_outputs_ball, embed_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .rank_ceilings import lemma2_caps, prove_convex_shift, prove_head_difference, prove_single_token_softmax

__all__ = ["check_dana_lemma2", "attention_output_matrix", "rank_one_gap_certificate"]


def draw_embeddings(N: int, S: int, d: int, seed: int, den: int = 256):
    rng = rng_for(seed, "dana_lemma2.embeddings")
    return (rng.integers(-den, den + 1, (N, d)) / den, rng.integers(-den, den + 1, (S, d)) / den)


@construction("dana_lemma2.attention_output_matrix")
def attention_output_matrix(sequences, e, pos, W_QK) -> arb_mat:
    """A (T0 x Hd, balls): row t = [A^1(t), ..., A^H(t)] (caller's precision)."""
    eb, pb = to_arb_mat(e), to_arb_mat(pos)
    K = [W if isinstance(W, arb_mat) else to_arb_mat(W) for W in W_QK]
    rows = []
    for seq in np.asarray(sequences).tolist():
        outs = attention_outputs_ball(embed_ball(seq, eb, pb), K)
        rows.append([x for A in outs for x in A.entries()])
    return arb_mat(rows)


def _paper_attention(H: int, d: int) -> list[np.ndarray]:
    """Step (d): W_QK^h = w_h e1 e1^T with distinct w_h."""
    out = []
    for h in range(H):
        W = np.zeros((d, d))
        W[0, 0] = (h + 1) / 2
        out.append(W)
    return out


def rank_one_gap_certificate() -> dict:
    """L3, exact: E11, E12, E21, E22 have rank 1 and span R^{2x2} (vectorised rank 4),
    so 'the rank-one matrices lie in no hyperplane' cannot give a rank-2 element."""
    units = [np.eye(4)[i].reshape(2, 2) for i in range(4)]
    return {"kind": "L3: 'no hyperplane' does not imply 'some element has full rank'",
            "ranks of E_ij": [exact_rank(u) for u in units], "rank of their span": exact_rank(np.eye(4)),
            "holds": all(exact_rank(u) == 1 for u in units) and exact_rank(np.eye(4)) == 4}


def hyperplane_step(inst, e, pos, *, seed: int, prec: int) -> dict:
    """Step (c) on the instance: the image of f(W) = (A_W(t))_t, W in R^{d x d}."""
    d = inst.d
    for t, seq in enumerate(inst.sequences.tolist()):
        X = np.array([e[q] + pos[s] for s, q in enumerate(seq)])
        if exact_rank(X) < d:
            v = exact_nullspace(X)[0]  # v^T x(t,s) = 0 for every s, exactly
            return {"decision": Decision.FALSE, "sequence": seq, "rank X(t)": exact_rank(X),
                    "v_t (exact, v^T x(t,s) = 0 for all s)": [str(x) for x in v],
                    "why": "v_t^T f_t(W) = sum_s a_s v_t^T x(t,s) = 0 for EVERY W: im f lies in a hyperplane"}
    rng = rng_for(seed, "dana_lemma2.hyperplane")
    m = d * inst.T0
    with workprec(prec):
        cols = []
        for _ in range(m):
            W = rng.integers(-64, 65, (d, d)) / 64
            A = attention_output_matrix(inst.sequences, e, pos, [W])
            cols.append(A.entries())
        F = arb_mat(cols)
        cert = certify_rank_lower_bound(F, k=m, prec=prec)
    return {"decision": Decision.TRUE if cert.decision is Decision.TRUE else Decision.UNDECIDED,
            "images f(W) with certified rank": cert.certified_k, "dimension d T0": m}


#: a rank cap below min(T0, Hd) for EVERY e, pos, W_QK (sympy identities + an exact formal rank)
RANK_CAP = Refutation("no-choice-works", "rank{A(t)} <= a cap below min(T0, Hd) for EVERY e, pos, W_QK (sympy "
                      "identities and an exact formal rank)")
#: proof step (c): an exact v_t with v_t^T x(t, s) = 0 puts im f in a hyperplane for every W
HYPERPLANE = Refutation("counterexample", "a sequence spanning fewer than d dimensions: an exact v_t orthogonal to "
                        "its tokens puts {f(W)} in a hyperplane for every W",
                        variant="claim='hyperplane': proof step (c) on its own")


@statement("dana_lemma2", exists=True, refutes=(RANK_CAP, HYPERPLANE), N=5, S=2, d=4, H=2, T0=8)
def check_dana_lemma2(instance, *, prec: int = 128, seed: int = 0, claim: str = "rank", **options) -> Evidence:
    inst = instance
    N, S, d, H, T0 = inst.N, inst.S, inst.d, inst.H, inst.T0
    k = min(T0, H * d)
    e, pos = draw_embeddings(N, S, d, seed)
    caps = lemma2_caps(inst.sequences, N=N, d=d, H=H)
    shift, single, heads = prove_convex_shift(), prove_single_token_softmax(), prove_head_difference()
    gap = rank_one_gap_certificate()
    trail = [Step("Rank caps for every e, pos, W_QK", "L1: A^h(t) = x_S + sum a_s (x_s - x_S); S = 1: A^h = x(t,1)",
                  {**caps, "target min(T0, Hd)": k}),
             Step("(a) dummy sequences to reach Hd", "proof (a)", {"N^S": N ** S, "Hd": H * d,
                                                                   "N^S >= Hd": N ** S >= H * d}),
             Step("(b) Lemma 3 embeddings replaced by generic dyadic rationals", "L4", {"grid": "1/256"}),
             Step("(c) => (d): 'no hyperplane' does not give rank", "L3 (exact)", gap)]
    certs = [shift.to_dict(), single.to_dict(), heads.to_dict(), gap]
    if claim == "hyperplane":
        step = hyperplane_step(inst, e, pos, seed=seed, prec=prec)
        trail.append(Step("(c) the image of f lies in no hyperplane", "L2", {k_: v for k_, v in step.items()
                                                                            if k_ != "decision"}))
        return conclude("dana_lemma2", step["decision"], claimed="proof step (c): {f(W)} lies in no hyperplane of "
                        "R^{d x T0}", measured={k_: v for k_, v in step.items() if k_ != "decision"},
                        certified=step["decision"] is not Decision.UNDECIDED, method="exact rationals / arb balls",
                        prec_bits=prec, certificates=[step], trail=trail,
                        reason="a sequence spans fewer than d dimensions: an exact hyperplane contains im f (L2)"
                        if step["decision"] is Decision.FALSE else "", refutation=HYPERPLANE)
    claimed = f"rank{{A(t)}} >= min(T0, Hd) = {k}"
    if caps["cap"] < k and shift.holds and single.holds and heads.holds:
        trail.append(Step("The cap is below the claim for EVERY parameter choice", "L1", {"cap": caps["cap"]}))
        return conclude("dana_lemma2", Decision.FALSE, claimed=claimed,
                        measured={"rank cap (all e, pos, W)": caps["cap"], "claimed": k, **caps},
                        certified=True, method="sympy identities + exact formal rank", certificates=certs,
                        refutation=RANK_CAP,
                        trail=trail, reason=f"every choice gives rank <= {caps['cap']} < {k} "
                        + ("(S = 1: every head outputs x(t,1))" if S == 1 else
                           "(heads differ within the span of the differences: min(d,R) + (H-1) min(d,D))"
                           if caps["cap"] == caps["head_difference_cap"] < caps["doc_cap"] else
                           "(d > N + S - 1 or few differences)"))
    result = None
    for label, W_QK in (("paper: W_QK^h = w_h e1 e1^T", _paper_attention(H, d)),
                        ("random full W_QK^h", [rng_for(seed, f"dana_lemma2.W{h}").integers(-64, 65, (d, d)) / 64
                                                for h in range(H)])):
        with workprec(prec):
            A = attention_output_matrix(inst.sequences, e, pos, W_QK)
            cert = certify_rank_lower_bound(A, k=k, prec=prec)
        trail.append(Step(f"(d) {label}: rank of A certified by a minor", "Lemma 2 conclusion",
                          {"certified rank": cert.certified_k, "target": k, "bits": cert.prec_bits}))
        result = (label, cert)
        if cert.decision is Decision.TRUE:
            break
    label, cert = result
    decision = Decision.TRUE if cert.decision is Decision.TRUE else Decision.UNDECIDED
    trail.append(Step("(L5) the series identification of eq. (10) is not checked; the final rank is",
                      "L5", {"construction used": label}))
    return conclude("dana_lemma2", decision, claimed=claimed,
                    measured={"certified rank": cert.certified_k, "claimed": k, "construction": label,
                              "rank cap (all parameters)": caps["cap"]},
                    hypotheses=[Hypothesis("T0 sequences, distinct", "certified", f"T0 = {T0}")],
                    certified=decision is Decision.TRUE,
                    method=f"{cert.certified_by} (nonsingular minor)",  # what certified it
                    prec_bits=cert.prec_bits, margin=1.0 - cert.residual_norm_upper
                    if np.isfinite(cert.residual_norm_upper) else None,
                    certificates=[{"kind": "rank A >= k: nonsingular minor", **cert.to_dict()}] + certs,
                    trail=trail)


def _all_sequences(N: int, S: int, **sizes):
    seqs = np.array(list(itertools.product(range(N), repeat=S)))
    return from_sequences(seqs, N=N, targets=np.zeros(len(seqs), dtype=int), kind="all", **sizes)


@negative_control("dana_lemma2", "neg_lemma2_S1: S = 1 (N=5, d=2, H=2): every head outputs x(t,1), "
                  "rank <= 2 < 4 for all parameters", expect=("refuted",))
def neg_lemma2_S1(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_lemma2(_all_sequences(5, 1, d=2, H=2), prec=prec, seed=seed)


@negative_control("dana_lemma2", "neg_lemma2_smallN: N + S - 1 < d (N=2, S=3, d=6, H=1, all 8 sequences): "
                  "rank <= 4 < 6 for all parameters", expect=("refuted",))
def neg_lemma2_smallN(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_lemma2(_all_sequences(2, 3, d=6, H=1), prec=prec, seed=seed)


@negative_control("dana_lemma2", "Lemma 2 at d = N + S - 1 with H >= 2 (N=4, S=2, d=5, H=3, all 16 bigrams): heads "
                  "differ within the differences' span, rank <= 5 + 2*4 = 13 < 15 for all parameters (beyond L1)",
                  expect=("refuted",))
def control_lemma2_head_differences(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_dana_lemma2(_all_sequences(4, 2, d=5, H=3), prec=prec, seed=seed)


@negative_control("dana_lemma2", "neg_hyperplane: proof step (c) with S = 2 < d = 4: an exact v_t "
                  "orthogonal to x(t,1), x(t,2) puts im f in a hyperplane", expect=("refuted",))
def neg_hyperplane(*, prec: int = 128, seed: int = 0) -> Evidence:
    from verifier.data.sequences import make_sequence_instance

    return check_dana_lemma2(make_sequence_instance(N=5, S=2, d=4, H=2, T0=8, seed=seed), prec=prec, seed=seed,
                             claim="hyperplane")


@negative_control("dana_lemma2", "neg_lemma2_few_tokens: N = 10 but 10 bigrams over 4 tokens, d = 5 <= N+S-2, H = 2: "
                  "R = 5, D = 4, rank <= 9 < 10 for all parameters", expect=("refuted",))
def neg_lemma2_few_tokens(*, prec: int = 128, seed: int = 0) -> Evidence:
    seqs = np.array(list(itertools.product(range(4), repeat=2))[:10])
    inst = from_sequences(seqs, N=10, targets=np.zeros(len(seqs), dtype=int), d=5, H=2, kind="control")
    return check_dana_lemma2(inst, prec=prec, seed=seed)
