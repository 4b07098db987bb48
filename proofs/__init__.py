"""The checkers, one package per paper, one module per statement, named after
it.  Each paper's ``__init__`` registers the paper and its catalogue of
statement ids with :func:`verifier.statements.registry.register_paper`; each
module registers its checker with ``@statement``, its false variants with
``@negative_control`` and any figure data with ``@figure``.  Read them like
the paper's appendix: Statement, Construction, Checks, Not established,
References.

Papers, in the order the report shows them (``__all__``):

* ``mahdavi2024``: "Memorization Capacity of Multi-Head Attention in
  Transformers" (Mahdavi, Liao, Thrampoulidis, ICLR 2024).
* ``dana2025``: "Memorization in Attention-only Transformers" (Dana, Pydi,
  Chevaleyre, AISTATS 2025).
* ``kajitsuka2025``: "On the Optimal Memorization Capacity of Transformers"
  (Kajitsuka, Sato, ICLR 2025), reconstructed from its abstract.

May import: the engine (``verifier.errors``, ``arith``, ``model``, ``data``,
``statements``) and modules of ``proofs``; never ``verifier.report``,
``verifier.experiments`` or ``verifier.cli``.
"""
__all__ = ["mahdavi2024", "dana2025", "kajitsuka2025"]
