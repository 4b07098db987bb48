"""ks_ntp_memorization: a Transformer memorizes N next-token labels of
length-n sequences with O~(sqrt N) parameters, with little influence from n
(Kajitsuka & Sato ICLR 2025, abstract [R]).  A **reconstruction of the
abstract's claim**: the paper's theorem, architecture and constants were not
retrieved (KAJITSUKA2025.md section 1.2); the model below is ours, built
from the retrieved mechanism ("a contextual mapping assigns sequence IDs,
the FFN attaches the labels" [R]).

Model (ours)
------------
* Residual stream of width D = d + 2: token t at position k is
  (e(t), k + 1, 0) -- a token table (V x d) and a position table (n x 1),
  concatenated, and one coordinate reserved for the attention's output.
* Attention (rank 1, softmax; :mod:`.contextual_mapping`): the last
  position's output, the sequence ID g = sum_k p_k softmax(lambda p_n p)_k
  with p = w.(e(t), k+1), w an integer projection injective on the
  (token, position) pairs, lambda = 1 / max p^2; W_Q, W_K, W_V in
  R^{1 x D}, W_O = e_D in R^{D x 1} writes g into the reserved coordinate:
  4 D parameters.
* FFN: reads the stream (its first layer has D inputs per unit, all but
  g's with weight 0); z = S (g - g_0) (S = 2^s with the certified ID gaps
  >= 6 / S, an affine map folded into that first layer: no extra
  parameter), then the robust bit-extraction network of
  :mod:`.bit_extraction` on the rounded ids o = round(z): certified
  constant (= the label) on [o - 1, o + 1].
* Readout: the FFN's scalar output is the label.

Parameter count: the project's one convention, for every construction of
the three papers (and the cross-paper table): every entry of every weight
matrix and bias vector, each matrix counted at the widths it reads and
writes, zeros included; fixed wiring (concatenation, the residual
connection, the reserved coordinate) is no parameter.  Here

    P = V d + n + 4 D + 16 ceil(U/K) + 5 + K (56 (w + beta) + 139)
        + (2B - 1)(D - 1),          D = d + 2,  B = ceil(U/K),

with U the number of distinct sequence IDs (the last term: the FFN's first
layer, 2B - 1 units, reading D inputs instead of one); only V d + n grows
with n directly (w, the offset bits, through the ID spacing only).

Checks
------
1. Hypotheses: token-wise separated (exact), no sequence listed with two labels.
2. IDs (Arb balls, precision ladder): consecutive IDs certainly apart;
   every z certainly within 1 of its integer o.  A projection w whose IDs'
   spread / gap ratio exceeds the int64 FFN evaluator's range (2^39 / 6)
   is a failed draw: w is drawn again from the seed, up to :data:`DRAWS`
   = 4 times, then inconclusive naming the closest IDs and the remedy.
   Without positions (``positions=False``), two sequences with the same
   last token and multiset of tokens get the SAME attention input for
   EVERY weights: with different labels no such model memorizes both
   (refuted, for that variant).
3. FFN: every ReLU's sign is certain on [o - 1, o + 1] and the output there
   is exactly the label (affine forms, integers); a miss is a failed
   construction, never a refutation.
4. ``budget=b``: P <= b (below P: refutes only that OUR model fits b).

Not established
---------------
The paper's parameter bound and its log factors; the lower bound
(ks_ntp_lower, not checkable); softmax vs hardmax in the paper's theorem.

>>> from verifier.data.token_sequences import make_token_instance
>>> check_ks_ntp_memorization(make_token_instance(N=30, S=4, V=5, d=2, C=3, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb, fmpq

from verifier.arith.compare import (
    Decision,
    certainly_less,
    certainly_less_equal,
    lower,
    upper,
    with_precision_ladder,
    workprec,
)
from verifier.data.token_sequences import from_arrays
from verifier.errors import InvalidInstance
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .bit_extraction import build_bit_extraction, evaluate_forms, formula_count, parameter_count
from .contextual_mapping import _g_ball, build_projection, token_separation

__all__ = ["check_ks_ntp_memorization", "sequence_keys", "memorize"]

CLAIM = "a one-layer Transformer with O~(sqrt N) parameters (beyond V d + n) memorizes every next-token label"
CLAIM_S2S = "a one-layer Transformer with O~(sqrt(nN)) parameters (beyond V d + n) memorizes every token's label"
MAX_ID = 1 << 39


#: draws of the projection w before the pipeline is left inconclusive (a failed construction)
DRAWS = 4

#: without positions a permutation with the same last token has the same attention input: EVERY weights agree
NO_POSITIONS = Refutation("no-choice-works", "two contexts with different labels and identical attention inputs "
                          "(the same query token and the same multiset of tokens): without positional encodings every "
                          "layer gives them the same output, whatever its weights",
                          variant="positions=False: the model without positional encodings")
#: our model's exact count above the caller's budget
OVER_BUDGET = Refutation("counterexample", "our construction's exact parameter count P above the caller's budget",
                         variant="budget=b: the claim that THIS construction fits b parameters")
#: our construction missed (ids colliding or out of the evaluator's range for every w drawn, or the FFN's output)
MODEL_MISSED = Refutation("failed-construction", f"our model (a projection w drawn up to {DRAWS} times, the "
                          "robust bit-extraction FFN) did not memorize the labels on this instance; another "
                          "construction may")


def sequence_keys(inst, *, positions: bool = True, seed: int = 0, s2s: bool = False, draw: int = 0):
    """(w, p-map, {(p_query, sorted p multiset): set of labels}, lambda); the query is the last
    position (next token) or, with ``s2s``, every position (its token label); ``draw``: which
    projection w of the seed (:func:`.contextual_mapping.build_projection`)."""
    seqs = inst.sequences.tolist()
    pairs = sorted({(t, k if positions else 0) for row in seqs for k, t in enumerate(row)})
    rows = np.array([list(inst.embeddings[t]) + ([k + 1] if positions else []) for t, k in pairs], dtype=np.int64)
    w = build_projection(rows, seed, draw)
    p = {pk: int(np.dot(r.astype(object), np.array(w, dtype=object))) for pk, r in zip(pairs, rows)}
    keys = {}
    labels = inst.token_labels.tolist() if s2s else [[None] * (len(r) - 1) + [y] for r, y in
                                                     zip(seqs, inst.labels.tolist())]
    for row, ys in zip(seqs, labels):
        ps = [p[(t, k if positions else 0)] for k, t in enumerate(row)]
        for k, y in enumerate(ys):
            if y is not None:
                keys.setdefault((ps[k], tuple(sorted(ps))), set()).add(int(y))
    pmax = max(abs(v) for v in p.values())
    return w, p, keys, fmpq(1, pmax * pmax)


def _ids(keys, lam):
    """Per key, in order of the ID: (ball, label); the decision that consecutive IDs are apart; S; g_0."""
    items = sorted(((_g_ball(pl, ps, lam), min(ys)) for (pl, ps), ys in keys.items()), key=lambda b: float(b[0].mid()))
    gaps = [items[k + 1][0] - items[k][0] for k in range(len(items) - 1)]
    decisions = [certainly_less(arb(0), g) for g in gaps]
    if any(d is not Decision.TRUE for d in decisions):
        return Decision.all(decisions), (items, None, None, None)
    gap_lo = min((g.lower() for g in gaps), default=arb(1))
    s = max(0, math.ceil(math.log2(6 / float(gap_lo))) + 1) if gaps else 0
    g0 = items[0][0].mid()
    if float((items[-1][0] - g0).upper()) * 2.0 ** s >= MAX_ID:  # the int64 FFN evaluator's range
        return Decision.TRUE, (items, s, None, None)
    z = [arb(2) ** s * (b - g0) for b, _ in items]
    o = [int(round(float(v.mid()))) for v in z]  # any integer: |z - o| <= 1 is certified next
    near = Decision.all(certainly_less_equal(abs(v - k), 1) for v, k in zip(z, o))
    return (Decision.TRUE if near is Decision.TRUE else Decision.UNDECIDED), (items, s, z, o)


def id_spacing(items) -> dict:
    """The closest two IDs (a certified lower bound of their gap) against the IDs' spread (an upper
    bound): the ratio decides whether the robust FFN's int64 evaluator can hold them."""
    gaps = [(items[k + 1][0] - items[k][0], k) for k in range(len(items) - 1)]
    if not gaps:
        return {}
    gap, k = min(gaps, key=lambda g: lower(g[0]))
    spread = items[-1][0] - items[0][0]
    lo, hi = lower(gap), upper(spread)
    return {"closest IDs: gap >=": lo, "between IDs number": [k, k + 1], "ID spread <=": hi,
            "spread / gap <=": hi / lo if lo > 0 else math.inf, "evaluator limit (spread / gap)": MAX_ID / 6}


@statement("ks_ntp_memorization", N=30, S=4, V=12, d=2, C=3, margin="smallest certified gap between sequence IDs",
           exists=True, refutes=(NO_POSITIONS, OVER_BUDGET, MODEL_MISSED), measure="parameters P")
def check_ks_ntp_memorization(instance, *, prec: int = 128, seed: int = 0, positions: bool = True,
                              budget: int | None = None, draws: int = DRAWS, **options) -> Evidence:
    return memorize(instance, "ks_ntp_memorization", s2s=False, prec=prec, seed=seed, positions=positions,
                    budget=budget, draws=draws)


def _label_hypothesis(inst, s2s: bool) -> Hypothesis:
    dup = {}
    labels = inst.token_labels.tolist() if s2s else inst.labels.tolist()
    for row, y in zip(map(tuple, inst.sequences.tolist()), labels):
        dup.setdefault(row, set()).add(tuple(y) if s2s else int(y))
    clash = next((r for r, ys in dup.items() if len(ys) > 1), None)
    what = "sequence's tokens carry" if s2s else "sequence carries"
    return Hypothesis(f"no {what} two labels", "refuted" if clash else "certified",
                      f"sequence {list(clash)} has labels {sorted(dup[clash])}" if clash
                      else f"{len(dup)} distinct sequences")


def parameter_counts(inst, net, *, positions: bool) -> dict:
    """The model's parameters under the project's one convention (every entry of every weight matrix
    and bias vector, each matrix at the widths it reads and writes, zeros included; fixed wiring --
    concatenation, the residual connection, a reserved coordinate -- is no parameter).  The residual
    stream is (e(t), k+1, 0) of width D = d + 2 (d + 1 without positions): the attention reads it
    (W_Q, W_K, W_V in R^{1 x D}) and writes its output g into the reserved coordinate (W_O in
    R^{D x 1}); the FFN's first layer reads the whole stream (D inputs per unit)."""
    D = inst.d + (1 if positions else 0) + 1
    first = len(net.layers[0].outputs)
    embed = inst.V * inst.d + (inst.S if positions else 0)  # token table V x d, position table n x 1
    ffn = parameter_count(net) + first * (D - 1)
    return {"D": D, "embedding": embed, "attention": 4 * D, "ffn": ffn, "first layer width": first,
            "P": embed + 4 * D + ffn}


def memorize(inst, sid: str, *, s2s: bool, prec: int, seed: int, positions: bool, budget,
             draws: int = DRAWS) -> Evidence:
    """The shared pipeline: IDs at the last position (next token) or at every position (s2s).  A
    projection w whose IDs collide, or whose spread / gap ratio is beyond the FFN evaluator's range,
    is a failed draw: up to ``draws`` are made from the seed (:func:`.contextual_mapping.build_projection`)."""
    claim = CLAIM_S2S if s2s else CLAIM
    hyps, sep = token_separation(inst)
    if s2s and inst.token_labels is None:
        hyps.append(Hypothesis("token labels given", "refuted", "the data has no 'token_labels' (N, n)"))
    else:
        hyps.append(_label_hypothesis(inst, s2s))
    if any(h.status == "refuted" for h in hyps):
        return conclude(sid, Decision.UNDECIDED, claimed=claim, measured=sep, hypotheses=hyps)
    if int(draws) < 1:
        raise InvalidInstance(f"draws = {draws} must be >= 1")
    tried = []
    for draw in range(int(draws)):
        w, p, keys, lam = sequence_keys(inst, positions=positions, seed=seed, s2s=s2s, draw=draw)
        trail = [Step("tokens (e(t), k+1)" if positions else "tokens e(t) (no positions)", "embedding (ours)",
                      {"w": w, "draw": draw + 1}),
                 Step("sequence ID = rank-1 softmax attention output at the last position", "contextual mapping [R]",
                      {"lambda": str(lam), "distinct IDs": len(keys)})]
        measured = {**sep, "w": w, "lambda": str(lam), "distinct sequence IDs": len(keys), "positions": positions,
                    "draws of w": draw + 1}
        same = next(((k, ys) for k, ys in keys.items() if len(ys) > 1), None)
        if same:  # identical attention inputs: no positions, or (never with positions) a w that collides
            wit = {"query p": same[0][0], "p multiset": list(same[0][1]), "labels": sorted(same[1])}
            if not positions:
                return conclude(sid, Decision.FALSE, claimed=claim, measured=measured, hypotheses=hyps,
                                certified=True, method="exact (identical attention inputs)", certificates=[wit],
                                trail=trail, refutation=NO_POSITIONS,
                                reason=f"two contexts with different labels get the same ID exactly: {wit}")
            tried.append({"draw": draw + 1, "w": w, "failed": f"identical IDs for different labels: {wit}"})
            continue
        decision, (items, s, z, o), bits = with_precision_ladder(lambda b: _ids(keys, lam), prec=prec,
                                                                 max_prec=max(prec, 1 << 12))
        if decision is not Decision.TRUE:
            return conclude(sid, Decision.UNDECIDED, claimed=claim, measured=measured, hypotheses=hyps,
                            method="arb balls", prec_bits=bits, trail=trail,
                            reason=f"sequence IDs not certified apart at {bits} bits: raise --prec")
        if o is None or (len(o) > 1 and np.diff(np.array(o, dtype=np.int64)).min() < 3):
            with workprec(bits):
                spacing = id_spacing(items)
            tried.append({"draw": draw + 1, "w": w, "failed": "ID spread / gap beyond the FFN evaluator's int64 range",
                          **spacing})
            continue
        break
    else:
        last = tried[-1]
        cause = (f"the closest two IDs are >= {last['closest IDs: gap >=']:.3g} apart against a spread <= "
                 f"{last['ID spread <=']:.3g} (ratio up to {last['spread / gap <=']:.3g} > "
                 f"{MAX_ID / 6:.3g}, what the FFN's int64 evaluator holds)" if "closest IDs: gap >=" in last
                 else last["failed"])
        return conclude(sid, Decision.FALSE, claimed=claim, measured={**measured, "draws": tried},
                        hypotheses=hyps, trail=trail, refutation=MODEL_MISSED,
                        reason=f"for each of the {len(tried)} projections w drawn from seed {seed}: {cause}; "
                               f"remedy: another --seed (other projections w), or more draws (draws=...)")
    o_arr = np.array(o, dtype=np.int64)
    labels = np.array([y for _, y in items], dtype=np.int64)
    C = max(int(inst.C), int(labels.max()) + 1)
    net = build_bit_extraction(o_arr, labels, C=C, robust=True)
    order = np.argsort(o_arr, kind="stable")
    a, b, failed = evaluate_forms(net, o_arr[order], 1)
    ok = (~failed) & (b == 0) & (a == labels[order])
    if parameter_count(net) != formula_count(net.N, net.K, net.omega, net.beta, True):  # pragma: no cover - guard
        raise RuntimeError("the FFN's parameter count differs from its formula")
    counts = parameter_counts(inst, net, positions=positions)
    P = counts["P"]
    decisions = [Decision.TRUE if ok.all() else Decision.FALSE]
    refutation = MODEL_MISSED
    if budget is not None and ok.all():
        decisions.append(Decision.TRUE if P <= budget else Decision.FALSE)
        refutation = OVER_BUDGET
    with workprec(bits):
        gap = min((items[k + 1][0] - items[k][0] for k in range(len(items) - 1)), key=lambda g: float(g.mid()),
                  default=arb(1))
        gap_lo = lower(gap)
    measured.update({"parameters P": P, "embedding + positions (V d + n)": counts["embedding"],
                     "residual stream width D": counts["D"], "attention 4 D": counts["attention"],
                     "FFN (16 ceil(U/K) + 5 + K(56(w+beta)+139) + (2B-1)(D-1))": counts["ffn"],
                     "FFN K, w, beta": [net.K, net.omega, net.beta], "P - V d - n": P - counts["embedding"],
                     "(P - V d - n) / sqrt(N log2 N)":
                     (P - counts["embedding"]) / math.sqrt(inst.N * max(1.0, math.log2(inst.N))),
                     "ID scale S = 2^s": s, "min ID gap (ball)": str(gap), "not memorized": int((~ok).sum())})
    if tried:
        measured["draws"] = tried
    reason = ""
    if budget is not None and P > budget:
        reason = (f"our model needs P = {P} > budget {budget} (exact count): refutes only that THIS construction "
                  "fits the budget, not the paper's bound")
    trail.append(Step("z = 2^s (g - g_0) within 1 of an integer o; robust bit-extraction FFN on [o-1, o+1]",
                      "FFN memorizer (ours)", {"K": net.K, "w": net.omega}))
    return conclude(sid, Decision.all(decisions), claimed=claim + (f"; P <= {budget}" if budget
                    is not None else ""), measured=measured, hypotheses=hyps, certified=True, margin=gap_lo,
                    method="exact rationals + arb balls + exact integers (affine forms)", prec_bits=bits,
                    reason=reason, trail=trail, refutation=refutation)


def _seqs(rows, labels, emb=None):
    return from_arrays(np.array(rows), np.array(labels), embeddings=None if emb is None else np.array(emb),
                       V=3, d=2, kind="control")


@negative_control("ks_ntp_memorization", "neg_ks_ntp_no_positions: without positional encodings, (0,1,2) and "
                  "(1,0,2) with labels 0 and 1", expect=("refuted",))
def neg_ks_ntp_no_positions(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_ks_ntp_memorization(_seqs([[0, 1, 2], [1, 0, 2]], [0, 1]), prec=prec, seed=seed, positions=False)


@negative_control("ks_ntp_memorization", "neg_ks_ntp_budget: our model for 30 sequences fits P - 1 parameters "
                  "(refutes only our construction's count)", expect=("refuted",))
def neg_ks_ntp_budget(*, prec: int = 128, seed: int = 0) -> Evidence:
    from verifier.data.token_sequences import make_token_instance

    inst = make_token_instance(N=30, S=4, V=5, d=2, C=3, seed=seed)
    P = check_ks_ntp_memorization(inst, prec=prec, seed=seed).measured["parameters P"]
    return check_ks_ntp_memorization(inst, prec=prec, seed=seed, budget=P - 1)


@negative_control("ks_ntp_memorization", "neg_ks_ntp_conflict: the sequence (0,1) listed with labels 0 and 1",
                  expect=("hypotheses-unmet",))
def neg_ks_ntp_conflict(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_ks_ntp_memorization(_seqs([[0, 1], [0, 1], [1, 2]], [0, 1, 1]), prec=prec, seed=seed)
