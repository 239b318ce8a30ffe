"""The storage under a target: how the bytes of a directory, file or block device reach hardware.

A :class:`StorageInfo` answers "what was this result measured on?": the filesystem
(type, mount options and the settings that change performance: btrfs compression and
RAID profiles, XFS geometry, ext4 stripe hints, ZFS dataset and pool properties and
vdev layout, the server of a network share), every block device from the one the
filesystem sits on down to the physical disks (scheduler, queue depth, write cache,
loop backing file and direct-I/O flag, ...), and the host.

One room per layer or family, pure parsers apart from the code that runs the tools:

* pure: :mod:`.mounts`, :mod:`.block`, :mod:`.localfs` (btrfs, XFS, ext4), :mod:`.zfs`,
  :mod:`.network`, :mod:`.host` (records and ``parse_*`` functions, each tested on recorded
  outputs in ``tests/data/storage``); :mod:`.records` (the whole description),
  :mod:`.codec` (stored form), :mod:`.format` (text), :mod:`.diff` (what differs);
* the edge: :mod:`.probe` (:func:`describe_target`, :func:`describe_host`) runs ``findmnt``,
  ``lsblk``, ``xfs_info``, ``dumpe2fs``, ``btrfs``, ``zfs`` and ``zpool`` through an injected
  :class:`CommandRunner` (argument lists, never a shell) and reads ``/sys``, ``/proc`` and
  ``/etc/os-release``.  A missing tool or an unreadable file never raises: it adds a line
  to :attr:`StorageInfo.notes` saying what could not be read and why.

Imports go one way: ``_util`` <- families <- ``records`` <- ``codec``/``format``/``diff``,
and ``probe`` on top.  Units are in the field names (``size_bytes``, ``read_ahead_kb``,
``sunit_blocks``); ``None`` means "not known", never "zero".

May import: process (the probes' commands), units and errors; never targets, run, store or
render.
"""

from __future__ import annotations

from ..units import read_size as parse_size  # the public name of tool-output sizes
from ._util import format_bytes
from .block import (
    DeviceInfo,
    SysfsBlock,
    device_from_sysfs,
    lsblk_mountpoints,
    parse_lsblk_json,
    parse_scheduler,
)
from .codec import FORMAT_VERSION, storage_from_dict, storage_to_dict
from .host import HostInfo, parse_cpuinfo_model, parse_meminfo_total, parse_os_release
from .localfs import (
    EXT_FSTYPES,
    BtrfsInfo,
    BtrfsSpace,
    Ext4Info,
    XfsInfo,
    btrfs_compression_from_options,
    btrfs_info_from,
    parse_btrfs_fi_df,
    parse_btrfs_fi_show,
    parse_btrfs_fi_usage,
    parse_btrfs_property,
    parse_dumpe2fs,
    parse_xfs_info,
)
from .mounts import (
    MEMORY_FSTYPES,
    NETWORK_FSTYPES,
    FindmntEntry,
    mount_for_path,
    mount_option,
    parse_findmnt_json,
    parse_mountinfo,
    split_mount_options,
    split_source,
)
from .records import FilesystemInfo, StorageInfo

__all__ = [
    "EXT_FSTYPES",
    "FORMAT_VERSION",
    "MEMORY_FSTYPES",
    "NETWORK_FSTYPES",
    "ZFS_DATASET_PROPERTIES",
    "ZPOOL_PROPERTIES",
    "BtrfsInfo",
    "BtrfsSpace",
    "CommandRunner",
    "DeviceInfo",
    "Ext4Info",
    "FilesystemInfo",
    "FindmntEntry",
    "HostInfo",
    "NetworkInfo",
    "StorageInfo",
    "SubprocessRunner",
    "SysfsBlock",
    "XfsInfo",
    "ZfsInfo",
    "ZfsProperty",
    "ZfsVdev",
    "ZpoolStatus",
    "btrfs_compression_from_options",
    "btrfs_info_from",
    "describe_host",
    "describe_target",
    "device_from_sysfs",
    "differences",
    "format_bytes",
    "format_chain",
    "format_storage",
    "lsblk_mountpoints",
    "mount_for_path",
    "mount_option",
    "network_info_from_mount",
    "parse_btrfs_fi_df",
    "parse_btrfs_fi_show",
    "parse_btrfs_fi_usage",
    "parse_btrfs_property",
    "parse_cpuinfo_model",
    "parse_dumpe2fs",
    "parse_findmnt_json",
    "parse_lsblk_json",
    "parse_meminfo_total",
    "parse_mountinfo",
    "parse_network_source",
    "parse_os_release",
    "parse_scheduler",
    "parse_size",
    "parse_xfs_info",
    "parse_zfs_get",
    "parse_zpool_status",
    "split_mount_options",
    "split_source",
    "storage_brief",
    "storage_from_dict",
    "storage_to_dict",
    "zfs_info_from",
    "zpool_layout",
    "zvol_dataset_from_path",
]

#: names whose module is imported when one of them is first used: the edge (:mod:`.probe`:
#: findmnt, lsblk, zpool, smartctl, ...), so that the pure readers of the records (checks,
#: compare, render) do not load it; the families a target may not have (ZFS, network shares)
#: and the text and difference of descriptions, so that a run on ext4 does not load them
_LAZY: dict[str, str] = {
    **dict.fromkeys(("CommandRunner", "SubprocessRunner", "describe_host", "describe_target"), "probe"),
    **dict.fromkeys(("NetworkInfo", "network_info_from_mount", "parse_network_source"), "network"),
    **dict.fromkeys(("ZFS_DATASET_PROPERTIES", "ZPOOL_PROPERTIES", "ZfsInfo", "ZfsProperty", "ZfsVdev", "ZpoolStatus",
                     "parse_zfs_get", "parse_zpool_status", "zfs_info_from", "zpool_layout", "zvol_dataset_from_path"), "zfs"),
    **dict.fromkeys(("format_chain", "format_storage", "storage_brief"), "format"),
    "differences": "diff",
}  # fmt: skip


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
