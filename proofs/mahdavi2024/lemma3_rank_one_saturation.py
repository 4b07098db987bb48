"""Lemma 3 (App. D): the rank-one saturation matrix.

Statement
---------
Let every E^(t) have full row rank and J be a set of indices with |J| < the
Kruskal rank of the queries. There is a rank-one W' = v w^T with
    W' e^(t) = 0                                  for t in J,        (20)
    the n entries of E^(t) W' e^(t) pairwise distinct, for t not in J. (21)

Construction
------------
w = the projection of a Gaussian vector onto span{e^(j): j in J}^perp (so
w^T e^(j) = 0 and, a.s., w^T e^(t) != 0 off J since e^(t) is outside that
span by the Kruskal rank); v Gaussian, so E^(t) v has distinct entries a.s.

Checks
------
J = the first ``J_size`` examples (default r - 1, as Claim 2 uses it).

1. Hypotheses: rank E^(t) = n for every t, exact over Q (Assumption 2);
   Kruskal rank of the queries >= |J| + 1 (:mod:`verifier.arith.kruskal`: exact
   by exhaustion when C(T, |J|+1) is small, else evidence); n < d.
2. Exact construction (:func:`build_exact_saturation_vectors`): the SAME
   Gaussian g and v as :func:`build_saturation_vectors` draws, read as exact
   rationals, and w = g - Q_J^T (Q_J Q_J^T)^{-1} Q_J g in ``fmpq``.
   (20) is then checked as an identity: w^T e^(j) = 0 exactly for j in J,
   so W' e^(j) = v (w^T e^(j)) = 0.
3. (21) exactly: for t not in J the entries (w^T e^(t)) (E^(t) v)_i are
   exact rationals; the minimum over t of the smallest gap between sorted
   entries is an exact rational, certified > 0.  Lemma 3 says SOME W'
   works, so a draw whose gap is 0 is no counterexample: (g, v) is drawn
   again from the same stream, up to :data:`DRAWS` = 8 draws
   (``draws=``), then inconclusive with the reason.  Refuted only by a
   proof that NO W' works (:func:`no_w_prime_witness`, exact): a tied
   example with two equal tokens, or with e^(t) in span{e^(j): j in J}.
   ``orthogonalize=False`` pins W' = v g^T (a variant, one draw).
4. The builder's float (v, w) of the draw that worked (what Claim 2 uses):
   the gap of (21) in arb balls, certainly > 0, and max |w^T e^(j)| on J
   (about 1e-16, not 0: float (20) holds only up to rounding) -- reported,
   not deciding.  (The float w is normalized, the exact one is not: their
   gaps differ by ||w||.)

Not established
---------------
"Almost surely" is not checked: up to 8 draws of (g, v) per seed.  Other
choices of J are not covered.

References
----------
arXiv:2306.02010v3, App. D (Lemma 3, Eqs. 20-27), used in App. B.1 (Claim 2).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_lemma3(make_instance(H=1, n=3, d=6, T=6, seed=0)).verdict
'verified'
"""
from __future__ import annotations

import numpy as np
from flint import arb, fmpq, fmpq_mat

from verifier.arith.balls import ball_max, ball_min, to_arb_mat
from verifier.arith.compare import Decision, certainly_positive, workprec
from verifier.arith.exact import exact_rank, to_fmpq_mat, to_fmpq_vector
from verifier.data.instances import make_instance, rng_for
from verifier.errors import ConstructionFailed, InsufficientPrecision, InvalidInstance
from verifier.model import mha as model
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

from .assumption1_query_kruskal_rank import n_less_than_d
from .data_hypotheses import contexts_full_row_rank, queries_kruskal_at_least


def build_saturation_vectors(queries, J, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(v, w) with W' = v w^T and w orthogonal to the queries indexed by J."""
    queries = np.asarray(queries, dtype=np.float64)
    d = queries.shape[1]
    J = list(J)
    g = rng.standard_normal(d)
    v = rng.standard_normal(d)
    if J:
        QJ = queries[J].T  # d x |J|
        top = np.max(np.abs(QJ), axis=0)
        QJ = QJ / np.where(top > 0, top, 1.0)  # each query's largest entry 1: same span, no 1e-170 vs 1 scales
        U, s, _ = np.linalg.svd(QJ, full_matrices=False)
        if len(J) > d or s[-1] <= 1e-12 * s[0]:  # relative: the statements are scale-invariant
            raise ConstructionFailed("Lemma 3", "the queries in J are dependent: |J| >= their Kruskal rank")
        g0 = np.linalg.norm(g)
        g = g - U @ (U.T @ g)
        g = g - U @ (U.T @ g)  # second pass: re-orthogonalize (U is orthonormal: no scale involved)
        if np.linalg.norm(g) <= 1e-8 * g0:
            raise ConstructionFailed("Lemma 3", "the Gaussian draw fell in span{e^(j): j in J} (or |J| = d)")
    return v, g / np.linalg.norm(g)


def saturation_profile(contexts, queries, v, w, rows):
    """For each t in rows: the logits a'^(t) = E^(t) W' e^(t) = (w.e^(t)) E^(t) v,
    the argmax i*(t) and the gap g(t) = a'_(1) - a'_(2) between the largest
    two entries (Eq. 21 asks g > 0). Returns (argmax, gap, logits)."""
    rows = list(rows)
    E, v = np.asarray(contexts), np.asarray(v, dtype=np.float64)
    if model.is_shared(E) or E.shape[0] == 1:  # one E v for every example (not T copies of it)
        Ev = (E[0] @ v)[None, :]
    elif 2 * len(rows) >= E.shape[0] and E.flags.c_contiguous:  # one matrix-vector product, no copy of E
        T, n, d = E.shape
        Ev = (E.reshape(T * n, d) @ v).reshape(T, n)[rows]
    else:
        Ev = E[rows] @ v
    a = (np.asarray(queries)[rows] @ w)[:, None] * Ev  # (k, n)
    n = a.shape[1]
    if n > 1:  # the largest two entries per row (a partition, not a sort: O(n))
        top = np.partition(a, n - 2, axis=1)[:, n - 2:]
        gap = top[:, 1] - top[:, 0]
    else:
        gap = np.full(a.shape[0], np.inf)
    return np.argmax(a, axis=1), gap, a


def build_exact_saturation_vectors(queries, J, rng: np.random.Generator, *,
                                   orthogonalize: bool = True) -> tuple[np.ndarray, list]:
    """(v, w): v float64, w = P_perp g exactly over Q (a list of fmpq).

    g and v are drawn as :func:`build_saturation_vectors` draws them (g, then
    v), so from equal rng states both use the same g and v.  With
    ``orthogonalize=False`` w = g (a broken W', for the negative control).
    """
    queries = np.asarray(queries, dtype=np.float64)
    d = queries.shape[1]
    J = list(J)
    g, v = rng.standard_normal(d), rng.standard_normal(d)
    w = to_fmpq_vector(g)
    if J and orthogonalize:
        QJ = to_fmpq_mat(queries[J])  # |J| x d
        gq = fmpq_mat(d, 1, w)
        try:
            coeff = (QJ * QJ.transpose()).solve(QJ * gq)
        except ZeroDivisionError:
            raise ConstructionFailed("Lemma 3", "the queries in J are dependent over Q") from None
        w = (gq - QJ.transpose() * coeff).entries()
    return v, w


def exact_orthogonal_part(w, queries_J) -> list:
    """w - Q_J^T (Q_J Q_J^T)^{-1} Q_J w over Q: the float w (e.g. the builder's,
    orthogonal to J's queries only up to rounding) made EXACTLY orthogonal.
    Raises ConstructionFailed when J's queries are dependent over Q."""
    wq = to_fmpq_vector(np.asarray(w, dtype=np.float64))
    QJ = np.asarray(queries_J, dtype=np.float64)
    if QJ.shape[0] == 0:
        return wq
    Q = to_fmpq_mat(QJ)  # |J| x d
    col = fmpq_mat(len(wq), 1, wq)
    try:
        coeff = (Q * Q.transpose()).solve(Q * col)
    except ZeroDivisionError:
        raise ConstructionFailed("Lemma 3", "the queries in J are dependent over Q") from None
    return (col - Q.transpose() * coeff).entries()


def orthogonal_part_ball(w, queries_J):
    """The exact orthogonal part of :func:`exact_orthogonal_part` enclosed in
    balls (arb_mat column); InsufficientPrecision when Q_J Q_J^T is not
    certainly invertible at the working precision."""
    col = to_arb_mat(np.asarray(w, dtype=np.float64)[:, None])
    QJ = np.asarray(queries_J, dtype=np.float64)
    if QJ.shape[0] == 0:
        return col
    Q = to_arb_mat(QJ)
    try:
        return col - Q.transpose() * (Q * Q.transpose()).solve(Q * col)
    except ZeroDivisionError:
        raise InsufficientPrecision("Q_J Q_J^T not certainly invertible at this precision") from None


def _dot(w: list, x) -> fmpq:
    return sum((wi * xi for wi, xi in zip(w, to_fmpq_vector(x))), fmpq(0))


def exact_entries(E, e, v, w) -> list:
    """The n entries of E W' e = (w^T e) (E v), exact rationals."""
    alpha = _dot(w, e)
    Ev = (to_fmpq_mat(np.asarray(E)) * fmpq_mat(len(v), 1, to_fmpq_vector(v))).entries()
    return [alpha * x for x in Ev]


def min_gap(entries: list):
    """(smallest difference of sorted entries, the tied/closest pair of indices)."""
    if len(entries) < 2:
        return None, ()
    order = sorted(range(len(entries)), key=lambda i: entries[i])
    gaps = [(entries[order[i + 1]] - entries[order[i]], (order[i], order[i + 1])) for i in range(len(order) - 1)]
    return min(gaps, key=lambda p: p[0])


def ball_gap(E, e, v, w) -> arb:
    """Eq. (21)'s gap for float v, w in arb balls: a'_(1) - a'_(2)."""
    alpha = sum((arb(float(x)) * arb(float(y)) for x, y in zip(w, e)), arb(0))
    Ev = [sum((arb(float(x)) * arb(float(y)) for x, y in zip(row, v)), arb(0)) for row in np.asarray(E)]
    a = [alpha * x for x in Ev]
    i = int(np.argmax([float(x.mid()) for x in a]))
    return a[i] - ball_max([a[j] for j in range(len(a)) if j != i])


#: draws of (g, v) before Lemma 3 is left inconclusive (a failed draw is no counterexample)
DRAWS = 8

#: no W' = v w^T satisfies (21): certified for every admissible choice
NO_W_PRIME = Refutation("no-choice-works", "an example t off J with e^(t) in span{e^(j): j in J} exactly (then "
                        "w^T e^(t) = 0 for every w orthogonal to J's queries, and the n >= 2 entries of "
                        "E^(t) W' e^(t) are all 0) or with two equal tokens in E^(t) (equal entries for every v): "
                        "no W' = v w^T satisfies (21)")
#: (20) or (21) fails for the W' the caller pinned (w = g, not made orthogonal)
PINNED_W = Refutation("counterexample", "(20) or (21) fails exactly for THIS W' = v g^T",
                      variant="orthogonalize=False: W' pinned to w = g, the Gaussian draw itself")
#: every draw failed (21), and no proof that no W' works
DRAWS_FAILED = Refutation("failed-construction", f"Eq. (21) failed exactly for each of the {DRAWS} draws of "
                          "(g, v), and no proof that no W' works was found")


def eq21_gaps(E, e, v, w, rest) -> list:
    """(gap, t, tied pair) of Eq. (21) for each t in ``rest`` (n >= 2), exact rationals."""
    gaps = []
    for t in rest:
        gap, pair = min_gap(exact_entries(E[t], e[t], v, w))
        if gap is not None:
            gaps.append((gap, t, pair))
    return gaps


def no_w_prime_witness(E, e, J, t) -> str | None:
    """Why NO W' = v w^T with w^T e^(j) = 0 on J can separate example t's
    entries (Eq. 21), decided exactly over Q; None when some W' may."""
    E_t = np.asarray(E[t])
    if E_t.shape[0] < 2:
        return None
    for i in range(E_t.shape[0]):
        for k in range(i):
            if np.array_equal(E_t[i], E_t[k]):  # float equality is rational equality
                return f"tokens {k} and {i} of E^({t}) are equal: (E^({t}) v)_{k} = (E^({t}) v)_{i} for every v"
    Q = np.asarray(e, dtype=np.float64)
    if J and exact_rank(to_fmpq_mat(Q[list(J) + [t]])) == exact_rank(to_fmpq_mat(Q[list(J)])):
        return (f"e^({t}) lies in span{{e^(j): j in J}} exactly: w^T e^({t}) = 0 for every admissible w, so "
                f"every entry of E^({t}) W' e^({t}) is 0")
    return None


@statement("lemma3",
           requires=("n < d", "Assumption 2", "|J| < Kruskal rank of the queries"), exists=True,
           refutes=(NO_W_PRIME, PINNED_W, DRAWS_FAILED),
           margin="smallest gap between the two largest entries of E W' e off J (exact)", H=1, n=3, d=6, T=6)
def check_lemma3(instance, *, prec: int = 128, seed: int = 0, J_size: int | None = None,
                 orthogonalize: bool = True, exhaustive_limit: int = 20000, draws: int = DRAWS,
                 **options) -> Evidence:
    """Lemma 3 with J = the first ``J_size`` examples (default r - 1); up to
    ``draws`` draws of (g, v) (one when ``orthogonalize=False`` pins W')."""
    E, e = instance.contexts, np.asarray(instance.queries)
    T, n = instance.T, instance.n
    k = min(instance.r - 1, T - 1) if J_size is None else int(J_size)
    if not 0 <= k <= T:
        raise InvalidInstance(f"J_size = {k} must be in 0..T = {T}")
    if int(draws) < 1:
        raise InvalidInstance(f"draws = {draws} must be >= 1")
    J, rest = list(range(k)), list(range(k, T))
    hyps = [n_less_than_d(instance), contexts_full_row_rank(instance, range(T)),
            queries_kruskal_at_least(instance, k + 1, f"|J| = {k} < Kruskal rank of the queries",
                                     exhaustive_limit=exhaustive_limit, seed=seed)]
    trail = [Step(f"J = first {k} examples; hypotheses checked", uses="Lemma 3 hypotheses",
                  data={h.name: h.status for h in hyps})]
    claimed = "W' = v w^T: W' e^(j) = 0 on J (20), distinct entries off J (21)"
    rng = rng_for(seed, "lemma3")
    tries, impossible = [], None
    for attempt in range(int(draws) if orthogonalize else 1):
        state = rng.bit_generator.state
        try:
            v, w = build_exact_saturation_vectors(e, J, rng, orthogonalize=orthogonalize)
        except ConstructionFailed as exc:
            trail.append(Step(f"construction stopped: {exc}", uses=exc.step))
            return conclude("lemma3", Decision.UNDECIDED, claimed=claimed, measured={"|J|": k}, hypotheses=hyps,
                            method="exact rationals", instance=instance.summary(), trail=trail,
                            reason=f"construction failed at {exc.step}: {exc}")
        kills = [_dot(w, e[j]) for j in J]
        eq20 = all(x == 0 for x in kills)
        if orthogonalize and not eq20:  # pragma: no cover - engine guard: w = P_perp g exactly
            raise RuntimeError("the exact projection left w^T e^(j) != 0 on J")
        gaps = eq21_gaps(E, e, v, w, rest)
        worst = min(gaps, key=lambda p: p[0]) if gaps else None
        eq21 = worst is None or worst[0] > 0
        tries.append({"draw": attempt + 1, "(21) exact": eq21,
                      "min gap": str(worst[0]) if worst else None, "at example": worst[1] if worst else None})
        if eq21 or not orthogonalize:
            break
        impossible = next((why for t in sorted({g[1] for g in gaps if g[0] == 0})
                           if (why := no_w_prime_witness(E, e, J, t))), None)
        if impossible:
            break
    bad20 = [j for j, x in zip(J, kills) if x != 0]
    certs = [{"kind": "Eq. (20) as an identity over Q", "w^T e^(j) for j in J": [str(x) for x in kills],
              "holds": eq20, "w": "P_perp g, exact rationals",
              "max denominator bits of w": max((x.q.bit_length() for x in w), default=0)},
             {"kind": "Eq. (21) exactly: min over t not in J of the smallest gap of E^(t) W' e^(t)",
              "min gap": str(worst[0]) if worst else "n/a (no t off J or n = 1)",
              "min gap (float)": float(worst[0].p) / float(worst[0].q) if worst else None,
              "attained at example": worst[1] if worst else None,
              "tokens": list(worst[2]) if worst else None, "holds": eq21, "draw": len(tries)}]
    if len(tries) > 1 or impossible:
        certs.append({"kind": f"draws of (g, v) (at most {draws}; a failed draw is not a counterexample)",
                      "draws": tries, "no W' works": impossible})
    # The float W' that Claim 2 actually uses (the same draw): (21) in balls, (20) up to rounding.
    replay = np.random.Generator(type(rng.bit_generator)())
    replay.bit_generator.state = state
    try:
        vf, wf = build_saturation_vectors(e, J, replay) if orthogonalize else (v, None)
        float_failed = None
    except ConstructionFailed as exc:  # e.g. |J| = d: no float direction off the span (the exact one decided)
        vf, wf, float_failed = v, None, str(exc)
    measured = {"|J|": k, "saturated examples": len(rest), "(20) exact": eq20, "(21) exact": eq21,
                "draws": len(tries)}
    if float_failed:
        measured["float W' not built"] = float_failed
    if worst:
        measured["min gap (exact, as float)"] = certs[1]["min gap (float)"]
    if wf is not None and rest and n > 1 and eq21:
        with workprec(prec):
            bgaps = [ball_gap(E[t], e[t], vf, wf) for t in rest]
            bmin = ball_min(bgaps)
            bdec = certainly_positive(bmin)
        certs.append({"kind": "builder's float W' (Claim 2 uses it): Eq. (21) gap in arb balls",
                      "min gap (ball)": str(bmin), "certainly > 0": bdec.value, "prec_bits": prec,
                      "max |w^T e^(j)| on J (float, rounding only)":
                          float(np.max(np.abs(e[J] @ wf))) if J else 0.0,
                      "same v as the exact construction": bool(np.array_equal(vf, v))})
        measured["float W' gap > 0 (balls)"] = bdec.value
    trail += [Step("w = P_perp g over Q; w^T e^(j) = 0 checked exactly", uses="Lemma 3, Eq. (20)",
                   data={"holds": eq20, "failing j": bad20[:5]}),
              Step(f"entries of E^(t) W' e^(t) exact; smallest gap over t not in J ({len(tries)} draw(s))",
                   uses="Lemma 3, Eq. (21)", data={"holds": eq21, "min gap": certs[1]["min gap (float)"],
                                                   "draws": tries})]
    if eq20 and eq21:
        decision, refutation, reason = Decision.TRUE, None, ""
    elif not orthogonalize:
        decision, refutation = Decision.FALSE, PINNED_W
        reason = (f"Eq. (20) fails: w^T e^(j) != 0 exactly for j in {bad20[:5]}" if not eq20 else
                  f"Eq. (21) fails: entries {list(worst[2])} of E^({worst[1]}) W' e^({worst[1]}) are equal")
    elif impossible:
        decision, refutation, reason = Decision.FALSE, NO_W_PRIME, f"no W' satisfies (21): {impossible}"
    else:
        decision, refutation = Decision.FALSE, DRAWS_FAILED
        reason = (f"Eq. (21) failed for each of the {len(tries)} draws (last: entries {list(worst[2])} of "
                  f"E^({worst[1]}) W' e^({worst[1]}) equal); another --seed draws other (g, v)")
    return conclude("lemma3", decision, claimed=claimed, measured=measured, hypotheses=hyps, certified=True,
                    method="exact rationals (+ arb balls)", prec_bits=prec,
                    margin=measured.get("min gap (exact, as float)") if eq21 else None, certificates=certs,
                    instance=instance.summary(), trail=trail, reason=reason, refutation=refutation)


@negative_control("lemma3", "w not orthogonal to e^(j) (the Gaussian g itself): Eq. (20) fails", expect=("refuted",))
def control_lemma3_w_not_orthogonal(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_lemma3(make_instance(H=1, n=3, d=6, T=6, seed=seed), prec=prec, seed=seed, orthogonalize=False)


@negative_control("lemma3", "token 2 = token 1 in every context: (21) fails with gap 0, "
                  "but Assumption 2 (full row rank) is refuted first", expect=("hypotheses-unmet",))
def control_lemma3_repeated_token(*, prec: int = 128, seed: int = 0) -> Evidence:
    inst = make_instance(H=1, n=3, d=6, T=6, degenerate="rank-deficient-context", seed=seed)
    return check_lemma3(inst, prec=prec, seed=seed)
