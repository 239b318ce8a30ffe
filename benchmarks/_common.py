"""Shared by the benchmarks: timed child processes, figures with targets, result files.

Every benchmark script prints its figures as text and, with ``--json FILE``, writes
them as a list of :class:`Figure` dicts for ``run_all.py``.  A figure is a ratio
measured side by side in the same run (storbench against bare fio or fio-plot, or
wall time against the time fio was asked to run), so a slow or busy machine moves
both sides alike.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO / "benchmarks"


def storbench_argv() -> list[str]:
    """The storbench CLI as a user runs it: the console script of this Python's venv."""
    script = Path(sys.executable).with_name("storbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "storbench"]


@dataclass(frozen=True)
class Timed:
    argv: tuple[str, ...]
    returncode: int
    wall_s: float
    maxrss_bytes: int  #: peak resident set size of the child (and the children it waited for)
    stdout: str
    stderr: str

    def check(self) -> Timed:
        if self.returncode != 0:
            tail = (self.stderr.strip() or self.stdout.strip())[-2000:]
            raise RuntimeError(f"{' '.join(self.argv[:4])} ... exited with {self.returncode}: {tail}")
        return self


def run_timed(argv: Sequence[str], *, env: dict | None = None, cwd: str | Path | None = None, timeout_s: float = 600) -> Timed:
    """Run ``argv`` (no shell); wall time from start to exit and the child's own peak RSS.

    ``os.wait4`` gives the rusage of exactly this child (``RUSAGE_CHILDREN`` would be
    the maximum over every child this process ever had).
    """
    # GNU time, when it is there, reads the peak: a child forked from this (large) process counts
    # this process's pages until it execs, so wait4's ru_maxrss says the benchmark's size, not its
    time_bin = shutil.which("time", path="/usr/bin")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        launch = [time_bin, "-q", "-f", "%M", "-o", peak.name, *argv] if time_bin else list(argv)
        start = time.perf_counter()
        proc = subprocess.Popen(launch, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True)  # a group: a timeout stops the child, not just time
        deadline = start + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        kib = peak.read().strip().splitlines()[-1:] if time_bin else []
        maxrss_kib = int(kib[0]) if kib and kib[0].isdigit() else usage.ru_maxrss
        return Timed(
            argv=tuple(argv),
            returncode=proc.returncode,
            wall_s=wall,
            maxrss_bytes=maxrss_kib * 1024,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


@dataclass(frozen=True)
class Figure:
    benchmark: str
    figure: str
    value: float | None
    target: str  #: ">= 0.98", "<= 1.10", or "" for a figure given for context
    detail: str = ""
    unit: str = ""

    @property
    def status(self) -> str:
        if not self.target:
            return "info"
        if self.value is None:
            return "MISS"
        op, bound = self.target.split()
        ok = self.value >= float(bound) if op == ">=" else self.value <= float(bound)
        return "PASS" if ok else "MISS"

    def line(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.3g}{self.unit}"
        target = f"(target {self.target}: {self.status})" if self.target else ""
        return f"{self.figure}: {shown} {target}".rstrip() + (f"\n    {self.detail}" if self.detail else "")


def emit(figures: Sequence[Figure], json_path: str | None) -> None:
    print()
    for f in figures:
        print(f.line())
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump([dict(dataclasses.asdict(f), status=f.status) for f in figures], fh, indent=2)


def arg_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON (run_all.py reads it)")
    return p


def median(values: Sequence[float]) -> float:
    xs = sorted(values)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


@contextlib.contextmanager
def scratch_dir(prefix: str, parent: str | None = None) -> Iterator[Path]:
    """A directory on the local disk (under /var/tmp unless told), removed afterwards."""
    parent = parent or ("/var/tmp" if os.path.isdir("/var/tmp") else None)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def tmpfs(size: str = "400m") -> Iterator[Path | None]:
    """A tmpfs mounted on a fresh directory (root only), unmounted afterwards; None if it cannot be."""
    path = Path(tempfile.mkdtemp(prefix="storbench-bench-tmpfs-"))
    mounted = False
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True)
        mounted = proc.returncode == 0
        if not mounted:
            print(f"cannot mount a tmpfs ({proc.stderr.strip() or proc.returncode}): skipping it")
        yield path if mounted else None
    finally:
        if mounted:
            for _ in range(20):
                if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
                    break
                time.sleep(0.25)
        with contextlib.suppress(OSError):
            path.rmdir()


def bench_env(db_path: Path) -> dict:
    """The environment for storbench children: their own results database, no colour."""
    env = dict(os.environ)
    env["STORBENCH_DB"] = str(db_path)
    env.pop("STORBENCH_DEBUG", None)
    # as a user runs it: Python caches compiled modules (a sandbox may have turned that off)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["NO_COLOR"] = "1"
    # one fio run per workload, as the bare-fio side of every comparison (runs repeat 3 times by default)
    env["STORBENCH_REPEAT"] = "1"
    return env


def warm_bytecode(src: str | Path | None = None) -> None:
    """Compile storbench's modules once, as ``pip install`` does for an installed package
    (an editable install otherwise compiles them on the first run that imports them)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(src or REPO / "src") / "storbench")],
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                   stdout=subprocess.DEVNULL, check=False)


def fio_version() -> str:
    try:
        return subprocess.run(["fio", "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return "fio missing"
