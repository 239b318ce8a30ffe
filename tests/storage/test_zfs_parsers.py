"""The pure ZFS parts on recorded zfs-fuse outputs (tests/data/zfs-fuse): zpool status/get/iostat,
zfs get, the ARC's kstats, the activity summary, the stored form.  The same code runs against a
live zfs-fuse in tests/targets/test_zfs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.zfs import format_zfs_activity, pool_state, summarize_iostat, zfs_activity
from storbench.errors import StoreError
from storbench.storage import parse_zfs_get, parse_zpool_status, zfs_info_from
from storbench.storage.zfs import (
    ArcStats,
    arc_hit_ratio,
    parse_arcstats,
    parse_human,
    parse_ratio,
    parse_zpool_get_table,
    parse_zpool_iostat,
    scan_activity,
    unavailable_properties,
)

DATA = Path(__file__).parent.parent / "data" / "zfs-fuse"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_zpool_status_of_two_mirrors_without_paths():
    (st,) = parse_zpool_status(read("sb-zpool-status-raid10.txt"))
    assert st.pool == "tst" and st.state == "ONLINE" and st.scan == "none requested"
    assert [(v.kind, v.name, v.devices) for v in st.vdevs] == [
        ("mirror", "mirror-0", ("loop0", "loop1")),
        ("mirror", "mirror-1", ("loop2", "loop3")),
    ]
    info = zfs_info_from("tst/b", status=st)
    assert info.layout == "2 x mirror of 2" and info.scan_active is None


def test_zpool_status_degraded_names_the_offline_member():
    (st,) = parse_zpool_status(read("zfs-zpool-status-degraded.txt"))
    assert st.state == "DEGRADED"
    assert st.vdevs[0].state == "DEGRADED" and st.vdevs[0].unhealthy == (("loop2", "OFFLINE"),)
    state = pool_state(st)
    assert not state.healthy and state.vdev_states == (("mirror-0", "DEGRADED"), ("loop2", "OFFLINE"))
    assert st.scan.startswith("scrub completed after 0h0m") and scan_activity(st.scan) is None


@pytest.mark.parametrize(
    "line, active",
    [
        ("scrub in progress since Sun Jul 25 16:07:49 2021", "scrub"),
        ("scrub in progress for 0h0m, 12.40% done, 0h1m to go", "scrub"),
        ("resilver in progress since Tue Dec  1 07:50:02 2026", "resilver"),
        ("resilvered 1.50G in 00:01:02 with 0 errors on Tue Dec  1 07:51:04 2026", None),
        ("none requested", None),
        (None, None),
    ],
)
def test_scan_activity(line, active):
    assert scan_activity(line) == active


def test_zpool_get_table_form_and_sizes_as_printed():
    props = parse_zpool_get_table(read("sb-zpool-get-all-raid10.txt"))
    got = {p.property: p.value for p in props}
    assert got["size"] == "588M" and got["ashift"] == "0" and got["version"] == "23" and got["health"] == "ONLINE"
    info = zfs_info_from("tst/b", (), props)
    assert info.pool_size_bytes == 588 * 1024**2 and info.pool_ashift == 0 and info.pool_version == "23"
    assert "invalid property '-Hp'" in read("sb-zpool-get-Hp-refused.txt")


def test_zfs_get_all_and_what_zfs_fuse_lacks():
    props = parse_zfs_get(read("sb-zfs-get-Hpo-all-filesystem.txt"))
    got = {p.property: p.value for p in props}
    assert got["recordsize"] == "8192" and got["compressratio"] == "1.00x" and got["primarycache"] == "all"
    assert unavailable_properties(props, "filesystem") == ("sync", "relatime", "special_small_blocks", "encryption", "logicalused")
    info = zfs_info_from("tst/b", props, implementation="zfs-fuse", unavailable=unavailable_properties(props, "filesystem"))
    assert info.recordsize_bytes == 8192 and info.compressratio == 1.0 and info.sync is None and "sync" in info.unavailable
    assert info.logbias == "latency" and info.copies == 1 and info.used_bytes == int(got["used"])


def test_ratios_and_human_numbers():
    assert parse_ratio("28.35x") == 28.35 and parse_ratio("1.73") == 1.73 and parse_ratio("-") is None
    assert parse_human("19.5K") == 19.5 * 1024 and parse_human("695") == 695 and parse_human("15.3M") == 15.3 * 1024**2
    assert parse_human("-") is None


def test_arcstats_both_forms():
    fuse = parse_arcstats(read("zfs-kstat-arcstats.txt"))
    assert (fuse.hits, fuse.misses, fuse.max_bytes, fuse.size_bytes) == (8838, 129, 104857600, 611920)
    assert (fuse.data_hits, fuse.data_misses) == (0, 0)  # demand + prefetch data: nothing read yet
    openzfs = parse_arcstats(read("reconstructed-openzfs-arcstats.txt"))
    assert (openzfs.hits, openzfs.misses, openzfs.max_bytes) == (1845203, 20311, 12622823424)
    assert (openzfs.data_hits, openzfs.data_misses) == (902114 + 1201, 10422 + 4012)


def test_arc_hit_ratio_between_readings():
    a = ArcStats(hits=100, misses=10, data_hits=50, data_misses=5)
    b = ArcStats(hits=36_700, misses=200, data_hits=36_650, data_misses=99)
    hits, misses, ratio = arc_hit_ratio(a, b)
    assert (hits, misses) == (36_600, 94) and ratio == pytest.approx(36_600 / 36_694)
    assert arc_hit_ratio(b, a) is None  # counters went down: the ARC was reset
    assert arc_hit_ratio(a, a) is None  # nothing was looked up
    assert arc_hit_ratio(ArcStats(hits=1, misses=1), ArcStats(hits=3, misses=5)) == (2, 4, 2 / 6)  # no data counters


def test_iostat_reports_per_vdev_and_member():
    reports = parse_zpool_iostat(read("sb-zpool-iostat-v-raid10-randwrite.txt"))
    assert len(reports) == 4 and [r.name for r in reports[0]] == ["tst", "mirror", "loop0", "loop1", "mirror", "loop2", "loop3"]
    assert [r.depth for r in reports[0]] == [0, 1, 2, 2, 1, 2, 2]
    (st,) = parse_zpool_status(read("sb-zpool-status-raid10.txt"))
    vdevs, per_second, seconds = summarize_iostat(reports, st)
    assert seconds == 3 and len(per_second) == 3  # the first report (since import) is left out
    assert [(v.name, v.role, v.parent) for v in vdevs] == [
        ("tst", "pool", None), ("mirror-0", "vdev", "tst"), ("loop0", "device", "mirror-0"), ("loop1", "device", "mirror-0"),
        ("mirror-1", "vdev", "tst"), ("loop2", "device", "mirror-1"), ("loop3", "device", "mirror-1"),
    ]  # fmt: skip
    pool = vdevs[0]
    assert pool.write_ops == pytest.approx((3.98 + 8.88 + 9.04) * 1024)
    assert pool.write_bytes == pytest.approx((30.5 + 68.5 + 69.3) * 1024**2)
    loop0 = vdevs[2]
    assert loop0.write_ops == pytest.approx(250 + 438 + 471) and loop0.read_ops == 0
    assert loop0.write_bytes == pytest.approx((15.3 + 34.4 + 35.4) * 1024**2)
    # a mirror writes everything to both members
    assert vdevs[3].write_bytes == pytest.approx(loop0.write_bytes)


def test_activity_record_round_trips_and_reads_as_lines():
    reports = parse_zpool_iostat(read("sb-zpool-iostat-v-raid10-randwrite.txt"))
    (st,) = parse_zpool_status(read("sb-zpool-status-raid10.txt"))
    (deg,) = parse_zpool_status(read("zfs-zpool-status-degraded.txt"))
    act = zfs_activity(
        "tst", "tst/b", status_before=st, status_after=deg, iostat=reports,
        arc_before=ArcStats(data_hits=0, data_misses=0), arc_after=ArcStats(data_hits=36_600, data_misses=94, max_bytes=100 * 1024**2),
        compressratio_before=1.0, compressratio_after=28.35,
    )  # fmt: skip
    back = backend_from_dict(backend_to_dict(BackendActivity(zfs=act)))
    assert back == BackendActivity(zfs=act)
    lines = format_zfs_activity(act)
    assert lines[0] == "ZFS ARC during the run: 99.7% hits (36600 hits, 94 misses)"
    assert "ZFS tst/b compressratio after the run: 28.35x" in lines
    assert "ZFS pool tst after the run: DEGRADED, mirror-0 DEGRADED, loop2 OFFLINE" in lines
    assert "      loop0: read 0 ops 0 B, write 1159 ops 85.1 MiB" in lines


def test_stored_activity_from_a_newer_storbench_is_refused():
    with pytest.raises(StoreError, match="format version 99"):
        backend_from_dict({"format_version": 99, "zfs": None})
