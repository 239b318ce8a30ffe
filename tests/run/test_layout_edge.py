"""storbench.run.layout and run.space on a filesystem that answers oddly: every error is an answer
(the caller says it in one line), never an internal error. A real directory, the error injected
where a struggling smbnetfs gave it (ENOENT from ftruncate, seen once beside another test)."""

from __future__ import annotations

import errno
import os

import pytest

from storbench.errors import TargetError
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target, Workload
from storbench.run import layout, space


def test_a_truncate_refused_with_any_error_is_a_refusal(tmp_path, monkeypatch):
    assert layout.grows_by_truncate(str(tmp_path)) == (True, None)  # a local directory grows files
    for code in (errno.EIO, errno.ENOENT, errno.EACCES):
        def refuse(fd, size, code=code):
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(layout.os, "ftruncate", refuse)
        assert layout.grows_by_truncate(str(tmp_path)) == (False, os.strerror(code))
        assert os.listdir(tmp_path) == []  # the probe file is removed however it ended


def test_free_space_of_a_directory_that_does_not_answer_is_left_to_fio(tmp_path, monkeypatch):
    target = tmp_path / "t"
    target.mkdir()
    spec = build_job(Workload("w", "", (("rw", "write"), ("bs", "4k"))), Target(kind="dir", path=str(target)), Overrides(size="1g"))
    real_statvfs = os.statvfs

    def tiny(path):  # the filesystem has 1 MiB free: a 1 GiB test file does not fit
        st = real_statvfs(path)
        return os.statvfs_result((st.f_bsize, 4096, st.f_blocks, 256, 256, *st[5:]))

    monkeypatch.setattr(space.os, "statvfs", tiny)
    with pytest.raises(TargetError, match=r"free but workload 'w' needs a 1\.0 GiB test file"):
        space.check_free_space([spec])

    def gone(path):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    monkeypatch.setattr(space.os, "statvfs", gone)
    space.check_free_space([spec])  # not judged: fio will meet the directory and say so


def test_a_probe_a_share_refuses_to_unlink_once_is_removed_on_a_later_try(tmp_path, monkeypatch):
    """smbnetfs beside other load refused the truncate probe's unlink once and the probe stayed on
    the share (a clean run's seed 003): the unlink is tried again, a bounded number of times."""
    import os

    from storbench.run import layout

    probe = tmp_path / layout.PROBE_NAME
    probe.write_bytes(b"x")
    real, calls = os.unlink, []

    def flaky(path, *a, **kw):
        calls.append(path)
        if len(calls) < 3:
            raise OSError(5, "Input/output error")
        return real(path, *a, **kw)

    monkeypatch.setattr(layout.os, "unlink", flaky)
    assert layout.remove_probe(str(probe), pause_s=0) and not probe.exists() and len(calls) == 3
    probe.write_bytes(b"x")
    calls.clear()
    monkeypatch.setattr(layout.os, "unlink", lambda path, *a, **kw: (_ for _ in ()).throw(OSError(2, "No such file or directory")))
    assert not layout.remove_probe(str(probe), tries=4, pause_s=0) and probe.exists()  # a false ENOENT is not believed
