"""The verifier's exceptions, under one root.

Each docstring says what the error does NOT mean: an exception is never a
verdict about the paper on its own.
"""


class VerifierError(Exception):
    """Root of every error the verifier raises on purpose."""


class InvalidInstance(VerifierError, ValueError):
    """The input is not an instance the statement talks about (NaN, wrong shape,
    missing array, n >= d, overflow, inconsistent dimensions).

    It does not mean the statement is false: bad input gets exit code 2 and a
    one-line message, never a verdict.
    """


class InsufficientPrecision(VerifierError, ArithmeticError):
    """Ball arithmetic could not decide a comparison at the largest precision
    allowed (also raised for flint's numerically singular ``solve``).

    It does not mean the compared quantity is zero or that the claim fails: it
    maps to the verdict "inconclusive", and the remedy is a larger ``--prec``.
    """


class CertificateConflict(VerifierError, AssertionError):
    """Two certificates contradict each other (a relation certified both true
    and false, a lower bound above an upper bound).  One of them is wrong: a
    bug in the verifier.

    It is never a verdict about the paper: the checker reports "error".
    """


class ConstructionFailed(VerifierError, RuntimeError):
    """A step of the paper's construction could not be carried out on this
    instance (e.g. Claim 1's linear system has no solution because two queries
    coincide). ``step`` names the claim or lemma that broke.

    It does not by itself refute the paper: the checker decides whether the
    hypotheses were met.
    """

    def __init__(self, step: str, message: str):
        super().__init__(f"{step}: {message}")
        self.step = step


class NotImplementedStatement(VerifierError, LookupError):
    """The statement id is known (STATEMENTS.md) but has no checker yet.

    It does not mean the statement was checked and found wanting.
    """
