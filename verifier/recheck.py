"""A standalone re-checker of exported certificates: it imports only the
standard library (fractions, hashlib, json) and mpmath, never the project,
so a reader can re-verify a finding without trusting mha-verify.

    python -m verifier.recheck CERT.json [...]     # or: python verifier/recheck.py CERT.json
    exit 0: every certificate accepted; 1: one rejected; 2: unreadable

A certificate is one JSON object: ``format`` (``mha-verify-certificate/1``),
``kind``, ``claim`` (the numbers it asserts), ``data`` (exact rationals as
strings "p/q", intervals as [lo, hi] of such strings) and ``sha256`` (of the
canonical JSON of ``kind``, ``claim`` and ``data``: the file is the one the
report wrote).  Each kind is re-derived from ``data`` alone:

* ``rank-lower-bound``: rank(A) >= k for every matrix A in the interval
  matrix ``data.matrix``: the k x k minor (``rows``, ``cols``, distinct, in
  range) is nonsingular because ||I - X A_minor||_inf < 1 in mpmath interval
  arithmetic, X an approximate inverse of the midpoint (any X will do: a bad
  one only fails to prove).
* ``mha-feature-rank``: Z of Mahdavi et al.'s Eq. (7) recomputed in
  intervals from the ``contexts``, ``queries`` and weights ``W_K``, ``W_Q``
  (exact rationals), then a minor as above: rank Z >= k (> ``exceeds``).
* ``dana-thm2-negative-rhs``: the right-hand side of Dana et al.'s Thm. 2 for
  ``N``, ``d``, prior ``weights`` and ``conditionals`` (rows in the simplex,
  exactly) is < 0 in mpmath interval arithmetic, while d_KL(pi, L) >= 0.
* ``dana-lemma2-rank-cap``: for the support ``sequences`` in [N]^S, the
  formal ranks R (tokens u_{t_s} + p_s) and D (differences to the last
  token) computed exactly (fractions) give the cap min(d, R) + (H-1) min(d, D)
  (a rank bound valid for every e, pos, W_QK) below min(T0, Hd).
"""
from __future__ import annotations

import hashlib
import json
import sys
from fractions import Fraction

from mpmath import iv, mp

FORMAT = "mha-verify-certificate/1"


class Rejected(Exception):
    """The certificate does not prove its claim."""


def digest(cert: dict) -> str:
    body = {k: cert[k] for k in ("kind", "claim", "data")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def q(s) -> Fraction:
    if isinstance(s, bool) or not isinstance(s, (str, int)):
        raise Rejected(f"not an exact rational: {s!r}")
    return Fraction(s)


def ival(x):
    """An mpmath interval from "p/q" or [lo, hi] (endpoints rounded outward)."""
    lo, hi = (q(x[0]), q(x[1])) if isinstance(x, list) else (q(x), q(x))
    if lo > hi:
        raise Rejected(f"empty interval {x!r}")
    a = iv.mpf(lo.numerator) / lo.denominator
    b = iv.mpf(hi.numerator) / hi.denominator
    return iv.mpf([a.a, b.b])


def _upper(x) -> float:
    return float(x.b)


def _indices(claim: dict, data: dict, m: int, n: int) -> tuple[list, list, int]:
    rows, cols, k = data["rows"], data["cols"], int(claim["k"])
    if len(rows) != k or len(cols) != k or len(set(rows)) != k or len(set(cols)) != k:
        raise Rejected("rows and cols must be k distinct indices")
    if not all(isinstance(i, int) and 0 <= i < m for i in rows) or not all(
            isinstance(j, int) and 0 <= j < n for j in cols):
        raise Rejected("an index is out of range")
    return rows, cols, k


def _rank_lower_bound(claim: dict, data: dict) -> str:
    iv.prec = 128
    A = data["matrix"]
    m, n = len(A), len(A[0]) if A else 0
    if any(len(r) != n for r in A) or [m, n] != claim.get("shape"):
        raise Rejected(f"matrix shape {m} x {n} differs from the claimed {claim.get('shape')}")
    rows, cols, k = _indices(claim, data, m, n)
    return _nonsingular([[ival(A[i][j]) for j in cols] for i in rows], k)


def _feature_rank(claim: dict, data: dict) -> str:
    """Z of Mahdavi et al.'s Eq. (7) from the data and weights, in intervals:
    row t = [E^(t)^T softmax(E^(t) W_K^h (W_Q^h)^T e^(t))]_h."""
    iv.prec = 128
    E = [[[ival(x) for x in tok] for tok in ctx] for ctx in data["contexts"]]
    e = [[ival(x) for x in qv] for qv in data["queries"]]
    WK = [[[ival(x) for x in r] for r in Wh] for Wh in data["W_K"]]
    WQ = [[[ival(x) for x in r] for r in Wh] for Wh in data["W_Q"]]
    T, H = len(E), len(WK)
    n, d = len(E[0]), len(E[0][0])
    if len(e) != T or len(WQ) != H or [T, H * d] != claim.get("shape"):
        raise Rejected(f"sizes T = {T}, H = {H}, d = {d} differ from the claimed shape {claim.get('shape')}")
    Z = []
    for t in range(T):
        row = []
        for h in range(H):
            dh = len(WK[h][0])
            kq = [sum((WQ[h][i][c] * e[t][i] for i in range(d)), iv.mpf(0)) for c in range(dh)]  # W_Q^T e
            a = [sum((E[t][r][i] * sum((WK[h][i][c] * kq[c] for c in range(dh)), iv.mpf(0))
                      for i in range(d)), iv.mpf(0)) for r in range(n)]
            ex = [iv.exp(x) for x in a]
            tot = sum(ex[1:], ex[0])
            row += [sum((ex[r] / tot * E[t][r][i] for r in range(n)), iv.mpf(0)) for i in range(d)]
        Z.append(row)
    rows, cols, k = _indices(claim, data, T, H * d)
    cap = claim.get("exceeds")
    if cap is not None and not k > int(cap):
        raise Rejected(f"k = {k} does not exceed the stated cap {cap}")
    return _nonsingular([[Z[i][j] for j in cols] for i in rows], k) + (
        f" (rank Z >= {k} > {cap})" if cap is not None else "")


def _nonsingular(minor, k: int) -> str:
    mid = mp.matrix([[mp.mpf(float(x.mid)) for x in r] for r in minor])
    try:
        X = mp.inverse(mid)
    except ZeroDivisionError:
        raise Rejected("the minor's midpoint is singular") from None
    worst = 0.0
    for i in range(k):
        row = iv.mpf(0)
        for j in range(k):
            s = iv.mpf(1 if i == j else 0)
            for t in range(k):
                s -= iv.mpf(X[i, t]) * minor[t][j]
            row += abs(s)
        worst = max(worst, _upper(row))
    if not worst < 1:
        raise Rejected(f"||I - X A_minor||_inf <= {worst:.3g} is not below 1: nonsingularity not shown")
    return f"rank >= {k}: ||I - X A_minor||_inf <= {worst:.3g} < 1 for every matrix in the intervals"


def _thm2_rhs(claim: dict, data: dict) -> str:
    N, d = int(data["N"]), int(data["d"])
    P = [[q(x) for x in row] for row in data["conditionals"]]
    w = [q(x) for x in data["weights"]]
    if N < 2 or d < 1 or len(P) != len(w) or not P or any(len(r) != N for r in P):
        raise Rejected("sizes: N >= 2, d >= 1, one weight per conditional row of length N")
    if any(x < 0 for r in P for x in r) or any(sum(r) != 1 for r in P) or any(x <= 0 for x in w):
        raise Rejected("every conditional must lie in the simplex exactly, every weight be positive")
    iv.prec = 128
    C = iv.sqrt(32 * iv.log(iv.mpf(N + 1)) / d)
    acc = iv.mpf(0)
    for p, wt in zip(P, w):
        g = max(range(N), key=lambda j: p[j])
        if p[g] == 1 or all(x == p[0] for x in p):
            continue  # deterministic or uniform: the term's limit is 0
        pb = [ival(str(x)) for x in p]
        ent = -sum((x * iv.log(x) for x, e in zip(pb, p) if e > 0), iv.mpf(0))
        rest = 1 - pb[g]
        tv = sum((abs(pb[j] / rest - iv.mpf(1) / (N - 1)) for j in range(N) if j != g), iv.mpf(0)) / 2
        b = iv.log((N - 1) / (iv.exp(ent) - 1))
        acc += ival(str(wt)) * rest * (1 + 2 * C + C * tv) / (1 - 2 * C) * b
    rhs = acc / ival(str(sum(w)))
    if not _upper(rhs) < 0:
        raise Rejected(f"the right-hand side is not certainly negative (upper end {_upper(rhs):.3g})")
    return f"C = {float(C.a):.4g} >= 1/2 and the right-hand side < {_upper(rhs):.3g} < 0 <= d_KL(pi, L)"


def _rank(rows: list[list[int]]) -> int:
    """Exact rank (Gaussian elimination over the rationals)."""
    M = [[Fraction(x) for x in r] for r in rows]
    rank, ncols = 0, len(M[0]) if M else 0
    for c in range(ncols):
        piv = next((i for i in range(rank, len(M)) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[rank], M[piv] = M[piv], M[rank]
        for i in range(len(M)):
            if i != rank and M[i][c] != 0:
                f = M[i][c] / M[rank][c]
                M[i] = [a - f * b for a, b in zip(M[i], M[rank])]
        rank += 1
    return rank


def _lemma2_cap(claim: dict, data: dict) -> str:
    N, d, H = int(data["N"]), int(data["d"]), int(data["H"])
    seqs = data["sequences"]
    S = len(seqs[0]) if seqs else 0
    if S < 1 or any(len(s) != S for s in seqs) or any(not 0 <= x < N for s in seqs for x in s):
        raise Rejected("sequences must have one length S and tokens in [0, N)")
    if len({tuple(s) for s in seqs}) != len(seqs):
        raise Rejected("the support has a repeated sequence")
    T0 = len(seqs)

    def formal(t, s):  # u_{t_s} + p_s in Z^{N+S}
        v = [0] * (N + S)
        v[t[s]] += 1
        v[N + s] += 1
        return v

    tokens = [formal(t, s) for t in seqs for s in range(S)]
    diffs = [[a - b for a, b in zip(formal(t, s), formal(t, S - 1))] for t in seqs for s in range(S - 1)]
    R, D = _rank(tokens), (_rank(diffs) if diffs else 0)
    cap = min(d, R) + (H - 1) * min(d, D) if S > 1 else min(d, R)
    target = min(T0, H * d)
    stated = {k: int(claim[k]) for k in ("T0", "R", "D", "cap", "target")}
    if stated != {"T0": T0, "R": R, "D": D, "cap": cap, "target": target}:
        raise Rejected(f"the stated numbers {stated} differ from the recomputed T0={T0}, R={R}, D={D}, "
                       f"cap={cap}, target={target}")
    if not cap < target:
        raise Rejected(f"cap {cap} is not below min(T0, Hd) = {target}")
    return f"every e, pos, W_QK give rank <= {cap} < min(T0, Hd) = {target} (R = {R}, D = {D})"


KINDS = {"rank-lower-bound": _rank_lower_bound, "mha-feature-rank": _feature_rank, "dana-thm2-negative-rhs": _thm2_rhs,
         "dana-lemma2-rank-cap": _lemma2_cap}


def check_certificate(cert: dict) -> tuple[bool, str]:
    """(accepted, why) for one certificate object."""
    try:
        if not isinstance(cert, dict) or cert.get("format") != FORMAT:
            raise Rejected(f"not a {FORMAT} object")
        if cert.get("kind") not in KINDS:
            raise Rejected(f"unknown kind {cert.get('kind')!r}")
        if cert.get("sha256") != digest(cert):
            raise Rejected("sha256 does not match kind, claim and data: the file was changed")
        return True, KINDS[cert["kind"]](cert["claim"], cert["data"])
    except Rejected as exc:
        return False, str(exc)
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        return False, f"malformed: {type(exc).__name__}: {exc}"


def main(argv=None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m verifier.recheck CERT.json [...]", file=sys.stderr)
        return 2
    code = 0
    for path in paths:
        try:
            with open(path) as fh:
                cert = json.load(fh)
        except (OSError, ValueError) as exc:
            print(f"{path}: unreadable: {exc}")
            code = max(code, 2)
            continue
        ok, why = check_certificate(cert)
        print(f"{path}: {'ACCEPTED' if ok else 'REJECTED'}: {why}")
        code = max(code, 0 if ok else 1)
    return code


if __name__ == "__main__":
    sys.exit(main())
