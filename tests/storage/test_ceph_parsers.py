"""Ceph's CLIs as storbench reads them, on verbatim outputs (tests/data/ceph/ from the test cluster,
../shared/fixtures/backends/ceph-*.txt), and the Ceph kinds' pure parts: spec parsing, job
placement, the stored form, the findings.  The real cluster's tests are in test_ceph.py."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.ceph import CephActivity, format_ceph_activity
from storbench.backend.ceph_sampler import CephSampler
from storbench.errors import TargetError
from storbench.jobs.jobfile import build_job
from storbench.model import Target, Workload
from storbench.storage import StorageInfo, format_storage, storage_from_dict, storage_to_dict
from storbench.storage.ceph import (
    CephInfo,
    parse_ceph_status,
    parse_ceph_versions,
    parse_osd_metadata,
    parse_osd_perf_dump,
    parse_pool_ls_detail,
    parse_rados_df,
    parse_rados_stat,
    parse_rbd_diff,
    parse_rbd_du,
    parse_rbd_info,
    parse_rbd_status,
    written_within,
)
from storbench.targets import ceph as ceph_kind
from storbench.targets.base import ResolveContext
from storbench.targets.rados import parse_rados_ls, parse_rados_spec
from storbench.targets.rbd import parse_rbd_spec

from conftest import DATA

D = DATA / "ceph"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "backends"
MiB = 2**20


def text(name: str) -> str:
    return (D / name).read_text()


def shared(name: str) -> str:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"../shared/fixtures/backends/{name} is not here")
    return path.read_text()


def test_ceph_status_json():
    info = parse_ceph_status(text("status.json"))
    assert info.fsid == "07c60551-e3ce-409c-81ec-d625f2763f57" and info.health == "HEALTH_OK" and info.health_checks == ()
    assert (info.mons, info.quorum, info.osds, info.osds_up, info.osds_in) == (1, 1, 1, 1, 1)
    assert info.pgs == 33 and info.pg_states == ("33 active+clean",)
    assert info.bytes_total == 2147483648 and info.bytes_used == 328912896
    # the shared copy is `ceph -s -f json-pretty` with its command line before and [rc=0] after
    other = parse_ceph_status(shared("ceph-status-json.txt"))
    assert other.fsid == "ce8c1c28-ac96-4b8d-8b64-7080a006be94" and other.osds == 1


def test_ceph_status_with_health_checks():
    warn = text("status.json").replace('"status": "HEALTH_OK",\n        "checks": {}', '"status": "HEALTH_WARN", "checks": {"OSD_DOWN": {"severity": "HEALTH_WARN", "summary": {"message": "1 osds down", "count": 1}}}')
    if warn == text("status.json"):  # compact JSON
        import json

        doc = json.loads(text("status.json"))
        doc["health"] = {"status": "HEALTH_WARN", "checks": {"OSD_DOWN": {"severity": "HEALTH_WARN", "summary": {"message": "1 osds down", "count": 1}}}}
        warn = json.dumps(doc)
    info = parse_ceph_status(warn)
    assert info.health == "HEALTH_WARN" and info.health_checks == ("OSD_DOWN: 1 osds down",)


def test_pools_osds_versions():
    pool = parse_pool_ls_detail(text("pool-ls-detail.json"), "rbd")
    assert pool is not None
    assert (pool.id, pool.type, pool.size, pool.min_size, pool.pg_num, pool.applications, pool.autoscale) == (2, "replicated", 1, 1, 32, ("rbd",), "on")
    assert parse_pool_ls_detail(text("pool-ls-detail.json"), "device_health_metrics").applications == ("mgr_devicehealth",)
    assert parse_pool_ls_detail(text("pool-ls-detail.json"), "nosuch") is None
    (osd,) = parse_osd_metadata(text("osd-metadata.json"))
    assert (osd.id, osd.objectstore, osd.devices, osd.device_class, osd.rotational) == (0, "bluestore", "vda", "hdd", True)
    assert osd.block_size_bytes == 2 * 2**30 and osd.dedicated_db is False and osd.version == "16.2.15"
    (one,) = parse_osd_metadata(shared("ceph-osd-metadata.txt"))  # `ceph osd metadata 0`: one object
    assert one.id == 0 and one.objectstore == "bluestore"
    assert parse_ceph_versions(text("versions.json")) == "16.2.15 pacific"
    with pytest.raises(ValueError, match="ceph osd pool ls detail"):
        parse_pool_ls_detail('{"fsid": "x"}', "rbd")


def test_rbd_image_and_rados_outputs():
    img = parse_rbd_info(text("rbd-info.json"))
    assert (img.name, img.size_bytes, img.object_size_bytes, img.format) == ("img1", 256 * MiB, 4 * MiB, 2)
    assert img.features == ("layering", "exclusive-lock", "object-map", "fast-diff", "deep-flatten")
    assert parse_rbd_info(shared("ceph-rbd-info-json.txt")).size_bytes == 512 * MiB
    assert parse_rbd_du(text("rbd-du.json"), "img1") == 16 * MiB and parse_rbd_du(text("rbd-du.json"), "other") is None
    assert parse_rbd_status(text("rbd-status-watcher-2.json")) == ("127.0.0.1:0/1452526194",)  # fio had it open
    assert parse_rbd_status(text("rbd-status-watcher.json")) == ("127.0.0.1:0/2820349589",)
    extents = parse_rbd_diff(text("rbd-diff.json"))
    assert extents == tuple((i * 4 * MiB, 4 * MiB) for i in range(4))
    assert written_within(extents, 8 * MiB) == 8 * MiB and written_within(extents, 64 * MiB) == 16 * MiB
    c = parse_rados_df(text("rados-df.json"), "rbd")
    assert c is not None and (c.objects, c.read_ops, c.read_bytes, c.write_ops, c.write_bytes) == (8, 8390, 165888, 10740, 92274688)
    perf = parse_osd_perf_dump(text("tell-osd-perf-dump-osd.json"))
    assert (perf.osds, perf.read_ops, perf.read_bytes, perf.write_ops, perf.rw_ops, perf.rw_bytes) == (1, 4958, 19828178, 0, 16, 0)
    assert perf.read_latency_s == pytest.approx(1.233671267)
    assert (perf.cache_hit_bytes, perf.cache_miss_bytes) == (None, None)  # the osd section only
    whole = parse_osd_perf_dump(text("tell-osd-perf-dump.json"))  # every section: after a 1 MiB GET run on radosgw
    assert (whole.osds, whole.read_ops, whole.cache_hit_bytes, whole.cache_miss_bytes) == (1, 1355, 393_296_046, 495_983_407)
    a = CephActivity(pool="p", osd_cache_hit_bytes=393_296_046, osd_cache_miss_bytes=495_983_407)
    assert a.cache_hit_share == pytest.approx(0.4423, abs=1e-4)
    assert "BlueStore's cache answered 44 % of the bytes the OSDs read (375.1 MiB of 848.1 MiB; the rest from the devices)" in format_ceph_activity(a)
    assert parse_rados_stat("bench/storbench.testfile mtime 2026-12-01T11:36:36.000000+0000, size 16732160\n") == 16732160
    assert parse_rados_ls("\tstorbench.testfile\n\trbd_directory\n") == ("storbench.testfile", "rbd_directory")
    for bad, parse in (("rbd: error opening image nosuch", parse_rbd_info), ("{}", parse_rbd_status), ("[{}]", parse_rbd_diff)):
        with pytest.raises(ValueError):
            parse(bad)


def test_specs_are_checked():
    assert parse_rbd_spec("rbd:rbd/img1") == ("rbd", "img1")
    assert parse_rados_spec("rados:bench") == "bench"
    for bad in ("rbd:", "rbd:rbd", "rbd:rbd/", "rbd:/img", "rbd:a/b/c", "rbd:rbd/im g", "rbd:rbd/img;x"):
        with pytest.raises(TargetError, match="give rbd:POOL/IMAGE"):
            parse_rbd_spec(bad)
    for bad in ("rados:", "rados:a/b", "rados:p#"):
        with pytest.raises(TargetError, match="give rados:POOL"):
            parse_rados_spec(bad)


def test_access_params(tmp_path: Path, monkeypatch):
    conf = tmp_path / "ceph.conf"
    conf.write_text("[global]\n")
    monkeypatch.delenv("CEPH_CONF", raising=False)
    got = ceph_kind.access_params(ResolveContext(ceph_conf=str(conf), ceph_client="client.bench"))
    assert got == (("conf", str(conf)), ("client", "bench"))
    monkeypatch.setenv("CEPH_CONF", str(conf))
    assert dict(ceph_kind.access_params(ResolveContext(ceph_timeout_s=7))) == {"conf": str(conf), "client": "admin", "timeout_s": "7"}
    with pytest.raises(TargetError, match=r"missing\.conf \(--ceph-conf\) is not a readable file"):
        ceph_kind.access_params(ResolveContext(ceph_conf=str(tmp_path / "missing.conf")))
    with pytest.raises(TargetError, match="--ceph-client"):
        ceph_kind.access_params(ResolveContext(ceph_conf=str(conf), ceph_client="a b"))


RBD = Target(kind="rbd", path="rbd:rbd/img1", params=(("conf", "/c/ceph.conf"), ("client", "bench"), ("size", str(64 * MiB))))
RADOS = Target(kind="rados", path="rados:bench", params=(("conf", "/c/ceph.conf"), ("client", "admin"), ("timeout_s", "5")))


def test_jobs_on_an_image_and_a_pool():
    w = Workload(name="w", description="", options=(("ioengine", "libaio"), ("rw", "randwrite"), ("bs", "4k"), ("size", "1g"), ("end_fsync", "1"), ("fsync", "8")))
    job = build_job(w, RBD)
    opts = dict(job.options)
    assert (opts["ioengine"], opts["pool"], opts["rbdname"], opts["clientname"], opts["size"]) == ("rbd", "rbd", "img1", "bench", "64m")
    assert opts["end_fsync"] == "1"  # librbd flushes
    assert "# storbench: size=1g capped at the RBD image's size 64m" in job.job_text
    assert "# storbench: ioengine=libaio replaced by rbd" in job.job_text
    env = dict(job.env)
    assert env["CEPH_CONF"] == "/c/ceph.conf" and "--rados-osd-op-timeout=15" in env["CEPH_ARGS"]
    job = build_job(w, RADOS)
    opts = dict(job.options)
    assert (opts["ioengine"], opts["pool"], opts["conf"], opts["filename"], opts["size"]) == ("rados", "bench", "/c/ceph.conf", "storbench.testfile", "1g")
    assert "end_fsync" not in opts and "fsync" not in opts
    assert "# storbench: end_fsync, fsync left out: fio's rados engine has no sync" in job.job_text
    assert "--rados-osd-op-timeout=5" in dict(job.env)["CEPH_ARGS"]
    with pytest.raises(Exception, match="option 'pool' is set by storbench"):
        build_job(Workload(name="x", description="", options=(("rw", "read"), ("pool", "other"))), RBD)


def test_failure_reasons_name_the_cluster():
    from storbench.targets import kind_of

    said = kind_of(RADOS).explain_failure(RADOS, "rbd_open failed.")
    assert said == "rbd_open failed. (the Ceph cluster of /c/ceph.conf did not answer within 5 s: an OSD or monitor down or a placement group inactive? see ceph -s)"
    assert kind_of(RBD).explain_failure(RBD, "fio error 5 (Input/output error)") == "fio error 5 (Input/output error)"


def _described() -> StorageInfo:
    info = dataclasses.replace(
        parse_ceph_status(text("status.json")),
        version="16.2.15 pacific", conf="/c/ceph.conf", client="admin", pool_objects=5,
        pool=parse_pool_ls_detail(text("pool-ls-detail.json"), "rbd"),
        osd_details=parse_osd_metadata(text("osd-metadata.json")),
        image=dataclasses.replace(parse_rbd_info(text("rbd-info.json")), used_bytes=0, watchers=0),
    )  # fmt: skip
    return StorageInfo(target="rbd:rbd/img1", target_kind="rbd", filesystem=None, devices=(), ceph=info)


def test_description_lines_and_stored_form():
    st = _described()
    assert format_storage(st) == [
        "target: rbd:rbd/img1 (rbd)",
        "ceph cluster: fsid 07c60551-e3ce-409c-81ec-d625f2763f57, HEALTH_OK, ceph 16.2.15 pacific, 1 mon, 1 osd (1 up, 1 in), pgs 33 active+clean",
        "ceph pool rbd: replicated, size 1/min_size 1, 32 pgs, application rbd, 5 objects",
        "ceph osd.0: bluestore, on vda, hdd, block /tmp/cx/osd/ceph-0/block, db shared, host vm",
        "rbd image rbd/img1: size 256 MiB, objects of 4 MiB, features layering,exclusive-lock,object-map,fast-diff,deep-flatten, never written",
    ]
    assert storage_from_dict(storage_to_dict(st)) == st
    from storbench.storage import differences

    other = dataclasses.replace(st, ceph=dataclasses.replace(st.ceph, pool=dataclasses.replace(st.ceph.pool, size=3, min_size=2)))
    assert ("ceph.pool.size", "1", "3") in differences(st, other) and ("ceph.pool.min_size", "1", "2") in differences(st, other)


def _fake_cluster(calls: list, *, diff: str = "[]", timeouts: tuple[str, ...] = ()):
    perf = [text("tell-osd-perf-dump-osd.json"), text("tell-osd-perf-dump-osd.json").replace('"op_r":4958', '"op_r":4969')]

    def run(tool, *args):
        calls.append((tool,) + args)
        if args and args[0] in timeouts:
            return (1, "", "2026-12-01T11:32:15 monclient(hunting): authenticate timed out after 5")
        if args[:1] == ("info",):
            return (0, text("rbd-info.json"), "")
        if args[:1] == ("diff",):
            return (0, diff, "")
        if args[:1] == ("health",):
            return (0, "HEALTH_OK\n", "")
        if args[:1] == ("tell",):
            return (0, perf.pop(0), "")
        return (1, "", "unexpected")

    return run


def test_sampler_finds_a_never_written_image_and_what_the_osds_served():
    calls: list = []
    with CephSampler(RBD, "rbd", image="img1", area_bytes=32 * MiB, run=_fake_cluster(calls)) as s:
        pass
    a = s.activity().ceph
    assert (a.area_bytes, a.unwritten_before_bytes, a.osd_read_ops, a.osd_write_ops) == (32 * MiB, 32 * MiB, 11, 0)
    assert (a.health_before, a.health_after, a.problems) == ("HEALTH_OK", "HEALTH_OK", ())
    assert format_ceph_activity(a)[1] == "never written before the run: 32 MiB of 32 MiB"
    assert backend_from_dict(backend_to_dict(BackendActivity(ceph=a))) == BackendActivity(ceph=a)


def test_sampler_stops_asking_a_cluster_that_does_not_answer():
    calls: list = []
    with CephSampler(RBD, "rbd", image="img1", area_bytes=32 * MiB, run=_fake_cluster(calls, timeouts=("diff",))) as s:
        pass
    a = s.activity().ceph
    assert [c[1] for c in calls] == ["info", "diff"]  # nothing after the first command that timed out
    assert a.osd_read_ops is None and a.unwritten_before_bytes is None
    assert a.problems[-1] == "the Ceph cluster stopped answering (an OSD or monitor down?): what the OSDs served is not known"


def test_sparse_read_finding_for_an_image():
    from storbench.checks import CheckContext, run_checks
    from storbench.fio.json import parse_fio_json

    fio = parse_fio_json(text("fio-rbd-randread-unwritten.json"))  # 148k IOPS of nothing
    activity = CephActivity(pool="rbd", image="img1", area_bytes=32 * MiB, unwritten_before_bytes=32 * MiB, osds=1, osd_read_ops=11, osd_read_bytes=231)
    found = [f for f in run_checks(CheckContext(workload="t", options={"rw": "randread", "bs": "4k", "ioengine": "rbd"}, results=(fio,), storage=_described(),
                                                backend=BackendActivity(ceph=activity))) if f.check == "sparse-read"]  # fmt: skip
    (f,) = found
    assert f.severity == "invalid"
    assert f.message.startswith("the RBD image rbd/img1: 32.0 MiB of the 32.0 MiB read area (100%) was never written before the run (rbd diff)")
    assert f.message.endswith("fio read 1.1 GiB at 147,730 IOPS while the OSDs served 11 reads (231 B)"), f.message
    half = dataclasses.replace(activity, unwritten_before_bytes=8 * MiB)
    assert not [f for f in run_checks(CheckContext(workload="t", options={"rw": "randread"}, results=(fio,), storage=_described(),
                                                   backend=BackendActivity(ceph=half))) if f.check == "sparse-read"]  # fmt: skip
    assert CephInfo().fsid is None


def test_doctor_warns_of_a_never_written_image_before_a_read():
    from storbench.checks import PreflightContext, preflight

    st = _described()  # rbd du: 0 B of 256 MiB written
    found = preflight(PreflightContext(options_by_workload={"r": {"rw": "randread"}, "w": {"rw": "randwrite"}}, storage=st, mem_bytes=None))
    (f,) = [f for f in found if f.check == "sparse-read"]
    assert (f.workload, f.severity) == ("r", "warning")
    assert f.message.startswith("the RBD image rbd/img1 has 0 B of its 256.0 MiB written (rbd du)")
    written = dataclasses.replace(st, ceph=dataclasses.replace(st.ceph, image=dataclasses.replace(st.ceph.image, used_bytes=200 * MiB)))
    assert not [f for f in preflight(PreflightContext(options_by_workload={"r": {"rw": "randread"}}, storage=written, mem_bytes=None))
                if f.check == "sparse-read"]  # fmt: skip


def test_the_pool_under_a_radosgw_bucket():
    """radosgw-admin 16.2.15 here: a bucket's stats (no explicit placement: the zone's rule says)
    and the zone's placement pools."""
    from storbench.storage.ceph import parse_bucket_placement, parse_zone_data_pool

    assert parse_bucket_placement(text("radosgw-admin-bucket-stats.json")) == ("default-placement", None)
    zone = text("radosgw-admin-zone-get.json")
    assert parse_zone_data_pool(zone, "default-placement") == "default.rgw.buckets.data"
    stats = json.loads(text("radosgw-admin-bucket-stats.json"))
    stats["explicit_placement"]["data_pool"] = "old.buckets"  # a bucket made before placement rules
    assert parse_bucket_placement(json.dumps(stats)) == ("default-placement", "old.buckets")
    for call, said in ((lambda: parse_zone_data_pool(zone, "fast-placement"), "zone default has no placement 'fast-placement'"),
                       (lambda: parse_zone_data_pool(zone, "default-placement/COLD"), "has no data pool for storage class COLD"),
                       (lambda: parse_bucket_placement('{"ops": []}'), "not radosgw-admin bucket stats"),
                       (lambda: parse_zone_data_pool("failure: (2) No such file", "default-placement"), "no JSON")):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(said)):
            call()


def test_the_radosgw_daemons_of_a_service_map_and_their_ports():
    """ceph service dump of the tests' cluster (radosgw a, beast on 127.0.0.1:55349 with
    tcp_nodelay=1), and the frontend forms radosgw documents."""
    from storbench.storage.ceph import RgwDaemon, parse_rgw_daemons

    (gw,) = parse_rgw_daemons(text("service-dump.json"))
    assert (gw.name, gw.hostname, gw.version, gw.zone, gw.frontends) == ("a", "vm", "16.2.15", "default", ("beast endpoint=127.0.0.1:55349 tcp_nodelay=1",))
    assert (gw.ports(), gw.nodelay(), gw.mem_total_bytes) == ((55349,), True, 24683784 * 1024)
    for frontend, ports, nodelay in (("beast port=7480", (7480,), False), ("beast endpoint=[::]:8080 ssl_endpoint=0.0.0.0:8443", (8080, 8443), False),
                                     ("civetweb port=7480+443s", (7480, 443), None), ("beast endpoint=10.0.0.1", (80,), False),
                                     ("beast endpoint=[::1] ssl_endpoint=[::1] tcp_nodelay=1", (80, 443), True)):  # fmt: skip
        assert (RgwDaemon(name="x", frontends=(frontend,)).ports(), RgwDaemon(name="x", frontends=(frontend,)).nodelay()) == (ports, nodelay), frontend
    assert parse_rgw_daemons('{"services": {}}') == ()
    with pytest.raises(ValueError, match="no 'services'"):
        parse_rgw_daemons('{"epoch": 2}')
