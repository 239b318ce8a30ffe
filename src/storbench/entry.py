"""The ``storbench`` command's entry point: SIGTERM is taken before anything is imported.

Importing the CLI (click, rich, SQLAlchemy, ...) takes a noticeable fraction of a second; a
SIGTERM in that time would kill Python with status 143 instead of storbench's documented 130.
This module imports nothing of storbench until the handler is set.
"""

from __future__ import annotations

import signal
import sys


def _stop(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


def main() -> int:
    # kept for the whole command: cli.main's own handler (the same rule) then sees it is set
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop)
    try:
        _start_fio_version(sys.argv[1:])
        from .cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("storbench: interrupted\n")
        return 130
    return _exit_now(cli_main())


#: ``storbench`` options before the command that take a value
_GLOBAL_VALUED = ("--db",)
#: ``run`` options that run no fio here (a plan, a help page, fio servers on other hosts)
_NO_LOCAL_FIO = ("--dry-run", "--show-plan", "--host", "--hosts", "-h", "--help")


def runs_fio_here(argv: list[str]) -> bool:
    """Whether ``storbench ARGV`` looks like a ``storbench run`` that starts fio on this machine,
    read from the words alone, before click parses them (``--db`` may come first; not with
    ``--dry-run``, ``--show-plan``, ``--host``, ``--hosts`` or ``--help``)."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_VALUED:
            next(words, None)
        elif word.startswith("-"):
            if not word.startswith(tuple(f"{o}=" for o in _GLOBAL_VALUED)):
                return False  # --help, --version, or what click will refuse
        else:
            return word == "run" and not any(w.split("=", 1)[0] in _NO_LOCAL_FIO for w in words)
    return False


def _start_fio_version(argv: list[str]) -> None:
    """For ``storbench run``: start ``fio --version`` before the CLI is imported, so that fio's
    own start-up (~10-25 ms: it loads every engine's libraries) overlaps click's import instead
    of being waited for after it (docs/performance.md, section 2e).  A wrong guess costs one
    unused ``fio --version``, or none started (the runner then asks fio itself, as it always did)."""
    if not runs_fio_here(argv):
        return
    import os

    from .run.fioexec import start_version

    start_version(os.environ.get("STORBENCH_FIO", "fio"))


def _exit_now(code: int) -> int:
    """Leave at once once the command is done: its files are closed and its store committed
    by then, so what Python would still do (tear down every module and collect ~60,000 objects
    of click, rich and SQLAlchemy: 0.1-0.2 s) is skipped.  atexit handlers still run, output
    is flushed first; a command that left a thread running, or run under a profiler or
    debugger, exits the ordinary way."""
    import atexit
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return code
    if sys.getprofile() is not None or sys.gettrace() is not None:  # a profiler or debugger finishes its work
        return code
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said there
            pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
