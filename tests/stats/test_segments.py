"""warp's segment view (storbench.stats.segments): the fastest, median and slowest whole second of a
workload's repetitions, from fio's per-second logs; checked on numbers worked by hand and on a
real fio run's stored series as `storbench show` prints them."""

from __future__ import annotations

import json
import sqlite3

import pytest

from storbench.stats.segments import segments, whole_seconds

from conftest import needs_fio


def _series(iops: list[float], bw: list[float] | None = None, direction: str = "read") -> dict:
    rows = lambda vs: [[float(t), v] for t, v in enumerate(vs, 1)]  # noqa: E731
    return {"format_version": 1, "interval_s": 1, "iops": {direction: rows(iops)}, "bw_bytes": {direction: rows(bw or [v * 4096 for v in iops])}}


def test_first_and_last_second_left_out_and_the_repetitions_pooled():
    # repetition 1: 50 (partial) 100 120 90 (partial 10); repetition 2: 5 110 80 130 95 7
    one, two = _series([50, 100, 120, 90, 10]), _series([5, 110, 80, 130, 95, 7])
    assert whole_seconds(one, "iops", "read") == [100, 120, 90]
    seg = segments([one, two], "read")
    # pooled: 100 120 90 110 80 130 95 -> sorted 80 90 95 100 110 120 130
    assert (seg.seconds, seg.per_s) == (7, (130.0, 100.0, 80.0))
    assert seg.bytes_per_s == (130 * 4096.0, 100 * 4096.0, 80 * 4096.0)
    even = segments([_series([1, 10, 20, 30, 40, 1])], "read")
    assert even.per_s == (40.0, 25.0, 10.0)  # the mean of the two middle seconds


def test_too_few_whole_seconds_or_no_series_give_none():
    assert segments([_series([5, 100, 7]), _series([5, 100, 7])], "read") is None  # 2 whole seconds
    assert segments([None, {"iops": "not a mapping"}], "read") is None
    assert segments([_series([5, 100, 90, 80, 7])], "write") is None  # no such direction


@pytest.mark.slow
@needs_fio
def test_show_prints_each_workloads_segments_from_its_stored_series(cli, tmp_path):
    """A real run of 5 s, twice: the line `storbench show` prints holds the figures the stored
    per-second series give."""
    from storbench.units import fmt_iops

    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "5", "--repeat", "2",
              "--label", "seg", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    with sqlite3.connect(cli.db) as con:
        stored = [json.loads(t) for (t,) in con.execute("select series_json from results order by id")]
    seg = segments(stored, "read")
    assert seg is not None and seg.seconds >= 3 and seg.per_s[0] >= seg.per_s[1] >= seg.per_s[2] > 0
    shown = cli("show", "seg").out
    [line] = [ln for ln in shown.splitlines() if ln.startswith("  rnd4k-q1t1-read read: fastest ")]
    assert f"fastest {fmt_iops(seg.per_s[0])} IOPS" in line and f"median {fmt_iops(seg.per_s[1])} (" in line
    assert line.endswith(f"slowest {fmt_iops(seg.per_s[2])} ({_bw(seg.bytes_per_s[2])}); {seg.seconds} whole seconds"), line
    # on an object store the same seconds are requests: GET, objects/s
    import dataclasses

    from storbench.render.terminal import format_segments
    from storbench.store import Store

    with Store.open(f"sqlite:///{cli.db}") as store:
        records = store.results(1)
    as_objects = [dataclasses.replace(r, target="s3://bench/seg?endpoint=http://127.0.0.1:1") for r in records]
    [objects] = format_segments(as_objects)
    assert objects.startswith(f"  rnd4k-q1t1-read GET: fastest {fmt_iops(seg.per_s[0])} objects/s (") and objects.endswith(line[line.index(";"):])


def _bw(v: float) -> str:
    from storbench.units import fmt_bw

    return fmt_bw(v)
