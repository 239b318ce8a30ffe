"""Is the server under a target still there? (edge: TCP connects, nothing else)

A target reached through a userspace client -- an iSCSI LUN, an NFS export (qemu-nbd's bridge or
fio's own engine) -- hangs fio when its server dies in the middle of a workload: qemu's iSCSI and
NFS drivers and libiscsi reconnect for ever, and fio waits on them with its status line at
``[-.-%][eta 00m:00s]`` (seen with tgtd SIGKILLed: fio never returned).  The runner therefore
watches the server's port while fio runs (:meth:`ServerWatch.check`, polled by
:meth:`storbench.run.fioexec.SubprocessFio.run`): once it refuses or times out :data:`MISSES`
times in a row, :data:`INTERVAL_S` apart, fio is stopped and the workload fails with one line
naming the server.  Only a server that answered in this run is judged (a port storbench guessed
wrong never fails a run), and the next workload is not started on a server still gone
(:meth:`ServerWatch.gone`).

A server that hangs but keeps its port open (SIGSTOP) is not caught here: its kernel still
accepts connections.  Which targets have a server to watch is their kind's word
(:meth:`storbench.targets.base.TargetKind.server`: iSCSI and NFS so far); every workload that
runs through :func:`storbench.run.runner.execute` is watched (runs, curves, matrix setups), the
--prefill and --precondition passes are not.
"""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Target

#: seconds between two probes while fio runs
INTERVAL_S = 1.0
#: probes in a row that must fail before the server counts as gone
MISSES = 3
#: how long one connect may take
CONNECT_TIMEOUT_S = 2.0
#: seconds between two counts of what a server holds while objects are written to it (GrowthWatch)
GROWTH_INTERVAL_S = 5.0


def connect_problem(host: str, port: int, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when ``host:port`` accepts a TCP connection now, else what went wrong, in words."""
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except OSError as exc:
        if exc.errno == errno.ECONNREFUSED:
            return "connection refused"
        return exc.strerror or str(exc)


class ServerWatch:
    """Watches one server's TCP port for one target during a run (see the module's text).

    ``what``: the server in words ("the iSCSI target"); ``probe``: one connect attempt (injected
    in tests), None when it answered."""

    def __init__(self, what: str, host: str, port: int, *, probe: Callable[[str, int], str | None] = connect_problem,
                 clock: Callable[[], float] = time.monotonic, interval_s: float = INTERVAL_S, misses: int = MISSES) -> None:  # fmt: skip
        self.what = what
        self.host = host
        self.port = port
        self._probe = probe
        self._clock = clock
        self._interval_s = interval_s
        self._misses = misses
        #: the server answered at least once in this run: only then is it judged
        self.answered = False
        self._missed: list[str] = []
        self._next_s = 0.0

    @property
    def where(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"{self.what} at {host}:{self.port}"

    def _once(self) -> str | None:
        problem = self._probe(self.host, self.port)
        if problem is None:
            self.answered = True
            self._missed.clear()
        else:
            self._missed.append(problem)
        return problem

    def start(self) -> None:
        """Called as a workload starts: the first probe, and the clock of the next."""
        self._missed.clear()
        self._once()
        self._next_s = self._clock() + self._interval_s

    def gone(self) -> str | None:
        """Before a workload: why it is not started (the server answered earlier in this run and
        does not now), else None.  Starts the watch."""
        self.start()
        if self._missed and self.answered:
            return f"not run: {self.where} is not answering ({self._missed[-1]}); it answered earlier in this run"
        return None

    def check(self) -> str | None:
        """While fio runs (called often; probes once per interval): the reason to stop fio once
        the server has failed :data:`MISSES` probes in a row, else None."""
        if not self.answered or self._clock() < self._next_s:
            return None
        self._once()
        self._next_s = self._clock() + self._interval_s
        if len(self._missed) < self._misses:
            return None
        return (f"{self.where} stopped answering during the workload ({self._missed[-1]}, "
                f"{len(self._missed)} tries {self._interval_s:g} s apart); fio was stopped, its figures are not kept")  # fmt: skip


#: seconds between two readings of a server's paused requests while fio runs
HELD_INTERVAL_S = 2.0
#: readings in a row that must find requests paused before fio is stopped
HELD_READINGS = 3


class HeldWatch:
    """Watches a server that keeps its port and takes requests but holds them paused (radosgw,
    whose objecter pauses every request to a cluster or pool flagged full, and leaves fio's
    requests unanswered: fio's http engine has no timeout).  ``read`` gives how many are held now
    (None: not known); once :data:`HELD_READINGS` readings in a row, :data:`HELD_INTERVAL_S`
    apart, found some, fio is stopped with one line."""

    def __init__(self, what: str, read: Callable[[], int | None], *, clock: Callable[[], float] = time.monotonic,
                 interval_s: float = HELD_INTERVAL_S, readings: int = HELD_READINGS) -> None:  # fmt: skip
        self.what = what
        self._read = read
        self._clock = clock
        self._interval_s = interval_s
        self._readings = readings
        self._held: list[int] = []
        self._next_s = clock() + interval_s

    def check(self) -> str | None:
        """While fio runs (called often; reads once per interval): the reason to stop fio, else None."""
        if self._clock() < self._next_s:
            return None
        held = self._read()
        self._next_s = self._clock() + self._interval_s
        if not held:
            self._held.clear()
            return None
        self._held.append(held)
        if len(self._held) < self._readings:
            return None
        return (f"{self.what} held {held} of its requests to the cluster paused for {self._interval_s * (self._readings - 1):g} s: "
                "the cluster or a pool is full, or paused (ceph health detail says which); fio was stopped, its figures are not kept")  # fmt: skip


class GrowthWatch:
    """Watches what a server holds while fio only writes new objects to it (the objects storbench
    writes first for an S3 workload that reads them, :func:`storbench.run.prepare.seed_objects`):
    ``read`` gives its count now (None: not known, never judged); once it has not grown for ``stall_s`` (read
    every :data:`GROWTH_INTERVAL_S`), fio is stopped with one line.  The gateway of a full cluster
    takes the PUTs and holds them without end (fio's http engine has no timeout); where its admin
    socket is not named, this is what ends the wait."""

    def __init__(self, what: str, read: Callable[[], object | None], stall_s: float, *, clock: Callable[[], float] = time.monotonic,
                 interval_s: float = GROWTH_INTERVAL_S) -> None:  # fmt: skip
        self.what = what
        self._read = read
        self._stall_s = stall_s
        self._clock = clock
        self._interval_s = interval_s
        self._last: object | None = None
        self._since = clock()
        self._next_s = self._since + interval_s

    def check(self) -> str | None:
        """While fio runs (called often; reads once per interval): the reason to stop fio, else None."""
        if self._clock() < self._next_s:
            return None
        now = self._read()
        self._next_s = self._clock() + self._interval_s
        if now is None or now != self._last:  # grown, or not known (never judged)
            self._last, self._since = now, self._clock()
            return None
        if self._clock() - self._since < self._stall_s:
            return None
        return (f"{self.what} took no new object for {self._stall_s:g} s: it, or the cluster under it, holds the PUTs "
                "without answering (a full cluster or pool?); fio was stopped")  # fmt: skip


def growth_watch(target: Target) -> Callable[[], str | None] | None:
    """A :class:`GrowthWatch` of what the server under ``target`` holds, where it can be counted
    (an ``s3://`` bucket: :func:`storbench.backend.stored_objects`) and its kind says its requests
    can hang (:attr:`~storbench.targets.base.TargetKind.request_stall_s`, the time allowed); else None."""
    from ..backend import stored_objects
    from ..targets import kind_of

    stall = kind_of(target).request_stall_s
    stored = stored_objects(target)
    return GrowthWatch(*stored, stall).check if stored is not None and stall is not None else None


def held_watch(target: Target) -> Callable[[], str | None] | None:
    """A :class:`HeldWatch` of the server under ``target`` where one can be read (radosgw through
    the admin socket an ``s3://`` target names: :func:`storbench.backend.held_requests`), else None."""
    from ..backend import held_requests

    held = held_requests(target)
    return HeldWatch(*held).check if held is not None else None


def first_of(*checks: Callable[[], str | None] | None) -> Callable[[], str | None] | None:
    """One watch asking each of ``checks`` in turn (None ones left out): the first reason wins."""
    given = [c for c in checks if c is not None]
    if len(given) <= 1:
        return given[0] if given else None

    def watch() -> str | None:
        return next((said for c in given if (said := c()) is not None), None)

    return watch


def with_deadline(check: Callable[[], str | None] | None, limit_s: float, reason: str,
                  clock: Callable[[], float] = time.monotonic) -> Callable[[], str | None]:
    """``check`` (a server's watch, or None) that also gives ``reason`` once ``limit_s`` have passed
    since it was made: for a server that keeps its port open and answers new requests but leaves
    fio's own waiting for ever (radosgw on a nearly full pool: a 5 s PUT workload still waiting
    after minutes, fio's http engine has no timeout)."""
    start = clock()

    def watch() -> str | None:
        if check is not None and (said := check()) is not None:
            return said
        return reason if clock() - start > limit_s else None

    return watch
