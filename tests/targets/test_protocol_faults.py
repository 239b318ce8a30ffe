"""The servers of NFS and iSCSI targets stopped in the middle of a workload (issue 39): tgtd under
an iSCSI LUN, nfs-ganesha under an NFS export, each reached through storbench's qemu-nbd bridge.

The workload fails within a bounded time with one line naming the target; nothing hangs; what
finished before stays stored; the next workload is tried and fails on its own; no fio, no
qemu-nbd bridge and no bridge directory is left."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from servers import when_fio_runs

pytestmark = pytest.mark.skipif(
    any(shutil.which(p) is None for p in ("tgtd", "tgtadm", "ganesha.nfsd", "rpcbind", "qemu-nbd", "qemu-img", "nsenter", "fio")),
    reason="tgt, nfs-ganesha, rpcbind, qemu-utils and qemu-block-extra are installed by tests/setup-system.sh",
)

#: how long a workload may take to fail once its server is gone (qemu's iSCSI and NFS drivers
#: retry; storbench bounds the wait)
BOUND_S = 120


def _storbench(prefix: list[str], db: Path, *args: str, kill=None) -> tuple[subprocess.CompletedProcess, float]:
    """``storbench ARGS`` (inside a network namespace when ``prefix`` is nsenter's), ``kill()``
    called a second after its first fio starts; how long it took."""
    env = dict(os.environ, STORBENCH_DB=str(db))
    env.pop("STORBENCH_DEBUG", None)
    started = time.monotonic()
    child = subprocess.Popen([*prefix, sys.executable, "-m", "storbench", *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    watcher = when_fio_runs(kill, 1.0, timeout_s=90.0, pid=child.pid) if kill is not None else None
    try:
        out, err = child.communicate(timeout=BOUND_S + 120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
        if watcher is not None:
            watcher.join()
    done = subprocess.CompletedProcess(child.args, child.returncode, out, err)
    done.pid = child.pid  # type: ignore[attr-defined]
    return done, time.monotonic() - started


def _left_by(pid: int, uri: str) -> list[str]:
    """What the storbench with ``pid`` left: its fio, a qemu-nbd bridge of ``uri``, its directories."""
    left = [ln for ln in subprocess.run(["pgrep", "-af", f"storbench-fio-{pid}-"], capture_output=True, text=True).stdout.splitlines()]
    left += [ln for ln in subprocess.run(["pgrep", "-af", "qemu-nbd"], capture_output=True, text=True).stdout.splitlines() if uri in ln]
    left += [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"storbench-fio-{pid}-")]
    return left


def _failed_once_and_kept(res: subprocess.CompletedProcess, elapsed: float, target: str, db: Path) -> str:
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert elapsed < BOUND_S, elapsed  # bounded: a dead server does not hang the run
    assert "Traceback" not in res.stderr
    (err,) = [ln for ln in res.stderr.splitlines() if ln.startswith("storbench: error:")]
    assert f"workload 'rnd4k-q1t1-read' on {target}" in err, err
    assert "seq1m-q1t1-read on" in res.stderr  # the next workload was tried
    listed = subprocess.run([sys.executable, "-m", "storbench", "list", "--json"], env=dict(os.environ, STORBENCH_DB=str(db)),
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert [r["label"] for r in json.loads(listed.stdout) if r["status"] == "complete"] == ["before"]
    return err


@pytest.mark.parametrize("client", ["qemu-nbd", "fio"])
def test_tgtd_killed_mid_workload(tmp_path: Path, client: str):
    """Through the qemu-nbd bridge and through fio's own libiscsi engine: both reconnect for ever."""
    from servers import Tgt

    db = tmp_path / "r.sqlite"
    with Tgt(tmp_path / "tgt") as tgt:
        uri = tgt.uri + ("?client=fio" if client == "fio" else "")
        before, _ = _storbench([], db, "run", "--target", uri, "--workload", "rnd4k-q1t1-read", "--size", "16m", "--runtime", "1",
                               "--no-report", "--label", "before")  # fmt: skip
        assert before.returncode == 0, before.stderr

        def kill() -> None:
            assert tgt.proc is not None
            tgt.proc.send_signal(signal.SIGKILL)
            tgt.proc.wait()

        res, elapsed = _storbench([], db, "run", "--target", uri, "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read",
                                  "--size", "16m", "--runtime", "3", "--no-report", kill=kill)  # fmt: skip
    err = _failed_once_and_kept(res, elapsed, uri, db)
    assert f"the iSCSI target at 127.0.0.1:{tgt.port} stopped answering during the workload (connection refused" in err, err
    # the next workload was not started on the server still gone
    assert f"seq1m-q1t1-read on {uri}: not run: the iSCSI target at 127.0.0.1:{tgt.port} is not answering" in " ".join(res.stderr.split())
    assert _left_by(res.pid, tgt.uri) == []  # type: ignore[attr-defined]


def test_ganesha_killed_mid_workload(tmp_path: Path):
    from servers import Ganesha

    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs") as nfs:
        before, _ = _storbench(nfs.inside(), db, "run", "--target", nfs.url, "--workload", "rnd4k-q1t1-read", "--size", "16m",
                               "--runtime", "1", "--no-report", "--label", "before")  # fmt: skip
        assert before.returncode == 0, before.stderr

        def kill() -> None:
            os.kill(nfs.pids["ganesha.nfsd"], signal.SIGKILL)

        res, elapsed = _storbench(nfs.inside(), db, "run", "--target", nfs.url, "--workload", "rnd4k-q1t1-read",
                                  "--workload", "seq1m-q1t1-read", "--size", "16m", "--runtime", "3", "--no-report", kill=kill)  # fmt: skip
        left = _left_by(res.pid, nfs.url)  # type: ignore[attr-defined]
    err = _failed_once_and_kept(res, elapsed, nfs.url, db)
    assert "the NFS server at 127.0.0.1:2049 stopped answering during the workload (connection refused" in err, err
    assert left == []
