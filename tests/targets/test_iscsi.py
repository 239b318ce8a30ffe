"""iSCSI LUNs for real: tgt's tgtd on loopback (tests/servers.py), reached through storbench's
qemu-nbd bridge and fio's nbd engine; the write guard with what the LUN holds; nothing left."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from storbench.targets.iscsi import BRIDGE_NOTE, bridge_dir

pytestmark = pytest.mark.skipif(
    any(shutil.which(p) is None for p in ("tgtd", "tgtadm", "qemu-nbd", "qemu-img", "fio")),
    reason="tgt, qemu-utils and qemu-block-extra are installed by tests/setup-system.sh",
)


def _leftovers(uri: str) -> list[str]:
    """This test's qemu-nbd bridge still running (its server's port is this test's own), and its
    bridge directory (storbench ran in this process) left in the temporary directory."""
    running = subprocess.run(["pgrep", "-af", "qemu-nbd"], capture_output=True, text=True).stdout.splitlines()
    return [line for line in running if uri in line] + ([bridge_dir(uri)] if os.path.exists(bridge_dir(uri)) else [])


def test_reads_run_writes_need_the_uri_named_and_say_what_the_lun_holds(cli, tmp_path: Path):
    from servers import Tgt

    image = tmp_path / "ext4.img"
    with open(image, "wb") as fh:
        fh.truncate(64 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with Tgt(tmp_path / "tgt", content=image.read_bytes()) as tgt:
        refused = cli("run", "--workload", "rnd4k-q1t1-write", "--target", tgt.uri, "--runtime", "1s", "--no-report")
        assert refused.code != 0 and "Traceback" not in refused.err
        [line] = [ln for ln in refused.err.splitlines() if ln.startswith("storbench: ")]
        assert f"refusing to write to iSCSI LUN '{tgt.uri}' [destroy-data]" in line and "(ext4)" in line
        assert f"pass --destroy-data {tgt.uri}" in line

        res = cli("run", "--workload", "rnd4k-q32t1-read", "--workload", "rnd4k-q1t1-write", "--target", tgt.uri,
                  "--destroy-data", tgt.uri, "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.code == 0, res.err
        records = json.loads(res.out)
        assert [(r["workload"], r["target"]) for r in records] == [("rnd4k-q32t1-read", tgt.uri), ("rnd4k-q1t1-write", tgt.uri)]
        assert records[0]["jobs"][0]["read"]["io_bytes"] > 0 and records[1]["jobs"][0]["write"]["io_bytes"] > 0
        assert _leftovers(tgt.uri) == []  # the bridge stopped with the run

        shown = cli("show", "last")
        assert BRIDGE_NOTE.split(":")[0] in " ".join(shown.out.split())
        # the tgtd beside storbench asked for the LUN's backing store, and what holds it described
        disk = tmp_path / "tgt" / "disk.img"
        assert f"backing_store=rdwr:{disk}" in shown.out, shown.out
        assert f"iscsi server (this machine): {disk} is on " in shown.out
        # fio wrote to the LUN: the ext4 signature at its start is gone (a 4 KiB write at offset 0 or not,
        # the LUN's bytes changed where fio wrote), and the LUN's size is the backing file's
        assert image.read_bytes() != (tmp_path / "tgt" / "disk.img").read_bytes()
        info = json.loads(subprocess.run(["qemu-img", "info", "--output=json", "-f", "raw", tgt.uri], capture_output=True,
                                         text=True, timeout=30, check=True).stdout)  # fmt: skip
        assert info["virtual-size"] == 64 << 20


def test_fios_own_libiscsi_engine_reaches_the_lun_without_a_bridge(cli, tmp_path: Path):
    """``?client=fio``: fio's libiscsi engine (built by make install from this fio's Debian source)
    logs in itself; beside it in the same run the bridged target, each its own configuration."""
    from storbench.targets.base import external_engine
    from storbench.targets.iscsi import ENGINE_NOTE

    from servers import Tgt

    engine = external_engine("libiscsi")
    assert engine is not None, "make install builds fio's libiscsi engine (tools/fio-engines.sh)"
    with Tgt(tmp_path / "tgt") as tgt:
        own = tgt.uri + "?client=fio"
        res = cli("run", "--workload", "rnd4k-q32t1-read", "--workload", "rnd4k-q1t1-write", "--target", own, "--target", tgt.uri,
                  "--destroy-data", own, "--destroy-data", tgt.uri, "--runtime", "1s", "--json", "--no-report")  # fmt: skip
        assert res.code == 0, res.err
        records = json.loads(res.out)
        assert sorted((r["target"], r["workload"]) for r in records) == sorted(
            (t, w) for t in (own, tgt.uri) for w in ("rnd4k-q32t1-read", "rnd4k-q1t1-write")
        )
        for r in records:
            if r["target"] == own:
                assert r["options"]["ioengine"] == f"external:{engine}"
                assert r["options"]["filename"] == tgt.uri.replace(":", "\\:")
            else:
                assert r["options"]["ioengine"] == "nbd"
                bridge = r["backend"]["bridge"]  # the bridge's CPU around the run: what bridge-cpu-bound reads
                assert bridge["pid"] > 0 and bridge["wall_s"] > 0 and bridge["cpu_s"] >= 0
            direction = "read" if r["workload"].endswith("read") else "write"
            assert r["jobs"][0][direction]["io_bytes"] > 0 and r["jobs"][0]["error"] == 0
        assert _leftovers(tgt.uri) == [] and _leftovers(own) == []
        shown = " ".join(cli("show", "last").out.split())
        assert ENGINE_NOTE.split(":")[0] in shown and "client=fio libiscsi engine" in shown and "client=qemu-nbd bridge" in shown
        # fio's engine wrote to the LUN: its backing file is no longer all zeros
        assert (tmp_path / "tgt" / "disk.img").read_bytes().strip(b"\0") != b""


def test_fios_own_engine_not_built_is_one_line(cli, tmp_path: Path, monkeypatch):
    from storbench.targets import iscsi

    monkeypatch.setattr(iscsi, "external_engine", lambda name: None)
    res = cli("run", "--workload", "rnd4k-q32t1-read", "--target", "iscsi://127.0.0.1:9/iqn.2026-12.lab.storbench:disk1/1?client=fio",
              "--runtime", "1s", "--no-report")  # fmt: skip
    assert res.code != 0 and "Traceback" not in res.err
    [line] = [ln for ln in res.err.splitlines() if ln.startswith("storbench: ")]
    assert "asks for fio's own libiscsi engine, which is not built here (make install builds it" in line


def test_an_unreachable_lun_is_one_line(cli, tmp_path: Path):
    from servers import Tgt, free_port

    with Tgt(tmp_path / "tgt") as tgt:
        wrong_lun = tgt.uri.rsplit("/", 1)[0] + "/7"
        for uri in (f"iscsi://127.0.0.1:{free_port()}/{Tgt.IQN}/1", wrong_lun):
            res = cli("run", "--workload", "rnd4k-q32t1-read", "--target", uri, "--runtime", "1s", "--no-report")
            assert res.code != 0 and "Traceback" not in res.err
            [line] = [ln for ln in res.err.splitlines() if ln.startswith("storbench: ")]
            assert f"cannot reach iSCSI LUN '{uri}': " in line, line
            assert _leftovers(uri) == []


@pytest.mark.parametrize("write_cache", [True, False], ids=["cache-on", "cache-off"])
def test_the_luns_write_cache_is_read_and_judged(cli, tmp_path: Path, write_cache: bool):
    """tgt's write cache on (its default) or off: storbench's own MODE SENSE reads it, the
    description keeps it, and unsynced writes on a caching LUN get the lun-write-cache finding."""
    from storbench.storage.scsi import iscsi_write_cache

    from servers import Tgt

    with Tgt(tmp_path / "tgt", write_cache=write_cache) as tgt:
        page, why = iscsi_write_cache(f"127.0.0.1:{tgt.port}", Tgt.IQN, 1)
        assert why is None and page is not None and page.write_cache is write_cache
        res = cli("run", "--workload", "rnd4k-q1t1-write", "--target", tgt.uri, "--destroy-data", tgt.uri, "--runtime", "1s",
                  "--json", "--no-report")  # fmt: skip
        assert res.code == 0, res.err
        [record] = json.loads(res.out)
        checks = {f["check"] for f in record["findings"]}
        assert ("lun-write-cache" in checks) is write_cache
        shown = cli("show", "last")
        assert f"write_cache={'on' if write_cache else 'off'}" in shown.out  # kept in the stored description
        assert _leftovers(tgt.uri) == []


def test_a_write_cache_that_cannot_be_read_says_why():
    from storbench.storage.scsi import iscsi_write_cache

    from servers import free_port

    page, why = iscsi_write_cache(f"127.0.0.1:{free_port()}", "iqn.2026-12.lab.storbench:none", 1)
    assert page is None and why is not None and why.startswith("login failed")


def test_a_curve_on_a_lun_goes_through_the_bridge_step_by_step(cli, tmp_path: Path):
    """storbench curve on an iSCSI LUN: the bridge is started for the curve (it was not: every step
    failed to reach its socket), each load step stored, the knee found or said, nothing left."""
    from servers import Tgt

    with Tgt(tmp_path / "tgt") as tgt:
        res = cli("curve", "--target", tgt.uri, "--load", "iodepth=1,4,16", "--size", "16m", "--runtime", "1s", "--json", "--no-report")
        assert res.code == 0, res.err
        data = json.loads(res.out)
        names = [x["workload"] for x in data["results"]]
        assert len(names) == 3 and all(n.startswith("curve-randread-4k@") and "iodepth=" in n for n in names), names
        assert all(x["jobs"][0]["read"]["io_bytes"] > 0 for x in data["results"])
        (curve,) = data["curves"]
        assert len(curve["points"]) == 3 and all(p["iops"] > 0 for p in curve["points"])
        assert _leftovers(tgt.uri) == []
