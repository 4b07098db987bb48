"""The exact route to Thm. 1 with eps = 0 (DANA2025.md, reconstructed; no lambda).

Construction
------------
Choose rational token vectors x' = e' + pos', attention matrices
K^h = P_h^T Q_h (rank <= d_h) and values V^h in R^{d_h x d}; compute the
attention outputs A'^h(t) (in balls) and the matrix

    M in R^{(d + H d_h) x T0},   column t = [x'(t,S); V^1 A'^1(t); ...; V^H A'^H(t)].

If rank M = T0, solve [G, W_O^1, ..., W_O^H] M = E for the targets
E = [E(t)]_t in R^{d x T0}: Z = E M^+ + Y (I - M M^+) with a random Y when
T0 < d + H d_h (the free part keeps G generic).  If det G != 0, set

    e = G e',  pos = G pos',  W_Q^h = P_h G^{-1},  W_K^h = Q_h G^{-1},
    W_V^h = V^h G^{-1},  W_U = W,

so scores, head outputs and skip are unchanged and T(t) = W E(t) exactly.

Certificates: rank M >= T0 by a nonsingular minor of the ball matrix M
(:func:`verifier.arith.rank.certify_rank_lower_bound`), det G by a ball
excluding 0; then EXACT parameters with T = W E exist inside the balls.
The float64 midpoints are what ``--save-weights`` writes; the checkers re-run
them in balls (a float64 is an exact dyadic rational).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flint import arb, arb_mat

from verifier.arith.balls import arb_mat_mid, to_arb_mat
from verifier.arith.compare import Decision, certainly_nonzero, workprec
from verifier.arith.rank import RankLowerBound, certify_rank_lower_bound
from verifier.data.instances import rng_for
from verifier.model.aot import AoTWeights
from verifier.model.aot_balls import BallAoT, attention_outputs_ball, embed_ball

from .rank_ceilings import route_ceilings

ATTEMPTS = 3  # parameter draws before the route is called inconclusive

__all__ = ["RouteParameters", "Route", "draw_route_parameters", "route_matrix", "solve_route", "build_route"]


@dataclass(frozen=True, eq=False)
class RouteParameters:
    """x' = e' + pos' and the heads' K^h = P_h^T Q_h, V^h: dyadic rationals."""

    e: np.ndarray  # (N, d)
    pos: np.ndarray  # (S, d)
    P: np.ndarray  # (H, d_h, d)
    Q: np.ndarray  # (H, d_h, d)
    V: np.ndarray  # (H, d_h, d)


@dataclass(eq=False)
class Route:
    params: RouteParameters
    M: arb_mat  # (d + H d_h) x T0
    rank: RankLowerBound
    ceilings: dict
    Z: arb_mat | None = None  # d x (d + H d_h)
    det_G: arb | None = None
    det_decision: Decision = Decision.UNDECIDED
    ball_model: BallAoT | None = None
    weights: AoTWeights | None = None  # float64 midpoints (what --save-weights writes)
    notes: list = field(default_factory=list)

    @property
    def rank_certified(self) -> bool:
        return self.rank.decision is Decision.TRUE


def draw_route_parameters(*, N: int, S: int, d: int, d_h: int, H: int, seed: int, den: int = 256) -> RouteParameters:
    """Generic dyadic parameters (multiples of 1/den, fine enough that no two
    tokens coincide): e', pos', V in [-1, 1], P, Q in [-1/2, 1/2]."""
    rng = rng_for(seed, "dana.exact_route")
    grid = lambda shape, top: rng.integers(-top, top + 1, shape).astype(np.float64) / den  # noqa: E731
    return RouteParameters(grid((N, d), den), grid((S, d), den), grid((H, d_h, d), den // 2),
                           grid((H, d_h, d), den // 2), grid((H, d_h, d), den))


def route_matrix(sequences, rp: RouteParameters) -> arb_mat:
    """M (balls): column t = [x'(t,S); V^h A'^h(t)]_h."""
    e, pos = to_arb_mat(rp.e), to_arb_mat(rp.pos)
    K = [to_arb_mat(rp.P[h]).transpose() * to_arb_mat(rp.Q[h]) for h in range(rp.P.shape[0])]
    V = [to_arb_mat(rp.V[h]) for h in range(rp.V.shape[0])]
    cols = []
    for seq in np.asarray(sequences).tolist():
        X = embed_ball(seq, e, pos)
        col = [X[X.nrows() - 1, j] for j in range(X.ncols())]
        for A, Vh in zip(attention_outputs_ball(X, K), V):
            col += (Vh * A.transpose()).entries()
        cols.append(col)
    return arb_mat([[c[i] for c in cols] for i in range(len(cols[0]))])


def solve_route(M: arb_mat, E, *, d: int, seed: int) -> arb_mat:
    """Z with Z M = E: E M^+ plus a random element of the left null space of M.
    Raises ZeroDivisionError when M^T M is not certainly invertible."""
    Eb = E if isinstance(E, arb_mat) else to_arb_mat(np.asarray(E, dtype=np.float64))
    rows, T0 = M.nrows(), M.ncols()
    if rows == T0:
        return M.transpose().solve(Eb.transpose()).transpose()  # Z = E M^{-1}
    pinv = (M.transpose() * M).solve(M.transpose())  # (M^T M)^{-1} M^T, T0 x rows
    Z = Eb * pinv
    rng = rng_for(seed, "dana.exact_route.free_part")
    Y = to_arb_mat(rng.integers(-4, 5, (d, rows)).astype(np.float64) / 4)
    I = arb_mat(rows, rows)
    for i in range(rows):
        I[i, i] = 1
    return Z + Y * (I - M * pinv)


def _block(Z: arb_mat, rows, cols) -> arb_mat:
    return arb_mat([[Z[i, j] for j in cols] for i in rows])


def assemble(rp: RouteParameters, Z: arb_mat, W, *, d: int, d_h: int, H: int) -> tuple[BallAoT, AoTWeights, arb_mat]:
    """The AoT of Eq. (2) from the route (balls) and its float64 midpoints."""
    G = _block(Z, range(d), range(d))
    Ginv = G.inv()  # ZeroDivisionError if not certainly invertible
    Wb = W if isinstance(W, arb_mat) else to_arb_mat(np.asarray(W, dtype=np.float64))
    e = to_arb_mat(rp.e) * G.transpose()
    pos = to_arb_mat(rp.pos) * G.transpose()
    WQ = [to_arb_mat(rp.P[h]) * Ginv for h in range(H)]
    WK = [to_arb_mat(rp.Q[h]) * Ginv for h in range(H)]
    WV = [to_arb_mat(rp.V[h]) * Ginv for h in range(H)]
    WO = [_block(Z, range(d), range(d + h * d_h, d + (h + 1) * d_h)) for h in range(H)]
    ball = BallAoT(e, pos, tuple(q.transpose() * k for q, k in zip(WQ, WK)),
                   tuple(o * v for o, v in zip(WO, WV)), Wb)
    stack = lambda ms, shape: np.array([arb_mat_mid(m) for m in ms]).reshape(shape)  # noqa: E731
    floats = AoTWeights(arb_mat_mid(e), arb_mat_mid(pos), stack(WQ, (H, d_h, d)), stack(WK, (H, d_h, d)),
                        stack(WV, (H, d_h, d)), stack(WO, (H, d, d_h)), arb_mat_mid(Wb))
    return ball, floats, G


def build_route(inst, W, E, *, seed: int = 0, prec: int = 128, params: RouteParameters | None = None) -> Route:
    """The whole route on the instance's sequences for targets (W, E)."""
    N, S, d, d_h, H, T0 = inst.N, inst.S, inst.d, inst.d_h, inst.H, inst.T0
    ceil = route_ceilings(inst.sequences, N=N, d=d, d_h=d_h, H=H)
    with workprec(prec):
        for attempt in range(1 if params else ATTEMPTS):
            rp = params or draw_route_parameters(N=N, S=S, d=d, d_h=d_h, H=H, seed=seed + 7919 * attempt)
            M = route_matrix(inst.sequences, rp)
            if T0 > M.nrows() or ceil["ceiling"] < T0:
                rank = RankLowerBound(T0, (), (), Decision.FALSE, prec, "ceiling below T0: the route is impossible",
                                      float("inf"), 0.0, T0)
                return Route(rp, M, rank, ceil, notes=[f"rank M <= {ceil['ceiling']} < T0 = {T0} for every choice"])
            rank = certify_rank_lower_bound(M, k=T0, prec=prec)
            if rank.decision is Decision.TRUE:
                break
        route = Route(rp, M, rank, ceil, notes=[f"parameter draws tried: {attempt + 1}"])
        if not route.rank_certified:
            route.notes.append("rank M = T0 not certified for any parameter draw tried (route inconclusive)")
            return route
        try:
            Z = solve_route(M, E, d=d, seed=seed)
            G = _block(Z, range(d), range(d))
            route.Z, route.det_G = Z, G.det()
            route.det_decision = certainly_nonzero(route.det_G)
            if route.det_decision is Decision.TRUE:
                route.ball_model, route.weights, _ = assemble(rp, Z, W, d=d, d_h=d_h, H=H)
            else:
                route.notes.append("det G not certainly nonzero (D6)")
        except ZeroDivisionError:
            route.notes.append("the solve or G^{-1} is not certainly defined at this precision")
    return route


def exact_route_trail_data(route: Route) -> dict:
    """Numbers for the audit trail."""
    M_mid = arb_mat_mid(route.M)
    return {"M shape": list(M_mid.shape), "certified rank": route.rank.certified_k,
            "minor residual ||I - R M_minor||_inf": route.rank.residual_norm_upper,
            "ceiling min(u,d)+H min(d_h,d,D)": route.ceilings["ceiling"],
            "DANA2025.md ceiling min(u,d)+H min(d_h,d,N+S-1)": route.ceilings["doc_ceiling"],
            "u": route.ceilings["u"], "D": route.ceilings["D"],
            "det G": str(route.det_G) if route.det_G is not None else None, "notes": route.notes}
