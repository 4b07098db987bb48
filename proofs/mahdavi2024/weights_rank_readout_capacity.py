"""Given weights: rank(Z), and which labels refitting only the readout can fit.

Statement
---------
For GIVEN key/query weights W_K^h, W_Q^h (a user's trained layer:
``--weights FILE``, ``--hf-model DIR --layer L``) and given contexts and
queries, let Z in R^{T x Hd} be the feature matrix of Eq. (7) (Prop. 1's
object).  The readout is linear in Z (Eq. 8: yhat = Z blockdiag(W_V^h) W_O
W_D), and every matrix M in R^{Hd x d_out} is blockdiag(W_V^h) W_O W_D for
some readout when d_v >= d_out and d_out <= d (Step 2's W_V^h = [M_h, 0];
with the skip connection, App. C's W_D = [I; 0] and shifted labels).  So for
a set S of examples:

    ANY labels on S are fit exactly by refitting only (W_V, W_O, W_D)
        iff the rows Z[S] are linearly independent,

and the largest such |S| is T' = rank(Z).  Claimed: T' = T (the readout
alone fits ANY labels on all T examples).  For EVERY weights (not only
these), rank(Z) <= min(T, Hd) and the structural caps of the data: repeated
examples, Prop. 2's H(n-1)+1 for one shared context, Prop. 5's H(d-1)+1
for tokens of constant sum (:mod:`verifier.arith.rank_caps`).

Checks
------
1. Z is enclosed in balls for EVERY value the data and the weights stand
   for (a float stands for the reals that round to it; ``--exact-input``:
   for itself), with the rigorous float64 path (any summation order) or
   Arb, and rank(Z[S]) = |S| = k is certified for a set S of examples by
   one of two certificates: a k x k minor with ||I - R A_minor||_inf < 1
   (tight for exact inputs), or Weyl's normwise bound over all Hd columns,
   sigma_min(Z[S]) >= s - ||rad||_F > 0 with s a certified lower bound of
   the midpoint's smallest singular value (it goes first for k > 64 on data
   or weights known to a precision, where the entrywise radii make the
   minor's test too weak).  Then ANY labels on S can be fit by refitting the
   readout (``measured``: the certified T' >= k and the examples S).
   k = min(T, cap) first, then the numerical ranks of stricter thresholds
   of a float SVD of Z's midpoint, then halvings (floats choose k and S;
   only a certificate is evidence).
2. The structural caps of the data, for ANY weights (exact comparisons of the
   values stored; on floats read at their precision these are a point of the
   data's intervals).  A certified k above a cap is a contradiction between
   certificates (an error, never a verdict).
3. Verdict: verified when rank(Z) = T is certified; refuted when a cap (or
   Hd) is below T (then no weights at all fit ANY labels on all T
   examples); otherwise inconclusive, with the certified T' >= k and its
   examples.

Not established
---------------
An upper bound on rank(Z) for THESE weights beyond the structural caps:
T' is certified from below, and the float numerical rank reported
beside it is not evidence.  For a transformers layer the tokens are the
float32 values torch computed, read at float32 precision: the exact real
embedding of the inputs is not enclosed.  Nothing is said about
generalisation, nor about refitting W_Q, W_K.

References
----------
arXiv:2306.02010v3, Eqs. (1)-(8), Prop. 1, Sec. 4.1 Step 2, Props. 2 and 5, App. C.

>>> from verifier.data.instances import make_instance
>>> ev = check_weights_rank(make_instance(H=2, n=3, d=5, seed=0))
>>> ev.verdict, ev.certified, ev.measured["largest T' certified"]
('verified', True, 5)
"""
from __future__ import annotations

import numpy as np

from verifier.arith.compare import Decision
from verifier.arith.rank_caps import DIMENSIONS, check_against_cap, structural_rank_cap
from verifier.data.instances import from_arrays, make_instance
from verifier.statements.evidence import Step, brief, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import construction, negative_control, statement

from .weights_common import certify_feature_rank, layer_weights

CLAIM = "rank(Z) = T: refitting only the readout (W_V, W_O, W_D) fits ANY labels on all T examples"


def cap_reading(instance, cap) -> str:
    """What the structural caps rest on under the instance's reading."""
    if cap.why == DIMENSIONS or instance.precision.exact_for("contexts", "queries"):
        return "exact (the values given)"
    return ("the values as stored, a point of the data's intervals (other values they stand for may have a "
            "larger rank)")


#: rank(Z) <= a structural cap < T: for these weights as for any (at the stored values, a point of the data)
CAP_BELOW_T = Refutation("counterexample", "rank(Z) <= a structural cap below T for ANY weights, these included "
                         "(dimensions, repeated examples, Prop. 2, Prop. 5), at the values as given or stored")


def rank_decision(certified_k: int, T: int, cap: int) -> Decision:
    """rank(Z) = T: TRUE by a certified T x T minor; FALSE when rank(Z) <= cap < T for ANY weights."""
    if certified_k >= T:
        return Decision.TRUE
    if cap < T:
        return Decision.FALSE
    return Decision.UNDECIDED


def weights_rank(instance, *, prec: int = 128, seed: int = 0, weights=None, backend=None,
                 statement_id: str = "weights_rank"):
    w, how = layer_weights(instance, weights, seed=seed, readout=False)
    T, Hd = instance.T, w.H * instance.d
    cap = structural_rank_cap(instance.contexts, instance.queries, w.H)
    first = min(T, Hd, cap.cap)
    cert, tried, numerical = certify_feature_rank(instance, w, first, prec=prec, backend=backend)
    k = cert.certified_k
    check_against_cap(k, cap)
    decision = rank_decision(k, T, cap.cap)
    examples = sorted(int(i) for i in cert.rows) if k else []
    measured = {"largest T' certified": k, "T": T,
                "examples S (ANY labels on them fit by the readout)": brief(examples),
                "structural cap rank(Z) <= (ANY weights)": cap.cap, "cap": cap.why,
                "caps rest on": cap_reading(instance, cap), "sizes tried": tried,
                "numerical rank of Z's midpoint (float: pivoted Cholesky of Z Z^T, not evidence)": numerical, "weights": how,
                "weights read": w.describe()["arrays"]}
    if k == cap.cap:
        measured["T' exactly"] = k
    certs = [{"kind": "rank(Z) >= k: nonsingular minor, Z enclosed over every value the data and the weights "
                      "stand for", **cert.to_dict()}, cap.to_dict()]
    trail = [Step("Weights", "--weights / --hf-model", {"from": how, **w.describe()}),
             Step(f"Z enclosed (Eq. 7) and a {cert.k} x {cert.k} minor certified" if k else
                  f"No minor certified (sizes tried: {tried})", "Prop. 1's object", {"certified rank": k}),
             Step("Structural caps for ANY weights", "Props. 2, 5; repeated examples; dimensions", dict(cap.caps))]
    if decision is Decision.TRUE:
        reason = f"rank(Z) = T = {T} certified: the readout alone fits ANY labels on every example"
    elif decision is Decision.FALSE:
        reason = (f"rank(Z) <= {cap.cap} < T = {T} for ANY weights ({cap.why}; {cap_reading(instance, cap)}); "
                  f"certified rank(Z) >= {k}: ANY labels fit on the {k} examples S")
    else:
        reason = (f"rank(Z) >= {k} certified: ANY labels on the {k} examples S can be fit by refitting only the "
                  f"readout; whether all T = {T} can is undecided (float numerical rank {numerical}; the caps allow "
                  f"{cap.cap})")
    return conclude(statement_id, decision, claimed=CLAIM, measured=measured, certified=decision is not
                    Decision.UNDECIDED, method=cert.method, prec_bits=cert.prec_bits, margin=float(k - T),
                    certificates=certs, trail=trail, reason=reason, refutation=CAP_BELOW_T)


# registered after the def, not by decorator: mutmut 3 mutates only undecorated functions, and this one decides
construction("weights_rank.certify")(weights_rank)


@statement("weights_rank", requires=("d_v >= d_out", "d_out <= d"), conclusion_over="box", refutes=(CAP_BELOW_T,),
           margin="certified rank(Z) - T (0: every example)", measure="largest T' certified", H=2, n=3, d=5)
def check_weights_rank(instance, *, prec: int = 128, seed: int = 0, weights=None, backend=None, **options):
    return weights_rank(instance, prec=prec, seed=seed, weights=weights, backend=backend)


@negative_control("weights_rank", "one shared context, T = H(n-1)+2 examples: rank(Z) <= H(n-1)+1 < T for ANY "
                  "weights (Prop. 2)", expect=("refuted",))
def control_shared_context(*, prec: int = 128, seed: int = 0):
    return check_weights_rank(make_instance(H=2, n=3, d=5, T=6, context="shared", seed=seed), prec=prec, seed=seed)


@negative_control("weights_rank", "a repeated example (identical context and query): two equal rows of Z for ANY "
                  "weights", expect=("refuted",))
def control_repeated_example(*, prec: int = 128, seed: int = 0):
    base = make_instance(H=2, n=3, d=5, seed=seed)
    E, e, y = np.array(base.contexts), np.array(base.queries), np.array(base.labels)
    E[-1], e[-1] = E[0], e[0]
    return check_weights_rank(from_arrays(E, e, y, H=2, kind="generated", seed=seed, source="control"), prec=prec,
                              seed=seed)


@negative_control("weights_rank", "T = Hd + 1 examples: Z has Hd columns", expect=("refuted",))
def control_more_examples_than_columns(*, prec: int = 128, seed: int = 0):
    return check_weights_rank(make_instance(H=1, n=2, d=3, T=4, seed=seed), prec=prec, seed=seed)
