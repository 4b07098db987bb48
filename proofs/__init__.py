"""One module per statement of the paper, named after it; each registers its
checker with :func:`verifier.registry.statement`.  Read them like the paper's
appendix: Statement, Construction, Checks, Not established, References."""
