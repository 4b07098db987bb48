"""The attention-only transformer, Eqs. (1)-(2), in ball arithmetic (python-flint
``arb``): rigorous enclosures of the scores, the attention outputs A^h(t),
the residual stream, the logits, KL divergences and argmax margins.

Parameters may be float64 arrays (exact: a double is a dyadic rational),
exact rationals (``fmpq_mat``) or ball matrices (``arb_mat``, e.g. a
construction solved in balls); :class:`BallAoT` holds them as ``arb_mat``.
Precision is the caller's: wrap calls in :func:`verifier.arith.compare.workprec`.

>>> import numpy as np
>>> from verifier.arith.compare import workprec
>>> from verifier.model.aot import AoTWeights
>>> w = AoTWeights.zeros(N=3, S=2, d=2, d_h=1, H=1)
>>> with workprec(128):
...     L = logits_ball(np.array([[0, 1]]), BallAoT.from_weights(w))
>>> L[0, 0].contains(0), L[0, 0].rad() == 0
(True, True)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat, fmpq, fmpq_mat

from verifier.arith.balls import ball_max, to_arb_mat
from verifier.errors import InvalidInstance
from verifier.model.aot import AoTWeights

__all__ = ["to_ball", "BallAoT", "softmax_ball", "log_sum_exp_ball", "attention_outputs_ball",
           "residual_ball", "logits_ball", "xlogx_ball", "kl_ball", "dkl_ball", "margins_ball", "ball_entry"]


def to_ball(A) -> arb_mat:
    """A float64 array (exact), an ``fmpq_mat`` (entries rounded to the working
    precision, enclosed) or an ``arb_mat`` (unchanged) as an ``arb_mat``."""
    if isinstance(A, arb_mat):
        return A
    if isinstance(A, fmpq_mat):
        return arb_mat(A)
    a = np.asarray(A)
    if a.dtype == object:  # fmpq / arb entries
        rows = a.reshape(a.shape[0], -1) if a.ndim >= 1 else a.reshape(1, 1)
        return arb_mat([[x if isinstance(x, arb) else arb(x) for x in r] for r in rows.tolist()])
    return to_arb_mat(np.asarray(A, dtype=np.float64).reshape(a.shape[0], -1))


def ball_entry(x) -> arb:
    """One number (float, int, fmpq, arb) as an arb."""
    if isinstance(x, arb):
        return x
    if isinstance(x, fmpq):
        return arb(x)
    return arb(float(x)) if isinstance(x, (float, np.floating)) else arb(int(x))


@dataclass(frozen=True, eq=False)
class BallAoT:
    """Eq. (2)'s parameters in balls: e (N x d), pos (S x d), per head the
    attention matrix W_QK^h (d x d) and the value-output product
    W_OV^h = W_O^h W_V^h (d x d), and W_U (N x d)."""

    e: arb_mat
    pos: arb_mat
    W_QK: tuple
    W_OV: tuple
    W_U: arb_mat

    @classmethod
    def from_weights(cls, w: AoTWeights) -> "BallAoT":
        """From float64 (or object) weights: every product formed in balls."""
        H = w.sizes["H"]
        QK = tuple(to_ball(w.W_Q[h]).transpose() * to_ball(w.W_K[h]) for h in range(H))
        OV = tuple(to_ball(w.W_O[h]) * to_ball(w.W_V[h]) for h in range(H))
        return cls(to_ball(w.e), to_ball(w.pos), QK, OV, to_ball(w.W_U))

    @classmethod
    def from_parts(cls, *, e, pos, W_QK, W_OV, W_U) -> "BallAoT":
        return cls(to_ball(e), to_ball(pos), tuple(to_ball(m) for m in W_QK),
                   tuple(to_ball(m) for m in W_OV), to_ball(W_U))

    @property
    def H(self) -> int:
        return len(self.W_QK)

    @property
    def d(self) -> int:
        return self.e.ncols()


def _row(M: arb_mat, i: int) -> arb_mat:
    return arb_mat([[M[i, j] for j in range(M.ncols())]])


def embed_ball(seq, e: arb_mat, pos: arb_mat) -> arb_mat:
    """X (S x d): row s is x(t, s) = e(t_s) + pos_s."""
    d = e.ncols()
    return arb_mat([[e[int(q), j] + pos[s, j] for j in range(d)] for s, q in enumerate(seq)])


def log_sum_exp_ball(a) -> arb:
    """log sum_j exp(a_j), shifted by the float max of the midpoints (exact shift)."""
    a = list(a)
    m = arb(max(float(x.mid()) for x in a))
    total = sum(((x - m).exp() for x in a[1:]), (a[0] - m).exp())
    return total.log() + m


def softmax_ball(a) -> list:
    a = list(a)
    m = arb(max(float(x.mid()) for x in a))
    ex = [(x - m).exp() for x in a]
    total = sum(ex[1:], ex[0])
    return [x / total for x in ex]


def attention_outputs_ball(X: arb_mat, W_QK) -> list:
    """Eq. (1) for one sequence: per head, A^h (1 x d) = softmax(X W_QK^T x_S)^T X."""
    S = X.nrows()
    q = _row(X, S - 1)
    out = []
    for K in W_QK:
        raw = X * (q * K).transpose()  # (S x 1): x_s^T (W_QK^T x_S) = x_S^T W_QK x_s
        a = softmax_ball([raw[s, 0] for s in range(S)])
        out.append(arb_mat([a]) * X)
    return out


def residual_ball(tokens, p: BallAoT) -> arb_mat:
    """r(t) = x(t, S) + sum_h W_OV^h A^h(t), as a (T x d) ball matrix."""
    rows = []
    for seq in np.asarray(tokens).tolist():
        X = embed_ball(seq, p.e, p.pos)
        r = _row(X, X.nrows() - 1)
        for A, OV in zip(attention_outputs_ball(X, p.W_QK), p.W_OV):
            r = r + A * OV.transpose()
        rows.append([r[0, j] for j in range(r.ncols())])
    return arb_mat(rows)


def logits_ball(tokens, p: BallAoT) -> arb_mat:
    """Eq. (2): T(t) = W_U r(t), a (T x N) ball matrix."""
    return residual_ball(tokens, p) * p.W_U.transpose()


def xlogx_ball(p) -> arb:
    """x log x over a ball of probabilities (x >= 0: the part below 0 is cut).
    An exact zero gives 0; a ball reaching down to 0 (a float zero read at
    the data's precision: [0, h]) gives the range of x log x on [0, h]:
    [h log h, 0] for h <= 1/e (x log x decreases there), [-1/e, max(0, h log h)]
    beyond."""
    p = ball_entry(p)
    if p.is_zero():
        return arb(0)
    if p > 0:
        return p * p.log()
    h = p.upper()
    if not h > 0:
        return arb(0)  # the ball's nonnegative part is {0}
    hlogh = h * h.log()
    if h <= arb(-1).exp():
        return hlogh.union(arb(0))
    return (-arb(-1).exp()).union(hlogh).union(arb(0))


def kl_ball(p_row, logit_row) -> arb:
    """KL(p || softmax(logit)) = sum_j p_j log p_j - p_j logit_j + lse(logit).
    ``p_row`` exact (floats, fmpq) or balls; an exact zero contributes 0, a
    ball touching 0 (a float zero read at its precision) its range
    (:func:`xlogx_ball`)."""
    lse = log_sum_exp_ball(logit_row)
    total = arb(0)
    for pj, lj in zip(p_row, logit_row):
        pj = ball_entry(pj)
        if pj.is_zero():
            continue
        if pj > 0:
            total += pj * (pj.log() - lj)
            continue
        if pj.upper() < 0:
            raise InvalidInstance("a conditional probability is negative")
        total += xlogx_ball(pj) - pj * lj  # a ball touching 0: x log x over its nonnegative part
    return total + lse


def dkl_ball(weights, conditionals, logit: arb_mat) -> arb:
    """d_KL(pi, T) = sum_t pi(t) KL(pi_t || softmax T(t)), with pi(t) = w_t / sum w."""
    ws = [ball_entry(x) for x in weights]
    total_w = sum(ws[1:], ws[0])
    acc = arb(0)
    for t, w in enumerate(ws):
        if w.is_zero():
            continue
        row = [logit[t, j] for j in range(logit.ncols())]
        acc += w * kl_ball(list(conditionals[t]), row)
    return acc / total_w


def margins_ball(logit: arb_mat, targets) -> list:
    """Per row: T(t)_g - max_{j != g} T(t)_j (a ball; memorized iff certainly > 0)."""
    out = []
    for t, g in enumerate(np.asarray(targets).tolist()):
        others = [logit[t, j] for j in range(logit.ncols()) if j != g]
        out.append(logit[t, g] - ball_max(others))
    return out
