"""What the command line prints: the contract scripts rely on.

* ``--json``: exactly ONE JSON object on stdout in every case -- the
  evidence (plus ``exit_code`` and ``headline``), or for anything that is
  not a verdict ``{"verdict": "bad-input" | "not-implemented" | "error" |
  "interrupted", "exit_code": ..., "message": ...}``;
* at most one line on stderr, ``mha-verify: ...``, for every outcome that is
  neither verified nor refuted (bad input, hypotheses unmet, inconclusive,
  checker error);
* the exit code is decided before anything is printed, so a closed pipe
  (``mha-verify check ... | head -1``) or a closed stdout (``>&-``) cannot
  change it;
* while a report runs under ``--json``, whatever else writes to stdout (a
  library, Ray and its child processes) goes to stderr
  (:func:`stdout_to_stderr`): stdout holds the one JSON object alone;
* warnings raised while checking go into the output (JSON ``warnings``), not
  to stderr.

>>> o = Output(json_mode=True, stream=__import__("io").StringIO())
>>> o.fail("bad-input", "--seed -1: must be a non-negative integer", statement="theorem1")
2
>>> __import__("json").loads(o.stream.getvalue())["verdict"]
'bad-input'
"""
from __future__ import annotations

import json
import os
import sys

from verifier.cli.text import certificate_lines, table_lines, value_text

#: exit codes of the outcomes that are not a statement's verdict (a signal: 128 + its number)
OUTCOME_CODES = {"bad-input": 2, "not-implemented": 2, "error": 4, "interrupted": 130}
EXIT_CODES_HELP = ("exit codes: 0 verified, 1 refuted, 2 hypotheses unmet or bad input (a size above the memory "
                   "budget too) or an unknown / unimplemented statement (one line on stderr), 3 inconclusive (the "
                   "message names the remedy, e.g. raise --prec), 4 checker error (a cluster lost or running other "
                   "code too), 130 interrupted (SIGINT), 143 terminated (SIGTERM), 129 hung up (SIGHUP); with --json "
                   "stdout holds exactly one JSON object in every case")


def declared_entry(finding) -> dict:
    """A declared finding as the JSON of ``check`` shows it."""
    from verifier.statements.findings import errata_reference

    return {"key": finding.key, "title": finding.title, "class": finding.class_label,
            "errata": errata_reference(finding)}


def headline(ev, declared=None) -> str:
    """The verdict line, honest about the hypotheses: a certified conclusion
    whose hypotheses are only evidenced says so; a refutation inside a
    declared finding's family says which (the exit code stays 1)."""
    v = ev.verdict.upper()
    how = f"{ev.method}" + (f", {ev.prec_bits} bits" if ev.prec_bits else "") + \
        (f", tol {ev.tolerance:g}" if ev.tolerance else "")
    unmet = [h.name for h in ev.hypotheses if h.status in ("refuted", "fails-at-precision")]
    evidenced = [h.name for h in ev.hypotheses if h.status in ("evidence", "assumed")]
    if ev.verdict == "verified":
        kind = "conclusion certified" if ev.certified else "conclusion numerical, not certified"
        if evidenced:
            kind += f"; hypothesis {', '.join(evidenced)} only evidenced, not certified"
        elif ev.hypotheses:
            kind += "; hypotheses certified"
        return f"{ev.statement}: {v} ({kind}; {how})"
    if ev.verdict == "hypotheses-unmet":
        return f"{ev.statement}: {v} ({'; '.join(unmet) or 'a hypothesis'} not met; {how})"
    if ev.verdict == "refuted":
        known = (f", as declared: {declared.title} ({declared.class_label}; {declared_entry(declared)['errata']}: "
                 f"{declared.key})") if declared is not None else ""
        return f"{ev.statement}: {v}{known} ({'certified' if ev.certified else 'not certified'}; {how})"
    return f"{ev.statement}: {v} ({how})"


def human_text(ev, audit: bool, warned=(), declared=None) -> str:
    """The verdict as a person reads it: the headline, the claim, the measured values as a short aligned
    table with the report's rounding (:mod:`.text`), one line per hypothesis, the reason; ``audit`` adds
    the trail, step by step, and the certificates, each as such a table (``--json`` has everything)."""
    claim = "; ".join(f"{k} {v}" if str(v)[:1] in "<>=" or str(k).rstrip()[-1:] in "<>=" else f"{k}: {v}"
                      for k, v in ev.claimed.items()) if isinstance(ev.claimed, dict) else ev.claimed
    lines = [headline(ev, declared), f"  claim      {value_text(claim)}"]
    measured = table_lines(ev.measured)
    if measured:
        lines += ["  measured"] + measured
    if ev.margin is not None:
        lines.append(f"  margin     {value_text(ev.margin, 'margin')}")
    if ev.hypotheses:
        lines.append("  hypotheses")
        width = max(len(h.status) for h in ev.hypotheses)
        lines += [f"    {h.status:<{width}}  {h.name}" + (f": {value_text(h.detail)}" if h.detail else "")
                  for h in ev.hypotheses]
    lines.append(f"  reason     {ev.reason}")
    lines += [f"  warning    {w}" for w in warned]
    lines.append(f"  time       {ev.seconds:.3f} s")
    if audit:
        lines += ["", "Audit trail:"]
        for i, s in enumerate(ev.trail, 1):
            lines.append(f"  {i:2d}. {s.title}" + (f"   [{s.uses}]" if s.uses else ""))
            lines += table_lines(s.data, "        ")
        for c in ev.certificates:
            lines += certificate_lines(c)
    return "\n".join(lines)


STDERR_PREFIX = {"inconclusive": "inconclusive", "hypotheses-unmet": "hypotheses unmet", "error": "checker error"}


class Output:
    """Prints one result; remembers the exit code before printing, survives a
    closed stdout, and keeps stderr to one line."""

    def __init__(self, *, json_mode: bool, stream=None, err=None):
        self.json_mode = json_mode
        self.stream = stream if stream is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.code: int | None = None
        self.printed = False

    # -- the two kinds of result ------------------------------------------------
    def evidence(self, ev, *, audit: bool, warned=(), declared=None) -> int:
        """One verdict; ``declared``: the finding whose family holds a refuted instance (the exit code stays 1:
        the refutation is real; the headline and JSON ``declared_finding`` say it is a known one)."""
        self.code = ev.exit_code
        if self.json_mode:
            d = ev.to_dict(with_trail=audit)
            d.update(exit_code=self.code, headline=headline(ev, declared), warnings=list(warned),
                     declared_finding=declared_entry(declared) if declared is not None else None)
            self._out(json.dumps(d, sort_keys=True))
        else:
            self._out(human_text(ev, audit, warned, declared))
        if ev.verdict in STDERR_PREFIX:
            self._err(f"{STDERR_PREFIX[ev.verdict]}: {ev.reason}")
        return self.code

    def fail(self, verdict: str, message: str, *, statement: str | None = None, command: str | None = None,
             code: int | None = None) -> int:
        """A result that is not a verdict (bad input, unknown id, error)."""
        self.code = OUTCOME_CODES.get(verdict, 2) if code is None else code
        if self.json_mode:
            self._out(json.dumps({"verdict": verdict, "exit_code": self.code, "message": message,
                                  "statement": statement, "command": command}, sort_keys=True))
        prefix = {"bad-input": "bad input: ", "error": "error: "}.get(verdict, "")
        self._err(prefix + message)
        return self.code

    def data(self, obj: dict, text: str, code: int = 0) -> int:
        """A listing or a summary: ``obj`` as JSON or ``text``."""
        payload = json.dumps(obj, sort_keys=True) if self.json_mode else text  # before the code: a failure prints
        self.code = code
        self._out(payload)
        return code

    # -- printing that a closed pipe cannot turn into a traceback ---------------
    def _out(self, text: str) -> None:
        if self.printed and self.json_mode:
            return  # one JSON object, never two
        self.printed = True
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except BrokenPipeError:
            silence_stdout(self.stream)

    def _err(self, line: str) -> None:
        line = " ".join(str(line).split())  # one line, whatever the message held
        try:
            self.err.write(f"mha-verify: {line}\n")
            self.err.flush()
        except (BrokenPipeError, OSError):
            pass


class stdout_to_stderr:
    """While the body runs, stdout -- ``sys.stdout`` and file descriptor 1,
    which child processes inherit -- writes to stderr; ``output.stream``
    keeps the real stdout for the one JSON object.  Restored on exit."""

    def __init__(self, output: Output):
        self.output = output

    def __enter__(self):
        self.saved_obj, self.saved_fd = sys.stdout, None
        self.output.stream = sys.stdout
        try:
            fd = sys.stdout.fileno()
            sys.stdout.flush()
            self.saved_fd = os.dup(fd)
            os.dup2(sys.stderr.fileno(), fd)
            self.output.stream = os.fdopen(os.dup(self.saved_fd), "w")
        except (AttributeError, OSError, ValueError):  # not a real file (a test's capture): Python's level only
            self.saved_fd = None
        sys.stdout = sys.stderr
        return self

    def __exit__(self, *exc) -> None:
        sys.stdout = self.saved_obj
        if self.saved_fd is not None:
            try:
                self.output.stream.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                os.dup2(self.saved_fd, sys.stdout.fileno())
                os.close(self.saved_fd)
            except (OSError, ValueError):
                pass
        self.output.stream = sys.stdout


def open_std_streams() -> None:
    """A stdout or stderr closed before the start (``>&-``): pointed at
    /dev/null, so nothing can fail on it and no file opened later takes its
    descriptor; the exit code is the verdict's all the same."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            if getattr(sys, name) is not None:
                continue
        except OSError:
            nul = os.open(os.devnull, os.O_WRONLY)
            if nul != fd:
                os.dup2(nul, fd)
                os.close(nul)
        setattr(sys, name, open(fd, "w", closefd=False))


def silence_stdout(stream=None) -> None:
    """Point stdout (or ``stream``) at /dev/null (after EPIPE) so the
    interpreter's final flush cannot fail and change the exit code."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, (stream or sys.stdout).fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass
