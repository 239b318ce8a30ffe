"""Network shares that acknowledge writes before the server has them.

Check (id): ``share-write-ack`` -- sshfs without ``-o sync_write`` answers a write as soon as
it is queued for the server, so write figures can be several times the server's speed
(randwrite QD16 here: ~40k IOPS against ~5k for reads); an NFS mount without ``sync`` (the
default) and an SMB mount with client caching (``cache=strict``, the default, or ``loose``)
gather buffered writes in the client's memory until a close or an fsync.  The figure then
measures the client, not the share.  Writes that fio itself syncs (``sync=1``, ``fsync=N``,
``fdatasync=N``) wait for the server on every protocol; direct I/O bypasses the NFS and SMB
client caches (not sshfs's queue).  Also before the run, from the storage description.

Check (id): ``lun-write-cache`` -- an iSCSI LUN whose caching mode page says WCE=1 (tgt's
default) acknowledges writes from the target's write-back cache; unsynced write figures then
measure that cache (here: turning tgt's cache off cut random writes to 30-60 %).  Read from the
description's export (``write_cache=on``), which storbench fills with a MODE SENSE of its own.

Check (id): ``share-mount-limits`` -- a mounted NFS or kernel SMB share whose own options shape
the figure before the server does: ``soft`` (a server that stalls past ``timeo``x``retrans`` makes
the client fail the I/O with EIO instead of waiting: a stalled second becomes errors or a short
run, not a slow figure), or an ``rsize``/``wsize`` smaller than the workload's block size (each of
fio's I/Os becomes several RPCs: a large-block figure then measures small requests).  From the
mount table, before the run.

Check (id): ``bridge-cpu-bound`` -- an iSCSI LUN or NFS file reached through storbench's qemu-nbd
bridge, whose one process used at least :data:`BRIDGE_BUSY_SHARE` of a CPU while fio ran: the
bridge, not the server, may have set the pace (fio's own libiscsi and nfs engines did 1.3-2.6 times
its IOPS here).  Read from the bridge's CPU time (``/proc/PID/stat``) around the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.errors import UsageError
from storbench.model import Finding
from storbench.storage import StorageInfo

from ._common import CheckInfo, Options, finding, fix_of, is_direct, reads, rw_mode, sync_reasons, writes

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: the share of one CPU from which the bridge is said to have set the pace
BRIDGE_BUSY_SHARE = 0.85

INFO = {
    "share-write-ack": CheckInfo(
        title="Writes acknowledged before the server has them",
        explanation="The share's client answers writes before the server has them (sshfs without sync_write, NFS without sync, SMB with client caching), so write figures measure the client's queue or memory, not the share.",
        evidence="A workload that writes, on an sshfs mount without -o sync_write (even with direct=1), on an NFS or kernel SMB mount whose options let the client cache writes with buffered I/O, or on an nfs:// target (qemu's nfs driver sends UNSTABLE writes; fio's own nfs engine, client=fio, sends them and cannot sync at all); fio's own sync=1, fsync=N or fdatasync=N makes every write wait and silences it, and so does an nfs-ganesha beside storbench whose export says NFS_Commit = true (storbench reads its configuration).",
        fix="Mount with the option that makes writes wait (sshfs -o sync_write, NFS sync, SMB cache=none), or add fsync=1 (or sync=1) to the workload to measure committed writes.",
        severities=("warning",),
        preflight=True,
    ),
    "lun-write-cache": CheckInfo(
        title="The LUN acknowledges writes from its server's cache",
        explanation="The iSCSI LUN's caching mode page has WCE set (tgt's default): the target acknowledges a write once it is in its write-back cache (the server's RAM), so write figures without a sync measure that cache, and comparing them with an NFS export that commits (or with a LUN whose cache is off) compares caches, not protocols.",
        evidence="A workload that writes without sync=1, fsync or fdatasync, on an iscsi:// target whose MODE SENSE caching page says WCE=1 (storbench reads it before the run).",
        fix="Turn the LUN's write cache off on the target (tgt: a caching mode page with WCE=0) or add fsync=1 (or sync=1) to the workload; compare protocols with the same acknowledgement.",
        severities=("warning",),
        preflight=True,
    ),
    "share-mount-limits": CheckInfo(
        title="The share's mount options shape the figure",
        explanation="A mounted NFS or SMB share is mounted soft (a stalled server makes I/O fail instead of wait) or with an rsize/wsize smaller than the workload's blocks (each I/O becomes several requests), so the figure is the mount's, not the server's.",
        evidence="An NFS mount with soft in its options, or an NFS or kernel SMB mount whose rsize (for a workload that reads) or wsize (for one that writes) is smaller than the workload's bs.",
        fix="Mount with hard (NFS's default) and with rsize/wsize at least the workload's block size (1 MiB is the usual NFS maximum).",
        severities=("warning",),
        preflight=True,
    ),
    "bridge-cpu-bound": CheckInfo(
        title="The userspace bridge set the pace",
        explanation="storbench reached the iSCSI LUN or NFS file through qemu-nbd, a bridge of one process on this machine; when it is busy most of a CPU, the figure is the bridge's, not the server's or the network's.",
        evidence=f"An iscsi:// or nfs:// target through the qemu-nbd bridge whose CPU time (utime + stime of /proc/PID/stat, before and after the run) was at least {BRIDGE_BUSY_SHARE:.0%} of the run's wall time.",
        fix="Reach the target with fio's own engine (append ?client=fio to the URI; make install builds it), or run on a client with idle cores; compare clients before comparing servers.",
        severities=("warning",),
    ),
}


def _lun_cache(options: Options, storage: StorageInfo | None) -> list[Finding]:
    export = storage.export if storage is not None else None
    if export is None or not writes(options) or sync_reasons(options):
        return []
    if export.protocol == "nfs" and "server_commit=true" in export.details:
        return []  # the server commits every WRITE before it answers (ganesha's NFS_Commit = true)
    if export.protocol == "nfs" and "writes=unstable until a commit" in export.details:
        return [
            finding(
                "share-write-ack",
                "warning",
                f"NFS export {export.export} on {export.server} reached through qemu's nfs driver, whose WRITEs are UNSTABLE "
                f"until a COMMIT (sent only when fio syncs): the {rw_mode(options)} figure measures how fast the server takes "
                "writes into its cache, not how fast it stores them",
                "add fsync=1 (or end_fsync=1) to the workload, or make the server commit every write (ganesha: NFS_Commit = true)",
            )
        ]
    if export.protocol == "nfs" and "writes=unstable, never committed" in export.details:
        return [
            finding(
                "share-write-ack",
                "warning",
                f"NFS export {export.export} on {export.server} reached by fio's own nfs engine, which cannot sync: its "
                f"WRITEs are UNSTABLE and never committed, so the {rw_mode(options)} figure measures how fast the server "
                "takes writes into its cache, not how fast it stores them",
                "drop client=fio and add fsync=1 (the qemu-nbd bridge commits on a sync), or make the server commit every "
                "write (ganesha: NFS_Commit = true)",
            )
        ]
    if export.protocol != "iscsi" or "write_cache=on" not in export.details:
        return []
    return [
        finding(
            "lun-write-cache",
            "warning",
            f"iSCSI LUN {export.export} on {export.server} has its write cache on (WCE=1 in its caching mode page): the "
            f"{rw_mode(options)} writes were acknowledged from the server's cache, so the figure measures that cache, "
            "not the storage under it",
            fix_of(INFO["lun-write-cache"]),
        )
    ]


def _judge(options: Options, storage: StorageInfo | None) -> list[Finding]:
    return _lun_cache(options, storage) + _share(options, storage) + _mount_limits(options, storage)


def _block_bytes(options: Options) -> int | None:
    from storbench.units import parse_size

    text = options.get("bs") or options.get("blocksize")
    if not text or "," in text or ":" in text or "-" in text:  # per-direction or ranged sizes: not judged
        return None
    try:
        return parse_size(text)
    except UsageError:  # a size fio reads but storbench does not: not judged
        return None


def _mount_limits(options: Options, storage: StorageInfo | None) -> list[Finding]:
    from storbench.units import format_bytes

    fs = storage.filesystem if storage is not None else None
    net = fs.network if fs is not None else None
    if fs is None or net is None or net.protocol not in ("nfs", "smb") or net.client != "kernel":
        return []
    said = []
    if net.protocol == "nfs" and "soft" in net.cache_options:
        said.append("it is mounted soft: a server that stalls past timeo x retrans makes the client fail the I/O with EIO "
                    "instead of waiting, so a stall shows as errors or a short run, not as a slow figure")  # fmt: skip
    bs = _block_bytes(options)
    if bs is not None:
        for size, word, does in ((net.rsize_bytes, "rsize", reads(options)), (net.wsize_bytes, "wsize", writes(options))):
            if does and size is not None and size < bs:
                said.append(f"{word}={format_bytes(size)} is smaller than the workload's bs={format_bytes(bs)}: each I/O "
                            f"is {-(-bs // size)} requests to the server")  # fmt: skip
    if not said:
        return []
    return [finding("share-mount-limits", "warning", f"{fs.fstype} share of {net.share} from {net.server} at {fs.mountpoint}: "
                    + "; ".join(said), fix_of(INFO["share-mount-limits"]))]  # fmt: skip


def _share(options: Options, storage: StorageInfo | None) -> list[Finding]:
    fs = storage.filesystem if storage is not None else None
    net = fs.network if fs is not None else None
    if net is None or net.writes_wait_for_server is not False or not writes(options) or sync_reasons(options):
        return []
    if net.client != "sshfs" and is_direct(options):
        return []  # O_DIRECT goes past the NFS and SMB page caches
    assert fs is not None  # it holds net
    server = f" from {net.server}" if net.server else ""
    return [
        finding(
            "share-write-ack",
            "warning",
            f"{fs.fstype} share{server} at {fs.mountpoint}: {net.write_ack_option}; the {rw_mode(options)} figure "
            "measures how fast the client takes writes, not how fast the server stores them",
            {
                "sshfs": "mount with sshfs -o sync_write (or add fsync=1 to the workload)",
                "smb": "mount with cache=none (or add fsync=1 to the workload)",
                "nfs": "mount with -o sync (or add fsync=1 to the workload)",
            }.get(net.client if net.client == "sshfs" else (net.protocol or ""), "add fsync=1 to the workload"),
        )
    ]


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    return _judge(options, storage)


def check(ctx: CheckContext) -> list[Finding]:
    return _judge(ctx.options, ctx.storage) + _bridge(ctx)


def _bridge(ctx: CheckContext) -> list[Finding]:
    bridge = ctx.backend.bridge if ctx.backend is not None else None
    share = bridge.cpu_share if bridge is not None else None
    if bridge is None or share is None or share < BRIDGE_BUSY_SHARE:
        return []
    return [
        finding(
            "bridge-cpu-bound",
            "warning",
            f"qemu-nbd, the bridge to {ctx.storage.export.uri if ctx.storage and ctx.storage.export else 'the target'}, used "
            f"{share:.0%} of a CPU while fio ran ({bridge.cpu_s:.2f} s of CPU in {bridge.wall_s:.2f} s): the bridge, not the "
            "server, may have set the pace",
            "append ?client=fio to the URI (fio's own engine, no bridge) or run on a client with idle cores",
        )
    ]
