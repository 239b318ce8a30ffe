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
    ("nfs://nas.lan/disk.img", "names no export: give nfs://HOST/EXPORT/ ending in '/'"),
    ("nfs://nas.lan:2049/export/", "names a port: qemu's nfs driver finds the server's ports through its portmapper"),
    ("nfs://nas.lan/export/?version=4", "NFSv4 needs client=fio (qemu's nfs driver speaks NFSv3 only)"),
    ("nfs://nas.lan/export/?client=kernel", "client='kernel' is not an option storbench knows"),
    ("nfs://nas.lan/export/?client=fio&version=2", "version='2' is not an option storbench knows"),
    ("nfs://nas.lan/export/?rsize=1m", "rsize='1m' is not an option storbench knows"),
    ("nfs://nas.lan/", "names no export"),
    ("nfs://nas lan/export/", "holds a character a fio job file cannot carry"),
    ("nfs:///export/", "is not nfs://HOST/EXPORT/"),
])  # fmt: skip
def test_bad_uris_are_one_line(spec, words):
    with pytest.raises(TargetError) as exc:
        check_nfs_uri(spec)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_an_existing_file_of_an_export_is_read_as_it_is_through_either_client():
    """nfs://HOST/EXPORT/PATH/FILE: the file itself (no test file made), its size capping every
    workload; fio's own engine given the file's directory and name."""
    from storbench.targets.nfs import names_file, test_file_uri

    uri = "nfs://127.0.0.1/export/vm/disk.img"
    assert check_nfs_uri(uri) == ("127.0.0.1", "/export/vm/disk.img") and names_file(uri) and not names_file("nfs://h/e/")
    assert test_file_uri(uri + "?client=fio") == uri
    w = Workload(name="r", description="", options=(("rw", "randread"), ("bs", "4k"), ("size", "1g")))
    params = (("size", str(48 << 20)), ("existing_file", "1"), ("writes", "0"))
    bridged = build_job(w, Target(kind="nfs", path=uri, params=params), Overrides())
    assert dict(bridged.options)["size"] == "48m" and "# storbench: size=1g capped at the file's size 48m" in bridged.job_text
    own = build_job(w, Target(kind="nfs-fio", path=uri + "?client=fio", params=params), Overrides())
    opts = dict(own.options)
    assert (opts["nfs_url"], opts["filename"], opts["size"]) == ("nfs://127.0.0.1/export/vm", "disk.img", "48m")


def test_the_job_reaches_the_test_file_through_the_bridge():
    uri = "nfs://127.0.0.1/export/"
    w = Workload(name="r", description="", options=(("rw", "randread"), ("ioengine", "libaio"), ("bs", "4k")))
    job = build_job(w, Target(kind="nfs", path=uri), Overrides(default_size="64m"))
    opts = dict(job.options)
    assert opts["ioengine"] == "nbd" and opts["uri"] == f"nbd+unix:///?socket={bridge_socket(uri)}" and opts["size"] == "64m"
    assert f"# storbench: {uri}storbench.testfile through qemu-nbd (a userspace bridge)" in job.job_text


def test_client_fio_is_fios_own_nfs_engine_on_the_test_file():
    from storbench.targets.nfs import export_uri, nfs_client, nfs_version, test_file_uri

    uri = "nfs://127.0.0.1/export/bench/?client=fio"
    assert check_nfs_uri(uri) == ("127.0.0.1", "/export/bench/")
    assert (nfs_client(uri), nfs_version(uri), export_uri(uri)) == ("fio", 3, "nfs://127.0.0.1/export/bench/")
    assert test_file_uri(uri) == "nfs://127.0.0.1/export/bench/storbench.testfile"
    assert (nfs_client("nfs://h/e/"), nfs_version("nfs://h/e/?client=fio&version=4")) == ("qemu-nbd", 4)
    w = Workload(name="r", description="", options=(("rw", "randread"), ("ioengine", "libaio"), ("bs", "4k")))
    job = build_job(w, Target(kind="nfs-fio", path=uri), Overrides(default_size="64m"))
    opts = dict(job.options)
    assert opts["ioengine"].startswith("external:") and opts["ioengine"].endswith("/fio-nfs.so")
    assert (opts["nfs_url"], opts["filename"], opts["size"]) == ("nfs://127.0.0.1/export/bench", "storbench.testfile", "64m")
    assert "uri" not in opts and "# storbench: nfs://127.0.0.1/export/bench/storbench.testfile through fio's own nfs engine (NFSv3)" in job.job_text
    # a flush at the end it cannot do is dropped, said in the job (the quick suite's end_fsync=1)
    ended = Workload(name="e", description="", options=(("rw", "write"), ("end_fsync", "1"), ("bs", "1m")))
    job = build_job(ended, Target(kind="nfs-fio", path=uri), Overrides(default_size="64m"))
    assert "end_fsync" not in dict(job.options)
    assert "# storbench: end_fsync=1 dropped: fio's nfs engine cannot sync; the figures leave out a final flush" in job.job_text
    v4 = build_job(w, Target(kind="nfs-fio", path="nfs://127.0.0.1/export/?client=fio&version=4"), Overrides(default_size="64m"))
    assert dict(v4.options)["nfs_url"] == "nfs://127.0.0.1/export?version=4"


@pytest.mark.parametrize(("uri", "options", "words"), [
    ("nfs://127.0.0.1/export/?client=fio", (("rw", "randwrite"), ("fsync", "1")),
     "workload 'w' sets fsync, but fio's nfs engine cannot sync (it answers 'unhandled io 3'); run it on nfs://127.0.0.1/export/ without client=fio"),
    ("nfs://127.0.0.1/export/?client=fio", (("rw", "write"), ("fdatasync", "8")), "workload 'w' sets fdatasync"),
    ("nfs://127.0.0.1/export/?client=fio&version=4", (("rw", "randwrite"),),
     "workload 'w' writes, but libnfs 4.0's NFSv4 WRITEs fail ('Failed to encode COMPOUND4args'); use version=3 for writes"),
])  # fmt: skip
def test_what_fios_nfs_engine_cannot_do_is_refused_before_anything_runs(uri, options, words):
    from storbench.targets import resolve

    with pytest.raises(TargetError) as exc:
        resolve(uri, workloads=[Workload(name="w", description="", options=options)])
    assert words in str(exc.value) and "\n" not in str(exc.value)
