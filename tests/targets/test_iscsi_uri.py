"""iSCSI target URIs checked before anything runs (pure): one line naming the form."""

from __future__ import annotations

import pytest

from storbench.errors import TargetError
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target, Workload
from storbench.targets.iscsi import bridge_socket, check_iscsi_uri


def test_uri_parts():
    assert check_iscsi_uri("iscsi://192.0.2.7/iqn.2024-01.lab.example:disk1/1") == ("192.0.2.7", 3260, "iqn.2024-01.lab.example:disk1", 1)
    assert check_iscsi_uri("iscsi://nas.lan:3261/iqn.2005-10.org.freenas.ctl:pool/0")[1:] == (3261, "iqn.2005-10.org.freenas.ctl:pool", 0)


@pytest.mark.parametrize("spec", [
    "iscsi://host/disk1/1",                     # not an IQN, EUI or NAA name
    "iscsi://host/iqn.2024-01.lab:disk1",       # no LUN
    "iscsi://host:99999/iqn.2024-01.lab:d/1",   # no such port
    "iscsi://host/iqn.2024-01.lab:d/1;rw=write",
    "iscsi:///iqn.2024-01.lab:d/1",
    "iscsi://host/iqn.2024-01.lab:d/1?client=kernel",  # fio or qemu-nbd
    "iscsi://host/iqn.2024-01.lab:d/1?version=4",
])  # fmt: skip
def test_bad_uris_are_one_line(spec):
    with pytest.raises(TargetError) as exc:
        check_iscsi_uri(spec)
    assert "\n" not in str(exc.value) and repr(spec) in str(exc.value)


def test_the_job_reaches_the_lun_through_the_bridge_socket():
    uri = "iscsi://127.0.0.1:3260/iqn.2024-01.lab.example:disk1/1"
    w = Workload(name="r", description="", options=(("rw", "randread"), ("ioengine", "libaio"), ("bs", "4k")))
    job = build_job(w, Target(kind="iscsi", path=uri), Overrides())
    opts = dict(job.options)
    assert opts["ioengine"] == "nbd" and opts["uri"] == f"nbd+unix:///?socket={bridge_socket(uri)}"
    assert "filename" not in opts and f"# storbench: {uri} through qemu-nbd (a userspace bridge)" in job.job_text


def test_client_fio_is_fios_own_libiscsi_engine_with_the_uris_colons_escaped():
    from storbench.targets.iscsi import iscsi_client, lun_uri

    uri = "iscsi://127.0.0.1:3261/iqn.2024-01.lab.example:disk1/1?client=fio"
    assert check_iscsi_uri(uri) == ("127.0.0.1", 3261, "iqn.2024-01.lab.example:disk1", 1)
    assert (iscsi_client(uri), lun_uri(uri)) == ("fio", "iscsi://127.0.0.1:3261/iqn.2024-01.lab.example:disk1/1")
    assert iscsi_client(lun_uri(uri)) == iscsi_client(lun_uri(uri) + "?client=qemu-nbd") == "qemu-nbd"
    w = Workload(name="r", description="", options=(("rw", "randread"), ("ioengine", "libaio"), ("iodepth", "32")))
    job = build_job(w, Target(kind="iscsi-fio", path=uri), Overrides())
    opts = dict(job.options)
    assert opts["ioengine"].startswith("external:") and opts["ioengine"].endswith("/fio-libiscsi.so")
    assert opts["filename"] == r"iscsi\://127.0.0.1\:3261/iqn.2024-01.lab.example\:disk1/1" and "uri" not in opts
    assert job.job_text.splitlines()[0].startswith("# storbench: ioengine=libaio replaced by external:")
    assert "# storbench: iscsi://127.0.0.1:3261/iqn.2024-01.lab.example:disk1/1 through fio's own libiscsi engine" in job.job_text


def test_the_engine_is_looked_for_where_make_install_builds_it_or_where_the_environment_says(tmp_path):
    from storbench.targets.base import ENGINES_DIR, external_engine

    assert ENGINES_DIR.endswith("/lib/storbench/fio-engines")
    assert external_engine("libiscsi", {"STORBENCH_FIO_ENGINES": str(tmp_path)}) is None
    (tmp_path / "fio-libiscsi.so").write_bytes(b"\x7fELF")
    assert external_engine("libiscsi", {"STORBENCH_FIO_ENGINES": str(tmp_path)}) == str(tmp_path / "fio-libiscsi.so")


def test_the_fio_engine_kinds_find_the_engine_when_asked(tmp_path, monkeypatch):
    """``STORBENCH_FIO_ENGINES`` as it is when a job is built, not when storbench was imported:
    the libiscsi and nfs kinds name the engine file of the directory it gives then."""
    from storbench.model import Target
    from storbench.targets import kind_of

    for name in ("fio-libiscsi.so", "fio-nfs.so"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv("STORBENCH_FIO_ENGINES", str(tmp_path))
    iscsi = kind_of(Target(kind="iscsi-fio", path="iscsi://127.0.0.1/iqn.2026-12.lab:x/1?client=fio"))
    nfs = kind_of(Target(kind="nfs-fio", path="nfs://127.0.0.1/export/?client=fio"))
    assert (iscsi.engine, nfs.engine) == (f"external:{tmp_path / 'fio-libiscsi.so'}", f"external:{tmp_path / 'fio-nfs.so'}")
    monkeypatch.setenv("STORBENCH_FIO_ENGINES", str(tmp_path / "none"))
    assert iscsi.engine == "external:fio-libiscsi.so"  # not built there: the bare name (the run refuses it in one line first)
