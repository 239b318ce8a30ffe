"""The flake study (docs/testing.md): every test that waits, signals, times out or throttles, run N
times in a row while a CPU hog takes every core; a test that fails once here is rewritten so that
what it asserts holds under load.

    .venv/bin/python tests/flake_study.py [--count 20] [--hog stress-ng|python|none] [-k EXPR] [--list]
    .venv/bin/python tests/flake_study.py --all [--count 1] [--hog ...]   # the wider net

Which tests: those whose body (read with ``ast``) sleeps, reads a monotonic clock, has a
deadline or a timeout, sends SIGINT/SIGTERM/SIGKILL, throttles fio (``rate``), repeats until a
relative standard error, starts an NBD server or follows a live run: the tests whose outcome
could depend on how fast the machine is.  They run in one pytest session (``pytest-repeat``:
each test ``--count`` times in a row; servers start once), one test at a time, every tier
(the back-ends', root and browser tests too, where this machine has them).

The wider net (``--all``): every test, as ``make test`` runs them (its three sessions: the
parallel one with ``-n JOBS``, the back-ends', browser and root tests on two workers grouped by
what they share, then the ZFS studies' daemons and the serial tests one at a time), ``--count`` times each (default 1) under
the hog.  It finds what the selection above
cannot see: a test asserting on a figure the machine decides (which load step does most IOPS,
whether fio measured 1 s or 1.1 s).

The hogs: ``stress-ng --cpu NCPU`` (Debian's stress-ng), else as many Python busy loops as cores;
and the disk hog (``--no-disk-hog`` leaves it out) on the temporary directory's filesystem: fio's
70/30 random 4 KiB mix capped at 2,000 + 1,000 IOPS and a buffered writer flushing a gigabyte
at a time, the neighbours that change what fio measures second to second.  They are stopped when
the study ends, however it ends.  Exit status: pytest's.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

#: what marks a test whose outcome could depend on the machine's speed or load
TIMING = re.compile(
    r"time\.sleep|monotonic\(|deadline|SIGINT|SIGTERM|SIGKILL|os\.kill|send_signal|\.kill\(|timeout=|"
    r"\brate\b|rate=|rate_iops|--rate|until_rse|elapsed|wait_until|Nbdkit\(|status-interval|\blive\b"
)


def timing_tests() -> list[str]:
    """Node ids (file::function) of the tests whose body, or a helper or fixture of their module
    they call or take, matches :data:`TIMING` (a fixture that runs fio under ``rate_iops`` makes
    every test of it depend on the machine keeping the rate)."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        functions = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
        timed = {n.name for n in functions if TIMING.search(ast.get_source_segment(source, n) or "")}
        uses = {n.name: {c.func.id for c in ast.walk(n) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
                for n in functions}  # fmt: skip
        while grown := {name for name, called in uses.items() if name not in timed and called & timed}:
            timed |= grown  # a helper or fixture that calls a timed one is timed
        for node in functions:
            if node.name.startswith("test_") and (node.name in timed or {a.arg for a in node.args.args} & timed):
                found.append(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def start_hog(kind: str) -> subprocess.Popen | None:
    cores = os.cpu_count() or 1
    if kind == "none":
        return None
    if kind == "stress-ng" and shutil.which("stress-ng"):
        argv = ["stress-ng", "--cpu", str(cores), "--timeout", "0", "--quiet"]
    else:
        loop = "import multiprocessing as m\nwhile True: pass"
        argv = [sys.executable, "-c", f"import multiprocessing as m, sys\n"
                f"ps=[m.Process(target=lambda: exec({loop!r})) for _ in range({cores})]\n"
                "[p.start() for p in ps]; [p.join() for p in ps]"]  # fmt: skip
    return subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL)


#: the disk hog's buffered writer: a gigabyte written through the page cache, flushed at once,
#: removed, again (the writeback storm a busy neighbour makes), until killed
_FLUSHER = """
import os, sys
path = os.path.join(sys.argv[1], "flake-hog.flush")
chunk = b"\\xa5" * (1 << 20)
while True:
    with open(path, "wb") as f:
        for _ in range(1024):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    os.unlink(path)
"""


def start_disk_hog(directory: str) -> list[subprocess.Popen]:
    """A busy neighbour on the filesystem the tests write to: fio's 70/30 random 4 KiB mix, direct,
    capped at 2,000 reads and 1,000 writes per second (a shared disk, not a saturated one), and a
    buffered writer flushing a gigabyte at a time.  Both in ``directory``; stop with
    :func:`stop_hog` (their files go with the directory the caller removes)."""
    fio = ["fio", "--name=flake-hog", f"--directory={directory}", "--rw=randrw", "--rwmixread=70",
           "--bs=4k", "--size=256m", "--direct=1", "--ioengine=psync", "--rate_iops=2000,1000",
           "--time_based", "--runtime=86400", "--output=/dev/null"]  # fmt: skip
    flush = [sys.executable, "-c", _FLUSHER, directory]
    return [subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            for argv in (fio, flush)]  # fmt: skip


def stop_hog(hog: subprocess.Popen | None) -> None:
    if hog is None:
        return
    for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(hog.pid, sig)
        except ProcessLookupError:
            break
        try:
            hog.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue


#: ``make test``'s three sessions: (pytest -m, its pytest-xdist options)
MAKE_TEST_SESSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("not backend and not browser and not root and not serial", ("-n", "JOBS")),
    ("(backend or browser or root) and not serial and not daemons", ("-n", "2", "--dist", "loadgroup")),
    ("daemons or serial", ()),
)


@contextlib.contextmanager
def hogs(args: argparse.Namespace) -> Iterator[None]:
    """The CPU hog (``--hog``) and, unless ``--no-disk-hog``, the disk hog in a directory of the
    temporary filesystem the tests use; all stopped and the directory removed however it ends."""
    started = [start_hog(args.hog)]
    scratch = None
    try:
        if args.disk_hog:
            scratch = tempfile.mkdtemp(prefix="flake-disk-hog-")
            started += start_disk_hog(scratch)
        yield
    finally:
        for hog in started:
            stop_hog(hog)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def whole_suite(args: argparse.Namespace) -> int:
    """Every test under the hogs, in ``make test``'s three sessions; pytest's first failing status
    (every session runs even when one before it failed)."""
    count = str(args.count or 1)
    jobs = "2" if args.jobs == "0" else args.jobs
    status = 0
    with hogs(args):
        for marks, xdist in MAKE_TEST_SESSIONS:
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations", "20",
                    "-m", f"({args.m}) and ({marks})"]  # fmt: skip
            if count != "1":
                argv += ["-p", "repeat", "--count", count, "--repeat-scope", "function"]
            argv += [jobs if word == "JOBS" else word for word in xdist]
            if args.k:
                argv += ["-k", args.k]
            status = status or subprocess.call(argv, cwd=ROOT)
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=None, help="runs of each test in a row (default 20; --all: 1)")
    parser.add_argument("--hog", choices=("stress-ng", "python", "none"), default="stress-ng")
    parser.add_argument("--disk-hog", action=argparse.BooleanOptionalAction, default=True,
                        help="a rate-capped fio random mix and a gigabyte flusher beside the tests (default: on)")
    parser.add_argument("-k", default=None, help="only the tests pytest -k selects among them")
    parser.add_argument("-m", default="not soak", help="pytest -m among them (default: not soak)")
    parser.add_argument("--list", action="store_true", help="list the tests and run nothing")
    parser.add_argument("-n", "--jobs", default="0", help="pytest-xdist workers (default 0: one test at a time; "
                        "only for tests that need no server, device or browser)")
    parser.add_argument("--tests", nargs="*", help="these node ids (file::test) instead of the ones found")
    parser.add_argument("--all", action="store_true", help="every test, as make test runs them (-n JOBS for its "
                        "parallel part, default 2), --count times each (default 1)")
    args = parser.parse_args()
    # SIGTERM (a stopped CI job, kill -- -PGID) ends the study like Ctrl-C: the hogs are stopped and
    # their directory removed (they run in sessions of their own: a killed study left them spinning)
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    if args.all:
        return whole_suite(args)
    tests = args.tests or timing_tests()
    if args.list:
        print("\n".join(tests))
        print(f"{len(tests)} tests")
        return 0
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "repeat", "--count", str(args.count or 20),
            "--repeat-scope", "function", "--durations", "40", "-m", args.m, *tests]  # fmt: skip
    if args.k:
        argv += ["-k", args.k]
    if args.jobs != "0":
        argv += ["-n", args.jobs]
    with hogs(args):
        return subprocess.call(argv, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
