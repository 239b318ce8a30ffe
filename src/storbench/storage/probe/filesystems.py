"""The filesystem holding a target (edge): the mount, then the details its family's probe reads."""

from __future__ import annotations

import dataclasses

from ..localfs import EXT_FSTYPES
from ..mounts import NETWORK_FSTYPES, ZFS_FSTYPES, FindmntEntry, split_source
from ..records import FilesystemInfo
from . import localfs
from .base import Probe


def describe_filesystem(probe: Probe, entry: FindmntEntry, target: str) -> FilesystemInfo:
    source, fsroot = split_source(entry.source)
    fs = FilesystemInfo(mountpoint=entry.target, source=entry.source, fstype=entry.fstype, options=entry.options, fsroot=fsroot)
    kind = entry.fstype
    if kind == "btrfs":
        fs = dataclasses.replace(fs, btrfs=localfs.describe_btrfs(probe, entry, target))
    elif kind == "xfs":
        fs = dataclasses.replace(fs, xfs=localfs.describe_xfs(probe, entry))
    elif kind in EXT_FSTYPES:
        fs = dataclasses.replace(fs, ext4=localfs.describe_ext(probe, entry))
    elif kind in ZFS_FSTYPES:  # the families a target may not have: imported where met
        from . import zfs

        fs = dataclasses.replace(fs, zfs=zfs.describe_dataset(probe, source, implementation=zfs.implementation_of(kind)))
    elif kind in NETWORK_FSTYPES:
        from . import network

        fs = dataclasses.replace(fs, network=network.describe_network(probe, entry, target, source))
    return fs
