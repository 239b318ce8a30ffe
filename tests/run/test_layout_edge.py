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
