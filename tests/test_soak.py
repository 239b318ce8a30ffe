"""Long runs: the quick suite 50 times in one process against one database.

Run by ``make soak`` (``pytest -m soak``), never by ``make test``.  What must stay
flat: resident memory (under 20 MB of growth after the 5th iteration), open file
descriptors, threads and child processes; what must stay empty: the target
directory and the temporary directory (fio's ``storbench-fio-*`` directories).
"""

from __future__ import annotations

import gc
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import Cli, needs_fio

ITERATIONS = int(os.environ.get("STORBENCH_SOAK_ITERATIONS", "50"))
WARMUP = 5  # caches, imports and SQLAlchemy's compiled statements settle in the first iterations
RSS_GROWTH_LIMIT = 20 * 2**20

pytestmark = [pytest.mark.soak, needs_fio]


@pytest.fixture(autouse=True)
def only_when_asked(request):
    """Soak only when selected with ``-m soak`` (``make soak``): a plain ``pytest`` skips it too."""
    expr = request.config.getoption("markexpr") or ""
    if "soak" not in expr or "not soak" in expr:
        pytest.skip("soak test: run with 'make soak' (pytest -m soak)")


def rss_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def open_fds() -> dict[int, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass  # the directory listing's own fd
    return out


def children() -> list[int]:
    pids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return pids


def test_quick_suite_fifty_times_in_one_process(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "target"
    target.mkdir()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # where SubprocessFio makes storbench-fio-*
    cli = Cli(tmp_path)
    samples: list[tuple[int, int, int]] = []
    fds_after_warmup: dict[int, str] = {}
    started = time.monotonic()
    for i in range(ITERATIONS):
        res = cli("run", "--suite", "quick", "--target", str(target), "--size", "8m", "--runtime", "0.5s",
                  "--label", f"soak-{i}", "--no-report")
        assert res.code == 0, f"iteration {i}: {res.err}"
        assert os.listdir(target) == [], f"iteration {i}: test files left behind"
        assert os.listdir(tmp) == [], f"iteration {i}: temporary files left behind: {os.listdir(tmp)}"
        assert children() == [], f"iteration {i}: child processes left behind"
        gc.collect()
        samples.append((rss_bytes(), len(open_fds()), threading.active_count()))
        if i == WARMUP - 1:
            fds_after_warmup = open_fds()
    elapsed = time.monotonic() - started

    rss0, fds0, threads0 = samples[WARMUP - 1]
    growth = max(s[0] for s in samples[WARMUP:]) - rss0
    print(f"\nsoak: {ITERATIONS} x quick suite in {elapsed:.0f} s; RSS {rss0 / 2**20:.1f} MiB after iteration "
          f"{WARMUP}, {samples[-1][0] / 2**20:.1f} MiB at the end (max growth {growth / 2**20:.1f} MiB); "
          f"fds {fds0} -> {samples[-1][1]}; threads {threads0} -> {samples[-1][2]}")
    assert growth < RSS_GROWTH_LIMIT, [round(s[0] / 2**20, 1) for s in samples]
    assert all(s[1] <= fds0 for s in samples[WARMUP:]), (
        [s[1] for s in samples],
        sorted(set(open_fds().values()) - set(fds_after_warmup.values())),
    )
    assert all(s[2] <= threads0 for s in samples[WARMUP:]), [s[2] for s in samples]

    con = sqlite3.connect(cli.db)
    try:
        assert con.execute("select count(*), min(status), max(status) from runs").fetchone() == (ITERATIONS, "complete", "complete")
        assert con.execute("select count(*) from results").fetchone() == (ITERATIONS * 8,)
    finally:
        con.close()
