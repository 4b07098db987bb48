"""``mha-verify``: list, check, audit, report.

Exit codes: 0 verified, 1 refuted, 2 hypotheses unmet or bad input (one line
on stderr), 3 inconclusive (the message names the remedy), 4 a checker error.
"""
from __future__ import annotations

import argparse
import json
import sys

from verifier.data.instances import CONTEXT_KINDS, DEGENERATE_KINDS
from verifier.errors import InvalidInstance, NotImplementedStatement, VerifierError
from verifier.statements import registry


def _instance_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("instance")
    g.add_argument("--H", type=int, help="number of heads")
    g.add_argument("--n", type=int, help="context size (tokens per context)")
    g.add_argument("--d", type=int, help="token dimension (n < d)")
    g.add_argument("--dh", dest="d_h", type=int, help="key/query dimension d_h (default n)")
    g.add_argument("--dv", dest="d_v", type=int, help="value dimension d_v (default d_out)")
    g.add_argument("--dout", dest="d_out", type=int, help="label dimension d_out (default 1)")
    g.add_argument("--T", type=int, help="number of examples (default H(r-1)+1)")
    g.add_argument("--context", choices=CONTEXT_KINDS, help="how contexts are drawn")
    g.add_argument("--degenerate", choices=DEGENERATE_KINDS, help="break an assumption on purpose")
    g.add_argument("--seed", type=int, help="random seed (default 0)")
    g.add_argument("--data", help=".npz with arrays contexts (T,n,d), queries (T,d), optional labels (T,d_out)")
    g.add_argument("--exact-input", dest="exact_input", action="store_true",
                   help="read the --data floats as the exact rationals they encode (default: each value "
                        "known to its dtype's precision: float64 2^-53, float32 2^-24; integers exact)")
    g.add_argument("--prec", type=int, default=128, help="ball-arithmetic precision in bits (default 128)")
    g.add_argument("--save-weights", dest="save_weights", help="theorem1: write the constructed weights (.npz)")
    _paper_options(p, g)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _paper_options(p: argparse.ArgumentParser, first: argparse._ArgumentGroup) -> None:
    """Each later paper's own instance flags (a flag another paper already
    has, e.g. --H, is shared)."""
    taken = {s for a in p._actions for s in a.option_strings}
    for paper in registry.PAPERS.values():
        opts = paper.instance_options
        if opts is None:
            continue
        g = p.add_argument_group(f"instance ({paper.key})")
        for f in opts.flags:
            if f.flag not in taken:
                g.add_argument(f.flag, dest=f.key, type=f.type, choices=f.choices, help=f.help)
                taken.add(f.flag)


def _option_values(args, sid: str) -> dict:
    """The instance options of ``sid``'s paper from ``args``; an option of
    another paper given on the command line is bad input."""
    own = registry.instance_options(sid)
    keys = set(own.defaults) if own else set(registry.DEFAULT_OPTIONS)
    flags = {}
    for paper in registry.PAPERS.values():
        for f in (paper.instance_options.flags if paper.instance_options else ()):
            flags.setdefault(f.key, f.flag)
    for key, flag in flags.items():
        if key not in keys and getattr(args, key, None) is not None:
            raise InvalidInstance(f"option {flag} does not apply to {sid} (paper {registry.REGISTRY[sid].paper})")
    if own is None:
        return dict(H=args.H, n=args.n, d=args.d, d_h=args.d_h, d_v=args.d_v, d_out=args.d_out, T=args.T,
                    context=args.context, degenerate=args.degenerate, seed=args.seed)
    for key in ("n", "d_v", "d_out", "T", "context", "degenerate"):
        if key not in keys and getattr(args, key, None) is not None:
            raise InvalidInstance(f"option --{key.replace('_', '')} does not apply to {sid} "
                                  f"(paper {registry.REGISTRY[sid].paper})")
    return {k: getattr(args, k, None) for k in keys}


def _parser() -> argparse.ArgumentParser:
    registry.load_all()  # the papers' own instance flags
    p = argparse.ArgumentParser(prog="mha-verify", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the statements and whether each has a checker")
    for name, help_ in (("check", "check one statement on one instance"),
                        ("audit", "check and print the proof step by step")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("id", help="statement id (see: mha-verify list)")
        _instance_options(sp)
    rp = sub.add_parser("report", help="run every checker and write the report")
    mode = rp.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="seconds to a minute (CI smoke)")
    mode.add_argument("--thorough", action="store_true", help=">= 200 drawn instances per statement")
    rp.add_argument("--out", default="reports", help="output folder (default reports/)")
    rp.add_argument("--seed", type=int, default=0)
    return p


def _fail(msg: str, code: int = 2) -> int:
    print(f"mha-verify: {msg}", file=sys.stderr)
    return code


def _cmd_list(args) -> int:
    reg = registry.load_all()
    for paper in registry.PAPERS.values():
        for sid in paper.statements:
            st = reg[sid]
            mark = "not checkable" if st.not_checkable and not st.implemented else st.status_word
            why = f"  [{st.status_word}]" if mark == "not checkable" else ""
            print(f"{sid:14s} {st.reference:18s} {mark:16s} {st.summary}{why}")
    return 0


def _print_human(ev, audit: bool) -> None:
    kind = "certified" if ev.certified else "numerical" if ev.method == "float64" else "not certified"
    print(f"{ev.statement}: {ev.verdict.upper()}  ({kind}, {ev.method}"
          + (f", {ev.prec_bits} bits" if ev.prec_bits else "") + (f", tol {ev.tolerance:g}" if ev.tolerance else "") + ")")
    print(f"  claimed : {ev.claimed}")
    print(f"  measured: {ev.measured}")
    if ev.margin is not None:
        print(f"  margin  : {ev.margin}")
    for h in ev.hypotheses:
        print(f"  hypothesis {h.name}: {h.status}" + (f" ({h.detail})" if h.detail else ""))
    print(f"  reason  : {ev.reason}")
    print(f"  time    : {ev.seconds:.3f} s")
    if audit:
        print("\nAudit trail:")
        for i, s in enumerate(ev.trail, 1):
            print(f"  {i:2d}. {s.title}" + (f"   [{s.uses}]" if s.uses else ""))
            for k, v in s.data.items():
                print(f"        {k}: {v}")
        for c in ev.certificates:
            print(f"  certificate: {json.dumps(c, default=str, sort_keys=True)[:400]}")


def _cmd_check(args, audit: bool) -> int:
    from verifier.statements.runner import build_instance, run_check

    registry.load_all()
    if args.id not in registry.REGISTRY:
        return _fail(f"unknown statement id {args.id!r}; see 'mha-verify list'")
    try:
        st = registry.get(args.id)
        if args.prec < 16 or args.prec > 1 << 16:
            raise InvalidInstance(f"--prec {args.prec} out of range [16, 65536]")
        inst = build_instance(args.id, data=args.data, exact_input=args.exact_input,
                              **_option_values(args, args.id))
        options = {"save_weights": args.save_weights} if args.save_weights else {}
        ev = run_check(st.id, inst, prec=args.prec, seed=args.seed or 0, **options)
    except NotImplementedStatement as exc:
        return _fail(f"{exc}")
    except (InvalidInstance, VerifierError) as exc:
        return _fail(f"bad input: {exc}")
    if args.json:
        print(ev.to_json(with_trail=audit))
    else:
        _print_human(ev, audit)
    if ev.verdict == "inconclusive":
        print(f"mha-verify: inconclusive: {ev.reason}", file=sys.stderr)
    elif ev.verdict == "hypotheses-unmet":
        print(f"mha-verify: hypotheses unmet: {ev.reason}", file=sys.stderr)
    elif ev.verdict == "error":
        print(f"mha-verify: checker error: {ev.reason}", file=sys.stderr)
    return ev.exit_code


def _cmd_report(args) -> int:
    from verifier.report import build as report

    mode = "quick" if args.quick else "thorough" if args.thorough else "default"
    return report.write_report(out=args.out, mode=mode, seed=args.seed, argv=sys.argv)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
    except BrokenPipeError:  # e.g. `mha-verify check ... | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _dispatch(args) -> int:
    try:
        if args.cmd == "list":
            return _cmd_list(args)
        if args.cmd in ("check", "audit"):
            return _cmd_check(args, audit=args.cmd == "audit")
        return _cmd_report(args)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
