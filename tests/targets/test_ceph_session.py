"""The run's one librados client (storbench.targets.ceph_session) without a cluster: which commands
it answers and in what words, read back by the parsers that read the commands' own outputs; a
client that does not start, answers nothing, or ends.  Against the real cluster: test_ceph.py."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from storbench.storage.ceph import parse_osd_perf_dump, parse_rados_stat, parse_rbd_diff, parse_rbd_du, parse_rbd_info
from storbench.targets import ceph_session
from storbench.targets.ceph_session import CephSession, Request, as_printed, interpreter, perf_dump_printed, request_of

DATA = Path(__file__).resolve().parent.parent / "data" / "ceph"


def test_the_commands_it_answers_and_those_it_leaves_to_the_commands():
    assert request_of("ceph", ["health"]) == Request("mon", (("cmd", {"prefix": "health"}),))
    assert request_of("ceph", ["status", "-f", "json"]) == Request("mon", (("cmd", {"prefix": "status", "format": "json"}),))
    assert request_of("ceph", ["osd", "pool", "ls", "detail", "-f", "json"]) == Request(
        "mon", (("cmd", {"prefix": "osd pool ls", "detail": "detail", "format": "json"}),)
    )
    assert request_of("ceph", ["service", "dump", "-f", "json"]) == Request("mgr", (("cmd", {"prefix": "service dump", "format": "json"}),))
    assert request_of("ceph", ["tell", "osd.*", "perf", "dump", "-f", "json"]) == "osd-perf-dump"
    assert request_of("rbd", ["diff", "--format", "json", "rbd/img"]) == Request("rbd-diff", (("pool", "rbd"), ("image", "img")))
    for word in ("info", "du", "status"):
        assert request_of("rbd", [word, "--format", "json", "rbd/img"]) == Request(f"rbd-{word}", (("pool", "rbd"), ("image", "img")))
    assert request_of("rados", ["--pool", "bench", "stat", "storbench.testfile"]) == Request(
        "stat", (("pool", "bench"), ("object", "storbench.testfile"))
    )
    # anything else runs as the command: another format, another tool, a command not in the table
    for tool, args in (("ceph", ["status"]), ("ceph", ["osd", "df", "-f", "json"]), ("ceph", ["tell", "osd.0", "perf", "dump", "-f", "json"]),
                       ("rbd", ["ls", "--format", "json", "rbd"]), ("rbd", ["du", "rbd/img"]), ("rados", ["df", "-f", "json"]),
                       ("radosgw-admin", ["zone", "get"]), ("rados", ["--pool", "bench", "ls", "--all"])):  # fmt: skip
        assert request_of(tool, args) is None, (tool, args)
    assert json.loads(Request("osd", (("id", 3), ("cmd", {"prefix": "perf dump"}))).line()) == {"op": "osd", "id": 3, "cmd": {"prefix": "perf dump"}}


def test_its_answers_read_back_as_the_commands_own_words():
    diff = Request("rbd-diff", (("pool", "rbd"), ("image", "img")))
    extents = [{"offset": 0, "length": 4194304, "exists": "true"}, {"offset": 8388608, "length": 4096, "exists": "true"}]
    rc, out, _ = as_printed(diff, 0, json.dumps({"size": 1 << 30, "extents": extents}), "")
    assert rc == 0 and parse_rbd_diff(out) == ((0, 4194304), (8388608, 4096))
    stat = Request("stat", (("pool", "bench"), ("object", "storbench.testfile")))
    rc, out, _ = as_printed(stat, 0, json.dumps({"size": 16732160, "mtime": "2026-12-01T11:36:36.000000+0000"}), "")
    assert rc == 0 and out == "bench/storbench.testfile mtime 2026-12-01T11:36:36.000000+0000, size 16732160\n"
    assert parse_rados_stat(out) == 16732160
    # a missing object: rados stat's own words, which the sampler reads as "not written yet"
    rc, out, err = as_printed(stat, 2, "", "[errno 2] RADOS object not found")
    assert (rc, out) == (2, "") and "No such file or directory" in err
    assert as_printed(stat, 0, "{}", "") == (5, "", "not the client's answer to stat: '{}'")  # never a traceback
    # an image: rbd info's JSON as the client printed it; a missing one in rbd's own words
    info = Request("rbd-info", (("pool", "rbd"), ("image", "img1")))
    printed = (DATA / "rbd-info.json").read_text()
    assert as_printed(info, 0, printed.strip(), "") == (0, printed.strip() + "\n", "")
    assert parse_rbd_info(as_printed(info, 0, printed, "")[1]).size_bytes == 268435456
    assert as_printed(info, 2, "", "ImageNotFound: [errno 2] RBD image not found") == (2, "", "rbd: error opening image img1: (2) No such file or directory")
    du = Request("rbd-du", (("pool", "rbd"), ("image", "img1")))
    assert parse_rbd_du(as_printed(du, 0, (DATA / "rbd-du.json").read_text(), "")[1], "img1") == 16777216
    assert as_printed(du, 2, "", "ImageNotFound: [errno 2]")[2] == "specified image img1 is not found.\nrbd: du failed: (2) No such file or directory"
    health = Request("mon", (("cmd", {"prefix": "health"}),))
    assert as_printed(health, 0, "HEALTH_WARN 1 pool(s) have no replicas configured", "") == (
        0, "HEALTH_WARN 1 pool(s) have no replicas configured\n", "")  # fmt: skip
    assert as_printed(health, 110, "", "") == (110, "", "error 110: Connection timed out")
    one = (DATA / "tell-osd-perf-dump.json").read_text()
    rc, out, err = perf_dump_printed([(0, (0, one, "")), (1, (0, one, ""))])
    counters = parse_osd_perf_dump(out)
    single = parse_osd_perf_dump(one)
    assert rc == 0 and out.startswith("osd.0: {") and "\nosd.1: {" in out
    assert counters.osds == 2 and counters.read_ops == 2 * single.read_ops and counters.cache_hit_bytes == 2 * (single.cache_hit_bytes or 0)
    assert perf_dump_printed([(0, (0, one, "")), (1, (110, "", "timed out"))]) == (110, "", "osd.1: timed out")
    assert perf_dump_printed([(0, (6, "", "")), (1, (0, one, "")), (2, (110, "", "timed out"))]) == (6, "", "osd.0: No such device or address; osd.2: timed out")


def test_the_interpreter_is_the_ceph_commands_own(tmp_path):
    script = tmp_path / "ceph"
    script.write_text("#! /usr/bin/python3\nprint('hi')\n")
    assert interpreter(str(script)) == ["/usr/bin/python3"]
    script.write_text("#!/usr/bin/env python3 -s\n")
    assert interpreter(str(script)) == ["/usr/bin/env", "python3", "-s"]
    script.write_text("#!/bin/sh\nexec true\n")
    assert interpreter(str(script)) is None  # not a Python script: the commands answer
    assert interpreter(str(tmp_path / "missing")) is None


FAKE = """
import json, sys, time
mode = MODE
print(json.dumps({"rc": 0, "out": "ready", "err": ""}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if mode == "silent":
        time.sleep(60)
    if mode == "ends":
        sys.exit(0)
    if mode == "garbled":
        print("Traceback (most recent call last):", flush=True)
    if mode == "pass":
        print(json.dumps({"rc": 95, "out": "", "err": "pass: not mine"}), flush=True)
        continue
    print(json.dumps({"rc": 0, "out": "HEALTH_OK", "err": ""}), flush=True)
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The client replaced by a script that answers as told: ``fake(MODE)``, MODE ok, silent, ends, garbled or pass."""

    def make(mode: str = "ok") -> None:
        helper = tmp_path / f"helper-{mode}.py"
        helper.write_text(textwrap.dedent(FAKE).replace("MODE", repr(mode)))
        monkeypatch.setattr(ceph_session, "HELPER", str(helper))
        monkeypatch.setattr(ceph_session, "interpreter", lambda: [sys.executable])

    return make


@pytest.mark.parametrize("mode", ["ok", "silent", "ends", "garbled", "pass"])
def test_a_client_that_answers_stops_answering_or_ends(fake, mode):
    fake(mode)
    session, why = CephSession.start("/nonexistent.conf", "admin", 1, wait_s=0.5)
    assert session is not None and why == ""
    try:
        answered = session.run("ceph", ["health"])
        if mode == "ok":
            assert answered == (0, "HEALTH_OK\n", "") and session.dead is None
        elif mode == "silent":  # bounded, and then taken as a cluster that does not answer
            from storbench.targets.ceph import unreachable

            assert answered is not None
            rc, out, err = answered
            assert rc == 124 and "timed out after 0.5 s" in err and unreachable(rc, out, err)
            assert session.run("ceph", ["health"]) == (124, "", "skipped: timed out after 0.5 s")
        elif mode == "pass":  # a question it leaves to the command; it is still there for the next
            assert answered is None and session.dead is None and session.run("ceph", ["health"]) is None and session.proc.poll() is None
        else:  # the client is gone, not the cluster: the commands answer this question and the later ones
            assert answered is None
            assert session.dead == ("the client ended" if mode == "ends" else "not the client's answer: b'Traceback (most recent call last):'")
            assert session.run("ceph", ["health"]) is None and session.run("rados", ["--pool", "p", "stat", "o"]) is None
        assert session.run("rbd", ["ls", "--format", "json", "rbd"]) is None  # not the client's
    finally:
        session.close()
    assert session.proc.poll() is not None  # stopped, reaped


def test_held_is_shared_by_the_targets_of_one_cluster_and_ends_with_the_last(fake):
    fake()
    key = ("/c.conf", "admin", 5)
    with ceph_session.held(*key, wait_s=2.0) as why:
        assert why is None
        session = ceph_session._HELD[key].session
        with ceph_session.held(*key, wait_s=2.0) as again:
            assert again is None and ceph_session._HELD[key].session is session
        assert session.proc.poll() is None  # the first holder still holds it
        assert ceph_session.answer(*key, "ceph", ["health"]) == (0, "HEALTH_OK\n", "")
        assert ceph_session.answer("/other.conf", "admin", 5, "ceph", ["health"]) is None  # another cluster: the commands
    assert key not in ceph_session._HELD and session.proc.poll() is not None


def test_a_client_that_cannot_start_leaves_the_commands_to_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(ceph_session, "interpreter", lambda: None)
    with ceph_session.held("/c.conf", "admin", 5, wait_s=1.0) as why:
        assert why == "no ceph command running on Python"
        assert ceph_session.answer("/c.conf", "admin", 5, "ceph", ["health"]) is None
    monkeypatch.setattr(ceph_session, "interpreter", lambda: [sys.executable])
    helper = tmp_path / "helper.py"  # a Python without rados: the helper's own first line
    helper.write_text('import json; print(json.dumps({"rc": 127, "out": "", "err": "no rados module for python"}))\n')
    monkeypatch.setattr(ceph_session, "HELPER", str(helper))
    session, why = CephSession.start("/c.conf", "admin", 1, wait_s=1.0)
    assert session is None and why == "no rados module for python"
