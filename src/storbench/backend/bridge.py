"""The userspace bridge's own work (iSCSI and NFS targets through qemu-nbd): how much CPU it used
while fio ran, beside fio's figures, so that a bridge that set the pace is said.

qemu-nbd serves the LUN or the NFS file for fio's nbd engine (:mod:`storbench.targets.bridge`); on
a small client its one main loop can take a whole core before the server is busy (../shared/
NFS-ISCSI.md: fio's own engines do 1.3-2.6x the bridge's IOPS here).  The sampler reads the
bridge's ``utime + stime`` from ``/proc/PID/stat`` before and after the run.

Pure: :class:`BridgeActivity`, :func:`cpu_ticks` (the clock ticks of a ``/proc/PID/stat`` line).
The edge: :class:`storbench.backend.bridge_sampler.BridgeSampler` (reads ``/proc``, injectable).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BridgeActivity:
    """The bridge's CPU during one fio run: ``cpu_s`` of ``wall_s`` (None: could not be read)."""

    pid: int | None
    cpu_s: float | None = None
    wall_s: float | None = None
    problems: tuple[str, ...] = ()

    @property
    def cpu_share(self) -> float | None:
        """The share of one CPU the bridge used (1.0: a whole core)."""
        if self.cpu_s is None or not self.wall_s:
            return None
        return self.cpu_s / self.wall_s


def cpu_ticks(stat_line: str) -> int:
    """``utime + stime`` (fields 14 and 15) of a ``/proc/PID/stat`` line, in clock ticks; the
    command name (field 2) may hold spaces and parentheses, so fields are counted after its
    last ``)``.  ValueError for a line that is not one.  Pure."""
    head, sep, rest = stat_line.rpartition(")")
    fields = rest.split()
    if not sep or not head or len(fields) < 13:
        raise ValueError(f"not a /proc/PID/stat line: {stat_line[:60]!r}")
    return int(fields[11]) + int(fields[12])  # fields 14, 15 counted from 1 with pid and comm before ')'
