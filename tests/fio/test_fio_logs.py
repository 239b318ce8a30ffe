"""fio logs: averaged interval logs and streamed per-I/O logs (storbench.fio.logs).

The golden logs under tests/data/fio-logs were written by fio 3.33 (see the README
there); the expected numbers below were worked out by hand from those files.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from storbench.errors import FioParseError
from storbench.fio import logs as fio_logs
from storbench.fio.logs import (
    io_log_summary_to_dict,
    iter_log_rows,
    latency_percentiles_per_second,
    log_kind,
    parse_log,
    per_second,
    series_from_logs,
    summarize_io_logs,
)

DATA = Path(__file__).parent.parent / "data" / "fio-logs"


def texts(*names: str) -> dict[str, str]:
    return {name: (DATA / name).read_text() for name in names}


def blocks(text: str, size: int):
    """A log cut into ``size``-byte blocks (lines split across blocks)."""
    data = text.encode()
    return (data[i : i + size] for i in range(0, len(data), size))


THREE_LAT = ("three_lat.1.log", "three_lat.2.log", "three_lat.3.log")
THREE_BW = ("three_bw.1.log", "three_bw.2.log", "three_bw.3.log")

# --- hand-checked from three_lat.{1,2,3}.log --------------------------------------
# second 1 = log times [0, 1000) ms, second 2 = [1000, 2000), second 3 = [2000, 3000)
# read:  job 1 (4 KiB) has 4 I/Os in each of seconds 1, 2, 3; job 2 (8 KiB) 3 in seconds 1, 2
# write: job 3 (4 KiB) has 2 I/Os in each of seconds 1, 2
EXPECTED_IOPS = {"read": [[1.0, 7.0], [2.0, 7.0], [3.0, 4.0]], "write": [[1.0, 2.0], [2.0, 2.0]]}
EXPECTED_BW = {
    "read": [[1.0, 4 * 4096 + 3 * 8192.0], [2.0, 4 * 4096 + 3 * 8192.0], [3.0, 4 * 4096.0]],
    "write": [[1.0, 2 * 4096.0], [2.0, 2 * 4096.0]],
}
# nearest rank: p50 of n values is the ceil(n/2)-th smallest, p99 the ceil(0.99 n)-th
# read s1 sorted: 15142 16329 18116 18413 27723 51224 64323 -> 4th, 7th
# read s2 sorted: 10709 11258 12239 14672 15109 22075 32942 -> 4th, 7th
# read s3 sorted: 13546 13748 15016 17846                  -> 2nd, 4th
# write s1: 59239 65511; write s2: 48396 56034              -> 1st, 2nd
EXPECTED_LAT = {
    "read": [[1.0, 18413.0, 64323.0], [2.0, 14672.0, 32942.0], [3.0, 13748.0, 17846.0]],
    "write": [[1.0, 59239.0, 65511.0], [2.0, 48396.0, 56034.0]],
}


# --------------------------------------------------------------------------- names and parsing


def test_log_kind_and_job() -> None:
    assert log_kind("sb_bw.1.log") == ("bw", 1)
    assert log_kind("randread-iodepth-1-numjobs-2_clat.12.log") == ("clat", 12)
    assert log_kind("/some/dir/x_lat.3.log") == ("lat", 3)
    assert log_kind("sb_bw.1.log.127.0.0.1") is None  # client/server copies are not ours
    assert log_kind("notes.txt") is None


def test_parse_log_golden() -> None:
    rows = parse_log((DATA / "three_lat.2.log").read_text())
    assert rows.dtype == np.int64
    assert rows.tolist() == [
        [0, 18116, 0, 8192, 0],
        [333, 51224, 0, 8192, 0],
        [666, 27723, 0, 8192, 0],
        [1000, 10709, 0, 8192, 0],
        [1333, 14672, 0, 8192, 0],
        [1666, 32942, 0, 8192, 0],
    ]


def test_parse_log_drops_a_truncated_last_line() -> None:
    assert parse_log("0, 10, 0, 4096, 0\n1000, 2").tolist() == [[0, 10, 0, 4096, 0]]
    assert parse_log("").shape == (0, 5)


@pytest.mark.parametrize("block", [1, 7, 64, 10_000])
def test_streamed_rows_equal_the_whole_parse(block: int) -> None:
    text = (DATA / "three_lat.1.log").read_text()
    streamed = np.concatenate(list(iter_log_rows(blocks(text, block), chunk_bytes=16)))
    assert streamed.tolist() == parse_log(text).tolist()


def test_streamed_rows_truncated_and_unterminated_last_lines() -> None:
    whole = "0, 10, 0, 4096, 0\n1000, 20, 1, 4096, 0"  # complete, only the line end is missing
    assert np.concatenate(list(iter_log_rows(whole))).tolist() == [[0, 10, 0, 4096, 0], [1000, 20, 1, 4096, 0]]
    cut = "0, 10, 0, 4096, 0\n1000, 20, 1, 40"  # fio killed mid-line
    assert np.concatenate(list(iter_log_rows(cut))).tolist() == [[0, 10, 0, 4096, 0]]
    assert list(iter_log_rows("")) == []


def test_a_line_that_is_not_a_log_line_is_a_typed_error() -> None:
    text = "0, 10, 0, 4096, 0\n5, 11, 0, 4096, 0\nhello, 1, 0, 4096, 0\n"
    with pytest.raises(FioParseError, match=r"x_lat\.1\.log: line 3 is not a fio log line: 'hello"):
        list(iter_log_rows(text, name="x_lat.1.log"))
    with pytest.raises(FioParseError, match="not a fio log"):
        list(iter_log_rows("just some text\n"))


# --------------------------------------------------------------------------- averaged logs


def test_per_second_golden_averaged_logs() -> None:
    logs = texts("sb_bw.1.log", "sb_bw.2.log", "sb_iops.1.log", "sb_iops.2.log")
    # fio wrote job 1's first window at 1001 ms and job 2's at 1000 ms: both are second 1
    assert per_second(logs, "iops") == {"read": [[1.0, 101.0], [2.0, 100.0]], "write": [[1.0, 41.0], [2.0, 40.0]]}
    assert per_second(logs, "bw") == {
        "read": [[1.0, (203 + 204) * 1024.0], [2.0, 400 * 1024.0]],
        "write": [[1.0, (83 + 84) * 1024.0], [2.0, 160 * 1024.0]],
    }
    series = series_from_logs(logs)
    assert series["format_version"] == 1 and series["interval_s"] == 1
    assert series["iops"] == per_second(logs, "iops")


def test_per_second_numpy_and_python_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    lines = []
    for t in range(0, 120_000, 1000):  # two minutes, both directions, slightly late stamps
        for ddir in (0, 1):
            lines.append(f"{t + rng.randint(0, 3)}, {rng.randint(0, 10**9)}, {ddir}, 0, 0")
    logs = {"sb_bw.1.log": "\n".join(lines) + "\n", "sb_bw.2.log": "\n".join(lines[::-1][:50]) + "\n"}
    python = per_second(logs, "bw")
    monkeypatch.setattr(fio_logs, "NUMPY_FROM_BYTES", 0)
    assert per_second(logs, "bw") == python


# --------------------------------------------------------------------------- per-I/O logs


def test_summary_golden_jobs_of_different_lengths() -> None:
    logs = texts(*THREE_LAT, *THREE_BW, "three_clat.1.log", "three_slat.1.log")
    s = summarize_io_logs(logs)
    assert s.iops == EXPECTED_IOPS
    assert s.bw_bytes == EXPECTED_BW
    assert s.lat_ns == EXPECTED_LAT
    assert s.latency_kind == "lat" and s.percentiles == (50.0, 99.0)
    assert s.jobs == 3 and s.ios == 22
    # one log per job: the bandwidth, clat and slat logs repeat the same I/Os
    assert s.logs_read == THREE_LAT
    assert io_log_summary_to_dict(s)["lat_ns"] == EXPECTED_LAT


def test_jobs_are_aligned_on_timestamps_not_positions() -> None:
    # job 1: I/Os at 0.1 s, 0.2 s, 1.1 s; job 2 starts late: 1.5 s, 2.5 s
    logs = {
        "x_lat.1.log": "100, 10, 0, 4096, 0\n200, 20, 0, 4096, 0\n1100, 30, 0, 4096, 0\n",
        "x_lat.2.log": "1500, 40, 0, 4096, 0\n2500, 50, 0, 4096, 0\n",
    }
    s = summarize_io_logs(logs, percentiles=(50.0, 100.0))
    assert s.iops == {"read": [[1.0, 2.0], [2.0, 2.0], [3.0, 1.0]]}
    assert s.lat_ns == {"read": [[1.0, 10.0, 20.0], [2.0, 30.0, 40.0], [3.0, 50.0, 50.0]]}


@pytest.mark.parametrize("block,chunk", [(1, 1), (7, 16), (23, 50), (10_000, 1 << 20)])
def test_streaming_in_small_blocks_gives_the_same_summary(block: int, chunk: int) -> None:
    logs = texts(*THREE_LAT)
    streamed = summarize_io_logs({k: blocks(v, block) for k, v in logs.items()}, chunk_bytes=chunk)
    assert (streamed.iops, streamed.bw_bytes, streamed.lat_ns) == (EXPECTED_IOPS, EXPECTED_BW, EXPECTED_LAT)


def test_iops_and_bandwidth_from_bandwidth_logs_alone() -> None:
    s = summarize_io_logs(texts(*THREE_BW))
    assert (s.iops, s.bw_bytes) == (EXPECTED_IOPS, EXPECTED_BW)  # counted, never summing per-I/O rates
    assert s.lat_ns == {} and s.latency_kind is None
    assert s.notes == ("no lat log among the logs given: no latency percentiles",)


def test_latency_percentiles_per_second_reads_only_that_kind() -> None:
    logs = texts(*THREE_LAT, *THREE_BW, "three_clat.1.log")
    assert latency_percentiles_per_second(logs) == EXPECTED_LAT
    # job 1's clat log alone: 0.. 3 s, four I/Os a second
    clat = latency_percentiles_per_second(logs, (50.0,), kind="clat")
    rows = parse_log((DATA / "three_clat.1.log").read_text())
    want = []
    for s in range(3):
        vals = sorted(rows[rows[:, 0] // 1000 == s, 1].tolist())
        want.append([s + 1.0, float(vals[math.ceil(len(vals) / 2) - 1])])
    assert clat == {"read": want}


def test_exact_percentiles_match_a_brute_force_over_many_seconds() -> None:
    rng = np.random.default_rng(3)
    logs, everything = {}, []
    for job, (n, rate) in enumerate([(40_000, 7), (25_000, 5), (9_000, 2)], start=1):
        times = np.sort(rng.integers(0, n // rate, size=n))
        lat = rng.lognormal(10, 1, size=n).astype(np.int64) + 1
        ddir = rng.integers(0, 2, size=n)
        rows = np.stack([times, lat, ddir, np.full(n, 4096), np.zeros(n, dtype=np.int64)], axis=1)
        logs[f"r_lat.{job}.log"] = "".join(f"{a}, {b}, {c}, {d}, {e}\n" for a, b, c, d, e in rows.tolist())
        everything.append(rows)
    allrows = np.concatenate(everything)
    pcts = (1.0, 50.0, 90.0, 99.0, 99.9, 100.0)
    got = summarize_io_logs({k: blocks(v, 4096) for k, v in logs.items()}, percentiles=pcts, chunk_bytes=20_000)
    for ddir, name in ((0, "read"), (1, "write")):
        mine = allrows[allrows[:, 2] == ddir]
        secs = mine[:, 0] // 1000
        want_lat, want_iops = [], []
        for s in np.unique(secs).tolist():
            vals = np.sort(mine[secs == s, 1])
            # numpy's "inverted_cdf" quantile is the nearest-rank definition
            want_lat.append([s + 1.0] + [float(np.percentile(vals, p, method="inverted_cdf")) for p in pcts])
            want_iops.append([s + 1.0, float(vals.size)])
        assert got.lat_ns[name] == want_lat
        assert got.iops[name] == want_iops


def test_logs_out_of_time_order_across_chunks_are_refused() -> None:
    lines = [f"{t}, {t + 1}, 0, 4096, 0\n" for t in range(0, 5000, 10)] + ["10, 5, 0, 4096, 0\n"]
    # inside one chunk the order is repaired; across chunks a second already finished cannot be
    assert summarize_io_logs({"y_lat.1.log": "".join(lines)}).ios == len(lines)
    with pytest.raises(FioParseError, match="not in time order"):
        summarize_io_logs({"y_lat.1.log": "".join(lines)}, chunk_bytes=200)


def test_argument_checks() -> None:
    with pytest.raises(ValueError, match="latency must be one of"):
        summarize_io_logs({}, latency="bw")
    with pytest.raises(ValueError, match="percentiles"):
        summarize_io_logs({}, percentiles=(0.0,))
    empty = summarize_io_logs({})
    assert (empty.iops, empty.lat_ns, empty.jobs, empty.ios) == ({}, {}, 0, 0)
