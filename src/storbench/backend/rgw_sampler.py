"""The edge of :mod:`.rgw`: radosgw's ``perf dump`` read from its admin socket around one fio run
(``ceph --admin-daemon SOCKET perf dump``; the command injectable), and its requests held paused
while fio runs (``objecter_requests``: :func:`paused_requests`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from ..process import proc
from .activity import BackendActivity
from .rgw import RgwActivity, parse_paused, parse_perf_dump

#: how long one perf dump may take
TIMEOUT_S = 15.0


def _perf_dump(socket: str) -> str:
    done = proc.run(["ceph", "--admin-daemon", socket, "perf", "dump"], timeout_s=TIMEOUT_S)
    if done.returncode != 0:
        raise OSError(proc.last_line(done.stderr) or proc.last_line(done.stdout) or f"exit status {done.returncode}")
    return done.stdout


def admin_command(path: str, prefix: str, timeout_s: float = 5.0) -> str:
    """One command over a Ceph daemon's admin socket, as ``ceph --admin-daemon PATH PREFIX`` sends
    it (the command as JSON ending in a NUL; the reply a 4-byte big-endian length and the text),
    without starting the ``ceph`` program (0.3 s of CPU each time): a watch asks every 2 s."""
    import json
    import socket as sockets
    import struct

    with sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(path)
        sock.sendall(json.dumps({"prefix": prefix}).encode() + b"\0")
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = sock.recv(65536)
            if not chunk:
                raise OSError(f"the admin socket {path} closed before its whole answer")
            data += chunk
    return data[4 : 4 + struct.unpack(">I", data[:4])[0]].decode("utf-8", errors="replace")


def paused_requests(socket: str) -> int | None:
    """How many of radosgw's requests to its cluster are held paused now (a full cluster or
    pool); None when the socket cannot be read (the watch then says nothing)."""
    try:
        return parse_paused(admin_command(socket, "objecter_requests"))
    except (OSError, ValueError):
        return None


class RgwSampler:
    """radosgw's counters before and after one run (a context manager; ``activity()`` after it)."""

    def __init__(self, socket: str, *, read: Callable[[str], str] = _perf_dump) -> None:
        self.socket = socket
        self.read = read
        self._before: dict[str, int] | None = None
        self._activity = RgwActivity(socket=socket)

    def _sample(self, when: str) -> dict[str, int] | None:
        try:
            return parse_perf_dump(self.read(self.socket))
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:  # no ceph command, a dead socket, a hung gateway
            self._activity = RgwActivity(socket=self.socket, problems=(f"radosgw's counters {when} the run could not be read from {self.socket}: {exc}",))
            return None

    def __enter__(self) -> RgwSampler:
        self._before = self._sample("before")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._before is None:
            return
        after = self._sample("after")
        if after is not None:
            self._activity = RgwActivity(socket=self.socket, before=self._before, after=after)

    def activity(self) -> BackendActivity:
        return BackendActivity(rgw=self._activity)
