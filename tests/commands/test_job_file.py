"""``storbench run --job-file``: fio's own example job files of the installed fio (make install puts
them beside its engines: tools/fio-engines.sh) and files in the forms vendors publish
(tests/data/fio-jobs), run by the real fio on a temporary directory."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from storbench.targets.base import ENGINES_DIR

from conftest import DATA, needs_fio

pytestmark = needs_fio

EXAMPLES = Path(ENGINES_DIR) / "examples"
SMALL = ("--size", "8m", "--runtime", "500ms", "--no-report")


def _examples() -> list[Path]:
    found = sorted(EXAMPLES.glob("*.fio"))
    if not found:
        pytest.fail(f"fio's example job files are not in {EXAMPLES}: make install puts them there (tools/fio-engines.sh)")
    return found


def _records(db: Path) -> list[tuple[str, float | None, float | None, str, str]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("select workload, read_iops, write_iops, job_text, raw_output from results order by id").fetchall()
    finally:
        con.close()


def test_every_example_of_the_installed_fio_is_read_or_refused_in_one_line(cli):
    read, refused = [], {}
    for path in _examples():
        res = cli("suites", "--job-file", str(path))
        if res.code == 0:
            assert res.out.startswith(f"{path.name.lower()}  (from {path}): fio job file {path}:"), res.out
            read.append(path.name)
            continue
        lines = res.err.strip().splitlines()
        assert res.code == 2 and len(lines) == 1 and lines[0].startswith(f"storbench: error: {path}:"), (path.name, res.err)
        refused[path.name] = lines[0]
    # the jobs people copy run; what needs an engine, a device or a server of its own is refused by name
    assert {"aio-read.fio", "ssd-test.fio", "tiobench-example.fio", "fio-rand-RW.fio", "waitfor.fio", "butterfly.fio",
            "latency-profile.fio", "jesd219.fio", "surface-scan.fio", "steadystate.fio"} <= set(read)  # fmt: skip
    assert "ioengine=rdma does no I/O on a file or device" in refused["rdmaio-client.fio"]
    assert "ioengine=rbd is the engine of storbench's rbd:// targets" in refused["rbd.fio"]
    assert "ioengine=exec runs programs" in refused["exec.fio"]
    assert "uses ${S3_KEY}, which is not set in the environment" in refused["http-s3.fio"]
    assert len(read) + len(refused) == len(_examples()) and len(read) >= 40


def test_a_group_of_jobs_run_together_is_one_workload_whose_figures_are_the_groups(cli, tmp_path):
    """aio-read.fio: four jobs at four depths at once, as fio runs them: one workload, four sections."""
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--job-file", str(EXAMPLES / "aio-read.fio"), "--target", str(target), *SMALL, "--label", "aio", "--json")
    assert res.code == 0, res.err
    assert f"storbench: {EXAMPLES / 'aio-read.fio'}:8: directory=/data1 replaced by the target" in res.err
    [rec] = json.loads(res.out)
    assert rec["workload"] == "file1..file4"
    con = sqlite3.connect(cli.db)
    assert con.execute("select suite from runs").fetchone() == ("aio-read.fio",)
    con.close()
    [(_, read_iops, write_iops, job_text, raw)] = _records(cli.db)
    assert job_text.count("\n[") + job_text.startswith("[") == 4 and job_text.count("ioengine=libaio") == 4
    assert [ln for ln in job_text.splitlines() if ln.startswith("iodepth=")] == ["iodepth=4", "iodepth=32", "iodepth=8", "iodepth=16"]
    jobs = json.loads(raw)["jobs"]
    assert [j["jobname"] for j in jobs] == ["file1", "file2", "file3", "file4"]
    # one process ran the four at once: their times overlap, and the workload's IOPS is their sum
    assert read_iops == pytest.approx(sum(j["read"]["iops"] for j in jobs)) and write_iops in (None, 0)
    assert all(j["read"]["io_bytes"] > 0 for j in jobs)
    assert rec["stats"]["read"]["clat_p99_ns"]["mean"] > 0  # merged from the four jobs' histograms (json+)
    assert list(target.iterdir()) == []


def test_stonewalls_make_workloads_run_in_the_files_order_and_compare(cli, tmp_path):
    """ssd-test.fio: four stonewalled jobs are four workloads; two runs of it compare workload by workload."""
    target = tmp_path / "t"
    target.mkdir()
    for label in ("a", "b"):
        res = cli("run", "--job-file", str(EXAMPLES / "ssd-test.fio"), "--target", str(target), *SMALL, "--repeat", "2", "--label", label)
        assert res.code == 0, res.err
    rows = _records(cli.db)
    assert [r[0] for r in rows[:8]] == ["seq-read", "seq-read", "rand-read", "rand-read", "seq-write", "seq-write", "rand-write", "rand-write"]
    assert all("rw=" in r[3] and "direct=1" in r[3] and "iodepth=4" in r[3] for r in rows)
    assert all(r[1] > 0 for r in rows if r[0].endswith("read")) and all(r[2] > 0 for r in rows if r[0].endswith("write"))
    res = cli("compare", "a", "b", "--json")
    assert res.code == 0, res.err
    compared = json.loads(res.out)
    assert sorted({row["workload"] for row in compared["rows"]}) == ["rand-read", "rand-write", "seq-read", "seq-write"]
    assert list(target.iterdir()) == []


def test_numjobs_wait_for_and_a_profile_option_as_fio_runs_them(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--job-file", str(EXAMPLES / "waitfor.fio"), "--target", str(target), *SMALL)
    assert res.code == 0, res.err
    assert "waitfor.fio:2: threads=1 left out: an option of fio's tiobench profile" in res.err
    rows = _records(cli.db)
    assert [r[0] for r in rows] == ["writers", "readers", "writers2", "readers2"]
    for workload, _, _, job_text, raw in rows:
        jobs = json.loads(raw)["jobs"]
        assert "numjobs=4" in job_text and "group_reporting" in job_text and "wait_for=" not in job_text
        assert len(jobs) == 1 and jobs[0]["jobname"] == workload  # group_reporting: the four clones as one
    assert list(target.iterdir()) == []


def test_a_job_fio_itself_fails_is_one_line_and_nothing_is_left(cli, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--job-file", str(EXAMPLES / "zbd-rand-write.fio"), "--target", str(target), *SMALL)
    assert res.code == 1
    assert res.err.strip().splitlines()[-1].startswith("storbench: error: 1 of 1 workload(s) failed; first: workload 'dev1'")
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[j]\nrw=read\nbs=4k\nsize=1m\nrw=bogus\n", "fio refuses it: "),
        ("[j]\nexec_prerun=touch /tmp/x\n", "exec_prerun: runs a program"),
    ],
)
def test_a_file_fio_or_storbench_refuses_is_one_line(cli, tmp_path, text, message):
    job = tmp_path / "bad.fio"
    job.write_text(text)
    res = cli("run", "--job-file", str(job), "--target", str(tmp_path), "--dry-run")
    assert res.code == 2
    [line] = res.err.strip().splitlines()
    assert line.startswith(f"storbench: error: {job}") and message in line


def test_job_file_and_suite_options_exclude_each_other(cli, tmp_path):
    res = cli("run", "--job-file", str(EXAMPLES / "ssd-test.fio"), "--suite", "quick", "--dry-run")
    assert res.code == 2 and "--job-file is the suite" in res.err
    res = cli("run", "--job-file", str(EXAMPLES / "ssd-test.fio"), "--workload", "rand-read", "--target", str(tmp_path), "--dry-run")
    assert res.code == 0, res.err
    assert res.out.count("\n[") + res.out.startswith("[") == 1 and "[rand-read]" in res.out and "rw=randread" in res.out


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "fio-jobs").glob("*.fio")))
def test_files_in_the_forms_vendors_publish_run(cli, tmp_path, name):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--job-file", str(DATA / "fio-jobs" / name), "--target", str(target), *SMALL,
              env_extra={"FIO_BS": "8k"})  # fmt: skip
    assert res.code == 0, res.err
    expected = json.loads((DATA / "fio-jobs" / (Path(name).stem + ".expect.json")).read_text())
    rows = _records(cli.db)
    assert [r[0] for r in rows] == expected["workloads"]
    for (workload, *_, job_text, raw), sections in zip(rows, expected["sections"], strict=True):
        assert re.findall(r"^\[(.+)\]$", job_text, re.M) == sections, (workload, job_text)
        assert json.loads(raw)["jobs"][0]["jobname"] == sections[0]
    for note in expected["notes"]:
        assert note in res.err
    assert list(target.iterdir()) == []
