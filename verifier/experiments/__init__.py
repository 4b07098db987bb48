"""The empirical side: training attention layers by gradient descent (torch,
CUDA when present) and the runs that replicate the paper's experiments.

May import: the engine (``verifier.errors``, ``arith``, ``model``, ``data``,
``statements``).  Constructions of a paper come through the registry, never by
importing ``proofs``.
"""
