"""The arithmetic and the certificates: what a proof on one instance rests on.

Owns exact rationals (:mod:`.exact`, flint ``fmpq``), Arb balls
(:mod:`.balls`), the three-valued comparisons and precision scoping
(:mod:`.compare`), and the certificates built from them: rank lower bounds by
a nonsingular minor (:mod:`.rank`), rank upper bounds by exact null vectors
(:mod:`.null_vectors`), smallest-singular-value bounds
(:mod:`.singular_values`), Kruskal rank (:mod:`.kruskal` over the exact
subset tests of :mod:`.independence`) and the structural null vectors of
Props. 2 and 5 with their symbolic proofs (:mod:`.structure`).

May import: ``verifier.errors`` only.  Knows nothing of attention.
"""
