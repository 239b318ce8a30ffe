"""Tests for storbench.activity: /proc parsers, iostat arithmetic, the stored form, the sampler.

The parser goldens are hand-written in the exact shape the kernel prints
(``"%4d %7d %s ..."``); expected values were worked out by hand (sectors * 512).
The root test drives a real loop device with fio.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from storbench.activity import (
    ACTIVITY_FORMAT_VERSION,
    ActivitySeries,
    BytesComparison,
    CpuCounters,
    CpuSample,
    DeviceSample,
    DeviceTotals,
    DiskCounters,
    ProcParseError,
    accumulate_totals,
    activity_from_dict,
    activity_to_dict,
    compare_bytes,
    counter_deltas,
    cpu_rates,
    device_rates,
    parse_diskstats,
    parse_proc_stat_cpu,
    totals_from_counters,
)
from storbench.errors import StoreError
from storbench.run.devices import ActivitySampler, kernel_names

MiB = 1024 * 1024

# --------------------------------------------------------------------------- goldens

# Linux 5.5+ (20 fields: + discards, + flushes), as on this Debian 12 VM.
DISKSTATS_20 = """\
 259       0 nvme0n1 1843221 10234 312456789 401234 902345 50321 98765432 1203456 3 623451 1604690 12034 0 987654321 2345 45678 34567
 259       1 nvme0n1p1 1204 0 52344 301 2 0 16 1 0 402 302 0 0 0 0 0 0
 254       0 vda 1074650 5830 11941082 56599 93615 15678 2252752 19889 0 26432 76781 4151 42 99048 202 4095 89
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 dm-0 900123 0 287654320 398765 950321 0 98700000 3456789 0 612345 3855554 12000 0 987000000 2300 0 0
"""

# Linux 4.18 - 5.4 (18 fields: + discards).
DISKSTATS_18 = """\
   8       0 sda 45123 1023 4567890 23456 78901 34567 8901234 567890 0 123456 591346 0 0 0 0
   8       1 sda1 44987 1023 4563210 23401 78899 34567 8901218 567880 0 123400 591281 0 0 0 0
   9       0 md0 200 0 1600 0 300 0 2400 0 0 0 0 0 0 0 0
"""

# Linux 2.6.25 - 4.17 (14 fields).
DISKSTATS_14 = """\
   8      16 sdb 123456 789 9876543 45678 234567 8901 23456789 3456789 2 456789 3502467
   8      17 sdb1 123000 789 9870000 45600 234500 8901 23456000 3456700 2 456700 3502300
"""

PROC_STAT = """\
cpu  9863 7 3526 74423 1378 11 298 73 0 0
cpu0 5487 3 2011 36262 933 6 35 44 0 0
cpu1 4376 4 1515 38161 445 5 263 29 0 0
intr 1404564 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
ctxt 2734081
btime 1717000000
processes 11094
procs_running 1
procs_blocked 0
softirq 538213 0 64510 3 66124 0 0 1 144310 0 263265
"""


def test_parse_diskstats_20_fields() -> None:
    stats = parse_diskstats(DISKSTATS_20)
    assert list(stats) == ["nvme0n1", "nvme0n1p1", "vda", "loop0", "dm-0"]
    assert stats["nvme0n1"] == DiskCounters(
        major=259, minor=0, name="nvme0n1",
        reads=1843221, reads_merged=10234, read_sectors=312456789, read_ms=401234,
        writes=902345, writes_merged=50321, write_sectors=98765432, write_ms=1203456,
        in_flight=3, io_ms=623451, weighted_io_ms=1604690,
        discards=12034, discards_merged=0, discard_sectors=987654321, discard_ms=2345,
        flushes=45678, flush_ms=34567,
    )  # fmt: skip
    nvme = stats["nvme0n1"]
    assert nvme.read_bytes == 159977875968
    assert nvme.write_bytes == 50567901184
    assert nvme.discard_bytes == 505679012352
    vda = stats["vda"]
    assert (vda.major, vda.minor) == (254, 0)
    assert (vda.read_bytes, vda.write_bytes, vda.discard_bytes) == (6113833984, 1153409024, 50712576)
    assert (vda.flushes, vda.flush_ms) == (4095, 89)
    assert stats["loop0"].read_bytes == 0 and stats["loop0"].flushes == 0
    assert stats["dm-0"].discard_bytes == 505344000000
    assert stats["nvme0n1p1"].reads == 1204


def test_parse_diskstats_18_fields_has_no_flushes() -> None:
    stats = parse_diskstats(DISKSTATS_18)
    assert list(stats) == ["sda", "sda1", "md0"]
    sda = stats["sda"]
    assert (sda.reads, sda.writes, sda.weighted_io_ms) == (45123, 78901, 591346)
    assert (sda.read_bytes, sda.write_bytes) == (2338759680, 4557431808)
    assert (sda.discards, sda.discard_sectors, sda.discard_bytes) == (0, 0, 0)  # measured zero
    assert sda.flushes is None and sda.flush_ms is None  # not measured
    assert (stats["md0"].read_bytes, stats["md0"].write_bytes) == (819200, 1228800)


def test_parse_diskstats_14_fields_has_no_discards() -> None:
    sdb = parse_diskstats(DISKSTATS_14)["sdb"]
    assert (sdb.major, sdb.minor, sdb.in_flight, sdb.io_ms) == (8, 16, 2, 456789)
    assert (sdb.read_bytes, sdb.write_bytes) == (5056790016, 12009875968)
    assert sdb.discards is None and sdb.discard_sectors is None and sdb.discard_bytes is None
    assert sdb.flushes is None


def test_parse_diskstats_reads_first_20_fields_of_longer_lines() -> None:
    line = "   7       1 loop1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n"
    c = parse_diskstats(line)["loop1"]
    assert (c.reads, c.flush_ms) == (1, 17)


@pytest.mark.parametrize(
    "text",
    [
        "   3    1   hda1 35486 38030 38030 38030\n",  # 2.6 partition layout: refused
        "   8    0 sda 1 2 3 4 5 6 7 8 9 10 11 12\n",  # 15 fields
        "   8    0 sda 1 2 3 4 5 6 7 8 9 10 x\n",
        "   8    0 sda 1 2 3 4 5 6 7 8 9 10 -1\n",
    ],
)
def test_parse_diskstats_refuses_bad_lines(text: str) -> None:
    with pytest.raises(ProcParseError):
        parse_diskstats(text)


def test_parse_diskstats_empty_and_blank_lines() -> None:
    assert parse_diskstats("") == {}
    assert list(parse_diskstats("\n" + DISKSTATS_14 + "\n\n")) == ["sdb", "sdb1"]


def test_parse_proc_stat_cpu() -> None:
    assert parse_proc_stat_cpu(PROC_STAT) == CpuCounters(
        user=9863, nice=7, system=3526, idle=74423, iowait=1378, irq=11, softirq=298, steal=73
    )
    # 2.6.11 - 2.6.23: exactly 8 columns
    assert parse_proc_stat_cpu("cpu  1 2 3 4 5 6 7 8\n").steal == 8


def test_parse_proc_stat_cpu_errors() -> None:
    with pytest.raises(ProcParseError, match="no aggregate"):
        parse_proc_stat_cpu("cpu0 1 2 3 4 5 6 7 8\n")
    with pytest.raises(ProcParseError, match="7 columns"):
        parse_proc_stat_cpu("cpu  1 2 3 4 5 6 7\n")


# --------------------------------------------------------------------------- rates


def _counters(**overrides: int | None) -> DiskCounters:
    base = dict(
        major=259, minor=0, name="nvme0n1",
        reads=1000, reads_merged=10, read_sectors=80000, read_ms=2000,
        writes=500, writes_merged=5, write_sectors=40000, write_ms=3000,
        in_flight=0, io_ms=10000, weighted_io_ms=50000,
        discards=10, discards_merged=0, discard_sectors=2048, discard_ms=20,
        flushes=7, flush_ms=14,
    )  # fmt: skip
    base.update(overrides)
    return DiskCounters(**base)  # type: ignore[arg-type]


PREV = _counters()
CUR = _counters(
    reads=1200, read_sectors=489600, read_ms=2500,  # +200 reads, +409600 sectors, +500 ms
    writes=600, write_sectors=244800, write_ms=3800,  # +100 writes, +204800 sectors, +800 ms
    in_flight=4, io_ms=11500, weighted_io_ms=53000,  # +1500 ms busy, +3000 ms weighted
    discards=14, discard_sectors=10240, discard_ms=28, flushes=9, flush_ms=18,  # +8192 sectors
)  # fmt: skip


def test_device_rates_iostat_arithmetic() -> None:
    s = device_rates(PREV, CUR, 2.0, t_s=7.0)
    assert s == DeviceSample(
        t_s=7.0,
        device="nvme0n1",
        interval_s=2.0,
        reads_per_s=100.0,  # 200 / 2
        writes_per_s=50.0,  # 100 / 2
        read_bytes_per_s=104857600.0,  # 409600 * 512 / 2 = 100 MiB/s
        write_bytes_per_s=52428800.0,  # 204800 * 512 / 2 = 50 MiB/s
        discard_bytes_per_s=2097152.0,  # 8192 * 512 / 2 = 2 MiB/s
        avg_queue_size=1.5,  # 3000 ms / 2000 ms
        r_await_ms=2.5,  # 500 ms / 200 reads
        w_await_ms=8.0,  # 800 ms / 100 writes
        util_pct=75.0,  # 1500 ms / 2000 ms
    )


def test_device_rates_caps_util_and_leaves_await_unmeasured_without_ios() -> None:
    cur = dataclasses.replace(PREV, io_ms=PREV.io_ms + 2100, writes=PREV.writes + 3, write_ms=PREV.write_ms + 3)
    s = device_rates(PREV, cur, 2.0)
    assert s.util_pct == 100.0  # 105 % capped
    assert s.r_await_ms is None  # no read completed: not measured, not 0
    assert s.w_await_ms == 1.0
    assert s.reads_per_s == 0.0 and s.read_bytes_per_s == 0.0


def test_device_rates_without_discard_counters() -> None:
    prev = parse_diskstats(DISKSTATS_14)["sdb"]
    cur = dataclasses.replace(prev, read_sectors=prev.read_sectors + 2048, reads=prev.reads + 1)
    s = device_rates(prev, cur, 1.0)
    assert s.read_bytes_per_s == 1048576.0
    assert s.discard_bytes_per_s is None


def test_device_rates_rejects_nonpositive_interval() -> None:
    with pytest.raises(ValueError):
        device_rates(PREV, CUR, 0.0)


def test_time_fields_wrap_at_32_bits() -> None:
    # read_ms is an unsigned int even on 64-bit kernels: 4294967000 -> 200 is +496 ms
    prev = _counters(read_ms=4294967000)
    cur = _counters(read_ms=200, reads=1100)
    s = device_rates(prev, cur, 1.0)
    assert s.r_await_ms == 4.96  # 496 ms / 100 reads
    assert counter_deltas(prev, cur).read_ms == 496  # type: ignore[union-attr]


def test_count_fields_wrap_only_when_32_bit() -> None:
    prev = _counters(read_sectors=4294967290)
    cur = _counters(read_sectors=10)
    # 32-bit unsigned long: one wrap, +16 sectors
    assert device_rates(prev, cur, 1.0, long_bits=32).read_bytes_per_s == 16 * 512.0
    # 64-bit unsigned long never wraps in practice: a decrease is a reset -> unknown
    reset = device_rates(prev, cur, 1.0, long_bits=64)
    assert reset.device == "nvme0n1" and reset.t_s == 0.0
    assert all(getattr(reset, f) is None for f in ("reads_per_s", "read_bytes_per_s", "util_pct", "r_await_ms"))


def test_implausible_wrap_and_new_device_are_resets() -> None:
    # 1000 -> 10 on a 32-bit counter would be a +4.29e9 jump: a reset, not a wrap
    assert counter_deltas(_counters(reads=1000), _counters(reads=10), long_bits=32) is None
    # same name, other major:minor (a dm table recreated)
    assert counter_deltas(PREV, dataclasses.replace(CUR, minor=1)) is None
    # a time field jumping back by more than half its width
    assert counter_deltas(_counters(io_ms=1_000_000_000), _counters(io_ms=5)) is None
    # ... while one by less than half is a wrap: 3e9 -> 5 is +1294967301 ms
    assert counter_deltas(_counters(io_ms=3_000_000_000), _counters(io_ms=5)).io_ms == 1294967301  # type: ignore[union-attr]


def test_cpu_rates() -> None:
    prev = CpuCounters(user=1000, nice=10, system=300, idle=5000, iowait=100, irq=5, softirq=15, steal=0)
    cur = CpuCounters(user=1090, nice=10, system=360, idle=5190, iowait=150, irq=6, softirq=19, steal=5)
    # deltas: user 90, system 60 + irq 1 + softirq 4 = 65, idle 190, iowait 50, steal 5; total 400
    assert cpu_rates(prev, cur, t_s=3.0, interval_s=1.0) == CpuSample(
        t_s=3.0, interval_s=1.0, user_pct=22.5, system_pct=16.25, iowait_pct=12.5, steal_pct=1.25, idle_pct=47.5
    )


def test_cpu_rates_backwards_iowait_and_no_ticks() -> None:
    prev = CpuCounters(100, 0, 100, 100, 100, 0, 0, 0)
    cur = CpuCounters(150, 0, 100, 150, 90, 0, 0, 0)  # iowait went back by 10: counts as 0
    s = cpu_rates(prev, cur)
    assert (s.user_pct, s.idle_pct, s.iowait_pct) == (50.0, 50.0, 0.0)
    none = cpu_rates(prev, prev)
    assert none.user_pct is None and none.idle_pct is None


# --------------------------------------------------------------------------- totals and comparison


def test_totals_are_exact_integers_across_a_wrap() -> None:
    r0 = _counters(reads=4294967200, read_sectors=4294967000, writes=0, write_sectors=0)
    r1 = _counters(reads=4294967295, read_sectors=4294967295, writes=3, write_sectors=24)
    r2 = _counters(reads=5, read_sectors=704, writes=7, write_sectors=56, discard_sectors=4096)
    t = totals_from_counters([r0, r1, r2], long_bits=32)
    # reads 95 + 6, sectors 295 + 705, writes 7 (56 sectors), discards 4096 - 2048 sectors
    assert t == DeviceTotals(
        reads=101, writes=7, read_bytes=1000 * 512, write_bytes=56 * 512, discard_bytes=2048 * 512, complete=True
    )


def test_totals_equal_last_minus_first_without_wraps() -> None:
    mid = _counters(reads=1100, read_sectors=300000, writes=550, write_sectors=100000, discard_sectors=4096)
    t = totals_from_counters([PREV, mid, CUR])
    assert t == DeviceTotals(
        reads=200, writes=100, read_bytes=409600 * 512, write_bytes=204800 * 512, discard_bytes=8192 * 512
    )
    assert totals_from_counters([PREV]) == DeviceTotals(0, 0, 0, 0, 0, True)


def test_totals_after_a_reset_are_incomplete() -> None:
    later = dataclasses.replace(CUR, reads=CUR.reads + 10, read_sectors=CUR.read_sectors + 80)
    fresh = _counters(reads=3, read_sectors=24)  # detached and attached again: counters restart
    t = totals_from_counters([PREV, CUR, fresh, dataclasses.replace(fresh, reads=4, read_sectors=32)])
    assert t.complete is False
    assert (t.reads, t.read_bytes) == (201, (409600 + 8) * 512)  # known intervals only
    assert totals_from_counters([PREV, CUR, later]).complete is True


def test_totals_without_discard_counters() -> None:
    prev = parse_diskstats(DISKSTATS_14)["sdb"]
    cur = dataclasses.replace(prev, write_sectors=prev.write_sectors + 8)
    t = accumulate_totals(None, prev, cur)
    assert t == DeviceTotals(reads=0, writes=0, read_bytes=0, write_bytes=4096, discard_bytes=None)


def test_compare_bytes() -> None:
    totals = DeviceTotals(reads=40, writes=1000, read_bytes=40 * MiB, write_bytes=1126 * MiB, discard_bytes=None)
    c = compare_bytes(8192 * MiB, 16384 * MiB, totals)
    assert c == BytesComparison(
        fio_read_bytes=8192 * MiB,
        fio_write_bytes=16384 * MiB,
        device_read_bytes=40 * MiB,
        device_write_bytes=1126 * MiB,
        read_ratio=40 / 8192,
        write_ratio=1126 / 16384,
    )
    assert compare_bytes(0, 4096, totals).read_ratio is None  # fio read nothing: cannot decide
    incomplete = dataclasses.replace(totals, complete=False)
    c = compare_bytes(8192 * MiB, 0, incomplete)
    assert c.read_ratio is None and c.write_ratio is None
    with pytest.raises(ValueError):
        compare_bytes(-1, 0, totals)


# --------------------------------------------------------------------------- stored form


def _series() -> ActivitySeries:
    return ActivitySeries(
        interval_s=1.0,
        devices=("nvme0n1", "sdb"),
        samples=(
            device_rates(PREV, CUR, 2.0, t_s=1.0 / 3.0),
            DeviceSample(1.0, "sdb", 0.999, None, None, None, None, None, None, None, None, None),
        ),
        cpu=(CpuSample(0.1 + 0.2, 1.0, 22.5, 16.25, 12.5, 1.25, 47.5), CpuSample(2.0, 1.0, None, None, None, None, None)),
        totals={
            "nvme0n1": totals_from_counters([PREV, CUR]),
            "sdb": DeviceTotals(1, 2, 512, 1024, None, complete=False),
        },
        duration_s=2.0000001,
        notes=("device 'md9' is not in /proc/diskstats; not sampled",),
    )


def test_round_trip_through_json_is_exact() -> None:
    series = _series()
    data = activity_to_dict(series)
    assert data["format_version"] == ACTIVITY_FORMAT_VERSION == 1
    back = activity_from_dict(json.loads(json.dumps(data)))
    assert back == series
    assert list(back.totals) == ["nvme0n1", "sdb"]
    assert back.samples_for("sdb") == (series.samples[1],)
    assert activity_to_dict(back) == data


def test_from_dict_refuses_newer_and_malformed() -> None:
    data = activity_to_dict(_series())
    with pytest.raises(StoreError, match="format version 2"):
        activity_from_dict({**data, "format_version": 2})
    with pytest.raises(StoreError, match="format_version"):
        activity_from_dict({k: v for k, v in data.items() if k != "format_version"})
    with pytest.raises(StoreError, match="lacks 'util_pct'"):
        bad = json.loads(json.dumps(data))
        del bad["samples"][0]["util_pct"]
        activity_from_dict(bad)
    with pytest.raises(StoreError):
        activity_from_dict({**data, "totals": None})


# --------------------------------------------------------------------------- the sampler on a fake /proc


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # the sampler thread never sees a half-written file


def _disk_line(c: DiskCounters) -> str:
    f = dataclasses.astuple(c)
    return f"{f[0]:4d} {f[1]:7d} " + " ".join(str(v) for v in f[2:]) + "\n"


def _cpu_line(c: CpuCounters) -> str:
    return "cpu  " + " ".join(str(v) for v in dataclasses.astuple(c)) + " 0 0\n"


@pytest.fixture
def fake_proc(tmp_path: Path) -> Path:
    root = tmp_path / "proc"
    root.mkdir()
    _write(root / "diskstats", _disk_line(PREV))
    _write(root / "stat", _cpu_line(CpuCounters(100, 0, 100, 100, 0, 0, 0, 0)))
    return root


def test_sampler_run_shorter_than_one_interval_has_totals(fake_proc: Path) -> None:
    with ActivitySampler(["nvme0n1", "sdz", "/dev/sda"], interval_s=60.0, proc_root=str(fake_proc)) as sampler:
        _write(fake_proc / "diskstats", _disk_line(CUR))
    series = sampler.series()
    assert series.devices == ("nvme0n1",)
    assert series.totals["nvme0n1"] == totals_from_counters([PREV, CUR])
    assert series.samples == () and series.cpu == ()  # the short last span is not a sample
    assert series.duration_s is not None and 0 <= series.duration_s < 5
    assert any("'sdz' is not in" in n for n in series.notes)
    assert any("'/dev/sda'" in n and "kernel name" in n for n in series.notes)


def test_sampler_samples_and_survives_bad_files(fake_proc: Path) -> None:
    cpu0 = CpuCounters(100, 0, 100, 100, 0, 0, 0, 0)
    with ActivitySampler(["nvme0n1"], interval_s=0.02, proc_root=str(fake_proc)) as sampler:
        time.sleep(0.1)
        _write(fake_proc / "diskstats", "garbage\n")
        _write(fake_proc / "stat", "nothing here\n")
        time.sleep(0.1)
        _write(fake_proc / "diskstats", _disk_line(CUR))
        _write(fake_proc / "stat", _cpu_line(dataclasses.replace(cpu0, user=200, idle=200)))
        time.sleep(0.1)
    series = sampler.series()
    assert sampler._thread is not None and not sampler._thread.is_alive()
    assert len(series.samples_for("nvme0n1")) >= 3
    assert [s.t_s for s in series.samples] == sorted(s.t_s for s in series.samples)
    assert series.totals["nvme0n1"] == totals_from_counters([PREV, CUR])
    # the bytes show up in the samples as rates that add back up to the total
    moved = sum(s.read_bytes_per_s * s.interval_s for s in series.samples if s.read_bytes_per_s is not None)
    assert moved == pytest.approx(409600 * 512)
    assert any(c.user_pct == 50.0 for c in series.cpu)
    assert any("cannot read" in n and "diskstats" in n for n in series.notes)
    assert any("cannot read" in n and "stat" in n for n in series.notes)


def test_sampler_notes_a_reset_device(fake_proc: Path) -> None:
    with ActivitySampler(["nvme0n1"], interval_s=60.0, proc_root=str(fake_proc)) as sampler:
        _write(fake_proc / "diskstats", _disk_line(_counters(reads=3, read_sectors=24)))
    series = sampler.series()
    assert series.totals["nvme0n1"].complete is False
    assert any("went backwards" in n for n in series.notes)


def test_sampler_without_proc_notes_and_does_not_raise(tmp_path: Path) -> None:
    with ActivitySampler(["vda"], interval_s=0.01, proc_root=str(tmp_path / "nowhere")) as sampler:
        time.sleep(0.05)
    series = sampler.series()
    assert series.devices == () and series.samples == () and series.totals == {}
    assert len(series.notes) == 2  # one per file, not one per reading


def test_sampler_argument_checks() -> None:
    with pytest.raises(ValueError):
        ActivitySampler(["vda"], interval_s=0)
    with pytest.raises(TypeError):
        ActivitySampler("vda")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        ActivitySampler(["vda"]).series()


# --------------------------------------------------------------------------- real devices (root)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, mount)")
needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("fio", "losetup", "mkfs.ext4", "mount", "umount", "findmnt")),
    reason="needs fio, losetup, mkfs.ext4, mount, findmnt",
)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=60)


@dataclass(frozen=True)
class LoopFs:
    device: str  # /dev/loopN
    name: str  # loopN
    mountpoint: Path


@pytest.fixture
def loop_fs(tmp_path: Path) -> Iterator[LoopFs]:
    """A 64 MiB ext4 on a direct-I/O loop device; unmounted and detached whatever happens."""
    with contextlib.ExitStack() as cleanup:
        image = tmp_path / "disk.img"
        with open(image, "wb") as f:
            f.truncate(64 * MiB)
        device = _run(["losetup", "-f", "--show", "--direct-io=on", str(image)]).stdout.strip()
        cleanup.callback(subprocess.run, ["losetup", "-d", device], capture_output=True, timeout=60)
        name = os.path.basename(device)
        # check that what we asked for happened: no double caching through the image's page cache
        assert Path(f"/sys/block/{name}/loop/dio").read_text().strip() == "1"
        # no lazy inode-table/journal init: it would write to the device in the background
        _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device])
        mnt = tmp_path / "mnt"
        mnt.mkdir()
        _run(["mount", device, str(mnt)])
        cleanup.callback(_umount, mnt)
        yield LoopFs(device, name, mnt)


def _umount(mnt: Path) -> None:
    if subprocess.run(["umount", str(mnt)], capture_output=True, timeout=60).returncode != 0:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=60)


def _fio(*args: str) -> dict:
    out = _run(["fio", "--output-format=json", "--ioengine=psync", *args]).stdout
    doc = json.loads(out[out.index("{") :])  # fio may print warnings before the JSON
    job = doc["jobs"][0]
    assert job["error"] == 0
    return job


def _backing_device(path: Path) -> str | None:
    """Kernel name of the plain block device holding ``path`` (vda), or None."""
    source = _run(["findmnt", "-n", "-o", "SOURCE", "-T", str(path)]).stdout.strip()
    names = kernel_names([source]) if source.startswith("/dev/") else ()
    if not names:
        return None
    with open("/proc/diskstats") as f:
        return names[0] if names[0] in parse_diskstats(f.read()) else None


@needs_root
@needs_tools
@pytest.mark.root
def test_real_loop_device_write_and_cached_read(loop_fs: LoopFs, tmp_path: Path) -> None:
    data_file = loop_fs.mountpoint / "data.bin"
    backing = _backing_device(tmp_path)
    devices = [loop_fs.name] + ([backing] if backing and backing != loop_fs.name else [])

    # 1. O_DIRECT writes reach the device one for one
    with ActivitySampler(devices, interval_s=0.05) as sampler:
        job = _fio("--name=w", f"--filename={data_file}", "--rw=write", "--bs=1m", "--size=32m", "--direct=1")
    series = sampler.series()
    fio_written = job["write"]["io_bytes"]
    assert fio_written == 32 * MiB
    assert series.devices == tuple(devices)
    totals = series.totals[loop_fs.name]
    assert totals.complete
    assert abs(totals.write_bytes - fio_written) <= 0.10 * fio_written, (totals, series.notes)
    assert compare_bytes(0, fio_written, totals).write_ratio == pytest.approx(1.0, abs=0.10)
    assert len(series.samples_for(loop_fs.name)) >= 1
    assert any((s.write_bytes_per_s or 0) > 0 for s in series.samples_for(loop_fs.name))
    if backing:
        assert series.totals[backing].complete and len(series.samples_for(backing)) >= 1

    # 2. control: a buffered read after fio drops the file's cache (invalidate=1) hits the device
    with ActivitySampler([loop_fs.name], interval_s=0.05) as sampler:
        job = _fio("--name=cold", f"--filename={data_file}", "--rw=read", "--bs=1m", "--size=32m",
                   "--direct=0", "--invalidate=1")  # fmt: skip
    cold = compare_bytes(job["read"]["io_bytes"], 0, sampler.series().totals[loop_fs.name])
    assert cold.fio_read_bytes == 32 * MiB
    assert cold.read_ratio is not None and cold.read_ratio >= 0.9, cold

    # 3. the same read again, now fully cached (invalidate=0): the device reads (almost) nothing
    with ActivitySampler([loop_fs.name], interval_s=0.05) as sampler:
        job = _fio("--name=warm", f"--filename={data_file}", "--rw=read", "--bs=1m", "--size=32m",
                   "--direct=0", "--invalidate=0")  # fmt: skip
    warm = compare_bytes(job["read"]["io_bytes"], 0, sampler.series().totals[loop_fs.name])
    assert warm.fio_read_bytes == 32 * MiB
    assert warm.read_ratio is not None and warm.read_ratio < 0.10, warm
