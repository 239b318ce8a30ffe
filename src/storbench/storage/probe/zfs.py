"""The ZFS probe (edge): ``zfs get``, ``zpool get``, ``zpool status`` and the ARC's kstats.

Works against kernel OpenZFS 2.x and zfs-fuse (pool version 23), whose tools differ:
zfs-fuse's ``zpool get`` takes no options (a table with human sizes), ``zpool status``
has no ``-P`` (leaves are bare names such as ``loop1``), many dataset properties are
missing (``sync``, ``logicalused`` ...), and the ARC's counters are one file each under
``/zfs-kstat/zfs/arcstats/``.  Each question is asked in OpenZFS's form first, then in
zfs-fuse's; a property this ZFS lacks is recorded in :attr:`ZfsInfo.unavailable`.
"""

from __future__ import annotations

import os

from ..block import DeviceInfo
from ..zfs import (
    ArcStats,
    ZfsInfo,
    ZfsProperty,
    parse_arcstats,
    parse_zfs_get,
    parse_zpool_get_table,
    parse_zpool_status,
    unavailable_properties,
    zfs_info_from,
    zvol_dataset_from_path,
)
from .base import Probe, read_text

#: Where each implementation keeps the ARC's counters.
OPENZFS_ARCSTATS = "/proc/spl/kstat/zfs/arcstats"
ZFS_FUSE_ARCSTATS_DIR = "/zfs-kstat/zfs/arcstats"
#: Where a leaf device named without a path (``zpool status`` without ``-P``) may be found.
LEAF_DIRS: tuple[str, ...] = ("/dev", "/dev/disk/by-id", "/dev/disk/by-vdev", "/dev/disk/by-path", "/dev/disk/by-partuuid")


def implementation_of(fstype: str | None) -> str | None:
    return {"zfs": "OpenZFS", "fuse.zfs": "zfs-fuse"}.get(fstype or "")


def read_arcstats(openzfs_path: str = OPENZFS_ARCSTATS, fuse_dir: str = ZFS_FUSE_ARCSTATS_DIR) -> ArcStats | None:
    """The ARC's counters now, from whichever implementation is running; None when neither is."""
    text = read_text(openzfs_path)
    if text is not None:
        return parse_arcstats(text)
    try:
        names = sorted(os.listdir(fuse_dir))
    except OSError:
        return None
    lines = []
    for name in names:
        value = read_text(os.path.join(fuse_dir, name))
        if value is not None:
            lines.append(f"{name} {value.strip()}")
    return parse_arcstats("\n".join(lines)) if lines else None


def describe_dataset(probe: Probe, dataset: str, *, implementation: str | None = None) -> ZfsInfo | None:
    """Dataset and pool properties, the vdev layout and the ARC of ``dataset``."""
    pool = dataset.split("/", 1)[0]
    props_out = probe.run(["zfs", "get", "-Hp", "-o", "property,value", "all", dataset], f"zfs properties of {dataset}")
    props = parse_zfs_get(props_out) if props_out else ()
    got_pool = probe.run_first(
        [["zpool", "get", "-Hp", "all", pool], ["zpool", "get", "all", pool]], f"zpool properties of {pool}"
    )
    pool_props: tuple[ZfsProperty, ...] = ()
    if got_pool is not None:
        form, out = got_pool
        pool_props = parse_zfs_get(out) if form == 0 else parse_zpool_get_table(out)
        if form == 1 and implementation is None:
            implementation = "zfs-fuse"  # only zfs-fuse's zpool get refuses -H
    got_status = probe.run_first([["zpool", "status", "-P", pool], ["zpool", "status", pool]], f"vdev layout of {pool}")
    status = None
    if got_status is not None:
        pools = [p for p in parse_zpool_status(got_status[1]) if p.pool == pool]
        status = pools[0] if pools else None
        if status is None:
            probe.note(f"vdev layout of {pool} not understood")
    ds_type = next((p.value for p in props if p.property == "type"), None)
    unavailable = unavailable_properties(props, ds_type) if props else ()
    arc = read_arcstats()
    if arc is None:
        probe.note("ZFS ARC statistics not read: neither /proc/spl/kstat/zfs/arcstats nor /zfs-kstat/zfs/arcstats exists")
    return zfs_info_from(
        dataset, props, pool_props, status,
        implementation=implementation or "OpenZFS", unavailable=unavailable, arc=arc,
    )  # fmt: skip


def leaf_path(name: str, dirs: tuple[str, ...] = LEAF_DIRS) -> str | None:
    """``/dev/sdc1`` as is; ``loop1`` or ``ata-WDC...-part1`` (no ``-P``) found under ``dirs``."""
    if name.startswith("/"):
        return name
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.exists(path):
            return path
    return None


def leaf_knames(probe: Probe, zfs: ZfsInfo) -> list[str]:
    """Kernel names of the pool's leaf devices, data vdevs first."""
    knames: list[str] = []
    order = {"data": 0, "special": 1, "dedup": 2, "log": 3, "cache": 4, "spare": 5}
    for vdev in sorted(zfs.vdevs, key=lambda v: order.get(v.role, 9)):
        for dev in vdev.devices:
            path = leaf_path(dev)
            if path is None:
                probe.note(f"zfs pool {zfs.pool}: vdev {dev} not found under {', '.join(LEAF_DIRS)}")
                continue
            if not path.startswith("/dev/"):
                probe.note(f"zfs pool {zfs.pool}: vdev {dev} is a file")
                continue
            kname = probe.kname_of(path)
            if kname and kname not in knames:
                knames.append(kname)
    if not zfs.vdevs:
        probe.note(f"zfs pool {zfs.pool}: devices unknown")
    return knames


def describe_zvol(probe: Probe, dev: DeviceInfo) -> tuple[ZfsInfo | None, list[str]]:
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
    zfs = describe_dataset(probe, dataset, implementation="OpenZFS")  # zfs-fuse has no zvols
    return zfs, leaf_knames(probe, zfs) if zfs else []
