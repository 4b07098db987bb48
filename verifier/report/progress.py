"""Progress of a report run, on stderr: a one-line bar per phase on a
terminal; one line per phase otherwise (CI logs, ``mha-verify report > log``,
a pipe), so a run is never silent for minutes.

>>> import io
>>> s = io.StringIO()
>>> bar = Progress("checks", 3, stream=s, unit="instances")
>>> bar.step("a"); bar.close()
>>> s.getvalue()
'mha-verify report: checks (3 instances)...\\n'
"""
from __future__ import annotations

import os
import sys
import time


class Progress:
    """``enabled``: the bar (a terminal and not CI); otherwise the phase's
    start is one line.  ``quiet`` silences both (library calls)."""

    def __init__(self, phase: str, total: int, *, stream=None, enabled: bool | None = None, unit: str = "steps",
                 quiet: bool = False):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get("CI")
        self.phase, self.total, self.done, self.enabled = phase, max(total, 1), 0, enabled and not quiet
        self.t0 = time.perf_counter()
        if not self.enabled and not quiet and total > 0:
            self._write(f"mha-verify report: {phase} ({total} {unit})...\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def step(self, label: str = "") -> None:
        self.done += 1
        if self.enabled:
            width = 28
            fill = int(width * self.done / self.total)
            self._write(f"\r{self.phase:>11s} [{'#' * fill}{'.' * (width - fill)}] "
                        f"{self.done}/{self.total} {time.perf_counter() - self.t0:5.1f}s {label[:28]:28s}")

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.t0

    def close(self) -> None:
        if self.enabled:
            self._write("\n")
