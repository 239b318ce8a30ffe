"""A GlusterFS volume as a target, through fio's gfapi engine, against a real one-brick glusterd on
127.0.0.1 (tests/servers.py).  A gfapi job takes about 10 s more than its runtime here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import needs_fio, needs_root
from servers import Gluster, when_fio_runs

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(shutil.which("glusterd") is None or shutil.which("gluster") is None, reason="needs glusterfs-server and glusterfs-cli"),
]


def test_gluster_volume_is_measured_described_and_left_clean(cli, tmp_path: Path):
    engine_log_existed = os.path.exists("/tmp/fio_gfapi.log")
    with Gluster(tmp_path / "gl") as g:
        res = cli("run", "--target", g.uri, "--workload", "rnd4k-q1t1-write", "--workload", "rnd4k-q1t1-read", "--size", "16m",
                  "--runtime", "500ms", "--no-report", "--label", "gl", "--json")  # fmt: skip
        assert res.code == 0, res.err
        recs = json.loads(res.out)
        assert [r["options"]["ioengine"] for r in recs] == ["gfapi", "gfapi"]
        assert recs[0]["options"]["volume"] == "gv0" and recs[0]["options"]["brick"] == "127.0.0.1"
        assert recs[0]["jobs"][0]["write"]["io_bytes"] > 0 and recs[1]["jobs"][0]["read"]["io_bytes"] > 0
        shown = cli("show", "gl")
        assert f"glusterfs export {g.uri}: server 127.0.0.1, export 'gv0'" in shown.out and "type=Distribute" in shown.out
        assert os.listdir(g.brick) == [".glusterfs"] or ".glusterfs" in os.listdir(g.brick)
        assert "storbench.testfile" not in os.listdir(g.brick)  # removed through gfapi after the run
        bad = cli("run", "--target", "gluster://127.0.0.1/nope", "--workload", "rnd4k-q1t1-read", "--no-report")
        assert bad.code == 2 and bad.err == "storbench: error: GlusterFS volume 'nope' on 127.0.0.1: Volume does not exist\n"

        # the brick's glusterfsd killed mid-workload: bounded, one line naming the volume, the next workload runs
        watcher = when_fio_runs(g.kill_brick, 7.0)  # libgfapi takes about 5 s to start
        started = time.monotonic()
        res = cli("run", "--target", g.uri, "--workload", "rnd4k-q1t1-write", "--workload", "rnd4k-q1t1-read", "--size", "16m",
                  "--runtime", "6", "--no-report")  # fmt: skip
        watcher.join()
        assert res.code == 1, (res.out, res.err)
        assert time.monotonic() - started < 90
        (err,) = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
        assert f"workload 'rnd4k-q1t1-write' on {g.uri}" in err, err
        assert "Transport endpoint is not connected" in err or "Input/output error" in err, err
        assert "rnd4k-q1t1-read on" in res.err  # the next workload ran
        assert subprocess.run(["pgrep", "-f", f"storbench-fio-{os.getpid()}-"], capture_output=True).returncode == 1
        assert [r["label"] for r in json.loads(cli("list", "--json").out) if r["status"] == "complete"] == ["gl"]
    assert os.path.exists("/tmp/fio_gfapi.log") == engine_log_existed  # the engine's log goes when storbench made it
    stopped = cli("run", "--target", "gluster://127.0.0.1/gv0", "--workload", "rnd4k-q1t1-read", "--no-report")
    assert stopped.code == 2 and "cannot reach GlusterFS on 127.0.0.1" in stopped.err and stopped.err.count("\n") == 1
