"""What an nfs-ganesha server beside storbench did for the export while fio ran: its own per-export
I/O counters (``GetNFSv3IO`` / ``GetNFSv40IO`` over D-Bus), read before and after the run, beside
fio's figures: how many READs and WRITEs the server served, how many bytes, their mean latency in
the server and their errors.  fio's figure is what the client saw; this is what reached the server
(a client cache answering reads shows as reads fio counted and the server never served).

ganesha keeps the counters per export and protocol version and answers them on its D-Bus
(``org.ganesha.nfsd /org/ganesha/nfsd/ExportMgr org.ganesha.nfsd.exportstats.GetNFSv3IO
uint16:EXPORT_ID``); storbench asks it with ``dbus-send`` on the bus of the ganesha's own
environment (``DBUS_SYSTEM_BUS_ADDRESS``, a private bus in storbench's tests), found as
:func:`storbench.storage.ganesha.local_export` finds the export.

Pure: :class:`IoCounters`, :func:`parse_io_reply` (``dbus-send --print-reply``'s text),
:class:`NfsServerActivity` and :func:`activity_between`.  The edge: :class:`storbench.backend.nfs_server_sampler.GaneshaIoSampler`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class IoCounters:
    """One direction's counters of one export as ganesha keeps them (cumulative since it started)."""

    requested_bytes: int
    transferred_bytes: int
    ops: int
    errors: int
    latency_ns: int  # the sum of every operation's latency in the server


def parse_io_reply(text: str) -> tuple[float, IoCounters, IoCounters]:
    """(the server's time in seconds, read, write) from ``dbus-send --print-reply`` of
    ``GetNFSv3IO``/``GetNFSv40IO``: ``boolean true``, ``string "OK"``, a timestamp struct
    (seconds, nanoseconds), then a struct of six uint64 for reads and one for writes (requested,
    transferred, ops, errors, latency, queue wait).  ValueError naming what was wrong (ganesha's
    own message when it says false: "Export ID not found")."""
    status = re.search(r"^\s*boolean (true|false)\s*$", text, re.M)
    if status is None:
        raise ValueError("not a dbus-send reply of ganesha's exportstats")
    if status.group(1) == "false":
        said = re.search(r'^\s*string "([^"]*)"', text, re.M)
        raise ValueError(f"ganesha says: {said.group(1) if said else 'false'}")
    structs = re.findall(r"struct \{((?:\s*uint64 \d+)+)\s*\}", text)
    numbers = [[int(n) for n in re.findall(r"uint64 (\d+)", s)] for s in structs]
    if len(numbers) < 3 or len(numbers[0]) < 2 or any(len(n) < 5 for n in numbers[1:3]):
        raise ValueError("the reply has no timestamp and read and write counters")
    stamp = numbers[0][0] + numbers[0][1] / 1e9

    def counters(n: list[int]) -> IoCounters:
        return IoCounters(requested_bytes=n[0], transferred_bytes=n[1], ops=n[2], errors=n[3], latency_ns=n[4])

    return stamp, counters(numbers[1]), counters(numbers[2])


@dataclass(frozen=True)
class NfsServerActivity:
    """What ganesha served for one export during one fio run (None: could not be read)."""

    export_id: int
    version: str  # "v3" or "v4.0"
    seconds: float | None = None
    read_ops: int | None = None
    read_bytes: int | None = None
    read_latency_ns: float | None = None  # the mean in the server
    write_ops: int | None = None
    write_bytes: int | None = None
    write_latency_ns: float | None = None
    errors: int | None = None
    problems: tuple[str, ...] = ()


def activity_between(export_id: int, version: str, before: tuple[float, IoCounters, IoCounters],
                     after: tuple[float, IoCounters, IoCounters]) -> NfsServerActivity:  # fmt: skip
    """The counters' growth from ``before`` to ``after`` (parse_io_reply's), means per operation. Pure."""
    (t0, r0, w0), (t1, r1, w1) = before, after

    def mean(lat: int, ops: int) -> float | None:
        return lat / ops if ops > 0 else None

    reads, writes = r1.ops - r0.ops, w1.ops - w0.ops
    return NfsServerActivity(
        export_id=export_id, version=version, seconds=t1 - t0,
        read_ops=reads, read_bytes=r1.transferred_bytes - r0.transferred_bytes, read_latency_ns=mean(r1.latency_ns - r0.latency_ns, reads),
        write_ops=writes, write_bytes=w1.transferred_bytes - w0.transferred_bytes,
        write_latency_ns=mean(w1.latency_ns - w0.latency_ns, writes),
        errors=(r1.errors - r0.errors) + (w1.errors - w0.errors),
    )  # fmt: skip


def format_nfs_server_activity(a: NfsServerActivity) -> list[str]:
    """``NFS server (nfs-ganesha, export 1, v3) during the run: 5,120 READs, 20.0 MiB, mean 0.12 ms in the server; ...``."""
    from ..units import fmt_ns, format_bytes

    if a.read_ops is None:
        return [f"NFS server (nfs-ganesha, export {a.export_id}): not read" + (f" ({a.problems[-1]})" if a.problems else "")]

    def part(word: str, ops: int | None, size: int | None, lat: float | None) -> str:
        return f"{ops or 0:,} {word}s, {format_bytes(size or 0)}" + (f", mean {fmt_ns(lat)} in the server" if lat is not None else "")

    line = (f"NFS server (nfs-ganesha, export {a.export_id}, {a.version}) during the run: "
            f"{part('READ', a.read_ops, a.read_bytes, a.read_latency_ns)}; {part('WRITE', a.write_ops, a.write_bytes, a.write_latency_ns)}")  # fmt: skip
    if a.errors:
        line += f"; {a.errors} errors"
    return [line]
