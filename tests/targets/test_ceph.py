"""RBD images and RADOS pools against a real one-node Ceph cluster (tests/ceph.py: mon, mgr,
one BlueStore OSD on a 2 GiB file, all under a temporary directory, bound to 127.0.0.1).

One cluster for the module (about 15 s to bring up); the OSD-killed test runs last and
restarts the OSD.  The parsers' tests on recorded outputs are in test_ceph_parsers.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import needs_fio, needs_root
from servers import when_fio_runs

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(shutil.which("ceph-mon") is None or shutil.which("ceph-osd") is None,
                       reason="needs ceph-mon, ceph-mgr, ceph-osd and ceph-common (tests/setup-system.sh installs them)"),
]

RUNTIME = ("--runtime", "500ms", "--no-report")


@pytest.fixture(scope="module")
def ceph(tmp_path_factory):
    from ceph import Cluster

    with Cluster(tmp_path_factory.mktemp("ceph")) as cluster:
        yield cluster


def _conf(ceph) -> tuple[str, str]:
    return ("--ceph-conf", str(ceph.conf))


def _results(cli, run: int) -> list[dict]:
    res = cli("show", str(run), "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def _sparse(rec: dict) -> list[dict]:
    return [f for f in rec["findings"] if f["check"] == "sparse-read"]


def test_rbd_image_guarded_described_prefilled_and_reported(cli, ceph, tmp_path: Path):
    ceph.fresh_image()
    image = f"rbd:{ceph.POOL}/{ceph.IMAGE}"
    # writes need --destroy-data spelled as the target; nothing runs, nothing is stored
    res = cli("run", "--target", image, *_conf(ceph), "--workload", "rnd4k-q1t1-write", *RUNTIME)
    assert res.code == 2 and "[destroy-data]" in res.err and f"--destroy-data {image}" in res.err, res.err
    assert len(res.err.strip().splitlines()) == 1
    assert json.loads(cli("list", "--json").out) == []

    # an image someone else has open is refused for writes (rbd watch holds a watch on it until its stdin ends)
    watcher = subprocess.Popen(["rbd", "--conf", str(ceph.conf), "watch", f"{ceph.POOL}/{ceph.IMAGE}"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while '"watchers":[]' in ceph.cli("rbd", "status", "--format", "json", f"{ceph.POOL}/{ceph.IMAGE}").stdout:
            assert time.monotonic() < deadline, "rbd watch did not register"
            time.sleep(0.2)
        res = cli("run", "--target", image, *_conf(ceph), "--destroy-data", image, "--workload", "rnd4k-q1t1-write", *RUNTIME)
        assert res.code == 2 and "[rbd-in-use]" in res.err and "1 watcher(s)" in res.err, res.err
    finally:
        watcher.communicate(b"\n", timeout=15)

    # the fresh image read: librbd answers from the object map, the OSDs serve (almost) nothing
    res = cli("run", "--target", image, *_conf(ceph), "--workload", "rnd4k-q32t1-read", "--size", "32m", "--label", "fresh", *RUNTIME)
    assert res.code == 0, res.err
    (fresh,) = _results(cli, 1)
    (finding,) = _sparse(fresh)
    assert finding["severity"] == "invalid" and "rbd diff" in finding["message"] and "--prefill" in finding["fix"]
    c = fresh["backend"]["ceph"]
    assert c["image"] == ceph.IMAGE and c["area_bytes"] == 32 * 2**20 and c["unwritten_before_bytes"] == 32 * 2**20
    fio_reads = fresh["jobs"][0]["read"]["io_bytes"] // 4096
    assert fio_reads > 1000 and c["osd_read_ops"] < fio_reads / 20, (fio_reads, c["osd_read_ops"])

    # the cluster described: the status, the pool, the OSD and the image; the never-written image is flagged before a run
    res = cli("doctor", "--target", image, *_conf(ceph), "--json")
    assert res.code == 0, res.err
    st = json.loads(res.out)[0]["storage"]
    warned = {f["workload"] for f in json.loads(res.out)[0]["findings"] if f["check"] == "sparse-read"}
    assert warned == {"seq1m-q8t1-read", "seq1m-q1t1-read", "rnd4k-q32t1-read", "rnd4k-q1t1-read"}, warned
    assert st["target_kind"] == "rbd" and st["filesystem"] is None
    info = st["ceph"]
    assert info["fsid"] == ceph.fsid and info["health"] == "HEALTH_OK" and (info["mons"], info["osds"], info["osds_up"]) == (1, 1, 1)
    assert info["pool"]["name"] == ceph.POOL and (info["pool"]["size"], info["pool"]["min_size"], info["pool"]["pg_num"]) == (1, 1, 8)
    assert info["pool"]["applications"] == ["rbd"] and info["pool"]["type"] == "replicated"
    (osd,) = info["osd_details"]
    assert osd["objectstore"] == "bluestore" and osd["block_size_bytes"] == 2 * 2**30
    img = info["image"]
    assert img["size_bytes"] == 256 * 2**20 and img["object_size_bytes"] == 4 * 2**20 and "object-map" in img["features"]
    assert img["used_bytes"] == 0 and img["watchers"] == 0
    assert info["version"].startswith("16.2.")

    # the SSD study's suite, after --prefill; then the same read: now measured
    res = cli("run", "--target", image, *_conf(ceph), "--destroy-data", image, "--prefill", "--suite", "ssd-journal",
              "--size", "32m", "--label", "journal", *RUNTIME)  # fmt: skip
    assert res.code == 0, res.err
    assert "--prefill: wrote 32.0 MiB of " + image in res.out + res.err
    journal = _results(cli, 2)
    assert {r["workload"] for r in journal} == {"journal-sync", "journal-fsync", "parallel-sync", "parallel-fsync", "non-txn", "linear-write"}
    for rec in journal:
        written = rec["backend"]["ceph"]["osd_write_ops"]
        assert written > 0, rec["workload"]  # every write reached an OSD
        assert rec["options"]["ioengine"] == "rbd" and rec["options"]["rbdname"] == ceph.IMAGE and rec["options"]["pool"] == ceph.POOL
    res = cli("run", "--target", image, *_conf(ceph), "--workload", "rnd4k-q32t1-read", "--size", "32m", "--label", "filled", *RUNTIME)
    assert res.code == 0, res.err
    (filled,) = _results(cli, 3)
    assert _sparse(filled) == []
    assert filled["backend"]["ceph"]["unwritten_before_bytes"] == 0
    osd_reads = filled["backend"]["ceph"]["osd_read_ops"]
    fio_reads = filled["jobs"][0]["read"]["io_bytes"] // 4096
    assert osd_reads >= fio_reads * 0.9, (osd_reads, fio_reads)  # every read went to the OSD
    res = cli("doctor", "--target", image, *_conf(ceph), "--json")
    assert json.loads(res.out)[0]["storage"]["ceph"]["image"]["used_bytes"] >= 32 * 2**20

    # the report shows the cluster description and the OSDs' side of each workload
    out = tmp_path / "r.html"
    res = cli("report", "1", "3", "-o", str(out))
    assert res.code == 0, res.err
    html = out.read_text()
    assert f"fsid {ceph.fsid}" in html and f"rbd image {ceph.POOL}/{ceph.IMAGE}: size 256 MiB" in html
    assert "ceph osd.0: bluestore" in html
    shown = cli("show", "3").out
    assert "OSDs (1): read " in shown and "never written before the run: 0 B of 32 MiB" in shown

    # doctor describes the cluster too
    res = cli("doctor", "--target", image, *_conf(ceph))
    assert res.code == 0, res.err
    assert f"ceph pool {ceph.POOL}: replicated, size 1/min_size 1, 8 pgs, application rbd" in res.out


def test_rados_pool_guarded_prefilled_and_cleaned(cli, ceph):
    pool = f"rados:{ceph.OBJECT_POOL}"
    # a pool holding someone else's object is refused for writes, even with --destroy-data
    ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "put", "someone-elses", str(ceph.conf))
    try:
        res = cli("run", "--target", pool, *_conf(ceph), "--destroy-data", pool, "--workload", "rnd4k-q1t1-write", *RUNTIME)
        assert res.code == 2 and "[rados-foreign-objects]" in res.err and "someone-elses" in res.err, res.err
    finally:
        ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "rm", "someone-elses")

    res = cli("run", "--target", pool, *_conf(ceph), "--workload", "rnd4k-q32t1-read", "--size", "16m", *RUNTIME)
    assert res.code == 0, res.err
    (fresh,) = _results(cli, 1)
    (finding,) = _sparse(fresh)
    assert finding["severity"] == "invalid" and "rados stat" in finding["message"]
    assert fresh["backend"]["ceph"]["osd_read_bytes"] < 2**20  # 16 MiB "read", nothing served
    assert ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "ls").stdout == ""  # the object the engine made is gone

    res = cli("run", "--target", pool, *_conf(ceph), "--destroy-data", pool, "--prefill", "--workload", "rnd4k-q1t1-write",
              "--workload", "rnd4k-q32t1-read", "--size", "16m", *RUNTIME)  # fmt: skip
    assert res.code == 0, res.err
    write, read = _results(cli, 2)
    # the preset's end_fsync is left out (fio 3.33's rados engine crashes on it), and the job says so
    assert "end_fsync" not in write["options"] and write["options"]["conf"] == str(ceph.conf)
    dry = cli("run", "--target", pool, *_conf(ceph), "--destroy-data", pool, "--workload", "rnd4k-q1t1-write", "--dry-run")
    assert "# storbench: end_fsync left out" in dry.out and "end_fsync=1" not in dry.out, dry.out
    assert write["backend"]["ceph"]["osd_write_ops"] >= write["jobs"][0]["write"]["io_bytes"] // 4096
    assert _sparse(read) == [] and read["backend"]["ceph"]["unwritten_before_bytes"] == 0
    res = cli("doctor", "--target", pool, *_conf(ceph), "--json")
    assert json.loads(res.out)[0]["storage"]["ceph"]["pool"]["applications"] == ["rados"]
    assert ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "ls").stdout == ""


def test_the_runs_one_client_answers_as_the_commands_do(ceph, tmp_path: Path):
    """storbench's own questions to the cluster during a run (targets/ceph_session.py): one
    librados client answers each command it knows with what the command itself prints, read by
    the same parsers; what it does not know runs as the command; a cluster that does not answer
    leaves the commands to say so; the client ends with the run."""
    from storbench.storage.ceph import (
        parse_ceph_status,
        parse_ceph_versions,
        parse_osd_metadata,
        parse_osd_perf_dump,
        parse_pool_ls_detail,
        parse_rados_stat,
        parse_rbd_diff,
        parse_rbd_du,
        parse_rbd_info,
        parse_rbd_status,
    )
    from storbench.targets import ceph_session

    ceph.fresh_image()
    ceph.cli("rbd", "bench", "--io-type", "write", "--io-size", "4K", "--io-total", "64K", "--io-pattern", "rand", f"{ceph.POOL}/{ceph.IMAGE}")
    ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "put", "storbench.probe", str(ceph.conf))
    key = (str(ceph.conf), "admin", 5)
    try:
        before = parse_osd_perf_dump(ceph.cli("ceph", "tell", "osd.*", "perf", "dump", "-f", "json").stdout)
        with ceph_session.held(*key, wait_s=30) as why:
            assert why is None
            session = ceph_session._HELD[key].session

            def both(tool: str, *args: str) -> tuple[str, str]:
                proc = ceph.cli(tool, *args, check=False)
                answered = ceph_session.answer(*key, tool, args)
                assert answered is not None and answered[0] == proc.returncode == 0, (tool, args, answered, proc.stderr)
                return answered[1], proc.stdout

            mine, theirs = both("ceph", "status", "-f", "json")
            assert parse_ceph_status(mine).fsid == parse_ceph_status(theirs).fsid == ceph.fsid
            assert parse_ceph_status(mine).osds_up == parse_ceph_status(theirs).osds_up == 1
            for args, parse in ((("versions", "-f", "json"), parse_ceph_versions),
                                (("osd", "pool", "ls", "detail", "-f", "json"), lambda t: parse_pool_ls_detail(t, ceph.POOL)),
                                (("osd", "metadata", "-f", "json"), parse_osd_metadata)):  # fmt: skip
                mine, theirs = both("ceph", *args)
                assert parse(mine) == parse(theirs), args
            mine, theirs = both("ceph", "fsid", "-f", "json")
            assert json.loads(mine) == json.loads(theirs) == {"fsid": ceph.fsid}
            mine, theirs = both("ceph", "service", "dump", "-f", "json")
            assert json.loads(mine)["services"].keys() == json.loads(theirs)["services"].keys()
            mine, theirs = both("ceph", "health")
            assert mine.split()[0] == theirs.split()[0] and mine.split()[0].startswith("HEALTH_")
            mine, theirs = both("rbd", "diff", "--format", "json", f"{ceph.POOL}/{ceph.IMAGE}")
            assert parse_rbd_diff(mine) == parse_rbd_diff(theirs) != ()
            mine, theirs = both("rados", "--pool", ceph.OBJECT_POOL, "stat", "storbench.probe")
            assert parse_rados_stat(mine) == parse_rados_stat(theirs) == ceph.conf.stat().st_size
            mine, theirs = both("ceph", "tell", "osd.*", "perf", "dump", "-f", "json")
            counters, cli_counters = parse_osd_perf_dump(mine), parse_osd_perf_dump(theirs)
            assert counters.osds == cli_counters.osds == 1
            assert before.write_ops <= counters.write_ops <= cli_counters.write_ops  # counters only grow
            # a missing object: the command's own status and words (the sampler reads "not written yet")
            rc, out, err = ceph_session.answer(*key, "rados", ("--pool", ceph.OBJECT_POOL, "stat", "nosuch"))
            assert rc == 2 and out == "" and "No such file or directory" in err
            mine, theirs = both("rbd", "info", "--format", "json", f"{ceph.POOL}/{ceph.IMAGE}")
            assert parse_rbd_info(mine) == parse_rbd_info(theirs) and (parse_rbd_info(mine).size_bytes or 0) > 0
            assert mine == theirs  # every field, in rbd's own words
            mine, theirs = both("rbd", "du", "--format", "json", f"{ceph.POOL}/{ceph.IMAGE}")
            assert mine == theirs and (parse_rbd_du(mine, ceph.IMAGE) or 0) > 0  # the objects rbd bench wrote
            # an image without a fast-diff map: rbd du asks every object in turn, the command's time to spend, not the client's
            ceph.cli("rbd", "create", "--size", "64M", "--image-feature", "layering", f"{ceph.POOL}/plain")
            try:
                assert ceph_session.answer(*key, "rbd", ("du", "--format", "json", f"{ceph.POOL}/plain")) is None
                assert session.dead is None and both("rbd", "info", "--format", "json", f"{ceph.POOL}/plain")[0] != ""
            finally:
                ceph.cli("rbd", "rm", "--no-progress", f"{ceph.POOL}/plain", check=False)
            mine, theirs = both("rbd", "status", "--format", "json", f"{ceph.POOL}/{ceph.IMAGE}")
            assert mine == theirs and parse_rbd_status(mine) == ()
            for word in ("info", "du", "status"):  # a missing image: rbd's own status and words
                answered = ceph_session.answer(*key, "rbd", (word, "--format", "json", f"{ceph.POOL}/nosuch"))
                proc = ceph.cli("rbd", word, "--format", "json", f"{ceph.POOL}/nosuch", check=False)
                said = "\n".join(line for line in proc.stderr.strip().splitlines() if "asok" not in line)  # (the client holds the admin socket)
                assert answered == (proc.returncode, proc.stdout, said) and proc.returncode == 2, (answered, proc.stderr)
            assert ceph_session.answer(*key, "rbd", ("ls", "--format", "json", ceph.POOL)) is None  # the command's
            from storbench.model import Target
            from storbench.targets import ceph as ceph_kind

            target = Target(kind="rbd", path=f"{ceph.POOL}/{ceph.IMAGE}", params=(("conf", str(ceph.conf)), ("client", "admin")))
            rc, out, _err = ceph_kind.cli(target, "ceph", "health")  # the edge every caller goes through
            assert rc == 0 and out.startswith("HEALTH_")
            # the client killed under the run (not the cluster): the commands answer from then on
            session.proc.kill()
            session.proc.wait(timeout=30)
            rc, out, _err = ceph_kind.cli(target, "ceph", "health")
            assert rc == 0 and out.startswith("HEALTH_") and session.dead == "the client ended" and not session.hung
            rc, out, _err = ceph_kind.cli(target, "rados", "--pool", ceph.OBJECT_POOL, "stat", "storbench.probe")
            assert rc == 0 and parse_rados_stat(out) == ceph.conf.stat().st_size
        assert session.proc.poll() is not None and ceph_session.answer(*key, "ceph", ("health",)) is None  # ended with the run
    finally:
        ceph.cli("rados", "--pool", ceph.OBJECT_POOL, "rm", "storbench.probe", check=False)
    # a cluster that does not answer (no monitor at the address): the client does not start, in a
    # bound, and says why; the commands are left to answer (and to fail) as before
    dead = tmp_path / "dead.conf"
    dead.write_text(ceph.conf.read_text().replace("127.0.0.1:", "127.0.0.9:"))
    with ceph_session.held(str(dead), "admin", 1, wait_s=5) as why:
        assert why is not None and "error connecting to the cluster" in why, why
        assert ceph_session.answer(str(dead), "admin", 1, "ceph", ("health",)) is None


def test_curve_on_an_rbd_image_with_the_osds_side_of_each_step(cli, ceph):
    """storbench curve on RBD: --ceph-conf reaches the cluster, and every step is a stored result
    with its own figures and what the OSD did during it."""
    image = f"rbd:{ceph.POOL}/{ceph.IMAGE}"
    res = cli("curve", "--target", image, *_conf(ceph), "--destroy-data", image, "--workload", "curve-randwrite-4k",
              "--load", "iodepth=1,4", "--size", "16m", "--runtime", "300ms", "--json", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    data = json.loads(res.out)
    (curve,) = data["curves"]
    assert curve["target"] == image and [p["step"] for p in curve["points"]] == [{"iodepth": "1"}, {"iodepth": "4"}]
    by_id = {r["result"]: r for r in data["results"]}
    for point, depth in zip(curve["points"], ("1", "4")):
        rec = by_id[point["result"]]
        assert rec["workload"] == f"curve-randwrite-4k@iodepth={depth}" and rec["options"]["iodepth"] == depth
        assert rec["options"]["ioengine"] == "rbd" and rec["options"]["pool"] == ceph.POOL
        assert point["iops"] == pytest.approx(rec["jobs"][0]["write"]["iops"])
        assert rec["backend"]["ceph"]["osd_write_ops"] > 0  # the OSD's side of the step


def test_ceph_target_errors_are_one_line(cli, ceph, tmp_path: Path):
    for args, words in (
        (("--target", "rbd:rbd"), "give rbd:POOL/IMAGE"),
        (("--target", "rbd:rbd/nosuch", *_conf(ceph)), "rbd create --size 1G rbd/nosuch"),
        (("--target", "rados:nosuch", *_conf(ceph)), "ceph osd pool create nosuch"),
        (("--target", "rbd:rbd/img1", "--ceph-conf", str(tmp_path / "missing.conf")), "is not a readable file: give --ceph-conf PATH"),
        (("--target", str(tmp_path), *_conf(ceph)), "apply only to rbd:, rados: and s3:// targets"),
    ):
        res = cli("run", *args, "--workload", "rnd4k-q1t1-read", *RUNTIME)
        assert res.code == 2, (args, res.out, res.err)
        (line,) = res.err.strip().splitlines()
        assert words in line, (args, line)
    # a cluster that does not answer: bounded by --ceph-timeout, one line
    bad = tmp_path / "bad.conf"
    bad.write_text(ceph.conf.read_text().replace(":3300", ":3309").replace(":6789", ":6799"))
    started = time.monotonic()
    res = cli("run", "--target", "rbd:rbd/img1", "--ceph-conf", str(bad), "--ceph-timeout", "3", "--workload", "rnd4k-q1t1-read", *RUNTIME)
    assert res.code == 2 and "cannot reach the Ceph cluster of " + str(bad) in res.err, res.err
    assert time.monotonic() - started < 30


def test_osd_killed_mid_workload(cli, ceph):
    """The OSD SIGKILLed while fio writes: librados would wait for it forever (the monitor goes
    on calling it up); --ceph-timeout bounds each operation, the workload fails with one line
    naming the cluster, the next workload still runs (and fails on its own), no fio is left."""
    image = f"rbd:{ceph.POOL}/{ceph.IMAGE}"
    before = cli("run", "--target", image, *_conf(ceph), "--destroy-data", image, "--workload", "rnd4k-q1t1-write",
                 "--size", "16m", "--label", "before", *RUNTIME)  # fmt: skip
    assert before.code == 0, before.err
    try:
        watcher = when_fio_runs(ceph.kill_osd, 1.5)
        started = time.monotonic()
        res = cli("run", "--target", image, *_conf(ceph), "--ceph-timeout", "2", "--destroy-data", image,
                  "--workload", "rnd4k-q1t1-write", "--workload", "seq1m-q1t1-read", "--size", "16m", "--runtime", "4", "--no-report")  # fmt: skip
        watcher.join()
        elapsed = time.monotonic() - started
        assert res.code == 1, (res.out, res.err)
        assert elapsed < 90, elapsed
        (err,) = [ln for ln in res.err.splitlines() if ln.startswith("storbench: error:")]
        assert f"workload 'rnd4k-q1t1-write' on {image}" in err and "did not answer within 2 s" in err, err
        assert "seq1m-q1t1-read on" in res.err  # the next workload ran (and failed: no OSD)
        assert subprocess.run(["pgrep", "-f", f"storbench-fio-{os.getpid()}-"], capture_output=True).returncode == 1
        runs = json.loads(cli("list", "--json").out)
        assert [r["label"] for r in runs if r["status"] == "complete"] == ["before"]
    finally:
        ceph.ensure()
