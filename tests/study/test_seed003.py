"""Seed 003's study for real, in one command: one zfs-fuse dataset shared three ways from this
machine -- SMB (smbd, reached through the smbnetfs FUSE client), NFS (nfs-ganesha) and iSCSI (tgtd,
a LUN whose backing file is on the dataset) -- with the network's ceiling measured first (iperf3,
storbench net), the seed's sequential reads at its block sizes (4k, 128k, 8M) and its random
writes, from a suite file of the study's own, and one compare table with verdicts; each side's
trap said: the server's ARC answering reads (server-cache, from the dataset found behind each
export) and the write acknowledgement (share-write-ack for SMB's client and NFS's UNSTABLE
writes, lun-write-cache for the LUN).

nfs-ganesha and tgtd run in one private network namespace with storbench inside it (as a client
on the server's network is); smbd stays on the host's loopback, and its smbnetfs mount is a
directory storbench reads like any other."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import needs_fio, needs_root

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(
        any(shutil.which(p) is None for p in ("smbd", "smbnetfs", "ganesha.nfsd", "rpcbind", "tgtd", "tgtadm", "qemu-nbd", "nsenter",
                                               "iperf3")),
        reason="samba, smbnetfs, nfs-ganesha, rpcbind, tgt, qemu-utils, qemu-block-extra and iperf3 (tests/setup-system.sh)",
    ),
]

BLOCKS = ("4k", "128k", "8m")
#: the seed's sequential reads at its three block sizes, and its random writes (4k), as the share
#: suite runs them (one job, queue depth 1, direct, the I/O engine found on each target)
SUITE = """
[suite.seed003]
description = "seed 003: SMB vs NFS vs iSCSI of one pool"
workloads = ["nas-read-4k", "nas-read-128k", "nas-read-8m", "nas-write-4k"]

[workload.nas-read-4k]
fio = { rw = "read", bs = "4k", iodepth = 1, ioengine = "auto", direct = 1, runtime = 30, time_based = true }

[workload.nas-read-128k]
fio = { rw = "read", bs = "128k", iodepth = 1, ioengine = "auto", direct = 1, runtime = 30, time_based = true }

[workload.nas-read-8m]
fio = { rw = "read", bs = "8m", iodepth = 1, ioengine = "auto", direct = 1, runtime = 30, time_based = true }

[workload.nas-write-4k]
fio = { rw = "randwrite", bs = "4k", iodepth = 1, ioengine = "auto", direct = 1, runtime = 30, time_based = true }
"""
WORKLOADS = tuple(f"nas-read-{bs}" for bs in BLOCKS) + ("nas-write-4k",)


def test_seed003_smb_nfs_and_iscsi_of_one_zfs_dataset_in_one_command(zfs, tmp_path: Path):
    from test_nfs import _bridges, _storbench

    from servers import Ganesha, Samba, Tgt, free_port
    from zfsfuse import pool

    db = tmp_path / "r.sqlite"
    with pool(tmp_path, ("mirror",), disks=2, size_mib=256) as p:
        nas = p.dataset("nas", primarycache="all")
        with Ganesha(tmp_path / "nfs", export=nas / "nfs") as nfs, \
                Tgt(tmp_path / "tgt", size_mib=32, inside=nfs.inside(), backing=nas / "lun.img") as lun, \
                Samba(tmp_path / "smb", share_path=nas / "smb") as smb:  # fmt: skip
            port = free_port()
            iperf3 = subprocess.Popen(nfs.inside("iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            try:
                net = _storbench(nfs, db, "net", "127.0.0.1", "--port", str(port), "--time", "1", "--parallel", "1")
            finally:
                iperf3.kill()
                iperf3.wait()
            assert net.returncode == 0, net.stderr
            # the one command: three protocols, one dataset, the seed's block sizes
            suite = tmp_path / "seed003.toml"
            suite.write_text(SUITE)
            res = _storbench(nfs, db, "run", "--target", str(smb.share_dir), "--target", nfs.url, "--target", lun.uri,
                             "--destroy-data", lun.uri, "--suite-file", str(suite), "--suite", "seed003", "--size", "16m",
                             "--runtime", "1s", "--repeat", "2", "--label", "seed003", "--json", "--no-report")  # fmt: skip
            bridges = _bridges(nfs, res)
            assert res.returncode == 0, res.stderr[-3000:]
            table = _storbench(nfs, db, "compare", "seed003")
            doc = json.loads(_storbench(nfs, db, "compare", "seed003", "--json").stdout)
        # nothing of the study left on the dataset: storbench removed its test files on every side
        left = sorted(str(f.relative_to(nas)) for f in nas.rglob("*") if f.is_file() and f.name != "lun.img")
    records = json.loads(res.stdout)
    targets = (str(smb.share_dir), nfs.url, lun.uri)
    assert sorted((r["target"], r["workload"]) for r in records) == sorted((t, w) for t in targets for w in WORKLOADS for _ in range(2))

    def checks(target: str, workload: str) -> set[str]:
        return {f["check"] for r in records if r["target"] == target and r["workload"] == workload for f in r["findings"]}

    # the server's ARC: every side's reads can come from the dataset's cache, and storbench found it behind each
    for target in targets:
        assert "server-cache" in checks(target, "nas-read-4k"), target
    # the write acknowledgement, said on each side
    assert "share-write-ack" in checks(nfs.url, "nas-write-4k")
    assert "lun-write-cache" in checks(lun.uri, "nas-write-4k")
    # the network's ceiling was measured and is far above these figures on loopback
    assert not any("share-ceiling" in checks(t, f"nas-read-{bs}") for t in targets for bs in BLOCKS)
    # one compare table: a configuration per protocol, every figure over 2 repetitions, Welch's verdicts
    assert table.returncode == 0, table.stderr
    assert [c["name"] for c in doc["configs"]] == [f"seed003 ({t})" for t in targets]
    for bs in BLOCKS:
        (row,) = [r for r in doc["rows"] if r["workload"] == f"nas-read-{bs}" and r["metric"] == "bw_bytes" and r["direction"] == "read"]
        assert [c["n"] for c in row["cells"].values()] == [2, 2, 2]
        versus = [v for v in row["versus"].values() if v]
        assert len(versus) == 2 and all(v["verdict"] in ("better", "worse", "within noise") and 0 <= v["p_value"] <= 1 for v in versus)
    assert sum(line.startswith("nas-read-8m read") for line in table.stdout.splitlines()) == 1  # its verdict, said once
    assert left == []
    assert bridges == []  # no qemu-nbd bridge and no bridge directory left by the run
