"""The data the statements talk about: instances (contexts, queries, labels and
the layer's sizes) drawn or built from arrays (:mod:`.instances`), user files
(:mod:`.npz`), and hypothesis strategies for property tests
(:mod:`.strategies`).

May import: ``verifier.errors``, ``verifier.arith``, ``verifier.model.mha``.
"""
