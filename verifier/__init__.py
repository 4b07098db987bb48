"""mha-verify: certified, executable checks of "Memorization Capacity of
Multi-Head Attention in Transformers" (Mahdavi, Liao, Thrampoulidis, ICLR 2024).

The engine owns the arithmetic: the model (Eqs. 1-8), instances, exact and
ball linear algebra, three-valued comparisons, the evidence type, the registry
and the report.  ``proofs/`` holds one checker per statement.
"""
__version__ = "0.1.0"
