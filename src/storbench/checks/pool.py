"""The pool changed under the run: a ZFS pool degraded, scrubbing or resilvering while measured.

Check (id): ``pool-not-healthy`` -- a degraded pool (a mirror member offline or faulted)
reads from fewer devices and writes to fewer; a scrub or resilver competes with fio for
every device of the pool.  Either way the figure is not the pool's normal speed.  The
pool's state is read before and after every workload (:mod:`storbench.backend`), so a
member taken offline or a scrub started during the run is caught too.  Also before the
run, from the storage description.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.storage import StorageInfo

from ._common import CheckInfo, Options, finding

if TYPE_CHECKING:  # pragma: no cover
    from ..backend.zfs import PoolState
    from .context import CheckContext

INFO = {
    "pool-not-healthy": CheckInfo(
        title="The pool was degraded, scrubbing or resilvering",
        explanation="A degraded pool serves I/O from fewer devices, and a scrub or resilver competes with the benchmark for every device, so the figure is not the pool's normal speed.",
        evidence="zpool status before or after the workload: the pool's state is not ONLINE, a vdev or device is not ONLINE (OFFLINE, DEGRADED, FAULTED, UNAVAIL, REMOVED), or a scrub or resilver is in progress.",
        fix="Bring every device online (zpool online POOL DEV), let the resilver or scrub finish (zpool status) or stop the scrub (zpool scrub -s POOL), then run again.",
        severities=("warning",),
        preflight=True,
    ),
}


def _describe(state: PoolState | None) -> list[str]:
    parts: list[str] = []
    if state is None:
        return parts
    if (state.state or "").upper() != "ONLINE":
        parts.append(f"the pool was {state.state}")
    parts.extend(f"{name} was {st}" for name, st in state.vdev_states)
    if state.scan_active:
        parts.append(f"a {state.scan_active} was in progress")
    return parts


def check(ctx: CheckContext) -> list[Finding]:
    zfs = ctx.backend.zfs if ctx.backend is not None else None
    if zfs is None:
        return []
    said: list[str] = []
    for when, state in (("before", zfs.before), ("after", zfs.after)):
        parts = _describe(state)
        if parts:
            said.append(f"{when} the run {', '.join(parts)}")
    if not said:
        return []
    return [
        finding(
            "pool-not-healthy",
            "warning",
            f"ZFS pool {zfs.pool} changed the measurement: {'; '.join(said)} (zpool status); the figure is not the pool's normal speed",
            f"zpool online {zfs.pool} DEV for offline devices, wait for the resilver or scrub to finish (zpool status {zfs.pool}) "
            f"or stop the scrub (zpool scrub -s {zfs.pool}), then run again",
        )
    ]


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    zfs = storage.zfs if storage is not None else None
    if zfs is None:
        return []
    parts = []
    state = zfs.pool_state or zfs.pool_health
    if state and state.upper() != "ONLINE":
        parts.append(f"the pool is {state}")
    parts.extend(f"{v.name} is {v.state}" for v in zfs.vdevs if v.state and v.state.upper() != "ONLINE")
    parts.extend(f"{name} is {st}" for v in zfs.vdevs for name, st in v.unhealthy)
    if zfs.scan_active:
        parts.append(f"a {zfs.scan_active} is in progress")
    if not parts:
        return []
    return [
        finding(
            "pool-not-healthy",
            "warning",
            f"ZFS pool {zfs.pool}: {', '.join(parts)}; a benchmark now does not measure the pool's normal speed",
            f"zpool online {zfs.pool} DEV for offline devices, or wait for the resilver or scrub to finish (zpool status {zfs.pool})",
        )
    ]
