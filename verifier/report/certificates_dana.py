"""The certificates of Dana et al.'s certified findings (exporters of :mod:`verifier.report.certificates`):
Thm. 2 (a negative right-hand side), Lemma 2 (the head-difference cap) and Thm. 1's capacity reading (the
Pinsker + Eckart-Young floor of every AoT).  Floats and mpmath choose what to claim, the same on any machine;
the re-checker proves it."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np

from verifier.arith.exact import exact_rank, to_fmpq_mat
from verifier.data.sequences import from_sequences
from verifier.report.certificate_format import certificate, encode, round_down, round_up
from verifier.statements.findings import FINDINGS, run_witness

# -- Dana et al. ------------------------------------------------------------------------------------------------


def thm2_certificate(inst, rhs: float, *, about: str) -> dict:
    """The right-hand side of Thm. 2 on a sequence instance is < a claimed q <= 0 (``rhs``: the checker's value)."""
    return certificate(
        "dana-thm2-negative-rhs",
        {"rhs_below": round_up(rhs)},
        {
            "N": int(inst.N),
            "d": int(inst.d),
            "T0": int(inst.T0),
            "conditionals": encode(inst.conditionals),
            "weights": encode(inst.weights),
        },
        about=about,
    )


def lemma2_certificate(N: int, S: int, d: int, H: int, seqs=None, *, about: str) -> dict:
    """Lemma 2's cap on the support ``seqs`` (default: all N^S sequences), formal ranks computed exactly."""
    seqs = [list(s) for s in itertools.product(range(N), repeat=S)] if seqs is None else [list(s) for s in seqs]

    def formal(t, s):
        v = [0] * (N + S)
        v[t[s]] += 1
        v[N + s] += 1
        return v

    R = exact_rank(to_fmpq_mat(np.array([formal(t, s) for t in seqs for s in range(S)])))
    diffs = [[a - b for a, b in zip(formal(t, s), formal(t, S - 1))] for t in seqs for s in range(S - 1)]
    D = exact_rank(to_fmpq_mat(np.array(diffs))) if diffs else 0
    claim = {"T0": len(seqs), "R": R, "D": D, "cap": min(d, R) + (H - 1) * min(d, D), "target": min(len(seqs), H * d)}
    return certificate("dana-lemma2-rank-cap", claim, {"N": N, "S": S, "d": d, "H": H, "sequences": seqs}, about=about)


def _centered_logs(P) -> list:
    """Each row's logs minus their mean, in mpmath at 40 digits (pure Python: the same digits on any machine)."""
    with mpmath.workdps(40):
        L = [[mpmath.log(mpmath.mpf(x)) for x in row] for row in P]
        return [[v - mpmath.fsum(row) / len(row) for v in row] for row in L]


def _greedy_columns(X: list, count: int) -> list:
    """Pivoted Gram-Schmidt on the columns of X (lists of mpf): the largest residual first, the lowest index on a
    tie (deterministic: no LAPACK pivoting to break ties another way on another machine)."""
    with mpmath.workdps(40):
        residual = [list(col) for col in X]
        chosen = []
        for _ in range(min(count, len(X))):
            norms = [mpmath.fsum(v * v for v in col) if j not in chosen else -1 for j, col in enumerate(residual)]
            j = max(range(len(norms)), key=lambda i: (norms[i], -i))
            if norms[j] <= 0:
                break
            chosen.append(j)
            q = [v / mpmath.sqrt(norms[j]) for v in residual[j]]
            residual = [
                [v - mpmath.fsum(a * b for a, b in zip(q, col)) * u for v, u in zip(col, q)] for col in residual
            ]
        return sorted(chosen)


def _smallest_eigenvalue(X: list, columns: list):
    with mpmath.workdps(40):
        G = mpmath.matrix([[mpmath.fsum(a * b for a, b in zip(X[i], X[j])) for j in columns] for i in columns])
        return min(mpmath.eigsy(G, eigvals_only=True))


def thm1_floor_certificate(inst, *, about: str, conditionals=None) -> dict:
    """Every AoT of the instance's sizes stays above kappa0 > 0 = d_KL(pi, L): per last-token group, k+1
    centered log-target columns (pivoted Gram-Schmidt) and alpha <= 0.9 lambda_min of their Gram, a dyadic of 8
    bits (mpmath at 40 digits chooses, the same on any machine; the re-checker proves); kappa0 the largest
    1.05-step with N sum delta^2 < 0.9 sum alpha (Python floats, math.fsum: correctly rounded, any machine)."""
    N, T0 = int(inst.N), int(inst.T0)
    k = min(int(inst.H) * int(inst.d_h), int(inst.d))
    P = np.asarray(inst.conditionals, dtype=np.float64)
    C = _centered_logs(P.tolist())
    last = np.asarray(inst.sequences)[:, -1]
    groups, members = [], []
    for q in np.unique(last):
        mem = np.flatnonzero(last == q).tolist()
        if len(mem) < k + 2:
            continue
        with mpmath.workdps(40):
            mean = [mpmath.fsum(C[m][i] for m in mem) / len(mem) for i in range(N)]
            X = [[C[m][i] - mean[i] for i in range(N)] for m in mem]  # the group's columns, each of length N
        J = _greedy_columns(X, k + 1)
        if len(J) < k + 1:
            continue
        lam = _smallest_eigenvalue(X, J)
        if lam <= 0:
            continue
        e = int(mpmath.floor(mpmath.log(lam * mpmath.mpf(0.9), 2))) - 7
        alpha = Fraction(int(mpmath.floor(lam * mpmath.mpf(0.9) / mpmath.ldexp(1, e)))) * Fraction(2) ** e
        groups.append({"last_token": int(q), "columns": J, "alpha": str(alpha)})
        members += mem
    if not groups:
        raise ValueError("no last-token group large enough for a floor")
    w = [float(x) for x in np.asarray(inst.weights, dtype=np.float64)]
    total = math.fsum(w)
    pi, pmin = [x / total for x in w], [min(row) for row in P.tolist()]
    budget = 0.9 * math.fsum(float(Fraction(g["alpha"])) for g in groups)

    def ok(kappa):
        etas = [math.sqrt(kappa / (2 * pi[m])) for m in members]
        gaps = [pmin[m] - eta for m, eta in zip(members, etas)]
        return all(g > 0 for g in gaps) and N * math.fsum((eta / g) ** 2 for eta, g in zip(etas, gaps)) < budget

    kappa = 1.0
    exact_P = encode(P) if conditionals is None else [[str(Fraction(x)) for x in row] for row in conditionals]
    while not ok(kappa) and kappa > 1e-300:
        kappa /= 4
    while ok(kappa * 1.05):
        kappa *= 1.05
    data = {
        "N": N,
        "S": int(inst.S),
        "d": int(inst.d),
        "d_h": int(inst.d_h),
        "H": int(inst.H),
        "T0": T0,
        "sequences": np.asarray(inst.sequences).tolist(),
        "weights": encode(np.asarray(w)),
        "conditionals": exact_P,
        "groups": groups,
    }
    return certificate("dana-thm1-capacity-floor", {"kappa0": round_down(kappa), "k": k}, data, about=about)


def _seq(seqs, N, d, d_h, H, conditionals):
    return from_sequences(
        np.array(seqs), N=N, conditionals=np.array(conditionals, dtype=float), d=d, d_h=d_h, H=H, kind="control"
    )


def _witness_value(key: str, control: str, measure: str) -> float:
    """A measured value of the finding's witness named by its control ('' for the drawn instance)."""
    witness = next(w for w in FINDINGS[key].witnesses if w.control == control)
    return float(run_witness(witness).measured[measure])


def _built(sid: str, **options):
    from verifier.statements.runner import build_instance

    return build_instance(sid, **options)


def dana_thm2_certificates() -> dict:
    key, P = "dana_thm2.c_below_half", [[0.5, 0.25, 0.25]]
    drawn = _built("dana_thm2", N=3, S=2, d=2, H=1, conditionals="positive", seed=0)
    return {
        "neg_thm2_C": thm2_certificate(
            _seq([[0, 0]], 3, 2, None, 1, P),
            _witness_value(key, "neg_thm2_C", "RHS"),
            about=(
                "Dana et al. Thm. 2 (p. 7) as printed: N = 3, d = 2, pi = (1/2, 1/4, 1/4) gives C = 4.71 >= 1/2 and a "
                "negative right-hand side, below d_KL(pi, L) >= 0 (finding dana_thm2.c_below_half, control neg_thm2_C)"
            ),
        ),
        "drawn": thm2_certificate(
            drawn,
            _witness_value(key, "", "RHS"),
            about=(
                "Dana et al. Thm. 2: a drawn instance of the family (N = 3, S = 2, d = 2, positive conditionals, seed 0)"
            ),
        ),
        "c_below_one": thm2_certificate(
            _seq([[0, 0]], 3, 90, None, 0, P),
            _witness_value(key, "hypothesis weakened to C < 1", "RHS"),
            about=(
                "Dana et al. Thm. 2 with C = 0.702 in [1/2, 1) (N = 3, d = 90): still negative, so the threshold 1/2 "
                "cannot be raised (tightness witness)"
            ),
        ),
    }


def dana_lemma2_certificates() -> dict:
    return {
        "head_differences": lemma2_certificate(
            4,
            2,
            5,
            3,
            about=(
                "Dana et al. Lemma 2 (p. 4) as printed: all 16 bigrams, d = N+S-1 = 5, H = 3: every e, pos, W_QK give "
                "rank <= 13 < 15 (finding dana_lemma2.d_at_least_N_plus_S_minus_1)"
            ),
        ),
        "neg_lemma2_smallN": lemma2_certificate(
            2,
            3,
            6,
            1,
            about=(
                "Dana et al. Lemma 2: N + S - 1 = 4 < d = 6, H = 1, all 8 sequences: rank <= 4 < 6 (control "
                "neg_lemma2_smallN)"
            ),
        ),
    }


def dana_lemma2_s1_certificates() -> dict:
    return {
        "neg_lemma2_S1": lemma2_certificate(
            5,
            1,
            2,
            2,
            about=(
                "Dana et al. Lemma 2 at S = 1 (N = 5, d = 2, H = 2): every head outputs x(t,1), rank <= 2 < 4 "
                "(finding dana_lemma2.single_token, control neg_lemma2_S1)"
            ),
        )
    }


def dana_thm1_certificates() -> dict:
    P = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    third = [[1 / 3, 2 / 3], [2 / 3, 1 / 3]]
    drawn = _built(
        "dana_thm1_eps0", N=3, S=2, d=2, d_h=1, H=1, T0=3, dataset="shared-last", conditionals="positive", seed=0
    )
    return {
        "neg_thm1_shared": thm1_floor_certificate(
            _seq([[0, 2], [1, 2], [2, 2]], 3, 2, 1, 1, P),
            about=(
                "Dana et al. Thm. 1 read as a capacity statement: N = 3, S = 2, (d, d_h, H) = (2, 1, 1), support "
                "{(1,3), (2,3), (3,3)}: every AoT stays above kappa0 > 0 = d_KL(pi, L) (finding "
                "dana_thm1_eps0.capacity_reading, control neg_thm1_shared; Pinsker + Eckart-Young)"
            ),
        ),
        "drawn": thm1_floor_certificate(
            drawn,
            about=(
                "Dana et al. Thm. 1's capacity reading: a drawn shared-last-token instance (N = 3, S = 2, d = 2, "
                "d_h = 1, H = 1, T0 = 3, seed 0)"
            ),
        ),
        "neg_thm1_H0": thm1_floor_certificate(
            _seq([[0, 1], [1, 1]], 2, 2, 1, 0, third),
            conditionals=[[Fraction(1, 3), Fraction(2, 3)], [Fraction(2, 3), Fraction(1, 3)]],
            about=(
                "Dana et al. Thm. 1's capacity reading with H = 0: two sequences with one last token share their "
                "logits, conditionals (1/3, 2/3) and (2/3, 1/3) exactly (control neg_thm1_H0; here the Pinsker floor, "
                "weaker than the exact Gibbs one)"
            ),
        ),
    }
