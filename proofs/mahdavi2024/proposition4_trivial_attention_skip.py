"""Proposition 4 (Sec. 4.4, App. G): a trivial attention layer with skip
connection turns Assumptions 2 and 3 into Assumptions 1 and 2.

Statement
---------
One attention layer with skip connection, ``W^h = W_K^h (W_Q^h)^T = 0``
(uniform softmax, Eq. 2 gives ``s = 1_n / n``) and value/output maps composing
to the identity, sends each token to ``x_i + xbar`` (Eqs. 30-31,
``xbar = (1/n) sum_j x_j``) and the query to ``ebar = e + xbar``.  If the input
meets Assumption 2 (rank E^(t) = n) and Assumption 3 (the ebar^(t) have
Kruskal rank >= n), the output meets Assumption 1 (output queries: Kruskal
rank >= n) and Assumption 2 (output contexts: rank n, by Lemma 2).

Construction
------------
The layer is the model's (:mod:`verifier.model.mha`, :mod:`verifier.model.mha_balls`):
``W_K = W_Q = 0``, ``W_V^h = I_d``, ``W_O = [I_d; 0; ...; 0]`` (so
``sum_h W_V^h W_O^h = I``), ``W_D = I_d``, skip on.  Every token -- the query
and the n context tokens -- attends to the n context tokens (keys/values =
E^(t)): that is the reading under which the query's output is exactly the
ebar of Assumption 3 (a mean over the n context tokens).  The outputs are
also formed exactly over Q (``fmpq``): ``e + E^T 1/n`` and ``(I + 1 1^T/n) E``.

Checks
------
* Hypotheses: Assumptions 2 and 3 on the input (their own exact checkers);
  ``W^h = 0`` and ``W_V W_O = I`` exactly.
* The model's ball outputs contain the exact rational outputs (the layer is
  the map x -> x + xbar; a ball is consistency, the exact map is the proof).
* Conclusion, exact: output queries' Kruskal rank >= n (every n-subset, exact
  rank), output contexts rank n.  Assumption 1 on the INPUT queries is
  reported before/after (a [CLS]-style input fails it before the layer).
* ``W_K, W_Q`` options (nonzero): the hypothesis ``W^h = 0`` is refuted and
  the outputs are only enclosed in balls (exp); output queries are then
  certified independent subset by subset when the balls allow it.

Not established
---------------
With ``W^h != 0`` no exact refutation of Assumption 1 at the output is
possible (exp of a nonzero rational is irrational, so an exact dependence
would need a transcendental coincidence); the adversarial control shows a
numerical collapse and the verdict rests on the unmet hypothesis.  Output
contexts keep rank n for EVERY W (I + S is invertible for a positive
row-stochastic S, Perron-Frobenius); this is measured, not claimed.

References
----------
arXiv:2306.02010v3, Sec. 4.4 (Assumption 3, Proposition 4), App. G (proof),
App. D (Lemma 2).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_proposition4(make_instance(H=1, n=3, d=6, T=5, context="pe", degenerate="cls-queries")).verdict
'verified'
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.compare import Decision, workprec
from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.structure import ball_contains_rational
from verifier.data.instances import from_arrays, make_instance, rng_for, sinusoidal_encoding
from verifier.model.mha import Weights, forward
from verifier.model.mha_balls import forward_ball
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude, hypothesis_from_evidence
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import check_assumption1
from .assumption2_context_rank import check_assumption2
from .assumption3_mean_shifted_queries import check_assumption3, exact_kruskal_rank_at_least
from .definition1_kruskal_rank import EXHAUSTIVE_LIMIT, SAMPLES
from .lemma2_shifted_independence import build_shifted_tokens

BALL_SUBSET_LIMIT = 2000  # n-subsets certified in balls when W != 0


def build_trivial_layer(H: int, d: int, d_h: int, *, W_K=None, W_Q=None) -> Weights:
    """W_K = W_Q = 0 (or the given ones), W_V^h = I_d, W_O = [I_d; 0..], W_D = I_d."""
    W_V = np.broadcast_to(np.eye(d), (H, d, d)).copy()
    W_O = np.zeros((H * d, d))
    W_O[:d] = np.eye(d)
    zeros = np.zeros((H, d, d_h))
    return Weights(W_Q=zeros if W_Q is None else np.asarray(W_Q, float),
                   W_K=zeros if W_K is None else np.asarray(W_K, float), W_V=W_V, W_O=W_O, W_D=np.eye(d))


def layer_inputs(instance) -> tuple[np.ndarray, np.ndarray]:
    """Every token as a query against its context: rows t(n+1) + 0 (the query),
    t(n+1) + 1 + i (token i)."""
    E, e = np.asarray(instance.contexts), np.asarray(instance.queries)
    T, n, d = E.shape
    contexts = np.repeat(E, n + 1, axis=0)
    queries = np.concatenate([e[:, None, :], E], axis=1).reshape(T * (n + 1), d)
    return contexts, queries


def exact_layer_outputs(instance, *, skip: bool = True) -> tuple[list, list]:
    """The uniform-attention layer over Q: output queries e + E^T 1/n and
    output contexts (I + 1 1^T / n) E (Eqs. 30-31); without the skip
    connection (a negative control) E^T 1/n and (1 1^T / n) E."""
    n = instance.n
    queries, contexts = [], []
    for t in range(instance.T):
        E = to_fmpq_mat(instance.contexts[t])
        mean = [sum((E[i, j] for i in range(n)), fmpq(0)) / n for j in range(instance.d)]
        own = [fmpq(*float(x).as_integer_ratio()) for x in instance.queries[t]] if skip else [fmpq(0)] * len(mean)
        queries.append([x + m for x, m in zip(own, mean)])
        contexts.append(build_shifted_tokens(instance.contexts[t], 1) if skip else fmpq_mat(n, instance.d, mean * n))
    return queries, contexts


def _ball_rows(Y, rows) -> list:
    return [[Y[i, j] for j in range(Y.ncols())] for i in rows]


def _ball_conclusion(Y, instance, *, prec: int) -> tuple[Decision, dict]:
    """W != 0: output queries/contexts only in balls; certify what the balls allow."""
    from flint import arb_mat

    T, n = instance.T, instance.n
    q = _ball_rows(Y, [t * (n + 1) for t in range(T)])
    subsets = list(itertools.islice(itertools.combinations(range(T), n), BALL_SUBSET_LIMIT))
    ok = sum(certify_rank_lower_bound(arb_mat([q[i] for i in s]), n, prec=prec, max_prec=1024).decision
             is Decision.TRUE for s in subsets)
    ctx_ok = sum(certify_rank_lower_bound(arb_mat(_ball_rows(Y, range(t * (n + 1) + 1, (t + 1) * (n + 1)))), n,
                                          prec=prec).decision is Decision.TRUE for t in range(T))
    mid = np.array([[float(x.mid()) for x in row] for row in q])
    spread = float(np.max(np.abs(mid - mid[0]))) if T > 1 else 0.0
    complete = len(subsets) == math.comb(T, n)
    decision = Decision.TRUE if complete and ok == len(subsets) and ctx_ok == T else Decision.UNDECIDED
    return decision, {"output n-subsets certified independent": f"{ok}/{len(subsets)}",
                      "output contexts certified rank n": f"{ctx_ok}/{T}",
                      "float spread of output queries (max |o_t - o_0|)": spread,
                      "float numerical rank of output queries": int(np.linalg.matrix_rank(mid))}


#: the trivial layer's exact outputs fail Assumption 1 or 2 (a dependent n-subset, or a context of rank < n)
OUTPUT_FAILS = Refutation("counterexample", "the uniform-attention layer's exact outputs (over Q): a dependent "
                          "n-subset of output queries or an output context of exact rank < n")
#: without the skip connection every output token is the mean: rank 1 < n
NO_SKIP = Refutation("counterexample", "without the skip connection the exact output contexts have rank 1 < n",
                     variant="skip=False: the layer without its skip connection")


@statement("proposition4", refutes=(OUTPUT_FAILS, NO_SKIP),
           requires=("Assumption 2", "Assumption 3"), H=1, n=3, d=6, T=8, context="pe", degenerate="cls-queries")
def check_proposition4(instance, *, prec: int = 128, seed: int = 0, W_K=None, W_Q=None, skip: bool = True,
                       exhaustive_limit: int = EXHAUSTIVE_LIMIT, samples: int = SAMPLES, **options) -> Evidence:
    """Assumptions 2-3 in => Assumptions 1-2 out, for the trivial layer (``skip=False``:
    the false variant without the skip connection, a negative control)."""
    n, T = instance.n, instance.T
    layer = build_trivial_layer(instance.H, instance.d, instance.d_h if W_K is None else np.shape(W_K)[2],
                                W_K=W_K, W_Q=W_Q)
    trivial = not np.any(layer.W_K) or not np.any(layer.W_Q)
    VO = sum(layer.W_V[h] @ layer.W_O[h * instance.d:(h + 1) * instance.d] for h in range(instance.H))
    hyps = [hypothesis_from_evidence("Assumption 2 on the input", check_assumption2(instance, prec=prec, seed=seed)),
            hypothesis_from_evidence("Assumption 3 on the input", check_assumption3(instance, prec=prec, seed=seed)),
            Hypothesis("W^h = W_K^h (W_Q^h)^T = 0 (uniform softmax)", "certified" if trivial else "refuted",
                       "exact: W_K or W_Q is zero" if trivial else "exact: nonzero W_K and W_Q given"),
            Hypothesis("sum_h W_V^h W_O^h = I", "certified" if np.array_equal(VO, np.eye(instance.d)) else "refuted",
                       "exact (0/1 entries)")]
    before = check_assumption1(instance, prec=prec, seed=seed)
    contexts, queries = layer_inputs(instance)
    with workprec(prec):
        Y = forward_ball(contexts, queries, layer, skip=skip)
    Yf = forward(contexts, queries, layer, skip=skip)
    certs, measured = [], {"Assumption 1 before the layer": before.verdict}
    if trivial:
        out_q, out_c = exact_layer_outputs(instance, skip=skip)
        inside = all(ball_contains_rational(Y[t * (n + 1), j], out_q[t][j])
                     for t in range(T) for j in range(instance.d)) and \
            all(ball_contains_rational(Y[t * (n + 1) + 1 + i, j], out_c[t][i, j])
                for t in range(T) for i in range(n) for j in range(instance.d))
        if not inside:  # pragma: no cover - engine guard
            raise RuntimeError("the model's ball output does not contain x + xbar: layer != mean map")
        U = np.empty((T, instance.d), dtype=object)
        U[:, :] = [[x * n for x in row] for row in out_q]  # n ebar: same Kruskal rank
        kr = exact_kruskal_rank_at_least(U, n, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
        ranks = [exact_rank(C) for C in out_c]
        decision = Decision.all([kr.at_least(n), Decision.TRUE if min(ranks) == n else Decision.FALSE])
        measured.update({"Assumption 1 after (output queries' Kruskal rank >= n)": kr.at_least(n).value,
                         "kruskal bounds after": [kr.lower, kr.upper],
                         "Assumption 2 after (min output context rank)": min(ranks), "n": n,
                         "model balls contain x + xbar": inside})
        certs += [{"kind": "output queries' Kruskal rank (exact, every n-subset)", **kr.to_dict()},
                  {"kind": "output contexts' exact ranks", "ranks": ranks},
                  {"kind": "model forward in balls contains the exact map", "prec_bits": prec,
                   "float max |forward - exact|": float(np.max(np.abs(Yf[::n + 1] - np.array(
                       [[float(x) for x in row] for row in out_q]))))}]
        method = "exact rationals (fmpq) + arb balls (model consistency)"
    else:
        decision, info = _ball_conclusion(Y, instance, prec=prec)
        measured.update(info)
        certs.append({"kind": "W != 0: outputs enclosed in balls only", **info})
        method = "arb balls"
    trail = [Step("input: Assumptions 2 and 3 (exact checkers); Assumption 1 before the layer", uses="Prop. 4",
                  data={h.name: h.status for h in hyps} | {"Assumption 1 before": before.verdict}),
             Step("layer W^h = 0, W_V W_O = I, skip: run by the model in balls", uses="Eqs. (1)-(5), (30)-(31)",
                  data={"trivial": trivial}),
             Step("outputs: query -> ebar (Kruskal rank exact), tokens -> x_i + xbar (rank, Lemma 2)",
                  uses="App. G", data={k: v for k, v in measured.items() if k != "Assumption 1 before the layer"})]
    reason = "" if trivial else (
        "W^h != 0: the layer is not the mean map and Proposition 4 claims nothing; "
        + ("every output check was certified anyway" if decision is Decision.TRUE else
           f"output queries collapse numerically (float spread {measured['float spread of output queries (max |o_t - o_0|)']:.3g}, "
           f"numerical rank {measured['float numerical rank of output queries']}); balls cannot separate them "
           "and no exact refutation exists (exp is transcendental)"))
    return conclude("proposition4", decision, refutation=OUTPUT_FAILS if skip else NO_SKIP,
                    claimed="Assumptions 2+3 in => Assumptions 1+2 out (uniform attention + skip)",
                    measured=measured, hypotheses=hyps, certified=decision is not Decision.UNDECIDED,
                    method=method, prec_bits=prec, certificates=certs, trail=trail, reason=reason)


def build_dominant_token_instance(*, T: int = 5, n: int = 3, d: int = 6, seed: int = 0):
    """[CLS]-style queries (all equal) and contexts whose FIRST token is one
    shared, dominant vector; the other tokens are uniform + positional
    encoding.  Assumptions 2 and 3 hold (the means differ)."""
    rng = rng_for(seed, "proposition4")
    pe = sinusoidal_encoding(n + 1, d)
    E = rng.uniform(0.0, 1.0, (T, n, d)) + pe[1:][None]
    u = np.round(rng.standard_normal(d) * 8) / 8
    E[:, 0, :] = 4.0 * u
    q = np.round(rng.standard_normal(d) * 8) / 8 + pe[0]
    return from_arrays(E, np.broadcast_to(q, (T, d)).copy(), H=1, d_h=1, kind="dominant-token", seed=seed), u, q


@negative_control("proposition4", "no skip connection: every output token is the mean, output contexts have "
                  "exact rank 1 < n", expect=("refuted",))
def control_proposition4_without_skip(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=1, n=3, d=6, T=5, context="pe", degenerate="cls-queries", seed=seed)
    return check_proposition4(inst, prec=prec, seed=seed, skip=False)


@negative_control("proposition4", "W^h = c u q^T != 0 (c huge): every query attends to the shared first "
                  "token, the map is not the mean", expect=("hypotheses-unmet",))
def control_proposition4_adversarial_attention(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst, u, q = build_dominant_token_instance(seed=seed)
    scale = 1e4 / max(float(u @ u) * float(q @ q), 1e-300)  # logit gap ~ 1e4: softmax one-hot to e^-1e4
    return check_proposition4(inst, prec=prec, seed=seed, W_K=(scale * u)[None, :, None], W_Q=q[None, :, None])
