"""Golden tests for :mod:`storbench.fio.terse` (fio's ``;``-separated terse output).

``tests/data/fio-terse``: the three terse samples of the shared fio 3.33 fixtures
(``g_terse_*``, ``i_lat_percentiles_only_terse.txt``), a terse v2 run, and fio 3.33 runs
made with ``--output-format=terse,json`` (v3, v4, v5): the JSON of the same run is the
reference for those.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storbench.errors import FioParseError
from storbench.fio.terse import looks_like_fio_terse, parse_fio_terse
from storbench.fio.text import looks_like_fio_text

DATA = Path(__file__).parent.parent / "data" / "fio-terse"
US = 1000


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_shared_samples_are_byte_copies() -> None:
    shared = Path("/work/shared/fixtures/fio-json")
    if not shared.is_dir():
        pytest.skip("shared fixtures not mounted")
    for name in ("g_terse_v3.txt", "g_terse_default_2jobs.txt", "i_lat_percentiles_only_terse.txt"):
        assert (DATA / name).read_bytes() == (shared / name).read_bytes()


# --------------------------------------------------------------------------- by hand


def test_terse_v3_sample() -> None:
    result = parse_fio_terse(read("g_terse_v3.txt"))
    assert (result.format, result.fio_version, result.interrupted) == ("terse", "fio-3.33", False)
    (job,) = result.jobs
    assert (job.name, job.groupid, job.error) == ("terse", 0, 0)
    read_, write = job.directions["read"], job.directions["write"]
    assert (read_.io_bytes, read_.bw_bytes, read_.iops, read_.runtime_ms) == (1984 * 1024, 27555 * 1024, 6888, 72)
    assert read_.total_ios is None and read_.slat_ns is None  # not in terse / not measured
    assert (read_.clat_ns.min_ns, read_.clat_ns.max_ns) == (44 * US, 756 * US)
    assert read_.clat_ns.mean_ns == 130583.048 and read_.clat_ns.stddev_ns == 55943.661
    assert read_.clat_ns.percentiles["1.0"] == 46 * US
    assert read_.clat_ns.percentiles["99.0"] == 222 * US
    assert read_.clat_ns.percentiles["99.99"] == 757 * US
    assert len(read_.clat_ns.percentiles) == 17  # the three "0%=0" pads are not percentiles
    assert read_.lat_ns.mean_ns == 130713.198 and read_.lat_ns.percentiles == {}
    assert read_.bw_summary is None  # v3 has no sample count
    assert (write.io_bytes, write.iops, write.clat_ns.mean_ns) == (2112 * 1024, 7333, 10358.568)
    assert write.clat_ns.percentiles["99.0"] == 77 * US
    assert (job.usr_cpu_pct, job.sys_cpu_pct, job.ctx, job.majf, job.minf) == (0.0, 32.394366, 525, 0, 14)
    assert job.iodepth_level_pct == {"1": 100.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}
    assert job.iodepth_submit_pct == {} and job.iodepth_complete_pct == {}
    assert job.latency_dist_pct["4us"] == 8.01 and job.latency_dist_pct["250us"] == 31.25
    assert job.latency_dist_pct[">=2000ms"] == 0.0 and len(job.latency_dist_pct) == 22
    assert [(d.name, d.read_ios, d.util_pct) for d in result.disk_util] == [("vda", 0, 0.0)]
    assert job.options == {} and job.total_err is None


def test_terse_two_jobs() -> None:
    result = parse_fio_terse(read("g_terse_default_2jobs.txt"))
    assert [j.name for j in result.jobs] == ["t1", "t1"]
    first, second = (j.directions["read"] for j in result.jobs)
    assert (first.bw_bytes, first.iops, first.runtime_ms) == (455111 * 1024, 113777, 9)
    assert first.clat_ns.min_ns == 0 and first.clat_ns.mean_ns == 7713.638  # 0 usec min is measured
    assert first.clat_ns.percentiles["99.0"] == 67 * US
    assert (second.iops, second.clat_ns.mean_ns, second.clat_ns.percentiles["99.0"]) == (146285, 5874.414, 14 * US)
    assert set(result.jobs[0].directions) == {"read"}
    assert len(result.disk_util) == 1  # every line repeats the disk list; kept once


def test_terse_percentile_columns_follow_lat_percentiles() -> None:
    """With lat_percentiles=1 fio puts total-latency percentiles in the clat columns (INDEX.md)."""
    job = parse_fio_terse(read("i_lat_percentiles_only_terse.txt")).jobs[0]
    read_ = job.directions["read"]
    assert read_.clat_ns.percentiles["99.0"] == 317 * US  # attached to clat_ns, as the HOWTO names them
    assert read_.lat_ns.percentiles == {}
    assert (read_.lat_ns.min_ns, read_.lat_ns.mean_ns) == (43 * US, 156566.284)
    disk = parse_fio_terse(read("i_lat_percentiles_only_terse.txt")).disk_util[0]
    assert (disk.read_ios, disk.write_ios, disk.read_ticks_ms, disk.write_ticks_ms, disk.in_queue_ms,
            disk.util_pct) == (918, 11600, 112, 998, 1110, 83.27)


def test_terse_v2() -> None:
    result = parse_fio_terse(read("fio3.33-v2-randwrite-terse.txt"))
    assert result.fio_version is None  # v2 lines do not carry it
    (job,) = result.jobs
    assert set(job.directions) == {"write"}  # the all-zero read and trim blocks are omitted
    write = job.directions["write"]
    assert (write.io_bytes, write.bw_bytes, write.iops, write.runtime_ms) == (
        1364456 * 1024, 1363092 * 1024, 340773, 1001)
    assert write.clat_ns.max_ns == 8023 * US and write.clat_ns.percentiles["99.99"] == 3227 * US
    assert write.lat_ns.mean_ns == 1988.673
    assert (job.usr_cpu_pct, job.sys_cpu_pct, job.ctx) == (15.4, 49.2, 1685)
    assert job.latency_dist_pct["2us"] == 95.71
    assert result.disk_util == ()


# --------------------------------------------------------------------------- against fio's JSON

JSON_RUNS = sorted(p.name for p in DATA.glob("*terse-json.txt"))


def _json(text: str) -> dict:
    doc, _ = json.JSONDecoder().raw_decode(text, text.index("\n{") + 1)
    return doc


@pytest.mark.parametrize("name", JSON_RUNS)
def test_terse_agrees_with_json_of_the_same_run(name: str) -> None:
    text = read(name)
    doc, result = _json(text), parse_fio_terse(text)
    assert result.fio_version == doc["fio version"]
    assert len(result.jobs) == len(doc["jobs"])
    for job, entry in zip(result.jobs, doc["jobs"]):
        assert (job.name, job.groupid, job.error) == (entry["jobname"], entry["groupid"], entry["error"])
        assert job.usr_cpu_pct == pytest.approx(entry["usr_cpu"], abs=1e-6)
        assert (job.ctx, job.majf, job.minf) == (entry["ctx"], entry["majf"], entry["minf"])
        assert job.iodepth_level_pct == pytest.approx(entry["iodepth_level"], abs=0.051)
        assert (job.total_err, job.first_error) == (entry.get("total_err"), entry.get("first_error"))
        if "desc" in entry:
            assert job.options["description"] == entry["desc"]
        json_dirs = {d for d in ("read", "write", "trim", "mixed") if entry.get(d, {}).get("runtime")}
        assert set(job.directions) == json_dirs
        for direction, got in job.directions.items():
            want = entry[direction]
            assert got.io_bytes == want["io_kbytes"] * 1024
            assert got.bw_bytes == want["bw_bytes"] // 1024 * 1024  # terse truncates to KiB/s
            assert got.iops == int(want["iops"])
            assert got.runtime_ms == want["runtime"]
            for kind in ("slat", "clat", "lat"):
                stats, jstats = getattr(got, f"{kind}_ns"), want[f"{kind}_ns"]
                if jstats["N"] == 0:
                    assert stats is None
                    continue
                assert stats.min_ns == jstats["min"] // 1000 * 1000  # whole usec, truncated
                assert stats.max_ns == jstats["max"] // 1000 * 1000
                assert stats.mean_ns == pytest.approx(jstats["mean"], abs=0.0006)
                assert stats.stddev_ns == pytest.approx(jstats["stddev"], abs=0.0006)
            jpct = want["clat_ns"].get("percentile") or want["lat_ns"].get("percentile") or {}
            assert got.clat_ns.percentiles == {f"{float(k)!r}": v // 1000 * 1000 for k, v in jpct.items()}
            if "iops_samples" in want and name.startswith("fio3.33-v5"):
                assert got.bw_summary.samples == want["bw_samples"]
                assert got.bw_summary.min == want["bw_min"] * 1024
                assert got.bw_summary.mean == pytest.approx(want["bw_mean"] * 1024)
                assert got.bw_summary.agg_pct == pytest.approx(want["bw_agg"], abs=0.01)  # integer KiB divisor
                assert got.iops_summary.samples == want["iops_samples"]
                assert got.iops_summary.mean == pytest.approx(want["iops_mean"])
            else:
                assert got.bw_summary is None and got.iops_summary is None
    assert [(d.name, d.read_ios, d.write_ios, d.in_queue_ms) for d in result.disk_util] == [
        (d["name"], d["read_ios"], d["write_ios"], d["in_queue"]) for d in doc.get("disk_util", [])]


def test_v4_mixed_block_description_and_continue_on_error() -> None:
    result = parse_fio_terse(read("fio3.33-v4-mixed-description-continue-on-error-terse-json.txt"))
    desc, coe = result.jobs
    assert set(desc.directions) == {"mixed"}  # unified_rw_reporting=mixed: one block in place of three
    assert desc.options == {"description": "first job"}
    assert (coe.error, coe.total_err, coe.first_error, coe.directions) == (22, 1, 22, {})
    assert result.error == 22
    assert any(note.startswith("fio: pid=") for note in result.notes)


def test_v5_unified_both_has_a_fourth_block() -> None:
    job = parse_fio_terse(read("fio3.33-v5-unified-both-numjobs2-terse-json.txt")).jobs[0]
    assert set(job.directions) == {"read", "write", "mixed"}
    assert job.directions["mixed"].iops_summary.samples == 4


# --------------------------------------------------------------------------- sniffing and errors


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_sniff(name: str) -> None:
    text = read(name)
    assert looks_like_fio_terse(text)
    assert not looks_like_fio_text(text)


def test_sniff_rejects_other_formats() -> None:
    normal = (Path(__file__).parent.parent / "data" / "fio-text" / "seed000-10.txt").read_text()
    assert not looks_like_fio_terse(normal)
    assert not looks_like_fio_terse('{"fio version": "fio-3.33", "jobs": []}')
    assert not looks_like_fio_terse("3;fio-3.33;short;0;0")
    assert not looks_like_fio_terse(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("hello", "no terse job line"),
        ('{"fio version": "fio-3.33", "jobs": []}', "no terse job line"),
        ("3;fio-3.33;x;0;0;1;2;3", "malformed"),
        ("3;fio-3.33;" + ";".join(["x"] * 200), "malformed"),
        ("4;fio-3.33;x;0;0;" + ";".join(["1"] * 200), "malformed"),
    ],
)
def test_errors_are_one_line(text: str, fragment: str) -> None:
    with pytest.raises(FioParseError) as info:
        parse_fio_terse(text)
    assert fragment in str(info.value) and "\n" not in str(info.value) and len(str(info.value)) < 160


def test_normal_text_is_not_terse() -> None:
    with pytest.raises(FioParseError):
        parse_fio_terse((Path(__file__).parent.parent / "data" / "fio-text" / "seed000-10.txt").read_text())
    with pytest.raises(FioParseError):
        parse_fio_terse(b"3;fio-3.33")  # type: ignore[arg-type]


_LINES = [line for p in sorted(DATA.glob("*.txt")) for line in p.read_text().splitlines() if line[:2] in ("2;", "3;", "4;", "5;")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_LINES) - 1), st.data())
def test_damaged_lines_parse_or_raise_fio_parse_error(index: int, data: st.DataObject) -> None:
    fields = _LINES[index].split(";")
    start = data.draw(st.integers(1, len(fields)))
    stop = data.draw(st.integers(start, min(len(fields), start + 5)))
    junk = data.draw(st.lists(st.text(alphabet="0123456789.%=-ax ", max_size=6), max_size=4))
    line = ";".join(fields[:start] + junk + fields[stop:])
    try:
        parse_fio_terse(line)
    except FioParseError as exc:
        assert "\n" not in str(exc)
