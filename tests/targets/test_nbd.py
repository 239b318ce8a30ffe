"""NBD exports as targets, against a real nbdkit on 127.0.0.1 (fio's nbd engine, libnbd).

nbdkit starts in a few milliseconds, so each test has its own server (tests/servers.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import needs_fio
from servers import Nbdkit, when_fio_runs

pytestmark = [
    needs_fio,
    pytest.mark.skipif(shutil.which("nbdkit") is None or shutil.which("nbdinfo") is None, reason="needs nbdkit and libnbd-bin (tests/setup-system.sh)"),
]

RUN = ("--runtime", "500ms", "--no-report")


def one(res) -> dict:
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    return rec


def test_reads_of_a_never_written_export_are_invalid_and_prefill_fixes_them(cli, tmp_path: Path):
    with Nbdkit(tmp_path / "nbd", ["memory", "64M"]) as n:
        cold = one(cli("run", "--target", n.uri, "--workload", "rnd4k-q1t1-read", *RUN, "--json"))
        assert cold["options"]["ioengine"] == "nbd" and cold["options"]["uri"] == n.uri
        assert cold["backend"]["nbd"] == {"uri": n.uri, "size_bytes": 64 * 1024**2, "area_bytes": 64 * 1024**2,
                                          "unwritten_before_bytes": 64 * 1024**2, "problems": []}  # fmt: skip
        (f,) = [f for f in cold["findings"] if f["check"] == "sparse-read"]
        assert f["severity"] == "invalid"
        assert f"the NBD export {n.uri} called 64.0 MiB of the 64.0 MiB read area (100%) holes or zeros" in f["message"]
        assert "--prefill" in f["fix"]

        # --prefill writes, so it needs the same consent as a write workload
        refused = cli("run", "--target", n.uri, "--workload", "rnd4k-q1t1-read", "--prefill", *RUN)
        assert refused.code == 2 and refused.err.count("\n") == 1
        assert f"refusing to write to NBD export '{n.uri}' [destroy-data]: workload prefill writes to it" in refused.err

        warm = one(cli("run", "--target", n.uri, "--destroy-data", n.uri, "--workload", "rnd4k-q1t1-read", "--prefill", *RUN,
                       "--label", "warm", "--json"))  # fmt: skip
        assert warm["backend"]["nbd"]["unwritten_before_bytes"] == 0
        assert [f for f in warm["findings"] if f["check"] == "sparse-read"] == []
        shown = cli("show", "warm")
        assert f"nbd export {n.uri}: server 127.0.0.1:{n.port}, export '', size 64 MiB, read-write" in shown.out
        assert f"--prefill: wrote 64.0 MiB of {n.uri} sequentially" in shown.out


def test_writing_to_an_export_needs_its_exact_name(cli, tmp_path: Path):
    with Nbdkit(tmp_path / "nbd", ["memory", "32M"]) as n:
        res = cli("run", "--target", n.uri, "--destroy-data", n.uri + "/", "--workload", "rnd4k-q1t1-write", *RUN)
        assert res.code == 2 and res.err.count("\n") == 1
        assert "[destroy-data]: workload rnd4k-q1t1-write writes to it" in res.err and "is not spelled as the target" in res.err
        ok = one(cli("run", "--target", n.uri, "--destroy-data", n.uri, "--workload", "rnd4k-q1t1-write", *RUN, "--json"))
        assert ok["jobs"][0]["write"]["io_bytes"] > 0


@pytest.mark.parametrize(
    "target, words",
    [
        ("nbd://127.0.0.1:1", "cannot reach NBD export 'nbd://127.0.0.1:1': nbdinfo: nbd_connect_uri: connect: 127.0.0.1:1: could not connect"),
        ("nbd://127.0.0.1:99999", "has an invalid port"),
        ("nbd+unix:///x", "names no socket"),
        ("nbd://127.0.0.1:10809/a;b", "holds a character a fio job file cannot carry"),
        ("rbdx://pool/image", "rbdx:// is not a kind of target storbench knows"),
    ],
)
def test_bad_nbd_targets_are_one_line(cli, target, words):
    res = cli("run", "--target", target, "--workload", "rnd4k-q1t1-read", *RUN)
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert words in res.err


def test_server_killed_mid_workload_and_a_failing_server(cli, tmp_path: Path):
    with Nbdkit(tmp_path / "nbd", ["memory", "64M"]) as n:
        one(cli("run", "--target", n.uri, "--workload", "seq1m-q1t1-read", *RUN, "--label", "before", "--json"))
        watcher = when_fio_runs(n.kill_server, 1.0)
        started = time.monotonic()
        res = cli("run", "--target", n.uri, "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read", "--runtime", "4", "--no-report")
        watcher.join()
        elapsed = time.monotonic() - started
    assert res.code == 1
    assert elapsed < 60  # bounded: nothing hangs on a server that is gone
    (err,) = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
    assert f"2 of 2 workload(s) failed; first: workload 'rnd4k-q1t1-read' on {n.uri}" in err
    assert f"NBD server {n.uri} not answering after the run" in err
    assert "FAILED seq1m-q1t1-read" in res.err  # the next workload still ran (and failed on its own)
    assert subprocess.run(["pgrep", "-f", f"storbench-fio-{os.getpid()}-"], capture_output=True).returncode == 1  # no fio left
    assert json.loads(cli("list", "--json").out)[-1]["label"] == "before"  # what finished before stays stored

    with Nbdkit(tmp_path / "err", ["memory", "64M"], filters=["error"], params=["error-rate=10%", "error=EIO"]) as bad:
        res = cli("run", "--target", bad.uri, "--workload", "rnd4k-q1t1-read", "--runtime", "2", "--no-report")
    assert res.code == 1
    (err,) = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
    assert f"workload 'rnd4k-q1t1-read' on {bad.uri}: io_u error" in err and "Input/output error" in err


@pytest.mark.root
@pytest.mark.skipif(shutil.which("qemu-nbd") is None, reason="needs qemu-utils")
def test_matrix_fresh_qcow2_image_reads_nothing_until_prefilled(cli, tmp_path: Path):
    setups = tmp_path / "img.toml"
    setups.write_text('[setup.qcow2]\nmkfs = "ext4"\nimage = { format = "qcow2", size = "32m" }\n')
    common = ("--setups", str(setups), "--workload", "rnd4k-q1t1-read", "--runtime", "1", "--no-report", "--json")
    cold = cli("matrix", "--loop-file", str(tmp_path / "a.img"), "--loop-size", "128m", *common, "--label", "cold")
    assert cold.code == 0, cold.err
    (rec,) = json.loads(cold.out)["results"]
    assert rec["backend"]["nbd"]["unwritten_before_bytes"] == 32 * 1024**2
    assert [f["severity"] for f in rec["findings"] if f["check"] == "sparse-read"] == ["invalid"]
    warm = cli("matrix", "--loop-file", str(tmp_path / "b.img"), "--loop-size", "128m", *common, "--prefill", "--label", "warm")
    assert warm.code == 0, warm.err
    (rec,) = json.loads(warm.out)["results"]
    assert rec["backend"]["nbd"]["unwritten_before_bytes"] == 0
    assert [f for f in rec["findings"] if f["check"] == "sparse-read"] == []
