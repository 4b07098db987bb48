"""Run a checker on an instance: timing, instance summary, and the rule that
an unexpected exception becomes an "error" row, never a pass."""
from __future__ import annotations

import time
import traceback
from dataclasses import replace

from verifier.data.instances import Instance, make_instance
from verifier.data.npz import load_npz
from verifier.errors import InvalidInstance, NotImplementedStatement
from verifier.statements.evidence import Evidence, error_evidence

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
            return own.load(data, **opts)
        return own.make(**opts)
    if data is not None:
        return load_npz(data, exact_input=exact_input, H=opts["H"], d_h=opts["d_h"], d_v=opts["d_v"],
                        d_out=opts["d_out"], seed=opts["seed"])  # d_out: only when the file has no labels
    return make_instance(H=opts["H"], n=opts["n"], d=opts["d"], d_h=opts["d_h"], d_v=opts["d_v"],
                         d_out=opts["d_out"], T=opts["T"], context=opts["context"],
                         degenerate=opts["degenerate"], seed=opts["seed"])


def run_check(sid: str, instance: Instance, *, prec: int = 128, seed: int = 0,
              raise_errors: bool = False, **options) -> Evidence:
    """Call the checker; InvalidInstance propagates (bad input, exit 2)."""
    st = registry.get(sid)
    t0 = time.perf_counter()
    try:
        ev = st.check(instance, prec=prec, seed=seed, **options)
    except (InvalidInstance, NotImplementedStatement):
        raise
    except Exception as exc:  # noqa: BLE001 - the report must run to completion
        if raise_errors:
            raise
        msg = f"{type(exc).__name__}: {exc} [{traceback.extract_tb(exc.__traceback__)[-1].name}]"
        return error_evidence(sid, msg, instance=instance.summary(), seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    return replace(ev, seconds=seconds, instance=ev.instance or instance.summary())


def run_control(sid: str, control: registry.NegativeControl, *, prec: int = 128, seed: int = 0) -> tuple[Evidence, bool]:
    """Run a negative control; returns (evidence, rejected-as-expected)."""
    t0 = time.perf_counter()
    try:
        ev = control.run(prec=prec, seed=seed)
    except Exception as exc:  # noqa: BLE001
        ev = error_evidence(sid, f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)
    ev = replace(ev, seconds=time.perf_counter() - t0, negative_control=True)
    return ev, ev.verdict in control.expect
