"""NFS target URIs checked before anything runs (pure): one line naming the form."""

from __future__ import annotations

import pytest

from storbench.errors import TargetError
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target, Workload
from storbench.targets.nfs import bridge_socket, check_nfs_uri


def test_uri_parts():
    assert check_nfs_uri("nfs://nas.lan/export/bench/") == ("nas.lan", "/export/bench/")


@pytest.mark.parametrize(("spec", "words"), [
    ("nfs://nas.lan/export/disk.img", "is not a directory of an export: give nfs://HOST/EXPORT/ ending in '/'"),
    ("nfs://nas.lan:2049/export/", "names a port: qemu's nfs driver finds the server's ports through its portmapper"),
    ("nfs://nas.lan/export/?version=4", "has options (?version=4)"),
    ("nfs://nas.lan/", "is not a directory of an export"),
    ("nfs://nas lan/export/", "holds a character a fio job file cannot carry"),
    ("nfs:///export/", "is not nfs://HOST/EXPORT/"),
])  # fmt: skip
def test_bad_uris_are_one_line(spec, words):
    with pytest.raises(TargetError) as exc:
        check_nfs_uri(spec)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_the_job_reaches_the_test_file_through_the_bridge():
    uri = "nfs://127.0.0.1/export/"
    w = Workload(name="r", description="", options=(("rw", "randread"), ("ioengine", "libaio"), ("bs", "4k")))
    job = build_job(w, Target(kind="nfs", path=uri), Overrides(default_size="64m"))
    opts = dict(job.options)
    assert opts["ioengine"] == "nbd" and opts["uri"] == f"nbd+unix:///?socket={bridge_socket(uri)}" and opts["size"] == "64m"
    assert f"# storbench: {uri}storbench.testfile through qemu-nbd (a userspace bridge)" in job.job_text
