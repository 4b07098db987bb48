"""Near-degenerate instances: valid (the assumptions hold exactly) but close to
failing them, where float64 and low-precision balls are most likely to lie.

* ``near-repeated-token``: token 2 = token 1 + delta * noise in every context
  (Assumption 2 holds, barely; Eq. 21's gaps and sigma_min(Y_inf) are tiny);
* ``near-dependent-queries``: the last queries are combinations of the first
  ones plus delta * noise (Assumption 1 holds, barely);
* ``near-shared``: every context = one E + delta * noise (close to Prop. 2's
  structure: Z is close to rank H(n-1)+1);
* ``scaled``: a clean instance with contexts, queries and labels multiplied
  by powers of two 2^k, |k| <= 200 (exact: the statements are scale-invariant).

The noise comes from its own stream (:func:`~verifier.data.instances.rng_for`),
never from the data's.

>>> inst = near_degenerate_instance("near-repeated-token", H=2, n=3, d=5, delta=1e-9, seed=0)
>>> bool(abs(inst.contexts[:, 1] - inst.contexts[:, 0]).max() < 1e-8)
True
"""
from __future__ import annotations

import numpy as np

from verifier.data.instances import Instance, _frozen, from_arrays, make_instance, rng_for
from verifier.errors import InvalidInstance

NEAR_KINDS = ("near-repeated-token", "near-dependent-queries", "near-shared", "scaled")


def scale_instance(inst: Instance, *, contexts: int = 0, queries: int = 0, labels: int = 0) -> Instance:
    """The instance with contexts, queries, labels times 2^k (exact in float64)."""
    return inst.replace(contexts=_frozen(np.asarray(inst.contexts) * 2.0 ** contexts),
                        queries=_frozen(np.asarray(inst.queries) * 2.0 ** queries),
                        labels=_frozen(np.asarray(inst.labels) * 2.0 ** labels),
                        kind=f"{inst.kind}*2^({contexts},{queries},{labels})")


def near_degenerate_instance(kind: str, *, H: int = 2, n: int = 3, d: int = 5, T: int | None = None,
                             d_out: int = 1, delta: float = 1e-8, seed: int = 0, context: str = "random",
                             scale=(0, 0, 0)) -> Instance:
    """One instance of ``kind`` (see the module docstring)."""
    if kind not in NEAR_KINDS:
        raise InvalidInstance(f"unknown near-degenerate kind {kind!r}; choose from {', '.join(NEAR_KINDS)}")
    base = make_instance(H=H, n=n, d=d, T=T, d_out=d_out, context=context, seed=seed)
    if kind == "scaled":
        return scale_instance(base, contexts=scale[0], queries=scale[1], labels=scale[2])
    rng = rng_for(seed, f"near-degenerate:{kind}")
    E, e, y = np.array(base.contexts), np.array(base.queries), np.array(base.labels)
    Tn = E.shape[0]
    if kind == "near-repeated-token" and n >= 2:  # a shared context stays shared
        E[:, 1] = E[:, 0] + delta * rng.standard_normal(d if base.shared_context else E[:, 0].shape)
    elif kind == "near-dependent-queries" and Tn > n:
        for t in range(n, Tn):  # e^(t) close to span(e^(0..n-2)): every n-subset barely independent
            c = rng.standard_normal(n - 1)
            e[t] = c @ e[:n - 1] + delta * rng.standard_normal(d)
    elif kind == "near-shared":
        E = E[:1] + delta * rng.standard_normal(E.shape)
    return from_arrays(E, e, y, H=H, d_v=base.d_v, kind=f"{base.kind}+{kind}({delta:g})", seed=seed,
                       source="generated")
