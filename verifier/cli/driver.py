"""``mha-verify report --executor ray``: the Ray driver in a process of its own.

A Ray driver can be ended from inside Ray's C++ core: when the local raylet
dies, its plasma store goes with it and the driver "terminates the process"
with exit code 1 -- the code of a new refutation -- printing nothing of ours.
No Python handler sees that.  So a report on Ray runs as a child process (the
same command line, marked by :data:`STATUS_VARIABLE`), and this process only
waits for it:

* the child prints its own outcome (its line, its one JSON object) and records
  its exit code in the status file; this process exits with that code;
* a child that ends without recording one (its cluster lost, killed by the
  kernel) is one line here, ``error: ...`` naming how it ended, and exit 4;
* SIGINT, SIGTERM and SIGHUP are passed on to the child (in a session of its
  own: a terminal's Ctrl-C reaches it once, through here), which ends with
  its line and 128 + the signal's number.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

#: set in the child's environment: the file where it records its exit code
STATUS_VARIABLE = "MHA_VERIFY_DRIVER_STATUS"


def should_supervise(argv) -> bool:
    """This process runs the command line it was started with (not a caller's
    list, e.g. a test's), and is not itself the supervised child."""
    return (STATUS_VARIABLE not in os.environ and hasattr(sys, "orig_argv")
            and (argv is None or list(argv) == sys.argv[1:]))


def record_status(code: int) -> None:
    """In the supervised child: the exit code, once its outcome is printed."""
    path = os.environ.get(STATUS_VARIABLE)
    if path:
        try:
            Path(path).write_text(str(int(code)))
        except OSError:
            pass


def run_supervised(out, signals) -> int:
    """Run this command line again as a child; its exit code, or 4 with one
    line (through ``out``) when it ended without recording one."""
    folder = tempfile.mkdtemp(prefix="mha-verify-driver-")
    status = Path(folder) / "status"
    env = dict(os.environ, **{STATUS_VARIABLE: str(status)})
    child = subprocess.Popen([sys.executable, *sys.orig_argv[1:]], env=env, start_new_session=True)

    def forward(signum, frame):
        try:
            child.send_signal(signum)
        except OSError:
            pass

    before = {s: signal.signal(s, forward) for s in signals}
    try:
        rc = child.wait()
    finally:
        for s, h in before.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
    try:
        return int(status.read_text())
    except (OSError, ValueError):
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
        return out.fail("error", f"the Ray driver process ended without a result ({how}): its cluster was lost "
                        "(a raylet or node died) or it was killed; the report was not written", command="report")
    finally:
        status.unlink(missing_ok=True)
        os.rmdir(folder)
