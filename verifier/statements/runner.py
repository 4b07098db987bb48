"""Run a checker on an instance: timing, instance summary, the rule that an
unexpected exception becomes an "error" row, never a pass, and the
statement's declared hypotheses (:mod:`verifier.statements.hypotheses`):

* a refuted SHAPE hypothesis (e.g. n < d on GPT-2's n = 1024 > d = 768)
  answers hypotheses-unmet without running the construction;
* a DATA hypothesis the checker did not report (e.g. Lemma 4's Assumption 2)
  is checked: refuted, or (data read at its dtype's precision) failing at the
  data's precision, it makes the verdict hypotheses-unmet -- one rule for
  every statement, whether or not its checker looks at the assumption;
* where the float64 working copy rounds the values given (int64 beyond
  2^53, long double: ``Instance.rounded``) a checker that certifies on that
  copy (not declared ``reads_given``) gets a verdict on the rounded data,
  and its reason says so;
* an :class:`~verifier.errors.InsufficientPrecision` that escapes the
  checker (the ball arithmetic lost every digit at a low ``--prec``) is the
  verdict inconclusive, naming the remedy: raise ``--prec``.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import replace

import numpy as np

from verifier.arith.compare import Decision
from verifier.arith.second_thread import one_blas_thread
from verifier.arith.subset_sample import drain_prefetches
from verifier.data.instances import Instance, load_data, make_instance
from verifier.errors import InsufficientPrecision, InvalidInstance, NotImplementedStatement
from verifier.statements.evidence import (
    Evidence,
    Step,
    conclude,
    error_evidence,
    hypothesis_from_evidence,
    unmet_reason,
)
from verifier.statements.hypotheses import data_hypotheses, shape_hypotheses
from verifier.statements.refutations import allowed_for

from . import registry


def build_instance(sid: str, *, data=None, exact_input: bool = False, **options) -> Instance:
    """The instance a statement runs on: user data (``data`` = .npz path, read
    at its dtype's precision unless ``exact_input``) or a generated one from
    the statement's defaults overridden by ``options``."""
    st = registry.REGISTRY[sid]
    opts = st.options(**options)
    own = registry.instance_options(sid)
    if own is not None:  # the paper's own instances (e.g. token sequences)
        if data is not None:
            if own.load is None:
                raise InvalidInstance(f"statement {sid!r} reads no data file")
            return own.load(data, exact_input=exact_input, **opts)
        return own.make(**opts)
    if data is not None:
        return load_data(data, exact_input=exact_input, H=opts["H"], d_h=opts["d_h"], d_v=opts["d_v"],
                        d_out=opts["d_out"], seed=opts["seed"])  # d_out: only when the file has no labels
    return make_instance(H=opts["H"], n=opts["n"], d=opts["d"], d_h=opts["d_h"], d_v=opts["d_v"],
                         d_out=opts["d_out"], T=opts["T"], context=opts["context"],
                         degenerate=opts["degenerate"], seed=opts["seed"])


def _z_entries(instance) -> int:
    """T H d, the entries of Z (Eq. 7): the size that chooses BLAS threads."""
    return int(getattr(instance, "T", 0) or 0) * int(getattr(instance, "H", 1) or 1) * int(getattr(instance, "d", 1) or 1)


def run_check(sid: str, instance: Instance, *, prec: int = 128, seed: int = 0,
              raise_errors: bool = False, **options) -> Evidence:
    """Call the checker; InvalidInstance propagates (bad input, exit 2)."""
    st = registry.get(sid)
    t0 = time.perf_counter()
    shapes = shape_hypotheses(st.requires, instance)
    if any(h.status == "refuted" for h in shapes):
        return replace(not_applicable(sid, st, shapes, instance), seconds=time.perf_counter() - t0)
    try:
        with one_blas_thread(_z_entries(instance)):
            try:
                ev = st.check(instance, prec=prec, seed=seed, **options)
            finally:
                drain_prefetches()  # a prefetch the check did not take ends here, inside the check
        undeclared_refutation(st, ev)
        ev = _data_hypotheses(st, ev, instance, prec=prec, seed=seed)
        ev = _on_rounded_copy(st, ev, instance)
        ev = _over_stored_values(st, ev, instance)
    except InvalidInstance as exc:
        if not _breakdown(exc):
            raise
        return replace(float_breakdown(sid, st, exc, instance), seconds=time.perf_counter() - t0)
    except NotImplementedStatement:
        raise
    except (np.linalg.LinAlgError, OverflowError, FloatingPointError) as exc:
        return replace(float_breakdown(sid, st, exc, instance), seconds=time.perf_counter() - t0)
    except ValueError as exc:
        if not _breakdown(exc):
            raise
        return replace(float_breakdown(sid, st, exc, instance), seconds=time.perf_counter() - t0)
    except InsufficientPrecision as exc:
        if raise_errors:
            raise
        return replace(insufficient_precision(sid, st, exc, instance, prec), seconds=time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - the report must run to completion
        if raise_errors:
            raise
        msg = f"{type(exc).__name__}: {exc} [{traceback.extract_tb(exc.__traceback__)[-1].name}]"
        return error_evidence(sid, msg, instance=instance.summary(), seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    return replace(ev, seconds=seconds, instance=ev.instance or instance.summary())


def undeclared_refutation(st, ev: Evidence) -> None:
    """A FALSE conclusion must rest on one of the statement's declared
    refutations (``@statement(refutes=...)``, docs/VERDICT_PATHS.md), of a
    kind the statement allows (:func:`~verifier.statements.refutations.allowed_for`):
    anything else is a bug, raised (an "error" row), never a verdict."""
    r = ev.refutation
    if r is None:
        return
    if r not in st.refutes:
        raise RuntimeError(f"{st.id}: FALSE by an undeclared refutation path ({r.kind}: {r.by})")
    if not allowed_for(r, exists=st.exists):
        raise RuntimeError(f"{st.id}: a {r.kind!r} refutation cannot refute "
                           f"{'an existence' if st.exists else 'a universal'} statement")


#: messages of a float step that met a non-finite intermediate (the instance itself was validated finite)
_BREAKDOWN = ("nan or infinite", "infs or nans", "man_exp requires", "did not converge")


def _breakdown(exc: Exception) -> bool:
    return any(m in str(exc).lower() for m in _BREAKDOWN)


def float_breakdown(sid: str, st, exc: Exception, instance) -> Evidence:
    """inconclusive: a float step of the construction broke down on these magnitudes (an overflow, an SVD
    that does not converge, a non-finite intermediate) on data that were validated finite.  Nothing is
    decided; an exact power-of-two rescaling of the data (which no statement's truth depends on) or
    --exact-input may let the construction through."""
    reason = (f"the float construction broke down on these data ({type(exc).__name__}: {str(exc)[:160]}): "
              "nothing is decided; rescale the data by a power of two (exact: no verdict depends on it) or "
              "give --exact-input")
    return conclude(sid, Decision.UNDECIDED, claimed=st.summary, measured={"float breakdown": type(exc).__name__},
                    method="float64 construction", instance=instance.summary(), reason=reason,
                    trail=[Step(reason, uses="construction")])


def insufficient_precision(sid: str, st, exc: Exception, instance, prec: int) -> Evidence:
    """inconclusive: the arithmetic could not decide at ``prec`` bits."""
    reason = f"the ball arithmetic could not decide at --prec {prec} ({exc}); raise --prec"
    return conclude(sid, Decision.UNDECIDED, claimed=st.summary, measured={"insufficient precision": str(exc)},
                    method="arb balls", prec_bits=prec, instance=instance.summary(), reason=reason,
                    trail=[Step(reason, uses="ball arithmetic")])


def not_applicable(sid: str, st, shapes, instance) -> Evidence:
    """hypotheses-unmet from the sizes alone: the construction is not attempted."""
    others = [name for name in st.requires if name not in {h.name for h in shapes}]
    reason = unmet_reason(shapes) + "; the construction was not attempted"
    return conclude(sid, Decision.UNDECIDED, claimed=st.summary, measured={"not run": "a hypothesis on the sizes fails",
                                                                           "other hypotheses (not checked)": others},
                    hypotheses=shapes, method="shapes", instance=instance.summary(), reason=reason,
                    trail=[Step(reason, uses=", ".join(h.name for h in shapes))])


def _data_hypotheses(st, ev: Evidence, instance, *, prec: int, seed: int) -> Evidence:
    """A required assumption the checker did not report under its name (a
    hypothesis named "Assumption 1" or "Assumption 1 (...)"; Claim 1's
    "queries e^(1..k) independent (Assumption 1)" covers k queries, not all)
    is checked by its own statement; refuted, or failing at the data's
    precision (the conclusion's certificate is then about the stored floats
    only), it makes the verdict hypotheses-unmet."""
    if getattr(instance, "precision", None) is None or ev.verdict == "error":
        return ev  # another paper's instances (their checkers report their own hypotheses)
    reported = {h.name.split(" (")[0] for h in ev.hypotheses}
    at_precision = getattr(instance, "at_precision", False)
    added = []
    for name, sub in data_hypotheses(st.requires):
        if sub == st.id or not registry.REGISTRY[sub].implemented:
            continue
        if name in reported and not at_precision:
            continue
        h = hypothesis_from_evidence(name, registry.get(sub).check(instance, prec=prec, seed=seed))
        if h.status in ("refuted", "fails-at-precision"):
            added.append(h)
        elif h.status == "evidence" and getattr(instance, "at_precision", False) and ev.verdict == "verified":
            added.append(h)  # undecided at the data's precision: the headline must not say "certified"
    if not added:
        return ev
    hyps = ev.hypotheses + tuple(added)
    if all(h.status == "evidence" for h in added):
        return replace(ev, hypotheses=hyps)
    return replace(ev, hypotheses=hyps, verdict="hypotheses-unmet", certified=False,
                   reason=unmet_reason(hyps) + f"; on the stored floats: {ev.verdict} ({ev.reason})")


def _on_rounded_copy(st, ev: Evidence, instance) -> Evidence:
    """Where the float64 working copy rounds the values given (integers
    beyond 2^53, long doubles, JSON decimals), a checker that does not read
    the values given (``reads_given``) decided on the rounded data: its
    refutation (or its verification, unless its conclusion's certificate
    covers the values given: ``conclusion_over`` "box", whose balls hold
    them) is no verdict on the data, so it is inconclusive, named so."""
    rounded = getattr(instance, "rounded", None)
    if not rounded or st.reads_given or ev.verdict in ("hypotheses-unmet", "error", "inconclusive"):
        return ev
    what = "; ".join(f"{name}: {why}" for name, why in rounded.items())
    if ev.verdict == "verified" and st.conclusion_over in ("box", "any"):
        return ev
    return replace(ev, verdict="inconclusive", certified=False,
                   reason=f"{ev.verdict} on the float64 rounding of the data ({what}), not on the values given "
                          f"(--exact-input reads them, but this checker computes with the float64 copy): {ev.reason}")


def _over_stored_values(st, ev: Evidence, instance) -> Evidence:
    """On a user's floats read at their precision, a verdict "verified" says
    something about EVERY value the data stand for.  A checker whose
    conclusion is certified on the stored values only (``conclusion_over``
    "stored") cannot say that: its verified becomes inconclusive, with the
    verdict on the stored values in the reason.  A refutation stands (the
    stored values are a point of the data's intervals, and the hypotheses
    it needs were certified there)."""
    if st.conclusion_over != "stored" or ev.verdict != "verified" or not getattr(instance, "at_precision", False):
        return ev
    reason = (f"undecided at the data's precision: verified on the values stored ({ev.reason or 'certified'}); "
              f"this checker certifies its conclusion for the stored values only, not for every value the data "
              f"stand for ({instance.summary().get('reading', 'read at their precision')}); --exact-input if the "
              "stored values are exact")
    return replace(ev, verdict="inconclusive", certified=False, reason=reason)


def run_control(sid: str, control: registry.NegativeControl, *, prec: int = 128, seed: int = 0) -> tuple[Evidence, bool]:
    """Run a negative control; returns (evidence, rejected-as-expected)."""
    t0 = time.perf_counter()
    try:
        ev = control.run(prec=prec, seed=seed)
        undeclared_refutation(registry.REGISTRY[sid], ev)
    except Exception as exc:  # noqa: BLE001
        ev = error_evidence(sid, f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
    ev = replace(ev, seconds=time.perf_counter() - t0, negative_control=True)
    return ev, ev.verdict in control.expect
