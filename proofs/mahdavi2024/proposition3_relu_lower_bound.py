"""Proposition 3 (Sec. 4.3, App. F): a ReLU net with m hidden units cannot
memorize every dataset of size T > m(d+2)+1 that meets Assumptions 1-2.

Statement
---------
(reconstructed, STATEMENTS.md) ``f(x) = v^T ReLU(W x + b) + b0`` with m hidden
units on ``x = [vec(E); e]`` in R^{(n+1)d} (``m((n+1)d+2)+1`` parameters).  If
``T > m(d+2)+1`` there is a dataset meeting Assumptions 1-2 whose labels no
such network fits.  Proof (App. F): take ``x^(t)`` in general position in
R^d, lift to ``E^(t)`` = the first n standard basis vectors (shared, rank n)
and ``e^(t) = x^(t)``; on the lifted data f equals an m-unit net on R^d with
bias ``b + W_E vec(E)`` (Eq. 29), which has ``m(d+2)+1 < T`` parameters.

Construction
------------
The instance gives n, d, T and the points ``x^(t)`` (its queries);
``m`` defaults to the largest m with ``m(d+2)+1 < T``.  Networks are drawn
with dyadic rational weights, so everything below is exact (``fmpq``).

Checks
------
* Hypotheses on the lifted data: Assumptions 1 and 2 (their exact checkers),
  ``n < d``, ``T > threshold`` (``threshold`` option, default m(d+2)+1).
* The reduction identity ``f_lifted(x~^(t)) = f_small(x^(t))`` exactly for
  random rational networks, and symbolically (sympy, pre-activations agree).
* The dimension count, exact per network: with ``u_j = v_j (w_j, b_j)``,
  ``f = sum_j D_j [X 1] u_j + b0 1`` (D_j = the unit's activation pattern),
  so every reachable label vector lies in one of finitely many subspaces of
  dimension <= m(d+1)+1 (ReLU is positively homogeneous: the paper's count
  m(d+2)+1 has m redundant scalings).  Exact Jacobian ranks (parameters ->
  outputs) at random rational points are <= that.
* When ``2^(mT) <= 4096``: an explicit rational label vector outside EVERY
  pattern's subspace -- no network of this width fits it (exact ranks).
* Conclusion: the reachable labels form a null set when ``T > m(d+1)+1``.  A
  ``threshold`` at or below ``m(d+1)`` is refuted where an exact Jacobian of
  rank T (no pre-activation 0) shows an open set of labels is reachable.

Not established
---------------
Which labels ARE memorizable for T <= m(d+1)+1 (local surjectivity is not
global).  The lifted dataset is the paper's; other datasets are not examined.

References
----------
arXiv:2306.02010v3, Sec. 4.3 (Proposition 3), App. F (proof, Eq. 29).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_proposition3(make_instance(H=1, n=2, d=3, T=7, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import itertools

import numpy as np
from flint import fmpq, fmpq_mat

from verifier.arith.compare import Decision
from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.data.instances import from_arrays, make_instance, rng_for
from verifier.errors import InvalidInstance
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude, hypothesis_from_evidence
from verifier.statements.refutations import Refutation
from verifier.statements.registry import derived, negative_control, statement

from .assumption1_query_kruskal_rank import check_assumption1, n_less_than_d
from .assumption2_context_rank import check_assumption2

NETWORKS = 6  # random rational networks per check
PATTERN_LIMIT = 4096  # explicit unreachable labels when 2^(mT) is at most this
SEARCH = 200  # parameter draws when looking for a full-rank Jacobian


def relu_parameter_count(m: int, n: int, d: int) -> int:
    """m((n+1)d + 2) + 1 on inputs [vec(E); e]."""
    return m * ((n + 1) * d + 2) + 1


def build_lifted_dataset(points, n: int):
    """(instance, inputs): E^(t) = first n basis vectors, e^(t) = x^(t), and
    x~^(t) = [vec(E^(t)); e^(t)] (row-major vec: the tokens one after another)."""
    X = np.asarray(points, dtype=np.float64)
    T, d = X.shape
    E = np.broadcast_to(np.eye(d)[:n], (T, n, d)).copy()
    inst = from_arrays(E, X, H=1, d_h=n, kind="lifted (App. F)")
    return inst, np.hstack([E.reshape(T, n * d), X])


def random_relu_network(m: int, dim: int, rng, *, spread=None) -> dict:
    """Dyadic weights k/32 (exact); ``spread`` (points) sets each bias at a
    random gap of the unit's projections so activation patterns vary."""
    draw = lambda *s: rng.integers(-64, 65, s).astype(np.float64) / 32.0  # noqa: E731
    net = {"W": draw(m, dim), "b": draw(m), "v": draw(m), "b0": draw(1)[0]}
    net["v"][net["v"] == 0] = 1.0
    if spread is not None:
        p = np.sort(spread @ net["W"].T, axis=0)  # (T, m)
        for j in range(m):
            k = rng.integers(0, p.shape[0] + 1)
            lo = p[k - 1, j] if k > 0 else p[0, j] - 1.0
            hi = p[k, j] if k < p.shape[0] else p[-1, j] + 1.0
            net["b"][j] = -np.round((lo + hi) / 2 * 2**20) / 2**20
    return net


def preactivations(net: dict, X) -> fmpq_mat:
    """W x + b for every row of X, exactly (T x m)."""
    P = to_fmpq_mat(X) * to_fmpq_mat(net["W"]).transpose()
    b = [fmpq(*float(x).as_integer_ratio()) for x in net["b"]]
    return fmpq_mat(P.nrows(), P.ncols(), [P[i, j] + b[j] for i in range(P.nrows()) for j in range(P.ncols())])


def relu_outputs(net: dict, X) -> list:
    """f(x) = v^T ReLU(W x + b) + b0 for every row of X, exactly."""
    P = preactivations(net, X)
    v = [fmpq(*float(x).as_integer_ratio()) for x in net["v"]]
    b0 = fmpq(*float(net["b0"]).as_integer_ratio())
    return [sum((v[j] * P[i, j] for j in range(P.ncols()) if P[i, j] > 0), b0) for i in range(P.nrows())]


def reduce_network(net: dict, n: int, d: int) -> dict:
    """Eq. (29): the small net on R^d, W_e = W[:, nd:], b' = b + W_E vec(E)
    with E the first n basis vectors (exact: 0/1 entries)."""
    W = net["W"]
    vecE = np.eye(d)[:n].reshape(-1)
    return {"W": W[:, n * d:], "b": net["b"] + W[:, :n * d] @ vecE, "v": net["v"], "b0": net["b0"]}


def pattern_matrix(points, patterns) -> fmpq_mat:
    """[D_1 [X 1], ..., D_m [X 1], 1]: the outputs of every net with these
    activation patterns are its column combinations (u_j = v_j (w_j, b_j))."""
    X = np.asarray(points, dtype=np.float64)
    T, d = X.shape
    X1 = np.hstack([X, np.ones((T, 1))])
    cols = [X1 * np.asarray(A, dtype=np.float64)[:, None] for A in patterns] + [np.ones((T, 1))]
    return to_fmpq_mat(np.hstack(cols))


def jacobian(net: dict, X) -> fmpq_mat:
    """d outputs / d (W, b, v, b0) on the rows of X, exactly (no pre-activation 0)."""
    P = preactivations(net, X)
    T, m = P.nrows(), P.ncols()
    Xq = to_fmpq_mat(X)
    v = [fmpq(*float(x).as_integer_ratio()) for x in net["v"]]
    rows = []
    for i in range(T):
        act = [P[i, j] > 0 for j in range(m)]
        dW = [v[j] * Xq[i, k] if act[j] else fmpq(0) for j in range(m) for k in range(Xq.ncols())]
        rows.append(dW + [v[j] if act[j] else fmpq(0) for j in range(m)]
                    + [P[i, j] if act[j] else fmpq(0) for j in range(m)] + [fmpq(1)])
    return fmpq_mat(T, len(rows[0]), [x for r in rows for x in r])


def unreachable_labels(points, m: int, rng) -> dict | None:
    """A rational y outside the span of every pattern matrix (all 2^(mT)
    pattern tuples), or None when there are too many or y fell inside one."""
    T = len(points)
    if 2 ** (m * T) > PATTERN_LIMIT:
        return None
    y = [fmpq(int(k), 7) for k in rng.integers(-100, 101, T)]
    subsets = list(itertools.product((0, 1), repeat=T))
    for tup in itertools.combinations_with_replacement(range(len(subsets)), m):
        M = pattern_matrix(points, [subsets[k] for k in tup])
        aug = fmpq_mat(T, M.ncols() + 1, [x for i in range(T) for x in [M[i, j] for j in range(M.ncols())] + [y[i]]])
        if exact_rank(aug) == exact_rank(M):
            return {"labels": [str(x) for x in y], "unreachable": False}
    return {"labels": [str(x) for x in y], "unreachable": True, "pattern tuples": len(subsets) ** m}


def prove_reduction_symbolically(n: int = 2, d: int = 3):
    """sympy: w . [vec(E); x] + b == w_e . x + (b + w_E . vec(E)) for one unit."""
    import sympy as sp

    w = sp.symbols(f"w0:{(n + 1) * d}")
    x = sp.symbols(f"x0:{d}")
    b = sp.Symbol("b")
    vecE = [1 if k == i * d + i else 0 for i in range(n) for k in range(i * d, (i + 1) * d)]
    lifted = sum(wk * xk for wk, xk in zip(w, list(vecE) + list(x))) + b
    small = sum(w[n * d + k] * x[k] for k in range(d)) + (b + sum(w[k] * vecE[k] for k in range(n * d)))
    return sp.expand(lifted - small) == 0


#: a caller's threshold below the count: a network with an exact full-rank Jacobian reaches an open set of labels
LOW_THRESHOLD = Refutation("counterexample", "a rational network with an exact Jacobian of rank T (no pre-activation "
                           "0): an open set of labels on the lifted points is reachable",
                           variant="threshold: the hypothesis T > m(d+2)+1 replaced by the caller's")
#: the paper's lifted dataset reachable at its own threshold: that witness dataset fails, others are not examined
LIFTED_REACHABLE = Refutation("failed-construction", "the paper's lifted dataset admits a full-rank Jacobian: this "
                              "witness dataset fails; Prop. 3 says SOME dataset works, and others are not examined")


@statement("proposition3",
           requires=("n < d",), exists=True, refutes=(LOW_THRESHOLD, LIFTED_REACHABLE),
           margin="T - Jacobian rank bound m(d+1)+1", H=1, n=2, d=3, T=derived("d + 4", lambda o: int(o["d"]) + 4))
def check_proposition3(instance, *, prec: int = 128, seed: int = 0, m: int | None = None,
                       threshold: int | None = None, **options) -> Evidence:
    """m-unit ReLU nets cannot fit generic labels on the lifted dataset."""
    n, d, T = instance.n, instance.d, instance.T
    m = max(1, (T - 2) // (d + 2)) if m is None else int(m)
    if m < 1:
        raise InvalidInstance(f"m = {m} hidden units: need m >= 1")
    paper = m * (d + 2) + 1
    threshold = paper if threshold is None else int(threshold)
    dim_bound = m * (d + 1) + 1
    points = np.asarray(instance.queries, dtype=np.float64)
    lifted, inputs = build_lifted_dataset(points, n)
    hyps = [n_less_than_d(lifted),
            Hypothesis(f"T > {threshold}", "certified" if T > threshold else "refuted", f"T = {T}")]
    hyps += [hypothesis_from_evidence(name, check(lifted, prec=prec, seed=seed))
             for name, check in (("Assumption 1 on the lifted data", check_assumption1),
                                 ("Assumption 2 on the lifted data", check_assumption2))]
    rng = rng_for(seed, "proposition3")
    identity_ok, pattern_ok, ranks = True, True, []
    for _ in range(NETWORKS):
        net = random_relu_network(m, (n + 1) * d, rng)
        y_lift, y_small = relu_outputs(net, inputs), relu_outputs(reduce_network(net, n, d), points)
        identity_ok &= y_lift == y_small
        P = preactivations(reduce_network(net, n, d), points)
        M = pattern_matrix(points, [[int(P[i, j] > 0) for i in range(T)] for j in range(m)])
        pattern_ok &= exact_rank(M) == exact_rank(fmpq_mat(T, M.ncols() + 1, [
            x for i in range(T) for x in [M[i, j] for j in range(M.ncols())] + [y_small[i]]]))
    best = None
    for _ in range(SEARCH):  # Jacobian ranks at points with varied activation patterns
        net = random_relu_network(m, (n + 1) * d, rng, spread=inputs)
        P = preactivations(net, inputs)
        if any(P[i, j] == 0 for i in range(T) for j in range(m)):
            continue
        r = exact_rank(jacobian(net, inputs))
        ranks.append(r)
        if best is None or r > best[0]:
            best = (r, net)
        if r >= min(T, dim_bound) or len(ranks) >= 40:
            break
    symbolic = prove_reduction_symbolically(n, d)
    explicit = unreachable_labels(points, m, rng)
    jac = max(ranks) if ranks else 0
    structure_ok = identity_ok and pattern_ok and symbolic
    if T > dim_bound and structure_ok and jac <= dim_bound:
        decision = Decision.TRUE
    elif jac >= T:
        decision = Decision.FALSE  # a submersion point: an open set of labels is reachable
    else:
        decision = Decision.UNDECIDED
    measured = {"m": m, "T": T, "paper count m(d+2)+1": paper, "pattern dimension m(d+1)+1": dim_bound,
                "ReLU parameters m((n+1)d+2)+1": relu_parameter_count(m, n, d),
                "max exact Jacobian rank": jac, "Jacobian points": len(ranks),
                "reduction identity exact": identity_ok, "pattern identity exact": pattern_ok,
                "explicit unreachable labels": None if explicit is None else explicit["unreachable"]}
    certs = [{"kind": "reduction identity f_lifted = f_small (Eq. 29)", "networks": NETWORKS,
              "exact": identity_ok, "sympy pre-activations agree": symbolic},
             {"kind": "exact Jacobian ranks (parameters -> outputs)", "ranks": ranks,
              "bound m(d+1)+1": dim_bound, "columns": relu_parameter_count(m, n, d)}]
    if explicit is not None:
        certs.append({"kind": "labels outside every activation pattern's span (exact ranks)", **explicit})
    if decision is Decision.FALSE:
        certs.append({"kind": "full-rank Jacobian: the output map is a submersion here (open image)",
                      "W": best[1]["W"].tolist(), "b": best[1]["b"].tolist(), "v": best[1]["v"].tolist(),
                      "b0": best[1]["b0"]})
    trail = [Step("lifted the points: E = first n basis vectors, e = x; Assumptions 1-2 checked exactly",
                  uses="App. F", data={h.name: h.status for h in hyps}),
             Step("f_lifted = f_small exactly on random rational nets, and symbolically", uses="Eq. (29)",
                  data={"exact": identity_ok, "sympy": symbolic}),
             Step("outputs = sum_j D_j [X 1] u_j + b0: reachable labels in subspaces of dim <= m(d+1)+1",
                  uses="App. F (dimension count; ReLU homogeneity)", data={"pattern identity": pattern_ok}),
             Step("exact Jacobian ranks at random parameter points", uses="App. F", data={"max rank": jac}),
             Step("explicit labels outside every pattern span" if explicit else "pattern enumeration skipped",
                  uses="App. F", data={"result": explicit["unreachable"] if explicit else "2^(mT) too large"})]
    reason = ""
    if decision is Decision.FALSE:
        reason = (f"T = {T} <= m(d+1)+1 = {dim_bound}: an exact Jacobian of rank T shows an open set of "
                  f"labels is reachable, so 'generic labels unreachable for T > {threshold}' is false")
    elif decision is Decision.TRUE and T <= paper:
        reason = (f"T = {T} <= m(d+2)+1 = {paper} (paper's hypothesis unmet) but T > m(d+1)+1 = {dim_bound}: "
                  "the conclusion still holds (the paper's count has m redundant scalings)")
    return conclude("proposition3", decision,
                    claimed=f"an m={m} ReLU net cannot fit generic labels on T = {T} lifted points "
                            f"(hypothesis T > {threshold})",
                    measured=measured, hypotheses=hyps, certified=decision is not Decision.UNDECIDED,
                    method="exact rationals (fmpq) + sympy", certificates=certs, trail=trail,
                    margin=T - dim_bound, reason=reason,
                    refutation=LOW_THRESHOLD if threshold != paper else LIFTED_REACHABLE)


@negative_control("proposition3", "threshold lowered to m(d+1): at T = m(d+1)+1 the Jacobian has rank T",
                  expect=("refuted",))
def control_proposition3_threshold_too_low(*, prec: int = 128, seed: int = 0) -> Evidence:
    m, n, d = 1, 2, 3
    inst = make_instance(H=1, n=n, d=d, T=m * (d + 1) + 1, seed=seed)
    return check_proposition3(inst, prec=prec, seed=seed, m=m, threshold=m * (d + 1))
