"""The Ceph sampler (edge): the OSDs' counters before and after fio runs, the area's written part
before (``rbd diff`` of an image, ``rados stat`` of the object), ``ceph health`` both times;
commands from :mod:`storbench.targets.ceph` (the target's configuration and client, a timeout)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol

from storbench.jsontypes import JSONObject

from ..storage.ceph import (
    OsdCounters,
    parse_osd_perf_dump,
    parse_rados_stat,
    parse_rbd_diff,
    parse_rbd_info,
    written_within,
)
from .activity import BackendActivity
from .ceph import CephActivity

if TYPE_CHECKING:
    from ..model import Target


def _last(out: str, err: str, rc: int) -> str:
    from ..targets.ceph import first_line

    return first_line(out, err, rc)


class CephCli(Protocol):
    """``run(tool, *args) -> (returncode, stdout, stderr)``: one ceph/rbd/rados command (tests swap it)."""

    def __call__(self, tool: str, *args: str) -> tuple[int, str, str]: ...


class CephSampler:
    def __init__(self, target: Target, pool: str, *, image: str | None = None, obj: str | None = None, area_bytes: int | None = None,
                 run: CephCli | None = None) -> None:  # fmt: skip
        from ..targets import ceph

        self.pool = pool
        self.image = image
        self.obj = obj
        self.area_bytes = area_bytes
        self._run = run or (lambda tool, *args: ceph.cli(target, tool, *args))
        self._silent = False  # the cluster stopped answering: ask nothing more this run
        self._before: OsdCounters | None = None
        self._activity = CephActivity(pool=pool, image=image, object=obj)

    def run(self, tool: str, *args: str) -> tuple[int, str, str]:
        """One command, unless the cluster has already failed to answer one (each waits up to a timeout)."""
        from ..targets.ceph import unreachable

        if self._silent:
            return (1, "", "skipped: the cluster did not answer an earlier command")
        rc, out, err = self._run(tool, *args)
        if rc != 0 and unreachable(rc, out, err):
            self._silent = True
        return rc, out, err

    def _counters(self, problems: list[str], when: str) -> OsdCounters | None:
        rc, out, err = self.run("ceph", "tell", "osd.*", "perf", "dump", "-f", "json")  # every section: osd and bluestore
        if rc != 0:
            if rc != 127:
                problems.append(f"ceph tell osd.* perf dump {when} the run failed: {_last(out, err, rc)}")
            return None
        try:
            return parse_osd_perf_dump(out)
        except ValueError as exc:
            problems.append(f"OSD counters {when} the run: {exc}")
            return None

    def _health(self) -> str | None:
        rc, out, _err = self.run("ceph", "health")
        words = out.split()
        return words[0] if rc == 0 and words else None

    def _unwritten(self, problems: list[str]) -> tuple[int | None, int | None]:
        area = self.area_bytes
        if self.image is not None:
            spec = f"{self.pool}/{self.image}"
            rc, out, _err = self.run("rbd", "info", "--format", "json", spec)
            try:
                size = parse_rbd_info(out).size_bytes if rc == 0 else None
            except ValueError:
                size = None
            area = min(area, size) if area and size else (area or size)
            rc, out, err = self.run("rbd", "diff", "--format", "json", spec)
            if rc != 0:
                if rc != 127:
                    problems.append(f"rbd diff {spec} failed: {_last(out, err, rc)}")
                return area, None
            try:
                return area, (area - written_within(parse_rbd_diff(out), area)) if area else None
            except ValueError as exc:
                problems.append(f"rbd diff {spec}: {exc}")
                return area, None
        if self.obj is not None and area:
            rc, out, err = self.run("rados", "--pool", self.pool, "stat", self.obj)
            if rc != 0:
                return area, area if "No such file" in err else None  # not there yet: all of it unwritten
            try:
                return area, max(0, area - (parse_rados_stat(out) or 0))
            except ValueError as exc:
                problems.append(f"rados stat {self.obj}: {exc}")
        return area, None

    def __enter__(self) -> CephSampler:
        problems: list[str] = []
        area, unwritten = self._unwritten(problems)
        health = self._health()
        self._before = self._counters(problems, "before")
        self._activity = dataclasses.replace(self._activity, area_bytes=area, unwritten_before_bytes=unwritten,
                                             health_before=health, problems=tuple(problems))  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        problems = list(self._activity.problems)
        after = self._counters(problems, "after")
        deltas: JSONObject = {}
        b = self._before
        if b is not None and after is not None and after.read_ops >= b.read_ops and after.write_ops >= b.write_ops:
            reads, writes = after.read_ops - b.read_ops, after.write_ops - b.write_ops
            deltas = {
                "osds": after.osds,
                "osd_read_ops": reads,
                "osd_read_bytes": after.read_bytes - b.read_bytes,
                "osd_read_latency_ns": (after.read_latency_s - b.read_latency_s) * 1e9 / reads if reads else None,
                "osd_write_ops": writes,
                "osd_write_bytes": after.write_bytes - b.write_bytes,
                "osd_write_latency_ns": (after.write_latency_s - b.write_latency_s) * 1e9 / writes if writes else None,
                "osd_rw_ops": after.rw_ops - b.rw_ops,
                "osd_rw_bytes": after.rw_bytes - b.rw_bytes,
            }
            hit0, miss0, hit1, miss1 = b.cache_hit_bytes, b.cache_miss_bytes, after.cache_hit_bytes, after.cache_miss_bytes
            if hit0 is not None and miss0 is not None and hit1 is not None and miss1 is not None and hit1 >= hit0 and miss1 >= miss0:
                deltas["osd_cache_hit_bytes"], deltas["osd_cache_miss_bytes"] = hit1 - hit0, miss1 - miss0
        elif b is not None and after is not None:
            problems.append("an OSD restarted during the run (its counters went back): what the OSDs served is not known")
        if self._silent:
            problems.append("the Ceph cluster stopped answering (an OSD or monitor down?): what the OSDs served is not known")
        self._activity = dataclasses.replace(self._activity, health_after=self._health(), problems=tuple(problems), **deltas)

    def activity(self) -> BackendActivity:
        return BackendActivity(ceph=self._activity)
