"""Trustworthy numbers end to end: repetitions with statistics, storage and device activity of real runs."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from scipy import stats as sps

from storbench.store import Store

from conftest import loop_mount, needs_fio, needs_root

pytestmark = needs_fio
SMALL = ("--size", "16m", "--runtime", "1")


def test_repeat_three_statistics_match_independent_computation(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), *SMALL, "--repeat", "3", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert [r["repetition"] for r in records] == [0, 1, 2]
    iops = np.array([r["jobs"][0]["read"]["iops"] for r in records])
    st = records[-1]["stats"]["read"]["iops"]
    assert all(r["stats"] == records[0]["stats"] for r in records)
    assert st["n"] == 3
    assert st["mean"] == pytest.approx(iops.mean(), rel=1e-12)
    assert st["median"] == pytest.approx(np.median(iops), rel=1e-12)
    assert st["stddev"] == pytest.approx(iops.std(ddof=1), rel=1e-9)
    assert st["stderr"] == pytest.approx(sps.sem(iops), rel=1e-9)
    lo, hi = sps.t.interval(0.95, 2, loc=iops.mean(), scale=sps.sem(iops))
    # as reported: the t interval, its lower end bounded at 0 (and said) where three runs this spread reach below
    assert st["ci95"] == pytest.approx([max(lo, 0.0), hi], rel=1e-9) and st.get("ci95_clipped", False) == (lo < 0)
    assert st["cv"] == pytest.approx(iops.std(ddof=1) / iops.mean(), rel=1e-9)
    # the table shows mean ± sd and the run count
    shown = cli("show", "last")
    assert "± " in shown.out and "statistics over repetitions:" in shown.out and "95% CI" in shown.out


def test_until_rse_stops_when_settled_or_says_it_gave_up(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli(
        "run", "--workload", "rnd4k-q1t1-read", "--target", str(target), *SMALL,
        "--until-rse", "2", "--min-runs", "2", "--max-runs", "4", "--json",
    )
    assert res.code == 0, res.err
    records = json.loads(res.out)
    n = len(records)
    assert 2 <= n <= 4
    iops = np.array([r["jobs"][0]["read"]["iops"] for r in records])
    rse_pct = sps.sem(iops) / iops.mean() * 100
    assert records[-1]["stats"]["read"]["iops"]["n"] == n
    gave_up = [f for f in records[-1]["findings"] if f["check"] == "repeat-not-converged"]
    if n < 4:
        assert rse_pct <= 2.0 and not gave_up
    else:
        # either it settled exactly at the 4th run or it says it gave up
        assert rse_pct <= 2.0 or (gave_up and "gave up" in gave_up[0]["message"])
    # and the runs before the last were not yet settled (otherwise it would have stopped)
    if n > 2:
        first = iops[: n - 1]
        assert sps.sem(first) / first.mean() * 100 > 2.0


def test_repeat_and_until_rse_together_refused(cli):
    res = cli("run", "--repeat", "2", "--until-rse", "2", "--dry-run")
    assert res.code == 2 and "not both" in res.err


@needs_root
def test_storage_and_device_activity_of_a_loop_mounted_filesystem(cli, tmp_path):
    """The chain shows the loop device and the disk under it; the loop device's counted
    bytes agree with what fio wrote within 10 %."""
    with loop_mount(tmp_path, "ext4", 96) as (mnt, dev, image):
        suite = tmp_path / "w.toml"
        suite.write_text(
            '[workload.seqwrite]\ndescription = "1 MiB direct writes"\nheadline = "bw"\n'
            'fio = { rw = "write", bs = "1m", direct = 1, ioengine = "libaio", iodepth = 4, size = "48m", end_fsync = 1 }\n'
        )
        res = cli("run", "--suite-file", str(suite), "--workload", "seqwrite", "--target", str(mnt), "--json")
        assert res.code == 0, res.err
        with Store.open(f"sqlite:///{cli.db}") as store:
            [rec] = store.results(1)
    loop = os.path.basename(dev)
    storage = rec.storage
    assert storage.filesystem.fstype == "ext4"
    knames = [d.kname for d in storage.devices]
    assert knames[0] == loop
    loopdev = storage.devices[0]
    assert loopdev.type == "loop" and loopdev.loop_backing_file == str(image) and loopdev.loop_dio is True
    assert len(knames) >= 2  # the device holding the image is in the chain too
    written = rec.fio.jobs[0].directions["write"].io_bytes
    assert written == 48 * 1024 * 1024
    totals = rec.activity.totals[loop]
    assert totals.write_bytes == pytest.approx(written, rel=0.10)
    assert rec.activity.devices[0] == loop and knames[1] in rec.activity.devices
    backing = rec.activity.totals[knames[1]]
    # the image lives on the disk below: it saw at least what the loop device passed down
    # (other processes may add to it, so only the lower bound is certain)
    assert backing.write_bytes >= 0.9 * written
    assert rec.space["fs_used_after"] is not None


@needs_root
def test_findings_of_a_cached_read_are_stored_and_shown(cli, tmp_path):
    """A buffered re-read of a small file on a loop-mounted ext4: fio reads, the loop device
    does not -> 'page-cache' (invalid) is stored with the result and shown by show."""
    with loop_mount(tmp_path, "ext4", 96) as (mnt, _dev, _image):
        suite = tmp_path / "w.toml"
        suite.write_text(
            '[workload.cached-read]\ndescription = "buffered re-read of a small file"\n'
            'fio = { rw = "read", bs = "1m", direct = 0, invalidate = 0, ioengine = "psync", size = "32m", runtime = 2, time_based = true }\n'
        )
        res = cli("run", "--suite-file", str(suite), "--workload", "cached-read", "--target", str(mnt), "--json", "--no-report")
        assert res.code == 0, res.err
        [rec] = json.loads(res.out)
        checks = {f["check"]: f for f in rec["findings"]}
        assert checks["page-cache"]["severity"] == "invalid"
        assert "fix" in checks["page-cache"] and checks["page-cache"]["fix"]
        assert "cache-small-file" not in checks  # superseded by the measured proof
        shown = cli("show", "last")
        assert "INVALID" in shown.out and "[page-cache]" in shown.out and "invalid: page-cache" in shown.out
        # and the clean direct-I/O run on the same filesystem is free of warnings about the cache
        res2 = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(mnt), "--size", "16m", "--runtime", "1", "--json", "--no-report")
        assert res2.code == 0, res2.err
        [rec2] = json.loads(res2.out)
        assert not {"page-cache", "cache-small-file", "memory-filesystem"} & {f["check"] for f in rec2["findings"]}


def test_doctor_prints_storage_and_preflight_findings(cli, tmp_path):
    res = cli("doctor", "--target", str(tmp_path), "--suite", "quick", "--json")
    assert res.code == 0, res.err
    [report] = json.loads(res.out)
    assert report["target"] == str(tmp_path)
    assert report["storage"]["filesystem"]["fstype"]
    human = cli("doctor", "--target", str(tmp_path))
    assert human.code == 0 and "host:" in human.out


@needs_root
@pytest.mark.parametrize(("fstype", "size_mib", "flushed"), [("ext4", 96, False), ("xfs", 320, False), ("btrfs", 160, True)])
def test_used_space_after_a_buffered_write_is_true_with_a_flush_only_where_needed(cli, tmp_path, monkeypatch, fstype, size_mib, flushed):
    """ext4 and XFS count a buffered write's blocks the moment it is written (delayed allocation
    included), so the space figures after a workload need no flush of the filesystem (syncfs, a
    journal commit each time); btrfs counts them when it commits, so it is still flushed. Either
    way the figures say what was written."""
    from storbench.run import space

    flushes: list[str] = []
    real = space._syncfs
    monkeypatch.setattr(space, "_syncfs", lambda path: (flushes.append(path), real(path))[1])
    with loop_mount(tmp_path, fstype, size_mib) as (mnt, _dev, _image):
        suite = tmp_path / "w.toml"
        suite.write_text(
            '[workload.buffered-write]\ndescription = "24 MiB written through the page cache, never synced"\nheadline = "bw"\n'
            'fio = { rw = "write", bs = "1m", direct = 0, ioengine = "psync", size = "24m", fallocate = "none", '
            'end_fsync = 0, fsync_on_close = 0, buffer_compress_percentage = 0, refill_buffers = 1 }\n'
        )
        res = cli("run", "--suite-file", str(suite), "--workload", "buffered-write", "--target", str(mnt), "--no-report")
        assert res.code == 0, res.err
        with Store.open(f"sqlite:///{cli.db}") as store:
            [rec] = store.results(1)
    assert bool(flushes) is flushed, flushes
    assert rec.storage.filesystem.fstype == fstype
    space = rec.space
    assert space["fs_used_after"] - space["fs_used_before"] >= 24 * 2**20, space
    [(_path, size, blocks)] = space["files_after"]
    assert size == 24 * 2**20 and blocks >= 24 * 2**20, space
