"""Seed 003's kind of study in one command: one run over an NFS export and an iSCSI LUN of one
server (nfs-ganesha and tgtd in one private network namespace, storbench inside it), compared
target by target, each side's write acknowledgement said (UNSTABLE NFS writes, the LUN's cache)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_nfs import _bridges, _storbench

pytestmark = pytest.mark.skipif(
    any(shutil.which(p) is None for p in ("ganesha.nfsd", "rpcbind", "tgtd", "qemu-nbd", "nsenter", "fio")),
    reason="nfs-ganesha, rpcbind, tgt and qemu are installed by tests/setup-system.sh",
)


def test_nfs_and_iscsi_of_one_server_in_one_run_compared(tmp_path: Path):
    from servers import Ganesha, Tgt

    db = tmp_path / "r.sqlite"
    with Ganesha(tmp_path / "nfs") as nfs, Tgt(tmp_path / "tgt", inside=nfs.inside()) as lun:
        res = _storbench(nfs, db, "run", "--target", nfs.url, "--target", lun.uri, "--destroy-data", lun.uri,
                         "--workload", "rnd4k-q32t1-read", "--workload", "rnd4k-q1t1-write", "--size", "32m", "--runtime", "1s",
                         "--repeat", "2", "--label", "seed003", "--json", "--no-report")  # fmt: skip
        assert res.returncode == 0, res.stderr
        records = json.loads(res.stdout)
        by = {(r["target"], r["workload"]): r for r in records if r["repetition"] == 1}
        assert set(by) == {(t, w) for t in (nfs.url, lun.uri) for w in ("rnd4k-q32t1-read", "rnd4k-q1t1-write")}
        # the trap of such a study, said on each side: neither side's writes waited for the disks
        assert "share-write-ack" in {f["check"] for f in by[(nfs.url, "rnd4k-q1t1-write")]["findings"]}
        assert "lun-write-cache" in {f["check"] for f in by[(lun.uri, "rnd4k-q1t1-write")]["findings"]}
        cmp = _storbench(nfs, db, "compare", "seed003", "--json")
        assert cmp.returncode == 0, cmp.stderr
        doc = json.loads(cmp.stdout)
        assert [c["name"] for c in doc["configs"]] == [f"seed003 ({nfs.url})", f"seed003 ({lun.uri})"]
        row = next(x for x in doc["rows"] if x["workload"] == "rnd4k-q32t1-read" and x["metric"] == "iops")
        assert [cell["n"] for cell in row["cells"].values()] == [2, 2]
        versus = [v for v in row["versus"].values() if v]
        assert len(versus) == 1 and versus[0]["verdict"] in ("better", "worse", "within noise") and 0 <= versus[0]["p_value"] <= 1
        assert sorted(p.name for p in nfs.export.iterdir()) == []
        assert _bridges(nfs, res) == []
