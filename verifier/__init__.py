"""mha-verify: certified, executable checks of memorization proofs for
attention (Mahdavi, Liao, Thrampoulidis, ICLR 2024; the checkers live in
``proofs/``, one package per paper).

The engine is layered; imports run one way (a test checks it):

* ``errors``: the exceptions, under one root;
* ``arith``: exact rationals, balls, three-valued comparisons and the
  certificates built on them (rank, Kruskal rank, singular values, structural
  null vectors);
* ``model``: the attention layer (Eqs. 1-8) in numpy, balls and torch;
* ``data``: instances, hypothesis strategies, the ``.npz`` reader;
* ``statements``: the evidence type, the registry of papers, statements,
  negative controls and figure data, and the runner;
* ``proofs/`` (outside this package) sits here: it imports the engine above;
* ``experiments``: training and the empirical runs;
* ``report``: tables, HTML, figures;
* ``cli``: the command line.

A layer imports only the layers listed before it; nothing in ``verifier``
imports ``proofs`` (the registry discovers the checker packages by name).
"""
__version__ = "0.1.0"
