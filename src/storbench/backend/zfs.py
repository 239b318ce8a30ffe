"""What a ZFS pool did while fio ran (pure): per-vdev and per-member I/O from ``zpool iostat -v``,
ARC hits and misses, the pool's state and scan before and after, the dataset's compress ratio.

The sampler (:mod:`storbench.backend.zfs_sampler`) reads the commands; everything here turns
their parsed output into a frozen :class:`ZfsActivity`.  Counts from ``zpool iostat`` are
per-second rates as zpool prints them (three significant digits), summed over the run's
reports, so totals are close to, not exactly, what the pool did; the block devices' exact
counts are in the device activity (``/proc/diskstats``) beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..storage._util import format_bytes
from ..storage.zfs import ArcStats, IostatRow, ZpoolStatus, arc_hit_ratio, scan_activity


@dataclass(frozen=True)
class PoolState:
    """``zpool status`` at one moment: the pool's state, its scan line, and every vdev's state."""

    state: str | None
    scan: str | None = None
    vdev_states: tuple[tuple[str, str], ...] = ()  # (vdev or device name, state) for those not ONLINE

    @property
    def scan_active(self) -> str | None:
        return scan_activity(self.scan)

    @property
    def healthy(self) -> bool:
        return (self.state or "").upper() == "ONLINE" and not self.vdev_states and self.scan_active is None


@dataclass(frozen=True)
class VdevIo:
    """One row of the pool's tree with what it did over the run.

    ``role``: ``pool``, ``vdev`` (a top-level vdev: ``mirror-0``, ``raidz1-0``, or a single disk)
    or ``device`` (a member of a vdev).  ``read_ops``/``write_ops`` are operations, ``read_bytes``/
    ``write_bytes`` bytes, summed over ``seconds`` one-second reports.
    """

    name: str
    role: str
    parent: str | None
    read_ops: float
    write_ops: float
    read_bytes: float
    write_bytes: float


@dataclass(frozen=True)
class ZfsActivity:
    """The pool behind a target over one fio run."""

    pool: str
    dataset: str
    before: PoolState | None = None
    after: PoolState | None = None
    seconds: int = 0  # one-second zpool iostat reports that went into the totals
    vdevs: tuple[VdevIo, ...] = ()
    #: per second: (name, read_ops, write_ops, read_bytes, write_bytes) for every row, in tree order
    per_second: tuple[tuple[tuple[str, float, float, float, float], ...], ...] = ()
    arc_hits: int | None = None
    arc_misses: int | None = None
    arc_hit_ratio: float | None = None
    arc_size_bytes: int | None = None
    arc_max_bytes: int | None = None
    compressratio_before: float | None = None
    compressratio_after: float | None = None
    #: what could not be read, one phrase each ("zpool status tank failed after the run: ...")
    problems: tuple[str, ...] = ()

    def row(self, name: str) -> VdevIo | None:
        return next((v for v in self.vdevs if v.name == name), None)

    @property
    def members(self) -> tuple[VdevIo, ...]:
        return tuple(v for v in self.vdevs if v.role == "device")


def pool_state(status: ZpoolStatus | None) -> PoolState | None:
    if status is None:
        return None
    bad: list[tuple[str, str]] = []
    for v in status.vdevs:
        if v.state and v.state.upper() != "ONLINE":
            bad.append((v.name, v.state))
        bad.extend(v.unhealthy)
    return PoolState(state=status.state, scan=status.scan, vdev_states=tuple(bad))


def _names(report: Sequence[IostatRow], status: ZpoolStatus | None) -> list[tuple[str, str, str | None]]:
    """(name, role, parent) per row.  zfs-fuse calls every mirror ``mirror`` in iostat but
    ``mirror-0``, ``mirror-1`` in status: top-level vdevs take status's names by position."""
    top = [v.name for v in status.vdevs if v.role == "data"] if status else []
    out: list[tuple[str, str, str | None]] = []
    vdev_index = -1
    pool_name: str | None = None
    parent: str | None = None
    for row in report:
        if row.depth == 0:
            pool_name = row.name
            out.append((row.name, "pool", None))
        elif row.depth == 1:
            vdev_index += 1
            name = top[vdev_index] if vdev_index < len(top) and top[vdev_index].startswith(row.name) else row.name
            parent = name
            out.append((name, "vdev", pool_name))
        else:
            out.append((row.name, "device", parent))
    return out


def summarize_iostat(reports: Sequence[Sequence[IostatRow]], status: ZpoolStatus | None) -> tuple[tuple[VdevIo, ...], tuple, int]:
    """(totals per row, per-second rows, seconds) from ``zpool iostat -v POOL 1`` reports.

    The first report is the average since the pool was imported and is left out; each
    later one is one second.  Reports whose rows do not match the first one's (the pool
    changed shape) are left out too.
    """
    if len(reports) < 2:
        return (), (), 0
    shape = [(r.name, r.depth) for r in reports[0]]
    names = _names(reports[0], status)
    totals = [[0.0, 0.0, 0.0, 0.0] for _ in shape]
    per_second = []
    seconds = 0
    for report in reports[1:]:
        if [(r.name, r.depth) for r in report] != shape:
            continue
        seconds += 1
        row_out = []
        for i, r in enumerate(report):
            for j, value in enumerate((r.read_ops, r.write_ops, r.read_bytes, r.write_bytes)):
                totals[i][j] += value
            row_out.append((names[i][0], r.read_ops, r.write_ops, r.read_bytes, r.write_bytes))
        per_second.append(tuple(row_out))
    vdevs = tuple(
        VdevIo(name=n, role=role, parent=parent, read_ops=t[0], write_ops=t[1], read_bytes=t[2], write_bytes=t[3])
        for (n, role, parent), t in zip(names, totals)
    )
    return vdevs, tuple(per_second), seconds


def zfs_activity(
    pool: str,
    dataset: str,
    *,
    status_before: ZpoolStatus | None,
    status_after: ZpoolStatus | None,
    iostat: Sequence[Sequence[IostatRow]] = (),
    arc_before: ArcStats | None = None,
    arc_after: ArcStats | None = None,
    compressratio_before: float | None = None,
    compressratio_after: float | None = None,
    problems: Sequence[str] = (),
) -> ZfsActivity:
    vdevs, per_second, seconds = summarize_iostat(iostat, status_before or status_after)
    ratio = arc_hit_ratio(arc_before, arc_after)
    return ZfsActivity(
        pool=pool,
        dataset=dataset,
        before=pool_state(status_before),
        after=pool_state(status_after),
        seconds=seconds,
        vdevs=vdevs,
        per_second=per_second,
        arc_hits=ratio[0] if ratio else None,
        arc_misses=ratio[1] if ratio else None,
        arc_hit_ratio=ratio[2] if ratio else None,
        arc_size_bytes=arc_after.size_bytes if arc_after else None,
        arc_max_bytes=arc_after.max_bytes if arc_after else None,
        compressratio_before=compressratio_before,
        compressratio_after=compressratio_after,
        problems=tuple(problems),
    )


def format_zfs_activity(z: ZfsActivity) -> list[str]:
    """Lines for ``show`` and the reports: the ARC, the pool's state, each vdev and member."""
    lines: list[str] = []
    if z.arc_hit_ratio is not None:
        lines.append(f"ZFS ARC during the run: {z.arc_hit_ratio * 100:.1f}% hits ({z.arc_hits} hits, {z.arc_misses} misses)")
    if z.compressratio_after is not None:
        lines.append(f"ZFS {z.dataset} compressratio after the run: {z.compressratio_after:.2f}x")
    for when, st in (("before", z.before), ("after", z.after)):
        if st is not None and not st.healthy:
            extra = f", {st.scan_active} in progress" if st.scan_active else ""
            bad = "".join(f", {n} {s}" for n, s in st.vdev_states)
            lines.append(f"ZFS pool {z.pool} {when} the run: {st.state}{extra}{bad}")
    if z.seconds:
        lines.append(f"ZFS pool {z.pool} over {z.seconds} s (zpool iostat -v):")
        for v in z.vdevs:
            indent = {"pool": "  ", "vdev": "    ", "device": "      "}[v.role]
            lines.append(
                f"{indent}{v.name}: read {v.read_ops:.0f} ops {format_bytes(int(v.read_bytes))}, "
                f"write {v.write_ops:.0f} ops {format_bytes(int(v.write_bytes))}"
            )
    lines.extend(f"ZFS: {p}" for p in z.problems)
    return lines
