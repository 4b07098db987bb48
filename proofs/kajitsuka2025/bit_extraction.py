"""A bit-extraction ReLU network memorizing N distinct integer ids: OUR
construction, in the spirit of Vardi, Yehudai & Shamir (ICLR 2022), whose
own construction (width 12, depth O~(sqrt N) [R2]) was not retrieved.

Network (every weight an integer; ReLU after every layer but the last)
----------------------------------------------------------------------
Sort the ids, cut them into B = ceil(N/K) blocks of K consecutive ids;
block j has base b_j (its first id) and a payload P_j, the integer whose
m = K(w + beta) bits are the block's K records (offset x - b_j in w bits,
label in beta bits; padding records are (0, 0)).

* L1 (1 -> 2B-1): h0 = relu(x - x_min); a_j = relu(x - t_j),
  b_j = relu(x - t_j - 1), t_j the last id of block j-1 (j = 2..B): on
  integers a_j - b_j is the step [x > t_j].
* L2 (2B-1 -> 6): X = x - b_J, Z = P_J, T1 = relu(Z - 2^(m-1) + 1),
  T2 = relu(Z - 2^(m-1)), OUT = M = 0.
* per record, per bit (6 or 7 -> 7): bit = T1 - T2 (the top bit of Z),
  Z' = 2Z - 2^m bit, T1', T2' of Z', the offset O or label Y accumulator
  doubled plus bit, OUT += M (at a record's first bit).
* match (7 -> 9): E1, E2, E3 = relu(X - O + 1), relu(X - O), relu(X - O - 1):
  e = E1 - 2 E2 + E3 = [X = O] on integers.
* product (9 -> 6): M = relu(Y - 2^beta (1 - e)) = Y e.
* output (6 -> 1): OUT + M.

Parameters (every entry of every dense weight matrix and bias vector):

    P(N; K, w, beta) = 16 ceil(N/K) + 5 + K (56 (w + beta) + 125),

with K = round(sqrt(16 N / (56 (w + beta) + 125))): O(sqrt(N (w + beta)))
= O(sqrt(N log N)) for ids in [0, poly(N)] and C = poly(N) labels.

Evaluation is exact (python ints / int64 where bounded).  The fast path
(:func:`evaluate`) groups points by block: the payload units' rows reference
only payload units (checked on the rows), so points of one block share their
trajectory; L1-L2 use sum_j c_j (a_j - b_j) = prefix sums, after checking
exactly that each point's steps are 0/1 and non-increasing in j.
:func:`forward_dense` is the plain layer-by-layer product, for cross-checks.

>>> net = build_bit_extraction([3, 0, 7, 12, 5], [1, 0, 2, 1, 1], C=3)
>>> evaluate(net, [3, 0, 7, 12, 5]).tolist(), forward_dense(net, [3, 0, 7, 12, 5])
([1, 0, 2, 1, 1], [1, 0, 2, 1, 1])
>>> parameter_count(net) == formula_count(net.N, net.K, net.omega, net.beta)
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["BitNet", "build_bit_extraction", "evaluate", "evaluate_forms", "forward_dense", "parameter_count", "formula_count",
           "choose_block_size"]

INT64_SAFE = 1 << 62


@dataclass
class Layer:
    inputs: list  # unit names
    outputs: list
    rows: list  # per output: {input name: integer coefficient}
    bias: list  # per output: integer
    relu: bool = True


@dataclass
class BitNet:
    layers: list
    N: int
    K: int
    B: int
    omega: int
    beta: int
    m: int
    robust: bool = False


def formula_count(N: int, K: int, omega: int, beta: int, robust: bool = False) -> int:
    """16 ceil(N/K) + 5 + K (56 (omega + beta) + 125): the dense parameter count of the network
    (robust: 139 instead of 125, a match layer of four plateau units instead of three)."""
    return 16 * (-(-N // K)) + 5 + K * (56 * (omega + beta) + (139 if robust else 125))


def parameter_count(net: BitNet) -> int:
    return sum(len(L.outputs) * len(L.inputs) + len(L.outputs) for L in net.layers)


def _omega(xs: np.ndarray, K: int, shift: int = 0) -> int:
    """Bits of the largest offset x - (first id of its block) + shift for sorted ids and blocks of K."""
    starts = xs[(np.arange(xs.size) // K) * K]
    return max(1, int((xs - starts).max() + shift).bit_length())


def choose_block_size(xs_sorted: np.ndarray, beta: int, shift: int = 0) -> tuple[int, int]:
    """(K, omega): K = round(sqrt(16 N / (56 (omega + beta) + 125))), omega re-measured at that K (twice)."""
    N = xs_sorted.size
    K = max(1, math.isqrt(N))
    for _ in range(2):
        omega = _omega(xs_sorted, K, shift)
        K = max(1, min(N, round(math.sqrt(16 * N / (56 * (omega + beta) + 125)))))
    return K, _omega(xs_sorted, K, shift)


def build_bit_extraction(ids, labels, *, C: int, K: int | None = None, flip: tuple | None = None,
                         robust: bool = False) -> BitNet:
    """The network for distinct integer ``ids`` with ``labels`` in [0, C).
    ``flip=(block, bit)`` xors one payload bit (a corrupted network, for controls).
    ``robust``: ids at least 3 apart; the network is constant (= the label) on
    [id - 1, id + 1]: thresholds at last + 1, offsets shifted by 3, and
    plateau match units e = E1 - E2 - E3 + E4 (1 on |X - O| <= 1, 0 on >= 2)."""
    ids, labels = np.asarray(ids, dtype=np.int64), np.asarray(labels, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    xs, ys = ids[order], labels[order]
    N = xs.size
    beta = max(1, int(C - 1).bit_length())
    shift = 3 if robust else 0  # robust: padding records (offset 0) stay >= 3 from every real offset
    if robust and np.any(np.diff(xs) < 3):
        raise ValueError("the robust network needs ids at least 3 apart")
    if K is None:
        K, omega = choose_block_size(xs, beta, shift)
    else:
        omega = _omega(xs, K, shift)
    B = -(-N // K)
    rec = omega + beta
    m = K * rec
    base, payload = [], []
    for j in range(B):
        bx, by = xs[j * K:(j + 1) * K].tolist(), ys[j * K:(j + 1) * K].tolist()
        P = 0
        for k in range(K):
            o, y = (bx[k] - bx[0] + shift, by[k]) if k < len(bx) else (0, 0)
            P = (P << rec) | (o << beta) | y
        base.append(bx[0])
        payload.append(P)
    if flip is not None:
        payload[flip[0]] ^= 1 << flip[1]
    T, x1 = 1 << (m - 1), int(xs[0])
    thresholds = [int(xs[j * K - 1]) + (1 if robust else 0) for j in range(1, B)]
    h_names = ["h0"] + [f"{ab}{j}" for j in range(1, B) for ab in ("a", "b")]
    L1 = Layer(["x"], h_names, [{"x": 1}] * len(h_names),
               [-x1 + shift] + [-(t + extra) for t in thresholds for extra in (0, 1)])
    dX = {"h0": 1}
    dZ = {}
    for j in range(1, B):
        db, dp = base[j] - base[j - 1], payload[j] - payload[j - 1]
        dX[f"a{j}"], dX[f"b{j}"] = -db, db
        dZ[f"a{j}"], dZ[f"b{j}"] = dp, -dp
    S6 = ["X", "Z", "T1", "T2", "OUT", "M"]
    L2 = Layer(h_names, S6, [dX, dZ, dZ, dZ, {}, {}], [0, payload[0], payload[0] - T + 1, payload[0] - T, 0, 0])
    layers = [L1, L2]
    S7 = ["X", "Z", "T1", "T2", "O", "Y", "OUT"]
    top = 1 << m
    Zn = {"Z": 2, "T1": -top, "T2": top}  # Z' = 2Z - 2^m (T1 - T2)
    for _ in range(K):
        for q in range(rec):
            first, is_offset = q == 0, q < omega
            acc = "O" if is_offset else "Y"
            rows, bias = [], []
            for u in S7:
                if u == "X":
                    rows.append({"X": 1})
                    bias.append(0)
                elif u == "Z":
                    rows.append(dict(Zn))
                    bias.append(0)
                elif u in ("T1", "T2"):
                    rows.append(dict(Zn))
                    bias.append(-T + 1 if u == "T1" else -T)
                elif u in ("O", "Y"):
                    row = {} if first else {u: 2 if u == acc else 1}
                    if u == acc:
                        row.update({"T1": 1, "T2": -1})
                    rows.append(row)
                    bias.append(0)
                else:  # OUT
                    rows.append({"OUT": 1, "M": 1} if first else {"OUT": 1})
                    bias.append(0)
            layers.append(Layer(S6 if first else S7, S7, rows, bias))
        E = ("E1", "E2", "E3", "E4") if robust else ("E1", "E2", "E3")
        Eb = dict(zip(E, (2, 1, -1, -2) if robust else (1, 0, -1)))
        Ec = dict(zip(E, (1, -1, -1, 1) if robust else (1, -2, 1)))  # e = sum_E Ec[E] E
        SM = ["X", "Z", "T1", "T2", *E, "Y", "OUT"]
        layers.append(Layer(S7, SM, [{u: 1} if u not in E else {"X": 1, "O": -1} for u in SM],
                            [Eb.get(u, 0) for u in SM]))
        cp = 1 << beta
        layers.append(Layer(SM, S6, [{"X": 1}, {"Z": 1}, {"T1": 1}, {"T2": 1}, {"OUT": 1},
                                     {"Y": 1, **{u: cp * c for u, c in Ec.items()}}], [0, 0, 0, 0, 0, -cp]))
    layers.append(Layer(S6, ["y"], [{"OUT": 1, "M": 1}], [0], relu=False))
    return BitNet(layers, N, K, B, omega, beta, m, robust)


def forward_dense(net: BitNet, xs) -> list:
    """Layer by layer on every point, python ints (small N only)."""
    out = []
    for x in xs:
        v = {"x": int(x)}
        for L in net.layers:
            pre = [b + sum(c * v[s] for s, c in row.items()) for row, b in zip(L.rows, L.bias)]
            v = {u: (max(p, 0) if L.relu else p) for u, p in zip(L.outputs, pre)}
        out.append(v["y"])
    return out


def _relu(a):
    return np.where(a > 0, a, 0).astype(a.dtype, copy=False)


def _decide(a, b, xs, r, failed):
    """relu of the affine forms a + b x on [x_c - r, x_c + r]: kept where certainly >= 0, zero where
    certainly <= 0, else the point is marked undecided (``failed``)."""
    mid, spread = a + b * xs, np.abs(b) * r
    keep, zero = mid - spread >= 0, mid + spread <= 0
    failed |= ~(keep | zero)
    return np.where(keep, a, 0), np.where(keep, b, 0)


def _stage_one(net: BitNet, xs: np.ndarray, r: int, failed: np.ndarray):
    """L1-L2 exactly on [x - r, x + r]: the forms of X (int64) and the payload units per distinct step count J."""
    L1, L2 = net.layers[0], net.layers[1]
    bias1 = np.array(L1.bias, dtype=np.int64)
    if any(row != {"x": 1} for row in L1.rows) or abs(xs).max(initial=0) >= 1 << 40:
        raise ValueError("L1 is not the step layer this evaluator reads")
    nb = (len(L1.outputs) - 1) // 2

    def step_coefficients(row) -> list:
        c = [row.get(f"a{j}", 0) for j in range(1, nb + 1)]
        if any(row.get(f"b{j}", 0) != -c[j - 1] for j in range(1, nb + 1)):
            raise ValueError("an L2 row is not a sum of steps")
        return c

    xa = np.array(step_coefficients(L2.rows[0]), dtype=np.int64)
    ca = step_coefficients(L2.rows[1])
    if (L2.rows[2:4] != [L2.rows[1]] * 2 or L2.rows[4:] != [{}, {}] or L2.bias[4:] != [0, 0]
            or L2.bias[0] != 0 or abs(xa).max(initial=0) >= 1 << 41):
        raise ValueError("L2 is not the payload layer this evaluator reads")
    # the steps relu(x - t_j) - relu(x - t_j - 1) without an N x B matrix: with t strictly increasing
    # (checked), x - r - 1 >= t_{J-1} and x + r <= t_J (checked per point) give step_j = 1 for j < J and
    # 0 for j >= J on the whole interval; h0 = x + bias_0 >= 0 there (checked).
    t = -bias1[1::2]
    if np.any(bias1[2::2] != bias1[1::2] - 1) or np.any(np.diff(t) <= 0):
        raise ValueError("L1's thresholds are not strictly increasing steps")
    J = np.searchsorted(t, xs, side="left")  # number of t_j < x
    if nb:
        failed |= (J > 0) & (xs - r - 1 < t[np.maximum(J - 1, 0)])
        failed |= (J < nb) & (xs + r > t[np.minimum(J, nb - 1)])
    failed |= xs - r + bias1[0] < 0
    xcum = np.concatenate([[0], np.cumsum(xa)])
    c0 = L2.rows[0].get("h0", 0)
    X = _decide(c0 * bias1[0] + xcum[J], np.full(xs.size, c0, dtype=np.int64), xs, r, failed)
    prefix = np.cumsum(np.array([0] + ca, dtype=object))  # sum_{j <= J} c_j
    uniq, inv = np.unique(J, return_inverse=True)
    state = {}
    for u, row, b in zip(L2.outputs[1:4], L2.rows[1:4], L2.bias[1:4]):
        state[u] = _relu(np.array([b + prefix[k] for k in uniq.tolist()], dtype=object))
    return X, state, inv, len(uniq)


def evaluate_forms(net: BitNet, centers, radius: int = 0):
    """(a, b, undecided): on [c - radius, c + radius] the output is a + b x exactly where not undecided
    (every relu's sign certain on the interval, so the network is affine there)."""
    xs = np.asarray(centers, dtype=np.int64)
    failed = np.zeros(xs.size, dtype=bool)
    X, block, inv, nb = _stage_one(net, xs, int(radius), failed)
    zero = (np.zeros(xs.size, dtype=np.int64), np.zeros(xs.size, dtype=np.int64))
    point = {"X": X, "OUT": zero, "M": zero}
    small = {}

    def gathered(u):
        if u not in small:
            if any(abs(v) >= INT64_SAFE for v in block[u]):
                raise ValueError(f"unit {u} is too large to meet a point unit")
            small[u] = np.array(block[u].tolist(), dtype=np.int64)[inv]
        return small[u]

    for L in net.layers[2:]:
        new_point, new_block, combos = {}, {}, {}
        for u, row, b in zip(L.outputs, L.rows, L.bias):
            if all(s in block for s in row):
                key = tuple(sorted(row.items()))
                if key not in combos:  # sum_s c_s v_s, grouped by |c| (exact in any order)
                    acc = np.zeros(nb, dtype=object)
                    for c in sorted({abs(c) for c in row.values()}):
                        part = sum((block[s] if cs > 0 else -block[s] for s, cs in row.items() if abs(cs) == c),
                                   np.zeros(nb, dtype=object))
                        acc = acc + (part if c == 1 else c * part)
                    combos[key] = acc
                acc = combos[key] + b
                new_block[u] = _relu(acc) if L.relu else acc
            else:
                if row == {u: 1} and b == 0 and u in point and L.relu:
                    new_point[u] = point[u]  # relu(v) = v for a relu output, certainly >= 0
                    continue
                fa, fb = np.full(xs.size, b, dtype=np.int64), np.zeros(xs.size, dtype=np.int64)
                for s, c in row.items():
                    if s in point:
                        fa, fb = fa + c * point[s][0], fb + c * point[s][1]
                    else:
                        fa = fa + c * gathered(s)
                new_point[u] = _decide(fa, fb, xs, radius, failed) if L.relu else (fa, fb)
        point, block, small = new_point, new_block, {}
    return point["y"][0], point["y"][1], failed


def evaluate(net: BitNet, ids) -> np.ndarray:
    """The network's output on every (integer) id, exactly."""
    a, b, failed = evaluate_forms(net, ids, 0)
    if failed.any():  # pragma: no cover - radius 0: every sign is decided
        raise ValueError("undecided relu at radius 0")
    return a + b * np.asarray(ids, dtype=np.int64)
