"""NFS exports for real: nfs-ganesha on loopback in a private network namespace (tests/servers.py),
reached by storbench (run inside that namespace, as a client on the server's network is) through
its qemu-nbd bridge and fio's nbd engine; its test file made and removed over NFS; nothing left."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    any(shutil.which(p) is None for p in ("ganesha.nfsd", "rpcbind", "dbus-daemon", "qemu-nbd", "qemu-img", "nsenter", "fio")),
    reason="nfs-ganesha, rpcbind, dbus-daemon, qemu-utils and qemu-block-extra are installed by tests/setup-system.sh",
)


def _storbench(server, db: Path, *args: str) -> subprocess.CompletedProcess:
    """``storbench ARGS`` inside the server's network namespace; its PID kept in ``.pid`` (nsenter execs it)."""
    env = dict(os.environ, STORBENCH_DB=str(db))
    env.pop("STORBENCH_DEBUG", None)
    child = subprocess.Popen(server.inside(sys.executable, "-m", "storbench", *args), env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    out, err = child.communicate(timeout=300)
    done = subprocess.CompletedProcess(child.args, child.returncode, out, err)
    done.pid = child.pid  # type: ignore[attr-defined]
    return done


def _bridges(server, *runs: subprocess.CompletedProcess) -> list[str]:
    """qemu-nbd bridges still running in the server's namespace, and bridge directories of those runs."""
    ns = os.readlink(f"/proc/{server.pids['rpcbind']}/ns/net") if "rpcbind" in server.pids else None
    left = []
    for line in subprocess.run(["pgrep", "-af", "qemu-nbd"], capture_output=True, text=True).stdout.splitlines():
        pid = line.split()[0]
        try:
            if ns is not None and os.readlink(f"/proc/{pid}/ns/net") == ns:
                left.append(line)
        except OSError:
            continue
    pids = {str(r.pid) for r in runs}  # type: ignore[attr-defined]
    left += [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("storbench-fio-") and "-nfs-" in n and n.split("-")[2] in pids]
    return left


def test_a_run_on_an_nfs_export_makes_measures_and_removes_its_test_file(tmp_path: Path):
    from servers import Ganesha

    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs") as nfs:
        (nfs.export / "theirs.img").write_bytes(b"x" * 4096)  # someone else's file: never touched
        res = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--workload", "rnd4k-q1t1-write", "--target", nfs.url,
                         "--size", "32m", "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.returncode == 0, res.stderr
        records = json.loads(res.stdout)
        assert [(r["workload"], r["target"]) for r in records] == [("rnd4k-q32t1-read", nfs.url), ("rnd4k-q1t1-write", nfs.url)]
        assert records[0]["jobs"][0]["read"]["io_bytes"] > 0 and records[1]["jobs"][0]["write"]["io_bytes"] > 0
        # unsynced writes through qemu's nfs driver are UNSTABLE: said
        assert "share-write-ack" in {f["check"] for f in records[1]["findings"]}
        assert "share-write-ack" not in {f["check"] for f in records[0]["findings"]}
        # storbench's test file is gone, the other file is as it was
        assert sorted(p.name for p in nfs.export.iterdir()) == ["theirs.img"] and (nfs.export / "theirs.img").read_bytes() == b"x" * 4096
        shown = _storbench(nfs, db, "show", "last")
        assert "client=qemu-nbd bridge (libnfs)" in shown.stdout and "version=3" in shown.stdout
        assert _bridges(nfs, res) == []


def test_an_export_that_does_not_answer_is_one_line(tmp_path: Path):
    from servers import Ganesha

    with Ganesha(tmp_path / "nfs") as nfs:
        res = _storbench(nfs, tmp_path / "r.sqlite", "run", "--workload", "rnd4k-q32t1-read", "--target", "nfs://127.0.0.1/nosuch/",
                         "--runtime", "1s", "--no-report")  # fmt: skip
        assert res.returncode != 0 and "Traceback" not in res.stderr
        [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("storbench: ")]
        assert "cannot mount NFS export 'nfs://127.0.0.1/nosuch/'" in line, line
        assert _bridges(nfs, res) == []
