"""The ZFS probe (edge): ``zfs get``, ``zpool get``, ``zpool status`` for a dataset or zvol."""

from __future__ import annotations

import os

from ..block import DeviceInfo
from ..zfs import (
    ZFS_DATASET_PROPERTIES,
    ZPOOL_PROPERTIES,
    ZfsInfo,
    parse_zfs_get,
    parse_zpool_status,
    zfs_info_from,
    zvol_dataset_from_path,
)
from .base import _Probe


def describe_dataset(probe: _Probe, dataset: str) -> ZfsInfo | None:
    """Dataset and pool properties and the vdev layout of ``dataset``."""
    props_out = probe.run(
        ["zfs", "get", "-Hp", "-o", "property,value", ",".join(ZFS_DATASET_PROPERTIES), dataset], f"zfs properties of {dataset}"
    )
    pool = dataset.split("/", 1)[0]
    pool_out = probe.run(["zpool", "get", "-Hp", ",".join(ZPOOL_PROPERTIES), pool], f"zpool properties of {pool}")
    status_out = probe.run(["zpool", "status", "-P", pool], f"vdev layout of {pool}")
    status = None
    if status_out:
        pools = [p for p in parse_zpool_status(status_out) if p.pool == pool]
        status = pools[0] if pools else None
        if status is None:
            probe.note(f"vdev layout of {pool} not understood")
    return zfs_info_from(
        dataset,
        parse_zfs_get(props_out) if props_out else (),
        parse_zfs_get(pool_out) if pool_out else (),
        status,
    )


def leaf_knames(probe: _Probe, zfs: ZfsInfo) -> list[str]:
    """Kernel names of the pool's leaf devices, data vdevs first."""
    knames: list[str] = []
    order = {"data": 0, "special": 1, "dedup": 2, "log": 3, "cache": 4, "spare": 5}
    for vdev in sorted(zfs.vdevs, key=lambda v: order.get(v.role, 9)):
        for dev in vdev.devices:
            if not dev.startswith("/dev/"):
                if dev.startswith("/"):
                    probe.note(f"zfs pool {zfs.pool}: vdev {dev} is a file")
                else:
                    probe.note(f"zfs pool {zfs.pool}: vdev {dev} has no path (run zpool status -P)")
                continue
            kname = probe.kname_of(dev)
            if kname and kname not in knames:
                knames.append(kname)
    if not zfs.vdevs:
        probe.note(f"zfs pool {zfs.pool}: devices unknown")
    return knames


def describe_zvol(probe: _Probe, dev: DeviceInfo) -> tuple[ZfsInfo | None, list[str]]:
    """The dataset behind a zvol device (``zd*``) and the knames of its pool's devices."""
    dataset = probe.zvol_hints.get(dev.kname)
    for root, _dirs, files in [] if dataset else os.walk("/dev/zvol"):
        for f in files:
            p = os.path.join(root, f)
            if os.path.basename(os.path.realpath(p)) == dev.kname:
                dataset = zvol_dataset_from_path(p)
                break
        if dataset:
            break
    if dataset is None:
        probe.note(f"{dev.kname}: zvol dataset unknown (no link under /dev/zvol)")
        return None, []
    zfs = describe_dataset(probe, dataset)
    return zfs, leaf_knames(probe, zfs) if zfs else []
