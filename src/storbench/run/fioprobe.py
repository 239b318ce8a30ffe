"""fio's probe, spoken by storbench itself: the pre-flight's question to a fio server ("who are
you?") without starting a fio client.

fio's client asks each server it is given for a probe reply first (``FIO_NET_CMD_PROBE``: the
server's host name, byte order, word size, OS, architecture and fio version); started for that
alone (``fio --showcmd --client=...``), it took 1.4-3.1 s at 64 servers on this 2-core machine
and 14 s at 256.  The same question over sockets of storbench's own, every host at once, takes a
few ms, or 1 s where a server's connection handler polled before the probe reached it (server.c
waits a second for something to send, then reads): a host unanswered after 0.1 s is asked again on
a second connection (:data:`HEDGE_AFTER_S`).  The command is fio's
(server.h: a 24-byte little-endian header, version, opcode, flags, tag, payload length, then a
CRC-16 of the header's first 20 bytes and one of the payload, poly 0x8005 as crc/crc16.c); the
protocol version must be the server's own (:data:`SERVER_VERSIONS`, from ``FIO_SERVER_VER`` of
each release's server.h): a server of another fio closes the connection without a reply, as it
does for fio's own client.  A local fio not in the table is probed by fio's client as before.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import struct
import time
from collections.abc import Sequence

from .inventory import Host

#: ``FIO_SERVER_VER`` of each fio release (server.h at its tag, fio's git history)
SERVER_VERSIONS: dict[str, int] = {
    "fio-3.0": 65, "fio-3.1": 66, "fio-3.2": 66, "fio-3.3": 69, "fio-3.4": 70, "fio-3.5": 70, "fio-3.6": 72, "fio-3.7": 73,
    "fio-3.8": 73, "fio-3.9": 74, "fio-3.10": 74, "fio-3.11": 77, "fio-3.12": 77, "fio-3.13": 78, "fio-3.14": 78, "fio-3.15": 78,
    "fio-3.16": 80, "fio-3.17": 80, "fio-3.18": 82, "fio-3.19": 82, "fio-3.20": 83, "fio-3.21": 83, "fio-3.22": 84, "fio-3.23": 86,
    "fio-3.24": 86, "fio-3.25": 86, "fio-3.26": 88, "fio-3.27": 89, "fio-3.28": 94, "fio-3.29": 95, "fio-3.30": 96, "fio-3.31": 97,
    "fio-3.32": 97, "fio-3.33": 97, "fio-3.34": 99, "fio-3.35": 100, "fio-3.36": 101, "fio-3.37": 103, "fio-3.38": 107,
    "fio-3.39": 107, "fio-3.40": 111, "fio-3.41": 113, "fio-3.42": 120,
}  # fmt: skip

PROBE = 10  #: FIO_NET_CMD_PROBE
_HEADER = struct.Struct("<HHIQI")  # version, opcode, flags, tag, pdu_len: what the header's CRC covers
_CRCS = struct.Struct("<HH")
HEADER_BYTES = _HEADER.size + _CRCS.size  # 24
#: fio's names for its OS and architecture numbers (libfio.c's fio_os_strings, fio_arch_strings)
OS_NAMES = ("Invalid", "Linux", "AIX", "FreeBSD", "HP-UX", "OSX", "NetBSD", "OpenBSD", "Solaris", "Windows", "Android", "DragonFly")
ARCH_NAMES = ("Invalid", "x86-64", "x86", "ppc", "ia64", "s390", "alpha", "sparc", "sparc64", "arm", "sh", "hppa", "mips", "aarch64",
              "generic")  # fmt: skip


def _crc_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """fio's CRC-16 (poly 0x8005, reflected, starting at 0: CRC-16/ARC). Pure."""
    c = 0
    for byte in data:
        c = (c >> 8) ^ _TABLE[(c ^ byte) & 0xFF]
    return c


def probe_command(server_version: int, server_name: str) -> bytes:
    """The probe fio's client sends (cmd_client_probe_pdu: flags 0, no zlib; the server's name). Pure."""
    pdu = struct.pack("<Q128s", 0, server_name.encode()[:127])
    head = _HEADER.pack(server_version, PROBE, 0, 0, len(pdu))
    return head + _CRCS.pack(crc16(head), crc16(pdu)) + pdu


def probe_line(payload: bytes) -> str | None:
    """A probe reply's payload (cmd_probe_reply_pdu) as fio's client prints it
    (``hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=0``), None when cut. Pure."""
    if len(payload) < 112:
        return None

    def text(raw: bytes) -> str:
        return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")

    os_nr, arch_nr, bpp = payload[97], payload[98], payload[99]
    os_name = OS_NAMES[os_nr] if os_nr < len(OS_NAMES) else "unknown"
    arch = ARCH_NAMES[arch_nr] if arch_nr < len(ARCH_NAMES) else "unknown"
    (flags,) = struct.unpack_from("<Q", payload, 104)
    return (f"hostname={text(payload[:64])}, be={payload[64]}, {bpp * 8}-bit, os={os_name}, arch={arch}, "
            f"fio={text(payload[65:97])}, flags={flags:x}")  # fmt: skip


def replies(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole commands in ``data`` as (opcode, payload), and what is left of it. Pure."""
    out = []
    while len(data) >= HEADER_BYTES:
        _version, opcode, _flags, _tag, length = _HEADER.unpack_from(data)
        if len(data) < HEADER_BYTES + length:
            break
        out.append((opcode, data[HEADER_BYTES : HEADER_BYTES + length]))
        data = data[HEADER_BYTES + length :]
    return out, data


#: a host that has not answered this long after its probe went out is asked again on another
#: connection (up to :data:`HEDGES` times), and the first answer counts: a fio server's connection
#: handler that polled once before the probe arrived sleeps a second before it polls again
#: (server.c), and on 2 cores that happened to 1-6 of 64 loopback servers a probe even when each
#: was sent the moment its connection opened (a pre-flight of 1.02 s instead of 0.03 s)
HEDGE_AFTER_S = 0.1
HEDGES = 3


def ask_all(hosts: Sequence[Host], server_version: int, connect_timeout_s: float, timeout_s: float) -> list[tuple[str | None, str | None]]:
    """Edge: every host asked at once from one thread, in the hosts' order: (why it cannot be
    reached, or None; its probe line, or None when it closed or said nothing within
    ``timeout_s``).  Each probe is sent the moment its connection opens, every host at once; one
    still unanswered :data:`HEDGE_AFTER_S` later is asked again on a new connection."""
    results: list[tuple[str | None, str | None] | None] = [None] * len(hosts)
    sel = selectors.DefaultSelector()
    started = time.monotonic()
    asking: dict[int, list[_Asking]] = {}  # host index -> its open connections
    addresses: dict[int, tuple] = {}
    commands = [probe_command(server_version, host.address) for host in hosts]
    hedges = dict.fromkeys(range(len(hosts)), 0)  # host index -> connections opened beyond the first

    def ask(i: int) -> str | None:
        """Open a connection to host ``i`` and send its probe as soon as it opens; why not, or None."""
        family, kind, proto, addr = addresses[i]
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        err = sock.connect_ex(addr)
        if err not in (0, errno.EINPROGRESS):
            sock.close()
            return os.strerror(err).lower()
        a = _Asking(i, sock, commands[i])
        a.reading = a.send_now()
        if a.failed is not None:
            sock.close()
            return a.failed
        asking.setdefault(i, []).append(a)
        sel.register(sock, selectors.EVENT_READ if a.reading else selectors.EVENT_WRITE, a)
        return None

    def close(a: _Asking) -> None:
        sel.unregister(a.sock)
        a.sock.close()
        asking[a.index].remove(a)

    try:
        for i, host in enumerate(hosts):
            try:
                family, kind, proto, _, addr = socket.getaddrinfo(host.address, host.port, type=socket.SOCK_STREAM)[0]
            except socket.gaierror as exc:
                results[i] = (f"name does not resolve ({exc.strerror})", None)
                continue
            addresses[i] = (family, kind, proto, addr)
            if (why := ask(i)) is not None:
                results[i] = (why, None)
        while any(asking.values()):
            now = time.monotonic()
            if now - started > timeout_s:
                break
            for key, _events in sel.select(timeout=min(0.05, timeout_s - (now - started))):
                a: _Asking = key.data
                if results[a.index] is not None:  # its other connection answered in this same round
                    continue
                done = a.step()
                if a.sent_at is not None and not a.reading:
                    sel.modify(a.sock, selectors.EVENT_READ, a)
                    a.reading = True
                if done is None:
                    continue
                if done[1] is None and len(asking[a.index]) > 1:  # this one failed; the other may still answer
                    close(a)
                    continue
                results[a.index] = done
                for other in list(asking[a.index]):
                    close(other)
            now = time.monotonic()
            for i, open_ in asking.items():
                latest = open_[-1] if open_ else None
                if latest is not None and hedges[i] < HEDGES and latest.sent_at is not None and now - latest.sent_at > HEDGE_AFTER_S:
                    hedges[i] += 1
                    ask(i)
            if now - started > connect_timeout_s:  # connections never opened: unreachable
                for i, open_ in asking.items():
                    if open_ and not any(a.sent_at is not None for a in open_):
                        results[i] = (f"no answer within {connect_timeout_s:g} s", None)
                        for a in list(open_):
                            close(a)
    finally:
        for open_ in asking.values():
            for a in open_:
                sel.unregister(a.sock)
                a.sock.close()
        sel.close()
    return [r if r is not None else (None, None) for r in results]


class _Asking:
    """One host's probe in :func:`ask_all`: connect, send at once, read until the probe reply."""

    def __init__(self, index: int, sock: socket.socket, command: bytes) -> None:
        self.index, self.sock, self.command = index, sock, command
        self.sent_at: float | None = None  #: monotonic seconds when the probe went out
        self.reading = False  #: registered for its reply
        self.failed: str | None = None  #: why the connection failed, found when the probe was sent
        self.data = b""

    def send_now(self) -> bool:
        """Send the probe at once where the connection is open already (on loopback it is as
        soon as ``connect`` returns): the earlier it arrives, the likelier the server's handler
        finds it at its first poll.  False when not connected yet (sent when writable)."""
        try:
            self.sock.send(self.command)  # 160 bytes: the socket's buffer takes them whole
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            if exc.errno != errno.ENOTCONN:  # refused or unreachable: the socket's error is spent here
                self.failed = os.strerror(exc.errno or errno.EIO).lower()
            return False
        self.sent_at = time.monotonic()
        return True

    def step(self) -> tuple[str | None, str | None] | None:
        if self.sent_at is None:
            err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                return os.strerror(err).lower(), None
            self.sent_at = time.monotonic()
            try:
                self.sock.sendall(self.command)  # 160 bytes: the socket's buffer takes them whole
            except OSError:
                return None, None
            return None
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return None
        except OSError:
            return None, None
        if not chunk:
            return None, None
        found, self.data = replies(self.data + chunk)
        for opcode, payload in found:
            if opcode == PROBE:
                return None, probe_line(payload)
        return None
