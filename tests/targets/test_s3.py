"""s3:// targets against a real Ceph radosgw (tests/ceph.py: the one-node cluster, then radosgw's
beast frontend on 127.0.0.1, the S3 user ``bench``), through fio's own http engine as ``make
install`` builds it.  One cluster and gateway for the module (about 30 s); the gateway-killed test
runs last.  Parsing, placement and the findings on records: test_s3_unit.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import needs_fio, needs_root, requests_of, stored_results

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(shutil.which("radosgw") is None or shutil.which("ceph-mon") is None,
                       reason="needs radosgw and ceph-mon (tests/setup-system.sh installs them)"),
]

SMALL = ("--size", "256k", "--runtime", "1", "--repeat", "1", "--no-report")


@pytest.fixture(scope="module")
def rgw(tmp_path_factory):
    from storbench.targets.base import external_engine

    if external_engine("http") is None:
        pytest.fail("fio's http engine is not built: make install builds it (tools/fio-engines.sh)")
    from ceph import Cluster, Gateway

    with Cluster(tmp_path_factory.mktemp("ceph")) as cluster, Gateway(cluster) as gw:
        yield gw


@pytest.fixture
def keys(rgw, monkeypatch):
    """storbench's environment: the gateway's keys, none of the user's AWS files."""
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(k, rgw.env[k])
    return rgw


def _target(rgw, bucket: str, prefix: str = "") -> str:
    return f"s3://{bucket}{'/' + prefix if prefix else ''}?endpoint={rgw.endpoint}"




def _dead_pid() -> int:
    pid = 999_999
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid -= 1


def test_put_get_delete_on_radosgw_count_as_the_server_counts(cli, keys):
    """PUT, GET (4 clients) and DELETE into an existing bucket that holds an object of someone else's
    and what a killed run of this host left: radosgw's own counters equal fio's (every GET served,
    none failed: no 404 taken for zeros), its PUTs are fio's plus the objects storbench wrote for
    the GETs and DELETEs first; afterwards the bucket holds the other object only; no key or secret
    is in the store."""
    s3 = keys.s3()
    s3.create_bucket(Bucket="bench")
    s3.put_object(Bucket="bench", Key="team/keep/me.txt", Body=b"not storbench's")
    stale = f"team/storbench-{socket.gethostname()}-{_dead_pid()}-1700000000"
    for k in ("put-4k-t1.0_0_4096", "put-4k-t1.0_4096_4096"):
        s3.put_object(Bucket="bench", Key=f"{stale}/{k}", Body=b"x" * 4096)
    before = keys.counters()
    res = cli("run", "--target", _target(keys, "bench", "team"), "--workload", "put-4k-t1", "--workload", "get-4k-t4",
              "--workload", "delete-4k-t1", "--label", "s3", *SMALL)  # fmt: skip
    after = keys.counters()
    assert res.code == 0, res.err
    records = stored_results(cli.db, 1)
    puts, gets, deletes = requests_of(records, "put-4k-t1", "write"), requests_of(records, "get-4k-t4", "read"), requests_of(records, "delete-4k-t1", "trim")
    seeded = 4 * 64 + 64  # 256 KiB of 4 KiB objects for each of get's 4 clients and delete's one
    # the DELETE pass is size-based under --runtime 1: a busy machine ends it before its 64 objects
    assert puts > 0 and gets > 0 and 0 < deletes <= 64
    assert after["get"] - before["get"] == gets
    assert after["put"] - before["put"] == puts + seeded
    assert after["failed_req"] - before["failed_req"] == 0
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="bench").get("Contents", [])] == ["team/keep/me.txt"]
    notes = " ".join(records[0].storage.notes)
    assert f"removed what killed runs of this host left: {stale.split('/')[1]} (2 objects)" in notes, notes
    assert f"wrote {seeded} objects (1.2 MiB) before the workloads that read or delete them" in res.err
    data = cli.db.read_bytes()
    assert keys.SECRET.encode() not in data and keys.KEY.encode() not in data
    assert all("<masked>" in r.raw_output for r in records)  # fio printed the options: storbench masked them
    found = {f.check for r in records for f in r.findings}
    assert "object-request-bound" in found  # 4 KiB objects
    # the GETs' 1 MiB of objects (4 clients x 256 KiB) fits this machine's RAM, where radosgw runs
    [cached] = [f for r in records if r.workload == "get-4k-t4" for f in r.findings if f.check == "object-server-cache"]
    assert cached.message.startswith("the objects read (1.0 MiB) fit in the memory of this machine")


def test_the_plan_says_the_objects_each_workload_writes_and_touches_nothing(cli, keys):
    s3 = keys.s3()
    s3.create_bucket(Bucket="planned")
    res = cli("run", "--target", _target(keys, "planned"), "--workload", "put-4k-t4", "--workload", "get-64k-t1",
              "--size", "256k", "--repeat", "2", "--plan")  # fmt: skip
    assert res.code == 0, res.err
    lines = res.err + res.out
    assert "put-4k-t4 on " in lines and "runtime 5 s; 256 objects of 4.0 KiB (1.0 MiB), written: about" in lines, lines
    assert "runtime 5 s; 4 objects of 64.0 KiB (256.0 KiB), written first, then read: about" in lines, lines
    assert s3.list_objects_v2(Bucket="planned").get("KeyCount") == 0


def test_the_gateways_own_counters_are_kept_per_repetition_and_name_404s_fio_took_for_reads(cli, keys):
    """With admin_socket=, radosgw's perf counters are read around every repetition and stored: its
    GETs and PUTs served equal fio's (the objects written first are outside them); then a mixed
    workload whose objects another client keeps deleting: its GETs are not checked (fio checks the
    reads of read-only jobs only), radosgw answers some 404, fio counts them as reads, and the
    repetition is named invalid with the gateway's numbers."""
    s3 = keys.s3()
    s3.create_bucket(Bucket="counted")
    s3.put_object(Bucket="counted", Key="first", Body=b"radosgw makes its data pool at the first object written")
    target = f"s3://counted?endpoint={keys.endpoint}&admin_socket={keys.asok}"
    res = cli("run", "--target", target, "--ceph-conf", str(keys.cluster.conf), "--workload", "put-4k-t1", "--workload", "get-4k-t4",
              "--label", "counted", *SMALL)  # fmt: skip
    assert res.code == 0, res.err
    records = stored_results(cli.db, 1)
    for workload, direction, counter in (("put-4k-t1", "write", "put"), ("get-4k-t4", "read", "get")):
        [rec] = [r for r in records if r.workload == workload]
        rgw = rec.backend.rgw
        assert rgw is not None and rgw.problems == () and rgw.socket == str(keys.asok)
        assert rgw.delta(counter) == requests_of(records, workload, direction) > 0
        assert rgw.delta("failed_req") == 0
        assert not {f.check for f in rec.findings} & {"object-404", "object-server-errors", "object-bucket-changed"}
        # the bucket's own count (a HEAD: radosgw's index totals): the PUT loop made at most its PUTs, the GETs nothing
        bucket = rec.backend.bucket
        assert bucket.source == "server" and bucket.where == "bucket counted" and bucket.problems == ()
        if direction == "write":
            assert 0 <= bucket.delta_objects() <= rgw.delta("put")
        else:
            assert (bucket.delta_objects(), bucket.delta_bytes()) == (0, 0) and bucket.before.objects >= 4 * 64
        # the Ceph pool under the bucket (--ceph-conf, checked against radosgw's own cluster) and what its OSD did
        assert rec.storage.ceph.pool.name == "default.rgw.buckets.data" and rec.storage.ceph.fsid == keys.cluster.fsid
        osd = rec.backend.ceph
        assert osd.pool == "default.rgw.buckets.data" and osd.problems == ()
        if direction == "write":  # a new object is a write, an overwrite a read-modify-write (so is each index update)
            assert osd.osd_write_ops + osd.osd_rw_ops >= rgw.delta("put")
            assert osd.osd_write_bytes + osd.osd_rw_bytes >= rgw.delta("put_b") > 0
        else:  # radosgw keeps no object data: every GET read the OSD, BlueStore from its cache or the device
            assert osd.osd_read_ops >= rgw.delta("get")
            assert osd.osd_cache_hit_bytes + osd.osd_cache_miss_bytes >= rgw.delta("get_b") > 0
    notes = " ".join(records[0].storage.notes)
    assert "the bucket's objects are in Ceph pool default.rgw.buckets.data (placement default-placement)" in notes
    # the gateway the cluster's service map says listens on the endpoint's port
    assert f"served by radosgw a on host {socket.gethostname()} (ceph " in notes, notes
    assert f"frontend: beast endpoint=127.0.0.1:{keys.port} tcp_nodelay=1)" in notes and "has no tcp_nodelay" not in notes

    # another client PUTting into the same bucket while a workload only reads: the bucket's count moved
    stop = threading.Event()
    other_puts = []

    def put_beside() -> None:
        other = keys.s3()
        while not stop.is_set():
            other.put_object(Bucket="counted", Key=f"other/{len(other_puts)}", Body=b"o" * 1000)
            other_puts.append(1)

    writer = threading.Thread(target=put_beside, daemon=True)
    writer.start()
    try:
        res = cli("run", "--target", target, "--workload", "get-4k-t1", "--label", "shared", *SMALL)
    finally:
        stop.set()
        writer.join(timeout=30)
    assert res.code == 0, res.err
    [rec] = stored_results(cli.db, 2)
    grew = rec.backend.bucket.delta_objects()
    assert 0 < grew <= len(other_puts)
    [found] = [f for f in rec.findings if f.check == "object-bucket-changed"]
    assert found.message.startswith(f"bucket counted changed by +{grew:,} objects, +") and "fio made no PUT or DELETE (it only read)" in found.message
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="counted", Prefix="storbench-").get("Contents", [])] == []

    stop = threading.Event()

    def delete_all() -> None:  # another client, deleting what the run writes
        other = keys.s3()
        while not stop.is_set():
            keys_now = [o["Key"] for o in other.list_objects_v2(Bucket="counted").get("Contents", [])]
            if keys_now:
                other.delete_objects(Bucket="counted", Delete={"Objects": [{"Key": k} for k in keys_now]})
            stop.wait(0.05)

    deleter = threading.Thread(target=delete_all, daemon=True)
    deleter.start()
    try:
        res = cli("run", "--target", target, "--workload", "mixed-64k-t4", "--label", "deleted", *SMALL)
    finally:
        stop.set()
        deleter.join(timeout=30)
    assert res.code == 0, res.err  # fio saw nothing wrong
    [rec] = stored_results(cli.db, 3)
    rgw = rec.backend.rgw
    gets = requests_of([rec], "mixed-64k-t4", "read")
    assert gets > rgw.delta("get") and rgw.delta("failed_req") >= gets - rgw.delta("get")
    [found] = [f for f in rec.findings if f.check == "object-404"]
    assert found.severity == "invalid"
    assert f"fio counted {gets:,} GETs but radosgw served {rgw.delta('get'):,}: {gets - rgw.delta('get'):,} were answered 404" in found.message
    assert "object-404" in res.out + res.err


def test_many_clients_through_fio_servers_each_with_keys_of_their_own(cli, keys, tmp_path):
    """Issue 52 item 6: three fio servers on loopback (fio's client/server, --host) PUT and GET
    into one bucket: each host its own key bases (named for the host), the keys in the job file
    each server is sent (fio's client passes no environment) and masked everywhere after; one
    aggregate; radosgw's own counters, read here around each repetition, equal the hosts' sum;
    the objects written first are each host's own; afterwards the bucket is empty and neither key
    is in the store."""
    from servers import free_port, wait_for_port

    s3 = keys.s3()
    s3.create_bucket(Bucket="many")
    ports = [free_port() for _ in range(3)]
    procs = []
    try:
        for i, port in enumerate(ports):
            d = tmp_path / f"fio{i}"
            d.mkdir()
            procs.append(subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=d, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        for port in ports:
            wait_for_port(port)
        hosts = [f"127.0.0.1:{p}" for p in ports]
        target = f"s3://many?endpoint={keys.endpoint}&admin_socket={keys.asok}"
        host_args = [a for h in hosts for a in ("--host", h)]
        dry = cli("run", *host_args, "--target", target, "--workload", "put-4k-t1", "--dry-run")
        assert dry.code == 0 and keys.SECRET not in dry.out + dry.err, dry.err
        assert "filename_format=/many/storbench-" in dry.out and f"/$jobname.$jobnum.127.0.0.1_{ports[0]}" in dry.out, dry.out
        res = cli("run", *host_args, "--target", target, "--workload", "put-4k-t1", "--workload", "get-4k-t1", "--label", "many",
                  *SMALL, "--json")  # fmt: skip
        assert res.code == 0, res.err
    finally:
        for proc in procs:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=30)
    records = stored_results(cli.db, 1)
    assert sorted(r.host for r in records) == sorted(hosts * 2 + ["all", "all"])
    for workload, direction, counter in (("put-4k-t1", "write", "put"), ("get-4k-t1", "read", "get")):
        mine = [r for r in records if r.workload == workload]
        each = [requests_of([r], workload, direction) for r in mine if r.host != "all"]
        assert len(each) == 3 and all(n > 0 for n in each)
        [aggregate] = [r for r in mine if r.host == "all"]
        rgw = aggregate.backend.rgw
        assert rgw is not None and rgw.delta(counter) == sum(each), (rgw.delta(counter), each)
        assert rgw.delta("failed_req") == 0
    # the GETs' objects: 64 of 4 KiB for each host's one client, written first
    assert "wrote 192 objects (768.0 KiB) before the workloads that read or delete them" in res.err, res.err
    assert s3.list_objects_v2(Bucket="many").get("KeyCount") == 0
    data = cli.db.read_bytes()
    assert keys.SECRET.encode() not in data and keys.KEY.encode() not in data
    assert all(keys.SECRET not in r.raw_output for r in records)


def test_radosgw_and_swift_compare_in_one_table(cli, keys, tmp_path, monkeypatch):
    """The same workload on the test's radosgw and on OpenStack Swift's s3api (tests/swift.py,
    a second real S3 server): compare puts both servers in one table, each figure with Welch's
    verdict and p value.  Which server is faster is this machine's business, not the test's."""
    from swift import Swift

    def run_on(server, label: str) -> None:
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            monkeypatch.setenv(k, server.env[k])
        res = cli("run", "--target", f"s3://versus?endpoint={server.endpoint}", "--destroy-data", "s3://versus", "--workload", "get-4k-t1",
                  "--size", "64k", "--runtime", "1", "--repeat", "3", "--label", label, "--no-report")  # fmt: skip
        assert res.code == 0, res.err
        assert "versus" not in [b["Name"] for b in server.s3().list_buckets().get("Buckets", [])]  # made for the run, removed

    run_on(keys, "radosgw")
    with Swift(tmp_path / "swift") as sw:
        run_on(sw, "swift")
    runs = {"radosgw": 1, "swift": 2}
    res = cli("compare", str(runs["radosgw"]), str(runs["swift"]), "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert [c["run_ids"] for c in data["configs"]] == [[1], [2]] and "radosgw" in data["configs"][0]["name"], data["configs"]
    swift_key = data["configs"][1]["key"]
    (row,) = [r for r in data["rows"] if r["workload"] == "get-4k-t1" and r["metric"] == "iops"]
    versus = row["versus"][swift_key]
    assert versus["verdict"] in ("better", "worse", "within noise"), versus  # three runs each: Welch decides
    assert 0.0 <= versus["p_value"] <= 1.0, versus
    table = cli("compare", str(runs["radosgw"]), str(runs["swift"])).out
    assert "radosgw" in table and "swift" in table and "get-4k-t1" in table


def test_a_bucket_is_made_and_removed_only_when_named(cli, keys):
    """A bucket that does not exist: one line naming --destroy-data s3://BUCKET, nothing made; with
    it, the run's bucket is made, used and removed; --dry-run makes none."""
    s3 = keys.s3()
    target = _target(keys, "fresh-bucket")
    res = cli("run", "--target", target, "--workload", "put-4k-t1", *SMALL)
    assert res.code == 2 and res.err.strip().splitlines() == [
        f"storbench: error: {target}: bucket fresh-bucket does not exist at {keys.endpoint}; create it, or pass "
        "--destroy-data s3://fresh-bucket to let storbench make it for the run and remove it afterwards"
    ], res.err
    dry = cli("run", "--target", target, "--destroy-data", "s3://fresh-bucket", "--workload", "get-64k-t1", "--dry-run")
    assert dry.code == 0, dry.err
    assert "filename_format=/fresh-bucket/storbench-" in dry.out and keys.SECRET not in dry.out + dry.err
    assert "fresh-bucket" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    res = cli("run", "--target", target, "--destroy-data", "s3://fresh-bucket", "--workload", "get-64k-t1", "--workload", "put-64k-t1", *SMALL)
    assert res.code == 0, res.err
    assert "fresh-bucket" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    (get,) = [r for r in stored_results(cli.db, 1) if r.workload == "get-64k-t1"]
    assert get.fio.jobs[0].directions["read"].total_ios > 0 and get.fio.jobs[0].error == 0


@pytest.mark.parametrize(
    ("key", "secret", "said"),
    [
        ("benchkey", "not-the-secret", "answered 403 SignatureDoesNotMatch: the signature does not match: the secret key is wrong (Swift's s3api says this of an unknown access key too)"),
        ("nobody", "benchsecret", "answered 403 InvalidAccessKeyId: the access key is not known to the server"),
    ],
)
def test_wrong_credentials_are_one_line(cli, rgw, monkeypatch, key, secret, said):
    rgw.s3().create_bucket(Bucket="bench")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    res = cli("run", "--target", _target(rgw, "bench"), "--workload", "put-4k-t1", *SMALL)
    assert res.code == 2 and res.err.strip().splitlines() == [f"storbench: error: {_target(rgw, 'bench')}: the S3 server at {rgw.endpoint} {said}"]


def test_no_server_and_no_credentials_are_one_line(cli, rgw, monkeypatch):
    from servers import free_port

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", rgw.KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", rgw.SECRET)
    port = free_port()
    res = cli("run", "--target", f"s3://bench?endpoint=http://127.0.0.1:{port}", "--workload", "put-4k-t1", *SMALL)
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and f"no S3 server answers at http://127.0.0.1:{port}" in res.err
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    res = cli("run", "--target", _target(rgw, "bench"), "--workload", "put-4k-t1", *SMALL)
    assert res.code == 2 and res.err.strip().splitlines() == [
        "storbench: error: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give them in ~/.aws/credentials (AWS_PROFILE picks a profile)"
    ]


def test_a_full_cluster_is_one_line_from_the_gateways_paused_requests(tmp_path, keys, cli, monkeypatch):
    """The cluster under radosgw flagged full (its full ratio set below what the OSD holds, as a
    filled OSD would be): radosgw takes the PUTs and holds them paused, and fio's http engine waits
    without end; with admin_socket= storbench reads the paused requests and stops fio with one line
    saying so, long before the stall line (60 s past the planned 30 s); no fio is left.  The ratios
    are put back and the OSD is no longer full afterwards."""
    from storbench.backend.rgw_sampler import paused_requests

    from servers import wait_until

    cluster = keys.cluster
    keys.s3().create_bucket(Bucket="filled")
    target = f"s3://filled?endpoint={keys.endpoint}&admin_socket={keys.asok}"
    try:
        for command, ratio in (("set-nearfull-ratio", "0.0005"), ("set-backfillfull-ratio", "0.0008"), ("set-full-ratio", "0.001")):
            cluster.cli("ceph", "osd", command, ratio)
        wait_until(lambda: "full osd" in cluster.cli("ceph", "health").stdout, 60, "the OSD was not flagged full")
        run = subprocess.run([sys.executable, "-m", "storbench", "run", "--target", target, "--workload", "put-4k-t1",
                              "--size", "256k", "--runtime", "30", "--repeat", "1", "--no-report"],
                             env={**keys.env, "STORBENCH_DB": str(tmp_path / "r.sqlite")}, cwd=tmp_path, capture_output=True,
                             text=True, timeout=150)  # fmt: skip
        # without the admin socket, the objects a GET workload reads, written first, would wait without
        # end: the bucket that stops growing ends it (the stall time shortened for the test from 60 s to 4)
        from storbench.targets.s3 import S3

        monkeypatch.setattr(S3, "request_stall_s", 4.0)
        started = time.monotonic()
        # (under a prefix of its own: the run above could not remove its objects from the full cluster, and the
        # next run on the same prefix would first try to, and wait for the gateway in vain)
        seeded = cli("run", "--target", f"s3://filled/seeded?endpoint={keys.endpoint}", "--workload", "get-1m-t1", "--size", "64m",
                     "--runtime", "1", "--repeat", "1", "--no-report")  # fmt: skip
        seeded_s = time.monotonic() - started
    finally:
        for command, ratio in (("set-full-ratio", "0.95"), ("set-backfillfull-ratio", "0.9"), ("set-nearfull-ratio", "0.85")):
            cluster.cli("ceph", "osd", command, ratio)
        wait_until(lambda: "full" not in cluster.cli("ceph", "health").stdout, 90, "the OSD is still flagged full")
        wait_until(lambda: paused_requests(str(keys.asok)) == 0, 60, "radosgw still holds requests paused")
    assert run.returncode == 1, run.stderr
    (line,) = [ln for ln in run.stderr.splitlines() if ln.startswith("storbench: error:")]
    assert f"workload 'put-4k-t1' on {target}: radosgw ({keys.asok}) held " in line, line
    assert "of its requests to the cluster paused for 4 s: the cluster or a pool is full, or paused (ceph health detail says " in line, line
    assert "FAILED put-4k-t1" in run.stderr and "had not come back" not in run.stderr
    assert subprocess.run(["pgrep", "-f", "fio.*put-4k-t1"], capture_output=True).returncode == 1
    assert seeded.code != 0 and seeded_s < 60, (seeded_s, seeded.err)
    assert (f"writing the objects workload 'get-1m-t1' reads on s3://filled/seeded?endpoint={keys.endpoint} failed: the S3 server at "
            f"127.0.0.1:{keys.port} took no new object for 4 s: it, or the cluster under it, holds the PUTs without answering "
            "(a full cluster or pool?); fio was stopped") in seeded.err, seeded.err
    assert subprocess.run(["pgrep", "-f", "fio.*get-1m-t1"], capture_output=True).returncode == 1


def test_gateway_killed_mid_run_is_one_line_and_leaves_nothing_running(tmp_path, keys):
    """radosgw SIGKILLed while fio GETs: the run ends within a bound with one line naming the
    server, the workload before it is kept, and no fio is left.  Last: the gateway stays down."""
    keys.s3().create_bucket(Bucket="bench")
    env = {**keys.env, "STORBENCH_DB": str(tmp_path / "r.sqlite")}
    run = subprocess.Popen([sys.executable, "-m", "storbench", "run", "--target", _target(keys, "bench"), "--workload", "put-4k-t1",
                            "--workload", "get-4k-t1", "--size", "256k", "--runtime", "6", "--repeat", "1", "--no-report"],
                           env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines = []
    try:
        assert run.stderr is not None
        for line in run.stderr:
            lines.append(line)
            if line.startswith("[2/2] get-4k-t1"):
                time.sleep(2)
                keys.kill()
                break
        started = time.monotonic()
        _out, err = run.communicate(timeout=120)
        elapsed = time.monotonic() - started
    finally:
        if run.poll() is None:
            run.kill()
    err = "".join(lines) + err
    assert run.returncode == 1, err
    assert elapsed < 60, elapsed
    (line,) = [ln for ln in err.splitlines() if ln.startswith("storbench: error:")]
    # fio's failed request, or the server watch's three refused connects, whichever comes first
    assert f"workload 'get-4k-t1' on {_target(keys, 'bench')}: " in line, line
    assert (f"a request to the S3 server at 127.0.0.1:{keys.port} failed and the server is not answering now" in line
            or f"the S3 server at 127.0.0.1:{keys.port} stopped answering during the workload (connection refused" in line), line
    assert subprocess.run(["pgrep", "-f", f"storbench-fio-{run.pid}-"], capture_output=True).returncode == 1
    shown = json.loads(subprocess.run([sys.executable, "-m", "storbench", "show", "1", "--json"], env=env, capture_output=True,
                                      text=True, check=True).stdout)  # fmt: skip
    assert [r["workload"] for r in shown] == ["put-4k-t1"]


def test_a_gateway_without_tcp_nodelay_is_named_and_compares_worse(tmp_path, keys, cli):
    """The same radosgw started again without tcp_nodelay=1 (after the test above killed it): every
    small GET waits for a delayed ACK; object-request-delay fires there and not on the gateway with
    it, and compare puts the two configurations in one table with a Welch verdict: worse."""
    from ceph import Gateway

    with Gateway(keys.cluster) as on:
        on.s3().create_bucket(Bucket="delay")
        # five repetitions where the figure is fast: one a stall of the machine halves is then not
        # enough to hide a 40-fold difference from Welch's test (with three it was, once)
        a = cli("run", "--target", _target(on, "delay"), "--workload", "get-4k-t1", "--size", "64k", "--runtime", "1",
                "--repeat", "5", "--label", "nodelay", "--no-report")  # fmt: skip
    assert a.code == 0, a.err
    with Gateway(keys.cluster, nodelay=False) as off:
        b = cli("run", "--target", _target(off, "delay"), "--ceph-conf", str(keys.cluster.conf), "--workload", "get-4k-t1", "--size", "64k",
                "--runtime", "1", "--repeat", "3", "--label", "no-nodelay", "--no-report")  # fmt: skip
    assert b.code == 0, b.err
    # the cluster's service map shows the gateway's frontend without it
    assert "radosgw a's beast frontend has no tcp_nodelay=1: each small request may wait about 40 ms for a delayed ACK" in " ".join(
        stored_results(cli.db, 2)[0].storage.notes)
    on_found = {f.check for r in stored_results(cli.db, 1) for f in r.findings}
    off_records = stored_results(cli.db, 2)
    delays = [f for r in off_records for f in r.findings if f.check == "object-request-delay"]
    assert "object-request-delay" not in on_found and "object-request-bound" in on_found
    assert delays and all(f.message.startswith("the median 4 KiB request took read ") and "delayed-ACK timer" in f.message for f in delays)
    res = cli("compare", "1", "2", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    (row,) = [r for r in data["rows"] if r["workload"] == "get-4k-t1" and r["metric"] == "iops"]
    off_key = data["configs"][1]["key"]
    fast = sorted(r.fio.jobs[0].directions["read"].iops for r in stored_results(cli.db, 1))
    slow = sorted(r.fio.jobs[0].directions["read"].iops for r in off_records)
    assert fast[2] > 10 * slow[1], (fast, slow)  # the medians: every small GET waited for the timer
    if fast[0] >= fast[2] / 4:  # no repetition stalled by the machine: Welch sees it as plainly
        assert row["versus"][off_key]["verdict"] == "worse" and row["versus"][off_key]["p_value"] < 0.05, (fast, slow, row)
    else:  # a stalled repetition may hide it; the verdict is still Welch's on the stored figures
        from scipy.stats import ttest_ind

        assert row["versus"][off_key]["p_value"] == pytest.approx(ttest_ind(slow, fast, equal_var=False).pvalue, rel=1e-6), (fast, slow, row)
