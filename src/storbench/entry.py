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
        from .cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("storbench: interrupted\n")
        return 130
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
