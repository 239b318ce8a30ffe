"""Share servers stopped in the middle of a workload: smbd (under smbnetfs) and sshd (under sshfs).

The workload fails within a bounded time with one line naming the share, nothing hangs, no
fio is left, what finished before stays stored and the next workload still runs (and fails
on its own).  The NBD server's case is in test_nbd.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import needs_fio, needs_root
from servers import Samba, Sshfs, when_fio_runs

pytestmark = [needs_fio, needs_root]


def _killed_mid_run(cli, target: Path, kill) -> tuple[object, float]:
    before = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-write", "--size", "16m", "--runtime", "1",
                 "--no-report", "--label", "before")  # fmt: skip
    assert before.code == 0, before.err
    watcher = when_fio_runs(kill, 1.0)
    started = time.monotonic()
    res = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read",
              "--size", "16m", "--runtime", "3", "--no-report")  # fmt: skip
    watcher.join()
    return res, time.monotonic() - started


def _check(cli, res, elapsed: float, target: Path) -> str:
    assert res.code == 1, (res.out, res.err)
    assert elapsed < 90, elapsed  # bounded: a dead server does not hang the run
    (err,) = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
    assert f"workload 'rnd4k-q1t1-read' on {target}" in err
    assert "seq1m-q1t1-read on" in res.err  # the next workload still ran
    assert subprocess.run(["pgrep", "-f", f"storbench-fio-{os.getpid()}-"], capture_output=True).returncode == 1  # no fio left behind
    runs = json.loads(cli("list", "--json").out)
    assert [r["label"] for r in runs if r["status"] == "complete"] == ["before"]
    return err


@pytest.mark.skipif(shutil.which("sshfs") is None or shutil.which("ssh-keygen") is None, reason="needs sshfs and openssh-server")
def test_sshd_killed_mid_workload(cli, tmp_path: Path):
    with Sshfs(tmp_path / "ssh") as ssh:
        res, elapsed = _killed_mid_run(cli, ssh.mnt, ssh.kill_server)
    err = _check(cli, res, elapsed, ssh.mnt)
    # what fio meets depends on where it was when sshfs lost its server: the dead FUSE connection
    # (ENOTCONN, EIO, ECONNABORTED) or, for a file looked up while the session was dying, ENOENT
    # (seen once in 3 runs under a CPU hog); each is one line naming the share
    assert any(words in err for words in ("Transport endpoint is not connected", "Input/output error",
                                          "Software caused connection abort", "No such file or directory")), err


@pytest.mark.skipif(shutil.which("smbd") is None or shutil.which("smbnetfs") is None, reason="needs samba and smbnetfs")
def test_smbd_killed_mid_workload(cli, tmp_path: Path):
    with Samba(tmp_path / "smb") as smb:
        res, elapsed = _killed_mid_run(cli, smb.share_dir, smb.kill_server)
    _check(cli, res, elapsed, smb.share_dir)
