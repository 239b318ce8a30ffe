"""End-to-end: the real storbench CLI driving the real fio into a real SQLite file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.suites import builtin_catalog

from conftest import needs_fio, needs_root

SMALL = ("--size", "16m", "--runtime", "500ms")

pytestmark = needs_fio


def _files(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_single_workload_stored_and_test_file_removed(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), *SMALL, "--label", "one", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert len(records) == 1
    rec = records[0]
    assert rec["workload"] == "rnd4k-q1t1-read"
    assert rec["label"] == "one"
    assert rec["target"] == str(target)
    assert rec["source"] is None
    assert rec["fio_version"].startswith("fio-3")
    assert rec["options"]["size"] == "16m" and rec["options"]["runtime"] == "500ms"
    job = rec["jobs"][0]
    assert set(job) >= {"name", "read"} and "write" not in job
    read = job["read"]
    assert read["io_bytes"] > 0 and read["runtime_ms"] >= 450  # --runtime 500ms
    # IOPS is what fio counted over the time it measured, 4 KiB each (how many the machine did is its own)
    assert read["iops"] == pytest.approx(read["io_bytes"] / 4096 / read["runtime_ms"] * 1000, rel=0.05)
    assert read["bw_bytes"] == pytest.approx(read["io_bytes"] / read["runtime_ms"] * 1000, rel=0.05)
    assert read["clat_ns"]["percentiles"]["99.0"] >= read["clat_ns"]["min"]
    # the test file is gone, nothing else was left in the target
    assert _files(target) == []
    # the store agrees with what was printed
    con = sqlite3.connect(cli.db)
    (status,) = con.execute("select status from runs").fetchone()
    iops, raw = con.execute("select read_iops, raw_output from results").fetchone()
    assert status == "complete"
    assert iops == pytest.approx(read["iops"])
    assert json.loads(raw)["jobs"][0]["read"]["iops"] == pytest.approx(read["iops"])


def test_keep_files_keeps_the_shared_test_file(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write", "--target", str(target), *SMALL, "--keep-files")
    assert res.code == 0, res.err
    assert _files(target) == ["storbench.testfile"]
    assert (target / "storbench.testfile").stat().st_size == 16 * 1024 * 1024


def test_default_target_is_a_scratch_dir_removed_afterwards(cli, tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", *SMALL, cwd=work)
    assert res.code == 0, res.err
    # only the run's HTML report is left here: the scratch directory and its test file are gone
    assert _files(work) == ["storbench-run-1.html"]
    assert "report: " in res.err and str(work / "storbench-run-1.html") in res.err
    assert "results stored in" in res.out and "as run 1" in res.out


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["quick", "fs-compare", "ssd-journal", "share", "pts-fio", "curve"])
def test_every_builtin_suite_runs_for_real(cli, tmp_path, suite):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--suite", suite, "--target", str(target), "--size", "16m", "--runtime", "200ms", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    expected = [w.name for w in builtin_catalog().suite(suite).workloads]
    assert [r["workload"] for r in records] == expected
    for rec in records:
        assert rec["options"]["size"] == "16m"
        moved = sum(d["io_bytes"] for j in rec["jobs"] for k, d in j.items() if k in ("read", "write", "mixed"))
        assert moved > 0, rec["workload"]
    if suite == "share":
        engines = {r["options"]["ioengine"] for r in records}
        assert len(engines) == 1 and engines <= {"io_uring", "libaio", "posixaio"}
    if suite == "fs-compare":
        gitlab = records[0]["jobs"][0]
        # gtod_reduce=1: latency is not measured, so it is null, never zero
        assert gitlab["read"]["clat_ns"] is None and gitlab["read"]["lat_ns"] is None
        vm = records[3]
        assert vm["options"]["numjobs"] == "4" and len(vm["jobs"]) == 1  # group_reporting
    assert _files(target) == []


def test_dry_run_prints_jobs_and_runs_nothing(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--suite", "fs-compare", "--target", str(target), "--dry-run", "--runtime", "2")
    assert res.code == 0, res.err
    assert res.out.count("# workload ") == 4
    assert "[gitlab]\nrandrepeat=1\nioengine=libaio\ndirect=1\ngtod_reduce=1\nbs=4k\niodepth=64\nrw=randrw\nrwmixread=75\nsize=16G\nruntime=2\n" in res.out
    assert f"filename={target}/storbench.testfile" in res.out
    assert _files(target) == []
    assert not cli.db.exists()


def test_fio_error_is_one_line_and_not_stored(cli, tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text(
        '[workload.misaligned]\ndescription = "direct I/O with a block size no device accepts"\n'
        'fio = { rw = "read", bs = 1000, direct = 1, ioengine = "psync", size = "1m" }\n'
    )
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--suite-file", str(suite), "--workload", "misaligned", "--target", str(target))
    assert res.code == 1
    last = res.err.strip().splitlines()[-1]
    assert last.startswith("storbench: error: 1 of 1 workload(s) failed; first: workload 'misaligned'")
    assert "Invalid argument" in last or "direct" in last
    assert "Traceback" not in res.err
    # no empty results table: the run says it has none, where it is stored
    assert "run 1: no result was stored" in res.out and "┏" not in res.out and "workload" not in res.out.split("no result")[-1]
    con = sqlite3.connect(cli.db)
    assert con.execute("select count(*) from results").fetchone() == (0,)
    assert con.execute("select status from runs").fetchone() == ("failed",)
    assert _files(target) == []


@pytest.mark.parametrize(
    "args, expect",
    [
        (("run", "--suite", "nope"), "unknown suite 'nope'"),
        (("run", "--workload", "nope"), "unknown workload 'nope'"),
        (("run", "--target", "/does/not/exist"), "does not exist"),
        (("run", "--size", "12parsecs"), "invalid size '12parsecs'"),
        (("run", "--runtime", "soon"), "soon"),
        (("run", "--suite-file", "/does/not/exist.toml"), "exist.toml"),
        (("show", "42"), "no run matches '42'"),
        (("export", "7"), "no run matches '7'"),
        (("run", "--no-such-flag"), "No such option"),
    ],
)
def test_bad_input_is_one_line(cli, args, expect):
    res = cli(*args)
    assert res.code == 2, res
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert lines[0].startswith("storbench: error:") and expect in lines[0]


def test_malformed_suite_file_names_file_and_line(cli, tmp_path):
    bad = tmp_path / "mine.toml"
    bad.write_text('[workload.x]\ndescription = "x"\nfio = { rw = "randread", iodeph = 4 }\n')
    res = cli("run", "--suite-file", str(bad), "--workload", "x", "--dry-run")
    assert res.code == 2
    line = res.err.strip()
    assert "mine.toml" in line and "iodeph" in line and "iodepth" in line
    assert len(line.splitlines()) == 1


def test_fio_missing(cli, tmp_path):
    res = cli("run", "--workload", "rnd4k-q1t1-read", env_extra={"STORBENCH_FIO": str(tmp_path / "no-fio")})
    assert res.code == 2
    assert "fio not found" in res.err and len(res.err.strip().splitlines()) == 1


@needs_root
def test_read_only_target_refused(cli, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], check=True)
    try:
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(ro), *SMALL)
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    assert res.code == 2
    assert "not writable" in res.err and len(res.err.strip().splitlines()) == 1


def test_list_show_export(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    assert cli("run", "--workload", "rnd4k-q1t1-write", "--target", str(target), *SMALL, "--label", "lbl").code == 0
    listed = json.loads(cli("list", "--json").out)
    assert [(r["run"], r["label"], r["status"], r["result_count"]) for r in listed] == [(1, "lbl", "complete", 1)]
    shown = cli("show", "lbl")
    assert shown.code == 0 and "rnd4k-q1t1-write" in shown.out and "label: lbl" in shown.out
    by_json = json.loads(cli("show", "last", "--json").out)
    assert by_json[0]["jobs"][0]["write"]["iops"] > 0
    csv_text = cli("export", "1", "--format", "csv").out.splitlines()
    assert csv_text[0].startswith("run,result,label,target")
    assert len(csv_text) == 2 and ",write," in csv_text[1]
    raw = cli("show", "1", "--raw").out
    assert '"fio version"' in raw


def test_interrupt_keeps_finished_results_and_cleans_up(tmp_path):
    """SIGINT in the middle of a suite: what finished is kept, the run is incomplete, no files left."""
    target = tmp_path / "t"
    target.mkdir()
    db = tmp_path / "r.sqlite"
    env = dict(os.environ, STORBENCH_DB=str(db))
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", "--target", str(target), "--size", "16m", "--runtime", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # wait until the first result is committed, then interrupt
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists():
            try:
                n = sqlite3.connect(db).execute("select count(*) from results").fetchone()[0]
            except sqlite3.Error:
                n = 0
            if n >= 1:
                break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    con = sqlite3.connect(db)
    status, reason = con.execute("select status, reason from runs").fetchone()
    n = con.execute("select count(*) from results").fetchone()[0]
    assert status == "incomplete" and "interrupted" in reason
    assert 1 <= n < 8
    assert _files(target) == []
    assert subprocess.run(["pgrep", "-f", str(target)], capture_output=True).stdout == b""


def test_a_store_that_cannot_open_stops_the_first_fio(tmp_path):
    """The store opens on another thread while the first fio starts (run/session.py,
    PendingStore): when it cannot be opened, fio is stopped at once - not after its 10
    minutes - and the one line is the store's; nothing is left in the target or in /tmp."""
    target = tmp_path / "t"
    target.mkdir()
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the database's directory should be\n")
    env = {k: v for k, v in os.environ.items() if k != "STORBENCH_DEBUG"}
    env["STORBENCH_DB"] = str(blocker / "results.sqlite")
    private_tmp = tmp_path / "tmp"  # its own temporary directory: other test processes may use /tmp meanwhile
    private_tmp.mkdir()
    env["TMPDIR"] = str(private_tmp)
    proc = subprocess.run(
        [sys.executable, "-m", "storbench", "run", "--workload", "rnd4k-q1t1-read", "--target", str(target),
         "--size", "16m", "--runtime", "600", "--repeat", "1", "--no-report"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,  # 600 s if fio were not stopped
    )
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("storbench:")]
    assert len(errors) == 1 and "database" in errors[0] and str(blocker) in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "done rnd4k" not in proc.stderr
    assert _files(target) == []
    assert list(private_tmp.iterdir()) == []
    assert not blocker.with_name("results.sqlite").exists()


def test_live_state_waits_for_the_store_then_is_published_in_order(tmp_path):
    """The run's live state (storbench serve's live page) before the store has opened on its
    thread is queued, then published in order once it has: the first workload's start is not lost."""
    import threading

    from storbench.model import Target, Workload
    from storbench.run.live import LiveReporter
    from storbench.run.runner import SilentReporter
    from storbench.run.session import PendingStore
    from storbench.store import Store

    gate = threading.Event()

    def opener():
        gate.wait(30)
        store = Store.open(f"sqlite:///{tmp_path / 'live.sqlite'}")
        return store, store.create_run(label="live", kind="run", suite="quick", meta={})

    pending = PendingStore(opener)
    reporter = LiveReporter(SilentReporter(), planned_s=10.0)
    reporter.publish_when_ready(pending, total=2)
    target = Target(kind="dir", path="/t")
    reporter.workload_started(Workload("w1", "", ()), target, 0, 2, 0)  # before the store: queued
    assert not pending.ready()
    pending.failure()  # what the fio executor asks 50 ms into the first fio: the thread starts
    gate.set()
    store, run_id = pending.get()
    try:
        reporter.flush()
        [(rid, _at, state)] = store.live_states(run_id)
        assert rid == run_id
        assert state["current"]["workload"] == "w1" and state["current"]["index"] == 0 and state["total"] == 2
        reporter.workload_started(Workload("w2", "", ()), target, 1, 2, 0)  # after: published at once
        [(_, _, state)] = store.live_states(run_id)
        assert state["current"]["workload"] == "w2" and state["current"]["index"] == 1
    finally:
        pending.close()
