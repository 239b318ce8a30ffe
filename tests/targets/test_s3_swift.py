"""s3:// targets against a second real S3 server: OpenStack Swift 2.30 with its s3api layer
(tests/swift.py: one replica, the four servers on 127.0.0.1, about 8 s), through fio's own http
engine.  Swift gives no bucket totals on a HEAD (radosgw does), so the run's own prefix is listed
around every repetition; its GETs of missing objects are successes to fio 3.33 as radosgw's are.
The comparison of radosgw against Swift: test_s3.py."""

from __future__ import annotations

import contextlib
import shutil

import pytest

from conftest import needs_fio, needs_root, requests_of, stored_results

pytestmark = [
    needs_fio,
    needs_root,
    pytest.mark.skipif(shutil.which("swift-proxy-server") is None, reason="needs Swift (tests/setup-system.sh installs it)"),
]

SMALL = ("--size", "256k", "--runtime", "1", "--repeat", "1", "--no-report")


@pytest.fixture(scope="module")
def swift(tmp_path_factory):
    from storbench.targets.base import external_engine

    if external_engine("http") is None:
        pytest.fail("fio's http engine is not built: make install builds it (tools/fio-engines.sh)")
    from swift import Swift

    with Swift(tmp_path_factory.mktemp("swift")) as sw:
        yield sw


@pytest.fixture
def keys(swift, monkeypatch):
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(k, swift.env[k])
    return swift




def test_put_get_delete_on_swift_counted_by_listing_the_runs_own_prefix(cli, keys):
    """A bucket storbench makes (named with --destroy-data) on Swift: PUT, GET with 4 clients, DELETE;
    every GET checked (no 404 taken for zeros: the workload ran without an error); Swift's listing of
    the run's prefix around each repetition: the GETs changed nothing, the DELETEs removed exactly
    what fio counted, the PUT loop made at most its PUTs; afterwards no bucket is left."""
    s3 = keys.s3()
    target = f"s3://swiftbench?endpoint={keys.endpoint}"
    res = cli("run", "--target", target, "--destroy-data", "s3://swiftbench", "--workload", "put-4k-t1", "--workload", "get-4k-t4",
              "--workload", "delete-4k-t1", "--label", "swift", *SMALL)  # fmt: skip
    assert res.code == 0, res.err
    records = stored_results(cli.db, 1)
    assert {r.workload for r in records} == {"put-4k-t1", "get-4k-t4", "delete-4k-t1"}
    counts = {}
    for rec in records:
        bucket = rec.backend.bucket
        assert bucket.source == "listing" and bucket.problems == (), bucket
        assert bucket.where.startswith("s3://swiftbench/storbench-") and bucket.where.endswith("/")
        counts[rec.workload] = bucket
        assert "object-bucket-changed" not in {f.check for f in rec.findings}  # a listing of its own prefix is not judged
    puts, gets, deletes = requests_of(records, "put-4k-t1", "write"), requests_of(records, "get-4k-t4", "read"), requests_of(records, "delete-4k-t1", "trim")
    assert puts > 0 and gets > 0 and 0 < deletes <= 64
    assert 0 <= counts["put-4k-t1"].delta_objects() <= puts
    assert (counts["get-4k-t4"].delta_objects(), counts["get-4k-t4"].delta_bytes()) == (0, 0)
    assert counts["get-4k-t4"].before.objects >= 4 * 64  # the objects written first for the 4 clients
    assert counts["delete-4k-t1"].delta_objects() == -deletes
    assert counts["delete-4k-t1"].delta_bytes() == -deletes * 4096
    assert "wrote 320 objects (1.2 MiB) before the workloads that read or delete them" in res.err
    assert "swiftbench" not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
    lines = cli("show", "1").out
    assert f"s3://swiftbench/{records[0].storage.notes[0].split('objects under ')[1].split(' ')[0]} (listed: the run's own objects): " in lines, lines
    data = cli.db.read_bytes()
    assert keys.SECRET.encode() not in data


@pytest.mark.parametrize("key, secret", [("bench:nobody", "benchsecret"), ("bench:bench", "wrong")])
def test_wrong_credentials_on_swift_are_one_line(cli, keys, monkeypatch, key, secret):
    """Swift's tempauth cannot tell an unknown access key from a wrong secret: both are
    SignatureDoesNotMatch (radosgw says InvalidAccessKeyId of the first), and the line says so."""
    with contextlib.suppress(Exception):  # made by the first case
        keys.s3().create_bucket(Bucket="creds")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    res = cli("run", "--target", f"s3://creds?endpoint={keys.endpoint}", "--workload", "put-4k-t1", *SMALL)
    assert res.code != 0
    assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
    assert (f"storbench: error: s3://creds?endpoint={keys.endpoint}: the S3 server at {keys.endpoint} answered 403 SignatureDoesNotMatch: "
            "the signature does not match: the secret key is wrong (Swift's s3api says this of an unknown access key too)") in res.err


def test_a_wrong_region_on_swift_is_one_line(cli, keys):
    """Swift's s3api checks the region its location names (radosgw 16 accepts any); botocore would
    sign storbench's own requests again for the region the server names, silently, and only fio's
    requests fail: the server's answer is the line, before anything runs."""
    keys.s3().create_bucket(Bucket="region")
    res = cli("run", "--target", f"s3://region?endpoint={keys.endpoint}&region=eu-west-9", "--workload", "put-4k-t1", *SMALL)
    assert res.code != 0
    assert res.err.count("\n") == 1 and "Traceback" not in res.err, res.err
    assert ("answered 400 AuthorizationHeaderMalformed: the server expects another region than eu-west-9 (The authorization header "
            "is malformed; the region 'eu-west-9' is wrong; expecting 'us-east-1')") in res.err
    assert "FAILED" not in res.err  # refused before any workload
