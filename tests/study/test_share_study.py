"""The share study end to end: one local store served three ways -- a Samba share through the
smbnetfs FUSE client, an sshfs mount over a private sshd, an NBD export by nbdkit -- all on
127.0.0.1; the network ceiling measured with iperf3 (storbench net); the share suite swept over
4k and 8m blocks on each; and compare/report naming the leader per block size."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from test_net import iperf3_server  # noqa: F401 - fixture

from conftest import needs_fio, needs_root
from servers import Nbdkit, Samba, Sshfs

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(
        any(shutil.which(p) is None for p in ("smbd", "smbnetfs", "sshfs", "nbdkit", "nbdinfo", "iperf3")),
        reason="needs samba, smbnetfs, sshfs, nbdkit, libnbd-bin and iperf3 (tests/setup-system.sh)",
    ),
]

#: two of the share suite's one-job workloads, a read and a write (its 16-job ones take minutes
#: through two FUSE clients on 2 cores; each workload here costs about 2 s through smbnetfs)
SHARE = ("--workload", "seq-read", "--workload", "rand-write-1")
BLOCKS = ("4k", "8m")
SWEEP = (*SHARE, "--sweep", "bs=" + ",".join(BLOCKS), "--size", "8m", "--runtime", "200ms", "--no-report")


def test_share_study_smb_sshfs_nbd(cli, tmp_path: Path, iperf3_server):
    port, _proc, _pid = iperf3_server
    net = cli("net", "127.0.0.1", "--port", str(port), "--time", "1", "--parallel", "1")
    assert net.code == 0, net.err
    store = tmp_path / "store"
    store.mkdir()
    image = store / "nbd.img"
    with open(image, "wb") as fh:
        fh.truncate(8 * 1024**2)
    with Samba(tmp_path / "smb", share_path=store / "smb") as smb, Sshfs(tmp_path / "ssh") as ssh, \
            Nbdkit(tmp_path / "nbd", ["file", str(image)]) as nbd:  # fmt: skip
        runs = {
            "smb": ("--target", str(smb.share_dir)),
            "sshfs": ("--target", str(ssh.mnt)),
            "nbd": ("--target", nbd.uri, "--destroy-data", nbd.uri, "--prefill"),
        }
        for name, where in runs.items():
            res = cli("run", *where, *SWEEP, "--label", f"share/{name}")
            assert res.code == 0, (name, res.err[-2000:])
        smb_show = cli("show", "share/smb").out
        ssh_show = cli("show", "share/sshfs").out
        nbd_show = cli("show", "share/nbd").out
    # SMB through smbnetfs cannot grow a file with ftruncate: storbench laid the test file out itself
    assert "fuse.smbnetfs: server 127.0.0.1, share bench, protocol smb (smbnetfs client)" in smb_show
    assert "refuses to grow a file with ftruncate" in smb_show and "storbench wrote the 8.0 MiB test file" in smb_show
    assert "writes acknowledged by the client: sshfs without -o sync_write" in ssh_show
    assert "[share-write-ack]" in ssh_show  # sshfs answers writes before the server has them
    assert f"nbd export {nbd.uri}: server 127.0.0.1:{nbd.port}" in nbd_show and "--prefill: wrote 8.0 MiB" in nbd_show

    cmp = cli("compare", "--label-prefix", "share/", "--json")
    assert cmp.code == 0, cmp.err
    doc = json.loads(cmp.out)
    names = {c["key"]: c["name"] for c in doc["configs"]}
    assert sorted(names.values()) == ["share/nbd", "share/smb", "share/sshfs"]
    workloads = {r["workload"] for r in doc["rows"]}
    assert workloads == {f"{w}@bs={bs}" for w in ("seq-read", "rand-write-1") for bs in BLOCKS}
    for bs in BLOCKS:
        (row,) = [r for r in doc["rows"] if r["workload"] == f"seq-read@bs={bs}" and r["metric"] == "bw_bytes" and r["direction"] == "read"]
        means = {k: c["mean"] for k, c in row["cells"].items() if c}
        assert len(means) == 3 and row["leader"] == max(means, key=means.get)
    # the loopback network is far faster than these shares: no result is at or above its ceiling
    assert "share-ceiling" not in {f["check"] for r in json.loads(cli("show", "share/smb", "--json").out) for f in r["findings"]}

    report = cli("report", "--label-prefix", "share/", "-o", str(tmp_path / "share.html"))
    assert report.code == 0, report.err
    html = (tmp_path / "share.html").read_text()
    assert "seq-read@bs=8m" in html and "share/nbd" in html and "fuse.smbnetfs" in html


def test_share_faster_than_a_stored_ceiling_is_flagged(cli, tmp_path: Path):
    """A real sshfs figure against a (slow) ceiling stored for its server: the client cache answered."""
    assert cli("list").code == 0  # makes the store
    con = sqlite3.connect(cli.db)
    con.execute(
        "insert into net_ceilings (server, created_at, streams, direction, bits_per_second, raw_json) values "
        "('127.0.0.1', '2026-12-01T00:00:00Z', 1, 'to-server', 8000000.0, '{}'), "
        "('127.0.0.1', '2026-12-01T00:00:00Z', 1, 'from-server', 8000000.0, '{}')"
    )  # 8 Mbit/s: what a slow link would carry
    con.commit()
    con.close()
    with Sshfs(tmp_path / "ssh") as ssh:
        res = cli("run", "--target", str(ssh.mnt), "--workload", "seq1m-q1t1-read", "--size", "16m", "--runtime", "1", "--no-report", "--json")
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    (f,) = [f for f in rec["findings"] if f["check"] == "share-ceiling"]
    assert f["severity"] == "invalid" and "on fuse.sshfs is" in f["message"] and "of the network ceiling 8 Mbit/s" in f["message"]
