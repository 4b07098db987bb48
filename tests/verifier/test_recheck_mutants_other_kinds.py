"""The re-checker's exact helpers and its non-MHA kinds, pinned where mutation testing showed them loose
(benchmarks/mutation.py, target recheck): each test states a property of the spec (docs/CERTIFICATES.md) that a
changed line breaks.

* exact_rank against Fraction elimination (also on entries beyond 2^53), rank_mod2 against a rank over GF(2);
* the exact-work charges (spec Sec. 7.1) of every step, recomputed from the spec's formulas, with the name of
  the step a refusal prints;
* the size limits of 4.6 and 4.10 at their boundaries;
* genuine certificates of 4.1, 4.5, 4.8, 4.9 and 4.10 that a changed formula rejects, and forged ones (numerators
  independent modulo 2 over an even denominator, a floor a hair above its critical kappa0) that must be rejected;
* the messages of 4.7 and 4.9 (which precision, which end) when a claim is not proved.
"""
from __future__ import annotations

import copy
import itertools
import random
import signal
from contextlib import contextmanager
from fractions import Fraction

import mpmath
import pytest
from test_recheck_exact import cert, fraction_rank, reference_rhs, seal, shared_cap, thm2_near_point_mass
from test_recheck_exact import judge as judge_sealed
from test_recheck_kinds import FLOORS, critical_kappa, load

from verifier import recheck
from verifier.report.certificates_dana import _seq, lemma2_certificate, thm1_floor_certificate


def judge(c: dict) -> tuple:
    """(exit code, line) of a copy of ``c`` sealed again (its sha256 recomputed after an edit)."""
    return judge_sealed(seal(copy.deepcopy(c)))


# -- the spec's exact-work charges (Sec. 7.1), written from its text ------------------------------------------------

def w(bits: int) -> int:
    """64-bit words of a ``bits``-bit integer."""
    return bits // 64 + 1


def pairs_of(values) -> list:
    return [x if isinstance(x, tuple) else (Fraction(x).numerator, Fraction(x).denominator) for x in values]


def spec_denominator(values) -> int:
    """D = 2^s times the product of the distinct odd parts of the denominators."""
    qs = {q for _, q in pairs_of(values)}
    s = max(((q & -q).bit_length() - 1 for q in qs), default=0)
    D = 1 << s
    for o in {q >> ((q & -q).bit_length() - 1) for q in qs}:
        D *= o
    return D


def spec_common(values) -> int:
    """(o + 2 r)(32 + 4 w(B) w(b)) for r rationals n_i / q_i with o distinct odd parts of the q_i."""
    p = pairs_of(values)
    qs = {q for _, q in p}
    twos = {q: (q & -q).bit_length() - 1 for q in qs}
    odd = {q >> s for q, s in twos.items()}
    B = max(twos.values(), default=0) + sum(o.bit_length() for o in odd)
    b = max((max(abs(n).bit_length(), q.bit_length()) for n, q in p), default=0)
    return (len(odd) + 2 * len(p)) * (32 + 4 * w(B) * w(b))


def spec_rank_charges(rows, what: str) -> list:
    """The charges of an exact rank: each distinct row scaled to integers, then n k (2 m - k - 1) / 2
    (32 + 3 w(k (b + bits(k)))^2) on the (transposed when m > n) integer matrix."""
    out, ints = [], []
    for r in dict.fromkeys(tuple(r) for r in rows):
        out.append((what, spec_common(r)))
        D = spec_denominator(r)
        ints.append([Fraction(x) * D for x in r])
    m, n = len(ints), len(ints[0]) if ints else 0
    if m > n:
        m, n = n, m
    k = min(m, n)
    b = max((abs(int(x)).bit_length() for r in ints for x in r), default=0)
    out.append((what, n * k * (2 * m - k - 1) // 2 * (32 + 3 * w(k * (b + k.bit_length())) ** 2)))
    return out


@pytest.fixture
def charges(monkeypatch):
    """Every (step, units) charged, in order; the real budget still applies."""
    log, real = [], recheck.charge

    def record(units, what):
        assert type(units) is int, (what, units)  # word operations are counted in integers
        log.append((what, units))
        real(units, what)

    monkeypatch.setattr(recheck, "charge", record)
    return log


def over_budget(monkeypatch, c: dict, spent: int) -> tuple:
    """The verdict on ``c`` with the file's budget set to ``spent`` word operations."""
    monkeypatch.setattr(recheck, "EXACT_WORK", spent)
    return judge(c)


def refusal(what: str, total: int, budget: int) -> tuple:
    return 2, (f"{what}: exact arithmetic of about {recheck.show(total)} word operations, above the "
               f"{recheck.show(budget)} a file may use")


@contextmanager
def deadline(seconds: float):
    """TimeoutError after ``seconds`` (a loop that never ends fails the test instead of hanging it)."""
    def stop(signum, frame):
        raise TimeoutError(f"no result within {seconds} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# -- exact_rank and rank_mod2 -------------------------------------------------------------------------------------

def product_matrix(rng, m: int, n: int, r: int, big: bool) -> list:
    """An m x n rational matrix of rank <= r (a product), entries beyond 2^53 when ``big``, rows repeated."""
    size = 10**40 if big else 4
    A = [[Fraction(rng.randint(-size, size), rng.choice([1, 2, 3, 6, 7, 2**70])) for _ in range(r)] for _ in range(m)]
    B = [[Fraction(rng.randint(-size, size)) for _ in range(n)] for _ in range(r)]
    M = [[sum((A[i][t] * B[t][j] for t in range(r)), Fraction(0)) for j in range(n)] for i in range(m)]
    return M + M[:rng.randint(0, 2)]


MATRICES = [product_matrix(random.Random(s), *dims) for s, dims in enumerate(
    [(3, 3, 2, True), (4, 3, 2, True), (3, 5, 3, True), (5, 2, 1, True), (6, 6, 3, True), (2, 7, 2, False),
     (7, 4, 4, False), (5, 5, 5, True), (1, 1, 1, True), (8, 3, 2, True), (3, 8, 3, False), (4, 4, 0, False)])]
MATRICES.append([[Fraction(2**29 + 1), Fraction(1), Fraction(0)], [Fraction(3), Fraction(5), Fraction(7)]])  # k (b +
# bits(k)) = 2 (30 + 2) = 64: w = 2 (not 64 // 65 + 1 = 1)


@pytest.mark.parametrize("M", MATRICES)
def test_exact_rank_is_the_rank_over_q_and_charged_as_the_spec_says(M, charges):
    recheck._spent[0] = 0
    assert recheck.exact_rank(M) == fraction_rank(M)
    assert charges == spec_rank_charges(M, "an exact rank")
    charges.clear()
    recheck._spent[0] = 0
    assert recheck.exact_rank(M, "the rows") == fraction_rank(M)
    assert charges == spec_rank_charges(M, "the rows")


def test_exact_rank_of_no_entries():
    for M in ([], [[]], [[], []]):
        recheck._spent[0] = 0
        assert recheck.exact_rank(M) == 0


def test_an_exact_rank_over_the_budget_names_its_step(monkeypatch):
    """The step that takes the total past the budget is refused with its name and the total (an integer)."""
    M = MATRICES[0]
    steps = spec_rank_charges(M, "the rows")
    for i in (0, len(steps) - 1):  # a row's scaling, the elimination
        total = sum(u for _, u in steps[:i + 1])
        monkeypatch.setattr(recheck, "EXACT_WORK", total - 1)
        recheck._spent[0] = 0
        with pytest.raises(recheck.IllFormed) as e:
            recheck.exact_rank(M, "the rows")
        assert (2, str(e.value)) == refusal("the rows", total, total - 1)
        recheck._spent[0] = 0
        with pytest.raises(recheck.IllFormed, match="^an exact rank: exact arithmetic of about "):
            recheck.exact_rank(M)


def gf2_rank(rows) -> int:
    """Rank over GF(2) of rational rows with odd denominators (x = numerator / odd = numerator mod 2)."""
    R = [[(x.numerator * pow(x.denominator, -1, 2)) % 2 for x in row] for row in rows]
    rank, cols = 0, len(R[0]) if R else 0
    for c in range(cols):
        p = next((i for i in range(rank, len(R)) if R[i][c]), None)
        if p is None:
            continue
        R[rank], R[p] = R[p], R[rank]
        for i in range(len(R)):
            if i != rank and R[i][c]:
                R[i] = [(a + b) % 2 for a, b in zip(R[i], R[rank])]
        rank += 1
    return rank


def test_rank_mod_2_is_the_rank_over_gf2_and_a_lower_bound():
    rng = random.Random(12)
    with deadline(10):
        for _ in range(300):
            m, n = rng.randint(1, 7), rng.randint(1, 7)
            M = [[Fraction(rng.randint(-5, 5), rng.choice([1, 3, 5, 9, 10**30 + 1])) for _ in range(n)]
                 for _ in range(m)]
            assert recheck.rank_mod2(M) == gf2_rank(M) <= fraction_rank(M), M
        assert recheck.rank_mod2([[Fraction(1), Fraction(1)], [Fraction(1), Fraction(0)]]) == 2
        assert recheck.rank_mod2([[Fraction(3), Fraction(1, 3)], [Fraction(1, 5), Fraction(7)]]) == 1
        assert recheck.rank_mod2([]) == 0
        assert recheck.rank_mod2([[], []]) == 0
        assert recheck.rank_mod2([[Fraction(0)] * 3]) == 0


@pytest.mark.parametrize("q", [2, 4, 6, 12, 2**70])
def test_rank_mod_2_reads_nothing_from_an_even_denominator(q):
    """(1, 2) and (1/q, 2/q) are one direction over Q, yet for q = 2 the numerators of (1/2, 1), (1, 1), are
    independent of (1, 0) modulo 2: an even denominator says nothing modulo 2 (None, then the exact rank)."""
    rows = [[Fraction(1), Fraction(2)], [Fraction(1, q), Fraction(2, q)], [Fraction(1), Fraction(1)]]
    assert recheck.rank_mod2(rows) is None
    assert recheck.rank_mod2(rows[:1] + [[Fraction(3, q)]]) is None  # one even denominator anywhere


# -- 4.5 mha-shared-context-cap -----------------------------------------------------------------------------------

def test_shared_context_vectors_dependent_over_q_are_refused():
    """a = (1, 2, -3) and a / 2: rank 1, although their numerators (1, 0, 1) and (1, 1, 3) are independent mod 2.
    A cap Hn - 2 from them is false (exit 1); Hn - 1 from one of them is proved."""
    half = ["1/2", "1", "-3/2"]
    c = shared_cap(3, [[1, 2, -3], half], n=2)
    assert judge(c) == (1, "the 2 null vectors of S are not independent (rank 1)")
    assert judge(shared_cap(3, [half], n=2))[0] == 0


def test_shared_context_charges_name_their_steps(charges, monkeypatch):
    """Each vector's block constants summed exactly ("null vectors"), then, with even denominators (no decision
    modulo 2), the exact rank of the a's ("null vectors of S")."""
    vs = [["1/2", "1/2", "-1"], ["1/4", "-1/4", "0"]]
    c = shared_cap(3, vs, n=2)
    assert judge(c)[0] == 0
    a = [[Fraction(x) for x in v] for v in vs]
    steps = [("null vectors", spec_common(v)) for v in a] + spec_rank_charges(a, "null vectors of S")
    assert charges == steps
    for i in (0, len(steps) - 1):
        total = sum(u for _, u in steps[:i + 1])
        assert over_budget(monkeypatch, c, total - 1) == refusal(steps[i][0], total, total - 1)


# -- 4.6 mha-token-sum-cap -----------------------------------------------------------------------------------------

def token_sum_cert(tokens: list, vectors: list, H: int) -> dict:
    d = len(tokens[0])
    return cert("mha-token-sum-cap", {"rank_at_most": H * d - len(vectors)},
                {"T": 3, "n": len(tokens), "d": d, "H": H, "shared": True,
                 "contexts": [[[str(x) for x in t] for t in tokens]],
                 "null_vectors": [[str(x) for x in v] for v in vectors]})


def token_sum_steps(tokens: list, vectors: list, H: int, decided_mod2: bool) -> list:
    """The spec's charges of 4.6: contexts over D_E; per new block, its D_w and its dot products with every token;
    per vector, the sum of its constants; the exact rank when modulo 2 does not decide."""
    d = len(tokens[0])
    E = [Fraction(x) for t in tokens for x in t]
    DE = spec_denominator(E)
    Ei = [int(x * DE) for x in E]
    bE = max(abs(x).bit_length() for x in Ei)
    steps, seen = [("contexts", spec_common(E))], {}
    for v in vectors:
        consts = []
        for h in range(H):
            blk = tuple(Fraction(x) for x in v[h * d:(h + 1) * d])
            if blk not in seen:
                Dw = spec_denominator(blk)
                wi = [int(x * Dw) for x in blk]
                nz = [x for x in wi if x]
                steps += [("null vectors", spec_common(blk)),
                          ("null vectors", len(tokens) * len(nz) * (32 + 4 * w(bE) * w(max(
                              (abs(x).bit_length() for x in nz), default=0))))]
                seen[blk] = (sum(a * b for a, b in zip(Ei[:d], wi)), Dw)
            consts.append(seen[blk])
        steps.append(("null vectors", spec_common(consts)))
    if not decided_mod2:
        steps += spec_rank_charges([[Fraction(x) for x in v] for v in vectors], "null vectors of Z")
    return steps


# (bE, bw) = (64, 100) and (100, 64): w(64) = 2 (not 64 // 65 + 1 = 1), w(100) = 2 (not 100 / 64 + 1)
TOKEN_SUM_CASES = [([[2**63, 0], [2**63, 1]], [[2**99 + 2, 0, -(2**99 + 2), 0]], 2, False),
                   ([[2**99 + 1, 0], [2**99 + 1, 3]], [[2**63 + 1, 0, -(2**63 + 1), 0]], 2, True),
                   ([["1/3", "2/9"], ["1/3", "0"]], [["3/2", "0", "-3/2", "0", "0", "0"],
                                                      ["0", "0", "5/7", "0", "-5/7", "0"]], 3, False)]


@pytest.mark.parametrize("tokens, vectors, H, mod2", TOKEN_SUM_CASES)
def test_token_sum_charges_are_the_spec_s(tokens, vectors, H, mod2, charges, monkeypatch):
    c = token_sum_cert(tokens, vectors, H)
    code, line = judge(c)
    assert code == 0, line
    steps = token_sum_steps(tokens, vectors, H, mod2)
    assert charges == steps
    for i in range(len(steps)):
        total = sum(u for _, u in steps[:i + 1])
        if steps[i][1]:
            assert over_budget(monkeypatch, c, total - 1) == refusal(steps[i][0], total, total - 1)


def block_limit_cert(one_more: bool) -> dict:
    """Shared context of n = 400 tokens e_0 in R^50 (2 10^4 entries: at most 500 distinct blocks), H = 10, 50
    vectors whose 500 blocks c e_j (j >= 1: E v_h = 0) are all distinct, vector i odd only at its own head
    i // 49, coordinate 1 + i % 49 (independent modulo 2); ``one_more``: a 51st vector, the first with its
    head-0 block 1001 e_1 (the 501st distinct block)."""
    n, d, H = 400, 50, 10
    vectors = []
    for i in range(50):
        v = [0] * (H * d)
        r, j = divmod(i, 49)
        for h in range(H):
            v[h * d + 1 + j] = 2 * (r * H + h) + (1 if h == r else 2)
        vectors.append(v)
    if one_more:
        vectors.append([0, 1001] + vectors[0][2:])
    return cert("mha-token-sum-cap", {"rank_at_most": H * d - len(vectors)},
                {"T": 2, "n": n, "d": d, "H": H, "shared": True, "contexts": [[[1] + [0] * (d - 1)] * n],
                 "null_vectors": vectors})


def test_token_sum_distinct_blocks_times_entries_at_the_limit():
    """(distinct blocks) x (entries of contexts) <= 10^7 exactly: 500 x 2 10^4 is read on, 501 is refused."""
    code, line = judge(block_limit_cert(False))
    assert code == 0, line
    assert judge(block_limit_cert(True)) == (2, "distinct null-vector blocks times context entries above 10^7")


# -- 4.7 dana-thm2-negative-rhs -----------------------------------------------------------------------------------

def thm2_cert(P: list, weights: list, q: str, N: int = 3, d: int = 2) -> dict:
    return cert("dana-thm2-negative-rhs", {"rhs_below": q},
                {"N": N, "d": d, "T0": len(P), "conditionals": P, "weights": weights})


def test_thm2_with_only_uniform_and_point_mass_rows_is_zero():
    """Every term 0 (a point mass or uniform): the right-hand side is exactly 0, certainly not below 0 at 128
    bits (no retry); not below -1 either."""
    P = [["1/3", "1/3", "1/3"], ["0", "1", "0"], ["1/3", "1/3", "1/3"]]
    for q in ("0", "-1"):
        assert judge(thm2_cert(P, ["1", "2", "3"], q)) == (
            1, f"the right-hand side (upper end 0, intervals at 128 bits) is not below the claimed {q}")


def test_thm2_a_claim_the_enclosure_misses_names_its_upper_end():
    """RHS(N = 3, d = 2, (1/2, 1/4, 1/4)) = -0.05549...: the claim -1 is missed at 128 bits, no retry."""
    rhs = reference_rhs(thm2_cert([["1/2", "1/4", "1/4"]], ["1"], "-1"))
    assert -0.0555 < rhs < -0.0554
    code, line = judge(thm2_cert([["1/2", "1/4", "1/4"]], ["1"], "-1"))
    assert code == 1 and line.startswith("the right-hand side (upper end -0.05549") and line.endswith(
        ", intervals at 128 bits) is not below the claimed -1"), line


def test_thm2_next_to_a_point_mass_needs_the_exact_bounds_and_512_bits():
    """The row (1 - 10^-799, 10^-799, 0): -x log x <= 1 - x decides its entropy; a claim 10^-100 above the RHS
    is proved only at 512 bits."""
    assert judge(thm2_near_point_mass("-0.19"))[0] == 0
    rhs = reference_rhs(thm2_near_point_mass("0"))
    with mpmath.workdps(3000):
        near = mpmath.nstr(rhs + mpmath.mpf(10) ** -100, 400, strip_zeros=False)
    assert judge(thm2_near_point_mass(near))[0] == 0


def test_thm2_of_one_row_next_to_a_point_mass_is_decided_to_1e_6():
    """The row (1 - 10^-799, 10^-799, 0) alone: RHS = -2.781...e-796, every digit of it carried by the exact bounds
    (-x log x <= 1 - x for x = 1 - 10^-799, whose log no 512-bit interval separates from 0). A claim 10^-6
    (relative) above it is proved; 10^-6 below is not."""
    P = [[f"{10**799 - 1}/{10**799}", f"1/{10**799}", "0"]]
    rhs = reference_rhs(thm2_cert(P, ["1"], "0"))
    with mpmath.workdps(3000):
        for f, ok in ((1 - mpmath.mpf(10) ** -6, 0), (1 + mpmath.mpf(10) ** -6, 1)):
            digits = int(mpmath.nint(-rhs * f * mpmath.mpf(10) ** 805))  # q = -digits 10^-805
            q = "-0." + "0" * (405 - len(str(digits))) + str(digits) + "e-400"
            assert recheck.number(q) == Fraction(-digits, 10**805)
            assert judge(thm2_cert(P, ["1"], q))[0] == ok, q


def test_thm2_charges_name_their_steps(charges, monkeypatch):
    P, wts = [["1/2", "1/4", "1/4"], ["1/8", "5/8", "1/4"]], ["1/3", "2/5"]
    c = thm2_cert(P, wts, "-1/100")
    assert judge(c)[0] == 0
    steps = [(f"conditional row {t}", spec_common(row)) for t, row in enumerate(P)] + [("weights", spec_common(wts))]
    assert charges == steps
    total = sum(u for _, u in steps)
    assert over_budget(monkeypatch, c, total - 1) == refusal("weights", total, total - 1)


# -- 4.8 dana-lemma2-rank-cap --------------------------------------------------------------------------------------

def formal(N: int, S: int, t, s) -> list:
    """u_{t_s} + p_s in Z^{N+S} (spec 4.8)."""
    return [Fraction(int(j == t[s]) + int(j == N + s)) for j in range(N + S)]


LEMMA2_SUPPORTS = [(2, 2, [(0, 1), (1, 0)])] + [
    (N, S, random.Random(seed).sample(list(itertools.product(range(N), repeat=S)), count))
    for N, S, count, seed in ((3, 2, 5, 1), (4, 3, 9, 2), (2, 3, 4, 3), (5, 2, 7, 4), (3, 1, 2, 5))]


@pytest.mark.parametrize("N, S, seqs", LEMMA2_SUPPORTS)
def test_lemma2_ranks_are_the_formal_ranks(N, S, seqs):
    """R and D recomputed from spec 4.8 (the support (0, 1), (1, 0): D = rank{p_0 - p_1 + u_0 - u_1,
    p_0 - p_1 + u_1 - u_0} = 2, where sums of the formal vectors would give 1)."""
    count = len(seqs)
    R = fraction_rank([formal(N, S, t, s) for t in seqs for s in range(S)])
    D = fraction_rank([[a - b for a, b in zip(formal(N, S, t, s), formal(N, S, t, S - 1))]
                       for t in seqs for s in range(S - 1)])
    for d, H in ((1, 2), (2, 3), (N + S, 2)):
        claim = {"T0": count, "R": R, "D": D, "cap": min(d, R) + (H - 1) * min(d, D), "target": min(count, H * d)}
        c = cert("dana-lemma2-rank-cap", claim, {"N": N, "S": S, "d": d, "H": H, "sequences": [list(t) for t in seqs]})
        got = judge(c)
        if claim["cap"] < claim["target"]:
            assert got[0] == 0, got
        else:
            assert got == (1, f"cap {claim['cap']} is not below min(T0, Hd) = {claim['target']}")
        exported = lemma2_certificate(N, S, d, H, seqs, about="")
        assert exported["claim"] == claim


# -- 4.9 dana-thm1-capacity-floor ----------------------------------------------------------------------------------

P4 = [[0.5, 0.25, 0.125, 0.125], [0.125, 0.5, 0.25, 0.125], [0.25, 0.125, 0.5, 0.125], [0.125, 0.125, 0.25, 0.5]]
P3 = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5], [0.125, 0.375, 0.5]]


def test_floor_with_d_h_above_1():
    """(d, d_h, H) = (3, 2, 1): k = min(H d_h, d) = 2 (H d_h, not H / d_h) and T0 = 4 <= H d_h + d = 5."""
    c = thm1_floor_certificate(_seq([[0, 0], [1, 0], [2, 0], [3, 0]], 4, 3, 2, 1, P4), about="")
    assert c["claim"]["k"] == 2
    assert judge(c)[0] == 0


def test_floor_groups_by_the_last_token():
    """S = 3, the middle tokens (0, 1, 0) differ from the last (2, 2, 2)."""
    c = thm1_floor_certificate(_seq([[0, 0, 2], [1, 1, 2], [2, 0, 2]], 3, 2, 1, 1, P3[:3]), about="")
    assert judge(c)[0] == 0


def pinned(c: dict, factor) -> dict:
    c = copy.deepcopy(c)
    with mpmath.workdps(60):
        c["claim"]["kappa0"] = mpmath.nstr(critical_kappa(c) * factor, 50, min_fixed=-1, max_fixed=-1)
    return c


def test_floor_sums_over_every_group():
    """Two groups (H = 0, k = 0): kappa0 a hair above the critical kappa* of both groups' sequences is refused
    (it is below the critical kappa of the last group alone)."""
    c = thm1_floor_certificate(_seq([[0, 0], [1, 0], [0, 1], [2, 1]], 3, 4, 1, 0, P3), about="")
    assert len(c["data"]["groups"]) == 2
    assert judge(pinned(c, 1 - mpmath.mpf(10) ** -12))[0] == 0
    code, line = judge(pinned(c, 1 + mpmath.mpf(10) ** -12))
    assert code == 1 and line.startswith("N sum_t delta_t(kappa0)^2 (upper "), line


def test_floor_with_unequal_weights_is_pinned():
    """pi_t = w_t / sum w enters eta_t = sqrt(kappa0 sum w / (2 w_t)): weights (2, 3, 5)."""
    c = load(FLOORS[0])
    c["data"]["weights"] = ["2", "3", "5"]
    assert judge(pinned(c, 1 - mpmath.mpf(10) ** -12))[0] == 0
    code, line = judge(pinned(c, 1 + mpmath.mpf(10) ** -12))
    assert code == 1 and line.startswith("N sum_t delta_t(kappa0)^2 (upper ") and line.endswith(
        f" is not below sum_g alpha_g = {recheck.show(Fraction(c['data']['groups'][0]['alpha']))}"), line


def test_floor_intervals_are_at_128_bits():
    """Spec 4.9: the floor is decided in 128-bit intervals: a kappa0 10^-45 (relative) below the critical one is
    true but beyond what 128 bits separate (exit 1); 10^-12 below is proved."""
    c = load(FLOORS[0])
    assert judge(pinned(c, 1 - mpmath.mpf(10) ** -12))[0] == 0
    code, line = judge(pinned(c, 1 - mpmath.mpf(10) ** -45))
    assert code == 1 and line.startswith("N sum_t delta_t(kappa0)^2 (upper "), line


def test_floor_eta_equal_to_the_smallest_conditional_is_refused():
    """Weights (1, 1, 2) and kappa0 = 1/32: eta_0 = sqrt(kappa0 4 / 2) = 1/4 = min p_0 exactly (a gap of
    exactly 0 is not > 0)."""
    c = load(FLOORS[0])
    c["data"]["weights"] = ["1", "1", "2"]
    c["claim"]["kappa0"] = "1/32"
    assert judge(c) == (1, "sequence 0: eta = sqrt(kappa0 / (2 pi_t)) is not below its smallest conditional")


def test_floor_charges_name_their_steps(charges, monkeypatch):
    c = load(FLOORS[0])
    c["data"]["weights"] = ["1/3", "2", "5/7"]
    c["claim"]["kappa0"] = "1e-9"
    assert judge(c)[0] == 0
    d = c["data"]
    steps = [(f"conditional row {t}", spec_common(row)) for t, row in enumerate(d["conditionals"])]
    steps += [("weights", spec_common(d["weights"])), ("alpha", spec_common([g["alpha"] for g in d["groups"]]))]
    assert charges == steps
    for i in (len(steps) - 2, len(steps) - 1):
        total = sum(u for _, u in steps[:i + 1])
        assert over_budget(monkeypatch, c, total - 1) == refusal(steps[i][0], total, total - 1)


# -- 4.10 relu-unreachable-labels ----------------------------------------------------------------------------------

def relu_cert(T: int, d: int, m: int, labels=None, points=None) -> dict:
    points = points or [[str(Fraction(t * d + i + 1, 1 + (t + i) % 3)) for i in range(d)] for t in range(T)]
    return cert("relu-unreachable-labels", {"units": m},
                {"T": T, "d": d, "points": points, "labels": labels or ["5/2"] * T})


@pytest.mark.parametrize("T, m, d, refused", [(3, 7, 1, False), (12, 1, 13, False), (13, 1, 4, False),
                                              (4, 5, 1, True), (3, 7, 45, True), (12, 1, 14, True)])
def test_relu_limits_at_their_boundaries(T, m, d, refused):
    """C(2^T + m - 1, m) <= 10^4 and C(2^T + m - 1, m) T^2 (m (d + 1) + 2) <= 10^7 (spec 4.10): the cases next to
    either bound. Constant labels lie in the span of the all-zero patterns' M = [0 ... 0 1]: exit 1 when read."""
    tuples = mpmath.binomial(2**T + m - 1, m)
    assert refused == (tuples > 10**4 or tuples * T * T * (m * (d + 1) + 2) > 10**7)
    code, line = judge(relu_cert(T, d, m))
    if refused:
        assert (code, line) == (2, "more than 10^4 activation-pattern tuples, or 10^7 operations")
    else:
        assert (code, line) == (1, f"the labels lie in the span of activation patterns {((0,) * T,) * m}: not shown "
                                   "unreachable"), line


def test_relu_names_the_pattern_whose_span_holds_the_labels():
    """Points 1, 2 and labels 1, 2: the pattern (0, 1) fits x -> x (M = [[0 0 1], [2 1 1]] has rank 2, as has
    [M y]); (0, 0) does not (y is not constant)."""
    c = relu_cert(2, 1, 1, labels=["1", "2"], points=[["1"], ["2"]])
    assert judge(c) == (1, "the labels lie in the span of activation patterns ((0, 1),): not shown unreachable")


def relu_steps(c: dict) -> list:
    """Spec 4.10 / 7.1: the columns of points and the labels scaled to integers, then two exact ranks a multiset."""
    d, m = c["data"]["d"], c["claim"]["units"]
    X = [[Fraction(recheck.number(x)) for x in row] for row in c["data"]["points"]]
    y = [Fraction(recheck.number(x)) for x in c["data"]["labels"]]
    T = len(X)
    cols = [[X[t][i] for t in range(T)] for i in range(d)]
    steps = [("points", spec_common(col)) for col in cols] + [("labels", spec_common(y))]
    Xi = [[int(X[t][i] * spec_denominator(cols[i])) for i in range(d)] for t in range(T)]
    yi = [int(v * spec_denominator(y)) for v in y]
    for tup in itertools.combinations_with_replacement(list(itertools.product((0, 1), repeat=T)), m):
        M = [[Fraction(D[t] * x) for D in tup for x in Xi[t] + [1]] + [Fraction(1)] for t in range(T)]
        steps += spec_rank_charges(M, "pattern ranks")
        steps += spec_rank_charges([row + [Fraction(yi[t])] for t, row in enumerate(M)], "pattern ranks")
    return steps


def test_relu_charges_are_the_spec_s(charges, monkeypatch):
    c = load("proposition3.sharpened.unreachable")
    code, line = judge(c)
    assert code == 0, line
    steps = relu_steps(c)
    assert charges == steps
    for i in (0, c["data"]["d"], c["data"]["d"] + 2, len(steps) - 1):
        total = sum(u for _, u in steps[:i + 1])
        assert over_budget(monkeypatch, c, total - 1) == refusal(steps[i][0], total, total - 1)


# -- 4.1 rank-lower-bound ------------------------------------------------------------------------------------------

def test_rank_lower_bound_retries_at_512_bits():
    """The 1 x 1 interval [2^-200, 1 - 2^-200] (every entry positive): X = 1 / 0.5 gives |1 - X a| <= 1 - 2^-199,
    below 1 only past 128 bits: proved at 512. [0, 1] contains a singular matrix: refused at both."""
    lo, hi = Fraction(1, 2**200), 1 - Fraction(1, 2**200)
    c = cert("rank-lower-bound", {"rank_at_least": 1},
             {"m": 1, "n": 1, "matrix": [[[str(lo), str(hi)]]], "rows": [0], "cols": [0]})
    code, line = judge(c)
    assert code == 0 and line.startswith("rank-lower-bound: rank(A) >= 1 for every A in the 1 x 1 interval matrix"), line
    c = cert("rank-lower-bound", {"rank_at_least": 1},
             {"m": 1, "n": 1, "matrix": [[["0", "1"]]], "rows": [0], "cols": [0]})
    assert judge(c)[0] == 1
