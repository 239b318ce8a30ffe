"""radosgw's own counters around a repetition (storbench.backend.rgw): read from a real perf dump
(tests/data/ceph/rgw-perf-dump.json, radosgw 16.2.15 on this machine's test cluster), sampled by
an injected reader, stored and read back, printed.  The real gateway: tests/targets/test_s3.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.rgw import COUNTERS, RgwActivity, format_rgw_activity, parse_perf_dump
from storbench.backend.rgw_sampler import RgwSampler

DUMP = Path(__file__).resolve().parents[1] / "data" / "ceph" / "rgw-perf-dump.json"


def test_the_rgw_section_of_a_real_perf_dump():
    counters = parse_perf_dump(DUMP.read_text())
    raw = json.loads(DUMP.read_text())["rgw"]
    assert set(counters) == set(COUNTERS)
    for name in COUNTERS:  # a plain counter, or the count of an {avgcount, sum} pair
        value = raw[name]
        assert counters[name] == (value["avgcount"] if isinstance(value, dict) else value)
    assert counters["req"] >= counters["get"] + counters["put"] > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", r"not a perf dump \(JSON\)"),
        ('{"osd": {"op_r": 1}}', "no 'rgw' section"),
        ('{"rgw": {"get": 1}}', "no 'req' counter"),
    ],
)
def test_what_is_not_radosgws_perf_dump_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_perf_dump(text)


def test_the_sampler_keeps_before_and_after_and_says_what_it_could_not_read():
    before = json.loads(DUMP.read_text())
    after = json.loads(DUMP.read_text())
    after["rgw"]["req"] += 120
    after["rgw"]["get"] += 100
    after["rgw"]["failed_req"] += 20
    dumps = iter([json.dumps(before), json.dumps(after)])
    with RgwSampler("/run/ceph/rgw.asok", read=lambda socket: next(dumps)) as sampler:
        pass
    rgw = sampler.activity().rgw
    assert (rgw.delta("req"), rgw.delta("get"), rgw.delta("failed_req"), rgw.delta("put")) == (120, 100, 20, 0)
    assert format_rgw_activity(rgw) == ["radosgw (its own counters): 120 requests, 20 failed; 100 GETs served (0 B); 0 PUTs (0 B)"]
    # stored and read back whole
    assert backend_from_dict(json.loads(json.dumps(backend_to_dict(BackendActivity(rgw=rgw))))).rgw == rgw

    def gone(socket: str) -> str:
        raise OSError("connect to /run/ceph/rgw.asok failed: No such file or directory")

    with RgwSampler("/run/ceph/rgw.asok", read=gone) as sampler:
        pass
    lost = sampler.activity()
    assert lost.problems == ("radosgw's counters before the run could not be read from /run/ceph/rgw.asok: "
                             "connect to /run/ceph/rgw.asok failed: No such file or directory",)  # fmt: skip
    assert lost.rgw.delta("req") is None and format_rgw_activity(lost.rgw) == list(lost.problems)


def test_a_counter_that_went_down_is_not_compared():
    restarted = RgwActivity(socket="/s", before={"req": 900, "get": 500}, after={"req": 12, "get": 3})
    assert restarted.delta("req") is None and restarted.delta("get") is None
    assert format_rgw_activity(restarted) == ["radosgw's counters at /s went down during the run (did it restart?): not compared"]


def test_a_counter_kept_as_a_count_and_a_sum_is_its_count():
    assert parse_perf_dump('{"rgw": {"req": {"avgcount": 5, "sum": 0.3}, "get": 2, "put": true}}') == {"req": 5, "get": 2}
