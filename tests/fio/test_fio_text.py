"""Golden tests for :mod:`storbench.fio.text` (fio's classic human-readable output).

Every file under ``tests/data/fio-text`` is covered:

* ``seed000-*.txt``: fio 3.7 runs (Ctrl-C, gtod_reduce, 4 processes with group_reporting);
* ``public/*.txt``: published outputs of fio 2.0.2 .. 3.41-dev (see ``public/SOURCES.md``);
* ``local/*.txt``: fio 3.33 runs made here with ``--output-format=json,normal``, so the
  text parse is checked against fio's own JSON numbers of the same run.

The expected figures in ``GOLDEN`` were read off each file by hand.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storbench.errors import FioParseError
from storbench.fio.text import looks_like_fio_text, parse_fio_text
from storbench.model import FioResult

DATA = Path(__file__).parent.parent / "data" / "fio-text"

KiB, MiB, GiB = 1024, 1024**2, 1024**3
NS, US, MS = 1, 1000, 1000_000
SKIP = object()  # "do not check this figure"


def read(name: str) -> str:
    """A fixture exactly as stored (CRLF and lone CR kept)."""
    return (DATA / name).read_bytes().decode("utf-8")


def size(printed: str, unit: int) -> int:
    """What fio's printed ``83.9MiB`` means in bytes, rounded to an integer."""
    return int((Decimal(printed) * unit).to_integral_value())


def rate(printed: str, unit: int) -> float:
    """What fio's printed ``12.6MiB/s`` means in bytes/s."""
    return float(Decimal(printed) * unit)


@dataclass(frozen=True)
class Dir:
    """Expected figures of one direction (``None`` = must be not measured)."""

    iops: float
    bw_bytes: float
    runtime_ms: int
    io_bytes: int
    total_ios: int | None
    clat_mean_ns: float | object | None = SKIP
    lat_mean_ns: float | object | None = SKIP
    #: (distribution, percentile key, ns)
    pct: tuple[str, str, float] | None = None


@dataclass(frozen=True)
class Golden:
    version: str | None
    jobs: int
    interrupted: bool
    usr_cpu: float
    dirs: dict[str, Dir] = field(default_factory=dict)
    job: int = 0  # which job the direction figures belong to


GOLDEN: dict[str, Golden] = {
    # ------------------------------------------------------------------ fio 3.7 seed runs
    "seed000-01.txt": Golden("fio-3.7", 1, False, 2.71, {
        "read": Dir(754, 3018 * KiB, 4169132, 11 * GiB, 3145447, None, None),
        "write": Dir(251, 1006 * KiB, 4169132, 4097 * MiB, 1048857, None, None),
    }),
    "seed000-02.txt": Golden("fio-3.7", 1, False, 3.30, {
        "read": Dir(936, 3745 * KiB, 3359499, 11 * GiB, 3145447, None, None),
        "write": Dir(312, 1249 * KiB, 3359499, 4097 * MiB, 1048857, None, None),
    }),
    "seed000-03.txt": Golden("fio-3.7", 1, True, 0.42, {
        "read": Dir(121, 487 * KiB, 1189603, 566 * MiB, 144846, None, None),
        "write": Dir(40, 162 * KiB, 1189603, 188 * MiB, 48240, None, None),
    }),
    "seed000-04.txt": Golden("fio-3.7", 1, False, 0.19, {
        "write": Dir(458, 1835 * KiB, 571230, 1024 * MiB, 262029, 109990.83, 113.18 * US,
                     ("clat", "99.0", 78 * US)),
    }),
    "seed000-05.txt": Golden("fio-3.7", 1, False, 1.96, {
        "write": Dir(3215, rate("12.6", MiB), 130047, 1634 * MiB, 418208, 64993.68, 69.67 * US,
                     ("clat", "99.0", 145 * US)),
    }),
    "seed000-06.txt": Golden("fio-3.7", 1, False, 0.89, {
        "write": Dir(163, 652 * KiB, 30012, size("19.1", MiB), 4892, 6083.87 * US, 6111.91 * US,
                     ("clat", "99.0", 27132 * US)),
    }),
    "seed000-07.txt": Golden("fio-3.7", 1, False, 1.29, {
        "write": Dir(82, rate("82.7", MiB), 46387, 3835 * MiB, 3835, 7530.40 * US, 7675.25 * US,
                     ("clat", "99.0", 24249 * US)),
    }),
    "seed000-08.txt": Golden("fio-3.7", 1, False, 1.64, {
        "write": Dir(109, 110 * MiB, 39920, 4376 * MiB, 4376, 6543.55 * US, 6689.24 * US,
                     ("clat", "99.99", 152044 * US)),
    }),
    "seed000-09.txt": Golden("fio-3.7", 1, False, 2.49, {
        "write": Dir(199, 199 * MiB, 35012, 6973 * MiB, 6973, 4167.51 * US, 4286.26 * US,
                     ("clat", "99.0", 8291 * US)),
    }),
    "seed000-10.txt": Golden("fio-3.7", 1, False, 1.03, {
        "read": Dir(712, 2850 * KiB, 30134, size("83.9", MiB), 21468, 66097.97 * US, 66181.60 * US,
                    ("clat", "99.0", 439 * MS)),
        "write": Dir(330, 1321 * KiB, 30134, size("38.9", MiB), 9950, 2268.27 * US, 2367.50 * US,
                     ("clat", "99.0", 21365 * US)),
    }),
    "seed000-11.txt": Golden("fio-3.7", 1, False, 0.97, {
        "read": Dir(709, 2837 * KiB, 30137, size("83.5", MiB), 21377, 65736.88 * US, 65821.81 * US,
                    ("clat", "99.0", 409 * MS)),
        "write": Dir(329, 1319 * KiB, 30137, size("38.8", MiB), 9939, 3580.84 * US, 3679.38 * US,
                     ("clat", "99.0", 36963 * US)),
    }),
    "seed000-12.txt": Golden("fio-3.7", 1, False, 0.34, {
        "read": Dir(213, 855 * KiB, 30013, size("25.1", MiB), 6419, 138509.59 * US, 151.25 * MS,
                    ("clat", "99.0", 405 * MS)),
        "write": Dir(100, 404 * KiB, 30013, size("11.8", MiB), 3028, 138011.62 * US, 150.55 * MS,
                     ("clat", "99.0", 384 * MS)),
    }),
    "seed000-13.txt": Golden("fio-3.7", 1, True, 0.46, {
        "read": Dir(114, 915 * KiB, 129064, 115 * MiB, 14763, None, None),
        "write": Dir(37, 303 * KiB, 129064, size("38.2", MiB), 4896, None, None),
    }),
    "seed000-14.txt": Golden("fio-3.7", 1, True, 0.42, {
        "read": Dir(104, 1668 * KiB, 138396, 225 * MiB, 14430, None, None),
        "write": Dir(34, 552 * KiB, 138396, size("74.6", MiB), 4775, None, None),
    }),
    "seed000-15.txt": Golden("fio-3.7", 1, True, 0.46, {
        "read": Dir(110, 3541 * KiB, 406302, 1405 * MiB, 44954, None, None),
        "write": Dir(36, 1182 * KiB, 406302, 469 * MiB, 15003, None, None),
    }),
    "seed000-16.txt": Golden("fio-3.7", 1, True, 0.48, {
        "read": Dir(119, 478 * KiB, 153097, size("71.4", MiB), 18283, None, None),
        "write": Dir(39, 158 * KiB, 153097, size("23.7", MiB), 6055, None, None),
    }),
    "seed000-17.txt": Golden("fio-3.7", 1, True, 0.35, {
        "read": Dir(90, 362 * KiB, 47514, size("16.8", MiB), 4297, None, None),
        "write": Dir(30, 124 * KiB, 47514, 5884 * KiB, 1471, None, None),
    }),
    "seed000-18.txt": Golden("fio-3.7", 1, False, 2.77, {
        "write": Dir(230, 230 * MiB, 33020, 7602 * MiB, 7602, 3821.41 * US, 3930.94 * US,
                     ("clat", "99.0", 7373 * US)),
    }),
    # ------------------------------------------------------------------ published outputs
    "public/01-fio2.0.2-write-verify.txt": Golden("fio-2.0.2", 1, False, 0.00, {
        # the verify read phase: a percentile table of zeros but no clat line -> not measured
        "read": Dir(256000, 1000 * MiB, 1, 1024 * KiB, 256, None, None),
        "write": Dir(85333, 341333 * KiB, 3, 1024 * KiB, 256, 3.30 * US, 3.52 * US,
                     ("clat", "99.9", 13 * US)),
    }),
    "public/02-fio2.1.11-randread-gtod-reduce.txt": Golden("fio-2.1.11", 1, False, 4.06, {
        "read": Dir(10346, 41384 * KiB, 101350, 4096 * MiB, 1048576, None, None),
    }),
    "public/03-fio2.2.10-randwrite-8jobs.txt": Golden("fio-2.2.10", 1, False, 0.39, {
        "write": Dir(7801, 31205 * KiB, 134412, 4096 * MiB, 1048576, 15706.71 * US, 16273.00 * US,
                     ("clat", "99.99", 3883008 * US)),
    }),
    "public/04-fio2.21dev-randrw-null-newformat.txt": Golden("fio-2.21-14-g4ed22a-dirty", 1, False, 99.84, {
        "read": Dir(1523e3, 5950 * MiB, 5001, size("29.1", GiB), 7617184, 25.38, 58.18,
                    ("clat", "99.99", 6368)),
        "write": Dir(1523e3, 5948 * MiB, 5001, size("29.0", GiB), 7614394, 25.56, 79.84,
                     ("clat", "99.0", 42)),
    }),
    "public/05-fio3.1-randrw-libaio.txt": Golden("fio-3.1", 1, False, 7.83, {
        "read": Dir(16.4e3, rate("64.0", MiB), 6385, 409 * MiB, 104683, 150.28 * US, 155.80 * US,
                    ("clat", "99.0", 742 * US)),
        "write": Dir(24.7e3, rate("96.3", MiB), 6385, 615 * MiB, 157461, 50308.17, 56.50 * US,
                     ("clat", "99.99", 6980 * US)),
    }),
    "public/06-fio3.3-lat-percentiles-only.txt": Golden("fio-3.3", 1, False, 56.39, {
        # disable_clat: no clat line; the all-zero lat table is fio 3.3's bug, kept as printed
        "read": Dir(41.0e3, 164 * MiB, 305, size("50.0", MiB), 12800, None, 17.58 * US,
                    ("lat", "50.0", 0)),
    }),
    "public/07-fio3.12dev-read-offload-3col-pct.txt": Golden("fio-3.12-8-gee63-dirty", 1, False, 6.25, {
        "read": Dir(77.6e3, 303 * MiB, 33, size("10.0", MiB), 2560, 5705.48, 7302.87,
                    ("clat", "99.99", 5931008)),
    }),
    "public/08-fio3.16-read64k-4jobs-3col-pct.txt": Golden("fio-3.16", 1, False, 0.22, {
        "read": Dir(3603, 225 * MiB, 60309, size("13.3", GiB), 217319, 70986.01 * US, 70992.31 * US,
                    ("clat", "99.0", 367002 * US)),
    }),
    "public/09-fio3.19-randwrite-qd1.txt": Golden("fio-3.19", 1, False, 2.72, {
        "write": Dir(7711, rate("30.1", MiB), 60001, 1808 * MiB, 462723, 125.41 * US, 128.84 * US,
                     ("clat", "99.0", 141 * US)),
    }),
    "public/10-fio3.23-randrw-8jobs.txt": Golden("fio-3.23", 1, False, 2.62, {
        "read": Dir(2117, rate("28.1", MiB), 87485, 2463 * MiB, 185267, 1426.11 * US, 1431.00 * US,
                    ("clat", "99.0", 26346 * US)),
        "write": Dir(68.4e3, 908 * MiB, 87485, size("77.6", GiB), 5980576, 875.09 * US, 879.81 * US,
                     ("clat", "99.0", 1287 * US)),
    }),
    "public/11-fio3.25-fdatasync-crlf.txt": Golden("fio-3.25", 1, False, 2.99, {
        "write": Dir(4801, rate("18.8", MiB), 1173, size("22.0", MiB), 5632, 13462.14, 13731.86,
                     ("clat", "99.0", 23168)),
    }),
    "public/12-fio3.25-4jobs-no-group-reporting-crlf.txt": Golden("fio-3.25", 4, False, 0.10, {
        "write": Dir(1, rate("37.8", MiB), 60907, 2304 * MiB, 72, 833.14 * MS, 834.00 * MS,
                     ("clat", "99.0", 1351 * MS)),
    }, job=3),
    "public/13-fio3-2022dev-clat-prio.txt": Golden(None, 1, False, 0.16, {
        "read": Dir(146, 4695 * KiB, 60239, 276 * MiB, 8839, 217.97 * MS, 218.03 * MS,
                    ("clat", "99.0", 1234 * MS)),
    }),
    "public/14-fio3.34-nullblk-iouring-1529k.txt": Golden("fio-3.34", 1, True, 33.80, {
        "read": Dir(1529e3, 5971 * MiB, 30765, 179 * GiB, 47027928, 41245.17, 41741.25,
                    ("clat", "99.0", 64768)),
    }),
    "public/15-fio3.35-windows-fdatasync-crlf.txt": Golden("fio-3.35", 1, False, 0.00, {
        "write": Dir(981, 3927 * KiB, 5737, size("22.0", MiB), 5632, 11.15 * US, 11.32 * US,
                     ("clat", "99.0", 49 * US)),
    }),
    "public/16-fio3.36dev-read-libaio.txt": Golden("fio-3.36-61-g9cfa-dirty", 1, False, 11.46, {
        "read": Dir(63.6e3, 248 * MiB, 5001, 1242 * MiB, 317842, 29.83 * US, 31.10 * US,
                    ("clat", "99.0", 41 * US)),
    }),
    "public/17-fio3.39dev-write-verify-rw.txt": Golden("fio-3.39-44-g19d9", 1, False, 0.00, {
        "read": Dir(21.3e3, rate("83.3", MiB), 3, 256 * KiB, 64, 1058.31 * US, 1063.63 * US,
                    ("clat", "99.0", 2008 * US)),
        "write": Dir(32.0e3, 125 * MiB, 2, 256 * KiB, 64, 382.74 * US, 392.24 * US,
                     ("clat", "99.0", 586 * US)),
    }),
    "public/18-fio3.41dev-steadystate.txt": Golden("fio-3.41-20-gf2b2e-dirty", 1, False, 99.93, {
        "read": Dir(4054e3, rate("15.5", GiB), 9899, 153 * GiB, 40129848, 152.74, 174.94,
                    ("clat", "99.0", 217)),
    }),
    # ------------------------------------------------------------------ local fio 3.33 runs
    "local/fio3.33-direct-misaligned-err22-continue-on-error.txt": Golden("fio-3.33", 1, False, 0.00, {}),
}

JSON_NORMAL = sorted(p.name for p in (DATA / "local").glob("*json*.txt"))


def all_fixtures() -> list[str]:
    return sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*.txt"))


def test_every_fixture_is_in_a_golden_table() -> None:
    covered = set(GOLDEN) | {f"local/{name}" for name in JSON_NORMAL}
    assert set(all_fixtures()) == covered
    assert len([f for f in all_fixtures() if f.startswith("public/")]) == 18
    assert len([f for f in all_fixtures() if f.startswith("seed000-")]) == 18


def test_fixtures_are_byte_copies_of_the_shared_ones() -> None:
    shared = Path("/work/shared/fixtures/fio-text")
    if not shared.is_dir():
        pytest.skip("shared fixtures not mounted")
    for path in shared.rglob("*"):
        if path.is_file():
            assert (DATA / path.relative_to(shared)).read_bytes() == path.read_bytes(), path


# --------------------------------------------------------------------------- golden figures


def _approx(expected: float):
    return pytest.approx(expected, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden(name: str) -> None:
    want = GOLDEN[name]
    result = parse_fio_text(read(name))
    assert isinstance(result, FioResult)
    assert result.format == "normal"
    assert result.fio_version == want.version
    assert len(result.jobs) == want.jobs
    assert result.interrupted is want.interrupted
    job = result.jobs[want.job]
    assert job.usr_cpu_pct == _approx(want.usr_cpu)
    assert set(job.directions) == set(want.dirs)
    for direction, exp in want.dirs.items():
        got = job.directions[direction]
        assert got.direction == direction
        assert got.iops == _approx(exp.iops)
        assert got.bw_bytes == _approx(exp.bw_bytes)
        assert got.runtime_ms == exp.runtime_ms
        assert got.io_bytes == exp.io_bytes
        assert got.total_ios == exp.total_ios
        for attr, value in (("clat_ns", exp.clat_mean_ns), ("lat_ns", exp.lat_mean_ns)):
            if value is SKIP:
                continue
            stats = getattr(got, attr)
            if value is None:
                assert stats is None, f"{direction} {attr} must be not measured"
            else:
                assert stats is not None and stats.mean_ns == _approx(value)
                assert stats.samples is None
        if exp.pct is not None:
            kind, key, ns = exp.pct
            stats = getattr(got, f"{kind}_ns")
            assert stats.percentiles[key] == _approx(ns)


def test_seed_10_in_detail() -> None:
    """The README's example, figure by figure."""
    result = parse_fio_text(read("seed000-10.txt"))
    (job,) = result.jobs
    assert (job.name, job.groupid, job.error) == ("vm", 0, 0)
    assert result.time_text == "Fri May 28 12:32:22 2021"
    assert job.options == {"rw": "randrw", "bs": "4096", "ioengine": "libaio", "iodepth": "12"}
    read_, write = job.directions["read"], job.directions["write"]
    assert read_.iops == 712 and read_.bw_bytes == 2918400
    assert read_.clat_ns.mean_ns == 66097970.0
    assert read_.clat_ns.max_ns == 1264.8e6  # "max=1264.8k" usec
    assert read_.clat_ns.min_ns == 62000
    assert read_.clat_ns.stddev_ns == 87266390.0
    assert read_.clat_ns.percentiles["99.0"] == 439e6
    assert read_.clat_ns.percentiles["99.99"] == 1200e6
    assert len(read_.clat_ns.percentiles) == 17
    assert read_.slat_ns.mean_ns == 81810.0
    assert read_.lat_ns.max_ns == 1264.9e6
    assert read_.lat_ns.percentiles == {}
    assert read_.bw_summary.min == 280 * 1024 and read_.bw_summary.max == 1152 * 1024
    assert read_.bw_summary.mean == pytest.approx(713.87 * 1024)
    assert read_.bw_summary.samples == 240 and read_.bw_summary.agg_pct == 25.06
    assert (read_.iops_summary.min, read_.iops_summary.max, read_.iops_summary.samples) == (70, 288, 240)
    assert read_.iops_summary.mean == 178.41 and read_.iops_summary.agg_pct is None
    assert (read_.short_ios, read_.drop_ios) == (0, 0)
    assert write.iops == 330 and write.clat_ns.mean_ns == 2268270.0
    assert (job.usr_cpu_pct, job.sys_cpu_pct, job.ctx, job.majf, job.minf) == (1.03, 3.11, 31178, 0, 123)
    assert job.iodepth_level_pct == {"1": 0.1, "2": 0.1, "4": 0.1, "8": 99.9, "16": 0.0, "32": 0.0, ">=64": 0.0}
    assert job.iodepth_submit_pct["4"] == 100.0 and job.iodepth_complete_pct["16"] == 0.1
    assert job.latency_dist_pct["100us"] == 0.01
    assert job.latency_dist_pct["2ms"] == 12.90
    assert job.latency_dist_pct["1000ms"] == 0.06
    assert len(job.latency_dist_pct) == 15
    assert job.sync is None and job.steadystate is None
    assert result.disk_util == () and result.notes == ()


def test_interrupted_run_keeps_its_signal_line_as_a_note() -> None:
    result = parse_fio_text(read("seed000-03.txt"))
    assert result.interrupted
    assert result.notes == ("fio: terminating on signal 2",)


def test_gtod_reduce_means_not_measured_not_zero() -> None:
    for name in ("seed000-01.txt", "seed000-13.txt", "public/02-fio2.1.11-randread-gtod-reduce.txt"):
        for d in parse_fio_text(read(name)).jobs[0].directions.values():
            assert d.lat_ns is None and d.clat_ns is None and d.slat_ns is None


def test_sync_counted_from_the_fourth_issued_number() -> None:
    job = parse_fio_text(read("seed000-04.txt")).jobs[0]
    assert job.sync is not None and job.sync.total_ios == 1 and job.sync.lat_ns is None
    write = job.directions["write"]
    assert write.clat_ns.min_ns == 494 and write.clat_ns.max_ns == 121278e3  # "max=121278k" nsec
    assert write.slat_ns.max_ns == 5506e3
    assert job.latency_dist_pct["500ns"] == 0.01 and job.latency_dist_pct["250ms"] == 0.08


def test_fio2_old_format_details() -> None:
    result = parse_fio_text(read("public/03-fio2.2.10-randwrite-8jobs.txt"))
    job = result.jobs[0]
    assert job.name == "randwrite"
    write = job.directions["write"]
    assert write.clat_ns.max_ns == 4251.4e6  # "max=4251.4K" usec
    assert write.clat_ns.min_ns == 0
    assert write.slat_ns.max_ns == 4122.9e6
    assert (write.total_ios, write.short_ios, write.drop_ios) == (1048576, 0, 0)
    assert write.bw_summary is None  # fio 2.x prints no samples=
    assert job.latency_dist_pct[">=2000ms"] == 0.01 and job.latency_dist_pct["2us"] == 0.01
    assert result.disk_util[0].name == "sda"
    assert result.disk_util[0].write_merges == 587510 and result.disk_util[0].util_pct == 93.94

    old = parse_fio_text(read("public/01-fio2.0.2-write-verify.txt")).jobs[0]
    assert old.directions["read"].drop_ios is None  # fio 2.0 printed no drop counts
    assert old.latency_dist_pct == {"4us": 35.55, "10us": 14.26, "20us": 0.20}
    assert old.options["bs"] == "4096"


def test_disk_stats_names_and_sectors() -> None:
    pxd = parse_fio_text(read("public/02-fio2.1.11-randread-gtod-reduce.txt")).disk_util
    assert [(d.name, d.read_ios, d.write_ios, d.in_queue_ms, d.util_pct) for d in pxd] == [
        ("pxd!pxd110428589532375940", 1043909, 5, 12310012, 100.0)
    ]
    vda = parse_fio_text(read("public/16-fio3.36dev-read-libaio.txt")).disk_util[0]  # has sectors=
    assert (vda.read_ios, vda.read_ticks_ms, vda.util_pct, vda.aggregate) == (311248, 7615, 98.10, False)


def test_mixed_size_range_and_fdatasync() -> None:
    assert parse_fio_text(read("public/10-fio3.23-randrw-8jobs.txt")).jobs[0].options["bs"] == "4096-32768"
    job = parse_fio_text(read("public/11-fio3.25-fdatasync-crlf.txt")).jobs[0]
    assert job.sync.total_ios == 0  # fdatasync is not counted in "issued rwts", but timed
    assert job.sync.lat_ns.mean_ns == 192480.0
    assert job.sync.lat_ns.percentiles["99.0"] == 260e3 and job.sync.lat_ns.max_ns == 345e3
    # "short=5631,0,0,0": fio counts something in the read slot of a write-only job; the
    # read direction did no I/O and is omitted, so the figure is not attached anywhere
    assert job.directions["write"].short_ios == 0 and "read" not in job.directions
    assert job.directions["write"].clat_ns.percentiles["99.99"] == 58112


def test_four_jobs_without_group_reporting() -> None:
    result = parse_fio_text(read("public/12-fio3.25-4jobs-no-group-reporting-crlf.txt"))
    assert [j.name for j in result.jobs] == ["seq-write"] * 4
    assert [j.directions["write"].runtime_ms for j in result.jobs] == [60410, 60190, 60650, 60907]
    assert [j.directions["write"].total_ios for j in result.jobs] == [72, 72, 71, 72]
    assert [j.directions["write"].bw_bytes for j in result.jobs] == [
        pytest.approx(float(Decimal(x) * MiB)) for x in ("38.1", "38.3", "37.5", "37.8")
    ]
    assert result.jobs[1].directions["write"].clat_ns.mean_ns == 832.71e6
    assert result.jobs[0].options["bs"] == str(32 * MiB)
    assert result.jobs[0].latency_dist_pct == {"100ms": 36.11, "2000ms": 63.89}


def test_clat_prio_lines_and_tables_are_skipped() -> None:
    clat = parse_fio_text(read("public/13-fio3-2022dev-clat-prio.txt")).jobs[0].directions["read"].clat_ns
    assert (clat.min_ns, clat.max_ns, clat.mean_ns) == (2e6, 2135e6, 217.97e6)
    assert clat.percentiles["1.0"] == 8e6 and clat.percentiles["99.99"] == 2140e6  # not a prio table's


def test_windows_output_warning_is_a_note() -> None:
    result = parse_fio_text(read("public/15-fio3.35-windows-fdatasync-crlf.txt"))
    assert result.notes[0].startswith("fio: this platform does not support process shared mutexes")
    assert result.jobs[0].sync.lat_ns.mean_ns == 1005.76e3
    assert result.time_text == "Wed Jun 28 02:40:07 2023"


def test_verify_errors_before_the_results_are_notes() -> None:
    notes = parse_fio_text(read("public/17-fio3.39dev-write-verify-rw.txt")).notes
    assert notes[0] == "fio: got pattern '10', wanted '70'. Bad bits 2"
    assert notes[2].startswith("pattern: verify failed at file test.0.0 offset 200704")


def test_steadystate_line() -> None:
    job = parse_fio_text(read("public/18-fio3.41dev-steadystate.txt")).jobs[0]
    assert job.steadystate == {
        "attained": 1,
        "criterion": "2.700",
        "criterion_name": "lat mean dev",
        "data": {"bw_mean": size("15.2", GiB), "iops_mean": 3976000, "lat_mean": 152},
    }


def test_error_job_with_continue_on_error() -> None:
    result = parse_fio_text(read("local/fio3.33-direct-misaligned-err22-continue-on-error.txt"))
    (job,) = result.jobs
    assert (job.name, job.error, job.directions) == ("coe", 22, {})
    assert result.error == 22
    assert (job.total_err, job.first_error) == (1, 22)
    assert job.options == {"rw": "write", "bs": "1000", "ioengine": "psync", "iodepth": "1",
                           "description": "hello world"}
    assert job.sync is None
    assert any(n.startswith("fio: pid=") and "err=22" in n for n in result.notes)


# --------------------------------------------------------------------------- against fio's JSON


def _json_part(text: str) -> dict:
    start = text.index("\n{") + 1 if not text.startswith("{") else 0
    doc, _ = json.JSONDecoder().raw_decode(text, start)
    return doc


def _ceil_div(ns: int, unit: int) -> int:
    return -(-ns // unit) * unit


@pytest.mark.parametrize("name", JSON_NORMAL)
def test_text_agrees_with_json_of_the_same_run(name: str) -> None:
    text = read(f"local/{name}")
    doc = _json_part(text)
    result = parse_fio_text(text)
    entries = doc.get("client_stats") or doc["jobs"]
    assert len(result.jobs) == len(entries)
    assert result.fio_version == doc["fio version"]
    for job, entry in zip(result.jobs, entries):
        assert job.name == entry["jobname"]
        assert job.groupid == entry["groupid"] and job.error == entry["error"]
        assert job.usr_cpu_pct == pytest.approx(entry["usr_cpu"], abs=0.0051)
        assert job.sys_cpu_pct == pytest.approx(entry["sys_cpu"], abs=0.0051)
        assert (job.ctx, job.majf, job.minf) == (entry["ctx"], entry["majf"], entry["minf"])
        for key, text_map in (("iodepth_level", job.iodepth_level_pct), ("iodepth_submit", job.iodepth_submit_pct),
                              ("iodepth_complete", job.iodepth_complete_pct)):
            assert set(text_map) == set(entry[key])
            for k, v in text_map.items():
                assert v == pytest.approx(entry[key][k], abs=0.051)
        json_buckets = {f"{b}{u}": v for key, u in (("latency_ns", "ns"), ("latency_us", "us"), ("latency_ms", "ms"))
                        for b, v in entry[key].items()}
        assert set(job.latency_dist_pct) == {k for k, v in json_buckets.items() if v > 0}
        for k, v in job.latency_dist_pct.items():
            assert v == pytest.approx(json_buckets[k], abs=0.0051)
        for direction, got in job.directions.items():
            want = entry[direction]
            assert got.runtime_ms == want["runtime"]
            assert got.total_ios == want["total_ios"]
            assert (got.short_ios, got.drop_ios) == (want["short_ios"], want["drop_ios"])
            assert got.iops == pytest.approx(want["iops"], rel=0.01)  # 3 significant figures
            assert got.bw_bytes == pytest.approx(want["bw_bytes"], rel=0.01)
            assert got.io_bytes == pytest.approx(want["io_bytes"], rel=0.01)
            for kind in ("slat", "clat", "lat"):
                stats, jstats = getattr(got, f"{kind}_ns"), want[f"{kind}_ns"]
                if jstats["N"] == 0:
                    assert stats is None
                    continue
                # avg/stdev: 2 decimals of the line's unit (nsec or usec in these runs)
                assert stats.mean_ns == pytest.approx(jstats["mean"], rel=1e-4, abs=5.1)
                assert stats.stddev_ns == pytest.approx(jstats["stddev"], rel=1e-4, abs=5.1)
                # min/max: usec lines print whole (truncated) usec, "4882.5k" keeps 5 digits
                assert abs(stats.min_ns - jstats["min"]) <= max(1000, jstats["min"] * 1e-4)
                assert abs(stats.max_ns - jstats["max"]) <= max(1000, jstats["max"] * 1e-4)
                jpct = jstats.get("percentile", {})
                assert len(stats.percentiles) == len(jpct)
                for p, ns in jpct.items():
                    # fio prints ceil(ns / unit) in the table's unit (nsec, usec or msec)
                    assert stats.percentiles[f"{float(p)!r}"] in (ns, _ceil_div(ns, US), _ceil_div(_ceil_div(ns, US), MS))
            assert got.bw_summary.samples == want["bw_samples"]
            assert got.bw_summary.min == want["bw_min"] * 1024 and got.bw_summary.max == want["bw_max"] * 1024
            assert got.bw_summary.mean == pytest.approx(want["bw_mean"] * 1024, abs=0.0051 * 1024)
            assert got.bw_summary.agg_pct == pytest.approx(want["bw_agg"], abs=0.0051)
            assert got.iops_summary.samples == want["iops_samples"]
            assert (got.iops_summary.min, got.iops_summary.max) == (want["iops_min"], want["iops_max"])
        # directions that did I/O in the JSON are all in the text parse, except the bogus
        # "mixed: IOPS=0, BW=0 (0)(0B/..)" fio 3.33 prints under unified_rw_reporting=both
        json_dirs = {d for d in ("read", "write", "trim", "mixed") if entry.get(d, {}).get("io_bytes")}
        both = entry.get("job options", {}).get("unified_rw_reporting") == "both"
        assert set(job.directions) == (json_dirs - {"mixed"} if both else json_dirs)
        if "sync" in entry and entry["sync"]["total_ios"]:
            assert job.sync.total_ios == entry["sync"]["total_ios"]
            assert job.sync.lat_ns.mean_ns == pytest.approx(entry["sync"]["lat_ns"]["mean"], rel=1e-4)
            assert len(job.sync.lat_ns.percentiles) == len(entry["sync"]["lat_ns"]["percentile"])
    disks = doc.get("disk_util", [])
    assert len(result.disk_util) >= len(disks)
    for got, want in zip(result.disk_util, disks):
        assert got.name == want["name"]
        assert (got.read_ios, got.write_ios, got.read_merges, got.write_merges) == (
            want["read_ios"], want["write_ios"], want["read_merges"], want["write_merges"])
        assert (got.read_ticks_ms, got.write_ticks_ms, got.in_queue_ms) == (
            want["read_ticks"], want["write_ticks"], want["in_queue"])
        assert got.util_pct == pytest.approx(want["util"], abs=0.0051)


def test_unified_both_mixed_line_with_no_io_is_dropped() -> None:
    job = parse_fio_text(read("local/fio3.33-randrw-unified-both-fsync-latpct-json-normal.txt")).jobs[0]
    assert set(job.directions) == {"read", "write"}
    write = job.directions["write"]
    assert write.lat_ns.percentiles["99.0"] == 13888  # "lat percentiles (nsec)" beside clat's
    assert write.clat_ns.percentiles["99.0"] == 13376
    assert job.sync.total_ios == 3140 and job.sync.lat_ns.percentiles["99.99"] == 1926e3


def test_unified_mixed_direction() -> None:
    job = parse_fio_text(read("local/fio3.33-randrw-unified-mixed-json-normal.txt")).jobs[0]
    assert set(job.directions) == {"mixed"}
    assert job.directions["mixed"].total_ios == 40767  # "issued rwts: total=40767,0,0,0"
    assert job.directions["mixed"].iops == 40.7e3


def test_client_server_text() -> None:
    result = parse_fio_text(read("local/fio3.33-client-server-2clients-normal-json.txt"))
    assert [(j.name, j.hostname, j.is_aggregate) for j in result.jobs] == [
        ("cs", "vm", False), ("cs", "vm", False), ("All clients", None, True)]
    assert [d.hostname for d in result.disk_util] == ["vm", "vm"]
    assert result.fio_version == "fio-3.33"
    agg = result.jobs[2].directions["read"]  # "BW=227Mi (239M)": no "B/s" on the aggregate
    assert agg.bw_bytes == 227 * MiB and agg.io_bytes == 228 * MiB and agg.total_ios == 58294
    assert result.jobs[0].options["rw"] == "randread"


# --------------------------------------------------------------------------- hand-made variations

NEW_BLOCK = """\
hand: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024
  write: IOPS=46.0k, BW=12.6MiB/s (13.2MB/s)(758MiB/60001msec); 0 zone resets
    slat (nsec): min=900, max=12.5M, avg=1200.50, stdev=30.25
    clat (nsec): min=10519, max=57976, avg=13462.14, stdev=2609.65
     lat (usec): min=11, max=1264.8k, avg=14.01, stdev=-nan
    clat percentiles (nsec):
     |  1.00th=[11584],  5.00th=[11712], 10.00th=[11840], 20.00th=[12096],
     | 99.00th=[23168], 99.50th=[27264], 99.90th=[38656], 99.95th=[43264],
     | 99.99th=[58112]
   bw (  KiB/s): min=12000, max=13000, per=100.00%, avg=12900.00, stdev=10.00, samples=60
   iops        : min=45000, max=47000, avg=46000.00, stdev= 5.00, samples=60
  lat (usec)   : 20=96.89%, 50=3.09%, 100=0.02%
  cpu          : usr=2.99%, sys=21.84%, ctx=11253, majf=0, minf=11
     issued rwts: total=0,2760000,0,0 short=0,0,0,0 dropped=0,0,0,0
"""


def test_hand_made_new_format_block() -> None:
    job = parse_fio_text(NEW_BLOCK).jobs[0]
    assert job.name == "hand" and job.options == {}
    write = job.directions["write"]
    assert write.iops == 46000 and write.bw_bytes == pytest.approx(12.6 * MiB)
    assert write.io_bytes == 758 * MiB and write.runtime_ms == 60001
    assert write.slat_ns.max_ns == 12.5e6  # "M" suffix
    assert write.lat_ns.max_ns == 1264.8e6 and math.isnan(write.lat_ns.stddev_ns)
    assert write.clat_ns.percentiles["1.0"] == 11584 and write.clat_ns.percentiles["99.99"] == 58112
    assert write.bw_summary.mean == 12900 * 1024 and write.iops_summary.stddev == 5.0
    assert write.total_ios == 2760000


@pytest.mark.parametrize(
    ("line", "iops", "bw_bytes", "io_bytes"),
    [
        ("  read: IOPS=1529k, BW=5971MiB/s (6261MB/s)(179GiB/30765msec)", 1529e3, 5971 * MiB, 179 * GiB),
        ("  read: IOPS=10.2M, BW=38.9GiB/s (41.8GB/s)(389GiB/10001msec)", 10.2e6, 38.9 * GiB, 389 * GiB),
        ("  read: IOPS=712, BW=2850KiB/s (2918kB/s)(83.9MiB/30134msec); Cachehit=12.50%", 712, 2850 * KiB,
         size("83.9", MiB)),
        # kb_base=1000: the primary figures are SI (fio 3.33, real line)
        ("  read: IOPS=23.4k, BW=96.0MB/s (91.5MiB/s)(96.1MB/1001msec)", 23.4e3, 96.0e6, 96.1e6),
        # unit_base=1: bits (fio 3.33, real line)
        ("  read: IOPS=26.9k, BW=839Mibit/s (880Mbit/s)(105MiB/1001msec)", 26.9e3, 839 * MiB / 8, 105 * MiB),
        ("  read : io=4096.0MB, bw=41384KB/s, iops=10346, runt=101350msec", 10346, 41384 * KiB, 4096 * MiB),
        ("  read : io=1024.0KB, bw=1000.0MB/s, iops=256000 , runt=     1msec", 256000, 1000 * MiB, 1024 * KiB),
        ("  write: io=8192.0MB, bw=1.5GB/s, iops=8289.3K, runt=  5000msec", 8289.3e3, 1.5 * GiB, 8192 * MiB),
        ("\tread: IOPS=41.0k, BW=164MiB/s (172MB/s)(50.0MiB/305msec)", 41e3, 164 * MiB, 50 * MiB),
    ],
)
def test_direction_line_forms(line: str, iops: float, bw_bytes: float, io_bytes: int) -> None:
    text = "x: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n" + line + "\n"
    (d,) = parse_fio_text(text).jobs[0].directions.values()
    assert d.iops == pytest.approx(iops) and d.bw_bytes == pytest.approx(bw_bytes)
    assert d.io_bytes == pytest.approx(io_bytes, abs=1)


def test_kb_base_1000_summary_units() -> None:
    text = (
        "kb: (groupid=0, jobs=1): err= 0: pid=1\n"
        "  read: IOPS=27.1k, BW=111MB/s (106MiB/s)(333MB/3001msec)\n"
        "   bw (   kB/s): min=96440, max=125085, per=100.00%, avg=110541.80, stdev=13127.00, samples=5\n"
        "  write: IOPS=27.1k, BW=1111MB/s (1060MiB/s)(3333MB/3001msec)\n"
        "   bw (  MiB/s): min= 1000, max= 1200, per=100.00%, avg=1100.00, stdev=1.00, samples=5\n"
    )
    job = parse_fio_text(text).jobs[0]
    assert job.directions["read"].bw_summary.min == 96440 * 1000
    assert job.directions["write"].bw_summary.mean == 1100 * 1000**2  # fio labels MB "MiB" here


def test_units_change_line_to_line_and_3_column_tables() -> None:
    d = parse_fio_text(read("public/07-fio3.12dev-read-offload-3col-pct.txt")).jobs[0].directions["read"]
    assert d.clat_ns.max_ns == 5941.5e3 and d.lat_ns.max_ns == 5950.7e3
    assert [d.clat_ns.percentiles[k] for k in ("1.0", "10.0", "20.0", "99.95")] == [628, 700, 740, 651264]
    write = parse_fio_text(read("public/05-fio3.1-randrw-libaio.txt")).jobs[0].directions["write"]
    assert write.clat_ns.max_ns == 10425e3 and write.lat_ns.max_ns == 10442e3  # nsec line, usec line


def test_cr_only_tabs_and_noise_around() -> None:
    text = (
        "user@host:~$ fio job.fio\r"
        "Jobs: 1 (f=1): [r(1)][50.0%][r=3MiB/s][r=700 IOPS][eta 00m:01s]\r"
        "^Cbs: 1 (f=1): [r(1)][60.0%]\r"
        "fio: terminating on signal 2\r\r"
        "t: (groupid=0, jobs=1): err= 0: pid=4: Fri May 28 12:32:22 2021\r"
        "\tread: IOPS=712, BW=2850KiB/s (2918kB/s)(83.9MiB/30134msec)\r"
        "\t clat (usec): min=62, max=1264.8k, avg=66097.97, stdev=87266.39\r"
        "\tcpu          : usr=1.03%, sys=3.11%, ctx=31178, majf=0, minf=123\r"
        "user@host:~$ \r"
    )
    result = parse_fio_text(text)
    assert result.interrupted
    (job,) = result.jobs
    assert job.directions["read"].clat_ns.mean_ns == 66097970.0 and job.usr_cpu_pct == 1.03


def test_progress_line_glued_to_the_header() -> None:
    text = ("Jobs: 1 (f=1): [m(1)][100.0%][r=3032KiB/s][eta 00m:00s]vm: (groupid=2, jobs=4): err= 0: pid=3691\n"
            "   read: IOPS=712, BW=2850KiB/s (2918kB/s)(83.9MiB/30134msec)\n")
    job = parse_fio_text(text).jobs[0]
    assert (job.name, job.groupid) == ("vm", 2)


def test_direction_lines_without_a_job_header() -> None:
    only = parse_fio_text("   read: IOPS=712, BW=2850KiB/s (2918kB/s)(83.9MiB/30134msec)\n")
    assert only.jobs[0].name == "unknown" and only.jobs[0].directions["read"].iops == 712
    named = parse_fio_text(
        "vm: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 4096B-4096B, ioengine=libaio, iodepth=12\n"
        "fio-3.7\n"
        "   read: IOPS=712, BW=2850KiB/s (2918kB/s)(83.9MiB/30134msec)\n"
    )
    assert named.jobs[0].name == "vm" and named.fio_version == "fio-3.7"
    assert named.jobs[0].options["bs"] == "4096,8192,4096"


def test_error_header_with_parentheses_and_md_aggregate_disk() -> None:
    text = (
        "j: (groupid=1, jobs=1): err= 5 (file:io_u.c:1787, func=io_u error, error=Input/output error): "
        "pid=9: Mon Jan  1 00:00:00 2024\n"
        "  write: IOPS=10, BW=40.0KiB/s (41.0kB/s)(400KiB/10000msec); 0 zone resets\n"
        "\n"
        "Disk stats (read/write):\n"
        "    md0: ios=0/100, merge=0/0, ticks=0/0, in_queue=0, util=0.00%, aggrios=0/50, aggrmerge=0/0, "
        "aggrticks=0/12, aggrin_queue=12, aggrutil=1.50%\n"
        "  sda: ios=0/50, merge=0/0, ticks=0/12, in_queue=12, util=1.50%\n"
    )
    result = parse_fio_text(text)
    assert result.jobs[0].error == 5 and result.jobs[0].groupid == 1 and result.error == 5
    assert [(d.name, d.aggregate, d.write_ios) for d in result.disk_util] == [("md0", True, 100), ("sda", False, 50)]


def test_trim_and_issued_rwt_with_three_numbers() -> None:
    text = (
        "t: (groupid=0, jobs=1): err= 0: pid=1\n"
        "  trim: IOPS=100, BW=400KiB/s (410kB/s)(4000KiB/10000msec)\n"
        "     issued rwt: total=0,0,1000, short=0,0,3, dropped=0,0,2\n"
    )
    job = parse_fio_text(text).jobs[0]
    trim = job.directions["trim"]
    assert (trim.total_ios, trim.short_ios, trim.drop_ios) == (1000, 3, 2)
    assert job.sync is None


def test_parse_is_repeatable_and_records_are_frozen() -> None:
    text = read("seed000-10.txt")
    copy = "".join(text)
    a, b = parse_fio_text(text), parse_fio_text(text)
    assert a == b and text == copy
    with pytest.raises(AttributeError):
        a.jobs[0].name = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- sniffing and errors


@pytest.mark.parametrize("name", all_fixtures())
def test_every_fixture_looks_like_fio_text(name: str) -> None:
    assert looks_like_fio_text(read(name))


JSON_DOC = """{
  "fio version" : "fio-3.33",
  "jobs" : [
    {"jobname" : "t", "groupid" : 0, "error" : 0,
     "read" : {"io_bytes" : 4096, "iops" : 1.0, "runtime" : 1000}}
  ]
}
"""
TERSE = "3;fio-3.33;terse;0;0;1984;27555;6888;72;0;0;0.000000;0.000000;44;756;130.583048;55.943661\n"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   \n\r\n\t", "empty"),
        ("hello world, no fio here", "no fio result block"),
        ("x" * 500, "no fio result block"),
        (JSON_DOC, "JSON"),
        (TERSE, "no fio result block"),
        ("t: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n", "truncated"),
        ("Run status group 0 (all jobs):\n   READ: bw=1MiB/s (1MB/s), io=1MiB (1MB), run=1-1msec\n",
         "no fio result block"),
    ],
)
def test_no_result_block_is_a_one_line_parse_error(text: str, fragment: str) -> None:
    assert not looks_like_fio_text(text) or "groupid" in text
    with pytest.raises(FioParseError) as info:
        parse_fio_text(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message and len(message) < 160


def test_non_str_input() -> None:
    assert looks_like_fio_text(None) is False  # type: ignore[arg-type]
    with pytest.raises(FioParseError):
        parse_fio_text(b"read: IOPS=1")  # type: ignore[arg-type]


_FIXTURE_TEXTS = [read(name) for name in all_fixtures()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("readwitIOPSBW=:,.()[]|%kKMGiB/smecun 0123456789\n\r\t<>-;")), max_size=400))
def test_any_text_parses_or_raises_fio_parse_error(text: str) -> None:
    try:
        result = parse_fio_text(text)
    except FioParseError as exc:
        assert "\n" not in str(exc)
    else:
        assert result.jobs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_FIXTURE_TEXTS) - 1), st.data())
def test_damaged_fixtures_parse_or_raise_fio_parse_error(index: int, data: st.DataObject) -> None:
    lines = _FIXTURE_TEXTS[index].splitlines(keepends=True)
    start = data.draw(st.integers(0, len(lines)))
    stop = data.draw(st.integers(start, len(lines)))
    junk = data.draw(st.text(max_size=40))
    cut = data.draw(st.integers(0, 200))
    damaged = "".join(lines[:start]) + junk + "".join(lines[stop:])
    for text in (damaged, damaged[:-cut] if cut else damaged):
        try:
            parse_fio_text(text)
        except FioParseError:
            pass


# --------------------------------------------------------------------------- cut anywhere


_CUT_OUTPUTS = sorted((DATA / "public").glob("*.txt")) + sorted(DATA.glob("seed000-*.txt"))


def _cut_exempt(text: str, cut: int) -> bool:
    """A cut no reader can tell from a whole, shorter output: at a line's end (or in the blanks
    before the next line; the lines after it are gone, each whole one before it is read), or
    inside a line's last number (``dev=2`` of ``dev=2.700``)."""
    before, after = text[:cut], text[cut:]
    if not before.strip() or re.match(r"[ \t]*(\r?\n|$)", after) or re.match(r"\s*$", before.rsplit("\n", 1)[-1]):
        return True
    return bool(re.match(r"[\d.]*\d[%]?[ \t]*(\r?\n|$)", after) and re.search(r"[\d.]$", before))


@pytest.mark.parametrize("path", _CUT_OUTPUTS, ids=[p.name for p in _CUT_OUTPUTS])
def test_an_output_cut_at_any_of_its_last_200_bytes_is_refused_or_whole(path):
    """Every cut in the last 200 bytes of a real output: refused in one line (FioParseError), or
    read with every job figure the whole output has, or a cut no reader can see (a line's end,
    a line's last number).  A cut inside a label or a line (``write: IO``, ``lat (u``,
    ``clat perc``, ``issued rwts: tot``) is never read as a whole output."""
    text = path.read_text(errors="replace")
    whole = parse_fio_text(text).jobs
    refused = 0
    for cut in range(max(0, len(text) - 200), len(text)):
        try:
            got = parse_fio_text(text[:cut]).jobs
        except FioParseError as exc:
            assert "\n" not in str(exc)
            refused += 1
            continue
        assert got == whole or _cut_exempt(text, cut), (cut, text[max(0, cut - 60):cut])
    assert refused > 0  # every one of these outputs has a line inside its last 200 bytes that a cut can break


@pytest.mark.parametrize("tail", ["write: IO", "read: I", "write:", "lat (u", "clat perc", "clat percentiles (us", "issued rwts: tot",
                                  "cpu          : usr=1.2%, sys", "|  1.00th=[   12],  5.00th=[  1", "IO depths    : 1=100.0%, 2=0.0"])  # fmt: skip
def test_a_paste_ending_inside_a_line_is_refused(tail):
    text = (DATA / "public" / "05-fio3.1-randrw-libaio.txt").read_text()
    head = text[: text.index("  write: IOPS")]  # the whole read part, then the cut line
    with pytest.raises(FioParseError, match=r"^fio text output is cut: it ends (inside|after) .*; nothing of it is read"):
        parse_fio_text(head + "  " + tail)
    assert parse_fio_text(head).jobs[0].directions.keys() == {"read"}  # a read-only paste that ends at a line is read
