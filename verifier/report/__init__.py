"""The verification report: run every registered statement and its negative
controls on a plan of instances (:mod:`.build`), render Markdown and
self-contained HTML (:mod:`.markdown`, :mod:`.html`, run facts in
:mod:`.environment`) and draw the figures (:mod:`.figures`, from figure data
that the checkers register).

May import: the engine and ``verifier.experiments``; never ``proofs``.
"""
