"""The whole description of a target: :class:`StorageInfo` and :class:`FilesystemInfo`, built from the family records."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONObject

from .block import DeviceInfo
from .host import HostInfo
from .localfs import BtrfsInfo, Ext4Info, XfsInfo
from .mounts import mount_option

if TYPE_CHECKING:  # the families a target may not have: imported where they are met (record_types)
    from .ceph import CephInfo
    from .health import DriveHealth
    from .network import ExportInfo, NetworkInfo
    from .raid import RaidController
    from .zfs import ZfsInfo


@functools.cache
def record_types() -> JSONObject:
    """Every record class a description may hold, by name: what its annotations name (the
    stored form's reader resolves them here; the families are imported on first call)."""
    from . import block, ceph, health, host, localfs, network, raid, zfs

    names: JSONObject = {}
    for module in (block, ceph, health, host, localfs, network, raid, zfs):
        names.update({k: v for k, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__})
    names.update(FilesystemInfo=FilesystemInfo, StorageInfo=StorageInfo)
    return names


@dataclass(frozen=True)
class FilesystemInfo:
    """The mounted filesystem that holds a target (``findmnt -T``).

    ``source`` is as findmnt shows it (``/dev/loop2[/vol1]``, ``tank/vm``,
    ``server:/export``); ``fsroot`` is the bracketed part (a btrfs subvolume or a
    bind-mounted directory).  At most one of the per-filesystem records is set.
    """

    mountpoint: str
    source: str
    fstype: str
    options: tuple[str, ...] = ()
    fsroot: str | None = None
    btrfs: BtrfsInfo | None = None
    xfs: XfsInfo | None = None
    ext4: Ext4Info | None = None  # ext2 and ext3 too
    zfs: ZfsInfo | None = None
    network: NetworkInfo | None = None

    @property
    def compression(self) -> str | None:
        """The compression that applies to new data, whatever the filesystem."""
        if self.btrfs is not None:
            return self.btrfs.compression_property or self.btrfs.compression
        if self.zfs is not None:
            return self.zfs.compression
        return None

    def option(self, key: str) -> str | None:
        """Value of mount option ``key=value`` (``""`` for a bare flag present, None if absent)."""
        return mount_option(self.options, key)


@dataclass(frozen=True)
class StorageInfo:
    """Everything between a target path and the hardware.

    ``devices``: the top of the chain first (the device the filesystem sits on, or
    the target block device), then its parents level by level down to the physical
    devices; each device once.
    """

    target: str
    target_kind: str  # "dir", "file", "block" or "nbd"
    filesystem: FilesystemInfo | None
    devices: tuple[DeviceInfo, ...]
    host: HostInfo | None = None
    notes: tuple[str, ...] = ()
    #: a network block export reached without a mount (``target_kind`` ``nbd``)
    export: ExportInfo | None = None
    #: the Ceph cluster under an RBD image or a RADOS pool (``target_kind`` ``rbd``, ``rados``)
    ceph: CephInfo | None = None
    #: the physical drives' own SMART / health reading when the description was made (smartctl)
    drives: tuple[DriveHealth, ...] = ()
    #: hardware RAID controllers on the host (storcli/perccli, MegaCli, ssacli), when their tool is installed
    controllers: tuple[RaidController, ...] = ()

    def device(self, kname: str) -> DeviceInfo | None:
        for dev in self.devices:
            if dev.kname == kname or dev.name == kname or dev.path == kname:
                return dev
        return None

    @property
    def zfs(self) -> ZfsInfo | None:
        """The ZFS dataset under the target: its filesystem's, or the zvol a block target is."""
        if self.filesystem is not None:
            return self.filesystem.zfs
        parents = {p for d in self.devices for p in d.parents}
        return next((d.zvol for d in self.devices if d.kname not in parents and d.zvol is not None), None)


def with_server_side(export: ExportInfo, served: StorageInfo | None, path: str) -> ExportInfo:
    """``export`` with what holds ``path`` on this machine (``served``: the description of that
    path), its server side. Pure."""
    import dataclasses

    if served is None:
        return export
    fstype = served.filesystem.fstype if served.filesystem is not None else None
    return dataclasses.replace(export, server_path=path, server_fstype=fstype, server_zfs=served.zfs)
