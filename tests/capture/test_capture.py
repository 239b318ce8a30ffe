"""storbench capture on real loop devices through the kernel's tracefs block events, and the
captured traces replayed onto real devices: counts checked against the kernel's own counters,
the machine's tracing left as it was, a stop keeping what was read, the guard, the drift on a slow
export.  Root (loop devices, mounts, tracefs); one module: one capture at a time on a machine."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import loop_mount, needs_fio, needs_root
from servers import Nbdkit

pytestmark = [needs_root, needs_fio]

TRACING = Path("/sys/kernel/tracing")
STORBENCH = Path(sys.executable).with_name("storbench")


def _tracing_state() -> tuple:
    """What the machine's tracing looks like: the tracefs mounts, and (where mounted) the block events' state."""
    mounts = tuple(line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if line.split()[2] == "tracefs")
    block = TRACING / "events" / "block"
    if not (block / "block_rq_issue").exists():
        return mounts, None
    return mounts, tuple((block / e / f).read_text().strip() for e in ("block_rq_issue", "block_rq_complete") for f in ("enable", "filter"))


def _capture(cli, *args: str) -> dict:
    res = cli("capture", "--json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_a_capture_of_an_application_matches_the_kernels_counters(cli, tmp_path: Path):
    before = _tracing_state()
    with loop_mount(tmp_path, "ext4", 64) as (mnt, dev, _image):
        got = _capture(cli, "--device", dev, "--label", "dbench", "--seconds", "30", "--",
                       "sh", "-c", f"dbench -D {mnt} -t 2 2 >/dev/null 2>&1; sync")  # fmt: skip
    assert got["stopped_by"] == "command" and got["command_status"] == 0
    meta, fig = got["meta"], got["figures"]
    kernel, seen, lost = meta["completed_kernel"], meta["completed_seen"], meta["lost_events"]
    assert kernel["write"] > 100  # dbench wrote, ext4 journalled
    for direction in ("read", "write"):
        assert abs(seen.get(direction, 0) - kernel[direction]) <= lost, (direction, seen, kernel, lost)
    assert fig["directions"]["write"]["ops"] >= kernel["write"] - lost - seen.get("flush", 0) - 5
    assert meta["source"] == "tracefs" and meta["device"] == dev and meta["command"].startswith("sh -c dbench")
    assert meta["logical_block_bytes"] == 512 and meta["device_bytes"] == 64 * 1024 * 1024
    assert meta["storage"]["target_kind"] == "block" and meta["storage"]["devices"][0]["type"] == "loop"
    assert fig["directions"]["write"]["lat_ns"]["50.0"] > 0 and fig["depth"]["max"] >= 1
    assert got["stored_bytes"] / fig["events"] <= 16
    assert _tracing_state() == before  # events off, filters cleared, tracefs as it was (mounted or not)

    # the stored trace shows as captured, and replays onto another device: reads only need no consent
    shown = cli("trace", "show", "dbench")
    assert f"write {seen['write']:,}/{kernel['write']:,}" in shown.out and f"lost events: {lost}" in shown.out
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    with loop_mount(tmp_path / "b", "ext4", 64) as (_mnt_b, dev_b, _):
        refused = cli("run", "--replay", "dbench", "--target", dev_b, "--repeat", "1", "--no-report")
        assert refused.code == 2 and refused.err.count("\n") == 1 and "destroy-data" in refused.err, refused.err
        ok = cli("run", "--replay", "dbench", "--replay-mode", "fast", "--reads-only", "--target", dev_b, "--repeat", "1", "--no-report", "--json")
        assert ok.code == 0, ok.err
        (rec,) = json.loads(ok.out)
        assert rec["options"]["replay_redirect"] == dev_b
        assert rec["jobs"][0]["read"]["total_ios"] == fig["directions"]["read"]["ops"]
        assert rec["jobs"][0].get("write", {}).get("total_ios", 0) == 0
    # the source device itself is never a replay target
    with loop_mount(tmp_path / "c", "ext4", 64) as (mnt_c, dev_c, _):
        got = _capture(cli, "--device", dev_c, "--label", "src", "--", "dd", "if=/dev/zero", f"of={mnt_c}/f", "bs=4k", "count=10", "oflag=direct")
        assert got["figures"]["directions"]["write"]["ops"] >= 10
        for target in (dev_c, str(mnt_c)):
            res = cli("run", "--replay", "src", "--target", target, "--destroy-data", dev_c, "--dry-run")
            assert res.code == 2 and res.err.count("\n") == 1
            assert "the device trace 'src' was captured from; a replay never runs on its source" in res.err


def test_an_idle_device_stores_nothing_and_says_so(cli, tmp_path: Path):
    """A loop device nothing uses (no filesystem: nothing writes back behind the test's back),
    once udev has read it."""
    image = tmp_path / "idle.img"
    image.write_bytes(b"")
    os.truncate(image, 32 * 1024 * 1024)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        if shutil.which("udevadm"):
            subprocess.run(["udevadm", "settle", "--timeout=10"], capture_output=True)
        time.sleep(0.5)
        res = cli("capture", "--device", dev, "--label", "idle", "--seconds", "0.3")
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    assert res.code == 2 and "completed no request while it was traced (time ended it): nothing stored" in res.err
    assert json.loads(cli("trace", "list", "--json").out) == []


def test_a_store_on_the_traced_device_and_bad_devices_are_refused(cli, tmp_path: Path):
    with loop_mount(tmp_path, "ext4", 32) as (mnt, dev, _):
        res = cli("--db", str(mnt / "r.sqlite"), "capture", "--dir", str(mnt), "--label", "x", "--seconds", "1")
        assert res.code == 2 and res.err.count("\n") == 1
        assert f"is on the traced device {dev}: the capture would record its own writes" in res.err
        assert not (mnt / "r.sqlite").exists()
    res = cli("capture", "--device", str(tmp_path), "--label", "x", "--seconds", "1")
    assert res.code == 2 and "is not a block device" in res.err
    res = cli("capture", "--dir", "/dev/shm", "--label", "x", "--seconds", "1")
    assert res.code == 2 and "which is not a block device the kernel traces" in res.err


def test_ctrl_c_keeps_what_was_captured(tmp_path: Path):
    db = tmp_path / "r.sqlite"
    with loop_mount(tmp_path, "ext4", 64) as (mnt, dev, _):
        writer = [shutil.which("fio") or "fio", "--name=w", f"--filename={mnt}/f", "--size=16m", "--rw=randwrite", "--bs=4k",
                  "--direct=1", "--time_based", "--runtime=20", "--output=/dev/null"]  # fmt: skip
        proc = subprocess.Popen([str(STORBENCH), "--db", str(db), "capture", "--device", dev, "--label", "cut", "--seconds", "60",
                                 "--", *writer], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        # Ctrl-C once the writer has written through the traced device (a busy machine starts fio late)
        name = Path(dev).name
        first = int(Path(f"/sys/block/{name}/stat").read_text().split()[4])
        deadline = time.monotonic() + 60
        while int(Path(f"/sys/block/{name}/stat").read_text().split()[4]) < first + 50 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "trace 1 'cut':" in out and "note: stopped by Ctrl-C after" in out
    listed = subprocess.run([str(STORBENCH), "--db", str(db), "trace", "list", "--json"], capture_output=True, text=True, check=True)
    (trace,) = json.loads(listed.stdout)
    assert trace["events"] > 0
    # the command the capture ran was stopped with it
    left = [p for p in Path("/proc").glob("[0-9]*") if f"--filename={mnt}/f".encode() in _cmdline(p)]
    assert left == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.skipif(shutil.which("nbdkit") is None, reason="needs nbdkit (tests/setup-system.sh)")
def test_a_timed_replay_on_a_slow_export_falls_behind(cli, tmp_path: Path):
    """200 requests of 4 KiB, one each 2 ms (tests/data/trace), onto an NBD export whose server waits
    20 ms for every read and write: it cannot keep a 2 ms pace at depth 1, whatever the machine."""
    syn = Path(__file__).parent.parent / "data" / "trace" / "synthetic-500iops.iolog"
    assert cli("trace", "import", str(syn), "--label", "syn").code == 0
    with Nbdkit(tmp_path / "nbd", ["memory", "64M"], filters=["delay"], params=["rdelay=20ms", "wdelay=20ms"]) as n:
        res = cli("run", "--replay", "syn", "--replay-mode", "timed", "--target", n.uri, "--destroy-data", n.uri,
                  "--repeat", "1", "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    (drift,) = [f for f in rec["findings"] if f["check"] == "replay-drift"]
    assert drift["severity"] == "warning" and "for a trace of 0.40 s" in drift["message"]
    assert rec["jobs"][0]["read"]["total_ios"] == 100 and rec["jobs"][0]["write"]["total_ios"] == 100
    assert rec["jobs"][0]["read"]["lat_ns"]["mean"] >= 20_000_000  # the server's 20 ms, measured by fio
