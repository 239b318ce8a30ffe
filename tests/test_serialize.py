"""serialize: the stored form round-trips exactly; the public form keeps its contract."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storbench import model
from storbench.errors import StoreError
from storbench.model import (
    DirectionStats,
    DiskUtil,
    FioResult,
    JobResult,
    LatencyStats,
    RunInfo,
    SampleSummary,
    SyncStats,
)
from storbench.record import ResultRecord
from storbench.serialize import (
    FORMAT_VERSION,
    fio_result_from_dict,
    fio_result_to_dict,
    result_record_to_public,
    run_info_to_public,
)

# --------------------------------------------------------------------------- hand-built records


def lat(base: float, *, pcts: bool = True, samples: int | None = 1000) -> LatencyStats:
    return LatencyStats(
        min_ns=base,
        max_ns=base * 40,
        mean_ns=base * 2.5,
        stddev_ns=base / 3,
        samples=samples,
        percentiles={"1.0": base, "50.0": base * 2, "99.0": base * 9, "99.99": base * 30} if pcts else {},
        bins=((int(base), 10), (int(base * 2), 980), (int(base * 9), 10)) if pcts else (),
    )


def rich_fio() -> FioResult:
    """A FioResult with every field of every nested record set to something non-default."""
    read = DirectionStats(
        direction="read",
        io_bytes=1_073_741_824,
        bw_bytes=123_456_789.25,
        iops=30_141.5,
        runtime_ms=8_697,
        total_ios=262_144,
        short_ios=1,
        drop_ios=2,
        lat_ns=lat(1000.5),
        clat_ns=lat(900.25),
        slat_ns=lat(50.0, pcts=False, samples=None),
        bw_summary=SampleSummary(min=1.0e8, max=1.3e8, mean=1.2e8, stddev=3.5e6, samples=17, agg_pct=100.0),
        iops_summary=SampleSummary(min=29000.0, max=31000.0, mean=30100.0, stddev=500.0, samples=17),
    )
    write = DirectionStats(
        direction="write",
        io_bytes=0 + 4096,
        bw_bytes=4096.0,
        iops=1.0,
        runtime_ms=1000,
        lat_ns=None,  # gtod_reduce-style: not measured
        clat_ns=lat(2_000_000.0),
        slat_ns=None,
    )
    job = JobResult(
        name="randread-4k",
        groupid=1,
        error=0,
        directions={"write": write, "read": read},  # deliberately not in DIRECTIONS order
        sync=SyncStats(total_ios=12, lat_ns=lat(300.0)),
        usr_cpu_pct=3.5,
        sys_cpu_pct=12.25,
        ctx=123456,
        majf=1,
        minf=42,
        job_runtime_ms=8697,
        elapsed_s=9,
        iodepth_level_pct={"1": 0.1, "2": 0.1, ">=64": 99.8},
        iodepth_submit_pct={"0": 0.0, "4": 100.0},
        iodepth_complete_pct={"4": 99.9, "8": 0.1},
        latency_dist_pct={"2us": 0.01, "750us": 5.5, ">=2000ms": 0.0},
        options={"rw": "randread", "bs": "4k", "time_based": None},
        hostname="server1",
        port=8765,
        is_aggregate=False,
        steadystate={"ss": "iops_slope", "attained": 1, "data": {"iops": [1.0, 2.0]}},
        total_err=3,
        first_error=5,
    )
    aggregate = JobResult(name="All clients", is_aggregate=True, directions={"read": read}, error=5)
    return FioResult(
        fio_version="fio-3.33",
        jobs=(job, aggregate),
        format="json+",
        timestamp_s=1_717_171_717,
        time_text="Fri May 31 16:08:37 2024",
        global_options={"ioengine": "libaio", "direct": "1", "group_reporting": None},
        disk_util=(
            DiskUtil("md0", 1, 2, 3, 4, 5, 6, 7, 88.5, aggregate=True, hostname="server1"),
            DiskUtil("nvme0n1", 10, 20, 30, 40, 50, 60, 70, 99.25),
        ),
        notes=("fio: file hash not empty on exit", "warning: é ünïcode"),
        interrupted=True,
    )


def bare_fio() -> FioResult:
    """Everything optional left at None / empty."""
    return FioResult(fio_version=None, jobs=(JobResult(name="j"),), format="terse")


def record(fio: FioResult, **kw) -> ResultRecord:
    base = dict(
        run_id=7,
        workload="randread-4k",
        target="/mnt/test",
        fio=fio,
        raw_output="{...}",
        label="baseline",
        source=None,
        options={"rw": "randread", "bs": "4k", "time_based": None},
        job_text="[randread-4k]\nrw=randread\n",
        repetition=2,
        result_id=31,
        created_at="2024-05-31T16:08:37Z",
        host="box",
    )
    base.update(kw)
    return ResultRecord(**base)


# --------------------------------------------------------------------------- stored form


@pytest.mark.parametrize("fio", [rich_fio(), bare_fio()], ids=["rich", "bare"])
def test_round_trip_exact_direct_and_through_json(fio: FioResult) -> None:
    data = fio_result_to_dict(fio)
    assert data["format_version"] == 1  # a fio result stays version 1; 2 is for results with measures (test_pts)
    assert fio_result_from_dict(data) == fio
    again = fio_result_from_dict(json.loads(json.dumps(data)))
    assert again == fio
    # types of containers come back as the model declares them
    assert isinstance(again.jobs, tuple) and isinstance(again.disk_util, tuple) and isinstance(again.notes, tuple)


def test_round_trip_keeps_none_and_mapping_order() -> None:
    fio = fio_result_from_dict(json.loads(json.dumps(fio_result_to_dict(rich_fio()))))
    job = fio.jobs[0]
    assert list(job.directions) == ["write", "read"]
    assert job.directions["write"].lat_ns is None and job.directions["write"].slat_ns is None
    assert job.directions["read"].slat_ns.samples is None
    assert list(job.directions["read"].lat_ns.percentiles) == ["1.0", "50.0", "99.0", "99.99"]
    assert list(job.iodepth_level_pct) == ["1", "2", ">=64"]
    assert list(job.options.items()) == [("rw", "randread"), ("bs", "4k"), ("time_based", None)]
    assert list(fio.global_options) == ["ioengine", "direct", "group_reporting"]
    assert fio.jobs[1].sync is None and fio.jobs[1].usr_cpu_pct is None


def _all_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_stored_form_names_every_field_of_every_record() -> None:
    """Guards against a model field silently not being stored."""
    data = fio_result_to_dict(rich_fio())
    assert set(data) == _all_fields(FioResult) | {"format_version"}
    job = data["jobs"][0]
    assert set(job) == _all_fields(JobResult)
    assert set(job["directions"]["read"]) == _all_fields(DirectionStats)
    assert set(job["directions"]["read"]["lat_ns"]) == _all_fields(LatencyStats)
    assert set(job["directions"]["read"]["bw_summary"]) == _all_fields(SampleSummary)
    assert set(job["sync"]) == _all_fields(SyncStats)
    assert set(data["disk_util"][0]) == _all_fields(DiskUtil)


def test_missing_optional_keys_take_defaults() -> None:
    """A dict written before an optional field existed still loads."""
    data = {"format_version": 1, "fio_version": "fio-3.1", "format": "json", "jobs": [{"name": "a"}]}
    assert fio_result_from_dict(data) == FioResult("fio-3.1", (JobResult("a"),), "json")


def test_newer_format_version_refused() -> None:
    data = fio_result_to_dict(bare_fio()) | {"format_version": FORMAT_VERSION + 1}
    with pytest.raises(StoreError, match=r"format version 3, this storbench reads up to 2; upgrade storbench") as err:
        fio_result_from_dict(data)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "data, match",
    [
        ({"fio_version": None, "format": "json", "jobs": []}, "format_version"),
        ({"format_version": 1, "format": "json", "jobs": []}, "lacks 'fio_version'"),
        ({"format_version": 1, "fio_version": None, "format": "json", "jobs": [{"groupid": 1}]}, "JobResult lacks 'name'"),
        ({"format_version": 1, "fio_version": None, "format": "json", "jobs": 5}, "malformed"),
        ([], "malformed"),
    ],
)
def test_malformed_dict_is_a_store_error(data, match) -> None:
    with pytest.raises(StoreError, match=match):
        fio_result_from_dict(data)


# --------------------------------------------------------------------------- hypothesis

_text = st.text(max_size=8)
_floats = st.floats(allow_nan=False, allow_infinity=False)
_ints = st.integers(min_value=0, max_value=2**63 - 1)
_opt_ints = st.none() | _ints
_opt_floats = st.none() | _floats
_fmap = st.dictionaries(_text, _floats, max_size=4)

latencies = st.builds(
    LatencyStats,
    min_ns=_floats,
    max_ns=_floats,
    mean_ns=_floats,
    stddev_ns=_floats,
    samples=_opt_ints,
    percentiles=st.dictionaries(st.floats(0, 100).map(model.pct_key), _floats, max_size=5),
)
summaries = st.builds(
    SampleSummary, min=_floats, max=_floats, mean=_floats, stddev=_floats, samples=_ints, agg_pct=_opt_floats
)


def _direction(name: str) -> st.SearchStrategy[DirectionStats]:
    return st.builds(
        DirectionStats,
        direction=st.just(name),
        io_bytes=_ints,
        bw_bytes=_floats,
        iops=_floats,
        runtime_ms=_ints,
        total_ios=_opt_ints,
        short_ios=_opt_ints,
        drop_ios=_opt_ints,
        lat_ns=st.none() | latencies,
        clat_ns=st.none() | latencies,
        slat_ns=st.none() | latencies,
        bw_summary=st.none() | summaries,
        iops_summary=st.none() | summaries,
    )


@st.composite
def _directions(draw: st.DrawFn) -> dict[str, DirectionStats]:
    names = draw(st.lists(st.sampled_from(model.DIRECTIONS), unique=True, max_size=4))
    return {n: draw(_direction(n)) for n in names}


_json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _floats | _text
_json = st.recursive(_json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6)

jobs = st.builds(
    JobResult,
    name=_text,
    groupid=_ints,
    error=_ints,
    directions=_directions(),
    sync=st.none() | st.builds(SyncStats, total_ios=_ints, lat_ns=st.none() | latencies),
    usr_cpu_pct=_opt_floats,
    sys_cpu_pct=_opt_floats,
    ctx=_opt_ints,
    majf=_opt_ints,
    minf=_opt_ints,
    job_runtime_ms=_opt_ints,
    elapsed_s=_opt_ints,
    iodepth_level_pct=_fmap,
    iodepth_submit_pct=_fmap,
    iodepth_complete_pct=_fmap,
    latency_dist_pct=_fmap,
    options=st.dictionaries(_text, st.none() | _text, max_size=4),
    hostname=st.none() | _text,
    port=st.none() | st.integers(0, 65535),
    is_aggregate=st.booleans(),
    steadystate=st.none() | st.dictionaries(_text, _json, max_size=3),
    total_err=_opt_ints,
    first_error=_opt_ints,
)
disk_utils = st.builds(
    DiskUtil,
    name=_text,
    read_ios=_ints,
    write_ios=_ints,
    read_merges=_ints,
    write_merges=_ints,
    read_ticks_ms=_ints,
    write_ticks_ms=_ints,
    in_queue_ms=_ints,
    util_pct=_floats,
    aggregate=st.booleans(),
    hostname=st.none() | _text,
)
fio_results = st.builds(
    FioResult,
    fio_version=st.none() | _text,
    jobs=st.lists(jobs, max_size=3).map(tuple),
    format=st.sampled_from(["json", "json+", "normal", "terse"]),
    timestamp_s=_opt_ints,
    time_text=st.none() | _text,
    global_options=st.dictionaries(_text, st.none() | _text, max_size=4),
    disk_util=st.lists(disk_utils, max_size=2).map(tuple),
    notes=st.lists(_text, max_size=3).map(tuple),
    interrupted=st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(fio_results)
def test_property_round_trip_through_json(fio: FioResult) -> None:
    text = json.dumps(fio_result_to_dict(fio))
    back = fio_result_from_dict(json.loads(text))
    assert back == fio
    # order of every mapping survives too (dataclass equality ignores it)
    assert [list(j.directions) for j in back.jobs] == [list(j.directions) for j in fio.jobs]
    assert [list(j.options) for j in back.jobs] == [list(j.options) for j in fio.jobs]


# --------------------------------------------------------------------------- public form

CONTRACT_TOP = ["run", "label", "target", "workload", "source", "fio_version", "options", "jobs"]
CONTRACT_DIRECTION = ["iops", "bw_bytes", "io_bytes", "runtime_ms", "lat_ns", "clat_ns", "slat_ns"]
CONTRACT_LATENCY = ["mean", "stddev", "min", "max", "percentiles"]


def test_public_contract_keys_and_order() -> None:
    out = result_record_to_public(record(rich_fio()))
    assert list(out)[: len(CONTRACT_TOP)] == CONTRACT_TOP
    assert list(out)[len(CONTRACT_TOP) :] == ["result", "repetition", "created_at", "host", "findings"]
    assert out["findings"] == []
    assert out["run"] == 7 and out["result"] == 31 and out["fio_version"] == "fio-3.33"
    assert out["options"] == {"rw": "randread", "bs": "4k", "time_based": None}
    job = out["jobs"][0]
    # directions in fio's report order, whatever the mapping order; no I/O in trim/mixed -> absent
    assert list(job)[:3] == ["name", "read", "write"]
    assert "trim" not in job and "mixed" not in job
    read = job["read"]
    assert list(read)[: len(CONTRACT_DIRECTION)] == CONTRACT_DIRECTION
    assert read["total_ios"] == 262_144
    assert type(read["iops"]) is float and type(read["bw_bytes"]) is float
    assert type(read["io_bytes"]) is int and type(read["runtime_ms"]) is int
    assert list(read["lat_ns"]) == CONTRACT_LATENCY
    assert read["lat_ns"]["mean"] == 2501.25
    assert read["clat_ns"]["percentiles"] == {"1.0": 900.25, "50.0": 1800.5, "99.0": 8102.25, "99.99": 27007.5}
    assert read["slat_ns"]["percentiles"] == {}
    # extras after the contract keys
    assert job["hostname"] == "server1" and "aggregate" not in job
    assert job["cpu"] == {"usr_pct": 3.5, "sys_pct": 12.25, "ctx": 123456}
    assert job["sync"]["total_ios"] == 12 and job["sync"]["lat_ns"]["min"] == 300.0
    assert out["jobs"][1]["aggregate"] is True and out["jobs"][1]["error"] == 5
    json.dumps(out, allow_nan=False)  # valid strict JSON


def test_public_null_for_not_measured() -> None:
    job = result_record_to_public(record(rich_fio()))["jobs"][0]
    assert job["write"]["lat_ns"] is None
    assert job["write"]["slat_ns"] is None
    assert job["write"]["clat_ns"] is not None
    assert job["write"]["total_ios"] is None


def test_public_bare_record() -> None:
    out = result_record_to_public(record(bare_fio(), source="/tmp/out.json", label=None, target=None))
    assert out["source"] == "/tmp/out.json" and out["label"] is None and out["fio_version"] is None
    job = out["jobs"][0]
    assert job == {"name": "j", "error": 0, "cpu": {"usr_pct": None, "sys_pct": None, "ctx": None}}


def test_public_iops_from_int_becomes_float() -> None:
    d = DirectionStats("read", io_bytes=10, bw_bytes=5, iops=2, runtime_ms=1)
    fio = FioResult("fio-3.33", (JobResult("j", directions={"read": d}),), "json")
    read = result_record_to_public(record(fio))["jobs"][0]["read"]
    assert type(read["iops"]) is float and type(read["bw_bytes"]) is float


def test_run_info_public() -> None:
    info = RunInfo(3, "nightly", "run", "failed", "2024-05-31T16:00:00Z", "2024-05-31T16:10:00Z", "quick", "fio died", "0.1.0", 4)
    assert run_info_to_public(info) == {
        "run": 3,
        "label": "nightly",
        "kind": "run",
        "status": "failed",
        "created_at": "2024-05-31T16:00:00Z",
        "finished_at": "2024-05-31T16:10:00Z",
        "suite": "quick",
        "reason": "fio died",
        "storbench_version": "0.1.0",
        "result_count": 4,
    }
