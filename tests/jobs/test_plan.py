"""How long a run takes, known before it starts (plan.py), and ``run --plan`` on real fio."""

from __future__ import annotations

import json
import re

import pytest

from storbench.jobs.plan import CAP_HINT_FROM_S, FIO_START_STOP_S, estimate, format_plan, format_total, needs_probe

from conftest import needs_fio

MIB = 1 << 20


def test_time_based_jobs_take_warmup_and_runtime():
    e = estimate("quick", "/t", {"runtime": "5", "time_based": None, "ramp_time": "2", "startdelay": "1"}, 3)
    assert e.seconds == pytest.approx(8 + FIO_START_STOP_S)
    assert e.total_s == pytest.approx(3 * (8 + FIO_START_STOP_S))
    assert e.basis == "runtime 5 s after 3 s warm-up"
    assert not needs_probe({"runtime": "5", "time_based": None, "size": "16g"})


def test_the_gitlab_workload_on_a_slow_mirror():
    """16 GiB at 3.9 MiB/s: 4,201 s = 70 min; a 60 s runtime caps it."""
    options = {"size": "16g", "rw": "randrw", "bs": "4k"}
    assert needs_probe(options)
    e = estimate("gitlab", "/mnt/zfs", options, 1, rate_bps=3.9 * MIB)
    assert e.seconds == pytest.approx(16 * 1024 / 3.9 + FIO_START_STOP_S)
    assert e.seconds > CAP_HINT_FROM_S
    assert e.basis == "16.0 GiB at about 3.9 MiB/s"
    assert e.cap_hint == "--runtime 60s would cap it at about 1 m"
    (line, total) = format_plan([e])
    assert line == "gitlab on /mnt/zfs: 16.0 GiB at about 3.9 MiB/s: about 70 min; --runtime 60s would cap it at about 1 m"
    assert total == "plan: 1 workload x 1 repetition on 1 target: about 70 min"


def test_numjobs_and_loops_multiply_the_bytes_and_a_runtime_bounds_them():
    e = estimate("w", "/t", {"size": "1g", "numjobs": "4", "loops": "2"}, 1, rate_bps=100 * MIB)
    assert e.seconds == pytest.approx(8 * 1024 / 100 + FIO_START_STOP_S)
    capped = estimate("w", "/t", {"size": "1g", "runtime": "10"}, 1, rate_bps=10 * MIB)  # 102 s of I/O, 10 s allowed
    assert capped.seconds == pytest.approx(10 + FIO_START_STOP_S)
    assert capped.basis.startswith("runtime 10 s (its 1.0 GiB would take 1 m 42 s)")


def test_unknown_speed_is_said():
    e = estimate("gitlab", "/t", {"size": "16g"}, 3)
    assert e.seconds is None and e.basis == "16.0 GiB, speed not probed"
    quick = estimate("q", "/t", {"runtime": "5", "time_based": None}, 3)
    assert format_total([quick, e]).endswith(
        "about 16 s plus 1 size-based job of unknown speed (storbench run --plan probes them)"
    )


@needs_fio
def test_run_plan_probes_a_size_based_workload_and_runs_nothing(cli, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[suite.s]\ndescription = "one size-based, one time-based"\nworkloads = ["big", "timed"]\n'
        '[workload.big]\ndescription = "size-based"\nfio = { rw = "write", bs = "1m", size = "300m" }\n'
        '[workload.timed]\ndescription = "time-based"\nfio = { rw = "read", bs = "4k", size = "16m", runtime = 2, time_based = true }\n'
    )
    target = tmp_path / "t"
    target.mkdir()
    r = cli("run", "--plan", "--suite-file", str(suite), "--suite", "s", "--target", str(target), "--repeat", "2")
    assert r.code == 0, r.err
    assert "probing big on" in r.err
    lines = r.out.splitlines()
    m = re.fullmatch(rf"big on {re.escape(str(target))}: 300.0 MiB at about ([\d.]+) (MiB|GiB)/s: about (\d+) s x 2", lines[0])
    assert m, lines[0]
    assert lines[1] == f"timed on {target}: runtime 2 s: about 2 s x 2"
    assert lines[2].startswith("plan: 2 workloads x 2 repetitions on 1 target: about ")
    assert sorted(p.name for p in target.iterdir()) == []  # the probe's file is gone, nothing else made
    assert json.loads(cli("list", "--json").out) == []  # nothing stored


def test_a_group_of_jobs_run_together_lasts_as_its_longest_with_the_speed_shared():
    from storbench.jobs import plan
    from storbench.jobs.plan import group_estimate

    # two size-based jobs at one probed speed end together: 96 MiB over 32 MiB/s
    two = group_estimate("a..b", "/t", [{"size": "64m"}, {"size": "32m"}], 1, rate_bps=32 * 2**20)
    assert two.seconds == pytest.approx(3.0 + plan.FIO_START_STOP_S)
    assert two.basis == "2 jobs together, the longest: 64.0 MiB at about 21.3 MiB/s"
    # a timed job beside a short sized one: the timed one sets the length
    timed = group_estimate("a..b", "/t", [{"size": "1m"}, {"runtime": "20", "time_based": None}], 2, rate_bps=2**30)
    assert timed.seconds == pytest.approx(20 + plan.FIO_START_STOP_S) and timed.basis.endswith("runtime 20 s")
    # one job: the job's own estimate
    assert group_estimate("a", "/t", [{"runtime": "5", "time_based": None}], 1) == plan.estimate("a", "/t", {"runtime": "5", "time_based": None}, 1)
    # a job whose length is unknown makes the group's unknown, said
    unknown = group_estimate("a..b", "/t", [{"runtime": "5", "time_based": None}, {"size": "1g"}], 1)
    assert unknown.seconds is None and unknown.basis == "2 jobs together; one: 1.0 GiB, speed not probed"


def test_an_s3_jobs_plan_says_the_objects_it_writes_reads_or_deletes():
    from storbench.jobs.plan import objects_note

    put = {"http_mode": "s3", "rw": "write", "bs": "4k", "size": "4m", "numjobs": "4", "runtime": "5", "time_based": None}
    assert objects_note(put) == "4,096 objects of 4.0 KiB (16.0 MiB), written"
    get = {**put, "rw": "randread", "bs": "1m", "size": "16m", "numjobs": "1"}
    assert objects_note(get) == "16 objects of 1.0 MiB (16.0 MiB), written first, then read"
    assert objects_note({**put, "rw": "trim", "numjobs": "1", "size": "5k"}) == "2 objects of 4.0 KiB (8.0 KiB), written first, then deleted"
    assert objects_note({"rw": "write", "bs": "4k", "size": "4m"}) is None  # not an S3 job
    assert estimate("put-4k-t4", "s3://b", put, 3).basis == "runtime 5 s; 4,096 objects of 4.0 KiB (16.0 MiB), written"
