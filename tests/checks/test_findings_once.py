"""A finding that holds for every workload of a run is said once for the run (issue: the preset's
short runtime printed eight times drowned the one real warning); invalid findings stay beside
their figures; --json names the workloads each finding covers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from storbench.fio import parse_output
from storbench.model import Finding
from storbench.record import ResultRecord
from storbench.render.terminal import format_findings, format_run_wide, run_wide_checks

from conftest import DATA, needs_fio


def _rec(workload: str, *findings: tuple[str, str]) -> ResultRecord:
    fio = parse_output((DATA / "ceph" / "fio-rbd-randread-unwritten.json").read_text())
    return ResultRecord(run_id=1, workload=workload, target="/t", fio=fio, raw_output="",
                        findings=tuple(Finding(check=c, severity=s, message=f"{c} of {workload}", fix=f"fix {c}", workload=workload)
                                       for c, s in findings))  # fmt: skip


def test_run_wide_checks_fold_what_every_workload_shares_but_never_invalid():
    recs = [_rec("a", ("short-run", "warning"), ("sparse-read", "invalid")), _rec("b", ("short-run", "warning"), ("sparse-read", "invalid")),
            _rec("c", ("short-run", "warning"), ("fio-cpu-bound", "warning"))]  # fmt: skip
    assert run_wide_checks(recs) == {("short-run", "warning"): ["a", "b", "c"]}
    # each workload says its own words (its figures): the check and its fix are said once
    assert format_run_wide(recs) == ["for every workload (3): warning [short-run]:", "  a: short-run of a", "  b: short-run of b",
                                     "  c: short-run of c", "  fix: fix short-run"]  # fmt: skip
    lines = format_findings(recs)
    assert lines[:2] == ["WARNING  every workload (3) [short-run]:", "         a: short-run of a"]
    same = [dataclasses.replace(r, findings=tuple(dataclasses.replace(f, message="5 s only") for f in r.findings)) for r in recs]
    assert format_run_wide(same) == ["for every workload (3): warning [short-run] 5 s only", "  fix: fix short-run"]
    assert sum("[sparse-read]" in ln for ln in lines) == 2 and sum("[fio-cpu-bound]" in ln for ln in lines) == 1
    assert run_wide_checks(recs[:1]) == {}  # one workload: nothing to fold
    assert run_wide_checks([recs[0], dataclasses.replace(recs[2], findings=())]) == {}


@needs_fio
def test_a_run_says_the_short_runtime_once(cli, tmp_path: Path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write",
              "--workload", "seq1m-q1t1-read", "--size", "16m", "--runtime", "1", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    assert res.err.count("warning: fio measured for only") == 1  # at the first workload, not at every one
    # said once for the run: on one line when fio measured the same time for every workload, else one line
    # a workload under it (fio measures a 1 s job as 999 ms, 1 s or 1.1 s as the machine lets it)
    assert res.out.count("[short-run]") == 1 and "for every workload (3): warning [short-run]" in res.out
    assert res.out.count("fio measured for only") in (1, 3)
    assert "warning: short-run" not in res.out  # not in the table's findings column
    recs = json.loads(cli("show", "1", "--json").out)
    for rec in recs:
        (f,) = [f for f in rec["findings"] if f["check"] == "short-run"]
        assert f["workloads"] == ["rnd4k-q1t1-read", "rnd4k-q1t1-write", "seq1m-q1t1-read"]
    shown = cli("show", "1").out
    assert shown.count("[short-run]") == 1 and "WARNING  every workload (3) [short-run]" in shown


@needs_fio
def test_each_workload_runs_three_times_by_default(cli, tmp_path: Path):
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "500ms",
              "--no-report", "--json", env_extra={"STORBENCH_REPEAT": None})  # fmt: skip
    assert res.code == 0, res.err
    recs = json.loads(res.out)
    assert [r["repetition"] for r in recs] == [0, 1, 2]
    assert recs[0]["stats"]["read"]["iops"]["n"] == 3 and "--repeat 1" not in res.err
    once = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "500ms",
               "--no-report", "--repeat", "1", env_extra={"STORBENCH_REPEAT": None})  # fmt: skip
    assert once.code == 0 and once.err.count("no spread or confidence interval can be given") == 1, once.err
    bad = cli("run", "--target", str(target), "--workload", "rnd4k-q1t1-read", env_extra={"STORBENCH_REPEAT": "three"})
    assert bad.code == 2 and bad.err == "storbench: error: STORBENCH_REPEAT='three': give a whole number of repetitions, 1 or more\n"
