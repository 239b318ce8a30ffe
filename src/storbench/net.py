"""Pure: the network's ceiling (iperf3) and what it says about a network share's numbers.

``storbench net SERVER`` runs iperf3 against an iperf3 server (``storbench net --serve``
or ``iperf3 -s`` on the file server) and stores what the network carries, per
direction and stream count.  This module builds the iperf3 argument lists, reads
iperf3's ``-J`` output and judges share results against the stored ceiling; the
command (:mod:`storbench.commands.net`) runs the processes and the store keeps rows.

Directions are named from the client's side, like a share's I/O:

* ``to-server`` -- iperf3's default (the client sends): what writes to a share can reach;
* ``from-server`` -- ``-R`` (the server sends): what reads from a share can reach.

The rate is ``end.sum_received.bits_per_second``: what arrived at the receiver
(``sum_sent`` counts bytes the sender queued, including what was still in flight).

iperf3 3.12 exits with status 0 even when it fails (connection refused, "the server
is busy running a test"); the failure is the ``"error"`` key of its JSON, which
:func:`parse_iperf3_json` turns into a :class:`NetError`.

The share-ceiling check (:func:`share_ceiling_findings`): a network filesystem
cannot deliver data faster than the network under it.  Throughput above the
ceiling (beyond :data:`ABOVE_MARGIN`) means the client's cache answered, so the
number is invalid; within :data:`NEAR_SHARE` of it, the network was the bottleneck
and the storage behind the share was never measured at its limit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONObject, JSONValue

from .errors import StorbenchError
from .model import Finding, FioResult

DEFAULT_IPERF3_PORT = 5201
DIRECTIONS: tuple[str, ...] = ("to-server", "from-server")
#: Filesystems whose data crosses a network (a copy of storage.NETWORK_FSTYPES plus
#: spellings seen in /proc/mounts; kept here so this module stays pure).
NETWORK_FSTYPES: frozenset[str] = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "sshfs", "9p",
        "ceph", "fuse.ceph", "glusterfs", "fuse.glusterfs", "afs", "ncpfs", "lustre",
    }
)
#: More than the ceiling by this margin (iperf3's own run-to-run noise) is impossible.
ABOVE_MARGIN = 0.05
#: At or above this share of the ceiling, the network was the bottleneck.
NEAR_SHARE = 0.90


class NetError(StorbenchError):
    """iperf3 failed or printed something that is not its JSON result."""


@dataclass(frozen=True)
class NetMeasurement:
    """One iperf3 run."""

    server: str
    port: int | None
    streams: int
    direction: str  # one of DIRECTIONS
    bits_per_second: float  # received
    sent_bits_per_second: float | None = None
    retransmits: int | None = None
    seconds: float | None = None
    iperf3_version: str | None = None


@dataclass(frozen=True)
class NetCeiling:
    """The measurements of the latest ``storbench net`` run against one server."""

    server: str
    created_at: str
    measurements: tuple[NetMeasurement, ...]

    def best(self, direction: str | None = None) -> float | None:
        """The highest rate (any stream count), in one direction or in either."""
        rates = [m.bits_per_second for m in self.measurements if direction is None or m.direction == direction]
        return max(rates) if rates else None


def iperf3_argv(
    server: str, port: int = DEFAULT_IPERF3_PORT, seconds: int = 5, streams: int = 1, reverse: bool = False,
    iperf3: str = "iperf3",
) -> list[str]:
    """``iperf3 -c SERVER -p P -J -t S [-P N] [-R]`` as an argument list (never a shell)."""
    argv = [iperf3, "-c", server, "-p", str(port), "-J", "-t", str(seconds)]
    if streams > 1:
        argv += ["-P", str(streams)]
    if reverse:
        argv.append("-R")
    return argv


def plan_measurements(parallel: int) -> list[tuple[int, bool]]:
    """(streams, reverse) of every iperf3 run: one stream each way, then ``parallel`` each way."""
    plan = [(1, False), (1, True)]
    if parallel > 1:
        plan += [(parallel, False), (parallel, True)]
    return plan


def _num(value: JSONValue) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def parse_iperf3_json(text: str, server: str | None = None, port: int | None = None) -> NetMeasurement:
    """iperf3 ``-J`` output -> :class:`NetMeasurement`; :class:`NetError` with one line otherwise."""
    start = text.find("{")
    if start < 0:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise NetError(f"iperf3 printed no JSON ({first[:80]!r})" if first else "iperf3 printed nothing")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        raise NetError(f"iperf3's JSON is malformed: {exc}") from None
    if not isinstance(doc, dict):
        raise NetError("iperf3's JSON is not an object")
    if doc.get("error"):
        raise NetError(f"iperf3: {doc['error']}")
    start_doc = _obj(doc, "start")
    test = _obj(start_doc, "test_start")
    end = _obj(doc, "end")
    received = _obj(end, "sum_received")
    sent = _obj(end, "sum_sent") or None
    if _num(received.get("bits_per_second")) is None:
        raise NetError("iperf3's JSON has no end.sum_received.bits_per_second (a TCP test that finished)")
    connecting = _obj(start_doc, "connecting_to")
    streams = test.get("num_streams")
    retransmits = sent.get("retransmits") if sent else None
    return NetMeasurement(
        server=server or str(connecting.get("host") or "?"),
        port=port if port is not None else int(connecting.get("port") or DEFAULT_IPERF3_PORT),
        streams=int(streams) if isinstance(streams, int) and streams > 0 else 1,
        direction="from-server" if test.get("reverse") else "to-server",
        bits_per_second=float(received["bits_per_second"]),
        sent_bits_per_second=_num(sent.get("bits_per_second")) if sent else None,
        retransmits=retransmits if isinstance(retransmits, int) and not isinstance(retransmits, bool) else None,
        seconds=_num(received.get("seconds")),
        iperf3_version=start_doc.get("version") if isinstance(start_doc.get("version"), str) else None,
    )


def _obj(doc: JSONValue, key: str) -> JSONObject:
    """``doc[key]`` where both are JSON objects, else ``{}`` (iperf3's JSON read without trusting its shape)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def fmt_bits(bits_per_second: float | None) -> str:
    """``9.41 Gbit/s``, ``940 Mbit/s``."""
    if bits_per_second is None:
        return "-"
    value = float(bits_per_second)
    for unit, scale in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(value) >= scale:
            number = value / scale
            return f"{number:.3g} {unit}" if number < 100 else f"{number:.0f} {unit}"
    return f"{value:.0f} bit/s"


def format_measurements(measurements: Sequence[NetMeasurement]) -> list[str]:
    """One line per iperf3 run, then the ceiling per direction."""
    lines = []
    for m in measurements:
        extra = f", {m.retransmits} retransmits" if m.retransmits else ""
        streams = f"{m.streams} stream" + ("s" if m.streams != 1 else "")
        lines.append(f"{m.direction:<12} {streams:<11} {fmt_bits(m.bits_per_second):>12}{extra}")
    for direction in DIRECTIONS:
        rates = [m.bits_per_second for m in measurements if m.direction == direction]
        if rates:
            lines.append(f"ceiling {direction}: {fmt_bits(max(rates))}")
    return lines


def is_network_fs(fstype: str | None) -> bool:
    """A filesystem type (or ``nbd``, ``s3``: an NBD export, an S3 gateway) whose data crosses the network."""
    return fstype is not None and (fstype in NETWORK_FSTYPES or fstype in ("nbd", "s3") or fstype.startswith(("nfs", "fuse.sshfs", "smb")))


def share_ceiling_findings(result: FioResult, fstype: str | None, ceiling_bits_per_s: float | None) -> list[Finding]:
    """Findings for a result on a network filesystem measured against the network's ceiling.

    ``ceiling_bits_per_s`` is one rate (the CLI passes the best the latest ``storbench net``
    measured to the share's server, either direction and any stream count: the most
    the network can carry, so "above it" is never a false alarm).  Each direction fio
    reports is judged on its own; nothing is said for local filesystems or without a ceiling.
    """
    if not is_network_fs(fstype) or ceiling_bits_per_s is None or not ceiling_bits_per_s > 0:
        return []
    from .metrics import direction_figures

    findings: list[Finding] = []
    for direction, figures in direction_figures(result).items():
        bw = figures.get("bw_bytes")
        if not bw:
            continue
        bits = bw * 8
        share = bits / ceiling_bits_per_s
        said = f"{direction} throughput {fmt_bits(bits)} on {fstype} is {share:.0%} of the network ceiling {fmt_bits(ceiling_bits_per_s)}"
        if share > 1 + ABOVE_MARGIN and fstype == "s3":  # no client cache: the ceiling is not this network's
            findings.append(
                Finding(
                    check="share-ceiling",
                    severity="warning",
                    message=f"{said}: more than that ceiling, so it was not measured on the path these requests took",
                    fix="measure the network to the gateway's own address again (storbench net) before reading the objects' figures against it",
                )
            )
        elif share > 1 + ABOVE_MARGIN:
            findings.append(
                Finding(
                    check="share-ceiling",
                    severity="invalid",
                    message=f"{said}: more than the network can carry, so the client cache was measured, not the share",
                    fix="use direct=1 on the share (or a test file several times the client's RAM) and check the mount does not cache (e.g. NFS 'noac', SMB 'cache=none')",
                )
            )
        elif share >= NEAR_SHARE:
            findings.append(
                Finding(
                    check="share-ceiling",
                    severity="warning",
                    message=f"{said}: network-bound, the storage was never the bottleneck",
                    fix=("run more clients on other hosts (--hosts), or measure over a faster network, to see what the gateway can do"
                         if fstype == "s3" else
                         "measure the storage on the server itself, or over a faster network (NFS nconnect=N, SMB multichannel) to see what the share can do"),
                )
            )
    return findings


class CeilingLookup:
    """``server -> bits/s`` for the runner's share-ceiling hook, looked up on first use
    through ``lookup`` (``Store.last_net_ceiling``) and remembered."""

    def __init__(self, lookup: Callable[[str], NetCeiling | None]) -> None:
        self._lookup = lookup
        self._seen: dict[str, float | None] = {}

    def get(self, server: str, default: float | None = None) -> float | None:
        key = server.strip().lower()
        if key not in self._seen:
            ceiling = self._lookup(key)
            self._seen[key] = ceiling.best() if ceiling is not None else None
        value = self._seen[key]
        return default if value is None else value

