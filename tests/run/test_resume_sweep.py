"""run --resume finishes only what is missing; --sweep stores one result per grid point."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest

from conftest import needs_fio

pytestmark = needs_fio
WORKLOADS = ("--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write", "--workload", "seq1m-q1t1-read")


def _count(db) -> int:
    try:
        return sqlite3.connect(db).execute("select count(*) from results").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_resume_finishes_only_the_missing_repetitions(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    env = dict(os.environ, STORBENCH_DB=str(cli.db))
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", *WORKLOADS, "--target", str(target), "--size", "16m",
         "--runtime", "1", "--repeat", "2", "--label", "resumable", "--no-report"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while _count(cli.db) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    before = _count(cli.db)
    assert 3 <= before < 6
    assert sqlite3.connect(cli.db).execute("select status from runs").fetchone() == ("incomplete",)

    res = cli("run", "--resume", "resumable", "--json", "--no-report")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert len(records) == 6 and _count(cli.db) == 6
    per = Counter(r["workload"] for r in records)
    assert per == {"rnd4k-q1t1-read": 2, "rnd4k-q1t1-write": 2, "seq1m-q1t1-read": 2}
    assert sorted((r["workload"], r["repetition"]) for r in records) == sorted(
        (w, i) for w in per for i in (0, 1)
    )
    assert sqlite3.connect(cli.db).execute("select status from runs").fetchone() == ("complete",)
    assert sorted(os.listdir(target)) == []
    # a complete run cannot be resumed; a plan flag beside --resume is refused
    again = cli("run", "--resume", "resumable")
    assert again.code == 2 and "complete" in again.err
    mixed = cli("run", "--resume", "resumable", "--size", "1g")
    assert mixed.code == 2 and "--size" in mixed.err


def test_sweep_stores_one_result_per_point(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--sweep", "bs=4k,64k", "--sweep", "iodepth=1,4",
              "--target", str(target), "--size", "16m", "--runtime", "1", "--json", "--no-report")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert [r["workload"] for r in records] == [
        "rnd4k-q1t1-read@bs=4k,iodepth=1", "rnd4k-q1t1-read@bs=4k,iodepth=4",
        "rnd4k-q1t1-read@bs=64k,iodepth=1", "rnd4k-q1t1-read@bs=64k,iodepth=4",
    ]
    assert [(r["options"]["bs"], r["options"]["iodepth"]) for r in records] == [("4k", "1"), ("4k", "4"), ("64k", "1"), ("64k", "4")]
    for r in records:
        read = r["jobs"][0]["read"]
        bs = 4096 if r["options"]["bs"] == "4k" else 65536
        # fio really used the swept block size: bytes per I/O
        assert read["io_bytes"] / read["total_ios"] == bs


def test_bad_sweep_is_one_line(cli):
    res = cli("run", "--sweep", "blocksize_typo=4k", "--dry-run")
    assert res.code == 2 and "unknown fio option" in res.err and len(res.err.strip().splitlines()) == 1
