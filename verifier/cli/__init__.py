"""``mha-verify``: list, check, audit, report, errata.

Exit codes: 0 verified, 1 refuted, 2 hypotheses unmet or bad input (one line
on stderr; a size above the memory budget too), 3 inconclusive (the message
names the remedy), 4 a checker error (a cluster lost or running other code
too), 130 interrupted (SIGINT), 143 terminated (SIGTERM), 129 hung up
(SIGHUP).  ``--json`` prints exactly one JSON object on stdout in every case
(:mod:`verifier.cli.output` holds the contract); no input, however bad,
produces a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import signal
import sys
import threading
import warnings
from pathlib import Path

from verifier.cli import driver, listing, sizes
from verifier.cli.output import EXIT_CODES_HELP, Output, open_std_streams, silence_stdout, stdout_to_stderr
from verifier.cli.paths import writable_file, writable_folder  # noqa: F401 (re-exported)
from verifier.cli.signals import ENDING_SIGNALS, caused_by_a_signal, ending_signal, signals_end_the_run
from verifier.cli.suggest import Parser, UsageError, did_you_mean, version_text
from verifier.data import budget
from verifier.data.instances import CONTEXT_KINDS, DEGENERATE_KINDS
from verifier.errors import InvalidInstance, NotImplementedStatement, VerifierError
from verifier.statements import registry

#: (option key, flag, what the default is) of the first paper's instances
FLAGS = (("H", "--H", "number of heads (default 2)"),
         ("n", "--n", "tokens per context (default 3)"),
         ("d", "--d", "token dimension (default 5)"),
         ("d_h", "--dh", "key/query dimension d_h (default n)"),
         ("d_v", "--dv", "value dimension d_v (default d_out)"),
         ("d_out", "--dout", "label dimension d_out (default 1)"),
         ("T", "--T", "number of examples (default H(r-1)+1, r = min(n, d_h))"))


def _instance_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("instance (defaults below; a statement may set its own, see the epilog)")
    for key, flag, help_ in FLAGS:
        g.add_argument(flag, dest=key, type=int, help=help_)
    g.add_argument("--context", choices=CONTEXT_KINDS, help="how contexts are drawn (default random)")
    g.add_argument("--degenerate", choices=DEGENERATE_KINDS, help="break an assumption on purpose (default none)")
    g.add_argument("--seed", type=int, help="random seed, >= 0 (default 0)")
    g.add_argument("--data", help=".npz with arrays contexts (T,n,d), queries (T,d), optional labels (T,d_out); "
                                  "--n/--d/--T/--context/--degenerate then must not contradict it")
    g.add_argument("--exact-input", dest="exact_input", action="store_true",
                   help="read the --data floats as the exact rationals they encode (default: each value "
                        "known to its dtype's precision: float64 2^-53, float32 2^-24; integers exact)")
    g.add_argument("--prec", type=int, default=128, help="ball-arithmetic precision in bits, 16..65536 (default 128)")
    g.add_argument("--exhaustive-limit", dest="exhaustive_limit", type=int, metavar="N",
                   help="exhaust up to N subsets per Kruskal-rank level (default 20000; the work grows with N: about "
                        "a millisecond per subset of 5 vectors, exact and over the data's intervals)")
    g.add_argument("--max-memory", dest="max_memory", metavar="SIZE",
                   help="the memory budget the sizes are checked against before anything is built, e.g. 64G "
                        f"(default {budget.DEFAULT_MAX_MEMORY >> 30}G or this machine's memory, if smaller)")
    writers = ", ".join(sid for sid, st in registry.REGISTRY.items() if st.writes_weights) or "none"
    g.add_argument("--save-weights", dest="save_weights", metavar="PATH.npz",
                   help=f"write the constructed weights (statements that construct weights: {writers})")
    g.add_argument("--weights", metavar="FILE", help="given weights (.npz as --save-weights writes, .pt state dict, "
                   ".safetensors): W_Q, W_K (H,d,d_h), W_V (H,d,d_v), W_O (H d_v,d), W_D (d,d_out), skip_connection; "
                   "read at their dtype's precision (--exact-input: exactly); statements weights_rank, "
                   "weights_memorize, weights_classify")
    g.add_argument("--hf-model", dest="hf_model", metavar="DIR", help="a local transformers model directory (ViT, "
                   "BERT, GPT-2; never downloaded): --layer L's attention on the tokens of --data's pixel_values or "
                   "input_ids (weights_rank)")
    g.add_argument("--layer", type=int, help="with --hf-model: the layer, 0-based")
    g.add_argument("--tol", help="weights_memorize: the tolerance on max |yhat - y| (an exact decimal; default "
                   "1e-6 max|y|)")
    _paper_options(p)
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


def _paper_options(p: argparse.ArgumentParser) -> None:
    """Each later paper's own instance flags (a flag another paper already
    has, e.g. --H, is shared)."""
    taken = {s for a in p._actions for s in a.option_strings}
    for paper in registry.PAPERS.values():
        opts = paper.instance_options
        if opts is None:
            continue
        g = p.add_argument_group(f"instance ({paper.key}; defaults: "
                                 + ", ".join(f"{k}={v}" for k, v in opts.defaults.items()) + ")")
        for f in opts.flags:
            if f.flag not in taken:
                g.add_argument(f.flag, dest=f.key, type=f.type, choices=f.choices, help=f.help)
                taken.add(f.flag)


def _statement_defaults() -> str:
    lines = []
    for sid, st in registry.REGISTRY.items():
        if st.defaults and registry.instance_options(sid) is None:
            lines.append(f"  {sid}: " + " ".join(f"{k}={v}" for k, v in st.defaults.items()))
    return "statements' own instance defaults:\n" + "\n".join(lines)


def _flag_of(key: str) -> str:
    for paper in registry.PAPERS.values():
        for f in (paper.instance_options.flags if paper.instance_options else ()):
            if f.key == key:
                return f.flag
    return next((flag for k, flag, _ in FLAGS if k == key), f"--{key}")


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
            raise InvalidInstance(f"option {_flag_of(key)} does not apply to {sid} "
                                  f"(paper {registry.REGISTRY[sid].paper})")
    return {k: getattr(args, k, None) for k in keys}


def _validate_values(args) -> None:
    """Sizes, seed and precision, named by the flag the user typed."""
    for key, flag, _ in FLAGS:
        v = getattr(args, key, None)
        if v is not None and v < 1:
            raise InvalidInstance(f"{flag} {v}: must be a positive integer")
    for paper in registry.PAPERS.values():
        for f in (paper.instance_options.flags if paper.instance_options else ()):
            v = getattr(args, f.key, None)
            if f.type is int and isinstance(v, int) and v < 0:
                raise InvalidInstance(f"{f.flag} {v}: must be a non-negative integer")
    if args.seed is not None and args.seed < 0:
        raise InvalidInstance(f"--seed {args.seed}: must be a non-negative integer")
    if not 16 <= args.prec <= 1 << 16:
        raise InvalidInstance(f"--prec {args.prec}: must be in [16, 65536] bits")


def _check_against_data(args, inst) -> None:
    """Options that describe the data must agree with the file, not be ignored."""
    for key, flag in (("n", "--n"), ("d", "--d"), ("T", "--T"), ("d_out", "--dout")):
        v = getattr(args, key, None)
        if v is not None and hasattr(inst, key) and getattr(inst, key) != v:
            raise InvalidInstance(f"{flag} {v} conflicts with --data {Path(args.data).name}, which has "
                                  f"{key} = {getattr(inst, key)}")
    own = registry.instance_options(args.id)  # a paper's own options: which ones the file determines
    for key in own.from_data if own else ():
        v = getattr(args, key, None)
        if v is not None and getattr(inst, key) != v:
            raise InvalidInstance(f"{_flag_of(key)} {v} conflicts with --data {Path(args.data).name}, which has "
                                  f"{key} = {getattr(inst, key)}")
    for key, flag in (("context", "--context"), ("degenerate", "--degenerate"),
                      *((k, _flag_of(k)) for k in (own.draws if own else ()))):
        if getattr(args, key, None) is not None:
            raise InvalidInstance(f"{flag} draws generated data; it does not apply to --data")


def _parser() -> argparse.ArgumentParser:
    registry.load_all()  # the papers' own instance flags
    epilog = EXIT_CODES_HELP
    p = Parser(prog="mha-verify", description=__doc__.splitlines()[0].replace("``", ""), epilog=epilog)
    p.add_argument("--version", action="version", version=version_text())
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    lp = sub.add_parser("list", help="the statements and whether each has a checker", epilog=epilog)
    lp.add_argument("--long", action="store_true", help="each statement in full: hypotheses, statement, checks")
    lp.add_argument("--markdown", action="store_true", help="with --long: the docs page (docs/STATEMENTS.md)")
    lp.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    for name, help_ in (("check", "check one statement on one instance"),
                        ("audit", "check and print the proof step by step")):
        sp = sub.add_parser(name, help=help_, formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=f"{epilog}\n\n{_statement_defaults()}")
        sp.add_argument("id", help="statement id (see: mha-verify list)")
        _instance_options(sp)
        sp.add_argument("--certificate", metavar="FILE.json", help="write the certified verdict as a certificate "
                        "file, re-checkable by python verifier/recheck.py FILE.json (theorem1, appendixC, step2, "
                        "proposition1, proposition2, proposition5; docs/CERTIFICATES.md)")
    rp = sub.add_parser("report", help="run every checker and write the report", epilog=(
        "exit codes: 0 every verdict verified or as declared (the papers' known findings), 1 a new refutation or a "
        "negative control not rejected (--strict: any refutation), 3 a declared finding no longer reproduces, "
        "4 a checker, figure or section error (a Ray cluster lost, a worker running other code), 2 bad input, "
        "130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP"))
    mode = rp.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="seconds to a minute (CI smoke)")
    mode.add_argument("--thorough", action="store_true", help=">= 200 drawn instances per statement")
    rp.add_argument("--out", default="reports", help="output folder (default reports/)")
    rp.add_argument("--seed", type=int, default=0, help="seed of the drawn instances, >= 0 (default 0)")
    rp.add_argument("--json", action="store_true", help="print the summary as one JSON object on stdout")
    rp.add_argument("--strict", action="store_true", help="exit 1 on ANY refutation, declared findings included "
                    "(default: 0 when every verdict is verified or as declared)")
    rp.add_argument("--executor", choices=("local", "ray"), default="local",
                    help="where the statements' instances and the experiments run: this process (default) or Ray "
                    "tasks, an experiment asking for a GPU when the cluster has one (pip install "
                    "'mha-verify[cluster]'); the same results.json either way")
    rp.add_argument("--address", help="with --executor ray: the cluster to join (e.g. auto, ray://HOST:10001; "
                    "default: a local Ray on this machine's cores)")
    rp.add_argument("--cache", metavar="DIR", help="keep each instance's and each experiment's result in DIR "
                    "(one JSON file per unit, keyed by a hash of its inputs and the code): a rerun, e.g. after an "
                    "interruption, computes only what is missing")
    ep = sub.add_parser("errata", help="write a paper's findings as a Markdown document (ERRATA-<paper>.md)",
                        epilog="exit 0: every declared finding reproduced; 3: one did not; 4: a certificate raised")
    ep.add_argument("paper", help=f"paper key ({', '.join(registry.PAPERS)})")
    ep.add_argument("--out", default="reports", help="output folder (default reports/)")
    ep.add_argument("--seed", type=int, default=0, help="seed, >= 0 (default 0)")
    return p


def _cmd_list(args, out: Output) -> int:
    if args.json:
        return out.data({"statements": listing.rows()}, "")
    if args.markdown and not args.long:
        raise InvalidInstance("--markdown needs --long")
    text = listing.markdown().rstrip("\n") if args.markdown else listing.long_text() if args.long else listing.short_text()
    return out.data({}, text)


def _cmd_check(args, out: Output, audit: bool) -> int:
    from verifier.statements.runner import build_instance, run_check

    if args.id not in registry.REGISTRY:
        return out.fail("bad-input", f"unknown statement id {args.id!r}{did_you_mean(args.id, registry.REGISTRY)}; "
                        "see 'mha-verify list'", statement=args.id, command=args.cmd)
    try:
        st = registry.get(args.id)
    except NotImplementedStatement as exc:
        return out.fail("not-implemented", str(exc), statement=args.id, command=args.cmd)
    _validate_values(args)
    if args.save_weights is not None:
        if not st.writes_weights:
            writers = ", ".join(s for s, x in registry.REGISTRY.items() if x.writes_weights)
            raise InvalidInstance(f"--save-weights: {args.id} constructs no weights to save; statements that do: "
                                  f"{writers}")
        writable_file(args.save_weights, "--save-weights")
        if not str(args.save_weights).endswith(".npz"):
            raise InvalidInstance(f"--save-weights {args.save_weights}: give a file name ending in .npz (numpy "
                                  "would append it and write another file than the one named)")
    given = args.weights is not None or args.hf_model is not None or args.layer is not None or args.tol is not None
    if args.exact_input and args.data is None and not given:
        raise InvalidInstance("--exact-input reads --data; generated instances are exact already")
    if args.certificate is not None:
        from verifier.cli.certificates import certificate_target

        certificate_target(args.id, args.certificate)
    options = {"save_weights": args.save_weights} if args.save_weights else {}
    if given:  # a statement about given weights (verifier/cli/given.py)
        from verifier.cli.given import given_inputs

        with budget.memory_budget(budget.parse_size(args.max_memory) if args.max_memory else None):
            inst, more = given_inputs(args, st, _option_values(args, args.id))
        options.update(more)
        if args.data is not None:
            _check_against_data(args, inst)
    else:
        inst = sizes.build_within_budget(args.id, st, _option_values(args, args.id), data=args.data,
                                         exact_input=args.exact_input, max_memory=args.max_memory,
                                         build=build_instance, agree=lambda inst: _check_against_data(args, inst))
    if args.exhaustive_limit is not None:
        if args.exhaustive_limit < 0:
            raise InvalidInstance(f"--exhaustive-limit {args.exhaustive_limit}: must be a non-negative integer")
        options["exhaustive_limit"] = args.exhaustive_limit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = run_check(st.id, inst, prec=args.prec, seed=args.seed or 0, **options)
    warned = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    if args.certificate is not None:
        from verifier.cli.certificates import write_certificate

        write_certificate(st.id, inst, ev, args.certificate, seed=args.seed or 0, weights=options.get("weights"))
    return out.evidence(ev, audit=audit, warned=warned, declared=_declared_finding(ev, inst))


def _declared_finding(ev, inst):
    """The declared finding whose family holds a refuted instance (None: not refuted, or a new refutation)."""
    from verifier.statements.findings import covered_by

    return covered_by(ev.statement, {}, inst) if ev.verdict == "refuted" else None


def _cmd_report(args, out: Output, supervise: bool = False) -> int:
    from verifier.report import build as report

    if args.seed < 0:
        raise InvalidInstance(f"--seed {args.seed}: must be a non-negative integer")
    writable_folder(args.out, "--out")
    if args.cache is not None:
        writable_folder(args.cache, "--cache")
    if args.address and args.executor != "ray":
        raise InvalidInstance("--address needs --executor ray")
    if args.executor == "ray" and importlib.util.find_spec("ray") is None:
        raise InvalidInstance("--executor ray needs Ray: pip install 'mha-verify[cluster]' (or pip install ray)")
    if args.executor == "ray" and supervise:  # a driver Ray may end from C++: run in a child, watched from here
        return driver.run_supervised(out, ENDING_SIGNALS)
    mode = "quick" if args.quick else "thorough" if args.thorough else "default"
    from verifier.report.executor import ClusterError

    with stdout_to_stderr(out) if args.json else contextlib.nullcontext():  # stdout: the one JSON object alone
        try:
            code = report.write_report(out=args.out, mode=mode, seed=args.seed, argv=sys.argv,
                                       summary_stream=sys.stderr if args.json else sys.stdout, strict=args.strict,
                                       executor=args.executor, address=args.address, cache=args.cache)
        except ClusterError as exc:  # a cluster lost, a worker running other code: no report, one line
            return out.fail("error", str(exc), command=args.cmd)
        if args.json:
            import json

            summary = json.loads((Path(args.out) / "results.json").read_text())["summary"]
            return out.data({"verdict": "report", "exit_code": code, "out": str(args.out), **summary}, "", code)
    return code


def _cmd_errata(args, out: Output) -> int:
    from verifier.report.errata import write_errata

    if args.paper not in registry.PAPERS:
        raise InvalidInstance(f"unknown paper {args.paper!r}; choose from {', '.join(registry.PAPERS)}")
    if args.seed < 0:
        raise InvalidInstance(f"--seed {args.seed}: must be a non-negative integer")
    writable_folder(args.out, "--out")
    path, code = write_errata(args.paper, args.out, seed=args.seed)
    print(f"wrote {path} (exit {code})")
    return code


def main(argv=None) -> int:
    supervise = driver.should_supervise(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    open_std_streams()
    out = Output(json_mode="--json" in argv)
    with signals_end_the_run():
        code = _main(argv, out, supervise)
    driver.record_status(code)  # a supervised Ray driver: its outcome is printed (driver.py)
    return code


def _interrupted(exc: BaseException, out: Output) -> int:
    """A signal ended the run: its one line and 128 + its number (a result
    already printed stands)."""
    for s in ENDING_SIGNALS:  # one line, one JSON object: a second signal cannot interrupt them
        signal.signal(s, signal.SIG_IGN) if threading.current_thread() is threading.main_thread() else None
    if out.code is not None:
        return out.code  # the result was already printed: it stands
    signum = ending_signal(exc)
    name = signal.Signals(signum).name
    return out.fail("interrupted", f"interrupted by {name}" if signum != signal.SIGINT else "interrupted",
                    code=128 + signum)


def _main(argv: list, out: Output, supervise: bool = False) -> int:
    try:
        try:
            args = _parser().parse_args(argv)
        except UsageError as exc:
            return out.fail("bad-input", str(exc), command=next((a for a in argv if not a.startswith("-")), None))
        except SystemExit as exc:  # --help / --version printed: their own exit status
            return int(exc.code or 0)
        out.json_mode = bool(getattr(args, "json", False))
        try:
            if args.cmd == "list":
                return _cmd_list(args, out)
            if args.cmd in ("check", "audit"):
                return _cmd_check(args, out, audit=args.cmd == "audit")
            if args.cmd == "errata":
                return _cmd_errata(args, out)
            return _cmd_report(args, out, supervise)
        except NotImplementedStatement as exc:
            return out.fail("not-implemented", str(exc), statement=getattr(args, "id", None), command=args.cmd)
        except (InvalidInstance, VerifierError) as exc:
            return out.fail("bad-input", str(exc), statement=getattr(args, "id", None), command=args.cmd)
    except BrokenPipeError:  # stdout closed (| head): the verdict's code stands
        silence_stdout()
        return out.code if out.code is not None else 0
    except KeyboardInterrupt as exc:
        return _interrupted(exc, out)
    except Exception as exc:  # noqa: BLE001 - a bug in the verifier: one line, never a traceback
        if caused_by_a_signal(exc):  # a signal's exception wrapped by Python (e.g. in __set_name__)
            return _interrupted(exc, out)
        if out.code is not None:
            return out.code  # the result was already printed
        return out.fail("error", f"internal error: {type(exc).__name__}: {exc}")
    finally:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError, OSError):
            silence_stdout()
