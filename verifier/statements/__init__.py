"""Statements and what a check of one returns: the evidence type and the
verdict rules (:mod:`.evidence`), the registry of papers, statements, negative
controls and figure data (:mod:`.registry`), and the runner that times a
checker and turns an unexpected exception into an "error" row
(:mod:`.runner`); what a FALSE conclusion rests on (:mod:`.refutations`) and
the inventory of verdict paths generated from the checkers' code
(:mod:`.verdict_paths`, docs/VERDICT_PATHS.md).

May import: ``verifier.errors``, ``verifier.arith``, ``verifier.data``.  The
registry finds the checker packages of ``proofs/`` by name and imports them
dynamically; no module here imports a name from ``proofs``.
"""
