"""What a Ceph cluster's OSDs served while fio ran (pure), and how much of the area fio read
was never written before the run.

librbd answers a read of a never-written part of an image from the object map, asking no
OSD (about 150k IOPS of nothing here); the rados engine reads an object it has just created
empty.  The evidence is the area's written part before the run (an image's extents from
``rbd diff``, exact with the object map; an object's size from ``rados stat``) and what the
OSDs served during it (their ``op_r``/``op_w`` counters from ``ceph tell osd.* perf dump``,
which are current, unlike ``rados df``'s pool counters, which lag by seconds).  The
``sparse-read`` check judges it (fix: ``--prefill``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .area import unwritten_share


@dataclass(frozen=True)
class CephActivity:
    """A Ceph target around one fio run; counters are the run's deltas over all OSDs (None: not read)."""

    pool: str
    image: str | None = None  # rbd:POOL/IMAGE
    object: str | None = None  # rados:POOL: the object fio writes and reads
    area_bytes: int | None = None  # the part of the image or object the workload uses
    unwritten_before_bytes: int | None = None  # of that area, never written before the run
    osds: int | None = None
    osd_read_ops: int | None = None
    osd_read_bytes: int | None = None
    osd_read_latency_ns: float | None = None  # mean over the run's OSD reads
    osd_write_ops: int | None = None
    osd_write_bytes: int | None = None
    osd_write_latency_ns: float | None = None
    #: read-modify-write operations (radosgw's bucket index updates, object overwrites) and their bytes
    osd_rw_ops: int | None = None
    osd_rw_bytes: int | None = None
    #: of the bytes the OSDs read, those BlueStore's cache answered and those read from the device
    osd_cache_hit_bytes: int | None = None
    osd_cache_miss_bytes: int | None = None
    health_before: str | None = None
    health_after: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def unwritten_ratio(self) -> float | None:
        return unwritten_share(self.unwritten_before_bytes, self.area_bytes)

    @property
    def cache_hit_share(self) -> float | None:
        """Of the bytes BlueStore read during the run, the share its cache answered (None: not read, or none)."""
        hit, miss = self.osd_cache_hit_bytes, self.osd_cache_miss_bytes
        if hit is None or miss is None or hit + miss <= 0:
            return None
        return hit / (hit + miss)


def format_ceph_activity(a: CephActivity) -> list[str]:
    """What the OSDs did, in a line or two."""
    from ..storage._util import format_bytes

    lines = []
    if a.osd_read_ops is not None:
        def lat(ns: float | None) -> str:
            return f", {ns / 1000:.0f} us mean at the OSD" if ns else ""

        lines.append(
            f"OSDs ({a.osds}): read {a.osd_read_ops} ops / {format_bytes(a.osd_read_bytes)}{lat(a.osd_read_latency_ns)}; "
            f"wrote {a.osd_write_ops} ops / {format_bytes(a.osd_write_bytes)}{lat(a.osd_write_latency_ns)}"
            + (f"; read-modify-write {a.osd_rw_ops} ops / {format_bytes(a.osd_rw_bytes)}" if a.osd_rw_ops else "")
        )
    share = a.cache_hit_share
    if share is not None:
        lines.append(f"BlueStore's cache answered {100 * share:.0f} % of the bytes the OSDs read ({format_bytes(a.osd_cache_hit_bytes)} "
                     f"of {format_bytes((a.osd_cache_hit_bytes or 0) + (a.osd_cache_miss_bytes or 0))}"
                     + ("; the rest from the devices)" if a.osd_cache_miss_bytes else ")"))  # fmt: skip
    if a.unwritten_before_bytes is not None and a.area_bytes:
        lines.append(f"never written before the run: {format_bytes(a.unwritten_before_bytes)} of {format_bytes(a.area_bytes)}")
    if a.health_before or a.health_after:
        lines.append(f"cluster health: {a.health_before or '?'} before, {a.health_after or '?'} after")
    lines.extend(f"problem: {p}" for p in a.problems)
    return lines
