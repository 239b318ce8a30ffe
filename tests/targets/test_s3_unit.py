"""s3:// targets without a server: the URI's rules, the job storbench writes, the masking of the
credentials, a killed run's prefix, and the object findings on fio outputs recorded against a
real radosgw (tests/data/fio-json/s3_*.json).  The real gateway: test_s3.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from storbench.checks import CheckContext, run_checks
from storbench.errors import SuiteError, TargetError
from storbench.fio.json import parse_fio_json
from storbench.jobs.jobfile import build_job, unsafe_text_reason
from storbench.model import Overrides, Target, Workload
from storbench.run.fioexec import FioInvocation, masked
from storbench.storage import StorageInfo
from storbench.targets import kind_of
from storbench.targets.s3 import S3Spec, bucket_uri, parse_s3_spec, run_prefix, stale_prefixes

DATA = Path(__file__).resolve().parent.parent / "data" / "fio-json"
ENDPOINT = "http://127.0.0.1:7480"


def test_an_s3_uri_is_read_into_its_parts():
    assert parse_s3_spec(f"s3://bench?endpoint={ENDPOINT}") == S3Spec("bench", "", ENDPOINT, "us-east-1")
    assert parse_s3_spec("s3://my.bucket-1/team/a/?endpoint=https://s3.lan:9000/&region=eu-west-1") == S3Spec(
        "my.bucket-1", "team/a", "https://s3.lan:9000", "eu-west-1"
    )
    assert parse_s3_spec("s3://b12/x?endpoint=https://s3.lan:9000").https and parse_s3_spec("s3://b12/x?endpoint=https://s3.lan:9000").host == "s3.lan:9000"
    assert bucket_uri(f"s3://bench/team?endpoint={ENDPOINT}") == "s3://bench"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("s3://Bench?endpoint=http://h:1", "'Bench' is not a bucket name"),
        ("s3://ab?endpoint=http://h:1", "'ab' is not a bucket name"),
        ("s3://bench?endpoint=h:1", "endpoint 'h:1' is not http://HOST:PORT"),
        ("s3://bench?endpoint=http://h", "endpoint 'http://h' is not http://HOST:PORT"),
        ("s3://bench?endpoint=http://h:1/path", "endpoint 'http://h:1/path' is not http://HOST:PORT"),
        ("s3://bench", "endpoint '' is not http://HOST:PORT"),
        ("s3://bench?endpoint=http://h:1&colour=red", "'colour' is not an option storbench knows here"),
        ("s3://bench/a b?endpoint=http://h:1", "prefix 'a b' may hold letters, digits"),
        ("s3://bench?endpoint=http://h:1&region=EU", "region 'EU' is not a region name"),
    ],
)
def test_a_wrong_s3_uri_is_one_line(spec, said):
    with pytest.raises(TargetError) as err:
        parse_s3_spec(spec)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_a_killed_runs_prefix_is_its_hosts_and_its_dead_process_only():
    mine = run_prefix("bench-1.lan", 4242, 1_800_000_000.7)
    assert mine == "storbench-bench-1.lan-4242-1800000000"
    names = [mine, "storbench-bench-1.lan-17-1700000000", "storbench-other-4242-1800000000", "storbench-bench-1.lan-x-1", "keep"]
    assert stale_prefixes(names, "bench-1.lan", {4242: False, 17: True}) == [mine]
    assert stale_prefixes(names, "bench-1.lan", {4242: True, 17: False}) == ["storbench-bench-1.lan-17-1700000000"]


def _target(prefix: str = "team") -> Target:
    return Target(kind="s3", path=f"s3://bench/{prefix}?endpoint={ENDPOINT}",
                  params=(("run_prefix", "storbench-h-1-2"), ("engine", "/x/fio-http.so")))  # fmt: skip


def _job(rw: str, **extra: str) -> str:
    w = Workload(name=f"w-{rw}", description="", options=(("rw", rw), ("bs", "4k"), ("numjobs", "2"), ("direct", "1"),
                 ("ioengine", "libaio"), ("iodepth", "8"), *extra.items()))  # fmt: skip
    return build_job(w, _target(), Overrides(size="1m")).job_text


def test_a_get_job_checks_what_storbench_put_under_its_own_prefix_per_clone(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI")
    text = _job("randread")
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert lines == ["[w-randread]", "rw=randread", "bs=4k", "numjobs=2", "size=1m", "ioengine=external:/x/fio-http.so",
                     "http_mode=s3", "http_host=127.0.0.1:7480", "http_s3_region=us-east-1",
                     "http_s3_keyid=${STORBENCH_SECRET_S3_KEYID}", "http_s3_key=${STORBENCH_SECRET_S3_KEY}",
                     "verify=pattern", "verify_pattern=0x73626e63", "filename_format=/bench/team/storbench-h-1-2/$jobname.$jobnum"]  # fmt: skip
    assert "direct=1 dropped: an S3 request has no page cache to bypass on the client" in text
    assert "AKIDEXAMPLE" not in text and "wJalrXUtnFEMI" not in text
    spec = build_job(Workload(name="g", description="", options=(("rw", "read"),)), _target(), Overrides(size="1m"))
    assert dict(spec.env) == {"STORBENCH_SECRET_S3_KEYID": "AKIDEXAMPLE", "STORBENCH_SECRET_S3_KEY": "wJalrXUtnFEMI"}


def test_a_put_writes_the_pattern_without_reading_back_and_a_delete_carries_none():
    put = _job("write")
    assert "verify=pattern\nverify_pattern=0x73626e63\ndo_verify=0\n" in put
    delete = _job("trim")
    assert "verify" not in delete
    mixed = _job("randrw")
    assert "a mixed job's GETs are not checked" in mixed


def test_a_workload_cannot_say_where_the_objects_go():
    with pytest.raises(SuiteError, match="'http_host' is set by storbench on an S3 target"):
        _job("read", http_host="evil:80")
    with pytest.raises(SuiteError, match="set by storbench"):
        _job("read", filename_format="/other/$jobnum")


def test_job_files_take_storbench_own_dollar_words_and_nothing_else():
    assert unsafe_text_reason("/b/p/$jobname.$jobnum") is None
    assert unsafe_text_reason("${STORBENCH_SECRET_S3_KEY}") is None
    assert unsafe_text_reason("${HOME}") is not None and unsafe_text_reason("$jobnumber2${PATH}") is not None


def test_fio_output_has_the_credentials_masked():
    inv = FioInvocation(returncode=0, output_text='"http_s3_key" : "wJalrXUtnFEMI", "http_s3_keyid" : "AKID"',
                        stderr_text="AKID wJalrXUtnFEMI", stdout_text="", logs={"a.log": "wJalrXUtnFEMI"})  # fmt: skip
    out = masked(inv, ["AKID", "wJalrXUtnFEMI"])
    assert out.output_text == '"http_s3_key" : "<masked>", "http_s3_keyid" : "<masked>"'
    assert out.stderr_text == "<masked> <masked>" and out.logs == {"a.log": "<masked>"}
    assert masked(inv, []) is inv


def test_recorded_outputs_hold_no_credentials():
    for name in ("s3_put_4k_radosgw.json", "s3_get_4k_4jobs_radosgw.json", "s3_get_1m_radosgw.json"):
        text = (DATA / name).read_text()
        assert '"http_s3_key" : "<masked>"' in text and "benchsecret" not in text


def _ctx(name: str, workload: str, options: dict[str, str | None], **edits) -> CheckContext:
    result = parse_fio_json((DATA / name).read_text())
    if edits:
        jobs = tuple(dataclasses.replace(j, **edits) for j in result.jobs)
        result = dataclasses.replace(result, jobs=jobs)
    storage = StorageInfo(target=f"s3://bench?endpoint={ENDPOINT}", target_kind="s3", filesystem=None, devices=(), host=None)
    return CheckContext(workload=workload, options=options, results=(result,), storage=storage)


def _ids(ctx: CheckContext) -> set[str]:
    return {f.check for f in run_checks(ctx)}


def test_small_objects_are_a_request_rate_and_large_ones_are_not():
    small = _ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", {"rw": "randread", "bs": "4k", "numjobs": "4", "size": "2m", "time_based": None, "runtime": "2", "randrepeat": "0"})
    found = {f.check: f for f in run_checks(small)}
    assert "object-request-bound" in found and "object-request-delay" not in found
    assert found["object-request-bound"].message.startswith("objects of 4 KiB: the figure is a request rate") and "read " in found["object-request-bound"].message
    large = _ctx("s3_get_1m_radosgw.json", "get-1m-t1", {"rw": "randread", "bs": "1m", "numjobs": "1", "size": "2m", "time_based": None, "runtime": "2", "randrepeat": "0"})
    assert "object-request-bound" not in _ids(large)


def test_a_put_loop_round_its_keys_is_said_to_overwrite():
    opts = {"rw": "write", "bs": "4k", "numjobs": "1", "size": "2m", "time_based": None, "runtime": "2"}
    ctx = _ctx("s3_put_4k_radosgw.json", "put-4k-t1", opts)
    puts = ctx.results[0].jobs[0].directions["write"].total_ios
    assert puts > 512  # the recorded loop got round its 512 keys
    (f,) = [f for f in run_checks(ctx) if f.check == "object-overwrite"]
    assert f.message.startswith(f"{puts} PUTs over 512 keys in one repetition: {puts - 512} of them")
    assert "object-overwrite" not in _ids(_ctx("s3_put_4k_radosgw.json", "put-4k-t1", {**opts, "size": "64m"}))


def test_a_delayed_ack_floor_and_a_busy_client_are_named():
    opts = {"rw": "randread", "bs": "4k", "numjobs": "1", "size": "2m", "time_based": None, "runtime": "2", "randrepeat": "0"}
    base = parse_fio_json((DATA / "s3_get_4k_4jobs_radosgw.json").read_text()).jobs[0]
    def at(p10: float, p50: float):
        return {n: dataclasses.replace(d, clat_ns=dataclasses.replace(d.clat_ns, percentiles={**d.clat_ns.percentiles, "10.0": p10, "50.0": p50}))
                for n, d in base.directions.items()}  # fmt: skip

    # as measured on radosgw without tcp_nodelay=1: the first request fast, the rest at 43.8 ms
    (f,) = [f for f in run_checks(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts, directions=at(43_778_048.0, 43_778_048.0)))
            if f.check == "object-request-delay"]  # fmt: skip
    assert f.message.startswith("the median 4 KiB request took read 43.8 ms (nine in ten at 43.8 ms or more)")
    assert "object-request-delay" not in _ids(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts, directions=at(2e6, 43e6)))
    assert "object-request-delay" not in _ids(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts, directions=at(60e6, 90e6)))
    assert "object-request-delay" not in _ids(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts))
    assert "object-client-cpu" in _ids(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts, usr_cpu_pct=80.0, sys_cpu_pct=10.0))
    assert "object-client-cpu" not in _ids(_ctx("s3_get_4k_4jobs_radosgw.json", "get-4k-t4", opts, usr_cpu_pct=20.0, sys_cpu_pct=10.0))


def test_a_failed_get_says_what_a_pattern_mismatch_means():
    kind = kind_of(_target())
    said = kind.explain_failure(_target(), "pattern: verify failed at file /bench/x.2 offset 16384")
    assert said.startswith("a GET returned other bytes than storbench PUT [object-404]: the object is missing")


def test_the_objects_suite_loads_with_a_get_for_every_put_size():
    from storbench.suites import builtin_catalog

    suite = builtin_catalog().suites["objects"]
    names = [w.name for w in suite.workloads]
    for size in ("4k", "64k", "1m", "16m"):
        assert {f"put-{size}-t1", f"put-{size}-t4", f"get-{size}-t1", f"get-{size}-t4"} <= set(names)
    assert "delete-4k-t1" in names and "mixed-64k-t4" in names
