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
    left += [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("storbench-fio-") and ("-nfs-" in n or "-iscsi-" in n) and n.split("-")[2] in pids]
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
        assert "server_commit=false" in shown.stdout and "NFS_Commit = false" in shown.stdout  # the server's own word
        # what the server served for the export while fio ran, by its own counters (GetNFSv3IO), and where the export lives
        assert "NFS server (nfs-ganesha, export 1, v3) during the run: " in shown.stdout and " READs, " in shown.stdout, shown.stdout
        assert f"nfs server (this machine): {nfs.export} is on " in shown.stdout
        assert _bridges(nfs, res) == []


def test_fios_own_nfs_engine_reads_and_writes_the_test_file_without_a_bridge(tmp_path: Path):
    """``?client=fio``: fio's nfs engine (built by make install from this fio's Debian source) mounts
    the export itself; NFSv3 reads and writes, NFSv4 reads; the test file made and removed as with
    the bridge, someone else's file untouched."""
    from storbench.targets.base import external_engine

    from servers import Ganesha

    engine = external_engine("nfs")
    assert engine is not None, "make install builds fio's nfs engine (tools/fio-engines.sh)"
    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs") as nfs:
        (nfs.export / "theirs.img").write_bytes(b"x" * 4096)
        own = nfs.url + "?client=fio"
        res = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--workload", "rnd4k-q1t1-write", "--target", own,
                         "--size", "32m", "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.returncode == 0, res.stderr
        records = json.loads(res.stdout)
        assert [(r["workload"], r["target"]) for r in records] == [("rnd4k-q32t1-read", own), ("rnd4k-q1t1-write", own)]
        for r, direction in zip(records, ("read", "write")):
            assert (r["options"]["ioengine"], r["options"]["nfs_url"], r["options"]["filename"]) == (
                f"external:{engine}", "nfs://127.0.0.1/export", "storbench.testfile")
            assert r["jobs"][0][direction]["io_bytes"] > 0 and r["jobs"][0]["error"] == 0
        assert sorted(p.name for p in nfs.export.iterdir()) == ["theirs.img"] and (nfs.export / "theirs.img").read_bytes() == b"x" * 4096
        shown = _storbench(nfs, db, "show", "last")
        assert "client=fio nfs engine (libnfs)" in shown.stdout and "writes=unstable, never committed" in shown.stdout
        # its WRITEs are UNSTABLE and it cannot commit them: said (with the server committing each, 24k IOPS fell to ~190 here)
        assert ["share-write-ack" in {f["check"] for f in r["findings"]} for r in records] == [False, True]
        v4 = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--target", own + "&version=4", "--size", "32m",
                        "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert v4.returncode == 0, v4.stderr
        [r4] = json.loads(v4.stdout)
        assert r4["options"]["nfs_url"] == "nfs://127.0.0.1/export?version=4" and r4["jobs"][0]["read"]["io_bytes"] > 0
        assert sorted(p.name for p in nfs.export.iterdir()) == ["theirs.img"]
        assert _bridges(nfs, res, v4) == []


def test_an_existing_file_of_the_export_is_read_as_it_is_and_written_only_when_named(tmp_path: Path):
    """nfs://HOST/EXPORT/FILE (a VM image on a filer), through the bridge and fio's own engine: read
    as it is (same bytes after), its size capping the workloads (said once), never grown; a write
    refused in one line until --destroy-data names it, then the file written in place; a directory
    without its '/' and a missing file named in one line; nothing made or left."""
    import hashlib

    from servers import Ganesha

    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs") as nfs:
        image = nfs.export / "disk.img"
        image.write_bytes(os.urandom(24 << 20))
        (nfs.export / "sub").mkdir()

        def digest() -> tuple[int, str]:
            return image.stat().st_size, hashlib.sha256(image.read_bytes()).hexdigest()

        before = digest()
        uri = nfs.url + "disk.img"
        res = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--target", uri, "--target", uri + "?client=fio",
                         "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.returncode == 0, res.stderr
        records = json.loads(res.stdout)
        assert [r["target"] for r in records] == [uri, uri + "?client=fio"]
        assert all(r["options"]["size"] == "24m" and r["jobs"][0]["read"]["io_bytes"] > 0 for r in records)
        assert records[1]["options"]["nfs_url"] == nfs.url.rstrip("/") and records[1]["options"]["filename"] == "disk.img"
        assert res.stderr.count("note: workload sizes capped at the file's size 24m") == 1
        assert digest() == before
        # a write, unnamed: one line, nothing run; --size beyond the file: one line
        refused = _storbench(nfs, db, "run", "--workload", "rnd4k-q1t1-write", "--target", uri, "--runtime", "1s", "--no-report")
        [line] = [ln for ln in refused.stderr.splitlines() if ln.startswith("storbench: ")]
        assert refused.returncode != 0 and f"refusing to write to NFS file {uri!r} [destroy-data]" in line and f"--destroy-data {uri}" in line
        bigger = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--target", uri, "--size", "64m", "--runtime", "1s",
                            "--no-report")  # fmt: skip
        assert bigger.returncode != 0 and "storbench never grows or rewrites a file target" in bigger.stderr
        assert digest() == before
        # named: written in place through either client, never grown
        for target in (uri, uri + "?client=fio"):
            wrote = _storbench(nfs, db, "run", "--workload", "rnd4k-q1t1-write", "--target", target, "--destroy-data", target,
                               "--runtime", "1s", "--json", "--no-report")  # fmt: skip
            assert wrote.returncode == 0, wrote.stderr
            assert json.loads(wrote.stdout)[0]["jobs"][0]["write"]["io_bytes"] > 0
            after = digest()
            assert after[0] == before[0] and after[1] != before[1], target
            before = after
        for spec, words in ((nfs.url + "sub", "is a directory of the export: end it in '/'"),
                            (nfs.url + "none.img", "names no file of the export")):  # fmt: skip
            bad = _storbench(nfs, db, "run", "--workload", "rnd4k-q32t1-read", "--target", spec, "--runtime", "1s", "--no-report")
            [line] = [ln for ln in bad.stderr.splitlines() if ln.startswith("storbench: ")]
            assert bad.returncode != 0 and words in line, line
        assert sorted(p.name for p in nfs.export.iterdir()) == ["disk.img", "sub"] and not any((nfs.export / "sub").iterdir())
        assert _bridges(nfs, res, refused, bigger, wrote) == []


def test_a_server_that_commits_every_write_is_read_and_no_write_ack_is_said(tmp_path: Path):
    """ganesha's NFS_Commit = true, read from its own configuration: writes through either client
    are stable when answered, so share-write-ack stays silent."""
    from servers import Ganesha

    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs", commit=True) as nfs:
        res = _storbench(nfs, db, "run", "--workload", "rnd4k-q1t1-write", "--target", nfs.url, "--target", nfs.url + "?client=fio",
                         "--size", "16m", "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.returncode == 0, res.stderr
        records = json.loads(res.stdout)
        assert len(records) == 2 and all(r["jobs"][0]["write"]["io_bytes"] > 0 for r in records)
        assert all("share-write-ack" not in {f["check"] for f in r["findings"]} for r in records)
        shown = _storbench(nfs, db, "show", "last")
        assert shown.stdout.count("server_commit=true") >= 2 and "NFS_Commit = true" in shown.stdout
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
