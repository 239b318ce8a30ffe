"""The device write cache during sync/fsync workloads.

Checks (ids):

* ``volatile-write-cache`` -- a workload that makes writes durable (``sync=1`` / O_SYNC,
  ``fsync=N``, ``fdatasync=N``, ``write_barrier=N``) runs on devices whose queue reports
  a volatile write cache (``/sys/block/DEV/queue/write_cache`` = ``write back``).  The
  kernel then sends a cache flush with every sync; what that costs depends on the
  device: with power-loss protection it is acknowledged from the cache (fast and safe),
  a drive that honours it writes its cache out (slow and safe), and virtual disks or some
  consumer drives ignore it (fast and not power-safe).  The figure alone cannot tell which.
* ``write-cache-off`` -- every device reports ``write through``: the kernel sends no
  flushes.  Power-safe if the device really has no volatile cache or has power-loss
  protection; a ``write through`` written into sysfs by hand hides a volatile cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.storage import StorageInfo

from ._common import CheckInfo, Options, finding, join, sync_reasons, uses_kernel_io, writes

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

WRITE_BACK = "write back"
WRITE_THROUGH = "write through"

INFO = {
    "volatile-write-cache": CheckInfo(
        title="Volatile write cache under sync writes",
        explanation="The workload makes writes durable (O_SYNC, fsync, fdatasync) but the devices report a volatile write cache, so the result says little about power-safe latency unless the device has power-loss protection (or honours every flush).",
        evidence="sync=1 (or dsync), fsync>0, fdatasync>0 or write_barrier>0 on a write workload, and a device under the target whose queue/write_cache is 'write back'.",
        fix="For power-safe sync latency use a device with power-loss protection, or turn the drive's cache off (hdparm -W 0 /dev/sdX, nvme set-feature DEV -f 6 -v 0); writing 'write through' into sysfs only stops the kernel's flushes.",
        severities=("warning",),
        preflight=True,
    ),
    "write-cache-off": CheckInfo(
        title="Write cache reported off",
        explanation="The devices report 'write through', so the kernel sends no cache flushes and each sync waits only for the device's acknowledgement; power-safe if the device truly has no volatile cache or has power-loss protection.",
        evidence="A sync/fsync write workload and every device under the target with a known queue/write_cache reports 'write through'.",
        fix="Nothing, if the device has power-loss protection or no volatile cache; otherwise check the drive's own cache setting (hdparm -W /dev/sdX) and compare with it on.",
        severities=("info",),
        preflight=True,
    ),
}


def _judge(options: Options, storage: StorageInfo | None) -> list[Finding]:
    if storage is None or not storage.devices or not uses_kernel_io(options) or not writes(options):
        return []
    reasons = sync_reasons(options)
    if not reasons:
        return []
    how = join(reasons)
    known = [d for d in storage.devices if d.write_cache]
    back = [d.kname for d in known if d.write_cache.strip().lower() == WRITE_BACK]  # type: ignore[union-attr]
    if back:
        word = "reports" if len(back) == 1 else "report"
        return [
            finding(
                "volatile-write-cache",
                "warning",
                f"{how} makes every write wait for stable storage, but {join(back)} {word} a volatile write cache "
                f"({WRITE_BACK!r}): each sync becomes a cache flush, and the result shows power-safe latency only if "
                "the device has power-loss protection or honours every flush (virtual disks and some consumer drives do not)",
                "for power-safe sync latency use a device with power-loss protection, or turn the drive's cache off "
                "(hdparm -W 0 /dev/sdX; nvme set-feature DEV -f 6 -v 0), not by writing 'write through' into sysfs",
            )
        ]
    if known and all(d.write_cache.strip().lower() == WRITE_THROUGH for d in known):  # type: ignore[union-attr]
        names = [d.kname for d in known]
        word = "reports" if len(names) == 1 else "report"
        return [
            finding(
                "write-cache-off",
                "info",
                f"{how} on {join(names)}, which {word} {WRITE_THROUGH!r}: the kernel sends no cache flushes, so the "
                "result is power-safe latency only if the device truly has no volatile cache or has power-loss protection",
                "nothing if the device has power-loss protection; otherwise check the drive's own cache setting (hdparm -W /dev/sdX)",
            )
        ]
    return []


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    return _judge(options, storage)


def check(ctx: CheckContext) -> list[Finding]:
    return _judge(ctx.options, ctx.storage)
