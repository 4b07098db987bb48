"""Hypothesis strategies for Dana et al.'s token-sequence datasets.

Named as domain nouns, built with ``@composite``, bounds keyword-only; each
size takes an int or a strategy of ints; impossible combinations raise
``InvalidArgument`` at construction time (never an empty strategy).  The
instances come from :func:`verifier.data.sequences.make_sequence_instance`,
the generator the CLI uses.

>>> from hypothesis import given, settings
>>> @settings(max_examples=3, database=None)
... @given(sequence_instances(N=4, S=2, d=2, H=1))
... def t(inst):
...     assert inst.T0 <= inst.H * inst.d_h + inst.d and inst.d_h <= inst.d
>>> t()
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from verifier.data.sequences import CONDITIONAL_KINDS, DATASET_KINDS, make_sequence_instance

__all__ = ["sequence_instances"]


def _ints(x, name: str, minimum: int):
    if isinstance(x, int):
        if x < minimum:
            raise InvalidArgument(f"{name}={x} must be >= {minimum}")
        return st.just(x)
    return x


@st.composite
def sequence_instances(draw, *, N=st.integers(3, 8), S=st.integers(1, 3), d=st.integers(2, 4), H=st.integers(1, 3),
                       d_h=None, T0=None, dataset: str = "random", conditionals: str = "table"):
    """A dataset of T0 (default min(H d_h + d, N^S)) distinct sequences with d_h <= d."""
    if dataset not in DATASET_KINDS or conditionals not in CONDITIONAL_KINDS:
        raise InvalidArgument(f"dataset in {DATASET_KINDS}, conditionals in {CONDITIONAL_KINDS}")
    n, s, dd, h = (draw(_ints(N, "N", 2)), draw(_ints(S, "S", 1)), draw(_ints(d, "d", 1)), draw(_ints(H, "H", 0)))
    dh = draw(st.integers(1, dd)) if d_h is None else draw(_ints(d_h, "d_h", 1))
    room = n ** s if dataset == "random" else n ** (s - 1) if dataset == "shared-last" else n
    t0 = min(h * dh + dd, room) if T0 is None else draw(_ints(T0, "T0", 1))
    if conditionals == "table-distinct":
        t0 = min(t0, n)
    seed = draw(st.integers(0, 2**31 - 1))
    return make_sequence_instance(N=n, S=s, d=dd, d_h=dh, H=h, T0=t0, dataset=dataset,
                                  conditionals=conditionals, seed=seed)
