"""Definition 1 (Sec. 3): the Kruskal rank of a finite set of vectors.

Statement
---------
For vectors v_1, ..., v_m in R^d, the Kruskal rank kr(V) is the largest k
such that EVERY subset of size k is linearly independent.  Independence is
inherited by subsets, so a value k is the Kruskal rank iff

    (a) every k-subset is linearly independent, and
    (b) k = min(m, d) (no larger subset exists, or d+1 vectors in R^d are
        dependent), or some (k+1)-subset is linearly dependent.

Construction
------------
:func:`verifier.arith.kruskal.kruskal_rank` on the rows of V (float64 entries read
as the exact rationals they are): the k-subsets are exhausted in exact
arithmetic (rank modulo two primes, flint ``fmpq`` for the undecided ones)
while C(m, k) <= ``exhaustive_limit``; a dependent subset is shrunk to a
circuit whose exact null combination is the witness for (b).

Checks
------
1. (a): the certified lower bound, from exhaustion of every k-subset.
2. (b): the witness sum_i c_i v_i = 0 is re-checked here over Q
   (:func:`verifier.arith.exact.exact_matvec_is_zero`), or k = min(m, d).
3. The claimed value (default: the computed one) equals both bounds.  A
   claim above the upper bound is refuted by the witness; a claim below the
   lower bound by the exhaustion of the (claim+1)-subsets.

Not established
---------------
When C(m, k) exceeds ``exhaustive_limit`` only bounds are certified; the
paper's random-subset test is reported as evidence, never as (a).  For a
user's floats (each standing for the reals that round to it) the Kruskal
rank is a property of every point of the data's intervals: kr = min(m, d) is
certified there by :func:`vector_box` (every subset independent at every
point), and refuted at an explicit dependent point; a smaller value cannot
hold at every point (nearby points are in general position), so it is
undecided unless ``--exact-input`` says the values are exact.

References
----------
arXiv:2306.02010v3, Sec. 3, Definition 1; Kruskal (1977), Linear Algebra
Appl. 18(2).

>>> import numpy as np
>>> V = np.array([[1., 0, 0], [0, 1, 0], [1, 2, 0], [0, 0, 1]])
>>> ev = check_definition1(None, vectors=V, claimed=3)
>>> ev.verdict, ev.measured["kruskal_upper"], ev.certificates[-1]["subset"]
('refuted', 2, [0, 1, 2])
"""
from __future__ import annotations

import math

import numpy as np

from verifier.arith.box_subsets import subsets_over_box
from verifier.arith.compare import Decision
from verifier.arith.exact import exact_matvec_is_zero
from verifier.arith.kruskal import KruskalRank, kruskal_rank
from verifier.data.given import half_gaps_of
from verifier.data.instances import rng_for
from verifier.data.precision import float64_rounding, given_values
from verifier.errors import InvalidInstance
from verifier.statements.at_precision import UNDECIDED, at_data_precision
from verifier.statements.evidence import Evidence, Step, conclude
from verifier.statements.refutations import Refutation
from verifier.statements.registry import negative_control, statement

EXHAUSTIVE_LIMIT = 20000  # subsets per level exhausted exactly
SAMPLES = 5000  # the paper's random-subset test (Sec. 5.1)
#: work of the random-subset test, about k^3 per k-subset (one factorisation of
#: its Gram matrix): the paper's 5000 subsets at its ViT size k = 197 (3.8e10)
#: fit; a 7B-class layer's k = 2048 (8.6e9 each) gets 11 (:func:`sample_size`)
SAMPLE_BUDGET = 1e11
METHOD = "exact rationals (rank mod p, flint fmpq)"


def sample_size(k: int, samples: int = SAMPLES) -> int:
    """How many random k-subsets the paper's test draws by default:
    ``samples`` (the paper's 5000) within :data:`SAMPLE_BUDGET`, at least one.

    >>> sample_size(197), sample_size(2048)
    (5000, 11)
    """
    return int(min(samples, max(1, SAMPLE_BUDGET // max(int(k), 1) ** 3)))


def build_vector_set(instance, vectors="queries") -> np.ndarray:
    """The rows whose Kruskal rank is wanted: the instance's queries
    e^(t) (T x d), all context tokens (T n x d), or a given (m, d) array;
    float64, or exact rationals (an object array of ``fmpq``) where float64
    would round the values given (int64 beyond 2^53, long double)."""
    if isinstance(vectors, str):
        if instance is None:
            raise InvalidInstance(f"vectors={vectors!r} needs an instance")
        if vectors == "queries":
            return _as_rows(instance.exact_array("queries"))
        if vectors == "tokens":
            return _as_rows(instance.exact_array("contexts")).reshape(-1, instance.d)
        raise InvalidInstance(f"vectors={vectors!r}: choose 'queries', 'tokens' or an (m, d) array")
    raw = np.asarray(vectors)
    if raw.dtype.kind in "iuf" and raw.ndim == 2 and raw.size and float64_rounding(raw):
        if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
            raise InvalidInstance("vectors have NaN or infinite entries")
        return given_values(raw)
    V = np.asarray(vectors, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] == 0:
        raise InvalidInstance(f"vectors must be a non-empty (m, d) array, got shape {V.shape}")
    if not np.all(np.isfinite(V)):
        raise InvalidInstance("vectors have NaN or infinite entries")
    return V


def _as_rows(a) -> np.ndarray:
    return a if a.dtype == object else np.asarray(a, dtype=np.float64)


def set_summary(instance, V: np.ndarray, vectors) -> dict:
    """The instance row of the evidence: the instance's, or the set's shape."""
    if instance is not None:
        return {**instance.summary(), "vectors": vectors if isinstance(vectors, str) else "array"}
    return {"m": int(V.shape[0]), "d": int(V.shape[1]), "source": "array"}


def witness_certificate(V: np.ndarray, res: KruskalRank) -> dict:
    """The upper bound's certificate, re-checked exactly here: a dependent
    subset with sum_i c_i v_i = 0 over Q, or the structural bound min(m, d)."""
    m, d = V.shape
    if res.witness is None:
        return {"kind": "structural", "claim": f"kr <= min(m, d) = {min(m, d)}"}
    rows = list(res.witness)
    coeffs = list(res.witness_coefficients)
    if not (any(c != "0" for c in coeffs) and exact_matvec_is_zero(V[rows].T, coeffs)):
        raise RuntimeError(f"Kruskal witness {rows} failed the exact re-check sum c_i v_i = 0")
    return {"kind": "witness", "subset": rows, "coefficients": coeffs,
            "claim": f"the {len(rows)}-subset {rows} is dependent: sum c_i v_i = 0 exactly over Q "
                     f"(re-checked), so kr <= {len(rows) - 1}"}


def exhaustion_certificate(V: np.ndarray, k: int) -> dict:
    m = V.shape[0]
    return {"kind": "exhaustion", "level": int(k), "subsets": math.comb(m, k),
            "claim": f"all C({m},{k}) = {math.comb(m, k)} {k}-subsets independent, so kr >= {k}",
            "arithmetic": METHOD}


def whole_set_certificate(V: np.ndarray, k: int, rank: dict) -> dict:
    """The lower bound's certificate when all m <= d vectors are proved
    independent by one rank certificate (``KruskalRank.rank_certificate``):
    every subset of an independent set is independent."""
    m, d = V.shape
    return {"kind": "all vectors independent", "level": int(k), "subsets": math.comb(m, k),
            "claim": f"rank of the {m} x {d} matrix = {m} (a nonsingular {m} x {m} minor, "
                     f"||I - R A_minor||_inf <= {rank['residual_norm_upper']:.3g} < 1): all {m} vectors are "
                     f"independent, so every {k}-subset is and kr = {m} >= {k}",
            "arithmetic": rank["certified_by"], "minor_rows": m, "minor_cols": rank["cols"][:12] +
            (["..."] if len(rank["cols"]) > 12 else []), "residual_norm_upper": rank["residual_norm_upper"]}


def kruskal_box(instance, mid, rad, k: int, res: KruskalRank, *, arrays: tuple[str, ...], exact, gaps,
                exhaustive_limit: int, samples: int, seed: int):
    """Every k-subset of the rows of the box ``mid +/- rad`` independent at
    every point (:func:`verifier.arith.box_subsets.subsets_over_box`), or
    None when the stored values already fail, k exceeds min(m, d), or the
    ``arrays`` the rows are built from are exact under the reading (the
    stored values then decide).  ``exact(idx)``, ``gaps(idx)``: the stored
    values and exact half-gaps of rows ``idx``."""
    m, d = mid.shape
    if res.at_least(k) is Decision.FALSE or not 1 <= k <= min(m, d) or instance.precision.exact_for(*arrays):
        return None
    return subsets_over_box(mid, rad, k, exact=exact, gaps=gaps, exhaustive_limit=exhaustive_limit,
                            samples=samples, seed=seed)


def vector_box(instance, vectors, V, k: int, res: KruskalRank, *, exhaustive_limit: int, samples: int,
               seed: int):
    """:func:`kruskal_box` of the instance's queries or tokens (None for a
    given array: handed over in Python, it is exact)."""
    if instance is None or not isinstance(vectors, str):
        return None
    name = {"queries": "queries", "tokens": "contexts"}[vectors]
    mid, rad = instance.ball(name)
    mid = mid.reshape(-1, instance.d)
    rad = None if rad is None else rad.reshape(-1, instance.d)
    meaning = instance.precision.of(name)
    return kruskal_box(instance, mid, rad, k, res, arrays=(name,), exact=lambda idx: V[idx],
                       gaps=lambda idx: half_gaps_of(meaning, V[idx]), exhaustive_limit=exhaustive_limit,
                       samples=samples, seed=seed)


def kruskal_steps(res: KruskalRank) -> list[Step]:
    return [Step(line, uses="Definition 1") for line in res.method.split("; ") if line]


#: a claimed Kruskal rank (the caller's value) above the certified upper bound: the exact null witness
CLAIM_ABOVE = Refutation("counterexample", "a dependent subset with an exact null combination (re-checked over Q), "
                         "or min(m, d), below the claimed Kruskal rank", variant="claimed=k: the caller's value")
#: a claimed Kruskal rank below the certified lower bound: every (claim+1)-subset independent, exhausted
CLAIM_BELOW = Refutation("counterexample", "exhaustion: every (claim+1)-subset independent over Q",
                         variant="claimed=k: the caller's value")


def decide_claim(res: KruskalRank, claimed: int | None, cap: int) -> tuple[Decision, str]:
    """Is ``claimed`` (None: the computed value) the Kruskal rank?"""
    if claimed is None:
        if res.exact:
            return Decision.TRUE, f"kr = {res.lower}: both bounds certified"
        return Decision.UNDECIDED, (f"only {res.lower} <= kr <= {res.upper} is certified: exhausting "
                                    f"C(m, {res.lower + 1}) subsets (raise exhaustive_limit) would decide it")
    if claimed > cap or res.upper < claimed:
        return Decision.FALSE, f"claimed kr = {claimed} but kr <= {min(res.upper, cap)} (certified)"
    if res.lower > claimed:
        return Decision.FALSE, f"claimed kr = {claimed} but every {res.lower}-subset is independent"
    if res.lower == res.upper == claimed:
        return Decision.TRUE, f"kr = {claimed}: both bounds certified"
    return Decision.UNDECIDED, f"{res.lower} <= kr <= {res.upper}: the claim {claimed} is not decided"


@statement("definition1", reads_given=True, conclusion_over="box", refutes=(CLAIM_ABOVE, CLAIM_BELOW))
def check_definition1(instance, *, prec: int = 128, seed: int = 0, vectors="queries",
                      claimed: int | None = None, exhaustive_limit: int = EXHAUSTIVE_LIMIT,
                      samples: int = SAMPLES, **options) -> Evidence:
    """Compute kr(V) with certified bounds and check Definition 1's (a), (b)."""
    V = build_vector_set(instance, vectors)
    m, d = V.shape
    cap = min(m, d)
    if claimed is not None and (not isinstance(claimed, (int, np.integer)) or claimed < 0):
        raise InvalidInstance(f"claimed Kruskal rank {claimed!r} must be a nonnegative integer")
    res = kruskal_rank(V, exhaustive_limit=exhaustive_limit, samples=samples, seed=seed)
    certs = [exhaustion_certificate(V, res.lower)] if res.lower > 0 else []
    certs.append(witness_certificate(V, res))
    decision, reason = decide_claim(res, claimed, cap)
    refutation = CLAIM_BELOW if claimed is not None and res.lower > claimed else CLAIM_ABOVE
    measured = {"kruskal_lower": res.lower, "kruskal_upper": res.upper, "m": m, "d": d,
                "sampled_independent": f"{res.sampled_independent}/{res.sampled}"}
    name = {"queries": "queries", "tokens": "contexts"}.get(vectors) if isinstance(vectors, str) else None
    if decision is Decision.TRUE and name and not instance.precision.exact_for(name):
        value = claimed if claimed is not None else res.lower
        if value == cap and cap > 0:  # kr = min(m, d) everywhere: every cap-subset independent at every point
            box = vector_box(instance, vectors, V, cap, res, exhaustive_limit=exhaustive_limit, samples=samples,
                             seed=seed)
            outcome = at_data_precision(decision, box, instance.precision, name, what=f"kr = {cap}")
            decision, reason = outcome.decision, outcome.reason or reason
            measured.update(outcome.measured)
            if box is not None:
                certs.append(box.to_dict())
        else:
            decision = Decision.UNDECIDED
            reason = (f"{UNDECIDED}: {reason} for the values stored; a Kruskal rank below min(m, d) = {cap} at every "
                      f"point of the data's intervals would need a dependence at every point, and nearby points "
                      f"have a larger one ({instance.precision.describe(name)}); --exact-input if the stored values "
                      "are exact")
    value = claimed if claimed is not None else (res.lower if res.exact else f"[{res.lower}, {res.upper}]")
    return conclude(
        "definition1", decision, claimed={"kruskal_rank": value},
        measured=measured, certified=decision is not Decision.UNDECIDED, method=METHOD,
        margin=None, certificates=certs, instance=set_summary(instance, V, vectors),
        reason=reason, trail=kruskal_steps(res) + [Step(reason, uses="Definition 1 (a), (b)")],
        refutation=refutation,
    )


def planted_triple(seed: int = 0, m: int = 6, d: int = 5) -> np.ndarray:
    """m random vectors in R^d on the grid 2^-10 Z with v3 = v1 + 2 v2
    (exact in float64: the sum of small dyadics is a dyadic)."""
    rng = rng_for(seed, "definition1")
    V = np.round(rng.standard_normal((m, d)) * 1024) / 1024
    V[2] = V[0] + 2 * V[1]
    return V


@negative_control("definition1", "v3 = v1 + 2 v2 among 6 random vectors in R^5; claimed kr = 3")
def control_definition1_hidden_triple(*, prec: int = 128, seed: int = 0) -> Evidence:
    return check_definition1(None, vectors=planted_triple(seed), claimed=3, seed=seed)


@negative_control("definition1", "7 Gaussian vectors in R^4 (kr = 4); claimed kr = 3, one too low")
def control_definition1_claim_too_low(*, prec: int = 128, seed: int = 0) -> Evidence:
    V = rng_for(seed, "definition1").standard_normal((7, 4))
    return check_definition1(None, vectors=V, claimed=3, seed=seed)
