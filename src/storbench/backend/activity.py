"""What the back-ends under one target did during one fio run (:class:`BackendActivity`: one
record per kind, None where the target has no such back-end) and what a kind's sampler is
(:class:`BackendSampler`). Each kind's records are in its own pure module (:mod:`.zfs`,
:mod:`.nbd`, ...); the samplers (:mod:`.zfs_sampler`, ...) import this module, never the package's
face.

May import: the standard library, and each kind's records for the type checker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from .bridge import BridgeActivity
    from .bucket import BucketActivity
    from .ceph import CephActivity
    from .hardware import HardwareActivity
    from .nbd import NbdActivity
    from .nfs_server import NfsServerActivity
    from .rgw import RgwActivity
    from .zfs import ZfsActivity


@dataclass(frozen=True)
class BackendActivity:
    """What the back-ends under one target did during one fio run (None: not that kind)."""

    zfs: ZfsActivity | None = None
    nbd: NbdActivity | None = None
    ceph: CephActivity | None = None
    #: the drives' own SMART / health readings before and after the run
    hardware: HardwareActivity | None = None
    #: the CPU of the userspace bridge (qemu-nbd) an iSCSI or NFS target went through
    bridge: BridgeActivity | None = None
    #: what the nfs-ganesha beside storbench served for an NFS target's export (its own counters)
    nfs_server: NfsServerActivity | None = None
    #: what a Ceph radosgw under an S3 target served (its own request counters)
    rgw: RgwActivity | None = None
    #: what an S3 target's bucket held before and after the run (the server's own count, or the run's prefix listed)
    bucket: BucketActivity | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        parts = (self.zfs, self.nbd, self.ceph, self.hardware, self.bridge, self.nfs_server, self.rgw, self.bucket)
        return tuple(p for part in parts if part is not None for p in part.problems)


class BackendSampler(Protocol):
    """A back-end's sampler: entered before fio starts, left after it ends, then asked what it saw."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    def activity(self) -> BackendActivity: ...
