"""Differences (pure): the settings that can change a result, and which of them differ between two descriptions."""

from __future__ import annotations

from collections.abc import Sequence

from .block import DeviceInfo
from .format import chain_levels
from .records import StorageInfo


def _text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


_DEVICE_SETTINGS = (
    "type",
    "model",
    "transport",
    "rotational",
    "scheduler",
    "nr_requests",
    "write_cache",
    "discard",
    "read_ahead_kb",
    "logical_block_size_bytes",
    "physical_block_size_bytes",
    "loop_dio",
)


_ZFS_SETTINGS = (
    "dataset_type",
    "recordsize_bytes",
    "volblocksize_bytes",
    "compression",
    "sync",
    "primarycache",
    "secondarycache",
    "logbias",
    "atime",
    "relatime",
    "dedup",
    "checksum",
    "copies",
    "special_small_blocks_bytes",
    "encryption",
    "pool_ashift",
    "layout",
    "implementation",
)


def _chain_shape(devices: Sequence[DeviceInfo]) -> str:
    return " -> ".join("+".join(d.type for d in level) for level in chain_levels(devices)) or "-"


def _settings(info: StorageInfo, *, whole_chain: bool = True) -> dict[str, str]:
    """The settings that can change a result, as (field path -> text), in a stable order.

    ``whole_chain``: every device by position (``devices[i]``); otherwise only the
    physical devices (those the chain is not built on anything else), as ``physical[i]``.
    """
    out: dict[str, str] = {"target.kind": info.target_kind}
    fs = info.filesystem
    out["filesystem.fstype"] = _text(fs.fstype if fs else None)
    if fs is not None:
        out["filesystem.options"] = _text(fs.options)
        out["filesystem.compression"] = _text(fs.compression)
        if fs.btrfs is not None:
            for key in ("compression_forced", "data_profile", "metadata_profile", "system_profile"):
                out[f"filesystem.btrfs.{key}"] = _text(getattr(fs.btrfs, key))
            out["filesystem.btrfs.device_count"] = _text(len(fs.btrfs.devices) or None)
        if fs.xfs is not None:
            for key in ("block_size_bytes", "inode_size_bytes", "agcount", "sunit_blocks", "swidth_blocks", "log_location", "log_blocks", "log_block_size_bytes", "realtime", "features"):
                out[f"filesystem.xfs.{key}"] = _text(getattr(fs.xfs, key))
        if fs.ext4 is not None:
            for key in ("block_size_bytes", "inode_size_bytes", "raid_stride_blocks", "raid_stripe_width_blocks", "flex_bg_size", "journal_size_bytes", "features"):
                out[f"filesystem.ext4.{key}"] = _text(getattr(fs.ext4, key))
        if fs.zfs is not None:
            for key in _ZFS_SETTINGS:
                out[f"filesystem.zfs.{key}"] = _text(getattr(fs.zfs, key))
        if fs.network is not None:
            for key in ("server", "share", "protocol_version", "transport", "rsize_bytes", "wsize_bytes", "protocol", "client",
                        "cache_options", "writes_wait_for_server"):
                out[f"filesystem.network.{key}"] = _text(getattr(fs.network, key))
    c = info.ceph
    if c is not None:
        out["ceph.version"] = _text(c.version)
        out["ceph.osds"] = _text(c.osds)
        if c.pool is not None:
            for key in ("type", "size", "min_size", "pg_num", "erasure_code_profile"):
                out[f"ceph.pool.{key}"] = _text(getattr(c.pool, key))
        out["ceph.osd.objectstores"] = _text(tuple(sorted({o.objectstore or "?" for o in c.osd_details})) or None)
        out["ceph.osd.device_classes"] = _text(tuple(sorted({o.device_class or "?" for o in c.osd_details})) or None)
        if c.image is not None:
            out["ceph.image.object_size_bytes"] = _text(c.image.object_size_bytes)
            out["ceph.image.features"] = _text(c.image.features)
    out["devices.chain"] = _chain_shape(info.devices)
    if whole_chain:
        compared = [(f"devices[{i}]", dev) for i, dev in enumerate(info.devices)]
    else:
        knames = {d.kname for d in info.devices}
        bottom = [d for d in info.devices if not any(p in knames for p in d.parents)]
        compared = [(f"physical[{i}]", dev) for i, dev in enumerate(bottom)]
    for label, dev in compared:
        for key in _DEVICE_SETTINGS:
            out[f"{label}.{key}"] = _text(getattr(dev, key))
        if dev.zvol is not None:
            for key in _ZFS_SETTINGS:
                out[f"{label}.zvol.{key}"] = _text(getattr(dev.zvol, key))
    h = info.host
    for key in ("hostname", "kernel", "distribution", "cpu_model", "cpu_count", "mem_bytes", "fio_version"):
        out[f"host.{key}"] = _text(getattr(h, key) if h else None)
    return out


def differences(a: StorageInfo, b: StorageInfo) -> list[tuple[str, str, str]]:
    """Settings that differ between ``a`` and ``b``: (field path, value in a, value in b).

    Field paths name the record field (``filesystem.options``, ``filesystem.zfs.recordsize_bytes``,
    ``devices[1].scheduler``, ``host.kernel``).  Devices are compared by position in the
    chain (top first), since names like ``loop3`` change between runs; when the chains
    have different shapes (``loop -> disk`` against ``disk``), ``devices.chain`` says so and
    only the physical devices are compared, as ``physical[i]``.  Identities (paths, serial
    numbers, sizes, backing files) are not settings and are not compared.  A value one
    side lacks shows as ``-``.
    """
    same_shape = _chain_shape(a.devices) == _chain_shape(b.devices)
    sa, sb = _settings(a, whole_chain=same_shape), _settings(b, whole_chain=same_shape)
    keys = list(sa) + [k for k in sb if k not in sa]
    return [(k, sa.get(k, "-"), sb.get(k, "-")) for k in keys if sa.get(k, "-") != sb.get(k, "-")]

