"""The signals that end a run: SIGINT, SIGTERM and SIGHUP each raise
:class:`Interrupted` in the main thread, so the command line prints its one
line (and its one JSON object) and exits with 128 + the signal's number
(130, 143, 129), whatever it was doing; the handlers before are put back
after (:func:`signals_end_the_run`)."""
from __future__ import annotations

import contextlib
import signal
import threading


class Interrupted(KeyboardInterrupt):
    """A signal that ends the run (SIGINT, SIGTERM, SIGHUP): one line, exit 128 + its number."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: the signals that end a run with one line and exit code 128 + the signal's number
ENDING_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


#: the last signal that ended the run: Ray turns the exception raised for it into a plain KeyboardInterrupt
_RECEIVED: list[int] = []


def _raise_interrupted(signum, frame):
    _RECEIVED.append(signum)
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_end_the_run():
    """Within the block each of :data:`ENDING_SIGNALS` raises :class:`Interrupted`
    (in the main thread only; the handlers before are put back after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, _raise_interrupted) for s in ENDING_SIGNALS}
    _RECEIVED.clear()
    try:
        yield
    finally:
        for s, h in before.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def caused_by_a_signal(exc: BaseException) -> bool:
    """Whether ``exc`` is an ending signal's exception or wraps one: Python
    wraps what a handler raises inside some calls (``__set_name__`` in a class
    body being imported: a RuntimeError whose cause is :class:`Interrupted`)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def ending_signal(exc: BaseException) -> int:
    """The signal that raised ``exc`` (Ray turns :class:`Interrupted` into a
    plain KeyboardInterrupt: the last signal received then), else SIGINT."""
    return getattr(exc, "signum", None) or (_RECEIVED[-1] if _RECEIVED else signal.SIGINT)
