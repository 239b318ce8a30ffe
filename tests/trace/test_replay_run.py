"""storbench trace import/list/show/export and run --replay, with the real fio on a temporary
directory (the fast tier): a trace of known timing replayed, its fidelity said, its writes guarded."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from conftest import needs_fio

DATA = Path(__file__).parent.parent / "data" / "trace"
SYN = DATA / "synthetic-500iops.iolog"


def _import(cli, path: Path = SYN, label: str = "syn", *extra: str):
    res = cli("trace", "import", str(path), "--label", label, *extra)
    assert res.code == 0, res.err
    return res


def test_import_list_show_export(cli, tmp_path: Path):
    res = _import(cli)
    assert "trace 1 'syn': 200 requests over 0.40 s, fio-iolog" in res.out
    assert "  read  100 requests, 400.0 KiB, 251 IOPS" in res.out  # 100 over its 0.398 s
    assert "note: an iolog holds no completions: no latency, no queue depth of the source" in res.out
    _import(cli, DATA / "tracefs-loop0-dd-blkdiscard-fsync.txt", "dd")
    _import(cli, DATA / "msr-cambridge-sample.csv", "hm0")
    _import(cli, DATA / "alibaba-sample.csv", "ali", "--disk", "3")
    listed = json.loads(cli("trace", "list", "--json").out)
    assert [(t["trace_id"], t["label"], t["source"], t["events"]) for t in listed] == [
        (4, "ali", "alibaba", 4), (3, "hm0", "msr-cambridge", 5), (2, "dd", "tracefs", 59), (1, "syn", "fio-iolog", 200)]  # fmt: skip
    shown = cli("trace", "show", "dd")
    assert "  read  51 requests" in shown.out and "latency p50" in shown.out and "queue depth: max" in shown.out
    data = json.loads(cli("trace", "show", "2", "--json").out)
    assert data["figures"]["directions"]["trim"]["bytes"] == 1048576 and data["figures"]["flushes"] == 1
    out = tmp_path / "syn.iolog"
    assert cli("trace", "export", "syn", "-o", str(out)).code == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog" and len(lines) == 3 + 200 + 1
    bad = cli("trace", "export", "syn", "-o", str(tmp_path / "no" / "such" / "dir.iolog"))
    assert bad.code == 2 and bad.err.count("\n") == 1 and "cannot write" in bad.err
    assert cli("trace", "delete", "hm0").code == 0
    assert [t["label"] for t in json.loads(cli("trace", "list", "--json").out)] == ["ali", "dd", "syn"]


@pytest.mark.parametrize(
    "content, words",
    [
        (b"hello\nworld\n", "not a trace storbench reads (a fio v2/v3 iolog, an MSR Cambridge or Alibaba block trace CSV, a saved trace_pipe of block_rq events); its first line is 'hello'"),
        (b"\x07\x74\x61\x65" + bytes(60), "a blktrace binary (blkparse -d) dump is not read by this storbench"),
        (b"fio version 3 iolog\n0 f add\nzz f read 0 1\n", "line 3 is not 'TIME FILE ACTION [OFFSET LENGTH]'"),
        (b"1,hm,0,Read,0,512,1\n2,hm,0,Read,0\n", "line 2 has 5 fields, not the MSR Cambridge 7"),
    ],
)
def test_what_cannot_be_read_is_one_line_and_nothing_stored(cli, tmp_path: Path, content: bytes, words: str):
    bad = tmp_path / "bad.trace"
    bad.write_bytes(content)
    res = cli("trace", "import", str(bad), "--label", "bad")
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert words in res.err
    assert json.loads(cli("trace", "list", "--json").out) == []


def test_the_plan_of_a_replay_is_its_traces_span(cli, tmp_path: Path):
    _import(cli)
    res = cli("run", "--replay", "syn", "--target", str(tmp_path), "--plan")
    assert res.code == 0, res.err
    assert "replay-syn-timed on " in res.out and "the trace's span, 398 ms (timed replay)" in res.out
    assert "200 requests as fast as the target takes them (not probed)" in res.out
    assert list(tmp_path.glob("storbench.testfile")) == []  # nothing replayed to plan it


def test_a_trace_pipe_of_several_devices_names_them(cli, tmp_path: Path):
    two = tmp_path / "two.txt"
    lines = (DATA / "tracefs-loop0-dd-blkdiscard-fsync.txt").read_text()
    two.write_text(lines + lines.replace(": 7,0 ", ": 7,1 "))
    res = cli("trace", "import", str(two), "--label", "two")
    assert res.code == 2 and "holds the requests of 2 devices (7:0, 7:1)" in res.err and "--disk MAJOR:MINOR" in res.err
    res = cli("trace", "import", str(two), "--label", "two", "--disk", "loop1")
    assert res.code == 2 and res.err.count("\n") == 1 and "a trace_pipe text's device is MAJOR:MINOR" in res.err
    ok = cli("trace", "import", str(two), "--label", "one", "--disk", "7:1")
    assert ok.code == 0, ok.err
    assert "59 requests" in ok.out
    assert cli("trace", "import", str(two), "--label", " ").code == 2


def test_no_such_trace_is_one_line(cli):
    res = cli("run", "--replay", "nothing", "--dry-run")
    assert res.code == 2 and res.err.count("\n") == 1 and "no trace 'nothing' in" in res.err


@needs_fio
def test_a_replay_runs_both_modes_and_says_how_faithful_it_was(cli, tmp_path: Path):
    _import(cli)
    target = tmp_path / "target"
    target.mkdir()
    res = cli("run", "--replay", "syn", "--target", str(target), "--repeat", "2", "--no-report", "--json", "--label", "r")
    assert res.code == 0, res.err
    records = {r["workload"]: r for r in json.loads(res.out)}
    assert set(records) == {"replay-syn-timed", "replay-syn-fast"}
    for rec in records.values():
        assert rec["options"]["replay_redirect"] == str(target / "storbench.testfile")
        assert rec["jobs"][0]["read"]["total_ios"] == 100 and rec["jobs"][0]["write"]["total_ios"] == 100
        (fid,) = [f for f in rec["findings"] if f["check"] == "replay-fidelity"]
        assert "200 requests over 0.40 s" in fid["message"] and "operations replayed/recorded: read 100/100, write 100/100" in fid["message"]
        assert [f for f in rec["findings"] if f["check"] == "replay-incomplete"] == []
    assert "timed replay of trace 'syn'" in next(f for f in records["replay-syn-timed"]["findings"] if f["check"] == "replay-fidelity")["message"]
    assert {f["check"] for f in records["replay-syn-timed"]["findings"]} >= {"trace-open-loop"}
    assert "trace-open-loop" not in {f["check"] for f in records["replay-syn-fast"]["findings"]}
    # the log was written for the run and is gone with it; the test file too
    # (this process's own: another worker may be replaying the same trace at this moment)
    assert not [p for p in Path(tempfile.gettempdir()).glob(f"storbench-replay-{os.getpid()}-*") if (p / "replay-syn-timed.iolog").exists()]
    assert list(target.iterdir()) == []
    shown = cli("show", "r")
    assert "[replay-fidelity]" in shown.out
    # compare sets the captured source beside the replay: the trace's own figures, one sample
    compared = cli("compare", "r", "--json")
    assert compared.code == 0, compared.err
    cmp = json.loads(compared.out)
    assert [c["name"] for c in cmp["configs"]] == ["r", "captured: syn"]
    (row,) = [r for r in cmp["rows"] if r["workload"] == "replay-syn-fast" and r["direction"] == "read" and r["metric"] == "iops"]
    captured = row["cells"][cmp["configs"][1]["key"]]
    assert captured["values"] == [pytest.approx(100 / 0.398)] and captured["n"] == 1
    assert "with single runs no significance" not in cli("compare", "r").out
    # the workloads keep their trace: stored in the run, read back by --resume
    meta = json.loads(sqlite3.connect(cli.db).execute("SELECT meta_json FROM runs").fetchone()[0])
    assert [w["replay"]["trace_id"] for w in meta["workloads"]] == [1, 1]


@needs_fio
def test_reads_only_leaves_the_writes_out_and_says_so(cli, tmp_path: Path):
    _import(cli)
    image = tmp_path / "disk.img"
    image.write_bytes(b"\x5a" * (8 * 1024 * 1024))
    before = image.read_bytes()
    # a trace with writes onto an existing file: refused without --destroy-data
    refused = cli("run", "--replay", "syn", "--target", str(image), "--repeat", "1", "--no-report")
    assert refused.code == 2 and refused.err.count("\n") == 1 and "destroy-data" in refused.err
    res = cli("run", "--replay", "syn", "--replay-mode", "timed", "--reads-only", "--target", str(image), "--repeat", "1", "--no-report", "--json")
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    assert rec["options"]["rw"] == "randread"
    assert rec["jobs"][0]["read"]["total_ios"] == 100 and rec["jobs"][0].get("write", {}).get("total_ios", 0) == 0
    assert any(f["check"] == "replay-fidelity" and "reads only: the trace's 100 writes were left out (--reads-only)" in f["message"] for f in rec["findings"])
    assert image.read_bytes() == before  # nothing written
    assert cli("run", "--reads-only", "--dry-run").code == 2
    # a file smaller than the trace's extent (5.7 MB): its offsets divided to fit, said; the file never grows
    small = tmp_path / "small.img"
    small.write_bytes(bytes(2 * 1024 * 1024))
    res = cli("run", "--replay", "syn", "--replay-mode", "fast", "--target", str(small), "--destroy-data", str(small),
              "--repeat", "1", "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    assert rec["options"]["replay_scale"] == "3" and rec["options"]["replay_align"] == "4096"
    assert rec["jobs"][0]["write"]["total_ios"] == 100 and small.stat().st_size == 2 * 1024 * 1024
    assert any("offsets divided by 3 (replay_scale: the target is smaller than the trace's 5,709,824 bytes)" in f["message"] for f in rec["findings"])


def test_a_replay_cannot_go_where_fio_cannot_redirect_it(cli):
    _import(cli)
    res = cli("run", "--replay", "syn", "--target", "s3://bench?endpoint=http://127.0.0.1:1", "--dry-run")
    assert res.code == 2 and res.err.count("\n") == 1, res.err
    assert "is a s3 target: a trace replays onto one file, device, export or image (fio's replay_redirect)" in res.err


SUITE = """
[workload.db-timed]
description = "the db trace as recorded"
replay = "syn"

[workload.db-fast]
replay = "syn"
mode = "fast"
reads_only = true

[suite.mine]
description = "my own workload"
workloads = ["db-timed", "db-fast"]
"""


def test_a_suite_names_a_trace_as_a_workload(cli, tmp_path: Path):
    suite = tmp_path / "mine.toml"
    suite.write_text(SUITE)
    listed = cli("suites", "--suite-file", str(suite))
    assert listed.code == 0, listed.err
    bad = tmp_path / "bad.toml"
    bad.write_text('[workload.x]\nreplay = "syn"\nmode = "slow"\n')
    res = cli("run", "--suite-file", str(bad), "--workload", "x", "--dry-run")
    assert res.code == 2 and res.err.count("\n") == 1 and "invalid mode 'slow' (allowed: timed, fast)" in res.err
    missing = cli("run", "--suite-file", str(suite), "--suite", "mine", "--dry-run")
    assert missing.code == 2 and "no trace 'syn' in" in missing.err
    _import(cli)
    target = tmp_path / "t"
    target.mkdir()
    dry = cli("run", "--suite-file", str(suite), "--suite", "mine", "--target", str(target), "--dry-run")
    assert dry.code == 0, dry.err
    assert "[db-timed]" in dry.out and "[db-fast]" in dry.out and "replay_no_stall=1" in dry.out and "rw=randread" in dry.out
    curve = cli("curve", "--suite-file", str(suite), "--workload", "db-fast", "--target", str(target))
    assert curve.code == 2 and "replays a trace, whose load is the trace's own: a curve cannot raise it" in curve.err


@needs_fio
def test_a_suites_replay_runs(cli, tmp_path: Path):
    suite = tmp_path / "mine.toml"
    suite.write_text(SUITE)
    _import(cli)
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--suite-file", str(suite), "--suite", "mine", "--target", str(target), "--repeat", "1", "--no-report", "--json")
    assert res.code == 0, res.err
    records = {r["workload"]: r for r in json.loads(res.out)}
    assert records["db-timed"]["jobs"][0]["write"]["total_ios"] == 100
    assert records["db-fast"]["jobs"][0]["read"]["total_ios"] == 100 and records["db-fast"]["options"]["rw"] == "randread"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mkfs.xfs") is None, reason="needs root (loop devices) and xfsprogs")
@needs_fio
def test_a_matrix_replays_a_trace_on_each_setup(cli, tmp_path: Path):
    """The suite's replay on ext4 and on xfs (a loop file): each setup's run replays every request,
    and nothing of the replay's logs is left."""
    suite = tmp_path / "mine.toml"
    suite.write_text(SUITE)
    _import(cli)
    res = cli("matrix", "--loop-file", str(tmp_path / "loop.img"), "--loop-size", "300m", "--fs", "ext4,xfs",
              "--suite-file", str(suite), "--suite", "mine", "--repeat", "1", "--label", "rs", "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    results = json.loads(res.out)["results"]
    per = {(r["label"], r["workload"]): r for r in results}
    assert set(per) == {("rs/ext4", "db-timed"), ("rs/ext4", "db-fast"), ("rs/xfs", "db-timed"), ("rs/xfs", "db-fast")}
    for rec in per.values():
        assert rec["jobs"][0]["read"]["total_ios"] == 100
        assert any(f["check"] == "replay-fidelity" and "read 100/100" in f["message"] for f in rec["findings"])
    assert per[("rs/ext4", "db-timed")]["jobs"][0]["write"]["total_ios"] == 100
