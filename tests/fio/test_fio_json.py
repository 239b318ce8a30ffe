"""Golden tests for storbench.fio.json over real fio 3.33 outputs.

The outputs live in tests/data/fio-json/ (copies of /work/shared/fixtures/fio-json/ plus
a few runs of our own, see README.md there).  Expected values were read by hand from the
files; they are fio's numbers, only converted where the model says so (KiB/s -> bytes/s).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storbench.errors import FioParseError
from storbench.fio.json import looks_like_fio_json, parse_fio_json
from storbench.model import DiskUtil, FioResult, LatencyStats, SampleSummary, SyncStats

DATA = Path(__file__).parent.parent / "data" / "fio-json"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "fio-json"

JSON_FILES = sorted(p.name for p in DATA.iterdir() if '"fio version"' in p.read_text())
NO_JSON_FILES = ["d_nonexistent_dir.stdout", "g_terse_v3.txt", "g_terse_default_2jobs.txt",
                 "i_lat_percentiles_only_terse.txt", "c_multi.fio"]


def text(name: str) -> str:
    return (DATA / name).read_text()


def parse(name: str) -> FioResult:
    return parse_fio_json(text(name))


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-12, abs=1e-9)


# --------------------------------------------------------------------------- the fixture set


def test_fixture_copies_are_complete_and_identical() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared fixtures not beside this checkout")
    for src in SHARED.iterdir():
        if '"fio version"' in src.read_text():
            assert (DATA / src.name).is_file(), f"{src.name} is not copied into tests/data/fio-json"
        if (DATA / src.name).is_file():
            assert (DATA / src.name).read_bytes() == src.read_bytes(), src.name


def test_every_json_fixture_is_covered() -> None:
    assert len(JSON_FILES) >= 38
    for name in ("status_interval.json", "io_uring_lat_percentiles.json", "numjobs2_trim_null.json",
                 "trim_file_err25.stdout", "e_json_plus_normal.txt", "a_direct_misaligned.stdout"):
        assert name in JSON_FILES


@pytest.mark.parametrize("name", JSON_FILES)
def test_every_fixture_parses_with_invariants(name: str) -> None:
    raw = text(name)
    assert looks_like_fio_json(raw)
    result = parse_fio_json(raw)
    assert result.fio_version == "fio-3.33"
    assert result.format in ("json", "json+")
    assert result.jobs and result.timestamp_s and result.time_text
    for job in result.jobs:
        for key, stats in job.directions.items():
            assert stats.direction == key
            assert stats.io_bytes > 0 or (stats.total_ios or 0) > 0  # no-I/O directions omitted
            for lat in (stats.lat_ns, stats.clat_ns, stats.slat_ns):
                assert lat is None or (lat.samples or 0) > 0  # never zeros for "not measured"
                for pkey in (lat.percentiles if lat else {}):
                    assert pkey == repr(float(pkey))
            for summary in (stats.bw_summary, stats.iops_summary):
                assert summary is None or summary.samples > 0
        assert job.sync is None or job.sync.total_ios > 0 or job.sync.lat_ns is not None
        assert all(k[-2:] in ("ns", "us", "ms") for k in job.latency_dist_pct)
        # fio 3.33's timed replay at depth 4 leaves 3 of its 200 I/Os out of its latency distribution
        # (98.5 %), as out of its byte counts (tests/trace/test_trace.py): real output, kept as it is
        low = 98.0 if name.startswith("replay_timed_qd4") else 99.0
        assert not job.latency_dist_pct or low < sum(job.latency_dist_pct.values()) < 101.0
    assert parse_fio_json(raw) == result  # pure and deterministic


@pytest.mark.parametrize("name", NO_JSON_FILES)
def test_files_without_json_are_rejected(name: str) -> None:
    raw = text(name)
    assert not looks_like_fio_json(raw)
    with pytest.raises(FioParseError, match=r"^not fio JSON output: no JSON object found"):
        parse_fio_json(raw)


# --------------------------------------------------------------------------- golden values


def test_randrw_direction_values() -> None:
    result = parse("h_randrw.json")
    assert (result.timestamp_s, result.time_text) == (1796040914, "Mon Nov 30 12:15:14 2026")
    assert result.format == "json" and result.notes == () and result.global_options == {}
    (job,) = result.jobs
    assert (job.name, job.groupid, job.error, job.elapsed_s, job.job_runtime_ms) == ("mix", 0, 0, 1, 220)
    assert (job.usr_cpu_pct, job.sys_cpu_pct, job.ctx, job.majf, job.minf) == (1.363636, 35.0, 2049, 0, 13)
    assert set(job.directions) == {"read", "write"}  # trim did no I/O
    read = job.direction("read")
    assert (read.io_bytes, read.bw_bytes, read.iops, read.runtime_ms) == (5840896, 26429393, 6452.488688, 221)
    assert (read.total_ios, read.short_ios, read.drop_ios) == (1426, 0, 0)
    assert read.slat_ns is None  # psync: N == 0
    assert read.clat_ns == LatencyStats(
        min_ns=41467, max_ns=975063, mean_ns=108600.754558, stddev_ns=40768.799935, samples=1426,
        percentiles={"1.0": 67072, "5.0": 77312, "10.0": 83456, "20.0": 88576, "30.0": 92672, "40.0": 96768,
                     "50.0": 99840, "60.0": 104960, "70.0": 111104, "80.0": 126464, "90.0": 146432,
                     "95.0": 158720, "99.0": 189440, "99.5": 222208, "99.9": 790528, "99.95": 978944,
                     "99.99": 978944})
    assert read.lat_ns == LatencyStats(41658, 975314, 108790.135344, 40780.262113, samples=1426)
    assert read.bw_summary is None and read.iops_summary is None  # bw_samples == 0
    write = job.direction("write")
    assert (write.io_bytes, write.bw_bytes, write.iops, write.total_ios) == (2547712, 11528108, 2814.479638, 622)
    assert write.clat_ns.mean_ns == 98885.146302 and write.clat_ns.percentiles["99.0"] == 168960
    assert job.sync is None  # total_ios 0 and N 0
    assert job.iodepth_level_pct == {"1": 100.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}
    assert job.iodepth_submit_pct["4"] == 100.0 and job.iodepth_complete_pct["0"] == 0.0
    assert job.latency_dist_pct["50us"] == 0.244141
    assert job.latency_dist_pct["100us"] == 54.052734
    assert job.latency_dist_pct["250us"] == 45.3125
    assert job.latency_dist_pct["1000us"] == 0.097656
    assert job.latency_dist_pct["2ns"] == 0.0 and job.latency_dist_pct[">=2000ms"] == 0.0
    assert len(job.latency_dist_pct) == 32
    assert job.options == {"name": "mix", "directory": "data", "size": "8m", "bs": "4k", "rw": "randrw",
                           "rwmixread": "70", "direct": "1"}
    assert (job.hostname, job.port, job.is_aggregate, job.steadystate) == (None, None, False, None)
    assert (job.total_err, job.first_error) == (None, None)
    assert result.disk_util == (DiskUtil("vda", 832, 374, 0, 0, 68, 28, 96, 39.285714),)


def test_unified_rw_reporting_both_adds_mixed() -> None:
    (job,) = parse("h_randrw_unified_both.json").jobs
    assert list(job.directions) == ["read", "write", "mixed"]
    mixed = job.direction("mixed")
    assert (mixed.io_bytes, mixed.bw_bytes, mixed.iops, mixed.runtime_ms, mixed.total_ios) == (
        8388608, 36157793, 8827.586207, 232, 2048)
    assert mixed.clat_ns.samples == 2048 and mixed.clat_ns.mean_ns == 111136.871094
    assert mixed.clat_ns.percentiles["99.99"] == 378880
    assert job.direction("read").iops == 6146.551724
    assert job.options["unified_rw_reporting"] == "both"


def test_json_plus_is_detected_and_bins_ignored() -> None:
    result = parse("b_jsonplus.json")
    assert result.format == "json+"
    read = result.jobs[0].direction("read")
    assert (read.io_bytes, read.iops, read.total_ios) == (8388608, 8094.86166, 2048)
    assert read.clat_ns.samples == 2048 and read.clat_ns.min_ns == 60653 and read.clat_ns.max_ns == 1320923
    assert read.clat_ns.percentiles["99.99"] == 1318912 and len(read.clat_ns.percentiles) == 17
    assert parse("h_randrw.json").format == "json"


def test_group_reporting_one_result_with_global_options_merged() -> None:
    result = parse("c_numjobs_group_reporting.json")
    assert result.global_options == {"directory": "/srv/bench/data", "size": "4m", "bs": "4k",
                                      "rw": "randread", "ioengine": "psync", "runtime": "1"}
    (job,) = result.jobs
    assert job.name == "jobA" and job.job_runtime_ms == 3000 and job.ctx == 8685
    assert job.options["rw"] == "randwrite"  # the job's value wins over the global one
    assert job.options["directory"] == "/srv/bench/data"
    read, write = job.direction("read"), job.direction("write")
    assert (read.io_bytes, read.iops, read.total_ios) == (30793728, 7510.48951, 7518)
    assert read.bw_summary == SampleSummary(30799 * 1024, 30799 * 1024, 30799.0 * 1024, 0.0, 2, agg_pct=100.0)
    assert read.iops_summary == SampleSummary(7699, 7699, 7699.0, 0.0, 2, agg_pct=None)
    assert (write.io_bytes, write.bw_bytes, write.iops) == (899325952, 898427524, 219342.657343)
    assert write.clat_ns.percentiles["99.0"] == 12352 and write.clat_ns.mean_ns == 2952.106175
    assert result.disk_util[0].util_pct == 79.59799


def test_without_group_reporting_one_result_per_job() -> None:
    result = parse("c_numjobs_no_group_reporting.json")
    assert [j.name for j in result.jobs] == ["jobA", "jobA", "jobB"]
    a1, a2, b = result.jobs
    assert a1.direction("read").iops == 5761.238761 and a2.direction("read").iops == 5835.164835
    assert a1.direction("read").bw_summary.agg_pct == 46.583408
    assert a1.direction("read").bw_summary.mean == 21608.0 * 1024
    assert list(b.directions) == ["write"] and b.direction("write").total_ios == 184063
    assert b.options["rw"] == "randwrite" and a1.options["numjobs"] == "2" and a1.options["rw"] == "randread"
    assert (b.usr_cpu_pct, b.sys_cpu_pct) == (15.9, 70.8)


def test_valueless_flags_vanish_but_parse() -> None:
    result = parse("c_valueless_flags_omitted_from_options.json")
    assert result.global_options == {"runtime": "200ms"}  # time_based, group_reporting gone
    (job,) = result.jobs
    assert job.options == {"runtime": "200ms", "directory": "data", "size": "1m", "rw": "read"}
    assert job.direction("read").iops == 193696.517413 and job.direction("read").runtime_ms == 201


def test_client_server_with_all_clients_aggregate() -> None:
    raw = text("f_client_server.json")
    assert raw.startswith("\n{")
    result = parse_fio_json(raw)
    assert result.notes == () and result.timestamp_s == 1796040938
    assert result.global_options["time_based"] == "1"
    c1, c2, agg = result.jobs
    assert [j.name for j in result.jobs] == ["cs1", "cs1", "All clients"]
    assert [j.is_aggregate for j in result.jobs] == [False, False, True]
    assert all((j.hostname, j.port) == ("127.0.0.1", 8765) for j in result.jobs)
    assert c1.direction("read").iops == 8201.798202 and c2.direction("read").iops == 8189.810190
    assert c1.options == {**result.global_options, "numjobs": "2"}
    assert agg.options == result.global_options  # the aggregate has no "job options"
    read = agg.direction("read")
    assert (read.io_bytes, read.bw_bytes, read.iops, read.total_ios) == (67207168, 67140027, 16391.608392, 16408)
    assert read.clat_ns == LatencyStats(40095, 1671397, 119772.42266, 55741.821209, samples=16408)
    assert read.bw_summary.samples == 2 and read.bw_summary.min == 67808 * 1024
    assert agg.job_runtime_ms == 2000 and agg.elapsed_s is None
    assert c1.direction("read").clat_ns.percentiles["99.0"] == 222208
    assert c2.direction("read").clat_ns.percentiles["99.0"] == 224256
    assert read.clat_ns.percentiles == {}  # the aggregate carries no percentiles
    assert c1.latency_dist_pct["750us"] == 0.097442 and c1.latency_dist_pct["2ms"] == 0.060901
    assert agg.latency_dist_pct["250us"] == 59.318625 and agg.iodepth_level_pct["1"] == 100.0
    assert result.disk_util == (DiskUtil("vda", 14437, 344, 0, 205, 1186, 315, 1503, 83.453237,
                                         hostname="127.0.0.1"),)


def test_client_server_single_job() -> None:
    (job,) = parse("f_client_server_1job.json").jobs
    assert (job.name, job.hostname, job.port, job.is_aggregate) == ("cs1", "127.0.0.1", 8765, False)
    assert job.direction("read").clat_ns.percentiles["99.99"] == 10158080
    assert job.direction("read").bw_summary.agg_pct == 95.672357


def test_not_measured_is_none_never_zero() -> None:
    for name in ("p7_gtod_reduce.json", "p7_disable_clat_lat.json"):
        (job,) = parse(name).jobs
        read = job.direction("read")
        assert (read.io_bytes, read.total_ios) == (4194304, 1024)
        assert read.slat_ns is None and read.clat_ns is None and read.lat_ns is None
        assert read.bw_summary is None and read.iops_summary is None
        assert job.latency_dist_pct == {}  # all-zero buckets: not measured
        assert job.iodepth_level_pct["1"] == 100.0
    assert parse("p7_gtod_reduce.json").jobs[0].direction("read").iops == 9846.153846


def test_percentile_placement_follows_fio() -> None:
    lat_only = parse("i_lat_percentiles_only.json").jobs[0].direction("read")
    assert lat_only.clat_ns.percentiles == {} and lat_only.clat_ns.samples == 1024
    assert lat_only.lat_ns.percentiles["99.0"] == 309248 and lat_only.lat_ns.mean_ns == 176701.944336
    both = parse("i_lat_and_clat_percentiles.json").jobs[0].direction("read")
    assert both.clat_ns.percentiles["99.0"] == 246784 and both.lat_ns.percentiles["99.0"] == 248832
    custom = parse("i_custom_percentile_list.json").jobs[0].direction("read")
    assert custom.clat_ns.percentiles == {"50.0": 109056, "99.9": 342016, "99.99": 1630208, "100.0": 1630208}
    assert custom.lat_ns.percentiles == {}


def test_sync_objects() -> None:
    fsync = parse("j_fsync1.json").jobs[0].sync
    assert fsync.total_ios == 1023
    assert fsync.lat_ns.samples == 1023 and fsync.lat_ns.mean_ns == 374953.999022
    assert fsync.lat_ns.percentiles["99.0"] == 518144
    fdatasync = parse("j_fdatasync1.json").jobs[0].sync
    assert fdatasync == SyncStats(total_ios=0, lat_ns=fdatasync.lat_ns)  # fio counts 0 ios, N=1023
    assert fdatasync.lat_ns.samples == 1023 and fdatasync.lat_ns.min_ns == 120896
    assert parse("j_sync1_osync.json").jobs[0].sync is None  # O_SYNC: nothing there
    bogus = parse("j_fsync1_libaio.json").jobs[0].sync  # kept as printed; checks flag it
    assert bogus.total_ios == 1021 and bogus.lat_ns.max_ns == 312270104073
    assert bogus.lat_ns.percentiles["99.95"] == 17112760320


def test_steadystate_copied() -> None:
    (job,) = parse("p6_steadystate.json").jobs
    assert job.steadystate == {"ss": "iops:20.000000%", "duration": 2, "attained": 1,
                               "criterion": "4.036670%", "max_deviation": 409.5, "slope": 0.0,
                               "data": {"bw_mean": 41554514, "iops_mean": 10144, "iops": [9735, 10554],
                                        "bw": [39877573, 43231455]}}
    read = job.direction("read")
    assert read.bw_summary == SampleSummary(36504 * 1024, 42528 * 1024, 39511.285714 * 1024,
                                            2484.798765 * 1024, 7, agg_pct=98.911373)
    assert read.iops_summary == SampleSummary(9126, 10632, 9877.714286, 621.065137, 7)
    assert job.options["steadystate"] == "iops:20%" and job.job_runtime_ms == 3841


def test_errors_and_leading_noise() -> None:
    result = parse("a_direct_misaligned.stdout")
    assert result.error == 22 and result.jobs[0].error == 22
    assert result.notes == (
        "fio: first direct IO errored. File system may not support direct IO, or iomem_align= is bad, "
        "or invalid block size. Try setting direct=0.",
        "fio: pid=9516, err=22/file:io_u.c:1876, func=io_u error, error=Invalid argument")
    read = result.jobs[0].direction("read")  # one failed I/O: total_ios 1, io_bytes 0
    assert (read.io_bytes, read.total_ios, read.clat_ns) == (0, 1, None)
    enospc = parse("d_enospc.stdout")
    assert enospc.error == 28 and enospc.notes == (
        "fio: pid=5466, err=28/file:io_u.c:1876, func=io_u error, error=No space left on device",)
    assert enospc.jobs[0].direction("write").io_bytes == 14024704
    assert parse("a_enospc_output_file.json").notes == ()
    thread = parse("a_enospc_output_file_thread.json")
    assert thread.error == 28 and len(thread.notes) == 2 and thread.notes[0].startswith("fio: io_u error on file")
    assert thread.global_options == {}
    ramfs = parse("p2_odirect_rejected_ramfs.stdout")
    assert ramfs.error == 22 and ramfs.jobs[0].directions == {} and ramfs.disk_util == ()
    assert ramfs.notes[0].startswith("fio: pid=13980, err=22/file:filesetup.c:805")


def test_continue_on_error_counts() -> None:
    (job,) = parse("d_enospc_continue_on_error.stdout").jobs
    assert (job.error, job.total_err, job.first_error) == (28, 1, 28)
    write = job.direction("write")
    assert (write.io_bytes, write.bw_bytes, write.iops, write.total_ios) == (14024704, 483610482, 7413.793103, 215)
    assert write.clat_ns.samples == 214 and write.clat_ns.percentiles["99.0"] == 1548288
    assert job.options["continue_on_error"] == "all"


def test_json_normal_mix_keeps_header_lines_drops_classic_block() -> None:
    for name in ("e_json_plus_normal.txt", "e_normal_plus_json.txt"):
        result = parse(name)
        read = result.jobs[0].direction("read")
        assert read.io_bytes == 4194304 and read.total_ios == 1024
        assert result.notes[:3] == (
            "combo: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, "
            "ioengine=psync, iodepth=1", "fio-3.33", "Starting 1 process")
        assert not any("groupid=" in n or "Run status" in n or "IOPS=" in n for n in result.notes)
    assert parse("e_json_plus_normal.txt").notes[3] == "combo: Laying out IO file (1 file / 4MiB)"
    assert parse("e_json_plus_normal.txt").jobs[0].direction("read").iops == 8982.45614


def test_page_cache_and_null_engine_values() -> None:
    cpu = parse("p10_cpu_bound_null_engine.json")
    (job,) = cpu.jobs
    assert (job.usr_cpu_pct, job.sys_cpu_pct) == (98.75, 0.0) and cpu.disk_util == ()
    read = job.direction("read")
    assert (read.io_bytes, read.iops, read.total_ios) == (15870922752, 1936400.29985, 3874737)
    assert read.clat_ns.min_ns == 9 and read.clat_ns.percentiles["50.0"] == 50
    assert read.bw_summary.stddev == approx(95828.55324 * 1024)
    cached = parse("p1_pagecache_invalidate0.json")
    assert cached.disk_util[0].read_ios == 0


# --------------------------------------------------------------------------- our own runs


def test_status_interval_last_document_wins() -> None:
    raw = text("status_interval.json")
    assert raw.count('"fio version"') == 4
    result = parse_fio_json(raw)
    assert result.notes == () and result.timestamp_s == 1796042735
    (job,) = result.jobs
    read = job.direction("read")
    assert (read.io_bytes, read.iops, read.runtime_ms) == (301154304, 24499.833389, 3001)
    assert read.clat_ns.samples == 73524 and read.clat_ns.mean_ns == 39827.704627
    assert read.iops_summary.mean == 23449.2 and job.elapsed_s == 4
    assert result.disk_util[0].read_ios == 69632


def test_status_interval_with_truncated_final_document() -> None:
    raw = text("status_interval.json")
    result = parse_fio_json(raw[: len(raw) - 400])
    read = result.jobs[0].direction("read")
    assert (read.io_bytes, read.runtime_ms) == (285212672, 2876)  # the third, complete document
    assert result.notes == ("storbench: ignored an incomplete JSON document after the last complete one",)


def test_io_uring_lat_percentiles() -> None:
    result = parse("io_uring_lat_percentiles.json")
    (job,) = result.jobs
    assert job.options["ioengine"] == "io_uring" and job.options["lat_percentiles"] == "1"
    read = job.direction("read")
    assert (read.io_bytes, read.bw_bytes, read.iops, read.runtime_ms, read.total_ios) == (
        312610816, 312298517, 76244.755245, 1001, 76321)
    assert read.slat_ns == LatencyStats(1516, 118711, 3649.926862, 2431.926352, samples=76321)
    assert read.clat_ns.percentiles["99.0"] == 242688 and read.clat_ns.percentiles["50.0"] == 91648
    assert read.lat_ns.percentiles["99.0"] == 246784 and read.lat_ns.percentiles["50.0"] == 95744
    assert read.lat_ns.mean_ns == 104318.161371 and read.clat_ns.min_ns == 384
    assert read.bw_summary == SampleSummary(333408 * 1024, 333408 * 1024, 333408.0 * 1024, 0.0, 1, agg_pct=100.0)
    assert job.iodepth_level_pct["8"] == 99.990828
    assert job.latency_dist_pct["500ns"] == 0.01 and job.latency_dist_pct["2ms"] == 0.031446
    assert result.disk_util[0] == DiskUtil("vda", 66196, 1, 0, 0, 5255, 0, 5255, 84.407484)


def test_numjobs_two_without_group_reporting_and_trim() -> None:
    result = parse("numjobs2_trim_null.json")
    assert result.global_options["time_based"] == "1"
    rw1, rw2, trim = result.jobs
    assert [j.name for j in result.jobs] == ["rw", "rw", "trimnull"]
    assert list(rw1.directions) == ["read", "write"]
    assert rw1.direction("read").iops == 11344.655345 and rw1.direction("write").iops == 11273.726274
    assert rw2.direction("read").io_bytes == 48128000 and rw2.direction("write").total_ios == 11925
    assert rw1.options == {"directory": "/tmp/sbjson", "size": "8m", "bs": "4k", "runtime": "1",
                           "time_based": "1", "rw": "randrw", "rwmixread": "50", "numjobs": "2"}
    assert list(trim.directions) == ["trim"] and trim.options["size"] == "16m"
    t = trim.direction("trim")
    assert (t.io_bytes, t.bw_bytes, t.iops, t.total_ios) == (4943609856, 4938671184, 1205730.26973, 1206936)
    assert t.clat_ns.min_ns == 29 and t.clat_ns.percentiles["99.0"] == 92
    assert (trim.usr_cpu_pct, trim.job_runtime_ms) == (59.3, 1000)
    assert trim.latency_dist_pct["100ns"] == 80.445442


def test_trim_on_regular_file_error() -> None:
    result = parse("trim_file_err25.stdout")
    assert result.error == 25
    assert result.notes == ("fio: pid=7153, err=25/file:ioengines.c:399, func=td_io_queue, "
                            "error=Inappropriate ioctl for device",)
    trim = result.jobs[0].direction("trim")  # one failed trim: kept (total_ios 1)
    assert (trim.io_bytes, trim.total_ios, trim.clat_ns) == (0, 1, None)


# --------------------------------------------------------------------------- forms and quirks


def test_crlf_eta_lines_and_brace_after_text() -> None:
    base = parse("h_randrw.json")
    crlf = parse_fio_json(text("h_randrw.json").replace("\n", "\r\n"))
    assert crlf.jobs == base.jobs
    eta = "Jobs: 1 (f=1): [r(1)][60.0%][r=99.8MiB/s][r=25.6k IOPS][eta 00m:02s]"
    noisy = parse_fio_json(f"{eta}\r{eta}\nfio: warning one\n" + text("h_randrw.json") + "\nfio: after\n")
    assert noisy.jobs == base.jobs and noisy.notes == ("fio: warning one", "fio: after")
    glued = parse_fio_json("fio: some error without newline" + text("h_randrw.json"))
    assert glued.jobs == base.jobs and glued.notes == ("fio: some error without newline",)
    assert parse_fio_json("fio: terminating on signal 2\n" + text("h_randrw.json")).interrupted


LEGACY_2X = """fio: this platform does not support process shared mutexes, forcing use of threads
{
  "fio version" : "fio-2.10",
  "timestamp" : 1480611510,
  "time" : "Thu Dec  1 16:58:30 2016",
  "global options" : {"ioengine" : "libaio", "direct" : "1"},
  "jobs" : [
    {
      "jobname" : "rw-seq", "groupid" : 0, "error" : 0, "eta" : 0, "elapsed" : 36,
      "job options" : {"bs" : "4k", "rw" : "rw"},
      "read" : {
        "io_bytes" : 89304, "bw" : 2976, "iops" : 744.13, "runtime" : 30003,
        "total_ios" : 22326, "short_ios" : 0, "drop_ios" : 0,
        "slat" : {"min" : 0, "max" : 0, "mean" : 0.00, "stddev" : 0.00},
        "clat" : {"min" : 6, "max" : 181, "mean" : 24.5, "stddev" : 3.25,
                  "percentile" : {"1.000000" : 20, "99.000000" : 40}},
        "lat" : {"min" : 7, "max" : 182, "mean" : 25.0, "stddev" : 3.5},
        "bw_min" : 2000, "bw_max" : 3100, "bw_agg" : 100.00, "bw_mean" : 2976.5, "bw_dev" : 120.5
      },
      "write" : {"io_bytes" : 0, "bw" : 0, "iops" : 0.00, "runtime" : 0, "total_ios" : 0},
      "usr_cpu" : 1.5, "sys_cpu" : 4.25, "ctx" : 22400, "majf" : 0, "minf" : 7,
      "latency_us" : {"2" : 0.00, "50" : 99.5, "100" : 0.5},
      "latency_ms" : {"2" : 0.00, ">=2000" : 0.00}
    }
  ],
  "disk_util" : [
    {"name" : "dm-0", "read_ios" : 0, "write_ios" : 3, "read_merges" : 0, "write_merges" : 0,
     "read_ticks" : 0, "write_ticks" : 0, "in_queue" : 0, "util" : 0.00,
     "aggr_read_ios" : 1, "aggr_write_ios" : 3, "aggr_read_merges" : 0, "aggr_write_merge" : 0,
     "aggr_read_ticks" : 0, "aggr_write_ticks" : 2, "aggr_in_queue" : 0, "aggr_util" : 12.5},
    {"name" : "md0", "aggr_read_ios" : 5, "aggr_write_ios" : 6, "aggr_read_merges" : 1,
     "aggr_write_merge" : 2, "aggr_read_ticks" : 3, "aggr_write_ticks" : 4, "aggr_in_queue" : 7,
     "aggr_util" : 50.0}
  ]
}
"""


def test_fio_2x_units_and_aggregate_disks() -> None:
    result = parse_fio_json(LEGACY_2X)
    assert result.fio_version == "fio-2.10" and len(result.notes) == 1
    (job,) = result.jobs
    assert list(job.directions) == ["read"]
    read = job.direction("read")
    assert (read.io_bytes, read.bw_bytes, read.iops, read.runtime_ms) == (89304 * 1024, 2976 * 1024, 744.13, 30003)
    assert read.slat_ns is None  # all zeros and no N: not measured
    assert read.clat_ns == LatencyStats(6000, 181000, 24500, 3250, samples=None,
                                        percentiles={"1.0": 20000, "99.0": 40000})
    assert read.lat_ns.mean_ns == 25000 and read.lat_ns.samples is None
    assert read.bw_summary is None  # fio 2.x prints no bw_samples
    assert job.latency_dist_pct == {"2us": 0.0, "50us": 99.5, "100us": 0.5, "2ms": 0.0, ">=2000ms": 0.0}
    assert job.options == {"ioengine": "libaio", "direct": "1", "bs": "4k", "rw": "rw"}
    dm, md = result.disk_util
    assert dm == DiskUtil("dm-0", 0, 3, 0, 0, 0, 0, 0, 0.0, aggregate=True)
    assert md == DiskUtil("md0", 5, 6, 1, 2, 3, 4, 7, 50.0, aggregate=True)


def test_numbers_as_strings_and_odd_values() -> None:
    doc = {"fio version": "fio-3.33", "global options": ["iodepth=4", "time_based"], "disk_util": {"x": 1},
           "jobs": [{"jobname": "s", "error": "0", "steadystate": [1],
                     "job options": {"bs": 4096, "flag": None, "nested": {"a": 1}},
                     "read": {"io_bytes": "4096", "io_kbytes": "4", "bw_bytes": "40960", "iops": "10.5",
                              "runtime": "100", "total_ios": "1",
                              "clat_ns": {"min": "1", "max": 2, "mean": 1.5, "stddev": 0, "N": "1",
                                          "percentile": {"nan": 1, "x": 2, "50": 2}}},
                     "trim": [1, 2], "sync": "x", "iodepth_level": {"1": "100", "2": [1]}}]}
    result = parse_fio_json(json.dumps(doc))
    (job,) = result.jobs
    assert result.global_options == {"iodepth": "4", "time_based": None} and result.disk_util == ()
    assert job.options == {"iodepth": "4", "time_based": None, "bs": "4096", "flag": None}
    read = job.direction("read")
    assert (read.io_bytes, read.bw_bytes, read.iops, read.runtime_ms) == (4096, 40960, 10.5, 100)
    assert read.total_ios == 1
    assert read.clat_ns == LatencyStats(1, 2, 1.5, 0, samples=1, percentiles={"50.0": 2})
    assert set(job.directions) == {"read"} and job.sync is None and job.steadystate is None
    assert job.iodepth_level_pct == {"1": 100.0}
    # a figure that is there but no finite number is refused, never dropped with its direction
    doc["jobs"][0]["write"] = {"io_bytes": 1e400, "total_ios": 3}
    with pytest.raises(FioParseError, match=r"^job 's' write: io_bytes is inf, not a finite number$"):
        parse_fio_json(json.dumps(doc))


# --------------------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", r"^not fio JSON output: no JSON object found \(the text is empty\)$"),
        ("  \n\n ", r"^not fio JSON output: no JSON object found"),
        ("{", r"^truncated fio JSON: the document starting on line 1 ends early$"),
        ("hello world\nnot fio\n", r"^not fio JSON output: no JSON object found \(starts with 'hello world'"),
        ("[1, 2, 3]", r"^not fio JSON output"),
        ('[{"a": 1}]', r"^not fio JSON output"),
        ('{"a": 1}', r"^fio JSON has neither 'jobs' nor 'client_stats'$"),
        ('{"fio version": "fio-3.33", "jobs": {"a": [[[]]]}}', r"^fio JSON 'jobs' is not a list$"),
        ('{"client_stats": "x"}', r"^fio JSON 'client_stats' is not a list$"),
        ('[{"jobs": 1}]', r"^fio JSON 'jobs' is not a list$"),
        ('{"jobs": [1]}', r"^fio JSON job entry 1 is not a job"),
        ('{"jobs": [{"read": [1, {"x": []}]}]}', r"^fio JSON job entry 1 is not a job"),
        ('{"jobs": [{"jobname": "a", "x": tru}]}', r"^malformed fio JSON on line 1, column \d+"),
        ('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}", r"^malformed fio JSON on line 1: nested too deeply$"),
        ('{"jobs": [{"jobname": "a", "x": "abc', r"^truncated fio JSON"),
        ('{"jobs": [{"jobname": "a", "x": tr', r"^truncated fio JSON"),
        ('{"jobs": [{"jobname": "a", "n": ' + "9" * 5000 + "}]}", r"^malformed fio JSON on line 1"),
    ],
)
def test_rejections_are_one_short_line(raw: str, message: str) -> None:
    with pytest.raises(FioParseError, match=message) as info:
        parse_fio_json(raw)
    assert "\n" not in str(info.value) and len(str(info.value)) < 160


def test_truncated_real_output() -> None:
    raw = text("h_randrw.json")
    with pytest.raises(FioParseError, match=r"^truncated fio JSON: the document starting on line 1 ends early$"):
        parse_fio_json(raw[:3000])
    with pytest.raises(FioParseError, match=r"^truncated fio JSON: .* line 2 ends early$"):
        parse_fio_json(text("d_enospc.stdout")[:2000])


def test_nonexistent_dir_output_message_is_short() -> None:
    with pytest.raises(FioParseError) as info:
        parse("d_nonexistent_dir.stdout")
    assert str(info.value) == ("not fio JSON output: no JSON object found "
                               "(starts with 'fio: file:options.c:1457, func=lstat, error=No such file or…')")


def test_not_text() -> None:
    with pytest.raises(FioParseError, match="must be text"):
        parse_fio_json(b"{}")  # type: ignore[arg-type]
    assert not looks_like_fio_json(b"{}")  # type: ignore[arg-type]


def test_sniff() -> None:
    assert looks_like_fio_json(text("f_client_server.json"))
    assert looks_like_fio_json(text("e_normal_plus_json.txt"))
    assert not looks_like_fio_json('{"a": 1}')
    assert not looks_like_fio_json('say "jobs" {')


# --------------------------------------------------------------------------- robustness


def _variants(node: object, path: tuple = ()):
    """Every path into a JSON tree (dict keys and list indexes)."""
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _variants(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _variants(v, path + (i,))


def _replaced(doc: object, path: tuple, value: object) -> object:
    if not path:
        return value
    copy = json.loads(json.dumps(doc))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copy


ODD_VALUES = ["x", "", [], {}, None, True, -1, 10**30, 1e308, float("inf"), float("nan"), [{"a": [None]}]]


@pytest.mark.parametrize("name", ["h_randrw.json", "f_client_server_1job.json", "p6_steadystate.json"])
def test_any_node_replaced_by_garbage_parses_or_raises_fio_parse_error(name: str) -> None:
    doc = json.loads(text(name))
    rng = random.Random(name)
    for path in _variants(doc):
        value = rng.choice(ODD_VALUES)
        mutated = json.dumps(_replaced(doc, path, value))
        try:
            result = parse_fio_json(mutated)
        except FioParseError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 160
        else:
            assert isinstance(result, FioResult)


def test_every_truncation_point_raises_fio_parse_error() -> None:
    raw = text("p7_gtod_reduce.json").rstrip()
    for cut in range(0, len(raw) - 1, 7):
        with pytest.raises(FioParseError):
            parse_fio_json(raw[:cut])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('{}[]":,0123456789.eE-+ \n\rabcfiojs\\') + ['"jobs"', '"fio version"',
                                                                               '"jobname"', '"read"'])))
def test_fuzz_only_fio_parse_error(parts: list[str]) -> None:
    try:
        parse_fio_json("".join(parts))
    except FioParseError:
        pass
