"""The re-checker's kinds pinned against independent computations (mpmath at
60 digits, exact fractions, sympy): a claim a hair inside what the data give
is accepted, a hair outside is refused, so a changed formula in a kind (a
term, a sign, a constant) fails here even when the corpus's own, rounded,
claims would still pass."""
from __future__ import annotations

import copy
import itertools
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from verifier import recheck

CORPUS = Path(__file__).resolve().parent / "recheck_corpus"


def load(name: str) -> dict:
    return json.loads((CORPUS / f"{name}.json").read_text())


def judge(cert: dict):
    c = copy.deepcopy(cert)
    c["sha256"] = recheck.digest(c)
    return recheck.check_certificate(c)


def frac_str(x) -> str:
    return str(Fraction(x))


# -- Dana et al. Thm. 2 -------------------------------------------------------------------------------------------

def thm2_rhs(N, d, P, w):
    """Thm. 2's right-hand side at 60 digits, written from the paper (DANA2025.md), not from recheck.py."""
    with mpmath.workdps(60):
        C = mpmath.sqrt(32 * mpmath.log(N + 1) / d)
        total = mpmath.mpf(0)
        for p, wt in zip(P, w):
            p = [mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in p]
            g = max(range(N), key=lambda j: p[j])
            if p[g] == 1 or len(set(p)) == 1:
                continue
            H = sum(x * mpmath.log(x) for x in p if x > 0)  # the paper's H(pi) = sum pi log pi <= 0
            tv = sum(abs(p[j] / (1 - p[g]) - mpmath.mpf(1) / (N - 1)) for j in range(N) if j != g) / 2
            total += (mpmath.mpf(Fraction(wt).numerator) / Fraction(wt).denominator) * (1 - p[g]) * (
                1 + 2 * C + C * tv) / (1 - 2 * C) * mpmath.log((N - 1) / (mpmath.exp(-H) - 1))
        return total / sum(mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in w)


THM2_CASES = [(3, 2, [["1/2", "1/4", "1/4"]], ["1"]),
              (3, 90, [["1/2", "1/4", "1/4"]], ["1"]),
              (4, 3, [["1/2", "1/4", "1/8", "1/8"], ["1/4", "1/4", "1/4", "1/4"], ["1", "0", "0", "0"],
                      ["1/8", "5/8", "1/8", "1/8"], ["0", "1/3", "1/3", "1/3"], ["3/8", "3/8", "1/8", "1/8"]],
               ["1", "2", "3", "1/2", "5", "7"]),
              (5, 7, [["1/16", "1/16", "1/16", "1/16", "3/4"], ["0", "0", "1/2", "0", "1/2"]], ["3", "1"])]


@pytest.mark.parametrize("N, d, P, w", THM2_CASES)
def test_thm2_right_hand_side_is_pinned(N, d, P, w):
    rhs = thm2_rhs(N, d, P, w)
    assert rhs < 0
    c = {"format": recheck.FORMAT, "kind": "dana-thm2-negative-rhs", "about": "",
         "claim": {}, "data": {"N": N, "d": d, "T0": len(P), "conditionals": P, "weights": w}}
    with mpmath.workdps(60):
        for eps, ok in ((mpmath.mpf(10) ** -20, 0), (-mpmath.mpf(10) ** -20, 1)):
            q = rhs * (1 - eps)
            c["claim"]["rhs_below"] = mpmath.nstr(q, 40, min_fixed=-1, max_fixed=-1).replace("e", "e")
            got, line = judge(c)
            assert got == ok, (N, d, eps, line)


# -- Dana et al. Thm. 1's capacity floor --------------------------------------------------------------------------

def floor_excess(cert: dict, kappa):
    """N sum_t delta_t(kappa)^2 - sum alpha at 60 digits, from the data (None when some eta >= p_min)."""
    d = cert["data"]
    N, T0 = d["N"], d["T0"]
    with mpmath.workdps(60):
        mp = lambda x: mpmath.mpf(Fraction(recheck.number(x)).numerator) / Fraction(recheck.number(x)).denominator  # noqa: E731
        w = [mp(x) for x in d["weights"]]
        P = [[mp(x) for x in row] for row in d["conditionals"]]
        last = [s[-1] for s in d["sequences"]]
        acc = mpmath.mpf(0)
        for g in d["groups"]:
            for t in [t for t in range(T0) if last[t] == g["last_token"]]:
                eta = mpmath.sqrt(kappa * sum(w) / (2 * w[t]))
                if eta >= min(P[t]):
                    return None
                acc += N * (eta / (min(P[t]) - eta)) ** 2
        return acc - sum(mp(g["alpha"]) for g in d["groups"])


def critical_kappa(cert):
    with mpmath.workdps(60):
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while floor_excess(cert, hi) is not None and floor_excess(cert, hi) < 0:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            e = floor_excess(cert, mid)
            lo, hi = (mid, hi) if e is not None and e < 0 else (lo, mid)
        return lo


def min_eigenvalue(cert, gi):
    d = cert["data"]
    N, T0 = d["N"], d["T0"]
    g = d["groups"][gi]
    with mpmath.workdps(60):
        mp = lambda x: mpmath.mpf(Fraction(recheck.number(x)).numerator) / Fraction(recheck.number(x)).denominator  # noqa: E731
        logs = []
        for row in d["conditionals"]:
            lg = [mpmath.log(mp(x)) for x in row]
            logs.append([x - sum(lg) / N for x in lg])
        mem = [t for t in range(T0) if d["sequences"][t][-1] == g["last_token"]]
        mean = [sum(logs[t][j] for t in mem) / len(mem) for j in range(N)]
        cols = [[logs[mem[i]][j] - mean[j] for j in range(N)] for i in g["columns"]]
        G = mpmath.matrix([[sum(a[j] * b[j] for j in range(N)) for b in cols] for a in cols])
        return min(mpmath.eigsy(G)[0])


FLOORS = ["dana_thm1_eps0.capacity_reading.neg_thm1_shared", "dana_thm1_eps0.capacity_reading.drawn",
          "dana_thm1_eps0.capacity_reading.neg_thm1_H0"]


@pytest.mark.parametrize("name", FLOORS)
def test_the_floor_is_pinned(name):
    """kappa0 a hair below the critical kappa* (where N sum delta^2 = sum alpha) is proved, a hair above is not;
    alpha a hair below lambda_min of the chosen columns' Gram is proved, a hair above is not."""
    cert = load(name)
    k = critical_kappa(cert)
    with mpmath.workdps(60):
        for f, ok in ((1 - mpmath.mpf(10) ** -12, 0), (1 + mpmath.mpf(10) ** -12, 1)):
            c = copy.deepcopy(cert)
            c["claim"]["kappa0"] = mpmath.nstr(k * f, 40, min_fixed=-1, max_fixed=-1)
            assert judge(c)[0] == ok, (name, f, judge(c)[1])
        for gi in range(len(cert["data"]["groups"])):
            lam = min_eigenvalue(cert, gi)
            for f, ok in ((1 + mpmath.mpf(10) ** -12, 1), (1 - mpmath.mpf(10) ** -12, None)):
                c = copy.deepcopy(cert)
                c["data"]["groups"][gi]["alpha"] = mpmath.nstr(lam * f, 40, min_fixed=-1, max_fixed=-1)
                got, line = judge(c)
                if ok == 1:
                    assert got == 1 and "not shown" in line, line
                else:  # alpha just below lambda_min: the Gram test passes (the kappa test may then differ)
                    assert "not shown" not in line, line


def _floor_case(*changes):
    c = copy.deepcopy(load(FLOORS[0]))  # N = 3, S = 2, d = 2, d_h = 1, H = 1, T0 = 3, k = 1
    for where, key, value in changes:
        c[where][key] = value
    return judge(c)


def test_the_floor_s_hypotheses():
    assert _floor_case(("claim", "k", 0)) == (1, "k = 0 is not min(H d_h, d) = 1 below N")
    assert _floor_case(("data", "H", 3), ("data", "d", 3), ("claim", "k", 3)) == (
        1, "k = 3 is not min(H d_h, d) = 3 below N")  # k + 1 = 4 > N = 3
    assert _floor_case(("data", "d_h", 3), ("data", "d", 3), ("claim", "k", 3)) == (
        1, "k = 3 is not min(H d_h, d) = 3 below N")
    assert _floor_case(("data", "H", 2), ("claim", "k", 2))[1] == "groups[0] columns: expected a list of 3 indices"
    assert _floor_case(("data", "H", 0), ("claim", "k", 0)) == (
        1, "T0 = 3 > H d_h + d = 2: the capacity reading makes no claim here")
    assert _floor_case(("data", "d", 1), ("data", "H", 2), ("claim", "k", 1)) == (
        1, "d = 1 < N - 1: no exact value of d_KL(pi, L) is known to this checker")
    assert _floor_case(("data", "weights", ["0", "1", "1"])) == (1, "a prior weight is not positive")
    assert _floor_case(("data", "weights", ["1", "-1", "1"])) == (1, "a prior weight is not positive")
    P = load(FLOORS[0])["data"]["conditionals"]
    assert _floor_case(("data", "conditionals", [["1/2", "1/2", "0"]] + P[1:])) == (
        1, "conditional row 0 is not in the open simplex exactly")
    assert _floor_case(("data", "conditionals", P[:2] + [["1/2", "1/4", "1/8"]])) == (
        1, "conditional row 2 is not in the open simplex exactly")
    g = load(FLOORS[0])["data"]["groups"]
    assert _floor_case(("data", "groups", g + g)) == (2, "groups[1]: a repeated last token or alpha <= 0")
    assert _floor_case(("data", "groups", [dict(g[0], alpha="0")])) == (
        2, "groups[0]: a repeated last token or alpha <= 0")
    assert _floor_case(("claim", "kappa0", "0")) == (2, "kappa0 must be positive")
    assert _floor_case(("claim", "kappa0", "1/4")) == (
        1, "sequence 0: eta = sqrt(kappa0 / (2 pi_t)) is not below its smallest conditional")
    assert _floor_case(("data", "T0", 2), ("data", "weights", ["1", "1"])) == (2, "3 sequences for T0 = 2")
    assert _floor_case(("data", "groups", [dict(g[0], columns=[0, 2])]))[0] == 0  # another pair of columns
    assert _floor_case(("data", "groups", [dict(g[0], last_token=1)])) == (
        2, "groups[0] columns entry = 0 outside [0, -1]")


def _work_case(N, k, groups, T0):
    """A floor certificate of N tokens, T0 one-token sequences, k = min(H d_h, d) with d = N - 1 + ..."""
    seqs = [[t // N**3 % N, t // N**2 % N, t // N % N, t % N] for t in range(T0)]
    c = {"format": recheck.FORMAT, "kind": "dana-thm1-capacity-floor", "about": "",
         "claim": {"kappa0": "1e-9", "k": k},
         "data": {"N": N, "S": 4, "d": max(k, N - 1), "d_h": 1, "H": k, "T0": T0, "sequences": seqs,
                  "weights": ["1"] * T0, "conditionals": [["1/%d" % N] * N] * T0, "groups": [7] * groups}}
    return judge(c)[1]


def test_the_floor_s_work_limit_is_the_spec_s():
    """groups ((k+2)^2 N + (k+2)^3) + T0 N <= 2 10^6 exactly (refused above, read on at the limit)."""
    for N, k, T0 in ((64, 62, 64), (40, 10, 40), (9, 3, 9)):
        per, base = (k + 2) ** 2 * N + (k + 2) ** 3, T0 * N
        g = (2 * 10**6 - base) // per
        if g < 1 or g > T0:
            continue
        assert "above 2 10^6" not in _work_case(N, k, g, T0)
        assert _work_case(N, k, g + 1, T0).startswith("groups x ((k+2)^2 N + (k+2)^3) + T0 N above 2 10^6") or \
            g + 1 > T0
    # exactly at the limit: 4 groups of N = 10, k = 8 and a T0 that fills it
    N, k = 10, 8
    per = (k + 2) ** 2 * N + (k + 2) ** 3
    for T0 in range(1, 1025):
        rest = 2 * 10**6 - T0 * N
        if rest % per == 0 and 1 <= rest // per <= T0:
            g = rest // per
            assert "above 2 10^6" not in _work_case(N, k, g, T0)
            assert "above 2 10^6" in _work_case(N, k, g, T0 + 1) or g > T0 + 1
            break




# -- the MHA layer, written again from the paper's equations (mpmath, 60 digits) --------------------------------

def _mp(x):
    q = recheck.number(x)
    return mpmath.mpf(q.numerator) / q.denominator


def mha_layer(cert):
    """(Z, yhat) of Eqs. (1)-(8) at 60 digits from the certificate's data (lists of lists)."""
    d = cert["data"]
    T, n, dd, H = d["T"], d["n"], d["d"], d["H"]
    with mpmath.workdps(60):
        E = [[[_mp(x) for x in tok] for tok in ctx] for ctx in d["contexts"]]
        e = [[_mp(x) for x in q] for q in d["queries"]]
        WK = [[[_mp(x) for x in r] for r in W] for W in d["W_K"]]
        WQ = [[[_mp(x) for x in r] for r in W] for W in d["W_Q"]]
        Z = []
        for t in range(T):
            Et = E[0 if d["shared"] else t]
            row = []
            for h in range(H):
                W = [[sum(WK[h][i][c] * WQ[h][j][c] for c in range(d["d_h"])) for j in range(dd)] for i in range(dd)]
                We = [sum(W[i][j] * e[t][j] for j in range(dd)) for i in range(dd)]
                a = [sum(Et[r][i] * We[i] for i in range(dd)) for r in range(n)]
                m = max(a)
                ex = [mpmath.exp(x - m) for x in a]
                s = [x / sum(ex) for x in ex]
                row += [sum(s[r] * Et[r][j] for r in range(n)) for j in range(dd)]
            Z.append(row)
        if "W_V" not in d:
            return Z, None
        dv, do = d["d_v"], d["d_out"]
        WV = [[[_mp(x) for x in r] for r in W] for W in d["W_V"]]
        WO = [[_mp(x) for x in r] for r in d["W_O"]]
        WD = [[_mp(x) for x in r] for r in d["W_D"]]
        Y = []
        for t in range(T):
            heads = [sum(WV[h][j][v] * Z[t][h * dd + j] for j in range(dd)) for h in range(H) for v in range(dv)]
            o = [sum(WO[r][i] * heads[r] for r in range(H * dv)) + (e[t][i] if d["skip"] else 0) for i in range(dd)]
            Y.append([sum(WD[i][c] * o[i] for i in range(dd)) for c in range(do)])
        return Z, Y


@pytest.mark.parametrize("name", ["check.theorem1", "check.appendixC", "check.step2"])
def test_the_residual_claim_is_pinned(name):
    cert = load(name)
    _, Y = mha_layer(cert)
    with mpmath.workdps(60):
        y = [[_mp(x) for x in row] for row in cert["data"]["labels"]]
        r = max(abs(Y[t][c] - y[t][c]) for t in range(len(y)) for c in range(len(y[0])))
        s = lambda x: mpmath.nstr(x, 40, min_fixed=-1, max_fixed=-1)  # noqa: E731
        for lo, hi, ok in ((r * (1 - mpmath.mpf(10) ** -12), r * (1 + mpmath.mpf(10) ** -12), 0),
                           (r * (1 + mpmath.mpf(10) ** -9), 2 * r, 1), (0, r * (1 - mpmath.mpf(10) ** -9), 1)):
            c = copy.deepcopy(cert)
            c["claim"]["max_abs_residual"] = [s(lo) if lo else "0", s(hi)]
            got, line = judge(c)
            assert got == ok, (name, float(lo), float(hi), line)


@pytest.mark.parametrize("name", ["check.theorem1", "check.proposition1", "proposition5.zero_sum.attained_c0"])
def test_the_interval_features_enclose_the_layer(name):
    cert = load(name)
    Z, _ = mha_layer(cert)
    o = recheck.mha_data(cert["data"], readout="W_V" in cert["data"])
    with recheck.precision(128):
        Zi = recheck.features_intervals(o, everything=True)
        for h in range(o["H"]):
            for t in range(o["T"]):
                for j in range(o["d"]):
                    x = Zi[h][t][j]
                    v = Z[t][h * o["d"] + j]
                    assert recheck.lower(x) <= Fraction(mpmath.nstr(v, 50)) + Fraction(1, 10**30)
                    assert recheck.upper(x) >= Fraction(mpmath.nstr(v, 50)) - Fraction(1, 10**30)
                    assert recheck.upper(x) - recheck.lower(x) < Fraction(1, 10**25)


# -- Lemma 2: the formal ranks against sympy ----------------------------------------------------------------------

def lemma2_claim(N, S, d, H, seqs):
    import sympy

    tokens = []
    for t in seqs:
        for s in range(S):
            v = [0] * (N + S)
            v[t[s]] += 1
            v[N + s] += 1
            tokens.append(v)
    R = sympy.Matrix(tokens).rank()
    diffs = [[a - b for a, b in zip(tokens[i * S + s], tokens[i * S + S - 1])] for i in range(len(seqs))
             for s in range(S - 1)]
    D = sympy.Matrix(diffs).rank() if diffs else 0
    return {"T0": len(seqs), "R": R, "D": D, "cap": min(d, R) + (H - 1) * min(d, D), "target": min(len(seqs), H * d)}


LEMMA2_CASES = [(3, 2, 4, 2, [[0, 1], [1, 1], [2, 0], [0, 0], [2, 2]]), (5, 1, 2, 3, [[0], [3], [4]]),
                (2, 3, 6, 1, [list(s) for s in itertools.product(range(2), repeat=3)]),
                (4, 3, 3, 2, [[0, 1, 2], [1, 2, 3], [3, 3, 3], [2, 0, 1], [1, 1, 0], [0, 3, 2]]),
                (6, 2, 3, 4, [[i, j] for i in range(6) for j in range(6) if (i + j) % 3 == 0])]


@pytest.mark.parametrize("N, S, d, H, seqs", LEMMA2_CASES)
def test_lemma2_claims_are_the_formal_ranks(N, S, d, H, seqs):
    claim = lemma2_claim(N, S, d, H, seqs)
    c = {"format": recheck.FORMAT, "kind": "dana-lemma2-rank-cap", "about": "", "claim": claim,
         "data": {"N": N, "S": S, "d": d, "H": H, "sequences": seqs}}
    got, line = judge(c)
    assert got == (0 if claim["cap"] < claim["target"] else 1), line
    if got == 1:
        assert line == f"cap {claim['cap']} is not below min(T0, Hd) = {claim['target']}"
    for key in claim:
        for delta in (-1, 1):
            if claim[key] + delta >= 0:
                assert judge(dict(c, claim=dict(claim, **{key: claim[key] + delta})))[0] == 1


# -- Prop. 3: labels some net does fit are refused ----------------------------------------------------------------

def test_relu_labels_that_a_net_fits_are_refused():
    base = load("proposition3.sharpened.unreachable")
    X = [[Fraction(recheck.number(x)) for x in row] for row in base["data"]["points"]]
    for w, b, v, b0 in (([1, 0, 0], 0, 1, 0), ([1, -2, 3], Fraction(1, 3), -2, 5), ([0, 0, 0], 1, 3, -1),
                        ([2, 1, -1], -100, 1, 7)):
        y = [v * max(sum(wi * xi for wi, xi in zip(w, x)) + b, 0) + b0 for x in X]
        got, line = judge(dict(base, data=dict(base["data"], labels=[str(q) for q in y])))
        assert got == 1 and line.startswith("the labels lie in the span of activation patterns"), line
    # two units fit any 5 of these points' labels? at least the genuine labels with m = 2 are not shown unreachable
    assert judge(dict(base, claim={"units": 2}))[0] == 1
    assert judge(base)[0] == 0


def test_relu_pattern_work_limit():
    base = load("proposition3.sharpened.unreachable")
    for T, m, ok in ((13, 1, True), (14, 1, False), (6, 2, True), (9, 2, False)):
        d = base["data"]["d"]
        c = dict(base, claim={"units": m}, data=dict(base["data"], T=T, points=[["0"] * d] * T, labels=["0"] * T))
        line = judge(c)[1]
        assert ("more than 10^4 activation-pattern tuples" in line) is not ok, (T, m, line)


# -- Prop. 5's cap: every token, every example, shared or not ----------------------------------------------------

def token_cap(contexts, shared, H, vectors, claim):
    T = 4 if shared else len(contexts)
    n, d = len(contexts[0]), len(contexts[0][0])
    return {"format": recheck.FORMAT, "kind": "mha-token-sum-cap", "about": "", "claim": {"rank_at_most": claim},
            "data": {"T": T, "n": n, "d": d, "H": H, "shared": shared, "contexts": contexts,
                     "null_vectors": vectors}}


def test_token_sum_caps_read_every_token():
    ctx = [[["1/2", "1/4", "1/4"], ["1", "0", "0"]], [["0", "0", "1"], ["1/3", "1/3", "1/3"]]]
    diff = [[1, 1, 1, -1, -1, -1], [1, 1, 1, 0, 0, 0]]
    assert judge(token_cap(ctx, False, 2, diff[:1], 5))[0] == 0
    assert judge(token_cap(ctx[:1], True, 2, diff[:1], 5))[0] == 0
    assert judge(token_cap(ctx, False, 2, diff, 4)) == (1, "null vector 1: the block constants sum to 1, not 0")
    for t in range(2):
        for r in range(2):
            bad = copy.deepcopy(ctx)
            bad[t][r][0] = "7"
            got, line = judge(token_cap(bad, False, 2, diff[:1], 5))
            assert got == 1 and "is not one constant" in line, (t, r, line)
    zero = [[["1", "-1", "0"], ["2", "0", "-2"]], [["0", "5", "-5"], ["1/3", "-1/3", "0"]]]
    ind = [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    assert judge(token_cap(zero, False, 2, ind, 4))[0] == 0
    assert judge(token_cap(zero, False, 2, ind + [[1, 1, 1, 1, 1, 1]], 3))[1] == \
        "the 3 null vectors of Z are not independent (rank 2)"
    assert judge(token_cap(zero, False, 2, [[2, 2, 2, 0, 0, 0]], 5))[0] == 0  # a multiple: still null
    assert judge(token_cap(zero, False, 2, [], 6))[0] == 0  # no vector: the dimension
    odd = [[1, 2, 3, 0, 0, 0]]  # E^(t) v_h differs between tokens
    assert judge(token_cap(zero, False, 2, odd, 5))[0] == 1


def test_shared_context_caps():
    base = load("check.proposition2")
    H, n = base["data"]["H"], base["data"]["n"]
    assert judge(base)[0] == 0
    v = [1] * n + [-1] * n + [0] * n
    w = [1] * n + [0] * n + [-1] * n
    for vectors, claim, ok in (([v, w], H * n - 2, 0), ([v], H * n - 1, 0), ([], H * n, 0), ([v, v], H * n - 2, 1),
                               ([v, w, [2] * n + [-1] * (2 * n)], H * n - 3, 1), ([[0] * (H * n)], H * n - 1, 1),
                               ([v[:n - 1] + [5] + v[n:]], H * n - 1, 1)):
        got, line = judge(dict(base, claim={"rank_at_most": claim}, data=dict(base["data"], null_vectors=vectors)))
        assert got == ok, (vectors, line)


def test_count_comparison_grid_points():
    base = load("remark2.growth_rates.counts")
    for point, ok in (([1, 2, 3, "lean"], True), ([1, 3, 3, "lean"], False), ([1, 1, 3, "lean"], False),
                      ([1, 2, 3, "other"], False), ([1, 2, 3, "square"], True)):
        c = dict(base, data=dict(base["data"], grid=[point]))
        line = judge(c)[1]
        assert (line == "grid[0]: setting must be lean or square, with 2 <= n < d") is not ok, (point, line)
    q = dict(base["data"]["inequalities"][0], setting="cube")
    assert judge(dict(base, data=dict(base["data"], inequalities=[q]))) == (
        2, "inequalities[0]: setting must be lean or square")


# -- boundaries of the kinds' own checks (each limit, each comparison at equality) -------------------------------

def counts_cert(grid, inequalities):
    rows = []
    for H, n, d, s in grid:
        dh, dv, do = (n, 1, 1) if s == "lean" else (d, d, 1)
        budget = H * (2 * d * dh + d * dv) + H * dv * d + d * do
        m = (budget - 1) // ((n + 1) * d + 2)  # the largest m with m((n+1)d+2)+1 <= budget
        rows.append([H, n, d, s, budget, m, m * ((n + 1) * d + 2) + 1, H * (min(n, dh) - 1) + 1, m * (d + 2) + 1])
    viol = [[i for i, r in enumerate(rows) if r[3] == q["setting"] and r[1] ** q["power"] * r[8]
             > q["kappa"] * r[2] ** q["power"] * r[7]] for q in inequalities]
    return {"format": recheck.FORMAT, "kind": "mha-relu-count-comparison", "about": "",
            "claim": {"rows": rows, "violations": viol}, "data": {"grid": grid, "inequalities": inequalities}}


def test_counts_at_their_edges():
    """(1, 2, 5, lean): budget - 1 = 36 is a multiple of the unit cost 17 + 1 ... (m exactly at its bound);
    (1, 2, 3, lean) with kappa 2, power 1: n C_R = kappa d C_A exactly (equality is not a violation)."""
    c = counts_cert([[1, 2, 5, "lean"], [1, 2, 3, "lean"]], [{"setting": "lean", "kappa": 2, "power": 1}])
    assert (c["claim"]["rows"][0][4] - 1) % ((2 + 1) * 5 + 2) == 0
    r = c["claim"]["rows"][1]
    assert r[1] * r[8] == 2 * r[2] * r[7] and 1 not in c["claim"]["violations"][0]
    assert judge(c)[0] == 0
    assert judge(dict(c, claim=dict(c["claim"], violations=[[1]])))[0] == 1


def test_thm2_edges():
    base = load("dana_thm2.c_below_half.neg_thm2_C")
    assert judge(dict(base, claim={"rhs_below": "0"}))[0] == 0  # q = 0 is a claim of this kind
    assert judge(dict(base, claim={"rhs_below": "1e-300"}))[0] == 2
    d = base["data"]
    assert judge(dict(base, data=dict(d, weights=["0"]))) == (1, "a prior weight is not positive")
    assert judge(dict(base, data=dict(d, conditionals=[["1/2", "1/2", "1/2"]]))) == (
        1, "conditional row 0 is not in the simplex exactly")
    edge = dict(d, N=1000, T0=1001, conditionals="x", weights="x")
    assert judge(dict(base, data=edge)) == (2, "N T0 above 10^6")
    ok = dict(d, N=1000, T0=1000, conditionals="x")
    assert judge(dict(base, data=ok))[1] != "N T0 above 10^6"
    ok = dict(d, N=10**5, T0=10, conditionals="x")
    assert judge(dict(base, data=ok))[1].startswith("conditionals:")
    ok = dict(d, N=10, T0=10**4, conditionals="x")
    assert judge(dict(base, data=ok))[1].startswith("conditionals:")


def zeros(count):
    import base64

    return {"float64": base64.b64encode(bytes(8 * count)).decode()}


def test_cap_size_limits():
    p2 = load("check.proposition2")
    for H, n, ok in ((1000, 10000, True), (1000, 10001, False), (1, 10**4, True)):
        c = dict(p2, data=dict(p2["data"], H=H, n=n, context=zeros(n * p2["data"]["d"]), null_vectors=[[0]]))
        line = judge(c)[1]
        assert (line == "null vectors of more than 10^7 entries in all") is not ok, (H, n, line)
    p5 = load("check.proposition5")
    for T, n, d, ok in ((10, 1000, 1000, True), (11, 1000, 1000, False), (1, 10**4, 10**3, True)):
        c = dict(p5, data=dict(p5["data"], T=T, n=n, d=d, shared=False, contexts="x"))
        line = judge(c)[1]
        assert (line == "contexts of more than 10^7 entries") is not ok, (T, n, d, line)
        c = dict(p5, data=dict(p5["data"], T=T, n=n, d=d, shared=True, contexts="x"))
        assert judge(c)[1] != "contexts of more than 10^7 entries"
    for count, H, d, ok in ((100, 10, 1000, True), (101, 10, 1000, False)):
        c = dict(p5, data=dict(p5["data"], H=H, d=d, n=1, contexts=[[["0"] * d]] * p5["data"]["T"],
                                null_vectors=[0] * count))
        line = judge(c)[1]
        assert (line == "null vectors: count^2 x Hd above 10^8") is not ok, (count, line)


def test_cap_messages_and_scaled_null_vectors():
    p2 = load("check.proposition2")
    n = p2["data"]["n"]
    v = [1] * n + [-1] * n + [0] * n
    assert judge(dict(p2, data=dict(p2["data"], null_vectors=[v, v]))) == (
        1, "the 2 null vectors of S are not independent (rank 1)")
    ctx = [[["1/2", "1/4", "1/4"], ["1", "0", "0"]]]  # tokens summing to 1
    v3 = [1, 1, 1, 1, 1, 1, -2, -2, -2]  # a = (1, 1, -2): sums to 0, though 1/a does not
    assert judge(token_cap(ctx, True, 3, [v3], 8))[0] == 0
    assert judge(token_cap(ctx, True, 3, [[2, 2, 2, -1, -1, -1, -1, -1, -1]], 8))[0] == 0


def test_rank_lower_bound_reads_its_entries_as_written():
    rank = {"format": recheck.FORMAT, "kind": "rank-lower-bound", "about": "", "claim": {"rank_at_least": 2},
            "data": {"m": 2, "n": 2, "matrix": [["12", "6"], ["2", "1"]], "rows": [0, 1], "cols": [0, 1]}}
    assert judge(rank)[0] == 1  # 12 * 1 - 6 * 2 = 0: singular ("12" is twelve, not [1, 2])
    assert judge(dict(rank, data=dict(rank["data"], matrix=[["13", "6"], ["2", "1"]])))[0] == 0
    assert judge(dict(rank, data=dict(rank["data"], rows=[0, 0])))[1] == "rows: an index is repeated"
    assert judge(dict(rank, data=dict(rank["data"], cols=[0, 2])))[1] == "cols entry = 2 outside [0, 1]"
    assert judge(dict(rank, data=dict(rank["data"], matrix=[[["1", "2", "3"], "6"], ["2", "1"]])))[0] == 2


@pytest.mark.parametrize("seed", range(40))
def test_positive_definite_agrees_with_exact_minors(seed):
    import random

    import sympy

    rng = random.Random(seed)
    m = rng.choice([3, 4, 5])
    A = [[rng.randint(-3, 3) for _ in range(m)] for _ in range(m)]
    G = [[sum(A[k][i] * A[k][j] for k in range(m)) + (rng.randint(-4, 2) if i == j else 0) for j in range(m)]
         for i in range(m)]
    S = sympy.Matrix(G)
    pd = all(S[:k, :k].det() > 0 for k in range(1, m + 1))
    with recheck.precision(128):
        got = recheck.positive_definite([[mpmath.iv.mpf(x) for x in row] for row in G])
    assert got is pd or (not got and pd and min(sympy.Matrix(G).eigenvals()) < 1e-20)
