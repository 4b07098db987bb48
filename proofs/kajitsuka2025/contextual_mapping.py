"""ks_contextual_mapping: one rank-1 softmax self-attention layer is a
contextual mapping (Kajitsuka & Sato ICLR 2024, Thm. 2, as retrieved), and
hardmax attention is not (Thm. 1).  A **reconstruction of the abstract's
claim**: the paper's explicit (r, delta) of Thm. 2 and its counterexample of
Thm. 1 were not retrieved (KAJITSUKA2025.md section 2.B); the construction
below and all its constants (w, lambda, kappa) are ours.

Statement (as retrieved, [R2])
------------------------------
Inputs X^(1..N) in R^{d x n} token-wise separated (every token nonzero,
distinct tokens distinct): there are rank-1 W_O, W_V, W_K, W_Q such that
Y^(i) = X^(i) + W_O W_V X^(i) softmax[(W_K X^(i))^T W_Q X^(i)] satisfies
||Y^(i)_k - Y^(j)_l|| >= delta > 0 whenever the tokens X^(i)_k != X^(j)_l or
the token SETS V^(i) != V^(j) differ (the quantifier of section 4.2).

Construction (ours, following the retrieved proof skeleton)
-----------------------------------------------------------
1. Lemma 3 (projection): an integer w with p_v = w.x_v distinct and nonzero
   over the vocabulary (small random w, else w = (1, M, M^2, ..) with
   M = 2 max|x| + 1: balanced base-M digits are unique); its constant
   c^2 = min (w.D)^2 / (|w|^2 |D|^2) over token differences D, exact.
2. Scale (ours): by default lambda = 1 / max p^2 (logits in [-1, 1], well
   conditioned; Lemma 1's hypothesis is then reported, not needed: it is
   sufficient only).  ``scale="lemma1"``: lambda = ceil(delta_L) /
   (min|p_t| * min gap of p), delta_L a rational upper bound of 2 ln n + 3,
   so the logits a_j = lambda p_t p_j are >= 2 ln n + 3 apart (Lemma 1's
   hypothesis [R2]); the margin is then astronomically small and may need
   more than 16384 bits.
3. W_Q = lambda w^T, W_K = W_V = w^T (s = 1), W_O = kappa e_1,
   kappa = 1/(2R), R = max p - min p: y = x_t + kappa e_1 g with
   g = sum_j p_j softmax(a)_j = boltz(a)/(lambda p_t).

Checks
------
1. Hypotheses (exact): every token nonzero (r_min > 0); distinct token ids
   have distinct embeddings (eps > 0).
2. Distinct tokens: ||y - y'|| >= eps - kappa R >= 1/2 (triangle
   inequality; exact).  Same token, different sets: ||y - y'|| =
   kappa |g - g'|, g in Arb balls (softmax of :mod:`verifier.model.aot_balls`),
   certified > 0 by sorting certified-disjoint balls; a precision ladder
   raises the bits while undecided.  Two contexts with equal (query, multiset
   of p) but different sets give the SAME output exactly: with the caller's
   w that refutes the variant; with ours it is a failed construction.
   Positions of two contexts with the SAME token set (a permutation, other
   multiplicities) are not required apart: the predicate is section 4.2's.
   Every printed bound is rounded outward: delta down, and the output-norm
   bound r = sqrt(r_max^2) + kappa max|p| (||y|| <= ||x_t|| + kappa |g|,
   |g| <= max|p|) up, from its ball.
3. ``attention="hardmax"`` (Thm. 1; d = 1 data): a query t attends to the
   keys maximising c t x_j; the choice depends on the weights only through
   sign(c) in {-1, 0, 1}, so the three cases cover EVERY single-head layer.
   Tie rule (stated, the paper's is not retrieved): ``tie="average"`` (mean
   of the tied keys) or ``tie="first"`` (the first tied position).  A
   required pair attending to the same value collides for every W_O W_V.

Not established
---------------
The paper's explicit delta (not retrieved); existence of w for every
separated dataset (we find one on the instance); the masked extension.

References
----------
arXiv:2307.14023 (Thm. 1, Thm. 2, Lemmas 1, 3 [R2]); arXiv:2409.17677;
KAJITSUKA2025.md sections 2.B, 4.

>>> from verifier.data.token_sequences import make_token_instance
>>> check_ks_contextual_mapping(make_token_instance(N=6, S=3, V=4, d=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, fmpq

from verifier.arith.compare import Decision, certainly_less, lower, upper, with_precision_ladder, workprec
from verifier.data.token_sequences import from_arrays
from verifier.model.aot_balls import softmax_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

__all__ = ["check_ks_contextual_mapping", "build_projection", "token_separation", "hardmax_collisions"]

CLAIM = ("a rank-1 softmax attention layer maps any two positions whose tokens differ or whose contexts' token SETS "
         "differ to outputs >= delta > 0 apart, every output of norm <= r (KAJITSUKA2025.md section 4.2: two "
         "contexts with the same token set need not be separated)")

#: every single-head hardmax layer (all weights, by sign(c)) collides on a required pair
HARDMAX = Refutation("no-choice-works", "for each sign(c) in {-1, 0, 1} -- i.e. for EVERY single-head hardmax layer -- "
                     "a required pair (same token, different token sets) attends to the same value (exact rationals)",
                     variant="attention='hardmax': Thm. 1's hardmax analogue (the paper says it fails)")
#: the caller's w or lambda makes two required positions' outputs identical
PINNED_PROJECTION = Refutation("counterexample", "two required positions (same token, different token sets) with "
                               "identical logits and values for THIS w: identical outputs",
                               variant="w / lam: the projection or the scale pinned by the caller")
#: our w, lambda, kappa did not separate (a tie, or a non-injective w): SOME weights may
CM_MISSED = Refutation("failed-construction", "our projection w, scale lambda and kappa left two required "
                       "positions with identical outputs: a flaw of this construction, not a proof that no "
                       "rank-1 layer separates them")


def token_separation(inst) -> tuple[list[Hypothesis], dict]:
    """Token-wise separatedness of the tokens the sequences use, exact: (hypotheses, measured).
    Distinct integer vectors are >= 1 apart, so eps > 0 is "no two ids share an embedding"; eps^2 itself
    is reported for vocabularies of at most 400 tokens."""
    used = np.unique(inst.sequences)
    E = inst.embeddings[used]
    zero = [int(t) for t in used[~np.any(E != 0, axis=1)]]
    _, first, inverse, counts = np.unique(E, axis=0, return_index=True, return_inverse=True, return_counts=True)
    shared = [int(used[k]) for k in range(used.size) if counts[inverse.ravel()[k]] > 1][:4]
    Eo = E.astype(object)
    norms2 = [int(np.dot(x, x)) for x in Eo]
    eps2 = None
    if 1 < used.size <= 400 and not shared:
        eps2 = min(int(np.dot(Eo[a] - Eo[b], Eo[a] - Eo[b])) for a in range(used.size) for b in range(a))
    hyps = [Hypothesis("tokens nonzero (r_min > 0)", "refuted" if zero else "certified",
                       f"token ids with the zero embedding: {zero}" if zero else f"r_min^2 = {min(norms2)}"),
            Hypothesis("token-wise separated (eps > 0)", "refuted" if shared else "certified",
                       f"ids sharing an embedding: {shared}" if shared else
                       f"distinct integer embeddings (eps >= 1; eps^2 = {eps2})")]
    return hyps, {"r_min^2": min(norms2), "r_max^2": max(norms2), "eps^2": eps2, "tokens used": int(used.size)}


@construction("ks_contextual_mapping.projection")
def build_projection(E: np.ndarray, seed: int = 0, draw: int = 0) -> list[int]:
    """An integer w with w.x distinct and nonzero over the rows of E (distinct, nonzero);
    ``draw`` > 0 draws another one from the same seed (a redraw after a failed construction)."""
    E = np.asarray(E, dtype=object)
    d = E.shape[1]
    rng = np.random.default_rng([seed, 3] + ([int(draw)] if draw else []))
    ok = lambda w: len({int(np.dot(x, w)) for x in E} - {0}) == E.shape[0]  # noqa: E731
    for height in (3, 10, 100):
        for _ in range(30):
            w = [int(v) for v in rng.integers(-height, height + 1, size=d)]
            if ok(np.array(w, dtype=object)):
                return w
    M = 2 * int(max(abs(int(v)) for v in E.ravel())) + 1 + 2 * int(draw)  # any M > 2 max|x|: unique digits
    return [M ** k for k in range(d)]


def _lemma3_constant(E, w) -> fmpq | None:
    """c^2 = min (w.D)^2 / (|w|^2 |D|^2) over the differences D of distinct rows (1 with one row;
    None above 400 rows: quadratic, reported only)."""
    if len(E) > 400:
        return None
    ww = sum(v * v for v in w)
    best = None
    for a in range(len(E)):
        for b in range(a):
            D = [int(x) - int(y) for x, y in zip(E[a], E[b])]
            q = fmpq(sum(x * y for x, y in zip(D, w)) ** 2, ww * sum(x * x for x in D))
            best = q if best is None or q < best else best
    return fmpq(1) if best is None else best


def _contexts(inst, p: dict):
    """key (query token, sorted p-multiset) -> list of (sequence, token set)."""
    groups = {}
    for i, row in enumerate(inst.sequences.tolist()):
        ps, tset = tuple(sorted(p[t] for t in row)), frozenset(row)
        for t in set(row):
            groups.setdefault((t, ps), []).append((i, tset))
    return groups


def _g_ball(pt: int, ps: tuple, lam: fmpq) -> arb:
    sig = softmax_ball([arb(lam * pt * q) for q in ps])
    return sum((arb(q) * s for q, s in zip(ps[1:], sig[1:])), arb(ps[0]) * sig[0])


def _same_token_gap(groups, p: dict, lam) -> tuple[Decision, arb | None, tuple | None]:
    """min |g - g'| over same-token keys with different token sets, as a ball (certified order)."""
    by_token = {}
    for (t, ps), members in groups.items():
        by_token.setdefault(t, []).append((ps, {m[1] for m in members}))
    best, witness, decisions = None, None, []
    for t, keys in by_token.items():
        balls = sorted(((_g_ball(p[t], ps, lam), ps, sets) for ps, sets in keys), key=lambda b: float(b[0].mid()))
        order_ok = all(certainly_less(balls[k][0], balls[k + 1][0]) is Decision.TRUE for k in range(len(balls) - 1))
        pairs = ([(k, k + 1) for k in range(len(balls) - 1)] if order_ok else
                 [(a, b) for a in range(len(balls)) for b in range(a + 1, len(balls))])
        for a, b in pairs:
            if balls[a][2] == balls[b][2] and len(balls[a][2]) == 1:
                continue  # the same single token set: not a required pair
            gap = abs(balls[b][0] - balls[a][0])
            decisions.append(certainly_less(arb(0), gap))
            if best is None or float(gap.mid()) < float(best.mid()):
                best, witness = gap, (t, balls[a][1], balls[b][1])
    return Decision.all(decisions), best, witness


def hardmax_collisions(inst, tie: str = "average") -> list[dict]:
    """d = 1: for each sign(c) in (-1, 0, 1), a required pair with equal attended value (exact), or none."""
    x = {t: Fraction(int(v[0])) for t, v in enumerate(inst.embeddings)}
    out = []
    for c in (-1, 0, 1):
        seen, hit = {}, None
        for i, row in enumerate(inst.sequences.tolist()):
            for t in set(row):
                s = c * x[t]
                vals = [x[j] for j in row]
                if s == 0:
                    attended = list(range(len(row)))
                else:
                    top = max(s * v for v in vals)
                    attended = [k for k, v in enumerate(vals) if s * v == top]
                value = sum(vals[k] for k in attended) / len(attended) if tie == "average" else vals[attended[0]]
                key = (t, value)
                if key in seen and seen[key][1] != frozenset(row):
                    hit = {"sign(c)": c, "query token": t, "sequences": [seen[key][0], i], "attended value": str(value)}
                    break
                seen.setdefault(key, (i, frozenset(row)))
            if hit:
                break
        out.append(hit or {"sign(c)": c, "collision": None})
    return out


def _hardmax(inst, hyps, tie) -> Evidence:
    hyps = hyps + [Hypothesis("d = 1 (the weights are enumerated by sign(c))",
                              "certified" if inst.d == 1 else "refuted", f"d = {inst.d}")]
    if inst.d != 1:
        return conclude("ks_contextual_mapping", Decision.UNDECIDED, claimed="some hardmax layer is a contextual "
                        "mapping", measured={}, hypotheses=hyps, method="exact rationals")
    cases = hardmax_collisions(inst, tie)
    every = all(c.get("collision", 1) is not None for c in cases)
    return conclude("ks_contextual_mapping", Decision.FALSE if every else Decision.UNDECIDED, refutation=HARDMAX,
                    claimed=f"some single-head hardmax self-attention layer (tie rule: {tie}) is a contextual mapping",
                    measured={"collision per sign(c)": cases}, hypotheses=hyps, certified=every,
                    method="exact rationals, all weights by sign(c)", certificates=cases,
                    reason=("every single-head hardmax layer maps two contexts with different token sets to the same "
                            "output for a shared token (Thm. 1, our counterexample)" if every else
                            "some sign(c) case has no collision on this data: the data is no counterexample"),
                    trail=[Step("attended keys depend on the weights only through sign(c) in {-1, 0, 1}",
                                "Thm. 1 [R2]; tie rule ours", {"tie": tie})])


@statement("ks_contextual_mapping", N=8, S=3, V=5, d=2, margin="certified separation delta of the outputs",
           exists=True, refutes=(HARDMAX, PINNED_PROJECTION, CM_MISSED),
           measure="delta (certified lower bound)")
def check_ks_contextual_mapping(instance, *, prec: int = 128, seed: int = 0, attention: str = "softmax",
                                tie: str = "average", w=None, lam=None, scale: str = "unit", **options) -> Evidence:
    inst = instance
    hyps, sep = token_separation(inst)
    pinned = w is not None or lam is not None
    if attention == "hardmax":
        return _hardmax(inst, hyps, tie)
    if any(h.status == "refuted" for h in hyps):
        return conclude("ks_contextual_mapping", Decision.UNDECIDED, claimed=CLAIM, measured=sep, hypotheses=hyps)
    used = [int(t) for t in np.unique(inst.sequences)]
    E = inst.embeddings[used]
    w = build_projection(E, seed) if w is None else [int(v) for v in w]
    p = {t: int(np.dot(inst.embeddings[t].astype(object), np.array(w, dtype=object))) for t in used}
    pv = sorted(set(p.values()))
    n = inst.S
    delta_L = fmpq(math.ceil((2 * math.log(n) + 3) * 1000) + 1, 1000)  # rational > 2 ln n + 3 (certified below)
    pmin, gap = min(abs(v) for v in pv), min((b - a for a, b in zip(pv, pv[1:])), default=1)
    pmax = max(abs(v) for v in pv)
    if lam is None and scale == "lemma1":
        lam = fmpq(math.ceil(delta_L), max(1, pmin * gap)) if pmin else fmpq(1)
    elif lam is None:  # ours: logits lambda p_t p_j in [-1, 1], well conditioned
        lam = fmpq(1, pmax * pmax)
    if not isinstance(lam, fmpq):
        q = Fraction(lam)
        lam = fmpq(q.numerator, q.denominator)
    R = pv[-1] - pv[0]
    kappa = fmpq(1, 2 * R) if R else fmpq(1)
    groups = _contexts(inst, p)
    exact = [(k, m) for k, m in groups.items() if len({s for _, s in m}) > 1]
    lemma1 = certainly_less(2 * arb(n).log() + 3, arb(lam * pmin * gap)) if pmin else Decision.FALSE
    token_delta = 1 - kappa * R  # eps >= 1 (distinct integer vectors) and |g - g'| <= R
    measured = {**sep, "w": w, "Lemma 3 c^2 (exact)": str(_lemma3_constant(E, w)), "lambda": str(lam),
                "kappa": str(kappa), "Lemma 1 hypothesis (entries >= 2 ln n + 3 apart)": lemma1.value,
                "distinct-token pairs: delta >= eps - kappa R": str(token_delta)}
    trail = [Step("w with w.x distinct and nonzero (ours)", "Lemma 3 [R2]", {"w": w}),
             Step(f"lambda ({scale}): 'lemma1' makes the logits lambda p_t p_j >= 2 ln n + 3 apart, 'unit' (ours) "
                  "puts them in [-1, 1]", "Lemma 1 hypothesis [R2] (sufficient, not necessary)",
                  {"lambda": str(lam), "certified": lemma1.value}),
             Step("y = x_t + kappa e_1 sum_j p_j softmax(lambda p_t p)_j", "Thm. 2 construction (ours)",
                  {"kappa": str(kappa)})]
    if exact:
        (t, ps), members = exact[0]
        wit = {"query token": t, "p multiset": list(ps), "sequences": sorted({i for i, _ in members})[:2]}
        return conclude("ks_contextual_mapping", Decision.FALSE, claimed=CLAIM, measured=measured, hypotheses=hyps,
                        certified=True, method="exact (identical inputs to the layer)", certificates=[wit],
                        refutation=PINNED_PROJECTION if pinned else CM_MISSED,
                        reason="two contexts with different token sets give the same logits and values for a shared "
                               f"token: identical outputs (w.x collides on the vocabulary): {wit}", trail=trail)

    def attempt(bits):
        dec, gmin, wit = _same_token_gap(groups, p, lam)
        return dec, (gmin, wit)

    decision, (gmin, wit), bits = with_precision_ladder(attempt, prec=prec, max_prec=max(prec, 1 << 14))
    with workprec(bits):
        same_delta = None if gmin is None else arb(kappa) * gmin
        lows = [arb(token_delta)] + ([arb(same_delta.lower())] if same_delta is not None else [])
        delta = min(lows, key=lambda x: float(x.log()))
        log10_delta = lower(delta.log() / arb(10).log()) if delta > 0 else None
        delta_lo = max(lower(delta), 0.0) if delta > 0 else 0.0  # rounded down: a lower bound still
        r_ball = arb(sep["r_max^2"]).sqrt() + arb(kappa) * max(map(abs, pv))  # ||x_t|| + kappa |g|, |g| <= max |p|
    decision = Decision.all([decision, Decision.TRUE if token_delta > 0 else Decision.FALSE])
    measured.update({"same-token pairs: min kappa |g - g'| (ball)": None if same_delta is None else str(same_delta),
                     "closest same-token contexts": wit, "delta (certified lower bound)": delta_lo,
                     "log10 delta (lower bound)": log10_delta,
                     "r (output norm bound, rounded up)": upper(r_ball),
                     "required pairs": "tokens differ, or the contexts' token sets differ (section 4.2); two "
                                       "contexts with the same token set (e.g. permutations) need not be apart"})
    return conclude("ks_contextual_mapping", decision, claimed=CLAIM, measured=measured, hypotheses=hyps,
                    certified=decision is not Decision.UNDECIDED, method="exact rationals + arb balls", prec_bits=bits,
                    margin=delta_lo, trail=trail, refutation=PINNED_PROJECTION if pinned else CM_MISSED)


def _d1(seqs, emb) -> object:
    return from_arrays(np.array(seqs), np.zeros(len(seqs), dtype=int), embeddings=np.array(emb), kind="control")


#: Thm. 1 counterexample (ours): tokens 1, 2, 3, 4 on the line; (1,2,4)/(1,3,4) share their extremes,
#: (2,1,3)/(2,2,2) share their mean and first token.
HARDMAX_DATA = ([[0, 1, 3], [0, 2, 3], [1, 0, 2], [1, 1, 1]], [[1], [2], [3], [4]])


@negative_control("ks_contextual_mapping", "neg_ks_hardmax_average: some single-head hardmax layer (ties averaged) "
                  "is a contextual mapping on (1,2,4),(1,3,4),(2,1,3),(2,2,2)", expect=("refuted",))
def neg_ks_hardmax_average(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_ks_contextual_mapping(_d1(*HARDMAX_DATA), prec=prec, seed=seed, attention="hardmax", tie="average")


@negative_control("ks_contextual_mapping", "neg_ks_hardmax_first: the same with ties broken by the first position",
                  expect=("refuted",))
def neg_ks_hardmax_first(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_ks_contextual_mapping(_d1(*HARDMAX_DATA), prec=prec, seed=seed, attention="hardmax", tie="first")


@negative_control("ks_contextual_mapping", "neg_ks_bad_projection: w = (1, 1) with w.(1,0) = w.(0,1): contexts "
                  "(2,0), (2,1) give token 2 the same output", expect=("refuted",))
def neg_ks_bad_projection(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = from_arrays(np.array([[2, 0], [2, 1]]), np.zeros(2, dtype=int),
                       embeddings=np.array([[1, 0], [0, 1], [1, 1]]), kind="control")
    return check_ks_contextual_mapping(inst, prec=prec, seed=seed, w=[1, 1])
