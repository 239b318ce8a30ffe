"""Local filesystems (pure): btrfs, XFS and ext2/3/4 records and the parsers of their tools' output."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..units import read_size
from ._util import to_int
from .mounts import mount_option

EXT_FSTYPES: frozenset[str] = frozenset({"ext2", "ext3", "ext4"})


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
class BtrfsSpace:
    """One line of ``btrfs filesystem df``: ``Data, single: total=..., used=...``."""

    kind: str  # "Data", "Metadata", "System", "GlobalReserve"
    profile: str
    total_bytes: int
    used_bytes: int


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
    meta, data, naming, log, _rt = (sections.get(s, {}) for s in ("meta-data", "data", "naming", "log", "realtime"))
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
        block_size_bytes=to_int(data.get("bsize")),
        sector_size_bytes=to_int(meta.get("sectsz")),
        inode_size_bytes=to_int(meta.get("isize")),
        agcount=to_int(meta.get("agcount")),
        ag_blocks=to_int(meta.get("agsize")),
        data_blocks=to_int(data.get("blocks")),
        sunit_blocks=to_int(data.get("sunit")),
        swidth_blocks=to_int(data.get("swidth")),
        log_location=log_location,
        log_blocks=to_int(log.get("blocks")),
        log_block_size_bytes=to_int(log.get("bsize")),
        log_version=to_int(log.get("version")),
        log_sunit_blocks=to_int(log.get("sunit")),
        realtime=(rt_head.split()[0] if rt_head else None),
        features=tuple(features),
    )


def parse_dumpe2fs(text: str) -> Ext4Info:
    """``dumpe2fs -h DEV`` (or ``tune2fs -l DEV``) -> :class:`Ext4Info`.  Raises ValueError without a block size."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith(" "):
            fields.setdefault(key.strip(), value.strip())
    block_size = to_int(fields.get("Block size"))
    if block_size is None:
        raise ValueError("not dumpe2fs output: no 'Block size'")
    journal = fields.get("Total journal size") or fields.get("Journal size")
    defaults = fields.get("Default mount options", "")
    return Ext4Info(
        block_size_bytes=block_size,
        block_count=to_int(fields.get("Block count")),
        inode_size_bytes=to_int(fields.get("Inode size")),
        features=tuple(fields.get("Filesystem features", "").split()),
        raid_stride_blocks=to_int(fields.get("RAID stride")),
        raid_stripe_width_blocks=to_int(fields.get("RAID stripe width")),
        flex_bg_size=to_int(fields.get("Flex block group size")),
        journal_size_bytes=read_size(journal) if journal else None,
        default_mount_options=tuple(w for w in defaults.split() if w != "(none)"),
        state=fields.get("Filesystem state") or None,
    )


def parse_btrfs_fi_df(text: str) -> tuple[BtrfsSpace, ...]:
    """``btrfs filesystem df [-b] MOUNT`` -> one :class:`BtrfsSpace` per line (``-b`` bytes or human units)."""
    return _btrfs_spaces(text, re.compile(r"^\s*(\w+),\s*([\w]+):\s*total=([^,\s]+),\s*used=(\S+)"))


def _btrfs_spaces(text: str, line_form: re.Pattern[str]) -> tuple[BtrfsSpace, ...]:
    """Each line of ``text`` that ``line_form`` matches (groups: type, profile, total, used; sizes in
    bytes or human units), as a :class:`BtrfsSpace`; a line whose sizes cannot be read is left out."""
    out: list[BtrfsSpace] = []
    for line in text.splitlines():
        m = line_form.match(line)
        if not m:
            continue
        total, used = read_size(m.group(3)), read_size(m.group(4))
        if total is None or used is None:
            continue
        out.append(BtrfsSpace(kind=m.group(1), profile=m.group(2), total_bytes=total, used_bytes=used))
    return tuple(out)


def parse_btrfs_fi_usage(text: str) -> tuple[BtrfsSpace, ...]:
    """``btrfs filesystem usage -b MOUNT`` -> the per-type ``Data,single: Size:..., Used:...`` lines."""
    return _btrfs_spaces(text, re.compile(r"^\s*(\w+),(\w+):\s*Size:([^,\s]+),\s*Used:(\S+)"))


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

