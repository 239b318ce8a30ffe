"""A user's regular file given as ``--target`` is read as it is: never grown, rewritten or unlinked
unless named with ``--destroy-data`` (real fio, every workload of every built-in suite).

The file's checksum, size and inode are taken before and after each run.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from storbench.suites import builtin_catalog
from storbench.targets.guard import workload_writes

from conftest import needs_fio

pytestmark = needs_fio

FILE_BYTES = 2 * 1024 * 1024


def _fingerprint(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_ino


def _precious(tmp_path: Path, nbytes: int = FILE_BYTES) -> Path:
    path = tmp_path / "precious.bin"
    path.write_bytes(os.urandom(nbytes))
    return path


def _one_error(res) -> str:
    assert "Traceback" not in res.err, res.err
    lines = [ln for ln in res.err.splitlines() if ln.startswith("storbench: ")]
    assert len(lines) == 1, res.err
    return lines[0]


def _suites() -> list[str]:
    return sorted(builtin_catalog().suites)


def load_builtin(name: str):
    return builtin_catalog().suite(name)


@pytest.mark.parametrize("suite_name", _suites())
def test_every_read_workload_leaves_the_file_as_it_was(cli, tmp_path, suite_name):
    suite = load_builtin(suite_name)
    # an application load needs a directory and is refused on a file (tests/loads/test_load_runs.py)
    reads = [w.name for w in suite.workloads if w.is_fio and not workload_writes(w.options)]
    if suite_name == "objects":  # its 16 MiB objects do not fit the 2 MiB file: the 4 KiB to 1 MiB ones
        reads = [name for name in reads if "-16m-" not in name]
    if not reads:
        pytest.skip(f"suite {suite_name} has no read-only workload")
    target = _precious(tmp_path)
    before = _fingerprint(target)
    args = ["run", "--target", str(target), "--runtime", "200ms", "--no-report", "--no-telemetry"]
    for name in reads:
        args += ["--workload", name]
    res = cli(*args)
    assert res.code == 0, res.err
    assert _fingerprint(target) == before
    # the workloads' own sizes (1 GiB, 16 GiB) were capped at the file's and said once
    if any(dict(w.options).get("size") for w in suite.workloads if w.name in reads):
        assert res.err.count("capped at the file's size 2m") == 1, res.err
    assert sorted(os.listdir(tmp_path)) == ["precious.bin", "results.sqlite"]


@pytest.mark.parametrize("suite_name", _suites())
def test_every_writing_workload_is_refused_without_destroy_data(cli, tmp_path, suite_name):
    suite = load_builtin(suite_name)
    writes = [w.name for w in suite.workloads if workload_writes(w.options)]
    if not writes:
        pytest.skip(f"suite {suite_name} has no writing workload")
    target = _precious(tmp_path)
    before = _fingerprint(target)
    for name in writes:
        res = cli("run", "--workload", name, "--target", str(target), "--runtime", "200ms", "--no-report")
        assert res.code == 2, (name, res.err)
        line = _one_error(res)
        assert "[destroy-data]" in line and name in line and f"--destroy-data {target}" in line, line
    assert _fingerprint(target) == before
    assert not (tmp_path / "results.sqlite").exists() or "precious" not in (tmp_path / "results.sqlite").read_bytes().decode("latin-1")


def test_named_file_is_written_in_place_never_grown(cli, tmp_path):
    target = _precious(tmp_path)
    content, size, inode = _fingerprint(target)
    res = cli("run", "--workload", "rnd4k-q1t1-write", "--target", str(target), "--destroy-data", str(target),
              "--runtime", "300ms", "--no-report", "--no-telemetry")  # fmt: skip
    assert res.code == 0, res.err
    after = _fingerprint(target)
    assert after[0] != content  # fio wrote where the user said it may
    assert after[1:] == (size, inode)  # ... inside the file: not grown, not replaced


def test_size_beyond_the_file_is_refused_before_fio(cli, tmp_path):
    target = _precious(tmp_path)
    before = _fingerprint(target)
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), "--size", "32m", "--no-report")
    assert res.code == 2
    line = _one_error(res)
    assert "2.0 MiB (2097152 bytes)" in line and "--size 32m" in line and "never grows" in line, line
    assert _fingerprint(target) == before
    # the run was refused before it began: nothing stored
    assert not (tmp_path / "results.sqlite").exists() or cli("list", "--json").out.strip() in ("[]", "")


def test_prefill_and_precondition_of_a_file_need_destroy_data(cli, tmp_path):
    target = _precious(tmp_path)
    before = _fingerprint(target)
    for flag in ("--prefill", "--precondition"):
        res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), flag, "--no-report")
        assert res.code == 2, res.err
        assert "[destroy-data]" in _one_error(res)
    assert _fingerprint(target) == before


def test_special_and_empty_files_are_refused(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(empty), "--no-report")
    assert res.code == 2 and "empty file" in _one_error(res)
    assert empty.stat().st_size == 0
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", "/proc/version", "--no-report")
    assert res.code == 2 and "on proc, a kernel interface" in _one_error(res)
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", "/dev/null", "--no-report")
    assert res.code == 2 and "neither a directory nor a regular file" in _one_error(res)


def test_a_target_that_fails_the_engine_probes_file_is_one_line(tmp_path, monkeypatch):
    """A share whose server fails (EIO on the probe file, seen through smbnetfs) is a TargetError
    naming the file, never an internal error."""
    import errno

    from storbench.errors import TargetError
    from storbench.run import engines

    def eio(path):
        raise OSError(errno.EIO, "Input/output error", path)

    monkeypatch.setattr(engines, "_engine_works", lambda fio, engine, filename: (True, ""))
    monkeypatch.setattr(engines.os, "unlink", eio)
    with pytest.raises(TargetError, match=r"cannot remove .*/storbench-probe-.*: Input/output error; remove it by hand"):
        engines.probe_ioengine("fio", str(tmp_path))
    monkeypatch.setattr(engines.tempfile, "mkstemp", lambda **kw: eio(kw["dir"]))
    with pytest.raises(TargetError, match=f"cannot create a file in {tmp_path} to find fio's I/O engine: Input/output error"):
        engines.probe_ioengine("fio", str(tmp_path))
