"""The storage under a target: how the bytes of a directory, file or block device reach hardware.

A :class:`StorageInfo` answers "what was this result measured on?": the filesystem
(type, mount options and the settings that change performance: btrfs compression and
RAID profiles, XFS geometry, ext4 stripe hints, ZFS dataset and pool properties and
vdev layout, the server of a network share), every block device from the one the
filesystem sits on down to the physical disks (scheduler, queue depth, write cache,
loop backing file and direct-I/O flag, ...), and the host.

The module has two halves:

* **Pure parsers and functions** (``parse_*``, :func:`storage_to_dict`,
  :func:`storage_from_dict`, :func:`format_storage`, :func:`differences`): text or
  records in, records or text out.  Every tool's output format is handled by one
  ``parse_*`` function that is tested on recorded outputs (``tests/data/storage``).
* **The edge** (:func:`describe_target`, :func:`describe_host`): runs ``findmnt``,
  ``lsblk``, ``xfs_info``, ``dumpe2fs``, ``btrfs``, ``zfs`` and ``zpool`` through an
  injected :class:`CommandRunner` (argument lists, never a shell) and reads ``/sys``,
  ``/proc`` and ``/etc/os-release``.  A missing tool or an unreadable file never raises:
  it adds a line to :attr:`StorageInfo.notes` saying what could not be read and why.

Units are in the field names (``size_bytes``, ``read_ahead_kb``, ``sunit_blocks``);
``None`` means "not known", never "zero".
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import stat
import subprocess
import types
import typing
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Protocol, Sequence

from storbench.errors import StoreError

#: Version of :func:`storage_to_dict`'s form.  Bump when a key is renamed, removed or changes meaning.
FORMAT_VERSION = 1

#: Filesystems whose data lives on another machine; their mount source names the server.
NETWORK_FSTYPES: frozenset[str] = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "sshfs", "9p", "ceph", "glusterfs", "fuse.glusterfs"}
)
#: Filesystems that live in memory: there is no device under them.
MEMORY_FSTYPES: frozenset[str] = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})
EXT_FSTYPES: frozenset[str] = frozenset({"ext2", "ext3", "ext4"})

#: ZFS dataset properties storbench records (``zfs get``); all but ``type`` are settings.
ZFS_DATASET_PROPERTIES: tuple[str, ...] = (
    "type",
    "recordsize",
    "volblocksize",
    "volsize",
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
    "special_small_blocks",
    "encryption",
)
#: ZFS pool properties storbench records (``zpool get``).
ZPOOL_PROPERTIES: tuple[str, ...] = ("ashift", "health", "size", "autotrim")


# =========================================================================== records


@dataclass(frozen=True)
class HostInfo:
    """The machine a result was measured on."""

    hostname: str | None
    kernel: str | None  # uname -r
    distribution: str | None  # /etc/os-release PRETTY_NAME
    cpu_model: str | None
    cpu_count: int | None
    mem_bytes: int | None
    fio_version: str | None = None  # as ``fio --version`` prints it ("fio-3.33")


@dataclass(frozen=True)
class BtrfsInfo:
    """btrfs settings that change what a benchmark measures.

    ``compression`` is the mount option's algorithm as the kernel shows it
    (``zstd:3``), ``compression_forced`` says it came from ``compress-force=``;
    ``compression_property`` is ``btrfs property get TARGET compression`` (``zstd``;
    None when unset or unreadable).  Profiles are btrfs's words (``single``, ``DUP``,
    ``RAID1``, ``RAID10``, ``RAID5``, ``RAID6``, ``RAID1C3``).
    """

    compression: str | None = None
    compression_forced: bool = False
    compression_property: str | None = None
    data_profile: str | None = None
    metadata_profile: str | None = None
    system_profile: str | None = None
    data_total_bytes: int | None = None
    data_used_bytes: int | None = None
    metadata_total_bytes: int | None = None
    metadata_used_bytes: int | None = None
    subvolume: str | None = None  # mount option subvol=
    devices: tuple[str, ...] = ()  # ``btrfs filesystem show``: every device of the filesystem


@dataclass(frozen=True)
class XfsInfo:
    """XFS geometry from ``xfs_info``.

    ``sunit_blocks``/``swidth_blocks`` are in filesystem blocks (``block_size_bytes``),
    as xfs_info prints them; ``features`` keeps the on-disk feature flags as
    ``name=value`` strings (``crc=1``, ``reflink=1``, ``ftype=1`` ...).
    """

    block_size_bytes: int | None = None
    sector_size_bytes: int | None = None
    inode_size_bytes: int | None = None
    agcount: int | None = None
    ag_blocks: int | None = None
    data_blocks: int | None = None
    sunit_blocks: int | None = None
    swidth_blocks: int | None = None
    log_location: str | None = None  # "internal" or "external"
    log_blocks: int | None = None
    log_block_size_bytes: int | None = None
    log_version: int | None = None
    log_sunit_blocks: int | None = None
    realtime: str | None = None  # "none" or "external"
    features: tuple[str, ...] = ()

    @property
    def stripe_unit_bytes(self) -> int | None:
        if self.sunit_blocks is None or self.block_size_bytes is None:
            return None
        return self.sunit_blocks * self.block_size_bytes

    @property
    def stripe_width_bytes(self) -> int | None:
        if self.swidth_blocks is None or self.block_size_bytes is None:
            return None
        return self.swidth_blocks * self.block_size_bytes


@dataclass(frozen=True)
class Ext4Info:
    """ext2/3/4 superblock settings from ``dumpe2fs -h``.

    ``raid_stride_blocks`` / ``raid_stripe_width_blocks`` are in filesystem blocks
    (None when the superblock has none).
    """

    block_size_bytes: int | None = None
    block_count: int | None = None
    inode_size_bytes: int | None = None
    features: tuple[str, ...] = ()
    raid_stride_blocks: int | None = None
    raid_stripe_width_blocks: int | None = None
    flex_bg_size: int | None = None
    journal_size_bytes: int | None = None
    default_mount_options: tuple[str, ...] = ()
    state: str | None = None


@dataclass(frozen=True)
class ZfsVdev:
    """One top-level vdev of a pool, from ``zpool status -P``.

    ``role``: ``data``, ``log``, ``cache``, ``special``, ``dedup`` or ``spare``.
    ``kind``: ``mirror``, ``raidz1``/``raidz2``/``raidz3``, ``draid``, or ``disk``
    for a single device (a stripe member, a single log, a cache device).
    ``devices`` are the leaf devices as zpool printed them (full paths with ``-P``).
    """

    role: str
    kind: str
    name: str
    devices: tuple[str, ...]
    state: str | None = None


@dataclass(frozen=True)
class ZfsProperty:
    """One line of ``zfs get -H`` / ``zpool get -H`` (``name`` and ``source`` only in the 4-column form)."""

    property: str
    value: str
    name: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class ZfsInfo:
    """A ZFS dataset (filesystem or zvol) and its pool.

    Sizes are bytes (``zfs get -p``); switches keep ZFS's words (``on``, ``off``,
    ``standard``, ``all``, ``latency`` ...).
    """

    dataset: str
    pool: str
    dataset_type: str | None = None  # "filesystem" or "volume"
    recordsize_bytes: int | None = None
    volblocksize_bytes: int | None = None  # zvols only
    volsize_bytes: int | None = None  # zvols only
    compression: str | None = None
    sync: str | None = None
    primarycache: str | None = None
    secondarycache: str | None = None
    logbias: str | None = None
    atime: str | None = None
    relatime: str | None = None
    dedup: str | None = None
    checksum: str | None = None
    copies: int | None = None
    special_small_blocks_bytes: int | None = None
    encryption: str | None = None
    pool_ashift: int | None = None  # 0 = chosen automatically per vdev at creation
    pool_health: str | None = None
    pool_size_bytes: int | None = None
    pool_autotrim: str | None = None
    pool_state: str | None = None  # "state:" of zpool status
    vdevs: tuple[ZfsVdev, ...] = ()

    @property
    def layout(self) -> str | None:
        return zpool_layout(self.vdevs)


@dataclass(frozen=True)
class NetworkInfo:
    """Where a network filesystem's data lives, and the client settings that shape its speed."""

    server: str | None
    share: str | None
    protocol_version: str | None = None  # vers=
    transport: str | None = None  # proto= (nfs)
    rsize_bytes: int | None = None
    wsize_bytes: int | None = None


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
class DeviceInfo:
    """One block device of the chain under a target.

    ``name`` is lsblk's NAME (``vg0-data`` for device-mapper), ``kname`` the kernel
    name (``dm-1``).  ``type`` is lsblk's TYPE (``disk``, ``part``, ``loop``, ``lvm``,
    ``crypt``, ``dm``, ``raid1`` ..., ``md``), with ``nbd`` for network block devices.
    ``parents`` are the knames of the devices this one is built on (``slaves``; for a
    partition its disk; for a loop device the device holding its backing file; for a
    zvol the pool's devices).  ``transport`` is lsblk's TRAN, or ``virtio`` for virtio
    disks (which lsblk reports without a transport).  ``rotational`` is what the
    kernel believes, which virtual disks often get wrong.
    """

    name: str
    kname: str
    type: str
    path: str | None = None
    size_bytes: int | None = None
    model: str | None = None
    vendor: str | None = None
    serial: str | None = None
    transport: str | None = None
    rotational: bool | None = None
    scheduler: str | None = None
    nr_requests: int | None = None
    logical_block_size_bytes: int | None = None
    physical_block_size_bytes: int | None = None
    write_cache: str | None = None  # "write back" / "write through"
    discard: bool | None = None
    discard_max_bytes: int | None = None
    read_ahead_kb: int | None = None
    loop_backing_file: str | None = None
    loop_dio: bool | None = None
    zvol: ZfsInfo | None = None  # the dataset behind a zvol (zd*)
    parents: tuple[str, ...] = ()


@dataclass(frozen=True)
class StorageInfo:
    """Everything between a target path and the hardware.

    ``devices``: the top of the chain first (the device the filesystem sits on, or
    the target block device), then its parents level by level down to the physical
    devices; each device once.
    """

    target: str
    target_kind: str  # "dir", "file" or "block"
    filesystem: FilesystemInfo | None
    devices: tuple[DeviceInfo, ...]
    host: HostInfo | None = None
    notes: tuple[str, ...] = ()

    def device(self, kname: str) -> DeviceInfo | None:
        for dev in self.devices:
            if dev.kname == kname or dev.name == kname or dev.path == kname:
                return dev
        return None


@dataclass(frozen=True)
class FindmntEntry:
    """One filesystem of ``findmnt -J`` output."""

    target: str
    source: str
    fstype: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class BtrfsSpace:
    """One line of ``btrfs filesystem df``: ``Data, single: total=..., used=...``."""

    kind: str  # "Data", "Metadata", "System", "GlobalReserve"
    profile: str
    total_bytes: int
    used_bytes: int


@dataclass(frozen=True)
class ZpoolStatus:
    """The parts of ``zpool status -P POOL`` storbench uses."""

    pool: str
    state: str | None
    vdevs: tuple[ZfsVdev, ...]


@dataclass(frozen=True)
class SysfsBlock:
    """Raw attributes of one block device under /sys (strings as read; None = unreadable)."""

    kname: str
    size_sectors: str | None = None
    scheduler: str | None = None
    nr_requests: str | None = None
    write_cache: str | None = None
    discard_max_bytes: str | None = None
    read_ahead_kb: str | None = None
    rotational: str | None = None
    logical_block_size: str | None = None
    physical_block_size: str | None = None
    model: str | None = None
    vendor: str | None = None
    serial: str | None = None
    loop_backing_file: str | None = None
    loop_dio: str | None = None
    dm_name: str | None = None
    dm_uuid: str | None = None
    md_level: str | None = None
    is_partition: bool = False
    partition_of: str | None = None
    slaves: tuple[str, ...] = ()


# =========================================================================== pure helpers


_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "KIB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "MIB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "GIB": 1024**3,
    "T": 1024**4,
    "TB": 1024**4,
    "TIB": 1024**4,
    "P": 1024**5,
    "PIB": 1024**5,
}


def parse_size(text: str | None) -> int | None:
    """``"4096"`` / ``"4096k"`` / ``"8.00MiB"`` / ``"128M"`` -> bytes (binary units); None if not a size."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m:
        return None
    unit = m.group(2).upper()
    if unit not in _SIZE_UNITS:
        return None
    return int(round(float(m.group(1)) * _SIZE_UNITS[unit]))


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "y"):
        return True
    if text in ("0", "false", "no", "off", "n"):
        return False
    return None


def _str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def format_bytes(n: int | None) -> str:
    """Binary units, exact where possible: ``67108864`` -> ``"64 MiB"``, ``1.8 TiB``."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            if unit == "B":
                return f"{int(value)} B"
            if value == int(value):
                return f"{int(value)} {unit}"
            return f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def split_mount_options(text: str | None) -> tuple[str, ...]:
    """``"rw,relatime,compress=zstd:3"`` -> ``("rw", "relatime", "compress=zstd:3")``."""
    if not text:
        return ()
    return tuple(part for part in text.split(",") if part)


def mount_option(options: Iterable[str], key: str) -> str | None:
    """Last value of ``key`` in ``options`` (``""`` for a bare flag), None when absent."""
    found: str | None = None
    for opt in options:
        name, sep, value = opt.partition("=")
        if name == key:
            found = value if sep else ""
    return found


def split_source(source: str) -> tuple[str, str | None]:
    """findmnt's ``/dev/loop2[/vol1]`` -> ``("/dev/loop2", "/vol1")``; other sources unchanged."""
    m = re.fullmatch(r"(.*?)\[(/[^\]]*)\]", source)
    if m and m.group(1):
        return m.group(1), m.group(2)
    return source, None


def parse_network_source(fstype: str, source: str, options: Sequence[str] = ()) -> tuple[str | None, str | None]:
    """(server, share) from a network mount source.

    ``server:/export`` and ``[fd00::1]:/export`` (nfs), ``//server/share`` (cifs/smb3),
    ``user@host:/path`` (sshfs), and a 9p mount tag (share only; server from ``addr=``).
    """
    source = source.strip()
    if fstype in ("cifs", "smb3", "smbfs") or source.startswith("//") or source.startswith("\\\\"):
        text = source.replace("\\", "/").lstrip("/")
        server, _, share = text.partition("/")
        return (server or None), (share or None)
    if fstype == "9p":
        return mount_option(options, "addr") or None, source or None
    m = re.fullmatch(r"(?:[^@/]+@)?\[([^\]]+)\]:(.*)", source)
    if m:
        return m.group(1), m.group(2) or None
    m = re.fullmatch(r"(?:[^@/]+@)?([^:/]+):(.*)", source)
    if m:
        return m.group(1), m.group(2) or None
    return None, source or None


def network_info_from_mount(fstype: str, source: str, options: Sequence[str]) -> NetworkInfo:
    server, share = parse_network_source(fstype, source, options)
    return NetworkInfo(
        server=server,
        share=share,
        protocol_version=mount_option(options, "vers") or None,
        transport=mount_option(options, "proto") or None,
        rsize_bytes=_int(mount_option(options, "rsize")),
        wsize_bytes=_int(mount_option(options, "wsize")),
    )


def btrfs_compression_from_options(options: Sequence[str]) -> tuple[str | None, bool]:
    """(algorithm, forced) from btrfs mount options; ``compress-force=`` wins over ``compress=``."""
    forced = mount_option(options, "compress-force")
    if forced is not None:
        return (forced or "zlib"), True
    plain = mount_option(options, "compress")
    if plain is not None:
        if plain in ("no", "none"):
            return None, False
        return (plain or "zlib"), False
    return None, False


def parse_scheduler(text: str | None) -> str | None:
    """``"none [mq-deadline] kyber bfq"`` -> ``"mq-deadline"``; a single word is the scheduler."""
    if text is None:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    if m:
        return m.group(1)
    words = text.split()
    return words[0] if len(words) == 1 else None


# =========================================================================== tool parsers


def parse_findmnt_json(text: str) -> tuple[FindmntEntry, ...]:
    """``findmnt -J -o TARGET,SOURCE,FSTYPE,OPTIONS`` -> entries (nested ``children`` flattened).

    Raises ValueError on text that is not findmnt JSON.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("filesystems"), list):
        raise ValueError("not findmnt JSON: no 'filesystems' list")
    out: list[FindmntEntry] = []

    def walk(items: list) -> None:
        for item in items:
            if not isinstance(item, dict):
                continue
            out.append(
                FindmntEntry(
                    target=str(item.get("target") or ""),
                    source=str(item.get("source") or ""),
                    fstype=str(item.get("fstype") or ""),
                    options=split_mount_options(item.get("options")),
                )
            )
            walk(item.get("children") or [])

    walk(data["filesystems"])
    return tuple(out)


def _unescape_mountinfo(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text: str) -> tuple[FindmntEntry, ...]:
    """``/proc/self/mountinfo`` -> entries like findmnt's (options = mount options + superblock options).

    Used when findmnt is missing.  ``source`` carries the fsroot in brackets when it is
    not ``/``, as findmnt shows it.
    """
    out: list[FindmntEntry] = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf = left.split()
        rf = right.split()
        if len(lf) < 6 or len(rf) < 2:
            continue
        root, mountpoint, mount_opts = _unescape_mountinfo(lf[3]), _unescape_mountinfo(lf[4]), lf[5]
        fstype, source = rf[0], _unescape_mountinfo(rf[1])
        super_opts = rf[2] if len(rf) > 2 else ""
        options: list[str] = []
        for opt in split_mount_options(mount_opts) + split_mount_options(super_opts):
            if opt not in options and not (opt in ("rw", "ro") and ("rw" in options or "ro" in options)):
                options.append(opt)
        if root != "/" and source.startswith("/"):
            source = f"{source}[{root}]"
        out.append(FindmntEntry(target=mountpoint, source=source, fstype=fstype, options=tuple(options)))
    return tuple(out)


def mount_for_path(entries: Sequence[FindmntEntry], path: str) -> FindmntEntry | None:
    """The entry whose mountpoint is the longest prefix of ``path`` (the last one mounted wins)."""
    best: FindmntEntry | None = None
    for entry in entries:
        mp = entry.target.rstrip("/") or "/"
        if path == mp or path.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best.target.rstrip("/") or "/"):
                best = entry
    return best


def _lsblk_type(raw_type: str | None, kname: str) -> str:
    kind = (raw_type or "").strip() or "disk"
    if kind == "disk" and kname.startswith("nbd"):
        return "nbd"
    return kind


def _transport(tran: Any, subsystems: Any) -> str | None:
    tran = _str(tran)
    if tran:
        return tran
    subs = (_str(subsystems) or "").split(":")
    if "virtio" in subs:
        return "virtio"
    return None


def parse_lsblk_json(text: str, *, inverse: bool = True) -> tuple[DeviceInfo, ...]:
    """``lsblk -J -b -O [-s] DEV`` -> devices, top first, each kname once.

    With ``inverse`` (``-s``), an entry's ``children`` are the devices it is built on
    (its parents); without it they are the devices built on it.  Accepts both the
    typed JSON of util-linux >= 2.33 and the all-strings JSON of older versions.
    Device order is breadth first from the roots.  Raises ValueError on text that is
    not lsblk JSON.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("blockdevices"), list):
        raise ValueError("not lsblk JSON: no 'blockdevices' list")
    order: list[str] = []
    base: dict[str, dict] = {}
    parents: dict[str, list[str]] = {}

    queue: deque[tuple[dict, str | None]] = deque((item, None) for item in data["blockdevices"])
    while queue:
        item, container = queue.popleft()
        if not isinstance(item, dict):
            continue
        kname = _str(item.get("kname")) or _str(item.get("name")) or ""
        if not kname:
            continue
        kname = kname.rsplit("/", 1)[-1]
        if kname not in base:
            base[kname] = item
            parents[kname] = []
            order.append(kname)
        if container is not None:
            if inverse:
                if kname not in parents[container]:
                    parents[container].append(kname)
            elif container not in parents[kname]:
                parents[kname].append(container)
        for child in item.get("children") or []:
            queue.append((child, kname))

    out: list[DeviceInfo] = []
    for kname in order:
        item = base[kname]
        disc_max = _int(item.get("disc-max"))
        name = _str(item.get("name")) or kname
        out.append(
            DeviceInfo(
                name=name.rsplit("/", 1)[-1] if name.startswith("/dev/") else name,
                kname=kname,
                type=_lsblk_type(_str(item.get("type")), kname),
                path=_str(item.get("path")),
                size_bytes=_int(item.get("size")),
                model=_str(item.get("model")),
                vendor=_str(item.get("vendor")),
                serial=_str(item.get("serial")),
                transport=_transport(item.get("tran"), item.get("subsystems")),
                rotational=_bool(item.get("rota")),
                scheduler=_str(item.get("sched")),
                nr_requests=_int(item.get("rq-size")),
                logical_block_size_bytes=_int(item.get("log-sec")),
                physical_block_size_bytes=_int(item.get("phy-sec")),
                discard=None if disc_max is None else disc_max > 0,
                discard_max_bytes=disc_max,
                read_ahead_kb=_int(item.get("ra")),
                parents=tuple(parents[kname]),
            )
        )
    return tuple(out)


def lsblk_mountpoints(text: str) -> tuple[str, ...]:
    """Mount points of the first device in ``lsblk -J`` output (``mountpoints`` or ``mountpoint``)."""
    data = json.loads(text)
    devs = data.get("blockdevices") or []
    if not devs:
        return ()
    first = devs[0]
    points = first.get("mountpoints")
    if points is None:
        points = [first.get("mountpoint")]
    return tuple(p for p in points if p)


def device_from_sysfs(raw: SysfsBlock, base: DeviceInfo | None = None) -> DeviceInfo:
    """Merge sysfs attributes into ``base`` (from lsblk) or build a device from sysfs alone.

    sysfs wins for the queue settings (it is what the kernel uses now); lsblk wins for
    names, type, model and transport.
    """
    kname = raw.kname
    if base is None:
        if kname.startswith("loop"):
            kind = "loop"
        elif kname.startswith("dm-"):
            uuid = raw.dm_uuid or ""
            prefix = uuid.split("-", 1)[0].upper() if "-" in uuid else ""
            kind = {"LVM": "lvm", "CRYPT": "crypt", "MPATH": "mpath"}.get(prefix, "part" if prefix.startswith("PART") else "dm")
        elif kname.startswith("md"):
            kind = raw.md_level or "md"
        elif kname.startswith("nbd"):
            kind = "nbd"
        elif raw.is_partition:
            kind = "part"
        else:
            kind = "disk"
        sectors = _int(raw.size_sectors)
        base = DeviceInfo(
            name=raw.dm_name or kname,
            kname=kname,
            type=kind,
            path=f"/dev/mapper/{raw.dm_name}" if raw.dm_name else f"/dev/{kname}",
            size_bytes=None if sectors is None else sectors * 512,
            model=_str(raw.model),
            vendor=_str(raw.vendor),
            serial=_str(raw.serial),
        )
        parents: tuple[str, ...] = tuple(raw.slaves) or ((raw.partition_of,) if raw.partition_of else ())
    else:
        parents = base.parents or tuple(raw.slaves) or ((raw.partition_of,) if raw.partition_of else ())
    disc_max = _int(raw.discard_max_bytes)
    return dataclasses.replace(
        base,
        rotational=_bool(raw.rotational) if raw.rotational is not None else base.rotational,
        scheduler=parse_scheduler(raw.scheduler) if raw.scheduler is not None else base.scheduler,
        nr_requests=_int(raw.nr_requests) if raw.nr_requests is not None else base.nr_requests,
        logical_block_size_bytes=_int(raw.logical_block_size) or base.logical_block_size_bytes,
        physical_block_size_bytes=_int(raw.physical_block_size) or base.physical_block_size_bytes,
        write_cache=_str(raw.write_cache) or base.write_cache,
        discard_max_bytes=disc_max if disc_max is not None else base.discard_max_bytes,
        discard=(disc_max > 0) if disc_max is not None else base.discard,
        read_ahead_kb=_int(raw.read_ahead_kb) if raw.read_ahead_kb is not None else base.read_ahead_kb,
        loop_backing_file=_str(raw.loop_backing_file) or base.loop_backing_file,
        loop_dio=_bool(raw.loop_dio) if raw.loop_dio is not None else base.loop_dio,
        model=base.model or _str(raw.model),
        serial=base.serial or _str(raw.serial),
        parents=parents,
    )


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` -> {KEY: value} (quotes and escapes removed)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = re.sub(r"\\(.)", r"\1", value)
    return out


def parse_cpuinfo_model(text: str) -> str | None:
    """CPU model from ``/proc/cpuinfo`` (x86 ``model name``; ``Model``/``Hardware``/``cpu model`` elsewhere)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    for key in ("model name", "model", "cpu model", "hardware", "processor"):
        value = fields.get(key)
        if value and not value.isdigit():
            return value
    return None


def parse_meminfo_total(text: str) -> int | None:
    """``MemTotal:  24684092 kB`` -> bytes."""
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


# --------------------------------------------------------------------------- xfs


def parse_xfs_info(text: str) -> XfsInfo:
    """``xfs_info MOUNT`` -> :class:`XfsInfo`.

    The output has sections (``meta-data``, ``data``, ``naming``, ``log``,
    ``realtime``), each one or more lines of ``key=value`` words; continuation lines
    start with ``=``.  Raises ValueError when no ``data`` section is found.
    """
    sections: dict[str, dict[str, str]] = {}
    heads: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        m = re.match(r"^([a-z-]*)\s*=(.*)$", line)
        if not m:
            continue
        label, rest = m.group(1), m.group(2)
        if label:
            current = label
            sections.setdefault(current, {})
            # the first column (device, "internal log", "version 2", "none") before the first key=
            head = re.split(r"\s\w[\w-]*=", " " + rest, maxsplit=1)[0].strip()
            heads[current] = head
        if current is None:
            continue
        for key, value in re.findall(r"([A-Za-z][\w-]*)=([^\s,]+)", rest):
            sections[current].setdefault(key, value)
    if "data" not in sections:
        raise ValueError("not xfs_info output: no data section")
    meta, data, naming, log, rt = (sections.get(s, {}) for s in ("meta-data", "data", "naming", "log", "realtime"))
    log_head = heads.get("log", "")
    log_location = None
    if log_head:
        log_location = "internal" if log_head.startswith("internal") else "external"
    rt_head = heads.get("realtime", "")
    features: list[str] = []
    for section, keys in (
        (meta, ("crc", "finobt", "sparse", "rmapbt", "reflink", "bigtime", "inobtcount", "nrext64", "exchange", "metadir")),
        (naming, ("ftype", "ascii-ci")),
        (log, ("lazy-count",)),
    ):
        for key in keys:
            if key in section:
                features.append(f"{key}={section[key]}")
    return XfsInfo(
        block_size_bytes=_int(data.get("bsize")),
        sector_size_bytes=_int(meta.get("sectsz")),
        inode_size_bytes=_int(meta.get("isize")),
        agcount=_int(meta.get("agcount")),
        ag_blocks=_int(meta.get("agsize")),
        data_blocks=_int(data.get("blocks")),
        sunit_blocks=_int(data.get("sunit")),
        swidth_blocks=_int(data.get("swidth")),
        log_location=log_location,
        log_blocks=_int(log.get("blocks")),
        log_block_size_bytes=_int(log.get("bsize")),
        log_version=_int(log.get("version")),
        log_sunit_blocks=_int(log.get("sunit")),
        realtime=(rt_head.split()[0] if rt_head else None),
        features=tuple(features),
    )


# --------------------------------------------------------------------------- ext4


def parse_dumpe2fs(text: str) -> Ext4Info:
    """``dumpe2fs -h DEV`` (or ``tune2fs -l DEV``) -> :class:`Ext4Info`.  Raises ValueError without a block size."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith(" "):
            fields.setdefault(key.strip(), value.strip())
    block_size = _int(fields.get("Block size"))
    if block_size is None:
        raise ValueError("not dumpe2fs output: no 'Block size'")
    journal = fields.get("Total journal size") or fields.get("Journal size")
    defaults = fields.get("Default mount options", "")
    return Ext4Info(
        block_size_bytes=block_size,
        block_count=_int(fields.get("Block count")),
        inode_size_bytes=_int(fields.get("Inode size")),
        features=tuple(fields.get("Filesystem features", "").split()),
        raid_stride_blocks=_int(fields.get("RAID stride")),
        raid_stripe_width_blocks=_int(fields.get("RAID stripe width")),
        flex_bg_size=_int(fields.get("Flex block group size")),
        journal_size_bytes=parse_size(journal) if journal else None,
        default_mount_options=tuple(w for w in defaults.split() if w != "(none)"),
        state=fields.get("Filesystem state") or None,
    )


# --------------------------------------------------------------------------- btrfs


def parse_btrfs_fi_df(text: str) -> tuple[BtrfsSpace, ...]:
    """``btrfs filesystem df [-b] MOUNT`` -> one :class:`BtrfsSpace` per line (``-b`` bytes or human units)."""
    out: list[BtrfsSpace] = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\w+),\s*([\w]+):\s*total=([^,\s]+),\s*used=(\S+)", line)
        if not m:
            continue
        total, used = parse_size(m.group(3)), parse_size(m.group(4))
        if total is None or used is None:
            continue
        out.append(BtrfsSpace(kind=m.group(1), profile=m.group(2), total_bytes=total, used_bytes=used))
    return tuple(out)


def parse_btrfs_fi_usage(text: str) -> tuple[BtrfsSpace, ...]:
    """``btrfs filesystem usage -b MOUNT`` -> the per-type ``Data,single: Size:..., Used:...`` lines."""
    out: list[BtrfsSpace] = []
    for line in text.splitlines():
        m = re.match(r"^(\w+),(\w+):\s*Size:([^,\s]+),\s*Used:(\S+)", line.strip())
        if not m:
            continue
        total, used = parse_size(m.group(3)), parse_size(m.group(4))
        if total is None or used is None:
            continue
        out.append(BtrfsSpace(kind=m.group(1), profile=m.group(2), total_bytes=total, used_bytes=used))
    return tuple(out)


def parse_btrfs_fi_show(text: str) -> tuple[str, ...]:
    """Device paths from ``btrfs filesystem show [--raw] MOUNT`` (``devid 1 size .. path /dev/x``)."""
    return tuple(re.findall(r"^\s*devid\s+\d+\s+.*?\spath\s+(\S+)", text, re.MULTILINE))


def parse_btrfs_property(text: str, name: str = "compression") -> str | None:
    """``btrfs property get PATH compression`` -> ``"zstd"``; None for empty output (unset)."""
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key == name:
            return value.strip() or None
    return None


def btrfs_info_from(
    options: Sequence[str],
    spaces: Sequence[BtrfsSpace] = (),
    *,
    compression_property: str | None = None,
    devices: Sequence[str] = (),
) -> BtrfsInfo:
    compression, forced = btrfs_compression_from_options(options)
    by_kind = {s.kind.lower(): s for s in spaces}
    data, meta, system = by_kind.get("data"), by_kind.get("metadata"), by_kind.get("system")
    return BtrfsInfo(
        compression=compression,
        compression_forced=forced,
        compression_property=compression_property,
        data_profile=data.profile if data else None,
        metadata_profile=meta.profile if meta else None,
        system_profile=system.profile if system else None,
        data_total_bytes=data.total_bytes if data else None,
        data_used_bytes=data.used_bytes if data else None,
        metadata_total_bytes=meta.total_bytes if meta else None,
        metadata_used_bytes=meta.used_bytes if meta else None,
        subvolume=mount_option(options, "subvol") or None,
        devices=tuple(devices),
    )


# --------------------------------------------------------------------------- zfs


def parse_zfs_get(text: str) -> tuple[ZfsProperty, ...]:
    """``zfs get -H[p] [-o property,value] ...`` or ``zpool get -H[p] ...`` -> properties.

    Handles the 2-column form (``-o property,value``) and the default 4-column form
    (name, property, value, source; the source may contain spaces: ``inherited from tank``).
    """
    out: list[ZfsProperty] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) == 2:
            out.append(ZfsProperty(property=cols[0].strip(), value=cols[1].strip()))
        elif len(cols) >= 4:
            out.append(
                ZfsProperty(name=cols[0].strip(), property=cols[1].strip(), value=cols[2].strip(), source="\t".join(cols[3:]).strip())
            )
        elif len(cols) == 3:  # -o name,property,value
            out.append(ZfsProperty(name=cols[0].strip(), property=cols[1].strip(), value=cols[2].strip()))
    return tuple(out)


_ZPOOL_SECTIONS = {"logs": "log", "log": "log", "cache": "cache", "spares": "spare", "special": "special", "dedup": "dedup"}


def _vdev_kind(name: str) -> str | None:
    """``mirror-0`` -> mirror, ``raidz2-1`` -> raidz2, ``raidz-0`` -> raidz1, ``draid2:4d:12c:1s-0`` -> draid2; None for a leaf."""
    m = re.fullmatch(r"(mirror|raidz[123]?|draid[123]?(?::[\w:]+)?|replacing|spare)-\d+", name)
    if not m:
        return None
    kind = m.group(1)
    if kind == "raidz":
        return "raidz1"
    if kind.startswith("draid"):
        return kind.split(":", 1)[0] if kind != "draid" else "draid1"
    return kind


def parse_zpool_status(text: str) -> tuple[ZpoolStatus, ...]:
    """``zpool status [-P] [POOL]`` -> pools with their top-level vdevs.

    The ``config:`` block is a tree drawn by indentation (two spaces a level under a
    leading tab): the pool line, then top-level vdevs (``mirror-0``, ``raidz2-0`` or a
    bare device for a stripe), then their devices; ``logs``, ``cache``, ``special``,
    ``dedup`` and ``spares`` start sections at the pool's indentation.  Nested
    ``replacing-N``/``spare-N`` groups are flattened into their top-level vdev.
    """
    pools: list[ZpoolStatus] = []
    name: str | None = None
    state: str | None = None
    in_config = False
    base_indent: int | None = None
    role = "data"
    vdevs: list[ZfsVdev] = []
    current: dict | None = None

    def flush_vdev() -> None:
        nonlocal current
        if current is not None:
            vdevs.append(
                ZfsVdev(role=current["role"], kind=current["kind"], name=current["name"], devices=tuple(current["devices"]), state=current["state"])
            )
        current = None

    def flush_pool() -> None:
        nonlocal name, state, vdevs
        flush_vdev()
        if name is not None:
            pools.append(ZpoolStatus(pool=name, state=state, vdevs=tuple(vdevs)))
        name, state, vdevs = None, None, []

    for raw in text.splitlines():
        line = raw.expandtabs(8)
        stripped = line.strip()
        m = re.match(r"^\s*pool:\s*(\S+)", line)
        if m:
            flush_pool()
            name, in_config, base_indent, role = m.group(1), False, None, "data"
            continue
        m = re.match(r"^\s*state:\s*(\S+)", line)
        if m and not in_config:
            state = m.group(1)
            continue
        if re.match(r"^\s*config:", line):
            in_config = True
            continue
        if re.match(r"^\s*errors:", line):
            in_config = False
            continue
        if not in_config or not stripped:
            continue
        words = stripped.split()
        if words[0] == "NAME" and "STATE" in words:
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            if name is None or words[0] == name:
                base_indent = indent
                if name is None:
                    name = words[0]
            continue
        rel = indent - base_indent
        if rel <= 0:
            flush_vdev()
            role = _ZPOOL_SECTIONS.get(words[0], role)
            continue
        dev_state = words[1] if len(words) > 1 else None
        kind = _vdev_kind(words[0])
        if rel <= 2:
            flush_vdev()
            if kind is not None and kind not in ("replacing", "spare"):
                current = {"role": role, "kind": kind, "name": words[0], "devices": [], "state": dev_state}
            elif kind is not None:  # a replacing/spare group at top level: a single-device vdev being swapped
                current = {"role": role, "kind": "disk", "name": words[0], "devices": [], "state": dev_state}
            else:
                vdevs.append(ZfsVdev(role=role, kind="disk", name=words[0], devices=(words[0],), state=dev_state))
            continue
        if current is not None and kind is None:
            current["devices"].append(words[0])
    flush_pool()
    return tuple(pools)


def zpool_layout(vdevs: Sequence[ZfsVdev]) -> str | None:
    """One line for a pool's shape: ``mirror``, ``2 x raidz2``, ``stripe of 3``, ``mirror + log mirror + cache 1``."""
    if not vdevs:
        return None

    def group(role_vdevs: list[ZfsVdev]) -> str:
        kinds = [v.kind for v in role_vdevs]
        if all(k == "disk" for k in kinds):
            n = len(kinds)
            return "single disk" if n == 1 else f"stripe of {n}"
        parts: list[str] = []
        for kind in dict.fromkeys(kinds):
            if kind == "disk":
                parts.append(f"{kinds.count(kind)} disk")
                continue
            count = kinds.count(kind)
            width = max(len(v.devices) for v in role_vdevs if v.kind == kind)
            parts.append(f"{kind} of {width}" if count == 1 else f"{count} x {kind} of {width}")
        return " + ".join(parts)

    pieces: list[str] = []
    for role in ("data", "special", "dedup", "log", "cache", "spare"):
        rv = [v for v in vdevs if v.role == role]
        if not rv:
            continue
        if role == "data":
            pieces.append(group(rv))
        elif role in ("cache", "spare"):
            pieces.append(f"{role} {sum(len(v.devices) for v in rv)}")
        else:
            pieces.append(f"{role} {group(rv)}")
    return " + ".join(pieces)


def zfs_info_from(
    dataset: str,
    dataset_props: Sequence[ZfsProperty] = (),
    pool_props: Sequence[ZfsProperty] = (),
    status: ZpoolStatus | None = None,
) -> ZfsInfo:
    """Build :class:`ZfsInfo` from parsed ``zfs get``, ``zpool get`` and ``zpool status`` output."""
    ds = {p.property: p.value for p in dataset_props if p.name in (None, dataset)}
    pool_name = dataset.split("/", 1)[0].split("@", 1)[0]
    pp = {p.property: p.value for p in pool_props if p.name in (None, pool_name)}

    def val(d: Mapping[str, str], key: str) -> str | None:
        v = d.get(key)
        return None if v in (None, "-", "") else v

    def size(d: Mapping[str, str], key: str) -> int | None:
        return parse_size(val(d, key))

    return ZfsInfo(
        dataset=dataset,
        pool=pool_name,
        dataset_type=val(ds, "type"),
        recordsize_bytes=size(ds, "recordsize"),
        volblocksize_bytes=size(ds, "volblocksize"),
        volsize_bytes=size(ds, "volsize"),
        compression=val(ds, "compression"),
        sync=val(ds, "sync"),
        primarycache=val(ds, "primarycache"),
        secondarycache=val(ds, "secondarycache"),
        logbias=val(ds, "logbias"),
        atime=val(ds, "atime"),
        relatime=val(ds, "relatime"),
        dedup=val(ds, "dedup"),
        checksum=val(ds, "checksum"),
        copies=_int(val(ds, "copies")),
        special_small_blocks_bytes=size(ds, "special_small_blocks"),
        encryption=val(ds, "encryption"),
        pool_ashift=_int(val(pp, "ashift")),
        pool_health=val(pp, "health"),
        pool_size_bytes=size(pp, "size"),
        pool_autotrim=val(pp, "autotrim"),
        pool_state=status.state if status else None,
        vdevs=status.vdevs if status else (),
    )


def zvol_dataset_from_path(path: str) -> str | None:
    """``/dev/zvol/tank/vols/db`` -> ``tank/vols/db`` (partitions ``-part1`` keep their dataset)."""
    m = re.match(r"^/dev/zvol/(.+?)(?:-part\d+)?$", path)
    return m.group(1) if m else None


# =========================================================================== stored form


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _decode(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise StoreError(f"stored storage description is malformed at {where}")
        return _decode(inner[0], value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise StoreError(f"stored storage description is malformed: {where} should be a list")
        (item_tp, _ellipsis) = typing.get_args(tp)
        return tuple(_decode(item_tp, v, f"{where}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise StoreError(f"stored storage description is malformed: {where} should be an object")
        hints = _hints(tp)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                kwargs[f.name] = _decode(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise StoreError(f"stored storage description is malformed: {where} lacks {f.name!r}")
        return tp(**kwargs)
    if tp is bool:
        if not isinstance(value, bool):
            raise StoreError(f"stored storage description is malformed: {where} should be true/false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise StoreError(f"stored storage description is malformed: {where} should be an integer")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StoreError(f"stored storage description is malformed: {where} should be a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise StoreError(f"stored storage description is malformed: {where} should be a string")
        return value
    raise StoreError(f"stored storage description is malformed at {where}")  # pragma: no cover


def storage_to_dict(info: StorageInfo) -> dict[str, Any]:
    """JSON-compatible form of ``info`` with ``"format_version"``; :func:`storage_from_dict` inverts it exactly."""
    return {"format_version": FORMAT_VERSION, **_encode(info)}


def storage_from_dict(data: Mapping[str, Any]) -> StorageInfo:
    """Rebuild a :class:`StorageInfo` from :func:`storage_to_dict` output (possibly through JSON).

    Unknown keys are ignored and missing optional fields take their defaults, so adding
    an optional field needs no new version.  Raises :class:`StoreError` for a newer
    format version or a malformed dict.
    """
    if not isinstance(data, Mapping):
        raise StoreError(f"stored storage description is malformed: expected an object, got {type(data).__name__}")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise StoreError(f"stored storage description is malformed: format_version is {version!r}")
    if version > FORMAT_VERSION:
        raise StoreError(
            f"stored storage description has format version {version}, this storbench reads up to {FORMAT_VERSION}; upgrade storbench"
        )
    return _decode(StorageInfo, data, "storage")


# =========================================================================== rendering


def _onoff(value: bool | None) -> str:
    return "?" if value is None else ("on" if value else "off")


def _yesno(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _device_text(dev: DeviceInfo) -> str:
    parts: list[str] = [dev.type]
    if dev.transport and dev.type not in ("loop",):
        parts.append(dev.transport)
    if dev.size_bytes is not None:
        parts.append(format_bytes(dev.size_bytes))
    if dev.type == "loop":
        if dev.loop_backing_file:
            parts.append(f"backing {dev.loop_backing_file}")
        if dev.loop_dio is not None:
            parts.append(f"dio={_onoff(dev.loop_dio)}")
    if dev.zvol is not None:
        parts.append(f"zvol {dev.zvol.dataset}")
    if dev.model:
        parts.append(f"model {dev.model}")
    if not dev.parents or dev.type in ("disk", "nbd"):
        if dev.type != "loop":
            if dev.rotational is not None:
                parts.append(f"rotational={_yesno(dev.rotational)}")
            if dev.scheduler:
                parts.append(f"scheduler={dev.scheduler}")
            if dev.write_cache:
                parts.append(f"write cache={dev.write_cache}")
    return f"{dev.path or '/dev/' + dev.kname} ({', '.join(parts)})"


def _levels(devices: Sequence[DeviceInfo]) -> list[list[DeviceInfo]]:
    """Group the chain by depth from its tops (devices that are nobody's parent)."""
    by_kname = {d.kname: d for d in devices}
    all_parents = {p for d in devices for p in d.parents}
    tops = [d for d in devices if d.kname not in all_parents] or list(devices[:1])
    levels: list[list[DeviceInfo]] = []
    seen: set[str] = set()
    level = [d for d in tops]
    while level:
        level = [d for d in level if d.kname not in seen]
        if not level:
            break
        seen.update(d.kname for d in level)
        levels.append(level)
        nxt: list[DeviceInfo] = []
        for d in level:
            for p in d.parents:
                if p in by_kname and p not in seen and by_kname[p] not in nxt:
                    nxt.append(by_kname[p])
        level = nxt
    rest = [d for d in devices if d.kname not in seen]
    if rest:
        levels.append(rest)
    return levels


def format_chain(devices: Sequence[DeviceInfo]) -> str:
    """``/dev/loop0 (loop, ...) -> /dev/vda (disk, ...)``; devices side by side at one level are joined by ``+``."""
    return " -> ".join(" + ".join(_device_text(d) for d in level) for level in _levels(devices))


def _zfs_lines(z: ZfsInfo) -> list[str]:
    props = []
    if z.recordsize_bytes is not None:
        props.append(f"recordsize={format_bytes(z.recordsize_bytes)}")
    if z.volblocksize_bytes is not None:
        props.append(f"volblocksize={format_bytes(z.volblocksize_bytes)}")
    for key in ("compression", "sync", "logbias", "primarycache", "secondarycache", "atime", "dedup", "checksum", "encryption"):
        value = getattr(z, key)
        if value is not None:
            props.append(f"{key}={value}")
    if z.copies is not None and z.copies != 1:
        props.append(f"copies={z.copies}")
    if z.special_small_blocks_bytes:
        props.append(f"special_small_blocks={format_bytes(z.special_small_blocks_bytes)}")
    lines = [f"zfs dataset {z.dataset} ({z.dataset_type or '?'}): {', '.join(props) or 'properties unknown'}"]
    pool = [f"zfs pool {z.pool}: {z.layout or 'layout unknown'}"]
    if z.pool_ashift is not None:
        pool.append(f"ashift={z.pool_ashift}")
    if z.pool_health or z.pool_state:
        pool.append(f"health={z.pool_health or z.pool_state}")
    if z.pool_size_bytes is not None:
        pool.append(f"size={format_bytes(z.pool_size_bytes)}")
    if z.pool_autotrim is not None:
        pool.append(f"autotrim={z.pool_autotrim}")
    lines.append(", ".join(pool))
    return lines


def _filesystem_lines(fs: FilesystemInfo) -> list[str]:
    lines: list[str] = []
    if fs.btrfs is not None:
        b = fs.btrfs
        comp = "off"
        if b.compression:
            comp = f"{b.compression}{' (forced)' if b.compression_forced else ''}"
        parts = [f"compression={comp}"]
        if b.compression_property:
            parts.append(f"compression property={b.compression_property}")
        profiles = [f"{k} {v}" for k, v in (("data", b.data_profile), ("metadata", b.metadata_profile), ("system", b.system_profile)) if v]
        if profiles:
            parts.append(", ".join(profiles))
        if b.subvolume:
            parts.append(f"subvolume {b.subvolume}")
        if len(b.devices) > 1:
            parts.append(f"{len(b.devices)} devices")
        lines.append("btrfs: " + ", ".join(parts))
    if fs.xfs is not None:
        x = fs.xfs
        parts = [f"bsize={x.block_size_bytes}", f"agcount={x.agcount}"]
        if x.sunit_blocks:
            parts.append(f"sunit={x.sunit_blocks} blks ({format_bytes(x.stripe_unit_bytes)})")
            parts.append(f"swidth={x.swidth_blocks} blks ({format_bytes(x.stripe_width_bytes)})")
        else:
            parts.append("no stripe alignment")
        if x.log_location:
            log_size = None if x.log_blocks is None or x.log_block_size_bytes is None else x.log_blocks * x.log_block_size_bytes
            parts.append(f"log {x.log_location} {format_bytes(log_size)}")
        parts.append(f"isize={x.inode_size_bytes}")
        parts.extend(x.features)
        lines.append("xfs: " + ", ".join(parts))
    if fs.ext4 is not None:
        e = fs.ext4
        parts = [f"block size={e.block_size_bytes}"]
        if e.raid_stride_blocks or e.raid_stripe_width_blocks:
            parts.append(f"stride={e.raid_stride_blocks} blks, stripe width={e.raid_stripe_width_blocks} blks")
        if e.journal_size_bytes is not None:
            parts.append(f"journal {format_bytes(e.journal_size_bytes)}")
        if e.inode_size_bytes is not None:
            parts.append(f"inode size={e.inode_size_bytes}")
        if e.features:
            parts.append("features: " + " ".join(e.features))
        lines.append(f"{fs.fstype}: " + ", ".join(parts))
    if fs.zfs is not None:
        lines.extend(_zfs_lines(fs.zfs))
    if fs.network is not None:
        n = fs.network
        parts = [f"server {n.server or '?'}", f"share {n.share or '?'}"]
        if n.protocol_version:
            parts.append(f"vers={n.protocol_version}")
        if n.transport:
            parts.append(f"proto={n.transport}")
        if n.rsize_bytes:
            parts.append(f"rsize={format_bytes(n.rsize_bytes)}")
        if n.wsize_bytes:
            parts.append(f"wsize={format_bytes(n.wsize_bytes)}")
        lines.append(f"{fs.fstype}: " + ", ".join(parts))
    return lines


def format_storage(info: StorageInfo) -> list[str]:
    """A human description, one fact per line; the second line reads like
    ``ext4 (rw,relatime) on /dev/loop0 (loop, 64 MiB, backing /tmp/x.img, dio=on) -> /dev/vda (disk, virtio, ...)``.
    """
    lines = [f"target: {info.target} ({info.target_kind})"]
    chain = format_chain(info.devices) if info.devices else ""
    fs = info.filesystem
    if fs is not None:
        head = f"{fs.fstype} ({','.join(fs.options)})"
        if fs.zfs is not None:
            head += f" dataset {fs.zfs.dataset}"
        elif fs.network is not None:
            head += f" from {fs.source}"
        elif not info.devices:
            head += f" from {fs.source}"
        head += f" mounted at {fs.mountpoint}"
        if chain:
            head += (" over " if fs.zfs is not None else " on ") + chain
        lines.append(head)
        lines.extend(_filesystem_lines(fs))
    elif chain:
        lines.append(f"block device {chain}")
    for dev in info.devices:
        if dev.zvol is not None:
            lines.extend(_zfs_lines(dev.zvol))
    h = info.host
    if h is not None:
        parts = [h.hostname or "?"]
        if h.distribution:
            parts.append(h.distribution)
        if h.kernel:
            parts.append(f"kernel {h.kernel}")
        if h.cpu_model or h.cpu_count:
            parts.append(f"{h.cpu_count or '?'} x {h.cpu_model or 'CPU'}")
        if h.mem_bytes is not None:
            parts.append(f"{format_bytes(h.mem_bytes)} RAM")
        if h.fio_version:
            parts.append(h.fio_version)
        lines.append("host: " + ", ".join(parts))
    lines.extend(f"note: {n}" for n in info.notes)
    return lines


# =========================================================================== differences


def _text(value: Any) -> str:
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
)


def _chain_shape(devices: Sequence[DeviceInfo]) -> str:
    return " -> ".join("+".join(d.type for d in level) for level in _levels(devices)) or "-"


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
            for key in ("server", "share", "protocol_version", "transport", "rsize_bytes", "wsize_bytes"):
                out[f"filesystem.network.{key}"] = _text(getattr(fs.network, key))
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


# =========================================================================== the edge


class CommandRunner(Protocol):
    """Runs one program: ``run(["findmnt", "-J", ...]) -> (returncode, stdout, stderr)``."""

    def run(self, argv: list[str]) -> tuple[int, str, str]: ...


class SubprocessRunner:
    """The real :class:`CommandRunner`: an argument list (never a shell), ``LC_ALL=C``, a timeout.

    A missing program gives ``(127, "", "not found")``; a timeout gives
    ``(124, partial stdout, "timed out after N s")``.
    """

    def __init__(self, timeout_s: float = 10.0) -> None:
        self.timeout_s = timeout_s

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        env = dict(os.environ, LC_ALL="C", LANG="C")
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.timeout_s,
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError:
            return 127, "", "not found"
        except PermissionError as exc:
            return 126, "", str(exc)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return 124, out, f"timed out after {self.timeout_s:g} s"
        return proc.returncode, proc.stdout, proc.stderr


def _error_line(stderr: str | None) -> str:
    """The first line of ``stderr`` that says something (skipping banners like ``dumpe2fs 1.47.0 (5-Feb-2023)``)."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    for line in lines:
        if not re.fullmatch(r"[\w.+-]+ v?\d+(\.\d+)+\S*( \(.*\))?", line):
            return line
    return lines[0] if lines else ""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _read_line(path: str) -> str | None:
    text = _read(path)
    return None if text is None else text.strip()


def describe_host(
    fio_version: str | None = None, *, proc_root: str = "/proc", etc_root: str = "/etc", notes: list[str] | None = None
) -> HostInfo:
    """The host's facts from ``uname``, ``/etc/os-release``, ``/proc/cpuinfo`` and ``/proc/meminfo``."""
    notes = notes if notes is not None else []
    uname = os.uname()
    distribution = None
    os_release = _read(os.path.join(etc_root, "os-release"))
    if os_release is None:
        os_release = _read("/usr/lib/os-release") if etc_root == "/etc" else None
    if os_release is None:
        notes.append("distribution unknown: /etc/os-release is unreadable")
    else:
        distribution = parse_os_release(os_release).get("PRETTY_NAME")
    cpuinfo = _read(os.path.join(proc_root, "cpuinfo"))
    cpu_model = parse_cpuinfo_model(cpuinfo) if cpuinfo is not None else None
    if cpu_model is None:
        notes.append("CPU model unknown: /proc/cpuinfo has no model name")
    meminfo = _read(os.path.join(proc_root, "meminfo"))
    mem = parse_meminfo_total(meminfo) if meminfo is not None else None
    if mem is None:
        notes.append("memory size unknown: /proc/meminfo is unreadable")
    return HostInfo(
        hostname=socket.gethostname() or uname.nodename,
        kernel=uname.release,
        distribution=distribution,
        cpu_model=cpu_model,
        cpu_count=os.cpu_count(),
        mem_bytes=mem,
        fio_version=fio_version,
    )


class _Probe:
    """One describe_target call: the runner, sysfs root, the notes and the caches."""

    def __init__(self, runner: CommandRunner, sys_root: str) -> None:
        self.runner = runner
        self.sys_root = sys_root
        self.notes: list[str] = []
        self.missing: set[str] = set()
        self.lsblk: dict[str, DeviceInfo] = {}  # kname -> what lsblk said
        self.lsblk_ok = True  # False once lsblk is known to be missing
        self.start_cache: dict[str, str | None] = {}  # device path -> kname
        self.zvol_hints: dict[str, str] = {}  # kname -> dataset, for targets named /dev/zvol/POOL/VOL

    # ----------------------------------------------------------------- commands

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def run(self, argv: list[str], what: str) -> str | None:
        """stdout of ``argv``, or None after noting why not."""
        prog = argv[0]
        if prog in self.missing:
            self.note(f"{what} not read: {prog} command not found")
            return None
        try:
            rc, out, err = self.runner.run(list(argv))
        except Exception as exc:  # a broken runner must not break a benchmark run
            self.note(f"{what} not read: {prog} could not run ({exc})")
            return None
        if rc == 127:
            self.missing.add(prog)
            self.note(f"{what} not read: {prog} command not found")
            return None
        if rc != 0:
            first = _error_line(err)
            self.note(f"{what} not read: {' '.join(argv)} exited {rc}{': ' + first if first else ''}")
            return None
        return out

    # ----------------------------------------------------------------- mounts

    def find_mount(self, path: str) -> FindmntEntry | None:
        out = self.run(["findmnt", "-J", "-T", path, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"], f"filesystem of {path}")
        if out is not None:
            try:
                entries = parse_findmnt_json(out)
            except ValueError as exc:
                self.note(f"findmnt output for {path} not understood: {exc}")
                entries = ()
            if entries:
                return entries[-1]
        text = _read("/proc/self/mountinfo")
        if text is None:
            self.note("filesystem unknown: findmnt failed and /proc/self/mountinfo is unreadable")
            return None
        return mount_for_path(parse_mountinfo(text), os.path.realpath(path))

    # ----------------------------------------------------------------- sysfs

    def sysfs(self, kname: str) -> SysfsBlock:
        base = os.path.join(self.sys_root, "class", "block", kname)
        if not os.path.exists(base):
            base = os.path.join(self.sys_root, "block", kname)
        if not os.path.exists(base):
            self.note(f"{kname}: no {os.path.join(self.sys_root, 'class/block', kname)}")
            return SysfsBlock(kname=kname)
        is_partition = os.path.exists(os.path.join(base, "partition"))
        partition_of = None
        disk_dir = base
        if is_partition:
            disk_dir = os.path.dirname(os.path.realpath(base))
            partition_of = os.path.basename(disk_dir)
        queue = os.path.join(disk_dir, "queue")
        try:
            slaves = tuple(sorted(os.listdir(os.path.join(base, "slaves"))))
        except OSError:
            slaves = ()

        def q(name: str) -> str | None:
            return _read_line(os.path.join(queue, name))

        raw = SysfsBlock(
            kname=kname,
            size_sectors=_read_line(os.path.join(base, "size")),
            scheduler=q("scheduler"),
            nr_requests=q("nr_requests"),
            write_cache=q("write_cache"),
            discard_max_bytes=q("discard_max_bytes"),
            read_ahead_kb=q("read_ahead_kb"),
            rotational=q("rotational"),
            logical_block_size=q("logical_block_size"),
            physical_block_size=q("physical_block_size"),
            model=_read_line(os.path.join(disk_dir, "device", "model")),
            vendor=_read_line(os.path.join(disk_dir, "device", "vendor")),
            serial=_read_line(os.path.join(disk_dir, "device", "serial")) or _read_line(os.path.join(disk_dir, "serial")),
            loop_backing_file=_read_line(os.path.join(base, "loop", "backing_file")),
            loop_dio=_read_line(os.path.join(base, "loop", "dio")),
            dm_name=_read_line(os.path.join(base, "dm", "name")),
            dm_uuid=_read_line(os.path.join(base, "dm", "uuid")),
            md_level=_read_line(os.path.join(base, "md", "level")),
            is_partition=is_partition,
            partition_of=partition_of,
            slaves=slaves,
        )
        if raw.scheduler is None and raw.rotational is None:
            self.note(f"{kname}: queue settings unreadable under {queue}")
        return raw

    # ----------------------------------------------------------------- devices

    def kname_of(self, dev_path: str) -> str | None:
        """Kernel name of a device (``/dev/mapper/vg-lv`` -> ``dm-0``); lsblk first, then stat + sysfs.

        lsblk's answer (the device and all its ancestors, ``-s``) is kept for :meth:`device`.
        """
        if dev_path in self.start_cache:
            return self.start_cache[dev_path]
        kname = None
        if self.lsblk_ok:
            out = self.run(["lsblk", "-J", "-b", "-O", "-s", dev_path], f"device details of {dev_path}")
            if out is None:
                self.lsblk_ok = "lsblk" not in self.missing
            else:
                try:
                    devs = parse_lsblk_json(out)
                except ValueError as exc:
                    self.note(f"lsblk output for {dev_path} not understood: {exc}")
                    devs = ()
                for dev in devs:
                    self.lsblk.setdefault(dev.kname, dev)
                if devs:
                    kname = devs[0].kname
        if kname is None:
            kname = self._kname_from_stat(dev_path)
        self.start_cache[dev_path] = kname
        return kname

    def _kname_from_stat(self, dev_path: str) -> str | None:
        real = os.path.realpath(dev_path)
        try:
            st = os.stat(real)
        except OSError as exc:
            self.note(f"{dev_path}: {exc.strerror or exc}")
            return None
        if not stat.S_ISBLK(st.st_mode):
            self.note(f"{dev_path} is not a block device")
            return None
        link = os.path.join(self.sys_root, "dev", "block", f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
        if os.path.exists(link):
            return os.path.basename(os.path.realpath(link))
        return os.path.basename(real)

    def device(self, kname: str) -> DeviceInfo:
        if kname not in self.lsblk and self.lsblk_ok:
            self.kname_of(f"/dev/{kname}")
        return device_from_sysfs(self.sysfs(kname), self.lsblk.get(kname))

    def chain(self, start: Sequence[str]) -> tuple[DeviceInfo, ...]:
        """Breadth first from ``start`` down to the physical devices, each device once."""
        out: list[DeviceInfo] = []
        seen: set[str] = set()
        queue: deque[str] = deque(k for k in start)
        depth_guard = 0
        while queue and depth_guard < 256:
            depth_guard += 1
            kname = queue.popleft()
            if kname in seen:
                continue
            seen.add(kname)
            dev = self.device(kname)
            extra: list[str] = []
            if dev.type == "loop" or kname.startswith("loop"):
                extra = self.loop_backing(dev)
            elif kname.startswith("zd"):
                zvol, extra = self.zvol(dev)
                if zvol is not None:
                    dev = dataclasses.replace(dev, zvol=zvol)
            if extra:
                dev = dataclasses.replace(dev, parents=tuple(dict.fromkeys(dev.parents + tuple(extra))))
            out.append(dev)
            queue.extend(p for p in dev.parents if p not in seen)
        return tuple(out)

    def loop_backing(self, dev: DeviceInfo) -> list[str]:
        """The device holding a loop device's backing file (as a parent kname)."""
        backing = dev.loop_backing_file
        if not backing:
            if dev.type == "loop":
                self.note(f"{dev.kname}: loop backing file unknown")
            return []
        path = backing[: -len(" (deleted)")] if backing.endswith(" (deleted)") else backing
        if not os.path.exists(path):
            self.note(f"{dev.kname}: backing file {backing} not found")
            return []
        entry = self.find_mount(path)
        if entry is None:
            return []
        return self.fs_devices(entry, where=f"backing file of {dev.kname}")

    def fs_devices(self, entry: FindmntEntry, *, where: str) -> list[str]:
        """Knames of the block devices a mounted filesystem sits on (empty, with a note, for none)."""
        source, _ = split_source(entry.source)
        if entry.fstype in MEMORY_FSTYPES:
            self.note(f"{where}: {entry.fstype} at {entry.target} is memory, not a disk")
            return []
        if entry.fstype in NETWORK_FSTYPES:
            self.note(f"{where}: {entry.fstype} at {entry.target} is on another machine ({source})")
            return []
        if entry.fstype == "zfs":
            zfs = self.zfs(source)
            return self.zfs_leaf_knames(zfs) if zfs is not None else []
        if entry.fstype == "btrfs":
            out = self.run(["btrfs", "filesystem", "show", "--raw", entry.target], f"btrfs devices of {entry.target}")
            paths = parse_btrfs_fi_show(out) if out else ()
            knames = [k for k in (self.kname_of(p) for p in paths) if k]
            if knames:
                return list(dict.fromkeys(knames))
        if source.startswith("/dev/"):
            kname = self.kname_of(source)
            if kname:
                return [kname]
        kname = self._kname_from_st_dev(entry.target)  # /dev/root and friends: the mount's device number
        if kname:
            return [kname]
        if not source.startswith("/dev/"):
            self.note(f"{where}: {entry.fstype} at {entry.target} has no block device (source {entry.source!r})")
        return []

    def _kname_from_st_dev(self, mountpoint: str) -> str | None:
        try:
            st_dev = os.stat(mountpoint).st_dev
        except OSError:
            return None
        link = os.path.join(self.sys_root, "dev", "block", f"{os.major(st_dev)}:{os.minor(st_dev)}")
        return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else None

    # ----------------------------------------------------------------- zfs

    def zfs(self, dataset: str) -> ZfsInfo | None:
        props_out = self.run(
            ["zfs", "get", "-Hp", "-o", "property,value", ",".join(ZFS_DATASET_PROPERTIES), dataset], f"zfs properties of {dataset}"
        )
        pool = dataset.split("/", 1)[0]
        pool_out = self.run(["zpool", "get", "-Hp", ",".join(ZPOOL_PROPERTIES), pool], f"zpool properties of {pool}")
        status_out = self.run(["zpool", "status", "-P", pool], f"vdev layout of {pool}")
        status = None
        if status_out:
            pools = [p for p in parse_zpool_status(status_out) if p.pool == pool]
            status = pools[0] if pools else None
            if status is None:
                self.note(f"vdev layout of {pool} not understood")
        return zfs_info_from(
            dataset,
            parse_zfs_get(props_out) if props_out else (),
            parse_zfs_get(pool_out) if pool_out else (),
            status,
        )

    def zfs_leaf_knames(self, zfs: ZfsInfo) -> list[str]:
        knames: list[str] = []
        order = {"data": 0, "special": 1, "dedup": 2, "log": 3, "cache": 4, "spare": 5}
        for vdev in sorted(zfs.vdevs, key=lambda v: order.get(v.role, 9)):
            for dev in vdev.devices:
                if not dev.startswith("/dev/"):
                    if dev.startswith("/"):
                        self.note(f"zfs pool {zfs.pool}: vdev {dev} is a file")
                    else:
                        self.note(f"zfs pool {zfs.pool}: vdev {dev} has no path (run zpool status -P)")
                    continue
                kname = self.kname_of(dev)
                if kname and kname not in knames:
                    knames.append(kname)
        if not zfs.vdevs:
            self.note(f"zfs pool {zfs.pool}: devices unknown")
        return knames

    def zvol(self, dev: DeviceInfo) -> tuple[ZfsInfo | None, list[str]]:
        dataset = self.zvol_hints.get(dev.kname)
        for root, _dirs, files in [] if dataset else os.walk("/dev/zvol"):
            for f in files:
                p = os.path.join(root, f)
                if os.path.basename(os.path.realpath(p)) == dev.kname:
                    dataset = zvol_dataset_from_path(p)
                    break
            if dataset:
                break
        if dataset is None:
            self.note(f"{dev.kname}: zvol dataset unknown (no link under /dev/zvol)")
            return None, []
        zfs = self.zfs(dataset)
        return zfs, self.zfs_leaf_knames(zfs) if zfs else []

    # ----------------------------------------------------------------- filesystem

    def filesystem(self, entry: FindmntEntry, target: str) -> FilesystemInfo:
        source, fsroot = split_source(entry.source)
        fs = FilesystemInfo(mountpoint=entry.target, source=entry.source, fstype=entry.fstype, options=entry.options, fsroot=fsroot)
        kind = entry.fstype
        if kind == "btrfs":
            df = self.run(["btrfs", "filesystem", "df", "-b", entry.target], f"btrfs profiles of {entry.target}")
            spaces = parse_btrfs_fi_df(df) if df else ()
            prop = None
            if "btrfs" not in self.missing:
                out = self.run(["btrfs", "property", "get", target, "compression"], f"btrfs compression property of {target}")
                prop = parse_btrfs_property(out) if out else None
            show = None if "btrfs" in self.missing else self.run(
                ["btrfs", "filesystem", "show", "--raw", entry.target], f"btrfs devices of {entry.target}"
            )
            fs = dataclasses.replace(
                fs, btrfs=btrfs_info_from(entry.options, spaces, compression_property=prop, devices=parse_btrfs_fi_show(show) if show else ())
            )
        elif kind == "xfs":
            out = self.run(["xfs_info", entry.target], f"xfs geometry of {entry.target}")
            if out:
                try:
                    fs = dataclasses.replace(fs, xfs=parse_xfs_info(out))
                except ValueError as exc:
                    self.note(f"xfs_info output not understood: {exc}")
        elif kind in EXT_FSTYPES:
            if source.startswith("/dev/"):
                out = self.run(["dumpe2fs", "-h", source], f"{kind} superblock of {source}")
                if out is None and "dumpe2fs" in self.missing:
                    out = self.run(["tune2fs", "-l", source], f"{kind} superblock of {source}")
                if out:
                    try:
                        fs = dataclasses.replace(fs, ext4=parse_dumpe2fs(out))
                    except ValueError as exc:
                        self.note(f"dumpe2fs output not understood: {exc}")
            else:
                self.note(f"{kind} superblock not read: source {entry.source!r} is not a device")
        elif kind == "zfs":
            fs = dataclasses.replace(fs, zfs=self.zfs(source))
        elif kind in NETWORK_FSTYPES:
            fs = dataclasses.replace(fs, network=network_info_from_mount(kind, source, entry.options))
        return fs


def describe_target(
    path: str,
    *,
    fio_version: str | None = None,
    runner: CommandRunner | None = None,
    sys_root: str = "/sys",
) -> StorageInfo:
    """Describe the storage under ``path`` (a directory, regular file or block device).

    Runs findmnt, lsblk and the filesystem's own tools through ``runner`` (default:
    :class:`SubprocessRunner`) and reads ``sys_root``.  Never raises for a missing tool
    or an unreadable file: :attr:`StorageInfo.notes` says what is missing and why.  A
    path that does not exist yet is described by its nearest existing parent, with a note.
    """
    probe = _Probe(runner or SubprocessRunner(), sys_root)
    host = describe_host(fio_version, notes=probe.notes)
    target = os.path.abspath(path)
    probe_path = target
    while not os.path.exists(probe_path) and os.path.dirname(probe_path) != probe_path:
        probe_path = os.path.dirname(probe_path)
    if probe_path != target:
        probe.note(f"{target} does not exist; described {probe_path}, its nearest existing parent")
    try:
        st = os.stat(probe_path)
    except OSError as exc:
        probe.note(f"{target}: {exc.strerror or exc}")
        return StorageInfo(target=target, target_kind="dir", filesystem=None, devices=(), host=host, notes=tuple(probe.notes))

    if stat.S_ISBLK(st.st_mode):
        kname = probe.kname_of(probe_path)
        if kname and (dataset := zvol_dataset_from_path(probe_path)):
            probe.zvol_hints[kname] = dataset
        devices = probe.chain([kname]) if kname else ()
        if kname and (out := probe.run(["lsblk", "-J", "-o", "MOUNTPOINT", f"/dev/{kname}"], f"mount points of /dev/{kname}")):
            try:
                points = lsblk_mountpoints(out)
            except (ValueError, AttributeError):
                points = ()
            if points:
                probe.note(f"block device {probe_path} is mounted at {', '.join(points)}")
        return StorageInfo(target=target, target_kind="block", filesystem=None, devices=devices, host=host, notes=tuple(probe.notes))

    kind = "dir" if stat.S_ISDIR(st.st_mode) or probe_path != target else "file"
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        probe.note(f"{target} is neither a directory, a regular file nor a block device")
    entry = probe.find_mount(probe_path)
    if entry is None:
        return StorageInfo(target=target, target_kind=kind, filesystem=None, devices=(), host=host, notes=tuple(probe.notes))
    fs = probe.filesystem(entry, probe_path)
    if fs.zfs is not None:
        start = probe.zfs_leaf_knames(fs.zfs)
    elif fs.btrfs is not None and fs.btrfs.devices:
        start = [k for k in (probe.kname_of(p) for p in fs.btrfs.devices) if k]
    else:
        start = probe.fs_devices(entry, where=target)
    devices = probe.chain(list(dict.fromkeys(start)))
    return StorageInfo(target=target, target_kind=kind, filesystem=fs, devices=devices, host=host, notes=tuple(probe.notes))


__all__ = [
    "BtrfsInfo",
    "BtrfsSpace",
    "CommandRunner",
    "DeviceInfo",
    "Ext4Info",
    "FilesystemInfo",
    "FindmntEntry",
    "FORMAT_VERSION",
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
    "btrfs_info_from",
    "describe_host",
    "describe_target",
    "device_from_sysfs",
    "differences",
    "format_bytes",
    "format_chain",
    "format_storage",
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
    "storage_from_dict",
    "storage_to_dict",
    "zfs_info_from",
    "zpool_layout",
    "zvol_dataset_from_path",
]
