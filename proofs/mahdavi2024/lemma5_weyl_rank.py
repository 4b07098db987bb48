"""Lemma 5 (App. D, Weyl): a perturbation below the smallest nonzero singular value keeps the rank.

Statement
---------
For real matrices A, B of the same shape,

    ||A - B||_2 < sigma_min^+(A)   =>   rank B >= rank A,

sigma_min^+ the smallest NONZERO singular value (Weyl: |sigma_i(B) -
sigma_i(A)| <= ||A - B||_2, so sigma_i(B) > 0 for i <= rank A).  App. B.2
applies it to Z_inf and Z_c.  The inequality must be strict: with
B = A - sigma_min^+ u v^T (u, v its singular vectors) ||A - B||_2 equals
sigma_min^+(A) and rank B = rank A - 1.

Construction
------------
Pairs (A, B), all exact rationals (float64 entries are dyadic):
* from the instance: A = E^(t) (t < 2); B = A + Delta with a Gaussian Delta
  scaled to ||Delta||_2 = sigma_min/2, and the adversarial
  B = A - (sigma_min - delta) u v^T, delta = 1e-6 sigma_min (float SVD);
* a rational family from ``seed``: A = U D V^T with U, V rational
  Householder reflections (I - 2 x x^T / x^T x, exactly orthogonal) and
  D = diag(sigma_1..sigma_k, 0, ..), so rank A = k (rank deficient
  included) and the singular structure is exact;
  B = A - (sigma_k - sigma_k 2^-j) u_k v_k^T, j in {1, 20, 60}: just inside.
* the equality edge (``edge=True``): j = infinity, B = A - sigma_k u_k v_k^T.

Checks
------
1. rank A and rank B exactly over Q; rank B >= rank A also certified by a
   ball minor (:func:`verifier.arith.rank.certify_rank_lower_bound`).
2. The hypothesis, decided rigorously: the squared singular values are the
   roots of the characteristic polynomial of the exact Gram matrix (A A^T
   or A^T A), factored over Q (flint).  A linear factor gives an exact
   rational root; other roots are isolated in arb balls (``complex_roots``;
   two roots of one irreducible factor with the same isolating index are
   equal, roots of different irreducible factors never are, so the ladder
   decides).  ||A-B||_2 < sigma_min^+(A) iff every root mu of (A-B)'s Gram
   is < every nonzero root rho of A's Gram.  So equality is decided
   exactly.  (For min(m, n) > ``CHARPOLY_LIMIT``: balls only,
   :func:`verifier.arith.singular_values.sigma_min_lower_bound` vs
   :func:`verifier.arith.balls.spectral_norm_upper`.)  The ball bounds are also
   reported for every pair.
3. ``strict=False`` checks the false variant (<=): refuted at the edge.

Not established
---------------
Weyl's theorem itself is not re-proved; finitely many pairs are checked.

References
----------
arXiv:2306.02010v3, App. D (Lemma 5), App. B.2; Horn & Johnson (1990).

>>> from verifier.data.instances import make_instance, rng_for
>>> check_lemma5(make_instance(H=1, n=3, d=5, T=2, seed=0)).verdict
'verified'
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat, fmpq, fmpq_mat, fmpq_poly

from verifier.arith.balls import spectral_norm_upper, to_arb_mat
from verifier.arith.compare import Decision, certainly_less, lower, upper, workprec
from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.arith.rank import certify_rank_lower_bound
from verifier.arith.singular_values import sigma_min_lower_bound
from verifier.data.instances import rng_for
from verifier.errors import InsufficientPrecision
from verifier.statements.evidence import Evidence, Hypothesis, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

CHARPOLY_LIMIT = 10  # min(m, n) up to this: the exact Gram characteristic polynomial decides
EXACT_ENTRIES = 6000  # m n up to this: exact ranks (else a ball minor for rank B >= rank A)
MAX_PREC = 4096
INSIDE_EXPONENTS = (1, 20, 60)


@dataclass(frozen=True)
class GramRoot:
    """A squared singular value: root ``index`` (by size) of the irreducible ``factor``."""

    factor: fmpq_poly
    index: int
    exact: fmpq | None

    def ball(self, prec: int) -> arb:
        if self.exact is not None:
            return arb(self.exact)
        with workprec(prec):
            # isolated (disjoint) balls ordered by their EXACT midpoints: float64 roundings may tie (a root
            # below 1e-308 reads 0), and the index must name the same root at every precision (issue 32)
            roots = sorted((c.real for c, _ in self.factor.complex_roots()), key=lambda x: x.mid())
        return roots[self.index]


def gram_roots(M: fmpq_mat) -> list[GramRoot]:
    """Every squared singular value of M (with multiplicity), zeros included."""
    G = M * M.transpose() if M.nrows() <= M.ncols() else M.transpose() * M
    out = []
    for f, mult in G.charpoly().factor()[1]:
        if f.degree() == 1:
            c = f.coeffs()
            roots = [GramRoot(f, 0, -c[0] / c[1])]
        else:
            roots = [GramRoot(f, i, None) for i in range(f.degree())]
        out += roots * int(mult)
    return out


def compare_roots(mu: GramRoot, rho: GramRoot, *, prec: int = 128) -> str | None:
    """'<', '=' or '>' between two squared singular values (None if undecided at MAX_PREC)."""
    if mu.exact is not None and rho.exact is not None:
        return "<" if mu.exact < rho.exact else "=" if mu.exact == rho.exact else ">"
    if mu.factor == rho.factor and mu.index == rho.index:
        return "="
    bits = prec
    while bits <= MAX_PREC:
        a, b = mu.ball(bits), rho.ball(bits)
        with workprec(bits):
            if certainly_less(a, b) is Decision.TRUE:
                return "<"
            if certainly_less(b, a) is Decision.TRUE:
                return ">"
        bits *= 2
    return None


def perturbation_hypothesis(A: fmpq_mat, B: fmpq_mat, *, strict: bool = True, prec: int = 128) -> tuple[Decision, dict]:
    """Decide ||A - B||_2 < sigma_min^+(A) (or <= when not ``strict``) exactly / rigorously."""
    rho = [r for r in gram_roots(A) if not (r.exact is not None and r.exact == 0)]
    if not rho:
        return Decision.TRUE, {"sigma_min^+(A)": "none (A = 0): the hypothesis is vacuous"}
    mu = gram_roots(A - B)
    rel = [compare_roots(m, r, prec=prec) for m in mu for r in rho]
    bad = {">"} if not strict else {">", "="}
    if any(x in bad for x in rel):
        dec = Decision.FALSE
    elif all(x is not None for x in rel):
        dec = Decision.TRUE
    else:
        dec = Decision.UNDECIDED
    with workprec(prec):
        s2 = min((r.ball(prec) for r in rho), key=lambda x: x.mid())
        n2 = max((m.ball(prec) for m in mu), key=lambda x: x.mid())
        info = {"sigma_min^+(A)": str(s2.sqrt()), "||A - B||_2": str(n2.sqrt()), "equality (exact)": "=" in rel}
    info["relation"] = {Decision.TRUE: "<" if strict else "<=", Decision.FALSE: ">=" if strict else ">",
                        Decision.UNDECIDED: "?"}[dec]
    return dec, info


def householder(x) -> fmpq_mat:
    """I - 2 x x^T / (x^T x): an exactly orthogonal rational matrix."""
    x = [fmpq(int(v)) for v in x]
    nn = sum((v * v for v in x), fmpq(0))
    m = len(x)
    return fmpq_mat(m, m, [fmpq(int(i == j)) - 2 * x[i] * x[j] / nn for i in range(m) for j in range(m)])


def rational_svd_pairs(rng: np.random.Generator, *, count: int = 4, exponents=INSIDE_EXPONENTS, edge: bool = False):
    """(A, B, label): A = U D V^T exact; B = A - (s_k - s_k 2^-j) u_k v_k^T (j = inf when ``edge``)."""
    out = []
    for _ in range(count):
        m = int(rng.integers(2, 5))
        p = m + int(rng.integers(0, 3))
        k = int(rng.integers(1, m + 1))
        U = householder(rng.integers(1, 4, m) * rng.choice([-1, 1], m))
        V = householder(rng.integers(1, 4, p) * rng.choice([-1, 1], p))
        sig = sorted((fmpq(int(a), int(b)) for a, b in zip(rng.integers(1, 10, k), rng.integers(1, 4, k))),
                     reverse=True)
        D = fmpq_mat(m, p, [sig[i] if i == j and i < k else fmpq(0) for i in range(m) for j in range(p)])
        A = U * D * V.transpose()
        uv = fmpq_mat(m, 1, [U[i, k - 1] for i in range(m)]) * fmpq_mat(1, p, [V[j, k - 1] for j in range(p)])
        for j in ([None] if edge else exponents):
            step = sig[-1] if j is None else sig[-1] - sig[-1] / fmpq(2) ** j
            what = "edge" if j is None else f"delta = s 2^-{j}"
            out.append((A, A - uv * step, f"rational {m}x{p}, rank {k}, {what}"))
    return out


def instance_pairs(instance, rng: np.random.Generator, *, contexts: int = 2):
    """(A, B, label) with A = E^(t): a random B inside and the adversarial rank-one B."""
    out = []
    for t in range(min(contexts, instance.T)):
        A = np.asarray(instance.contexts[t], dtype=np.float64)
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        k = int(np.sum(s > 1e-12 * s[0]))
        if k == 0:
            continue
        D = rng.standard_normal(A.shape)
        out.append((A, A + D * (0.5 * s[k - 1] / np.linalg.norm(D, 2)), f"E^({t}) + random, ||D|| = sigma/2"))
        out.append((A, A - (s[k - 1] * (1 - 1e-6)) * np.outer(U[:, k - 1], Vt[k - 1]),
                    f"E^({t}) - (sigma - 1e-6 sigma) u v^T"))
    return out


def check_pair(A, B, label: str, *, strict: bool, prec: int) -> dict:
    """Hypothesis, conclusion and their certificates for one pair."""
    Aq, Bq = to_fmpq_mat(A), to_fmpq_mat(B)
    small = min(Aq.nrows(), Aq.ncols()) <= CHARPOLY_LIMIT
    exact = Aq.nrows() * Aq.ncols() <= EXACT_ENTRIES
    rA = exact_rank(Aq) if exact else certify_rank_lower_bound(A, prec=prec).certified_k
    rB = exact_rank(Bq) if exact else None
    row = {"pair": label, "shape": [Aq.nrows(), Aq.ncols()], "rank A" + ("" if exact else " >= (balls)"): rA,
           "rank B (exact)": rB}
    Ab = A if isinstance(A, np.ndarray) else arb_mat(Aq)
    Bb = B if isinstance(B, np.ndarray) else arb_mat(Bq)
    with workprec(prec):
        norm_up = spectral_norm_upper(to_arb_mat(Ab) - to_arb_mat(Bb))
        row["||A - B||_2 <= (balls)"] = upper(norm_up)
        try:  # sigma_min of a full-row-rank A, else of A^T when full column rank
            M = Ab if rA == Aq.nrows() else (Ab.T if isinstance(Ab, np.ndarray) else Ab.transpose()) \
                if rA == Aq.ncols() else None
            sig_lo = sigma_min_lower_bound(M, prec=prec, squarings=6) if M is not None else None
        except InsufficientPrecision:
            sig_lo = None
        # an upper bound below a lower bound proves the hypothesis; the converse proves nothing
        ball_dec = Decision.TRUE if sig_lo is not None and certainly_less(norm_up, sig_lo) is Decision.TRUE \
            else Decision.UNDECIDED
        row["sigma_min(A) >= (balls)"] = None if sig_lo is None else lower(sig_lo)
    if small:
        hdec, info = perturbation_hypothesis(Aq, Bq, strict=strict, prec=prec)
        row.update(info)
    else:
        hdec = ball_dec if strict else Decision.UNDECIDED
    row["hypothesis"] = hdec.value
    row["ball route decides the hypothesis"] = ball_dec.value
    lb = certify_rank_lower_bound(Bb, k=rA, prec=prec) if rA else None
    row["rank B >= rank A (ball minor)"] = "trivial" if lb is None else lb.decision.value
    row["conclusion"] = (rB >= rA) if exact else (lb is None or lb.decision is Decision.TRUE) or None
    return row


#: a pair within the hypothesis whose rank drops, exactly over Q
RANK_DROP = Refutation("counterexample", "a pair (A, B) with ||A - B||_2 < sigma_min^+(A) (exact Gram "
                       "characteristic polynomials) and rank B < rank A exactly over Q")
#: the non-strict variant at the equality edge
NON_STRICT = Refutation("counterexample", "a pair with ||A - B||_2 = sigma_min^+(A) and rank B < rank A exactly",
                        variant="strict=False: the hypothesis with <=")


def check_weyl_pairs(pairs, *, strict: bool = True, prec: int = 128, instance=None, statement_id="lemma5") -> Evidence:
    rows = [check_pair(A, B, label, strict=strict, prec=prec) for A, B, label in pairs]
    hstat = [r["hypothesis"] for r in rows]
    status = "refuted" if "false" in hstat else "certified" if all(h == "true" for h in hstat) else "evidence"
    op = "<" if strict else "<="
    hyp = Hypothesis(f"||A - B||_2 {op} sigma_min^+(A) for each pair", status,
                     f"{hstat.count('true')} certified, {hstat.count('false')} refuted, "
                     f"{hstat.count('undecided')} undecided of {len(rows)}")
    concl = [r["conclusion"] for r in rows]
    decision = Decision.TRUE if all(c is True for c in concl) else Decision.FALSE if False in concl \
        else Decision.UNDECIDED
    fails = [r for r in rows if r["conclusion"] is False]
    return conclude(
        statement_id, decision, claimed=f"||A - B||_2 {op} sigma_min^+(A) => rank B >= rank A",
        measured={"pairs": len(rows), "rank drops": len(fails), "hypotheses certified": hstat.count("true"),
                  "first drop": fails[0] if fails else None},
        hypotheses=[hyp], certified=True, method="exact rationals (rank, Gram charpoly) + arb balls",
        prec_bits=prec, certificates=rows[:8] + fails[:2], instance=instance.summary() if instance else {},
        trail=[Step(f"{len(rows)} pairs (A, B); hypothesis decided by the exact Gram characteristic polynomials",
                    uses="Lemma 5 hypothesis", data={"status": status}),
               Step("rank B vs rank A exactly over Q (and a ball minor)", uses="Lemma 5 (Weyl)",
                    data={"rank drops": len(fails)})],
        reason="" if decision is not Decision.FALSE or status == "refuted" else
        f"rank drops on {fails[0]['pair']}: rank B = {fails[0]['rank B (exact)']} < {fails[0]['rank A']}",
        refutation=RANK_DROP if strict else NON_STRICT)


INSTANCE_ENTRIES = 20000  # n d at most this: the instance's contexts are used


@statement("lemma5", refutes=(RANK_DROP, NON_STRICT),
           requires=("||A - B||_2 < sigma_min^+(A)",),
           measure="rank drops", H=1, n=3, d=5, T=2)
def check_lemma5(instance, *, prec: int = 128, seed: int = 0, count: int = 4, **options) -> Evidence:
    """Lemma 5 on the instance's contexts and a rational family with exact singular structure."""
    rng = rng_for(seed, "lemma5")
    # the instance's contexts when exact arithmetic on them is affordable
    # (GPT-2's 1024 x 768 contexts are not: the rational family still runs)
    small = instance.n * instance.d <= INSTANCE_ENTRIES
    pairs = (instance_pairs(instance, rng) if small else []) + rational_svd_pairs(rng, count=count)
    return check_weyl_pairs(pairs, prec=prec, instance=instance)


def edge_pairs(seed: int = 0):
    """A = diag(3, 2, 1) (3 x 4) and random rational ones, B = A - sigma_min u v^T: ||A - B|| = sigma_min."""
    A = fmpq_mat([[3, 0, 0, 0], [0, 2, 0, 0], [0, 0, 1, 0]])
    B = fmpq_mat([[3, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]])
    return [(A, B, "diag(3, 2, 1) - 1 e3 e3^T (edge)")] + rational_svd_pairs(rng_for(seed, "lemma5"), count=2,
                                                                              edge=True)


@negative_control("lemma5", "equality edge ||A - B||_2 = sigma_min^+(A): strict hypothesis unmet, and rank drops",
                  expect=("hypotheses-unmet",))
def control_lemma5_equality_edge(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_weyl_pairs(edge_pairs(), prec=prec)


@negative_control("lemma5", "non-strict variant (<=) at the equality edge: rank B = rank A - 1", expect=("refuted",))
def control_lemma5_non_strict(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_weyl_pairs(edge_pairs(), strict=False, prec=prec)
