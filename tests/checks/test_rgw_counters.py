"""radosgw's own counters around a repetition (storbench.backend.rgw): read from a real perf dump
(tests/data/ceph/rgw-perf-dump.json, radosgw 16.2.15 on this machine's test cluster), sampled by
an injected reader, stored and read back, printed.  The real gateway: tests/targets/test_s3.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.rgw import COUNTERS, RgwActivity, format_rgw_activity, parse_perf_dump
from storbench.backend.rgw_sampler import RgwSampler

DATA = Path(__file__).resolve().parents[1] / "data" / "ceph"
DUMP = DATA / "rgw-perf-dump.json"


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


# --------------------------------------------------------------------------- requests held paused (a full cluster)


def test_paused_requests_of_a_real_radosgw_on_a_full_cluster():
    """objecter_requests read from radosgw 16.2.15 here: with the OSD flagged full (ratios set below
    its use) a PUT in flight and radosgw's own watches are held paused; on the healthy cluster none."""
    from storbench.backend.rgw import parse_paused

    assert parse_paused((DATA / "rgw-objecter-requests-full.json").read_text()) == 12
    assert parse_paused((DATA / "rgw-objecter-requests.json").read_text()) == 0
    for text, said in (("nope", "not objecter_requests (JSON)"), ("{}", "no 'ops' list"), ('{"ops": 3}', "no 'ops' list")):
        with pytest.raises(ValueError, match=re.escape(said)):
            parse_paused(text)


def test_the_admin_socket_is_asked_as_cephs_own_client_asks(tmp_path):
    """The command as JSON and a NUL; the answer a 4-byte big-endian length and the text (sent here
    in two pieces); a socket that closes early or is missing reads as not known."""
    import socket
    import struct
    import threading

    from storbench.backend.rgw_sampler import admin_command, paused_requests

    path = str(tmp_path / "rgw.asok")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    asked: list[bytes] = []
    answer = (DATA / "rgw-objecter-requests-full.json").read_bytes()

    def serve(times: int) -> None:
        for i in range(times):
            conn, _ = server.accept()
            with conn:
                asked.append(conn.recv(4096))
                if i == times - 1:  # the last one closes before its whole answer
                    conn.sendall(struct.pack(">I", len(answer)) + answer[:100])
                    continue
                conn.sendall(struct.pack(">I", len(answer)) + answer[:5000])
                conn.sendall(answer[5000:])

    thread = threading.Thread(target=serve, args=(3,), daemon=True)
    thread.start()
    try:
        assert admin_command(path, "objecter_requests") == answer.decode()
        assert paused_requests(path) == 12
        assert paused_requests(path) is None  # cut short
        thread.join(5)
        assert asked == [b'{"prefix": "objecter_requests"}\0'] * 3
    finally:
        server.close()
    assert paused_requests(str(tmp_path / "missing.asok")) is None


def test_the_held_watch_stops_fio_after_three_readings_in_a_row():
    from storbench.run.serverwatch import HeldWatch, first_of

    now = [0.0]
    readings = iter([0, 5, 0, 7, 9, 12, 12])
    watch = HeldWatch("radosgw (/run/rgw.asok)", lambda: next(readings), clock=lambda: now[0])
    said = []
    for step in range(1, 16):
        now[0] = step * 1.0  # called every second, read every 2
        said.append(watch.check())
    # readings at 2 s (0), 4 s (5), 6 s (0: the count starts again), 8, 10, 12 s (7, 9, 12): stopped at 12 s
    assert said[:11] == [None] * 11 and said[11] == (
        "radosgw (/run/rgw.asok) held 12 of its requests to the cluster paused for 4 s: the cluster or a pool is full, or "
        "paused (ceph health detail says which); fio was stopped, its figures are not kept")
    unknown = HeldWatch("radosgw", lambda: None, clock=lambda: now[0])
    now[0] += 10
    assert unknown.check() is None  # a socket that cannot be read says nothing
    assert first_of(None, None) is None and first_of(None, unknown.check) == unknown.check
    both = first_of(lambda: None, lambda: "second")
    assert both is not None and both() == "second"


# --------------------------------------------------------------------------- the bucket's own count (storbench.backend.bucket)


def test_the_bucket_count_a_real_radosgw_gives_on_a_head_and_swift_does_not():
    """A HEAD of a bucket on radosgw 16.2.15 here (5 objects of 1,000-5,000 bytes): its index's own
    totals; Swift 2.30's s3api answers the same HEAD without them (tests/data/s3/)."""
    from storbench.backend.bucket import BucketCount, parse_bucket_headers

    assert parse_bucket_headers(json.loads((DATA / "rgw-head-bucket.json").read_text())) == BucketCount(objects=5, bytes=15000)
    assert parse_bucket_headers({"X-RGW-Object-Count": "7", "X-RGW-Bytes-Used": "28672"}) == BucketCount(7, 28672)  # any case
    assert parse_bucket_headers(json.loads((DATA.parent / "s3" / "swift-s3api-head-bucket.json").read_text())) is None
    with pytest.raises(ValueError, match=re.escape("the server's x-rgw-object-count header is not a number: 'many'")):
        parse_bucket_headers({"x-rgw-object-count": "many", "x-rgw-bytes-used": "1"})


def test_the_bucket_sampler_counts_before_and_after_and_says_what_it_could_not():
    from storbench.backend.bucket import BucketActivity, BucketCount, format_bucket_activity
    from storbench.backend.bucket_sampler import BucketSampler
    from storbench.model import Target

    target = Target(kind="s3", path="s3://bench?endpoint=http://127.0.0.1:7480", params=(("run_prefix", "storbench-h-1-2"),))
    counts = iter([("bucket bench", "server", BucketCount(1024, 4 << 20)), ("bucket bench", "server", BucketCount(1280, 5 << 20))])
    with BucketSampler(target, count=lambda t: next(counts)) as sampler:
        pass
    bucket = sampler.activity().bucket
    assert bucket == BucketActivity(where="bucket bench", source="server", before=BucketCount(1024, 4 << 20), after=BucketCount(1280, 5 << 20))
    assert (bucket.delta_objects(), bucket.delta_bytes()) == (256, 1 << 20)
    assert format_bucket_activity(bucket) == ["bucket bench (the server's own count): 1,024 objects (4.0 MiB) before, 1,280 (5.0 MiB) after: 256 more"]
    listed = BucketActivity(where="s3://bench/storbench-h-1-2/", source="listing", before=BucketCount(300, 0), after=BucketCount(0, 0))
    assert format_bucket_activity(listed) == ["s3://bench/storbench-h-1-2/ (listed: the run's own objects): 300 objects (0 B) before, 0 (0 B) after: 300 fewer"]
    # stored and read back whole
    assert backend_from_dict(json.loads(json.dumps(backend_to_dict(BackendActivity(bucket=bucket))))).bucket == bucket

    def gone(target: Target):
        raise ValueError("more than 20,000 objects under s3://bench/storbench-h-1-2/: not counted")

    with BucketSampler(target, count=gone) as sampler:
        pass
    lost = sampler.activity()
    assert lost.problems == ("bucket bench could not be counted before the run: more than 20,000 objects under s3://bench/storbench-h-1-2/: not counted",)
    assert lost.bucket.delta_objects() is None and format_bucket_activity(lost.bucket) == list(lost.problems)


def test_the_growth_watch_stops_fio_when_the_bucket_stops_growing():
    """Read every 5 s: a count that grows (or cannot be known) is never judged; the same count, or
    a server that does not answer, for the stall time stops fio with one line."""
    from storbench.backend.bucket import BucketCount
    from storbench.run.serverwatch import GrowthWatch

    now = [0.0]
    readings = iter([BucketCount(10, 40960), BucketCount(20, 81920), None, BucketCount(20, 81920), "unanswered", "unanswered",
                     "unanswered", "unanswered"])  # fmt: skip
    watch = GrowthWatch("the S3 server at 127.0.0.1:7480", lambda: next(readings), 12.0, clock=lambda: now[0])
    said = {}
    for step in range(1, 41):
        now[0] = float(step)
        said[step] = watch.check()
    # read at 5 (10), 10 (20), 15 (not known), 20 (20: changed from not known), 25, 30 (not answered since 25)...
    assert [s for s, v in said.items() if v is not None] == [40], said
    assert said[40] == ("the S3 server at 127.0.0.1:7480 took no new object for 12 s: it, or the cluster under it, holds the PUTs "
                        "without answering (a full cluster or pool?); fio was stopped")
