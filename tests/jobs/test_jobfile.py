"""The job builder: exact job text for every kind of target, overrides, and fio accepting every built-in job."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from storbench.errors import FioMissingError, SuiteError, TargetError, UsageError
from storbench.jobs.jobfile import build_job, fio_filename, render_job_text
from storbench.model import Overrides, Target, Workload
from storbench.run.engines import AUTO_ENGINES, probe_ioengine
from storbench.suites import builtin_catalog

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed")

GITLAB = builtin_catalog().workload("gitlab")
APP = builtin_catalog().workload("app")
JOURNAL = builtin_catalog().workload("journal-sync")
SEQ_READ = builtin_catalog().workload("seq-read")  # share suite: ioengine=auto


def test_dir_target_golden():
    spec = build_job(GITLAB, Target("dir", "/mnt/pool"), Overrides())
    assert spec.job_text == (
        "[gitlab]\n"
        "randrepeat=1\n"
        "ioengine=libaio\n"
        "direct=1\n"
        "gtod_reduce=1\n"
        "bs=4k\n"
        "iodepth=64\n"
        "rw=randrw\n"
        "rwmixread=75\n"
        "size=16G\n"
        "filename=/mnt/pool/storbench.testfile\n"
    )
    assert spec.test_files == ("/mnt/pool/storbench.testfile",)
    assert spec.options[-1] == ("filename", "/mnt/pool/storbench.testfile")
    assert spec.workload is GITLAB and spec.target == Target("dir", "/mnt/pool")
    assert "[global]" not in spec.job_text


def test_dir_target_with_overrides_golden():
    spec = build_job(APP, Target("dir", "/mnt/pool/"), Overrides(size="1.5GiB", runtime="2m"))
    assert spec.job_text == (
        "[app]\n"
        "ioengine=posixaio\n"
        "rw=randwrite\n"
        "bs=4k\n"
        "numjobs=1\n"
        "size=1536m\n"
        "iodepth=1\n"
        "runtime=2m\n"
        "time_based=1\n"
        "end_fsync=1\n"
        "filename=/mnt/pool/storbench.testfile\n"
    )


def test_overrides_add_missing_size_and_runtime_on_dir():
    spec = build_job(GITLAB, Target("dir", "/d"), Overrides(size="8m", runtime="1"))
    assert spec.job_text.endswith("rwmixread=75\nsize=8m\nruntime=1\nfilename=/d/storbench.testfile\n")


def test_default_size_only_where_needed():
    # dir target, workload without size: default_size is added
    spec = build_job(JOURNAL, Target("dir", "/d"), Overrides(default_size="2g"))
    assert spec.job_text == (
        "[journal-sync]\n"
        "ioengine=libaio\n"
        "sync=1\n"
        "direct=1\n"
        "bs=4k\n"
        "iodepth=1\n"
        "rw=write\n"
        "runtime=60\n"
        "size=2g\n"
        "filename=/d/storbench.testfile\n"
    )
    # the workload's own size wins over default_size
    assert ("size", "16G") in build_job(GITLAB, Target("dir", "/d"), Overrides(default_size="2g")).options
    # file and block targets: fio uses the file's / device's size
    assert not build_job(JOURNAL, Target("file", "/data/f"), Overrides()).workload.has_option("size")
    assert "size=" not in build_job(JOURNAL, Target("file", "/data/f"), Overrides()).job_text
    assert "size=" not in build_job(JOURNAL, Target("block", "/dev/sdx"), Overrides()).job_text


def test_file_target_golden():
    spec = build_job(JOURNAL, Target("file", "/data/journal.img"), Overrides())
    assert spec.job_text == (
        "[journal-sync]\n"
        "ioengine=libaio\n"
        "sync=1\n"
        "direct=1\n"
        "bs=4k\n"
        "iodepth=1\n"
        "rw=write\n"
        "runtime=60\n"
        "filename=/data/journal.img\n"
    )
    assert spec.test_files == ()


def test_block_target_golden_with_overrides():
    spec = build_job(JOURNAL, Target("block", "/dev/nvme0n1"), Overrides(size="4g", runtime="10s"))
    assert spec.job_text == (
        "[journal-sync]\n"
        "ioengine=libaio\n"
        "sync=1\n"
        "direct=1\n"
        "bs=4k\n"
        "iodepth=1\n"
        "rw=write\n"
        "runtime=10s\n"
        "size=4g\n"
        "filename=/dev/nvme0n1\n"
    )
    assert spec.test_files == ()


def test_block_target_keeps_workload_size():
    spec = build_job(GITLAB, Target("block", "/dev/sdb"), Overrides())
    assert spec.options[-2:] == (("size", "16G"), ("filename", "/dev/sdb"))


def test_colons_in_paths_are_escaped():
    assert fio_filename("/mnt/a:b/c") == "/mnt/a\\:b/c"
    spec = build_job(GITLAB, Target("dir", "/mnt/x:y"), Overrides())
    assert spec.job_text.endswith("filename=/mnt/x\\:y/storbench.testfile\n")
    assert spec.test_files == ("/mnt/x:y/storbench.testfile",)  # the real path, for removal


@pytest.mark.parametrize("path", ["/mnt/a;b", "/mnt/a#b", "/mnt/a\nb", "/mnt/$HOME", "/mnt/a\\b", " /mnt", ""])
def test_paths_fio_cannot_carry_are_refused(path):
    with pytest.raises(TargetError):
        build_job(GITLAB, Target("dir", path), Overrides())


def test_auto_ioengine_is_replaced_in_place():
    spec = build_job(SEQ_READ, Target("dir", "/d"), Overrides(size="16m", runtime="1"), ioengine="libaio")
    assert spec.job_text == (
        "[seq-read]\n"
        "rw=read\n"
        "bs=4k\n"
        "iodepth=1\n"
        "numjobs=1\n"
        "ioengine=libaio\n"
        "direct=1\n"
        "gtod_reduce=1\n"
        "runtime=1\n"
        "time_based=1\n"
        "size=16m\n"
        "filename=/d/storbench.testfile\n"
    )


def test_auto_ioengine_needs_the_probed_engine():
    with pytest.raises(ValueError, match="ioengine=auto"):
        build_job(SEQ_READ, Target("dir", "/d"), Overrides())
    with pytest.raises(ValueError, match="invalid ioengine"):
        build_job(SEQ_READ, Target("dir", "/d"), Overrides(), ioengine="libaio\nfilename=/dev/sda")


def test_ioengine_argument_ignored_for_named_engines():
    assert ("ioengine", "libaio") in build_job(GITLAB, Target("dir", "/d"), Overrides(), ioengine="io_uring").options


def test_extra_options_replace_or_append():
    spec = build_job(GITLAB, Target("dir", "/d"), Overrides(extra=(("iodepth", "32"), ("ramp_time", "5"), ("norandommap", None))))
    assert spec.options == (
        ("randrepeat", "1"), ("ioengine", "libaio"), ("direct", "1"), ("gtod_reduce", "1"), ("bs", "4k"),
        ("iodepth", "32"), ("rw", "randrw"), ("rwmixread", "75"), ("size", "16G"), ("ramp_time", "5"),
        ("norandommap", None), ("filename", "/d/storbench.testfile"),
    )  # fmt: skip
    assert "\nnorandommap\n" in spec.job_text


def test_runtime_alias_is_replaced():
    w = Workload("w", "", (("rw", "read"), ("timeout", "60")))
    assert build_job(w, Target("dir", "/d"), Overrides(runtime="5")).options[1] == ("timeout", "5")


def test_custom_test_file_name():
    spec = build_job(GITLAB, Target("dir", "/d"), Overrides(), test_file_name="other.dat")
    assert spec.test_files == ("/d/other.dat",)
    with pytest.raises(ValueError):
        build_job(GITLAB, Target("dir", "/d"), Overrides(), test_file_name="../etc/passwd")


def test_bad_override_values_are_usage_errors():
    with pytest.raises(UsageError, match="invalid size 'huge'"):
        build_job(GITLAB, Target("dir", "/d"), Overrides(size="huge"))
    with pytest.raises(UsageError, match="invalid duration 'long'"):
        build_job(GITLAB, Target("dir", "/d"), Overrides(runtime="long"))


def test_deterministic():
    a = build_job(APP, Target("dir", "/d"), Overrides(size="1g", runtime="3"))
    b = build_job(APP, Target("dir", "/d"), Overrides(size="1g", runtime="3"))
    assert a == b


def test_render_job_text():
    assert render_job_text("x", (("rw", "read"), ("time_based", None))) == "[x]\nrw=read\ntime_based\n"


@pytest.mark.parametrize(
    "options",
    [
        (("rw", "read\nfilename=/dev/sda"),),
        (("rw", "read;x"),),
        (("rw", "[global]"),),
        (("bs=4k", "8k"),),
        (("rw\n[evil]", "read"),),
        (("rw", "${HOME}"),),
    ],
)
def test_render_refuses_injection(options):
    with pytest.raises(SuiteError):
        render_job_text("x", options)


@pytest.mark.parametrize("name", ["global", "x]\n[y", "", "UPPER"])
def test_render_refuses_bad_section_names(name):
    with pytest.raises(SuiteError):
        render_job_text(name, (("rw", "read"),))


def test_workload_may_not_carry_where_options():
    w = Workload("w", "", (("rw", "read"), ("filename", "/dev/sda")))
    with pytest.raises(SuiteError, match="storbench"):
        build_job(w, Target("dir", "/d"), Overrides())
    with pytest.raises(SuiteError, match="storbench"):
        build_job(GITLAB, Target("dir", "/d"), Overrides(extra=(("directory", "/etc"),)))


def test_unknown_target_kind():
    with pytest.raises(ValueError):
        build_job(GITLAB, Target("smb", "/d"), Overrides())


# --------------------------------------------------------------------------- real fio


@needs_fio
def test_probe_ioengine(tmp_path):
    engine = probe_ioengine(FIO, str(tmp_path))
    assert engine in AUTO_ENGINES
    assert os.listdir(tmp_path) == []  # the probe's file is gone


def test_probe_ioengine_without_fio(tmp_path):
    with pytest.raises(FioMissingError):
        probe_ioengine(str(tmp_path / "no-fio"), str(tmp_path))
    assert os.listdir(tmp_path) == []


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> str:
    if FIO is None:
        pytest.skip("fio is not installed")
    return probe_ioengine(FIO, str(tmp_path_factory.mktemp("probe")))


@needs_fio
@pytest.mark.parametrize("name", sorted(n for n, w in builtin_catalog().workloads.items() if w.is_fio))
def test_fio_accepts_every_builtin_job(name, engine, tmp_path):
    """fio --parse-only reads each built-in job exactly as generated, without a warning."""
    spec = build_job(builtin_catalog().workload(name), Target("dir", str(tmp_path)), Overrides(size="16m", runtime="1"), ioengine=engine)
    job = tmp_path / "job.fio"
    job.write_text(spec.job_text)
    proc = subprocess.run([FIO, "--parse-only", "--warnings-fatal", str(job)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fio:" not in proc.stderr, proc.stderr


def _run(job_text: str, job: Path) -> dict:
    job.write_text(job_text)
    proc = subprocess.run([FIO, "--output-format=json", str(job)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout[proc.stdout.index("{") :])


@needs_fio
@pytest.mark.slow
def test_quick_suite_runs_for_real_on_one_shared_file(engine, tmp_path):
    """Every workload of the default suite runs with fio as generated (8 MiB, 300 ms each) on one test file."""
    target_dir = tmp_path / "tgt"
    target_dir.mkdir()
    files = set()
    for workload in builtin_catalog().suite("quick").workloads:
        spec = build_job(workload, Target("dir", str(target_dir)), Overrides(size="8m", runtime="300ms"), ioengine=engine)
        result = _run(spec.job_text, tmp_path / "job.fio")
        job = result["jobs"][0]
        assert job["error"] == 0
        assert job["jobname"] == workload.name
        assert job["job options"]["filename"] == str(target_dir / "storbench.testfile")
        files.update(spec.test_files)
    assert files == {str(target_dir / "storbench.testfile")}
    assert os.listdir(target_dir) == ["storbench.testfile"]
    assert (target_dir / "storbench.testfile").stat().st_size == 8 * 1024 * 1024


@needs_fio
def test_colon_in_directory_reaches_fio_as_one_file(tmp_path):
    target_dir = tmp_path / "a:b"
    target_dir.mkdir()
    w = Workload("w", "", (("rw", "read"), ("bs", "4k"), ("ioengine", "psync")))
    spec = build_job(w, Target("dir", str(target_dir)), Overrides(size="64k"))
    result = _run(spec.job_text, tmp_path / "job.fio")
    assert result["jobs"][0]["error"] == 0
    assert os.listdir(target_dir) == ["storbench.testfile"]


@needs_fio
def test_time_based_true_maps_to_a_value_fio_honours(tmp_path):
    """time_based = true/false become 1/0; fio honours both (0 runs untimed)."""
    w_on = Workload("w", "", (("rw", "read"), ("bs", "4k"), ("ioengine", "psync"), ("runtime", "1"), ("time_based", "1")))
    w_off = Workload("w", "", (("rw", "read"), ("bs", "4k"), ("ioengine", "psync"), ("runtime", "1"), ("time_based", "0")))
    on = _run(build_job(w_on, Target("dir", str(tmp_path)), Overrides(size="64k")).job_text, tmp_path / "job.fio")
    off = _run(build_job(w_off, Target("dir", str(tmp_path)), Overrides(size="64k")).job_text, tmp_path / "job.fio")
    assert on["jobs"][0]["read"]["io_bytes"] > 64 * 1024  # kept going over the 64k file for 1 s
    assert off["jobs"][0]["read"]["io_bytes"] == 64 * 1024  # one pass
