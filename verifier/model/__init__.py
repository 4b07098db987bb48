"""The multi-head attention layer of the paper, Eqs. (1)-(8), written once per
arithmetic: numpy float64 (:mod:`.mha`), Arb balls (:mod:`.mha_balls`,
rigorous enclosures) and torch (:mod:`.mha_torch`, CUDA when present), plus
the factorisation ``W = W_K W_Q^T`` of an attention matrix into key/query
weights (:mod:`.factorisation`).

May import: ``verifier.errors`` and ``verifier.arith``.
"""
