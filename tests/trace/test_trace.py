"""storbench.trace: traces read from the kernel's events, fio's iologs and MSR Cambridge's CSV,
their figures, their stored form and a replay's fidelity (pure; recorded inputs in tests/data/trace)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storbench.errors import StoreError, UsageError
from storbench.fio.json import parse_fio_json
from storbench.trace.codec import decode_events, encode_events, meta_from_dict, meta_to_dict
from storbench.trace.events import FLUSH, READ, TRIM, WRITE, TraceMeta, make_trace
from storbench.trace.fidelity import fidelity, replay_reference
from storbench.trace.figures import depth, nearest_rank, trace_figures
from storbench.trace.iolog import read_iolog, write_iolog_v3
from storbench.trace.msr import read_msr
from storbench.trace.replay import replay_workloads
from storbench.trace.tracefs import read_tracefs, request_kind

DATA = Path(__file__).parent.parent / "data"
META = TraceMeta(label="t", source="tracefs")


def _tracefs():
    with open(DATA / "trace" / "tracefs-loop0-dd-blkdiscard-fsync.txt") as f:
        return read_tracefs(f, META, device=(7, 0))


def test_the_kernels_events_read_as_requests_matching_its_own_counters():
    t = _tracefs()
    # /sys/block/loop0/stat over the capture: 51 reads, 7 writes, 1 discard, 1 flush completed
    assert dict(t.meta.completed_seen) == {"read": 51, "write": 7, "discard": 1, "flush": 1}
    assert (t.count(READ), t.count(WRITE), t.count(TRIM), t.count(FLUSH)) == (51, 6, 1, 1)
    # the 7th write completion is the kernel's zero-length one after the flush: counted, no event
    assert any("1 completion(s) with no issue seen" in n for n in t.meta.notes)
    assert (t.complete_ns >= 0).all()  # every request seen issued was seen completed
    first = 0  # dd's first 4 KiB write at sector 0: issued 21722.246425, completed 21722.247605
    assert (t.op[first], t.offset_bytes[first], t.length_bytes[first]) == (WRITE, 0, 4096)
    assert t.complete_ns[first] - t.issue_ns[first] == 1_180_000
    trim = int(np.flatnonzero(t.op == TRIM)[0])
    assert (t.offset_bytes[trim], t.length_bytes[trim]) == (0, 1048576)


def test_rwbs_flags_name_the_request_kind():
    assert [request_kind(f) for f in ("R", "RA", "WS", "FWFS", "DS", "FF", "N")] == [READ, READ, WRITE, WRITE, TRIM, FLUSH, None]


def test_other_devices_and_lost_events_are_counted():
    lines = [
        "dd-1 [000] ..... 10.000000: block_rq_issue: 7,1 WS 4096 () 0 + 8 be,0,4 [dd]",
        "CPU:1 [LOST 17 EVENTS]",
        "dd-1 [000] ..... 10.000100: block_rq_issue: 8,0 R 4096 () 8 + 8 [dd]",  # an older kernel: no priority
        "k-2 [001] ..s.. 10.000500: block_rq_complete: 8,0 R () 8 + 8 [0]",
    ]
    from storbench.trace.tracefs import TracefsReader

    reader = TracefsReader(device=(8, 0))
    reader.feed(lines)
    t = reader.trace(META)
    assert len(t) == 1 and reader.lost == 17 and reader.other_device == 1
    assert int(t.complete_ns[0] - t.issue_ns[0]) == 400_000


def test_figures_of_a_known_trace():
    # 4 reads of 4 KiB, sequential, one each 250 ms, each 1 ms; 2 writes of 64 KiB overlapping in time
    ms = 1_000_000
    issue = [0, 250 * ms, 500 * ms, 750 * ms, 100 * ms, 100 * ms]
    done = [1 * ms, 251 * ms, 501 * ms, 751 * ms, 110 * ms, 120 * ms]
    t = make_trace(META, issue, done, [READ] * 4 + [WRITE] * 2, [0, 4096, 8192, 12288, 1 << 20, 2 << 20], [4096] * 4 + [65536] * 2)
    f = trace_figures(t)
    r, w = f["directions"]["read"], f["directions"]["write"]
    assert f["events"] == 6 and f["span_s"] == pytest.approx(0.751)
    assert r["ops"] == 4 and r["bytes"] == 16384 and r["sequential_pct"] == 100.0
    assert r["lat_ns"]["50.0"] == 1 * ms and r["lat_ns"]["max"] == 1 * ms
    assert w["lat_ns"]["50.0"] == 10 * ms and w["lat_ns"]["99.0"] == 20 * ms and w["sequential_pct"] == 0.0
    assert f["sizes"] == {"4096": {"read": 4}, "65536": {"write": 2}}
    assert f["depth"]["max"] == 2
    # in flight: 1 for 4 ms (reads), 2 for 10 ms and 1 for 10 ms (writes), over 751 ms
    assert f["depth"]["mean"] == pytest.approx((4 * 1 + 10 * 2 + 10 * 1) / 751)
    assert f["per_second"] == {"t_s": [1], "read_iops": [4], "read_bw_bytes": [16384], "write_iops": [2],
                               "write_bw_bytes": [131072], "trim_iops": [0], "trim_bw_bytes": [0]}  # fmt: skip


def test_nearest_rank_is_exact():
    values = np.arange(1, 1001, dtype=np.int64)
    assert [nearest_rank(values, p) for p in (50.0, 99.0, 99.9, 100.0)] == [500, 990, 999, 1000]


def test_a_trace_without_completions_has_no_latency_nor_depth():
    t = make_trace(META, [0, 10], [-1, -1], [READ, READ], [0, 4096], [4096, 4096])
    f = trace_figures(t)
    assert f["directions"]["read"]["lat_ns"] is None and f["depth"] is None and depth(t) is None


def test_the_stored_form_gives_back_every_event_in_a_few_bytes_each():
    t = _tracefs()
    blob = encode_events(t)
    back = decode_events(blob, t.meta)
    for col in ("issue_ns", "complete_ns", "op", "offset_bytes", "length_bytes"):
        assert np.array_equal(getattr(t, col), getattr(back, col)), col
    # a million requests as an application makes them: 4 KiB random reads at ~20k IOPS, latencies 50-500 us
    rng = np.random.default_rng(1)
    n = 1_000_000
    issue = np.cumsum(rng.exponential(50_000, n).astype(np.int64))
    lat = rng.integers(50_000, 500_000, n)
    big = make_trace(META, issue, issue + lat, rng.integers(0, 2, n), rng.integers(0, 1 << 18, n) * 4096, np.full(n, 4096))
    blob = encode_events(big)
    assert len(blob) / n <= 16  # the issue's target: at most 16 bytes an event
    back = decode_events(blob, big.meta)
    assert np.array_equal(back.issue_ns, big.issue_ns) and np.array_equal(back.offset_bytes, big.offset_bytes)
    assert meta_from_dict(meta_to_dict(t.meta)) == t.meta


def test_a_blob_of_another_kind_or_a_newer_version_is_one_line():
    with pytest.raises(StoreError, match="not storbench's"):
        decode_events(b"XXXX" + bytes(20), META)
    newer = bytearray(encode_events(_tracefs()))
    newer[4] = 99
    with pytest.raises(StoreError, match="version 99, newer than this storbench reads"):
        decode_events(bytes(newer), META)
    with pytest.raises(StoreError, match="upgrade storbench"):
        meta_from_dict({"version": 99})


def test_the_written_iolog_reads_back_as_the_same_requests():
    t = _tracefs()
    text = "".join(write_iolog_v3(t))
    lines = text.splitlines()
    assert lines[:3] == ["fio version 3 iolog", "0 trace add", "0 trace open"] and lines[-1].endswith(" trace close")
    assert "0 trace write 0 4096" in lines and any(line.endswith(" trace sync 0 0") for line in lines)
    back = read_iolog(lines, META)
    assert len(back) == len(t)
    assert np.array_equal(back.op, t.op) and np.array_equal(back.offset_bytes[back.op != FLUSH], t.offset_bytes[t.op != FLUSH])
    assert np.array_equal(back.issue_ns, t.issue_ns // 1000 * 1000)  # whole microseconds
    reads_only = read_iolog("".join(write_iolog_v3(t, kinds=(READ,))).splitlines(), META)
    assert set(reads_only.op.tolist()) == {READ} and len(reads_only) == 51


def test_v2_iologs_and_bad_iologs():
    v2 = ["fio version 2 iolog", "f add", "f open", "f read 0 4096", "f wait 2000", "f write 4096 4096", "f close"]
    t = read_iolog(v2, META)
    assert t.issue_ns.tolist() == [0, 2_000_000] and t.op.tolist() == [READ, WRITE]
    with pytest.raises(UsageError, match=r"x.log: line 1 is 'hello', not a fio iolog header"):
        read_iolog(["hello"], META, where="x.log")
    with pytest.raises(UsageError, match=r"x.log: line 3 has action 'erase'"):
        read_iolog(["fio version 3 iolog", "0 f add", "5 f erase 0 1"], META, where="x.log")
    with pytest.raises(UsageError, match=r"line 2: a read needs an offset and a length"):
        read_iolog(["fio version 3 iolog", "5 f read"], META, where="x.log")


def test_msr_cambridge_csv():
    with open(DATA / "trace" / "msr-cambridge-sample.csv") as f:
        t = read_msr(f, TraceMeta(label="hm0", source="msr-cambridge"))
    assert len(t) == 5 and t.op.tolist() == [WRITE, READ, READ, WRITE, WRITE]
    # 100 ns ticks: the second request 1.3320526 s after the first; its response 113 ticks = 11.3 us
    assert int(t.issue_ns[1]) == 1_332_052_600 and int(t.complete_ns[1] - t.issue_ns[1]) == 11_300
    assert int(t.length_bytes[3]) == 8192
    two = ["1,hm,0,Read,0,512,1", "2,prn,1,Write,0,512,1"]
    with pytest.raises(UsageError, match=r"holds 2 volumes \(hm,0 \(1 requests\), prn,1 \(1 requests\)\): name one with --disk"):
        read_msr(two, META, where="m.csv")
    assert len(read_msr(two, META, disk="prn,1")) == 1
    with pytest.raises(UsageError, match=r"m\.csv: line 1 has type 'Erase'"):
        read_msr(["1,hm,0,Erase,0,512,1"], META, where="m.csv")


def _synthetic():
    with open(DATA / "trace" / "synthetic-500iops.iolog") as f:
        return read_iolog(f, TraceMeta(label="syn", source="fio-iolog"))


def test_fidelity_of_a_real_timed_replay():
    t = _synthetic()
    ref = replay_reference(t, 3, "timed", (READ, WRITE), {}, None)
    assert ref["ops"] == {"read": 100, "write": 100, "trim": 0, "flush": 0} and ref["span_s"] == pytest.approx(0.398)
    result = parse_fio_json((DATA / "fio-json" / "replay_timed_qd4_fio333.json").read_text())
    fid = fidelity(ref, result, None, 4)
    # fio 3.33 counted every operation but 98 and 99 x 4 KiB of their bytes at depth 4: shown, not judged
    assert fid["ops"]["read"] == [100, 100] and fid["bytes"] == {"read": [401408, 409600], "write": [405504, 409600], "trim": [0, 0]}
    assert fid["wall_s"] == pytest.approx(0.403) and fid["drift_pct"] == pytest.approx((0.403 - 0.398) / 0.398 * 100)
    # per second: the trace's 3 s at 100, 200, 100 requests; fio's log said 100, 150 in its first two
    long = make_trace(META, [i * 10_000_000 for i in range(300)], [-1] * 300, [READ] * 300, [0] * 300, [4096] * 300)
    ref = replay_reference(long, 4, "timed", (READ,), {}, None)
    assert ref["per_second_iops"] == [100, 100, 100]
    fid = fidelity(ref, result, {"iops": {"read": [[1, 100.0], [2, 150.0]], "write": [[2, 0.0]]}}, 1)
    # the last second is partial in both and not compared: |100-100|/100 and |150-100|/100
    assert fid["per_second_error_pct"] == {"mean": 25.0, "worst": 50.0, "seconds": 2}


def test_replay_workloads_say_what_they_replay():
    t = _synthetic()
    timed, fast = replay_workloads(t, 9, fio_version="fio-3.33")
    assert (timed.name, fast.name) == ("replay-syn-timed", "replay-syn-fast")
    o = dict(timed.options)
    assert o["rw"] == "randrw" and o["iodepth"] == "1" and o["size"] == "6m" and "replay_no_stall" not in o
    assert dict(fast.options)["replay_no_stall"] == "1" and fast.headline == "iops" and timed.headline == "lat"
    (ro,) = replay_workloads(t, 9, modes=("fast",), reads_only=True, fio_version="fio-3.33")
    assert dict(ro.options)["rw"] == "randread" and ro.replay["left_out"] == {"write": 100} and ro.replay["kinds"] == ["read"]
    trims = make_trace(META, [0, 1], [-1, -1], [READ, TRIM], [0, 0], [4096, 4096])
    (w,) = replay_workloads(trims, 1, modes=("timed",), fio_version="fio-3.33")
    assert w.replay["left_out"] == {"trim": 1}  # fio 3.33 ignores a text iolog's trims: left out, said
    (w,) = replay_workloads(trims, 1, modes=("timed",), fio_version="fio-3.36")
    assert w.replay["left_out"] == {} and "trim" in w.replay["kinds"]


def test_dbench_on_ext4_counts_as_the_kernel_counted():
    """trace_pipe under dbench (2 clients, 2 s) on ext4 on loop0, then sync: the kernel's stat said
    5 reads, 6,821 writes and 4,141 flushes; a journal commit's write completes twice (its data, then
    the request with no sectors), an fsync's empty flush once as a write of no sectors."""
    import gzip

    with gzip.open(DATA / "trace" / "tracefs-loop0-dbench-ext4.txt.gz", "rt") as f:
        t = read_tracefs(f, META, device=(7, 0))
    assert dict(t.meta.completed_seen) == {"read": 5, "write": 6821, "flush": 4141}
    assert (t.count(READ), t.count(WRITE), t.count(FLUSH)) == (5, 6503, 4141)


def test_a_timed_replay_by_fio_333_runs_at_depth_1_and_says_why():
    ms = 1_000_000
    # 4 requests in flight at once, then 4 more
    t = make_trace(META, [0, 0, 0, 0, 10 * ms, 10 * ms, 10 * ms, 10 * ms], [ms] * 4 + [11 * ms] * 4, [READ] * 8, [0] * 8, [4096] * 8)
    timed, fast = replay_workloads(t, 1, fio_version="fio-3.33")
    assert dict(timed.options)["iodepth"] == "1" and timed.replay["depth_capped"] == 4
    assert dict(fast.options)["iodepth"] == "4" and "depth_capped" not in fast.replay
    (timed,) = replay_workloads(t, 1, modes=("timed",), fio_version="fio-3.36")
    assert dict(timed.options)["iodepth"] == "4"


def test_alibaba_block_traces():
    from storbench.trace.alibaba import looks_like_alibaba, read_alibaba

    with open(DATA / "trace" / "alibaba-sample.csv") as f:
        lines = f.read().splitlines()
    assert looks_like_alibaba(lines[0]) and not looks_like_alibaba("128166372003061629,hm,0,Write,7014912,4096,26")
    with pytest.raises(UsageError, match=r"holds 2 disks \(3 \(4 requests\), 5 \(1 requests\)\): name one with --disk DEVICE_ID"):
        read_alibaba(lines, META, where="a.csv")
    t = read_alibaba(lines, TraceMeta(label="ali", source="alibaba"), disk="3")
    assert len(t) == 4 and t.op.tolist() == [WRITE, READ, WRITE, READ]
    assert t.issue_ns.tolist() == [0, 151_000, 1_000_000, 2_151_000] and int(t.length_bytes[3]) == 65536
    assert not (t.complete_ns >= 0).any()
    with pytest.raises(UsageError, match=r"line 1 has opcode 'X'"):
        read_alibaba(["3,X,0,4096,1"], META)
