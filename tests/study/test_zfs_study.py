"""The studies storbench exists for, on a real ZFS (zfs-fuse), end to end through the CLI:
the filesystem study over four loop devices, the VM-image study on ZFS datasets, the zvol
refusal, a member taken offline during a run, and the ZFS daemon killed mid-workload."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import needs_fio, needs_zfs_fuse
from zfsfuse import fuse_zfs_mounts, pool, run

pytestmark = [needs_fio, needs_zfs_fuse, pytest.mark.root]


def storbench_pools() -> list[str]:
    out = run(["zpool", "list", "-H", "-o", "name"], check=False).stdout
    return [p for p in out.split() if p.startswith("storbench-")]


def loops_over(folder: Path) -> list[str]:
    out = run(["losetup", "-a"], check=False).stdout
    return [line for line in out.splitlines() if str(folder) in line]


@pytest.fixture(autouse=True)
def own_tmp(monkeypatch, tmp_path) -> Iterator[Path]:
    """The temporary directory storbench (run in this process) makes its study directories in:
    one of this test's own, so that what it leaves is told from what a study of another test
    beside it (another xdist worker) has in /tmp at that moment.  Short: sockets live in it.
    (After ``tmp_path``: pytest finds its own base directory through the same ``tempfile``.)"""
    path = Path(tempfile.mkdtemp(prefix="sbz-"))
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def assert_nothing_left(tmp_path: Path) -> None:
    assert storbench_pools() == []
    assert loops_over(tmp_path) == []
    assert [m for m in fuse_zfs_mounts() if "storbench-matrix-" in m] == []
    assert list(tmp_path.glob(".storbench-loops-*")) == []
    assert [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("storbench-matrix-")] == []


def test_filesystem_study_ext4_xfs_zfs_raid10_raidz1(zfs, cli, tmp_path: Path):
    res = cli(
        "matrix", "--loop-files", "4", "--loop-size", "320m", "--fs", "ext4,xfs,zfs-raid10,zfs-raidz1",
        "--suite", "fs-compare", "--size", "16m", "--runtime", "300ms", "--label", "fs", "--json",
        "--report", str(tmp_path / "fs.html"),
    )  # fmt: skip
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert [(s["setup"], s["status"]) for s in out["setups"]] == [
        ("ext4", "complete"), ("xfs", "complete"), ("zfs-raid10", "complete"), ("zfs-raidz1", "complete"),
    ]  # fmt: skip
    by_setup: dict[str, list[dict]] = {}
    for r in out["results"]:
        by_setup.setdefault(r["label"].split("/", 1)[1], []).append(r)
    assert {k: sorted(r["workload"] for r in v) for k, v in by_setup.items()} == {
        k: ["app", "gitlab", "nas", "vm"] for k in ("ext4", "xfs", "zfs-raid10", "zfs-raidz1")
    }
    # each ZFS setup is the layout asked for, built on the study's four loop devices, and the
    # members did what the layout says: a mirror writes the same bytes to both of its members
    def rows(name: str, workload: str) -> dict[str, dict]:
        rec = next(r for r in by_setup[name] if r["workload"] == workload)
        return {v["name"]: v for v in rec["backend"]["zfs"]["vdevs"]}

    r10 = rows("zfs-raid10", "nas")  # nas ends with an fsync: its writes reach the pool during the run
    members = [v for v in r10.values() if v["role"] == "device"]
    assert len(members) == 4 and [m["parent"] for m in members] == ["mirror-0", "mirror-0", "mirror-1", "mirror-1"]
    assert all(m["write_bytes"] > 1024**2 for m in members), members
    assert members[0]["write_bytes"] == pytest.approx(members[1]["write_bytes"], rel=0.1)
    assert members[2]["write_bytes"] == pytest.approx(members[3]["write_bytes"], rel=0.1)
    rz = rows("zfs-raidz1", "nas")
    assert [v["name"] for v in rz.values() if v["role"] == "vdev"] == ["raidz1-0"]
    rz_members = [v for v in rz.values() if v["role"] == "device"]
    assert len(rz_members) == 4 and all(m["parent"] == "raidz1-0" and m["write_bytes"] > 1024**2 for m in rz_members)

    cmp = cli("compare", "--label-prefix", "fs/", "--json")
    assert cmp.code == 0, cmp.err
    doc = json.loads(cmp.out)
    names = {c["key"]: c["name"] for c in doc["configs"]}
    assert sorted(names.values()) == ["fs/ext4", "fs/xfs", "fs/zfs-raid10", "fs/zfs-raidz1"]
    for workload in ("gitlab", "app", "nas", "vm"):
        (row,) = [r for r in doc["rows"] if (r["workload"], r["metric"]) == (workload, "iops") and r["direction"] in ("read", "write")][:1]
        means = {k: c["mean"] for k, c in row["cells"].items() if c}
        assert row["leader"] == max(means, key=means.get)  # the leader is the configuration with the most IOPS

    html = (tmp_path / "fs.html").read_text()
    assert "ZFS pool activity" in html and "mirror-1" in html and "raidz1-0" in html
    assert_nothing_left(tmp_path)


VM_SETUPS = """
[setup.raw-8k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "8k" } }
image = { format = "raw", size = "48m" }
[setup.qcow2-8k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "8k" } }
image = { format = "qcow2", size = "48m" }
[setup.raw-64k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "64k" } }
image = { format = "raw", size = "48m" }
[setup.qcow2-64k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "64k" } }
image = { format = "qcow2", size = "48m" }
"""


def test_vm_image_study_raw_and_qcow2_on_zfs_datasets(zfs, cli, tmp_path: Path):
    setups = tmp_path / "vm.toml"
    setups.write_text(VM_SETUPS)
    res = cli(
        "matrix", "--loop-files", "1", "--loop-size", "400m", "--setups", str(setups), "--workload", "rnd4k-q1t1-write",
        "--runtime", "500ms", "--repeat", "2", "--label", "vm", "--json", "--no-report",
    )  # fmt: skip
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert [s["status"] for s in out["setups"]] == ["complete"] * 4
    recs = out["results"]
    assert len(recs) == 8  # four setups x two repetitions
    for r in recs:
        assert r["options"]["ioengine"] == "nbd"
        st = r["stats"]["write"]["iops"]
        assert st["n"] == 2 and st["stderr"] > 0 and st["mean"] > 0
    # the image lives on the setup's dataset, whose recordsize the description shows
    shown = cli("show", "vm/qcow2-64k")
    assert shown.code == 0, shown.err
    assert "recordsize=64 KiB" in shown.out and "fuse.zfs" in shown.out
    cmp = cli("compare", "--label-prefix", "vm/", "--markdown")
    assert cmp.code == 0 and "± " in cmp.out and "(2)" in cmp.out, cmp.out
    assert_nothing_left(tmp_path)


SEED_002 = """
[setup.raw-8k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "8k" } }
image = { format = "raw", size = "96m" }
[setup.raw-64k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "64k" } }
image = { format = "raw", size = "96m" }
[setup.qcow2-8k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "8k" } }
image = { format = "qcow2", size = "96m" }
[setup.qcow2-64k]
mkfs = "zfs"
zfs = { dataset_options = { recordsize = "64k" } }
image = { format = "qcow2", size = "96m" }
"""


#: alone (make test's serial session): its dbench runs in a guest ext4 on a loop device over a FUSE export
#: of an image on a zfs-fuse dataset, and zfs-fuse calls sync(), which waits for that guest's journal,
#: whose commit waits for zfs-fuse: a deadlock seen once with the servers session's other worker busy
#: beside it (jbd2/loopN in D state, zfs-fuse in jbd2_log_wait_commit under ksys_sync), never alone
@pytest.mark.serial
@pytest.mark.skipif(not os.path.exists("/usr/bin/dbench") or shutil.which("qemu-storage-daemon") is None,
                    reason="dbench and qemu-system-common are installed by tests/setup-system.sh")  # fmt: skip
def test_seed_002_raw_and_qcow2_images_on_datasets_of_recordsize_8k_and_64k(zfs, cli, tmp_path: Path):
    """Seed 002's study on zfs-fuse in one command: raw and qcow2 images on datasets of recordsize
    8k and 64k, pts-disk's fio workload on each image over NBD and its dbench inside each image
    (on the ext4 a VM would have made there), then SE ± N per setup per load."""
    setups = tmp_path / "seed002.toml"
    setups.write_text(SEED_002)
    res = cli("matrix", "--loop-files", "1", "--loop-size", "400m", "--setups", str(setups),
              "--workload", "rand-write-4k", "--workload", "dbench-1", "--size", "32m", "--runtime", "2s", "--repeat", "2",
              "--label", "seed002", "--json", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert [s["status"] for s in out["setups"]] == ["complete"] * 4
    names = ("raw-8k", "raw-64k", "qcow2-8k", "qcow2-64k")
    ran = sorted((r["label"], r["workload"]) for r in out["results"])
    assert ran == sorted((f"seed002/{n}", w) for n in names for w in ("rand-write-4k", "dbench-1") for _ in range(2)), ran
    # fio over NBD and dbench in the guest are one configuration per setup: the image's
    assert {(r["label"], r["target"]) for r in out["results"]} == {(f"seed002/{n}", f"storbench-matrix/image-{n}") for n in names}
    said = res.out + res.err
    assert "not run on this setup" not in said and said.count("application loads run in a guest ext4 made inside the image") == 4
    for r in out["results"]:
        if r["workload"] == "dbench-1":
            assert r["measures"][0]["unit"] == "MB/s" and r["measures"][0]["value"] > 0
    shown = cli("show", "seed002/qcow2-64k")
    assert shown.code == 0, shown.err
    assert "recordsize=64 KiB" in shown.out and "fuse.zfs" in shown.out  # dbench's figure: the image's dataset under it
    cmp = cli("compare", "--label-prefix", "seed002/", "--se", "--all-metrics")
    assert cmp.code == 0, cmp.err
    assert "SE ±" in cmp.out and "N = 2" in cmp.out and "dbench-1" in cmp.out and "rand-write-4k" in cmp.out
    assert_nothing_left(tmp_path)


def test_zvol_on_zfs_fuse_is_refused_before_anything_is_built(zfs, cli, tmp_path: Path):
    setups = tmp_path / "zvol.toml"
    setups.write_text('[setup.zvol-8k]\nmkfs = "zfs"\nimage = { format = "zvol", size = "64m", volblocksize = "8k" }\n')
    res = cli("matrix", "--loop-files", "1", "--loop-size", "128m", "--setups", str(setups), "--workload", "rnd4k-q1t1-read")
    assert res.code == 2
    assert res.err.count("\n") == 1
    assert "setup 'zvol-8k' asks for a zvol, but the ZFS here is zfs-fuse, which has no zvols" in res.err
    assert not list(tmp_path.glob(".storbench-loops-*")) and loops_over(tmp_path) == []


def test_member_taken_offline_during_a_run_is_a_finding(zfs, cli, tmp_path: Path):
    with pool(tmp_path, ("mirror",), disks=2) as p:
        mnt = p.dataset("bench", primarycache="metadata")
        member = p.loops[1]

        def offline() -> None:
            time.sleep(1.0)
            run(["zpool", "offline", p.name, member])

        t = threading.Thread(target=offline)
        t.start()
        try:
            res = cli("run", "--target", str(mnt), "--workload", "rnd4k-q1t1-write", "--size", "16m", "--runtime", "3",
                      "--json", "--no-report")  # fmt: skip
        finally:
            t.join()
            run(["zpool", "online", p.name, member], check=False)
        assert res.code == 0, res.err
        (rec,) = json.loads(res.out)
        z = rec["backend"]["zfs"]
        assert z["before"]["state"] == "ONLINE" and z["after"]["state"] == "DEGRADED"
        (f,) = [f for f in rec["findings"] if f["check"] == "pool-not-healthy"]
        assert f["severity"] == "warning"
        assert f"after the run the pool was DEGRADED, mirror-0 was DEGRADED, {Path(member).name} was OFFLINE" in f["message"]
        assert f"zpool online {p.name}" in f["fix"]


def _wait_for_results(db: Path, count: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            try:
                (n,) = con.execute("select count(*) from results").fetchone()
            finally:
                con.close()
            if n >= count:
                return True
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    return False


def test_zfs_daemon_killed_mid_workload(zfs, cli, tmp_path: Path):
    """The workload fails naming ZFS, the first result stays stored, and the study leaves nothing behind."""
    killed = threading.Event()

    def kill_after_first_result() -> None:
        if _wait_for_results(cli.db, 1, 60):
            time.sleep(1.0)  # the second workload is running now
            zfs.kill(signal.SIGKILL, unmount=False)  # as a crash would: its mounts stay, dead
            killed.set()

    t = threading.Thread(target=kill_after_first_result)
    t.start()
    try:
        res = cli(
            "matrix", "--loop-files", "2", "--loop-size", "128m", "--fs", "zfs-mirror", "--workload", "seq1m-q1t1-write",
            "--workload", "rnd4k-q1t1-write", "--size", "16m", "--runtime", "4", "--label", "kill", "--no-report",
        )  # fmt: skip
    finally:
        t.join()
    assert killed.is_set()
    assert res.code == 1, (res.out, res.err)
    err_lines = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
    assert len(err_lines) == 1
    assert "workload 'rnd4k-q1t1-write'" in err_lines[0] and "zfs-fuse" in err_lines[0], err_lines[0]
    con = sqlite3.connect(cli.db)
    assert [w for (w,) in con.execute("select workload from results")] == ["seq1m-q1t1-write"]
    (status,) = con.execute("select status from runs").fetchone()
    assert status == "incomplete"
    con.close()
    zfs.ensure()  # the daemon back (its pools are gone with it: cachefile=none)
    assert_nothing_left(tmp_path)
