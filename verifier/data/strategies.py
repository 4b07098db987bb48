"""Hypothesis strategies for the objects the paper talks about.

Named as domain nouns, built with ``@composite``, every bound keyword-only
(Hypothesis's ``guides/api-style.rst``): each size argument takes an int or a
strategy of ints.  Impossible combinations raise ``InvalidArgument`` at
construction time instead of quietly producing an empty strategy.

* :func:`attention_instances` draws a :class:`~verifier.data.instances.Instance`
  through :func:`~verifier.data.instances.make_instance` (so the tests exercise the
  same generator the CLI uses), always with ``n < d``.
* :func:`attention_weights` draws a :class:`~verifier.model.mha.Weights` for given
  sizes.
* :func:`vector_sets` draws a finite set of vectors (rows of an ``(m, d)``
  array) for Kruskal-rank tests.  Entries are dyadic rationals on a coarse
  grid (multiples of ``1/grid``), so an integer combination of rows is again a
  float64 *exactly*: a planted dependency stays a dependency over Q, which
  is what the exact back end reads.
* :func:`planted_dependencies` draws such a set together with the support of
  one exact planted dependency: a certified upper bound on the Kruskal rank.
* :func:`low_rank_integer_matrices` and :func:`rational_matrices` draw
  matrices whose exact rank is known, for the rank certificates.

>>> from hypothesis import given, settings
>>> @settings(max_examples=3, database=None)
... @given(attention_instances(H=1, n=2, context="random"))
... def t(inst):
...     assert inst.n < inst.d and inst.H == 1
>>> t()
"""
from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from verifier.data.instances import CONTEXT_KINDS, DEGENERATE_KINDS, Instance, make_instance
from verifier.model.mha import Weights

__all__ = [
    "attention_instances",
    "attention_weights",
    "vector_sets",
    "planted_dependencies",
    "PlantedSet",
    "seeds",
    "low_rank_integer_matrices",
    "rational_matrices",
]

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _ints(name: str, value, *, min_value: int = 1) -> st.SearchStrategy:
    """An int becomes ``st.just``; a strategy passes through; anything else is
    an InvalidArgument."""
    if isinstance(value, st.SearchStrategy):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < min_value:
            raise InvalidArgument(f"{name}={value!r} must be >= {min_value}")
        return st.just(int(value))
    raise InvalidArgument(f"{name}={value!r} must be an int or a strategy of ints")


def _kinds(name: str, value, allowed, *, optional: bool) -> st.SearchStrategy:
    if isinstance(value, st.SearchStrategy):
        return value
    if value is None and optional:
        return st.none()
    if value in allowed:
        return st.just(value)
    raise InvalidArgument(f"{name}={value!r} must be one of {allowed} or a strategy")


def attention_instances(
    *,
    H=st.integers(1, 3),
    n=st.integers(2, 4),
    d=None,
    d_h=None,
    d_v=None,
    d_out=st.integers(1, 2),
    T=None,
    context=st.sampled_from(CONTEXT_KINDS),
    degenerate=None,
    seed=seeds,
) -> st.SearchStrategy[Instance]:
    """Instances of the paper's setting, small enough for exact arithmetic.

    ``d`` defaults to ``n + 1 .. n + 3``; a given ``d`` strategy is combined
    with ``n`` so that ``n < d`` (draws with ``d <= n`` are shifted to
    ``d = n + 1 + (d mod 2)``, never filtered, so no draw is wasted).
    ``d_h`` defaults to ``1 .. n`` (``r = d_h``), ``d_v`` to ``d_out .. d_out+1``,
    ``T`` to the capacity ``H(r-1)+1`` (None) and ``degenerate`` to None.
    Both int and strategy are accepted for every size.
    """
    H_s, n_s, dout_s = _ints("H", H), _ints("n", n), _ints("d_out", d_out)
    d_s = None if d is None else _ints("d", d, min_value=2)
    dh_s = None if d_h is None else _ints("d_h", d_h)
    dv_s = None if d_v is None else _ints("d_v", d_v)
    T_s = None if T is None else _ints("T", T)
    ctx_s = _kinds("context", context, CONTEXT_KINDS, optional=False)
    deg_s = _kinds("degenerate", degenerate, DEGENERATE_KINDS, optional=True)
    seed_s = _ints("seed", seed, min_value=0)
    if isinstance(n, int) and isinstance(d, int) and n >= d:
        raise InvalidArgument(f"n={n} >= d={d}: the paper assumes n < d throughout")

    @st.composite
    def _draw(draw) -> Instance:
        n_ = draw(n_s)
        if d_s is None:
            d_ = n_ + draw(st.integers(1, 3))
        else:
            d_ = draw(d_s)
            if d_ <= n_:
                d_ = n_ + 1 + d_ % 2
        d_out_ = draw(dout_s)
        d_h_ = draw(st.integers(1, n_)) if dh_s is None else draw(dh_s)
        d_v_ = draw(st.integers(d_out_, d_out_ + 1)) if dv_s is None else draw(dv_s)
        return make_instance(
            H=draw(H_s), n=n_, d=d_, d_h=d_h_, d_v=d_v_, d_out=d_out_,
            T=None if T_s is None else draw(T_s), context=draw(ctx_s),
            degenerate=draw(deg_s), seed=draw(seed_s),
        )

    return _draw()


def attention_weights(*, H, d, d_h, d_v, d_out, scale=st.sampled_from([0.1, 1.0, 3.0]),
                      seed=seeds) -> st.SearchStrategy[Weights]:
    """Gaussian weights ``W ~ scale * N(0, 1/d)`` for one layer of the given
    sizes (ints, or strategies of ints)."""
    H_s, d_s, dh_s = _ints("H", H), _ints("d", d), _ints("d_h", d_h)
    dv_s, dout_s, seed_s = _ints("d_v", d_v), _ints("d_out", d_out), _ints("seed", seed, min_value=0)
    scale_s = scale if isinstance(scale, st.SearchStrategy) else st.just(float(scale))

    @st.composite
    def _draw(draw) -> Weights:
        H_, d_, d_h_, d_v_, d_out_ = draw(H_s), draw(d_s), draw(dh_s), draw(dv_s), draw(dout_s)
        c = draw(scale_s) / np.sqrt(d_)
        rng = np.random.default_rng(draw(seed_s))
        return Weights(
            W_Q=c * rng.standard_normal((H_, d_, d_h_)),
            W_K=c * rng.standard_normal((H_, d_, d_h_)),
            W_V=c * rng.standard_normal((H_, d_, d_v_)),
            W_O=c * rng.standard_normal((H_ * d_v_, d_)),
            W_D=c * rng.standard_normal((d_, d_out_)),
        )

    return _draw()


def _grid_vectors(rng: np.random.Generator, shape, grid: int, kind: str) -> np.ndarray:
    if kind == "small-integers":  # many coincidences: dependent subsets are common
        return rng.integers(-2, 3, size=shape).astype(np.float64)
    return np.round(rng.standard_normal(shape) * grid) / grid  # dyadic when grid = 2^k


def vector_sets(*, m=st.integers(1, 7), d=st.integers(1, 5),
                kind=st.sampled_from(["gaussian", "small-integers"]), grid: int = 1024,
                seed=seeds) -> st.SearchStrategy[np.ndarray]:
    """A set of ``m`` vectors in ``R^d`` as the rows of a float64 array.

    kind "gaussian": N(0,1) rounded to multiples of ``1/grid`` (in general
    position with overwhelming probability); "small-integers": entries in
    {-2..2} (dependent subsets are frequent, zero vectors possible).
    ``grid`` must be a power of two (so entries are exact dyadics).
    """
    if grid < 1 or grid & (grid - 1):
        raise InvalidArgument(f"grid={grid!r} must be a power of two")
    m_s, d_s, seed_s = _ints("m", m), _ints("d", d), _ints("seed", seed, min_value=0)
    kind_s = _kinds("kind", kind, ("gaussian", "small-integers"), optional=False)

    @st.composite
    def _draw(draw) -> np.ndarray:
        shape = (draw(m_s), draw(d_s))
        return _grid_vectors(np.random.default_rng(draw(seed_s)), shape, grid, draw(kind_s))

    return _draw()


class PlantedSet(NamedTuple):
    """Vectors (rows) and a support S with an exact dependency: row S[-1] is
    an integer combination ``sum_j c_j row_j`` of rows S[:-1] (the zero vector
    when |S| = 1).  So the Kruskal rank is at most |S| - 1."""

    vectors: np.ndarray
    support: tuple[int, ...]
    coefficients: tuple[int, ...]


def planted_dependencies(*, m=st.integers(2, 7), d=st.integers(2, 5), grid: int = 1024,
                         seed=seeds) -> st.SearchStrategy[PlantedSet]:
    """Gaussian-grid vectors with one planted exact dependency among
    ``k <= min(m, d)`` of them (integer coefficients in {-3..3} \\ {0})."""
    if grid < 1 or grid & (grid - 1):
        raise InvalidArgument(f"grid={grid!r} must be a power of two")
    m_s, d_s, seed_s = _ints("m", m), _ints("d", d), _ints("seed", seed, min_value=0)

    @st.composite
    def _draw(draw) -> PlantedSet:
        m_, d_ = draw(m_s), draw(d_s)
        rng = np.random.default_rng(draw(seed_s))
        V = _grid_vectors(rng, (m_, d_), grid, "gaussian")
        k = draw(st.integers(1, min(m_, d_)))
        support = tuple(sorted(draw(st.permutations(range(m_)))[:k]))
        coeffs = tuple(draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]),
                                     min_size=k - 1, max_size=k - 1)))
        target = np.zeros(d_)
        for c, j in zip(coeffs, support[:-1]):
            target = target + c * V[j]  # exact: small integers times dyadics
        V[support[-1]] = target
        return PlantedSet(V, support, coeffs)

    return _draw()


# -- matrices for the certificates' property tests --------------------------

@st.composite
def low_rank_integer_matrices(draw, *, max_dim: int = 6, max_entry: int = 4):
    """A = F G with integer factors: exact rank <= r, computed exactly
    (small integers, so the float64 product has no rounding)."""
    m = draw(st.integers(1, max_dim))
    n = draw(st.integers(1, max_dim))
    r = draw(st.integers(0, min(m, n)))
    ints = st.integers(-max_entry, max_entry)
    F = np.array(draw(st.lists(st.lists(ints, min_size=r, max_size=r), min_size=m, max_size=m)),
                 dtype=np.int64).reshape(m, r)
    G = np.array(draw(st.lists(st.lists(ints, min_size=n, max_size=n), min_size=r, max_size=r)),
                 dtype=np.int64).reshape(r, n)
    return (F @ G).astype(np.float64)


@st.composite
def rational_matrices(draw, *, max_dim: int = 5):
    """Rational matrices with denominators 1..7 (not floats: 1/3 is not a double)."""
    m = draw(st.integers(1, max_dim))
    n = draw(st.integers(1, max_dim))
    q = st.builds(Fraction, st.integers(-5, 5), st.integers(1, 7))
    rows = draw(st.lists(st.lists(q, min_size=n, max_size=n), min_size=m, max_size=m))
    if draw(st.booleans()) and m > 1:  # plant a dependent row
        c = draw(q)
        rows[-1] = [c * x for x in rows[0]]
    return rows
