"""Edge: how storbench treats SIGINT and SIGTERM, in one place.

* :func:`as_interrupt` — inside it, SIGTERM (and Ctrl-C, unless SIGINT is ignored, as
  under ``nohup`` or ``&``) raise ``KeyboardInterrupt("SIGTERM")`` /
  ``KeyboardInterrupt("Ctrl-C")``, so both stop paths run the same cleanup.  The first
  request is also remembered in :data:`stop_requested`, for code that must notice a
  request whose exception Python swallowed (one arriving while a child is spawned).
* :func:`held` — inside it, the signals are only noted, never raised: for teardown and
  restore steps that must not be cut in half.  It yields the list of what came.
* :func:`spawning` — :func:`held` around starting a child process: a handler that raises
  while Python runs its at-fork callbacks prints "Exception ignored ... Traceback" and the
  exception is lost; noted instead, the caller raises it once the child is its to stop
  (:func:`raise_noted`).

Both act only in the main thread (Python delivers signals there); elsewhere they do nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

#: The first stop request seen inside :func:`as_interrupt` ("SIGTERM" or "Ctrl-C").
stop_requested: list[str] = []


def name(signum: int) -> str:
    return "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"


def how(exc: BaseException) -> str:
    """"SIGTERM" or "Ctrl-C" for a KeyboardInterrupt raised by these handlers."""
    return "SIGTERM" if str(exc) == "SIGTERM" else "Ctrl-C"


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def as_interrupt(*, catch_int: bool = True) -> Iterator[None]:
    if not _main_thread():
        yield
        return

    def handler(signum, frame):
        if not stop_requested:
            stop_requested.append(name(signum))
        raise KeyboardInterrupt(name(signum))

    old_term = signal.signal(signal.SIGTERM, handler)
    old_int = signal.getsignal(signal.SIGINT)
    take_int = catch_int and old_int is signal.default_int_handler
    if take_int:
        signal.signal(signal.SIGINT, handler)
    stop_requested.clear()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        if take_int:
            signal.signal(signal.SIGINT, old_int)
        stop_requested.clear()


@contextlib.contextmanager
def held() -> Iterator[list[str]]:
    pending: list[str] = []
    if not _main_thread():
        yield pending
        return
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) in (signal.SIG_IGN, None):
            continue
        previous[sig] = signal.signal(sig, lambda s, _f: pending.append(name(s)))
    try:
        yield pending
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: :func:`held`, named for its use around starting a child (see the module doc)
spawning = held


def raise_noted(noted: list[str]) -> None:
    """Raise the stop request :func:`spawning` noted while a child was started (as the
    handlers of :func:`as_interrupt` would have), so that the caller stops the child."""
    if noted:
        if not stop_requested and _main_thread():
            stop_requested.append(noted[0])
        raise KeyboardInterrupt(noted[0])
