"""Full disks and hostile targets, on real (small, loop-mounted) filesystems with real fio.

Each case must end in ONE line naming the workload (or, when refused before any
workload starts, the target) and the cause, a non-zero exit code, no partial
result stored as valid, and nothing left behind: no test file, no fio process,
no mount made by storbench.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from storbench.run import runner

from conftest import loop_mount, needs_fio, needs_root

pytestmark = [needs_fio, needs_root]

PYTHON = sys.executable


def _error_line(res) -> str:
    assert "Traceback" not in res.err and "internal error" not in res.err, res.err
    lines = [ln for ln in res.err.splitlines() if ln.startswith("storbench: ")]
    assert len(lines) == 1, res.err
    return lines[0]


def _rows(db: Path, query: str) -> list[tuple]:
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _contents(path: Path) -> list[str]:
    return sorted(p for p in os.listdir(path) if p != "lost+found")


def _mounts_under(path: Path) -> list[str]:
    with open("/proc/self/mountinfo") as fh:
        return [ln.split()[4] for ln in fh if ln.split()[4].startswith(str(path))]


def _avail(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@pytest.fixture
def before_fio(monkeypatch):
    """Run ``action(n)`` just before the n-th real fio run starts (fault injection between
    storbench's checks and fio)."""
    actions = []
    original = runner.SubprocessFio.run
    calls = [0]

    def run(self, job_text, on_status):
        calls[0] += 1
        for action in actions:
            action(calls[0])
        return original(self, job_text, on_status)

    monkeypatch.setattr(runner.SubprocessFio, "run", run)
    return actions.append


# --------------------------------------------------------------------------- full disks


def test_test_file_larger_than_the_filesystem_refused_up_front(cli, tmp_path):
    with loop_mount(tmp_path, size_mib=16) as (mnt, _dev, _img):
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(mnt), "--size", "64m", "--runtime", "1")
        assert res.code == 2
        line = _error_line(res)
        assert re.fullmatch(
            rf"storbench: error: target '{re.escape(str(mnt))}' has [0-9.]+ MiB free but workload "
            r"'rnd4k-q1t1-read' needs a 64\.0 MiB test file; give a smaller --size or another --target",
            line,
        ), line
        assert _contents(mnt) == []
    assert _rows(cli.db, "select count(*) from runs") in ([], [(0,)])  # refused before a run was recorded


def test_two_targets_on_one_small_filesystem_refused_up_front(cli, tmp_path):
    """Each test file fits alone; both are there at the same time and do not."""
    with loop_mount(tmp_path, size_mib=32) as (mnt, _dev, _img):
        (mnt / "a").mkdir()
        (mnt / "b").mkdir()
        assert 16 * 2**20 < _avail(mnt) < 32 * 2**20
        res = cli("run", "--workload", "rnd4k-q1t1-write", "--target", str(mnt / "a"), "--target", str(mnt / "b"),
                  "--size", "16m", "--runtime", "1")
        assert res.code == 2, res.err
        line = _error_line(res)
        assert "free" in line and "32.0 MiB" in line and "rnd4k-q1t1-write" in line, line
        assert os.listdir(mnt / "a") == [] and os.listdir(mnt / "b") == []
    assert _rows(cli.db, "select count(*) from results") in ([], [(0,)])


def test_filesystem_filling_up_during_the_run(cli, tmp_path, before_fio):
    """Another process fills the disk after storbench checked the free space: fio hits ENOSPC."""
    with loop_mount(tmp_path, size_mib=64) as (mnt, _dev, _img):
        filler = mnt / "filler"

        def fill(n: int) -> None:
            if n == 1:
                subprocess.run(["fallocate", "-l", str(_avail(mnt) - 4 * 2**20), str(filler)], check=True)

        before_fio(fill)
        res = cli("run", "--workload", "rnd4k-q1t1-write", "--target", str(mnt), "--size", "16m", "--runtime", "2",
                  "--no-report")
        assert res.code == 1, res.err
        line = _error_line(res)
        assert line.startswith("storbench: error: 1 of 1 workload(s) failed; first: workload 'rnd4k-q1t1-write' on "), line
        assert "No space left on device" in line
        assert _rows(cli.db, "select count(*) from results") == [(0,)]  # no partial result
        [(status, reason)] = _rows(cli.db, "select status, reason from runs")
        assert status == "failed" and "No space left on device" in reason
        assert _contents(mnt) == ["filler"]  # the test file is gone; the other process's file is not ours


def test_a_layout_that_fills_the_disk_ends_the_targets_workloads_and_resume_lays_it_out_again(cli, tmp_path, before_fio):
    """The disk fills while fio lays the shared test file out for the first workload: the workloads
    after it on that target are not run (they would read the half-written file's holes at memory
    speed), nothing is stored, the partial file is removed; with space again --resume lays the file
    out anew and measures all three."""
    with loop_mount(tmp_path, size_mib=64) as (mnt, _dev, _img):
        filler = mnt / "filler"

        def fill(n: int) -> None:
            if n == 1:
                subprocess.run(["fallocate", "-l", str(_avail(mnt) - 4 * 2**20), str(filler)], check=True)

        before_fio(fill)
        workloads = ("rnd4k-q1t1-write", "rnd4k-q1t1-read", "seq1m-q1t1-read")
        args = [a for w in workloads for a in ("--workload", w)]
        res = cli("run", *args, "--target", str(mnt), "--size", "16m", "--runtime", "500ms", "--no-report", "--label", "full")
        assert res.code == 1, res.err
        line = _error_line(res)
        assert line.startswith("storbench: error: 3 of 3 workload(s) failed; first: workload 'rnd4k-q1t1-write' on "), line
        said = " ".join(res.err.split())  # the terminal wraps long lines
        for name in workloads[1:]:
            assert (f"FAILED {name} on {mnt}: not run: the test file on {mnt} could not be written whole "
                    "(workload 'rnd4k-q1t1-write': No space left on device); it was removed") in said, res.err
        assert _rows(cli.db, "select count(*) from results") == [(0,)]
        assert _contents(mnt) == ["filler"]
        filler.unlink()
        res = cli("run", "--resume", "full", "--no-report")
        assert res.code == 0, res.err
        assert sorted(w for (w,) in _rows(cli.db, "select workload from results")) == sorted(workloads)
        assert _rows(cli.db, "select status from runs") == [("complete",)]
        assert _contents(mnt) == []


# --------------------------------------------------------------------------- targets that go away or refuse


def test_target_unmounted_while_fio_runs(cli, tmp_path, before_fio):
    """``umount -l`` mid-run: the path now shows the directory underneath (another disk).
    No result from a vanished target is kept, and nothing is written underneath."""
    with loop_mount(tmp_path, size_mib=64) as (mnt, _dev, _img):
        timers = []

        def unmount_soon(n: int) -> None:
            if n == 1:
                t = threading.Timer(1.0, subprocess.run, args=(["umount", "-l", str(mnt)],), kwargs={"check": True})
                t.start()
                timers.append(t)

        before_fio(unmount_soon)
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write", "--target", str(mnt),
                  "--size", "16m", "--runtime", "2", "--no-report")
        for t in timers:
            t.join()
        assert res.code == 1, res.err
        line = _error_line(res)
        assert line.startswith("storbench: error: 2 of 2 workload(s) failed; first: workload 'rnd4k-q1t1-read' on "), line
        assert "unmounted" in line, line
        assert _rows(cli.db, "select count(*) from results") == [(0,)]
        assert _rows(cli.db, "select status from runs") == [("failed",)]
        assert _mounts_under(tmp_path) == []
        assert os.listdir(mnt) == []  # the second workload did not lay out a file on the disk underneath


def test_read_only_mount_refused(cli, tmp_path):
    with loop_mount(tmp_path, size_mib=32, mount_options="ro") as (mnt, _dev, _img):
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(mnt), "--size", "4m", "--runtime", "1")
        assert res.code == 2
        line = _error_line(res)
        assert line == (
            f"storbench: error: target {str(mnt)!r} is not writable: its filesystem is mounted read-only, "
            "and storbench must create its test file there (remount it read-write or give another --target)"
        ), line
    assert _rows(cli.db, "select count(*) from runs") in ([], [(0,)])


def test_filesystem_rejecting_direct_io(cli, tmp_path):
    """ramfs refuses O_DIRECT (and reports no size at all, so the free-space check cannot judge it)."""
    mnt = tmp_path / "ramfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mnt)], check=True)
    try:
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(mnt), "--size", "4m", "--runtime", "1",
                  "--no-report")
        assert res.code == 1, res.err
        line = _error_line(res)
        assert line.startswith("storbench: error: 1 of 1 workload(s) failed; first: workload 'rnd4k-q1t1-read' on "), line
        assert "does not support direct=1" in line, line
        assert _rows(cli.db, "select count(*) from results") == [(0,)]
        assert os.listdir(mnt) == []
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


# --------------------------------------------------------------------------- permission denied, as nobody


def _as_nobody_argv() -> list[str]:
    """How to run the venv's Python as ``nobody``.

    ``runuser -u nobody`` when nobody may execute it.  Here the interpreter lives
    under /root (mode 0700), so instead: uid/gid nobody with only the ambient
    CAP_DAC_READ_SEARCH (reading and searching directories; every WRITE permission
    check is nobody's).
    """
    import storbench

    src = Path(storbench.__file__).resolve().parent
    for parent in (src, *src.parents):
        if not os.stat(parent).st_mode & 0o005 == 0o005:
            # e.g. a checkout inside a 0700 temp dir: nobody could not read the migrations
            pytest.skip(f"the source tree is not readable by other users ({parent} is mode {oct(os.stat(parent).st_mode & 0o777)})")
    probe = subprocess.run(["runuser", "-u", "nobody", "--", PYTHON, "-c", "import storbench"], capture_output=True)
    if probe.returncode == 0:
        return ["runuser", "-u", "nobody", "--", PYTHON]
    if shutil.which("setpriv") is None:
        pytest.skip("nobody cannot run this venv's python and setpriv is missing")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
            "--inh-caps=-all,+dac_read_search", "--ambient-caps=+dac_read_search", PYTHON]


@pytest.fixture
def nobody_home():
    """A directory nobody owns (database, TMPDIR, cwd); /tmp, since pytest's tmp_path is root-only."""
    home = Path(tempfile.mkdtemp(prefix="storbench-nobody-"))
    os.chmod(home, 0o755)
    (home / "tmp").mkdir()
    for p in (home, home / "tmp"):
        os.chown(p, 65534, 65534)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _run_as_nobody(home: Path, *args: str):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home / "tmp"),
           "STORBENCH_DB": str(home / "r.sqlite"), "LANG": "C.UTF-8"}
    proc = subprocess.run([*_as_nobody_argv(), "-m", "storbench", *args], env=env, cwd=home,
                          capture_output=True, text=True, timeout=120)

    class R:
        code, out, err = proc.returncode, proc.stdout, proc.stderr

    return R


def test_root_owned_target_refused_for_nobody(nobody_home):
    target = nobody_home / "rootdir"
    target.mkdir(mode=0o755)  # root's, 0755
    res = _run_as_nobody(nobody_home, "run", "--workload", "rnd4k-q1t1-read", "--target", str(target),
                         "--size", "4m", "--runtime", "1", "--no-report")
    assert res.code == 2, res.err
    assert _error_line(res) == f"storbench: error: target {str(target)!r} is a directory that is not writable by this user"
    assert os.listdir(target) == []
    assert _rows(nobody_home / "r.sqlite", "select count(*) from runs") in ([], [(0,)])


def test_someone_elses_test_file_is_permission_denied_for_nobody(nobody_home):
    """A shared (sticky, world-writable) directory where root's storbench.testfile already sits:
    the directory passes the check, fio is refused the file.  storbench must say so in one
    line, store nothing, and neither crash on nor delete a file that is not its own."""
    shared = nobody_home / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    theirs = shared / "storbench.testfile"
    theirs.write_bytes(b"root's data\n")
    os.chmod(theirs, 0o644)
    res = _run_as_nobody(nobody_home, "run", "--workload", "rnd4k-q1t1-write", "--target", str(shared),
                         "--size", "4m", "--runtime", "1", "--no-report")
    assert res.code == 1, res.err
    line = _error_line(res)
    assert line.startswith("storbench: error: 1 of 1 workload(s) failed; first: workload 'rnd4k-q1t1-write' on "), line
    # fio tries to replace the file (unlink, EPERM in a sticky directory) or to open it (EACCES)
    assert "Operation not permitted" in line or "Permission denied" in line, line
    assert theirs.read_bytes() == b"root's data\n"
    assert os.listdir(shared) == ["storbench.testfile"]
    assert _rows(nobody_home / "r.sqlite", "select count(*) from results") == [(0,)]
    assert os.listdir(nobody_home / "tmp") == []


# --------------------------------------------------------------------------- the database's disk is full


def _fill_up(fs: Path) -> None:
    subprocess.run(["fallocate", "-l", str(_avail(fs)), str(fs / "filler")], check=True)
    with open(fs / "filler2", "wb") as fh:  # the last blocks fallocate left
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()


def test_database_disk_full_during_the_run(tmp_path, before_fio):
    """The results database sits on a disk that fills up after the first result, before the
    second is stored: one line naming the database and the cause, exit 1, the measurement kept
    where it can be imported, test files removed; with space again --resume finishes the run."""
    from conftest import Cli

    with loop_mount(tmp_path, size_mib=16) as (dbfs, _dev, _img):
        cli = Cli(tmp_path)
        cli.db = dbfs / "results.sqlite"
        target = tmp_path / "t"
        target.mkdir()
        before_fio(lambda n: _fill_up(dbfs) if n == 2 else None)
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read", "--target", str(target),
                  "--size", "8m", "--runtime", "1", "--no-report")
        assert res.code == 1, res.err
        line = _error_line(res)
        assert line.startswith(f"storbench: error: database {cli.db}: "), line
        assert "full" in line, line
        # the measurement is named and kept: its fio output saved where it can be imported later
        m = re.search(r"repetition 1 of workload 'seq1m-q1t1-read' was measured but not stored: fio's output is kept in (\S+) ", line)
        assert m, line
        kept = Path(m.group(1))
        try:
            assert '"jobs"' in kept.read_text()
        finally:
            kept.unlink()
        assert os.listdir(target) == []
        (dbfs / "filler").unlink()
        (dbfs / "filler2").unlink()
        # what the database holds is intact: the run (unfinished, the disk was full) and its first result
        assert _rows(cli.db, "select workload from results") == [("rnd4k-q1t1-read",)]
        assert _rows(cli.db, "pragma integrity_check") == [("ok",)]
        # with space again, the run is finished where it stopped
        res = cli("run", "--resume", "1", "--no-report")
        assert res.code == 0, res.err
        assert _rows(cli.db, "select status from runs") == [("complete",)]
        assert _rows(cli.db, "select workload from results order by id") == [("rnd4k-q1t1-read",), ("seq1m-q1t1-read",)]


def test_database_disk_full_before_the_first_result(tmp_path, before_fio):
    """The database's disk fills up between storbench's checks and the first fio: the store,
    opened while that fio starts, cannot be, so fio is stopped (nothing measured is lost: nothing
    was measured yet) and the one line says why; no test file or fio output is left."""
    from conftest import Cli

    with loop_mount(tmp_path, size_mib=16) as (dbfs, _dev, _img):
        cli = Cli(tmp_path)
        cli.db = dbfs / "results.sqlite"
        target = tmp_path / "t"
        target.mkdir()
        before_fio(lambda n: _fill_up(dbfs) if n == 1 else None)
        # this workload's only: another worker's test (the second result's store failing) keeps and deletes one of seq1m's
        kept_before = set(Path(tempfile.gettempdir()).glob("storbench-unstored-*-rnd4k-q1t1-read-*"))
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), "--size", "8m", "--runtime", "30",
                  "--no-report")
        assert res.code == 1, res.err
        line = _error_line(res)
        assert str(cli.db) in line and "full" in line, line
        assert "done rnd4k" not in res.err
        assert os.listdir(target) == []
        assert set(Path(tempfile.gettempdir()).glob("storbench-unstored-*-rnd4k-q1t1-read-*")) == kept_before
        assert os.listdir(target) == []
