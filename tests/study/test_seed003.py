"""Seed 003's study for real, in one command: one zfs-fuse dataset shared three ways from this
machine -- SMB (smbd, reached through the smbnetfs FUSE client), NFS (nfs-ganesha) and iSCSI (tgtd,
a LUN whose backing file is on the dataset) -- with the network's ceiling measured first (iperf3,
storbench net), the seed's block sizes (4k, 128k, 8M) swept over a read and a write, and one
compare table with verdicts; each side's trap said: the server's ARC answering reads
(server-cache, from the dataset found behind each export) and the write acknowledgement
(share-write-ack for SMB's client and NFS's UNSTABLE writes, lun-write-cache for the LUN).

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

WORKLOADS = ("--workload", "seq-read", "--workload", "rand-write-1")
BLOCKS = ("4k", "128k", "8m")


def test_seed003_smb_nfs_and_iscsi_of_one_zfs_dataset_in_one_command(zfs, tmp_path: Path):
    from test_nfs import _storbench

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
            res = _storbench(nfs, db, "run", "--target", str(smb.share_dir), "--target", nfs.url, "--target", lun.uri,
                             "--destroy-data", lun.uri, *WORKLOADS, "--sweep", "bs=" + ",".join(BLOCKS), "--size", "16m",
                             "--runtime", "1s", "--repeat", "2", "--label", "seed003", "--json", "--no-report")  # fmt: skip
            assert res.returncode == 0, res.stderr[-3000:]
            table = _storbench(nfs, db, "compare", "seed003")
            doc = json.loads(_storbench(nfs, db, "compare", "seed003", "--json").stdout)
        # nothing of the study left on the dataset: storbench removed its test files on every side
        left = sorted(str(f.relative_to(nas)) for f in nas.rglob("*") if f.is_file() and f.name != "lun.img")
    records = json.loads(res.stdout)
    targets = (str(smb.share_dir), nfs.url, lun.uri)
    assert {(r["target"], r["workload"]) for r in records} == {(t, f"{w}@bs={bs}") for t in targets for w in ("seq-read", "rand-write-1") for bs in BLOCKS}

    def checks(target: str, workload: str) -> set[str]:
        return {f["check"] for r in records if r["target"] == target and r["workload"] == workload for f in r["findings"]}

    # the server's ARC: every side's reads can come from the dataset's cache, and storbench found it behind each
    for target in targets:
        assert "server-cache" in checks(target, "seq-read@bs=4k"), target
    # the write acknowledgement, said on each side
    assert "share-write-ack" in checks(nfs.url, "rand-write-1@bs=4k")
    assert "lun-write-cache" in checks(lun.uri, "rand-write-1@bs=4k")
    # the network's ceiling was measured and is far above these figures on loopback
    assert not any("share-ceiling" in checks(t, w) for t in targets for w in (f"seq-read@bs={bs}" for bs in BLOCKS))
    # one compare table: a configuration per protocol, every figure over 2 repetitions, Welch's verdicts
    assert table.returncode == 0, table.stderr
    assert [c["name"] for c in doc["configs"]] == [f"seed003 ({t})" for t in targets]
    for bs in BLOCKS:
        (row,) = [r for r in doc["rows"] if r["workload"] == f"seq-read@bs={bs}" and r["metric"] == "bw_bytes" and r["direction"] == "read"]
        assert [c["n"] for c in row["cells"].values()] == [2, 2, 2]
        assert all(v["verdict"] in ("better", "worse", "within noise") for v in row["versus"].values() if v)
    assert sum(line.startswith("seq-read@bs=8m read") for line in table.stdout.splitlines()) == 1  # its verdict, said once
    assert left == []
