"""The empirical side: the paper's experiments, each a claim with a criterion fixed
before it runs (``catalogue``), on one engine.

* ``batched_model``: the authors' model (embedding + positions, one attention layer,
  d_v = 1 per head, decoder), many padded replicas in one computation;
* ``engine``: many independent runs (seeds x dataset sizes x sweep values) trained as
  one job with the authors' recipe (CUDA when present, else CPU);
* ``synthetic``, ``scales``, ``sweeps``, ``measures``, ``plots``: their data, the grids
  per scale (quick / cpu / thorough / paper), a sweep panel, the decision rules, figures;
* ``capacity_sweeps`` (Fig. 2a-c), ``sweep_variants`` (Fig. 4, 5), ``saturation``
  (Fig. 3), ``capacity_probe`` (exact certified capacity; App. I.1's conjecture).

May import: the engine (``verifier.errors``, ``arith``, ``model``, ``data``,
``statements``).  Constructions of a paper come through the registry, never by
importing ``proofs``.
"""
