"""What the nfs-ganesha beside storbench served for an NFS target's export: its own per-export
counters (GetNFSv3IO over D-Bus) read before and after the run (storbench.backend.nfs_server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.nfs_server import (
    IoCounters,
    NfsServerActivity,
    format_nfs_server_activity,
    parse_io_reply,
)
from storbench.backend.nfs_server_sampler import GaneshaIoSampler
from storbench.storage.ganesha import SYSTEM_BUS, io_source

DATA = Path(__file__).parent.parent / "data" / "storage"
REPLY = (DATA / "ganesha-4.3-dbus-GetNFSv3IO.txt").read_text()


def test_the_reply_of_ganesha_4_3():
    stamp, read, write = parse_io_reply(REPLY)
    assert stamp == pytest.approx(1796407195.521646945)
    assert read == IoCounters(requested_bytes=1463873536, transferred_bytes=1463873536, ops=357390, errors=0, latency_ns=2016274851)
    assert write == IoCounters(requested_bytes=1197305856, transferred_bytes=1197305856, ops=292311, errors=0, latency_ns=7696760504)


def test_refusals_and_strangers_are_one_line():
    with pytest.raises(ValueError, match="ganesha says: Export ID not found"):
        parse_io_reply('method return time=1 sender=:1.0\n   boolean false\n   string "Export ID not found"\n')
    with pytest.raises(ValueError, match="not a dbus-send reply"):
        parse_io_reply("Error org.freedesktop.DBus.Error.ServiceUnknown: The name org.ganesha.nfsd was not provided")
    with pytest.raises(ValueError, match="no timestamp and read and write counters"):
        parse_io_reply('   boolean true\n   string "OK"\n   struct {\n      uint64 1\n      uint64 2\n   }\n')


def test_the_run_is_the_counters_growth_and_reads_back_from_the_store():
    """Two replies around a run (the recorded one, then it grown by 2,560 READs of 4 KiB): what the
    server served, its mean latency, said as show says it, and stored and read back whole."""
    grown = REPLY.replace("uint64 1796407195", "uint64 1796407197").replace("uint64 357390", "uint64 359950")
    grown = grown.replace("uint64 1463873536\n      uint64 1463873536", f"uint64 {1463873536 + 2560 * 4096}\n      uint64 {1463873536 + 2560 * 4096}")
    grown = grown.replace("uint64 2016274851", f"uint64 {2016274851 + 2560 * 150_000}")
    replies = iter([REPLY, grown])
    sampler = GaneshaIoSampler(1, "unix:path=/x", ask=lambda method, export_id: next(replies))
    with sampler:
        pass
    got = sampler.activity().nfs_server
    assert got == NfsServerActivity(export_id=1, version="v3", seconds=pytest.approx(2.0), read_ops=2560, read_bytes=2560 * 4096,
                                    read_latency_ns=150_000.0, write_ops=0, write_bytes=0, write_latency_ns=None, errors=0)  # fmt: skip
    assert format_nfs_server_activity(got) == [
        "NFS server (nfs-ganesha, export 1, v3) during the run: 2,560 READs, 10.0 MiB, mean 150.0 µs in the server; 0 WRITEs, 0 B"]
    stored = BackendActivity(nfs_server=got)
    assert backend_from_dict(json.loads(json.dumps(backend_to_dict(stored)))) == stored


def test_a_server_that_does_not_answer_is_said_not_raised():
    def refuse(method: str, export_id: int) -> str:
        raise OSError("dbus-send did not answer within 10 s")

    sampler = GaneshaIoSampler(1, "unix:path=/x", version="v4.0", ask=refuse)
    with sampler:
        pass
    got = sampler.activity().nfs_server
    assert got.read_ops is None and got.problems == ("ganesha's GetNFSv40IO of export 1: dbus-send did not answer within 10 s",)
    assert format_nfs_server_activity(got) == ["NFS server (nfs-ganesha, export 1): not read (ganesha's GetNFSv40IO of export 1: dbus-send did not answer within 10 s)"]


def test_the_bus_of_the_ganesha_beside_storbench(tmp_path):
    proc = tmp_path / "proc"
    conf = tmp_path / "ganesha.conf"
    conf.write_text((DATA / "ganesha-4.3-conf-tests-servers.conf").read_text())
    (proc / "7" / "ns").mkdir(parents=True)
    (proc / "7" / "cmdline").write_bytes(b"ganesha.nfsd\0-f\0" + str(conf).encode() + b"\0")
    (proc / "7" / "environ").write_bytes(b"PATH=/bin\0DBUS_SYSTEM_BUS_ADDRESS=unix:path=/srv/lab/nfs/dbus.sock\0")
    (proc / "7" / "ns" / "net").symlink_to("net:[1]")
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "self" / "ns" / "net").symlink_to("net:[1]")
    assert io_source("/export/", str(proc)) == (1, "unix:path=/srv/lab/nfs/dbus.sock")
    (proc / "7" / "environ").write_bytes(b"PATH=/bin\0")
    assert io_source("/export/sub/", str(proc)) == (1, SYSTEM_BUS)
    assert io_source("/elsewhere/", str(proc)) is None
